-- A claim finds the client with the oldest queued job, then that client's most urgent job.
CREATE INDEX jobs_queue_age ON jobs (status, created_at, id);
DROP INDEX jobs_client_queue;
CREATE INDEX jobs_client_queue ON jobs (client, status, priority DESC, created_at, id);
