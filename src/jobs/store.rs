//! The job store: one `jobs` table is both the queue and the resource clients read.
//! Embedded SQLite (WAL, busy timeout) by default, PostgreSQL when several processes
//! share the jobs; one implementation over sqlx's `Any` driver, with the few statements
//! that differ chosen by [`Backend`]. Specs and results live in explicit columns.
//!
//! Workers hold a lease on each job they run, with a fencing token that every write of
//! theirs must name: a worker that lost its lease (stalled, or presumed dead and reaped)
//! cannot overwrite the job.

use std::time::Duration;

use sqlx::any::{AnyArguments, AnyPoolOptions, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, AnyPool, Executor, Row};

use super::run::{JobReport, JobStatus};
use super::spec::{AlgorithmChoice, HeuristicChoice, JobLimits, JobSpec, Objective, PuzzleSpec};
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sliding::{GoalSpec, SlidingPuzzle};
use crate::puzzles::sokoban::Level;
use crate::search::Weight;

static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The longest a statement waits for a connection before it fails: while the database
/// is away, a request is answered 503 within this (plus, on SQLite, the writer's second
/// of waiting for a lock) instead of hanging.
const STORE_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("a batched write failed: {0}")]
    BatchWrite(String),
    #[error("idempotency key reused with a different request")]
    IdempotencyConflict,
    #[error("stored job {id} is unreadable: {why}")]
    Corrupt { id: String, why: String },
    #[error("unsupported database URL '{0}': use sqlite://FILE or postgres://…")]
    UnsupportedUrl(String),
}

/// Where a job is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    Queued,
    Running,
    Finished(JobStatus),
}

impl Stage {
    pub fn name(&self) -> &'static str {
        match self {
            Stage::Queued => "queued",
            Stage::Running => "running",
            Stage::Finished(status) => status.name(),
        }
    }
    pub fn is_terminal(&self) -> bool {
        matches!(self, Stage::Finished(_))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgressRecord {
    pub nodes_expanded: u64,
    pub threshold: Option<u32>,
    pub elapsed_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultRecord {
    pub algorithm: String,
    pub heuristic: String,
    pub plan: Option<String>,
    pub length: Option<usize>,
    pub optimal: bool,
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    pub unique_states: Option<u64>,
    pub threshold: Option<u32>,
    pub elapsed_us: u64,
    /// Why the job ran on another heuristic than the one it would have used.
    pub note: Option<String>,
}

impl ResultRecord {
    /// What the store keeps of a finished search.
    pub fn from_report(report: &JobReport) -> ResultRecord {
        ResultRecord {
            algorithm: report.algorithm.name().to_string(),
            heuristic: report.heuristic.name().to_string(),
            plan: report.plan.as_ref().map(|p| p.text.clone()),
            length: report.plan.as_ref().map(|p| p.length),
            optimal: report.optimal,
            nodes_expanded: report.stats.nodes_expanded,
            nodes_generated: report.stats.nodes_generated,
            unique_states: report.stats.unique_states,
            threshold: report.stats.bound,
            elapsed_us: report.stats.elapsed.as_micros() as u64,
            note: report.note.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    pub id: String,
    pub stage: Stage,
    pub priority: i64,
    pub spec: JobSpec,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub attempts: i64,
    /// The fencing token of the latest claim; a worker's writes must name it.
    pub lease_token: i64,
    pub progress: Option<ProgressRecord>,
    pub result: Option<ResultRecord>,
    pub error: Option<String>,
    pub owner: Owner,
}

/// Who a job belongs to, and so who may see, cancel and delete it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A service without API keys: every caller sees every job.
    Anyone,
    /// One API key, named by an id derived from its hash (the store never sees a key):
    /// only callers with the same key see the job.
    Key(String),
}

impl Owner {
    /// As stored: the key's id, or '' for [`Owner::Anyone`] (not NULL, so that the
    /// unique index on (owner, idempotency_key) holds for jobs without a key too).
    fn column(&self) -> &str {
        match self {
            Owner::Anyone => "",
            Owner::Key(id) => id,
        }
    }

    fn from_column(column: String) -> Owner {
        if column.is_empty() {
            Owner::Anyone
        } else {
            Owner::Key(column)
        }
    }

    /// The owner whose jobs a caller acting as `self` is limited to; `None`: every job.
    fn filter(&self) -> Option<&str> {
        match self {
            Owner::Anyone => None,
            Owner::Key(id) => Some(id),
        }
    }

    /// Whether a caller acting as `self` may see a job `job` owns.
    pub fn sees(&self, job: &Owner) -> bool {
        match self {
            Owner::Anyone => true,
            Owner::Key(_) => self == job,
        }
    }
}

pub struct NewJob {
    pub spec: JobSpec,
    pub priority: i64,
    pub idempotency_key: Option<String>,
    /// Fingerprint of the request body, to tell an honest retry from a reused key.
    pub request_hash: Option<String>,
    /// Who asked (the API key's id, or the peer's IP address without keys), for the
    /// per-client queue limit.
    pub client: Option<String>,
    pub owner: Owner,
}

/// What cancelling did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelOutcome {
    /// Was queued: it will never run.
    CancelledQueued,
    /// Is running: its search has been asked to stop.
    StopRequested,
    /// Had finished already; nothing changed.
    AlreadyFinished,
    NotFound,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteOutcome {
    Deleted,
    NotFinished,
    NotFound,
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Which database engine holds the jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// One process, one file.
    Sqlite,
    /// Several processes share the jobs; notifications wake them across processes.
    Postgres,
}

/// What other processes are told through PostgreSQL's `NOTIFY` (channel [`CHANNEL`]),
/// as `"<kind> <job id>"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A job was queued: a worker may claim it.
    Queued,
    /// A job changed stage.
    Changed,
    /// A running job wrote progress.
    Progress,
    /// A running job was asked to stop.
    Cancel,
}

impl Notice {
    pub const ALL: [Notice; 4] = [
        Notice::Queued,
        Notice::Changed,
        Notice::Progress,
        Notice::Cancel,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Notice::Queued => "queued",
            Notice::Changed => "changed",
            Notice::Progress => "progress",
            Notice::Cancel => "cancel",
        }
    }
    /// Parses a payload back into the notice and the job id.
    pub fn parse(payload: &str) -> Option<(Notice, &str)> {
        let (kind, id) = payload.split_once(' ')?;
        Notice::ALL
            .into_iter()
            .find(|n| n.name() == kind)
            .map(|n| (n, id))
    }
}

/// The `NOTIFY` channel every puzzled process listens on.
pub const CHANNEL: &str = "puzzled_jobs";

/// Held: the lease was renewed, and whether a cancel was asked for. Lost: another
/// claim has the job now, and this worker must stop writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseState {
    Held { cancel_requested: bool },
    Lost,
}

#[derive(Clone)]
pub struct Store {
    backend: Backend,
    url: String,
    /// Every write goes through this pool. On SQLite it is one connection: SQLite allows
    /// one writer at a time anyway, and writers on several connections wait in the busy
    /// handler's sleeps (milliseconds each) instead of in a queue.
    writer: AnyPool,
    /// Reads; on SQLite they run beside the writer (WAL) on their own connections.
    reader: AnyPool,
}

/// The columns [`record`] reads, as a literal so queries stay static strings.
macro_rules! columns {
    () => {
        "id, status, reason, priority, puzzle_type, tiles, cols, goal, level, algorithm, heuristic, partition_kind, objective, \
    weight_percent, max_nodes, timeout_ms, include_boards, created_at, started_at, finished_at, attempts, lease_token, progress_nodes, \
    progress_threshold, progress_elapsed_ms, resolved_algorithm, resolved_heuristic, plan, plan_length, optimal, nodes_expanded, \
    nodes_generated, unique_states, threshold, elapsed_us, error, owner, note"
    };
}

/// The client whose turn it is: the one with the oldest queued job.
macro_rules! oldest_queued_client {
    () => {
        "SELECT client FROM jobs WHERE status = 'queued' ORDER BY created_at, id LIMIT 1"
    };
}

/// Binds a flag the way both schemas store it (0 or 1).
fn flag(value: bool) -> i64 {
    i64::from(value)
}

impl Store {
    /// Opens (creating if needed) the database at `url` and applies migrations. Several
    /// processes may start at once: sqlx's migrator takes a lock on PostgreSQL.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl(url.to_string()));
        };
        let (writer, reader) = match backend {
            Backend::Sqlite => {
                let url = sqlite_url_creating(url);
                let pragmas = |pool: AnyPoolOptions, busy_timeout: &'static str| {
                    pool.acquire_timeout(STORE_WAIT)
                        .after_connect(move |connection, _| {
                            Box::pin(async move {
                                // In WAL mode NORMAL survives a crash of the process (what
                                // recovery relies on); only a power loss can drop the last
                                // commits. FULL costs an fsync per write.
                                connection
                                    .execute(
                                        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                                         PRAGMA foreign_keys = ON;",
                                    )
                                    .await?;
                                connection.execute(busy_timeout).await?;
                                Ok(())
                            })
                        })
                };
                // The writer is this process's only one, so it meets a lock only when another
                // process holds the database (a shell, a maintenance script). Every write
                // queues behind the one waiting, so the wait is short: a second, and the
                // request fails with 503 instead of the queue growing by seconds a write.
                let writer = pragmas(
                    AnyPoolOptions::new().max_connections(1),
                    "PRAGMA busy_timeout = 1000;",
                )
                .connect(&url)
                .await?;
                SQLITE_MIGRATOR.run(&writer).await?;
                let reader = pragmas(
                    AnyPoolOptions::new().max_connections(8),
                    "PRAGMA busy_timeout = 5000;",
                )
                .connect(&url)
                .await?;
                (writer, reader)
            }
            Backend::Postgres => {
                let pool = AnyPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(STORE_WAIT)
                    .connect(url)
                    .await?;
                POSTGRES_MIGRATOR.run(&pool).await?;
                (pool.clone(), pool)
            }
        };
        Ok(Store {
            backend,
            url: url.to_string(),
            writer,
            reader,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The database URL, for a PostgreSQL listener.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The statement written for this store's backend, where the two dialects differ.
    fn dialect(&self, sqlite: &'static str, postgres: &'static str) -> &'static str {
        match self.backend {
            Backend::Sqlite => sqlite,
            Backend::Postgres => postgres,
        }
    }

    /// Tells other processes (PostgreSQL only; one SQLite process tells itself).
    async fn notify(&self, notice: Notice, id: &str) -> Result<(), StoreError> {
        if self.backend == Backend::Postgres {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(format!("{} {id}", notice.name()))
                .execute(&self.writer)
                .await?;
        }
        Ok(())
    }

    /// Whether the store answers and would take a write. On SQLite another process can
    /// hold the write lock (a shell, a maintenance script): reads go on, but no job can be
    /// accepted, claimed or finished, so the store is not ready.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.reader).await?;
        if self.backend == Backend::Sqlite {
            // Takes the write lock and changes nothing. One statement, not a transaction:
            // a caller that stops waiting cannot leave a transaction open on the writer.
            sqlx::query("DELETE FROM jobs WHERE 0")
                .execute(&self.writer)
                .await?;
        }
        Ok(())
    }

    /// Inserts a job, or returns the one an earlier request with the same key made.
    /// `Ok((record, created))`.
    pub async fn insert(&self, job: NewJob) -> Result<(JobRecord, bool), StoreError> {
        if let Some(key) = &job.idempotency_key
            && let Some(existing) = self
                .by_idempotency_key(&job.owner, key, job.request_hash.as_deref())
                .await?
        {
            return Ok((existing, false));
        }
        let id = uuid::Uuid::new_v4().to_string();
        let inserted = sqlx::query(concat!(
            "INSERT INTO jobs (id, status, priority, puzzle_type, tiles, cols, goal, level, algorithm, heuristic, partition_kind, \
             objective, weight_percent, max_nodes, timeout_ms, include_boards, idempotency_key, request_hash, created_at, client, owner) \
             VALUES ($1, 'queued', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) RETURNING ",
            columns!()
        ))
        .bind(&id)
        .bind(job.priority);
        let inserted = bind_spec(inserted, &job.spec)
            .bind(&job.idempotency_key)
            .bind(&job.request_hash)
            .bind(now_ms())
            .bind(&job.client)
            .bind(job.owner.column())
            .fetch_one(&self.writer)
            .await;
        match inserted {
            Ok(row) => {
                self.notify(Notice::Queued, &id).await?;
                Ok((record(&row)?, true))
            }
            // Two retries raced: the other one's insert won; answer with it.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                if let Some(key) = &job.idempotency_key
                    && let Some(existing) = self
                        .by_idempotency_key(&job.owner, key, job.request_hash.as_deref())
                        .await?
                {
                    return Ok((existing, false));
                }
                Err(sqlx::Error::Database(e).into())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The job an earlier request of `owner` with this key made; a conflict if its body
    /// differed. Keys are the owner's own: another owner's key finds nothing.
    pub async fn by_idempotency_key(
        &self,
        owner: &Owner,
        key: &str,
        hash: Option<&str>,
    ) -> Result<Option<JobRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT id, request_hash FROM jobs WHERE owner = $1 AND idempotency_key = $2",
        )
        .bind(owner.column())
        .bind(key)
        .fetch_optional(&self.reader)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let stored: Option<String> = row.try_get("request_hash")?;
        if stored.as_deref() != hash {
            return Err(StoreError::IdempotencyConflict);
        }
        let id: String = row.try_get("id")?;
        self.get(&id).await
    }

    pub async fn get(&self, id: &str) -> Result<Option<JobRecord>, StoreError> {
        let row = sqlx::query(concat!("SELECT ", columns!(), " FROM jobs WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.reader)
            .await?;
        row.map(|r| record(&r)).transpose()
    }

    /// The job, if a caller acting as `owner` may see it.
    pub async fn get_visible(
        &self,
        id: &str,
        owner: &Owner,
    ) -> Result<Option<JobRecord>, StoreError> {
        Ok(self.get(id).await?.filter(|job| owner.sees(&job.owner)))
    }

    pub async fn count_queued(&self) -> Result<i64, StoreError> {
        Ok(
            sqlx::query("SELECT COUNT(*) AS n FROM jobs WHERE status = 'queued'")
                .fetch_one(&self.reader)
                .await?
                .try_get("n")?,
        )
    }

    /// Jobs `client` has waiting in the queue.
    pub async fn count_queued_by(&self, client: &str) -> Result<i64, StoreError> {
        Ok(
            sqlx::query("SELECT COUNT(*) AS n FROM jobs WHERE client = $1 AND status = 'queued'")
                .bind(client)
                .fetch_one(&self.reader)
                .await?
                .try_get("n")?,
        )
    }

    /// How many jobs are in each status (for metrics).
    pub async fn count_by_status(&self) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = sqlx::query("SELECT status, COUNT(*) AS n FROM jobs GROUP BY status")
            .fetch_all(&self.reader)
            .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("status")?, row.try_get("n")?)))
            .collect()
    }

    /// The jobs `owner` may see, newest first; `after` is the (created_at, id) of the last
    /// job of the previous page.
    pub async fn list(
        &self,
        owner: &Owner,
        status: Option<&str>,
        limit: i64,
        after: Option<(i64, String)>,
    ) -> Result<Vec<JobRecord>, StoreError> {
        let (after_time, after_id) = after.unwrap_or((i64::MAX, String::new()));
        let rows = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM jobs WHERE ($1 IS NULL OR status = $1) \
             AND (created_at < $2 OR (created_at = $2 AND ($3 = '' OR id < $3))) \
             AND ($5 IS NULL OR owner = $5) \
             ORDER BY created_at DESC, id DESC LIMIT $4"
        ))
        .bind(status)
        .bind(after_time)
        .bind(&after_id)
        .bind(limit)
        .bind(owner.filter())
        .fetch_all(&self.reader)
        .await?;
        rows.iter().map(record).collect()
    }

    /// Claims the next queued job for `worker`. Clients take turns in the order of their
    /// oldest waiting job; at its turn a client's highest-priority job (then its oldest)
    /// runs. So priority orders a client's own jobs only, and no client can jump ahead of
    /// another. Claims it
    /// with a lease of `lease` and a new fencing token.
    pub async fn claim(
        &self,
        worker: &str,
        lease: Duration,
    ) -> Result<Option<JobRecord>, StoreError> {
        let now = now_ms();
        let row = sqlx::query(self.dialect(
            concat!(
                "UPDATE jobs SET status = 'running', started_at = $1, attempts = attempts + 1, lease_token = lease_token + 1, \
                 lease_expires_at = $2, worker = $3 \
                 WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND client IS (", oldest_queued_client!(), ") \
                 ORDER BY priority DESC, created_at, id LIMIT 1) \
                 AND status = 'queued' RETURNING ",
                columns!()
            ),
            // Claimers skip rows another claim has locked instead of queueing behind it.
            concat!(
                "UPDATE jobs SET status = 'running', started_at = $1, attempts = attempts + 1, lease_token = lease_token + 1, \
                 lease_expires_at = $2, worker = $3 \
                 WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND client IS NOT DISTINCT FROM (", oldest_queued_client!(), ") \
                 ORDER BY priority DESC, created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING ",
                columns!()
            ),
        ))
        .bind(now)
        .bind(now + lease.as_millis() as i64)
        .bind(worker)
        .fetch_optional(&self.writer)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let job = record(&row)?;
        self.notify(Notice::Changed, &job.id).await?;
        Ok(Some(job))
    }

    /// Renews the lease `token` holds on a running job and saves its progress.
    pub async fn heartbeat(
        &self,
        id: &str,
        token: i64,
        lease: Duration,
        progress: Option<&ProgressRecord>,
    ) -> Result<LeaseState, StoreError> {
        let row = sqlx::query(
            "UPDATE jobs SET lease_expires_at = $1, progress_nodes = COALESCE($2, progress_nodes), \
             progress_threshold = COALESCE($3, progress_threshold), progress_elapsed_ms = COALESCE($4, progress_elapsed_ms) \
             WHERE id = $5 AND lease_token = $6 AND status = 'running' RETURNING cancel_requested",
        )
        .bind(now_ms() + lease.as_millis() as i64)
        .bind(progress.map(|p| p.nodes_expanded as i64))
        .bind(progress.and_then(|p| p.threshold).map(i64::from))
        .bind(progress.map(|p| p.elapsed_ms as i64))
        .bind(id)
        .bind(token)
        .fetch_optional(&self.writer)
        .await?;
        let Some(row) = row else {
            return Ok(LeaseState::Lost);
        };
        if progress.is_some() {
            self.notify(Notice::Progress, id).await?;
        }
        Ok(LeaseState::Held {
            cancel_requested: row.try_get::<i64, _>("cancel_requested")? != 0,
        })
    }

    /// Records a running job's end, if `token` still holds its lease. `Ok(false)`: the
    /// write was refused (the lease was lost), and the job is left to its new holder.
    pub async fn finish(
        &self,
        id: &str,
        token: i64,
        report: &JobReport,
    ) -> Result<bool, StoreError> {
        let query = sqlx::query(
            "UPDATE jobs SET status = $1, reason = $2, finished_at = $3, resolved_algorithm = $4, resolved_heuristic = $5, \
             plan = $6, plan_length = $7, optimal = $8, nodes_expanded = $9, nodes_generated = $10, unique_states = $11, \
             threshold = $12, elapsed_us = $13, error = $14, note = $15, lease_expires_at = NULL, finishes = finishes + 1 \
             WHERE id = $16 AND lease_token = $17 AND status = 'running'",
        );
        let written = bind_result(
            query,
            &report.status,
            &ResultRecord::from_report(report),
            now_ms(),
        )
        .bind(id)
        .bind(token)
        .execute(&self.writer)
        .await?;
        self.fenced(id, written.rows_affected()).await
    }

    /// Notifies a change when `rows` says the fenced write went in.
    async fn fenced(&self, id: &str, rows: u64) -> Result<bool, StoreError> {
        if rows == 0 {
            metrics::counter!("puzzled_fencing_rejections_total").increment(1);
            return Ok(false);
        }
        self.notify(Notice::Changed, id).await?;
        Ok(true)
    }

    /// Inserts jobs that ran to their end before they were ever queued (small synchronous
    /// solves), all in one statement: one commit for the whole batch.
    pub async fn insert_finished(&self, jobs: &[JobRecord]) -> Result<(), StoreError> {
        /// Parameters per row: the result's 15, then the job's 19.
        const PARAMETERS: usize = 34;
        if jobs.is_empty() {
            return Ok(());
        }
        let rows: Vec<String> = (0..jobs.len())
            .map(|row| {
                let first = row * PARAMETERS + 1;
                let list: Vec<String> = (first..first + PARAMETERS)
                    .map(|n| match self.backend {
                        // SQLite looks a named parameter up by walking a list: numbered ones
                        // would make binding a large batch quadratic.
                        Backend::Sqlite => "?".to_string(),
                        Backend::Postgres => format!("${n}"),
                    })
                    .collect();
                // A job inserted finished has ended once.
                format!("({}, 1)", list.join(", "))
            })
            .collect();
        let sql = format!(
            "INSERT INTO jobs (status, reason, finished_at, resolved_algorithm, resolved_heuristic, plan, plan_length, optimal, \
             nodes_expanded, nodes_generated, unique_states, threshold, elapsed_us, error, note, \
             id, priority, puzzle_type, tiles, cols, goal, level, algorithm, heuristic, partition_kind, objective, weight_percent, \
             max_nodes, timeout_ms, include_boards, created_at, started_at, attempts, owner, finishes) VALUES {}",
            rows.join(", ")
        );
        // Built only from numbered placeholders, so it is as safe as a literal. Batch sizes
        // vary: caching a prepared statement per size would only churn the cache.
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for job in jobs {
            let (Stage::Finished(status), Some(result), Some(finished_at)) =
                (&job.stage, &job.result, job.finished_at)
            else {
                return Err(StoreError::Corrupt {
                    id: job.id.clone(),
                    why: "only finished jobs are inserted finished".into(),
                });
            };
            query = bind_result(query, status, result, finished_at)
                .bind(job.id.clone())
                .bind(job.priority);
            query = bind_spec(query, &job.spec)
                .bind(job.created_at)
                .bind(job.started_at)
                .bind(job.attempts)
                .bind(job.owner.column().to_string());
        }
        query.execute(&self.writer).await?;
        Ok(())
    }

    /// Ends a running job as failed, with a message for the logs, if `token` holds it.
    pub async fn fail(&self, id: &str, token: i64, why: &str) -> Result<bool, StoreError> {
        let written = sqlx::query(
            "UPDATE jobs SET status = 'failed', finished_at = $1, error = $2, lease_expires_at = NULL, finishes = finishes + 1 \
             WHERE id = $3 AND lease_token = $4 AND status = 'running'",
        )
        .bind(now_ms())
        .bind(why)
        .bind(id)
        .bind(token)
        .execute(&self.writer)
        .await?;
        self.fenced(id, written.rows_affected()).await
    }

    /// Puts a running job back in the queue without using up an attempt (shutdown).
    pub async fn requeue(&self, id: &str, token: i64) -> Result<bool, StoreError> {
        let written = sqlx::query(self.dialect(
            "UPDATE jobs SET status = 'queued', started_at = NULL, attempts = MAX(attempts - 1, 0), lease_expires_at = NULL, \
             progress_nodes = NULL, progress_threshold = NULL, progress_elapsed_ms = NULL \
             WHERE id = $1 AND lease_token = $2 AND status = 'running'",
            "UPDATE jobs SET status = 'queued', started_at = NULL, attempts = GREATEST(attempts - 1, 0), lease_expires_at = NULL, \
             progress_nodes = NULL, progress_threshold = NULL, progress_elapsed_ms = NULL \
             WHERE id = $1 AND lease_token = $2 AND status = 'running'",
        ))
        .bind(id)
        .bind(token)
        .execute(&self.writer)
        .await?;
        if written.rows_affected() == 1 {
            self.notify(Notice::Queued, id).await?;
        }
        self.fenced(id, written.rows_affected()).await
    }

    /// Cancels the job if a caller acting as `owner` may see it (else `NotFound`).
    pub async fn cancel(&self, id: &str, owner: &Owner) -> Result<CancelOutcome, StoreError> {
        let queued = sqlx::query(
            "UPDATE jobs SET status = 'cancelled', finished_at = $1, finishes = finishes + 1 \
             WHERE id = $2 AND status = 'queued' AND ($3 IS NULL OR owner = $3)",
        )
        .bind(now_ms())
        .bind(id)
        .bind(owner.filter())
        .execute(&self.writer)
        .await?;
        if queued.rows_affected() == 1 {
            self.notify(Notice::Changed, id).await?;
            return Ok(CancelOutcome::CancelledQueued);
        }
        let running = sqlx::query(
            "UPDATE jobs SET cancel_requested = 1 WHERE id = $1 AND status = 'running' \
             AND ($2 IS NULL OR owner = $2)",
        )
        .bind(id)
        .bind(owner.filter())
        .execute(&self.writer)
        .await?;
        if running.rows_affected() == 1 {
            self.notify(Notice::Cancel, id).await?;
            return Ok(CancelOutcome::StopRequested);
        }
        Ok(match self.get_visible(id, owner).await? {
            Some(_) => CancelOutcome::AlreadyFinished,
            None => CancelOutcome::NotFound,
        })
    }

    /// Deletes the finished job if a caller acting as `owner` may see it.
    pub async fn delete(&self, id: &str, owner: &Owner) -> Result<DeleteOutcome, StoreError> {
        let deleted = sqlx::query(
            "DELETE FROM jobs WHERE id = $1 AND status NOT IN ('queued', 'running') \
             AND ($2 IS NULL OR owner = $2)",
        )
        .bind(id)
        .bind(owner.filter())
        .execute(&self.writer)
        .await?;
        if deleted.rows_affected() == 1 {
            return Ok(DeleteOutcome::Deleted);
        }
        Ok(match self.get_visible(id, owner).await? {
            Some(_) => DeleteOutcome::NotFinished,
            None => DeleteOutcome::NotFound,
        })
    }

    /// Requeues running jobs whose lease expired before `expired_before` (their worker
    /// died or stalled), or fails those that used `max_attempts`. On PostgreSQL one reaper
    /// at a time does it, under an advisory lock; others return at once. Returns
    /// (requeued, failed).
    pub async fn reap(
        &self,
        expired_before: i64,
        max_attempts: i64,
    ) -> Result<(u64, u64), StoreError> {
        /// The advisory lock's key: "puzzled" in ASCII.
        const REAPER_LOCK: i64 = 0x70_757a_7a6c_6564;
        let mut tx = self.writer.begin().await?;
        if self.backend == Backend::Postgres {
            let locked: bool = sqlx::query("SELECT pg_try_advisory_xact_lock($1) AS locked")
                .bind(REAPER_LOCK)
                .fetch_one(&mut *tx)
                .await?
                .try_get("locked")?;
            if !locked {
                return Ok((0, 0));
            }
        }
        let failed = sqlx::query(
            "UPDATE jobs SET status = 'failed', finished_at = $1, lease_expires_at = NULL, finishes = finishes + 1, \
             error = 'the job was interrupted too many times' \
             WHERE status = 'running' AND lease_expires_at < $2 AND attempts >= $3 RETURNING id",
        )
        .bind(now_ms())
        .bind(expired_before)
        .bind(max_attempts)
        .fetch_all(&mut *tx)
        .await?;
        let requeued = sqlx::query(
            "UPDATE jobs SET status = 'queued', started_at = NULL, lease_expires_at = NULL, progress_nodes = NULL, \
             progress_threshold = NULL, progress_elapsed_ms = NULL \
             WHERE status = 'running' AND lease_expires_at < $1 RETURNING id",
        )
        .bind(expired_before)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        for row in &failed {
            self.notify(Notice::Changed, &row.try_get::<String, _>("id")?)
                .await?;
        }
        for row in &requeued {
            self.notify(Notice::Queued, &row.try_get::<String, _>("id")?)
                .await?;
        }
        Ok((requeued.len() as u64, failed.len() as u64))
    }

    /// Deletes finished jobs older than `cutoff_ms`, a batch at a time.
    pub async fn prune(&self, cutoff_ms: i64, batch: i64) -> Result<u64, StoreError> {
        let mut total = 0;
        loop {
            let deleted = sqlx::query(
                "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status NOT IN ('queued', 'running') \
                 AND finished_at < $1 LIMIT $2)",
            )
            .bind(cutoff_ms)
            .bind(batch)
            .execute(&self.writer)
            .await?;
            total += deleted.rows_affected();
            if deleted.rows_affected() < batch as u64 {
                return Ok(total);
            }
        }
    }
}

/// `sqlite://FILE` with `mode=rwc`, so a missing file is created.
fn sqlite_url_creating(url: &str) -> String {
    if url.contains("mode=") || url.contains(":memory:") {
        url.to_string()
    } else if url.contains('?') {
        format!("{url}&mode=rwc")
    } else {
        format!("{url}?mode=rwc")
    }
}

/// Binds a finished job's columns, in the order `finish` and `insert_finished` name
/// them: status, reason, finished_at, the result, then the error and the note.
fn bind_result<'q>(
    query: Query<'q, Any, AnyArguments>,
    status: &JobStatus,
    result: &ResultRecord,
    finished_at: i64,
) -> Query<'q, Any, AnyArguments> {
    let reason = match status {
        JobStatus::Exhausted(reason) => Some(reason.name()),
        _ => None,
    };
    let error = match status {
        JobStatus::Failed(why) => Some(why.clone()),
        _ => None,
    };
    query
        .bind(status.name())
        .bind(reason)
        .bind(finished_at)
        .bind(result.algorithm.clone())
        .bind(result.heuristic.clone())
        .bind(result.plan.clone())
        .bind(result.length.map(|l| l as i64))
        .bind(flag(result.optimal))
        .bind(result.nodes_expanded as i64)
        .bind(result.nodes_generated as i64)
        .bind(result.unique_states.map(|n| n as i64))
        .bind(result.threshold.map(i64::from))
        .bind(result.elapsed_us as i64)
        .bind(error)
        .bind(result.note.clone())
}

/// Binds a spec's columns, in the order both inserts name them: puzzle_type, tiles, cols,
/// goal, level, algorithm, heuristic, partition_kind, objective, weight_percent, max_nodes,
/// timeout_ms, include_boards.
fn bind_spec<'q>(
    query: Query<'q, Any, AnyArguments>,
    spec: &JobSpec,
) -> Query<'q, Any, AnyArguments> {
    let columns = SpecColumns::from(spec);
    query
        .bind(columns.puzzle_type)
        .bind(columns.tiles)
        .bind(columns.cols)
        .bind(columns.goal)
        .bind(columns.level)
        .bind(columns.algorithm)
        .bind(columns.heuristic)
        .bind(columns.partition)
        .bind(columns.objective)
        .bind(columns.weight_percent)
        .bind(columns.max_nodes)
        .bind(columns.timeout_ms)
        .bind(flag(spec.include_boards))
}

/// A spec as stored: names and numbers, parsed back by [`spec_from_columns`].
struct SpecColumns {
    puzzle_type: &'static str,
    /// Sliding puzzles: start, columns and goal.
    tiles: Option<String>,
    cols: Option<i64>,
    goal: Option<String>,
    /// Sokoban: the level as XSB text.
    level: Option<String>,
    algorithm: &'static str,
    heuristic: &'static str,
    partition: Option<&'static str>,
    objective: &'static str,
    weight_percent: Option<i64>,
    max_nodes: Option<i64>,
    timeout_ms: Option<i64>,
}

fn join(tiles: &[u8]) -> String {
    tiles
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

impl From<&JobSpec> for SpecColumns {
    fn from(spec: &JobSpec) -> SpecColumns {
        let (puzzle_type, tiles, cols, goal, level) = match &spec.puzzle {
            PuzzleSpec::Sliding(puzzle) => (
                "sliding",
                Some(join(puzzle.start())),
                Some(puzzle.geometry().cols as i64),
                Some(join(puzzle.goal())),
                None,
            ),
            PuzzleSpec::Sokoban(level) => ("sokoban", None, None, None, Some(level.to_xsb())),
        };
        SpecColumns {
            puzzle_type,
            tiles,
            cols,
            goal,
            level,
            algorithm: spec.algorithm.name(),
            heuristic: spec.heuristic.name(),
            partition: match spec.heuristic {
                HeuristicChoice::PatternDatabase(kind) => kind.map(PartitionKind::name),
                _ => None,
            },
            objective: spec.objective.name(),
            weight_percent: spec.weight.map(|w| i64::from(w.percent())),
            max_nodes: spec.limits.max_nodes.map(|n| n as i64),
            timeout_ms: spec.limits.timeout.map(|t| t.as_millis() as i64),
        }
    }
}

fn numbers(text: &str) -> Option<Vec<u64>> {
    text.split_whitespace().map(|t| t.parse().ok()).collect()
}

fn record(row: &AnyRow) -> Result<JobRecord, StoreError> {
    let id: String = row.try_get("id")?;
    let corrupt = |why: &str| StoreError::Corrupt {
        id: id.clone(),
        why: why.to_string(),
    };
    let puzzle = if row.try_get::<String, _>("puzzle_type")? == "sokoban" {
        let level = row
            .try_get::<Option<String>, _>("level")?
            .ok_or_else(|| corrupt("level"))?;
        PuzzleSpec::Sokoban(Level::parse(&level).map_err(|e| corrupt(&e.to_string()))?)
    } else {
        let tiles = numbers(&row.try_get::<String, _>("tiles")?).ok_or_else(|| corrupt("tiles"))?;
        let goal = numbers(&row.try_get::<String, _>("goal")?).ok_or_else(|| corrupt("goal"))?;
        let cols: i64 = row.try_get("cols")?;
        let puzzle = SlidingPuzzle::new(&tiles, Some(cols as usize), &GoalSpec::Tiles(goal))
            .map_err(|e| corrupt(&e.to_string()))?;
        PuzzleSpec::Sliding(puzzle)
    };
    let partition = row
        .try_get::<Option<String>, _>("partition_kind")?
        .and_then(|p| PartitionKind::parse(&p));
    let spec = JobSpec {
        puzzle,
        algorithm: AlgorithmChoice::parse(&row.try_get::<String, _>("algorithm")?)
            .ok_or_else(|| corrupt("algorithm"))?,
        heuristic: HeuristicChoice::parse(&row.try_get::<String, _>("heuristic")?, partition)
            .ok_or_else(|| corrupt("heuristic"))?,
        objective: Objective::parse(&row.try_get::<String, _>("objective")?)
            .ok_or_else(|| corrupt("objective"))?,
        weight: row
            .try_get::<Option<i64>, _>("weight_percent")?
            .map(|w| Weight::from_percent(w as u32)),
        limits: JobLimits {
            max_nodes: row
                .try_get::<Option<i64>, _>("max_nodes")?
                .map(|n| n as u64),
            timeout: row
                .try_get::<Option<i64>, _>("timeout_ms")?
                .map(|t| Duration::from_millis(t as u64)),
            max_memory_bytes: None,
        },
        include_boards: row.try_get::<i64, _>("include_boards")? != 0,
    };
    let status: String = row.try_get("status")?;
    let reason: Option<String> = row.try_get("reason")?;
    let error: Option<String> = row.try_get("error")?;
    let stage = match status.as_str() {
        "queued" => Stage::Queued,
        "running" => Stage::Running,
        "solved" => Stage::Finished(JobStatus::Solved),
        "unsolvable" => Stage::Finished(JobStatus::Unsolvable),
        "cancelled" => Stage::Finished(JobStatus::Cancelled),
        "failed" => Stage::Finished(JobStatus::Failed(error.clone().unwrap_or_default())),
        "exhausted" => {
            use super::run::ExhaustedReason::*;
            let reason = match reason.as_deref() {
                Some("node_limit") => NodeLimit,
                Some("timeout") => Timeout,
                Some("memory_limit") => MemoryLimit,
                _ => GaveUp,
            };
            Stage::Finished(JobStatus::Exhausted(reason))
        }
        _ => return Err(corrupt("status")),
    };
    let progress = match row.try_get::<Option<i64>, _>("progress_nodes")? {
        Some(nodes) if stage == Stage::Running => Some(ProgressRecord {
            nodes_expanded: nodes as u64,
            threshold: row
                .try_get::<Option<i64>, _>("progress_threshold")?
                .map(|t| t as u32),
            elapsed_ms: row
                .try_get::<Option<i64>, _>("progress_elapsed_ms")?
                .unwrap_or(0) as u64,
        }),
        _ => None,
    };
    let result = match row.try_get::<Option<String>, _>("resolved_algorithm")? {
        Some(algorithm) if stage.is_terminal() => Some(ResultRecord {
            algorithm,
            heuristic: row
                .try_get::<Option<String>, _>("resolved_heuristic")?
                .unwrap_or_default(),
            plan: row.try_get("plan")?,
            length: row
                .try_get::<Option<i64>, _>("plan_length")?
                .map(|l| l as usize),
            optimal: row.try_get::<Option<i64>, _>("optimal")?.unwrap_or(0) != 0,
            nodes_expanded: row
                .try_get::<Option<i64>, _>("nodes_expanded")?
                .unwrap_or(0) as u64,
            nodes_generated: row
                .try_get::<Option<i64>, _>("nodes_generated")?
                .unwrap_or(0) as u64,
            unique_states: row
                .try_get::<Option<i64>, _>("unique_states")?
                .map(|n| n as u64),
            threshold: row
                .try_get::<Option<i64>, _>("threshold")?
                .map(|t| t as u32),
            elapsed_us: row.try_get::<Option<i64>, _>("elapsed_us")?.unwrap_or(0) as u64,
            note: row.try_get("note")?,
        }),
        _ => None,
    };
    Ok(JobRecord {
        stage,
        priority: row.try_get("priority")?,
        spec,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        attempts: row.try_get("attempts")?,
        lease_token: row.try_get("lease_token")?,
        progress,
        result,
        error,
        owner: Owner::from_column(row.try_get("owner")?),
        id,
    })
}
