-- One table is both the queue and the resource clients read.
CREATE TABLE jobs (
    id                TEXT PRIMARY KEY,
    status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'solved', 'unsolvable', 'exhausted', 'cancelled', 'failed')),
    reason            TEXT,
    priority          INTEGER NOT NULL DEFAULT 0,
    -- The validated request, in explicit columns.
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
    idempotency_key   TEXT UNIQUE,
    request_hash      TEXT,
    -- Unix milliseconds.
    created_at        INTEGER NOT NULL,
    started_at        INTEGER,
    finished_at       INTEGER,
    attempts          INTEGER NOT NULL DEFAULT 0,
    cancel_requested  INTEGER NOT NULL DEFAULT 0,
    -- Progress while running, written at a throttled rate.
    progress_nodes    INTEGER,
    progress_threshold INTEGER,
    progress_elapsed_ms INTEGER,
    -- The result once finished.
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
    error             TEXT
);

CREATE INDEX jobs_queue ON jobs (status, priority DESC, created_at, id);
CREATE INDEX jobs_newest ON jobs (created_at DESC, id DESC);
