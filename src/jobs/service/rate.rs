//! Rating a level a client brings: a bounded search run beside the inline solves, in
//! their slots, under a deadline of its own and stopped if the client goes away.

use std::time::Duration;

use super::{JobService, SubmitError};
use crate::puzzles::sokoban::Level;
use crate::puzzles::sokoban::generate::rating::{self, KnownPlan, RateError, Rated};
use crate::search::{CancelFlag, Limits};

/// The longest one rating runs, unless the service's time cap is shorter: its searches
/// are bounded in nodes too ([`rating::EFFORT_NODES`], [`rating::SOLVE_NODES`]), which
/// usually end it sooner.
pub const RATE_TIME_BUDGET: Duration = Duration::from_secs(5);

/// Cancels the rating when the request is dropped (the client hung up).
struct CancelOnDrop(CancelFlag);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl JobService {
    /// Rates `level` within `time` (at most [`RATE_TIME_BUDGET`]); `plan`, a solution the
    /// client knows, is replayed before it is used.
    pub async fn rate(
        &self,
        level: Level,
        plan: Option<String>,
        time: Duration,
    ) -> Result<Result<Rated, RateError>, SubmitError> {
        if self.is_stopping() {
            return Err(SubmitError::ShuttingDown);
        }
        let _permit = self
            .inline_slots
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let cancel = CancelFlag::new();
        let _guard = CancelOnDrop(cancel.clone());
        let limits = Limits {
            max_nodes: None,
            timeout: Some(time.min(RATE_TIME_BUDGET)),
            max_memory_bytes: Some(self.config.max_job_memory_bytes),
        };
        let rated = tokio::task::spawn_blocking(move || {
            let known = plan.as_deref().map(|lurd| KnownPlan {
                lurd,
                optimal: false,
            });
            rating::rate(&level, known, limits, &cancel)
        })
        .await;
        // A panic in the rating is a bug: it ends this request as any handler's would.
        Ok(rated.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())))
    }
}
