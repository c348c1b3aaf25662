-- One table is both the queue and the resource clients read. The same columns as the
-- SQLite schema; integers are BIGINT and flags SMALLINT so both read back alike.
CREATE TABLE jobs (
    id                  TEXT PRIMARY KEY,
    status              TEXT NOT NULL CHECK (status IN ('queued', 'running', 'solved', 'unsolvable', 'exhausted', 'cancelled', 'failed')),
    reason              TEXT,
    priority            BIGINT NOT NULL DEFAULT 0,
    -- The validated request, in explicit columns.
    puzzle_type         TEXT NOT NULL,
    tiles               TEXT,
    cols                BIGINT,
    goal                TEXT,
    level               TEXT,
    algorithm           TEXT NOT NULL,
    heuristic           TEXT NOT NULL,
    partition_kind      TEXT,
    objective           TEXT NOT NULL,
    weight_percent      BIGINT,
    max_nodes           BIGINT,
    timeout_ms          BIGINT,
    include_boards      SMALLINT NOT NULL DEFAULT 0 CHECK (include_boards IN (0, 1)),
    idempotency_key     TEXT UNIQUE,
    request_hash        TEXT,
    -- Unix milliseconds.
    created_at          BIGINT NOT NULL,
    started_at          BIGINT,
    finished_at         BIGINT,
    attempts            BIGINT NOT NULL DEFAULT 0,
    cancel_requested    SMALLINT NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
    -- The lease of the worker running the job, and the fencing token its writes must name.
    lease_token         BIGINT NOT NULL DEFAULT 0,
    lease_expires_at    BIGINT,
    worker              TEXT,
    -- Progress while running, written at a throttled rate.
    progress_nodes      BIGINT,
    progress_threshold  BIGINT,
    progress_elapsed_ms BIGINT,
    -- The result once finished.
    resolved_algorithm  TEXT,
    resolved_heuristic  TEXT,
    plan                TEXT,
    plan_length         BIGINT,
    optimal             SMALLINT CHECK (optimal IN (0, 1)),
    nodes_expanded      BIGINT,
    nodes_generated     BIGINT,
    unique_states       BIGINT,
    threshold           BIGINT,
    elapsed_us          BIGINT,
    error               TEXT
);

CREATE INDEX jobs_queue ON jobs (status, priority DESC, created_at, id);
CREATE INDEX jobs_newest ON jobs (created_at DESC, id DESC);
CREATE INDEX jobs_leases ON jobs (status, lease_expires_at);
