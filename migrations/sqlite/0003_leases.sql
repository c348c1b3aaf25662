-- A claimed job carries a lease: the worker that holds it renews `lease_expires_at`
-- while it searches, and every write it makes must name the current `lease_token`
-- (incremented on every claim), so a worker that lost its lease cannot overwrite the job.
ALTER TABLE jobs ADD COLUMN lease_token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN lease_expires_at INTEGER;
ALTER TABLE jobs ADD COLUMN worker TEXT;
CREATE INDEX jobs_leases ON jobs (status, lease_expires_at);
