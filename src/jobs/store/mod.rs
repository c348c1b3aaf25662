//! The job store: one `jobs` table is both the queue and the resource clients read.
//! Embedded SQLite (WAL, busy timeout) by default, PostgreSQL when several processes
//! share the jobs; one implementation over sqlx's `Any` driver, with the few statements
//! that differ chosen by [`Backend`]. Specs and results live in explicit columns.
//!
//! Workers hold a lease on each job they run, with a fencing token that every write of
//! theirs must name: a worker that lost its lease (stalled, or presumed dead and reaped)
//! cannot overwrite the job.
//!
//! Map: [`Store`] (here: opening, migrations, the connection pools, [`Backend`],
//! [`StoreError`]); `records.rs` (what the store hands out and takes: [`JobRecord`],
//! [`ResultRecord`], [`ProgressRecord`], [`Owner`], [`NewJob`], and what a cancel, a
//! delete or a heartbeat did); `columns.rs` (the `jobs` table's columns, each named once,
//! and the binders that write a job's values into them); `queue.rs` (a job's life:
//! insert, claim, heartbeat, finish, fail, requeue, cancel, delete, reap, prune, and the
//! group commit's batch insert); `reads.rs` (get, list, counts, idempotency keys);
//! `decode.rs` (a row back into a [`JobRecord`]); `generation.rs` (a generate job's
//! parameters, counts and levels as text); `notify.rs` (PostgreSQL's `NOTIFY`:
//! [`Notice`], [`CHANNEL`]).

mod columns;
mod decode;
mod game;
mod generation;
mod notify;
mod queue;
mod reads;
mod records;

use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Executor};

pub use super::status::Stage;
pub use notify::{CHANNEL, Notice};
pub use records::{
    CancelOutcome, DeleteOutcome, JobRecord, LeaseState, LevelCounts, NewJob, Owner,
    ProgressRecord, ResultRecord,
};

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
