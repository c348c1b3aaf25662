-- Jobs created in the same millisecond keep the order they arrived in (SQLite has rowid).
ALTER TABLE jobs ADD COLUMN seq BIGSERIAL;
DROP INDEX jobs_queue_age;
CREATE INDEX jobs_queue_age ON jobs (status, created_at, seq);
DROP INDEX jobs_client_queue;
CREATE INDEX jobs_client_queue ON jobs (client, status, priority DESC, created_at, seq);
