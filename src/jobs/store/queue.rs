//! A job's life in the queue: insert, claim (clients in turn), heartbeat, the fenced
//! finish and fail, requeue, cancel, delete, reap and prune; and the batch insert of jobs
//! that finished before they were ever queued.

use std::sync::LazyLock;
use std::time::Duration;

use sqlx::Row;

use super::columns::{self, bind_job, bind_request, bind_result, bind_runs};
use super::decode::record;
use super::game;
use super::{
    Backend, CancelOutcome, DeleteOutcome, JobRecord, LeaseState, NewJob, Notice, Owner,
    ProgressRecord, ResultRecord, Stage, Store, StoreError, now_ms,
};
use crate::jobs::id::JobId;
use crate::jobs::run::JobReport;

/// Inserts a queued job and returns it.
static INSERT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT INTO jobs ({}, status) VALUES ({}, 'queued') RETURNING {}",
        columns::INSERT.names(),
        columns::INSERT.parameters(1),
        columns::READ.names()
    )
});

/// [`claim`] on each backend, built once.
static CLAIM_SQLITE: LazyLock<String> = LazyLock::new(|| claim(Backend::Sqlite));
static CLAIM_POSTGRES: LazyLock<String> = LazyLock::new(|| claim(Backend::Postgres));

/// Claims the next queued job: $1 now, $2 the lease's end, $3 the worker.
fn claim(backend: Backend) -> String {
    // `arrival` orders jobs created in the same millisecond as they came.
    let (same_client, skip_locked, still_queued, arrival) = match backend {
        Backend::Sqlite => ("IS", "", " AND status = 'queued'", "rowid"),
        // Claimers skip rows another claim has locked instead of queueing behind it.
        Backend::Postgres => ("IS NOT DISTINCT FROM", " FOR UPDATE SKIP LOCKED", "", "seq"),
    };
    // The client whose turn it is: the one with the oldest queued job.
    let oldest_queued_client = format!(
        "SELECT client FROM jobs WHERE status = 'queued' ORDER BY created_at, {arrival} LIMIT 1"
    );
    format!(
        "UPDATE jobs SET status = 'running', started_at = $1, attempts = attempts + 1, lease_token = lease_token + 1, \
         lease_expires_at = $2, worker = $3 \
         WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND client {same_client} ({oldest_queued_client}) \
         ORDER BY priority DESC, created_at, {arrival} LIMIT 1{skip_locked}){still_queued} RETURNING {}",
        columns::READ.names()
    )
}

/// Ends a running job: the first parameters are what [`columns::FINISH`] names, then the
/// job's id and the fencing token that must still hold its lease.
static FINISH: LazyLock<String> = LazyLock::new(|| {
    let id = columns::FINISH.len() + 1;
    format!(
        "UPDATE jobs SET {}, lease_expires_at = NULL, finishes = finishes + 1 \
         WHERE id = ${id} AND lease_token = ${} AND status = 'running'",
        columns::FINISH.assignments(1),
        id + 1
    )
});

impl Store {
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
        let id = JobId::random();
        let inserted = bind_job(
            sqlx::query(INSERT.as_str()),
            &id,
            job.priority,
            &job.spec,
            now_ms(),
            &job.owner,
        );
        let inserted = bind_request(
            inserted,
            job.idempotency_key.as_deref(),
            job.request_hash.as_deref(),
            job.client.as_deref(),
        )
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
        let row = sqlx::query(self.dialect(&CLAIM_SQLITE, &CLAIM_POSTGRES))
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
        id: &JobId,
        token: i64,
        lease: Duration,
        progress: Option<&ProgressRecord>,
    ) -> Result<LeaseState, StoreError> {
        let row = sqlx::query(
            "UPDATE jobs SET lease_expires_at = $1, progress_nodes = COALESCE($2, progress_nodes), \
             progress_threshold = COALESCE($3, progress_threshold), progress_elapsed_ms = COALESCE($4, progress_elapsed_ms), \
             progress_made = COALESCE($5, progress_made), progress_tried = COALESCE($6, progress_tried), \
             progress_game = COALESCE($7, progress_game) \
             WHERE id = $8 AND lease_token = $9 AND status = 'running' RETURNING cancel_requested",
        )
        .bind(now_ms() + lease.as_millis() as i64)
        .bind(progress.map(|p| p.nodes_expanded as i64))
        .bind(progress.and_then(|p| p.threshold).map(i64::from))
        .bind(progress.map(|p| p.elapsed_ms as i64))
        .bind(progress.and_then(|p| p.levels).map(|l| l.made as i64))
        .bind(progress.and_then(|p| p.levels).map(|l| l.tried as i64))
        .bind(
            progress
                .and_then(|p| p.game.as_ref())
                .map(game::progress_text),
        )
        .bind(id.as_str())
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
        id: &JobId,
        token: i64,
        report: &JobReport,
    ) -> Result<bool, StoreError> {
        let written = bind_result(
            sqlx::query(FINISH.as_str()),
            &report.status,
            &ResultRecord::from_report(report),
            now_ms(),
        )
        .bind(id.as_str())
        .bind(token)
        .execute(&self.writer)
        .await?;
        self.fenced(id, written.rows_affected()).await
    }

    /// Notifies a change when `rows` says the fenced write went in.
    async fn fenced(&self, id: &JobId, rows: u64) -> Result<bool, StoreError> {
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
        const PARAMETERS: usize = columns::INSERT_FINISHED.len();
        if jobs.is_empty() {
            return Ok(());
        }
        let rows: Vec<String> = (0..jobs.len())
            .map(|row| {
                let first = row * PARAMETERS + 1;
                let list = match self.backend {
                    // SQLite looks a named parameter up by walking a list: numbered ones
                    // would make binding a large batch quadratic.
                    Backend::Sqlite => vec!["?"; PARAMETERS].join(", "),
                    Backend::Postgres => columns::INSERT_FINISHED.parameters(first),
                };
                // A job inserted finished has ended once.
                format!("({list}, 1)")
            })
            .collect();
        let sql = format!(
            "INSERT INTO jobs ({}, finishes) VALUES {}",
            columns::INSERT_FINISHED.names(),
            rows.join(", ")
        );
        // Built only from column names and placeholders, so it is as safe as a literal. Batch sizes
        // vary: caching a prepared statement per size would only churn the cache.
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        for job in jobs {
            let (Stage::Finished(status), Some(result), Some(finished_at)) =
                (&job.stage, &job.result, job.finished_at)
            else {
                return Err(StoreError::Corrupt {
                    id: job.id.to_string(),
                    why: "only finished jobs are inserted finished".into(),
                });
            };
            query = bind_job(
                query,
                &job.id,
                job.priority,
                &job.spec,
                job.created_at,
                &job.owner,
            );
            query = bind_runs(query, job.started_at, job.attempts);
            query = bind_result(query, status, result, finished_at);
        }
        query.execute(&self.writer).await?;
        Ok(())
    }

    /// Ends a running job as failed, with a message for the logs, if `token` holds it.
    pub async fn fail(&self, id: &JobId, token: i64, why: &str) -> Result<bool, StoreError> {
        let written = sqlx::query(
            "UPDATE jobs SET status = 'failed', finished_at = $1, error = $2, lease_expires_at = NULL, finishes = finishes + 1 \
             WHERE id = $3 AND lease_token = $4 AND status = 'running'",
        )
        .bind(now_ms())
        .bind(why)
        .bind(id.as_str())
        .bind(token)
        .execute(&self.writer)
        .await?;
        self.fenced(id, written.rows_affected()).await
    }

    /// Puts a running job back in the queue without using up an attempt (shutdown).
    pub async fn requeue(&self, id: &JobId, token: i64) -> Result<bool, StoreError> {
        // CASE, not MAX or GREATEST: one statement that both dialects read alike.
        let written = sqlx::query(
            "UPDATE jobs SET status = 'queued', started_at = NULL, \
             attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, lease_expires_at = NULL, \
             progress_nodes = NULL, progress_threshold = NULL, progress_elapsed_ms = NULL \
             WHERE id = $1 AND lease_token = $2 AND status = 'running'",
        )
        .bind(id.as_str())
        .bind(token)
        .execute(&self.writer)
        .await?;
        if written.rows_affected() == 1 {
            self.notify(Notice::Queued, id).await?;
        }
        self.fenced(id, written.rows_affected()).await
    }

    /// Cancels the job if a caller acting as `owner` may see it (else `NotFound`).
    pub async fn cancel(&self, id: &JobId, owner: &Owner) -> Result<CancelOutcome, StoreError> {
        let queued = sqlx::query(
            "UPDATE jobs SET status = 'cancelled', finished_at = $1, finishes = finishes + 1 \
             WHERE id = $2 AND status = 'queued' AND ($3 IS NULL OR owner = $3)",
        )
        .bind(now_ms())
        .bind(id.as_str())
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
        .bind(id.as_str())
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
    pub async fn delete(&self, id: &JobId, owner: &Owner) -> Result<DeleteOutcome, StoreError> {
        let deleted = sqlx::query(
            "DELETE FROM jobs WHERE id = $1 AND status NOT IN ('queued', 'running') \
             AND ($2 IS NULL OR owner = $2)",
        )
        .bind(id.as_str())
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
            self.notify(
                Notice::Changed,
                &JobId::from(row.try_get::<String, _>("id")?),
            )
            .await?;
        }
        for row in &requeued {
            self.notify(
                Notice::Queued,
                &JobId::from(row.try_get::<String, _>("id")?),
            )
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
