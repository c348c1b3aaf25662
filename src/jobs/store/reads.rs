//! Reading jobs: one by id or idempotency key, a page of them, and counts.

use std::sync::LazyLock;

use sqlx::Row;

use super::columns;
use super::decode::record;
use super::{JobRecord, Owner, Store, StoreError};
use crate::jobs::id::JobId;

/// A job by its id.
static GET: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {} FROM jobs WHERE id = $1", columns::READ.names()));

/// A page of jobs, newest first: $1 a status or NULL, ($2, $3) the (created_at, id) the
/// page starts after, $4 its length, $5 the owner or NULL.
static LIST: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM jobs WHERE ($1 IS NULL OR status = $1) \
         AND (created_at < $2 OR (created_at = $2 AND ($3 = '' OR id < $3))) \
         AND ($5 IS NULL OR owner = $5) \
         ORDER BY created_at DESC, id DESC LIMIT $4",
        columns::READ.names()
    )
});

impl Store {
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
        let id = JobId::from(row.try_get::<String, _>("id")?);
        self.get(&id).await
    }

    pub async fn get(&self, id: &JobId) -> Result<Option<JobRecord>, StoreError> {
        let row = sqlx::query(GET.as_str())
            .bind(id.as_str())
            .fetch_optional(&self.reader)
            .await?;
        row.map(|r| record(&r)).transpose()
    }

    /// The job, if a caller acting as `owner` may see it.
    pub async fn get_visible(
        &self,
        id: &JobId,
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
        let rows = sqlx::query(LIST.as_str())
            .bind(status)
            .bind(after_time)
            .bind(&after_id)
            .bind(limit)
            .bind(owner.filter())
            .fetch_all(&self.reader)
            .await?;
        rows.iter().map(record).collect()
    }
}
