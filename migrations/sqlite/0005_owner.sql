-- The API key a job belongs to: an id derived from the key's SHA-256 (the store never
-- sees a key), or '' when the service runs without keys. Only callers with that key
-- see the job. Idempotency keys become each owner's own, so one client's key can never
-- answer with another client's job; '' rather than NULL keeps the index unique for jobs
-- without an owner too. SQLite cannot drop the column's own UNIQUE constraint, so the
-- table is rebuilt (its columns as 0001-0004 left them, plus owner).
CREATE TABLE jobs_with_owner (
    id                TEXT PRIMARY KEY,
    status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'solved', 'unsolvable', 'exhausted', 'cancelled', 'failed')),
    reason            TEXT,
    priority          INTEGER NOT NULL DEFAULT 0,
    puzzle_type       TEXT NOT NULL,
    tiles             TEXT,
    cols              INTEGER,
    goal              TEXT,
    algorithm         TEXT NOT NULL,
    heuristic         TEXT NOT NULL,
    partition_kind    TEXT,
    objective         TEXT NOT NULL,
    weight_percent    INTEGER,
    max_nodes         INTEGER,
    timeout_ms        INTEGER,
    include_boards    INTEGER NOT NULL DEFAULT 0,
    idempotency_key   TEXT,
    request_hash      TEXT,
    created_at        INTEGER NOT NULL,
    started_at        INTEGER,
    finished_at       INTEGER,
    attempts          INTEGER NOT NULL DEFAULT 0,
    cancel_requested  INTEGER NOT NULL DEFAULT 0,
    progress_nodes    INTEGER,
    progress_threshold INTEGER,
    progress_elapsed_ms INTEGER,
    resolved_algorithm TEXT,
    resolved_heuristic TEXT,
    plan              TEXT,
    plan_length       INTEGER,
    optimal           INTEGER,
    nodes_expanded    INTEGER,
    nodes_generated   INTEGER,
    unique_states     INTEGER,
    threshold         INTEGER,
    elapsed_us        INTEGER,
    error             TEXT,
    level             TEXT,
    lease_token       INTEGER NOT NULL DEFAULT 0,
    lease_expires_at  INTEGER,
    worker            TEXT,
    client            TEXT,
    owner             TEXT NOT NULL DEFAULT ''
);

INSERT INTO jobs_with_owner (id, status, reason, priority, puzzle_type, tiles, cols, goal, algorithm, heuristic,
    partition_kind, objective, weight_percent, max_nodes, timeout_ms, include_boards, idempotency_key, request_hash,
    created_at, started_at, finished_at, attempts, cancel_requested, progress_nodes, progress_threshold,
    progress_elapsed_ms, resolved_algorithm, resolved_heuristic, plan, plan_length, optimal, nodes_expanded,
    nodes_generated, unique_states, threshold, elapsed_us, error, level, lease_token, lease_expires_at, worker, client)
SELECT id, status, reason, priority, puzzle_type, tiles, cols, goal, algorithm, heuristic,
    partition_kind, objective, weight_percent, max_nodes, timeout_ms, include_boards, idempotency_key, request_hash,
    created_at, started_at, finished_at, attempts, cancel_requested, progress_nodes, progress_threshold,
    progress_elapsed_ms, resolved_algorithm, resolved_heuristic, plan, plan_length, optimal, nodes_expanded,
    nodes_generated, unique_states, threshold, elapsed_us, error, level, lease_token, lease_expires_at, worker, client
FROM jobs;

DROP TABLE jobs;
ALTER TABLE jobs_with_owner RENAME TO jobs;

CREATE INDEX jobs_queue ON jobs (status, priority DESC, created_at, id);
CREATE INDEX jobs_newest ON jobs (created_at DESC, id DESC);
CREATE INDEX jobs_leases ON jobs (status, lease_expires_at);
CREATE INDEX jobs_client_queue ON jobs (client, status);
CREATE UNIQUE INDEX jobs_owner_idempotency ON jobs (owner, idempotency_key);
CREATE INDEX jobs_owner_newest ON jobs (owner, created_at DESC, id DESC);
