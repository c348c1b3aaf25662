//! What one process tells the others through PostgreSQL's `NOTIFY`.

use super::{Backend, Store, StoreError};
use crate::jobs::id::JobId;

crate::named_enum! {
    /// What other processes are told through PostgreSQL's `NOTIFY` (channel [`CHANNEL`]),
    /// as `"<kind> <job id>"`.
    pub enum Notice {
        /// A job was queued: a worker may claim it.
        Queued = "queued",
        /// A job changed stage.
        Changed = "changed",
        /// A running job wrote progress.
        Progress = "progress",
        /// A running job was asked to stop.
        Cancel = "cancel",
    }
}

impl Notice {
    /// Parses a payload back into the notice and the job id.
    pub fn read(payload: &str) -> Option<(Notice, JobId)> {
        let (kind, id) = payload.split_once(' ')?;
        Some((Notice::parse(kind)?, JobId::from(id.to_string())))
    }
}

/// The `NOTIFY` channel every puzzled process listens on.
pub const CHANNEL: &str = "puzzled_jobs";

impl Store {
    /// Tells other processes (PostgreSQL only; one SQLite process tells itself).
    pub(super) async fn notify(&self, notice: Notice, id: &JobId) -> Result<(), StoreError> {
        if self.backend == Backend::Postgres {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(format!("{} {id}", notice.name()))
                .execute(&self.writer)
                .await?;
        }
        Ok(())
    }
}
