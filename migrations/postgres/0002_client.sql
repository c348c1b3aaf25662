-- The client (its IP address) that queued a job, so one client cannot fill the queue:
-- `--max-queued-per-client` counts its queued jobs.
ALTER TABLE jobs ADD COLUMN client TEXT;
CREATE INDEX jobs_client_queue ON jobs (client, status);
