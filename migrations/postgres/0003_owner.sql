-- The API key a job belongs to: an id derived from the key's SHA-256 (the store never
-- sees a key), or '' when the service runs without keys. Only callers with that key
-- see the job. Idempotency keys become each owner's own, so one client's key can never
-- answer with another client's job; '' rather than NULL keeps the index unique for jobs
-- without an owner too.
ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs DROP CONSTRAINT jobs_idempotency_key_key;
CREATE UNIQUE INDEX jobs_owner_idempotency ON jobs (owner, idempotency_key);
CREATE INDEX jobs_owner_newest ON jobs (owner, created_at DESC, id DESC);
