//! Builds in the service: [`TableStore::request`] queues a layout that may be built,
//! and the builder thread runs the queue one layout at a time until the store stops.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::store::State;
use super::{Layout, LayoutState, Refusal, TableError, TableStore};
use crate::puzzles::sliding::exact::ExactError;
use crate::puzzles::sliding::pdb::PdbError;

/// Builds waiting at most; requests beyond are refused until the queue drains.
const MAX_QUEUED_BUILDS: usize = 32;
/// Refused layouts remembered for status, newest first.
const REFUSALS_SHOWN: usize = 32;

/// How a build on the builder thread ended: its `outcome` label in the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BuildOutcome {
    Built,
    Stopped,
    Failed,
}

impl BuildOutcome {
    fn name(self) -> &'static str {
        match self {
            BuildOutcome::Built => "built",
            BuildOutcome::Stopped => "stopped",
            BuildOutcome::Failed => "failed",
        }
    }
}

impl State {
    /// Shows the refusal in the status, newest first.
    fn remember_refusal(&mut self, layout: Layout, refusal: Refusal) {
        self.refused.push_front((layout, refusal));
        self.refused.truncate(REFUSALS_SHOWN);
    }
}

impl TableStore {
    /// Where the layout stands, queueing its build when it is missing and may be built:
    /// cheap, or allowed by `--build-tables`, within the build budget.
    pub fn request(&self, layout: &Layout) -> LayoutState {
        let Ok(keys) = layout.tables() else {
            return LayoutState::Refused(Refusal::NotAllowed);
        };
        let mut state = self.lock();
        if keys.iter().all(|key| self.has_table(&mut state, key)) {
            return LayoutState::Ready;
        }
        if state.building.as_ref() == Some(layout) {
            return LayoutState::Building;
        }
        if state.queue.contains(layout) {
            return LayoutState::Queued;
        }
        let Some(limits) = &self.limits else {
            return LayoutState::Refused(Refusal::NotAllowed);
        };
        let refusal = if !layout.is_cheap() && !limits.allowed.iter().any(|r| r.covers(layout)) {
            Some(Refusal::NotAllowed)
        } else if layout.build_bytes() > u128::from(limits.build_memory_bytes) {
            Some(Refusal::OverBudget)
        } else if state.queue.len() >= MAX_QUEUED_BUILDS || self.stop.load(Ordering::Relaxed) {
            Some(Refusal::QueueFull)
        } else {
            None
        };
        state.refused.retain(|(l, _)| l != layout);
        if let Some(refusal) = refusal {
            metrics::counter!("puzzled_table_refusals_total", "reason" => refusal.name())
                .increment(1);
            state.remember_refusal(layout.clone(), refusal);
            return LayoutState::Refused(refusal);
        }
        tracing::info!(layout = %layout.name(), "table build queued");
        state.queue.push_back(layout.clone());
        drop(state);
        self.work.notify_all();
        LayoutState::Queued
    }

    /// Starts the thread that runs queued builds, one at a time, until [`Self::shutdown`].
    pub fn start_builder(self: &Arc<Self>) -> std::io::Result<std::thread::JoinHandle<()>> {
        let store = Arc::clone(self);
        std::thread::Builder::new()
            .name("table-builder".into())
            .spawn(move || store.run_builds())
    }

    /// Stops the builder, and the build under way within milliseconds; later requests
    /// are refused.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::Relaxed);
        // Taking the lock orders the flag before the builder's next wait.
        drop(self.lock());
        self.work.notify_all();
    }

    fn run_builds(&self) {
        loop {
            let layout = {
                let mut state = self.lock();
                loop {
                    if self.stop.load(Ordering::Relaxed) {
                        state.queue.clear();
                        return;
                    }
                    if let Some(layout) = state.queue.pop_front() {
                        state.building = Some(layout.clone());
                        break layout;
                    }
                    state = self.work.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            };
            let started = Instant::now();
            tracing::info!(layout = %layout.name(), "table build started");
            let built = self.build_layout(&layout);
            let mut state = self.lock();
            state.building = None;
            let outcome = match built {
                Ok(()) => {
                    tracing::info!(layout = %layout.name(), seconds = started.elapsed().as_secs_f64(), "table build finished");
                    BuildOutcome::Built
                }
                Err(
                    TableError::Pdb(PdbError::Stopped) | TableError::Exact(ExactError::Stopped),
                ) => {
                    tracing::info!(layout = %layout.name(), "table build stopped");
                    BuildOutcome::Stopped
                }
                Err(error) => {
                    tracing::warn!(layout = %layout.name(), %error, "table build failed");
                    state.remember_refusal(layout, Refusal::Failed);
                    BuildOutcome::Failed
                }
            };
            drop(state);
            metrics::counter!("puzzled_table_builds_total", "outcome" => outcome.name())
                .increment(1);
            self.publish_counts();
        }
    }

    /// Builds the layout's missing tables in turn, holding and caching each.
    fn build_layout(&self, layout: &Layout) -> Result<(), TableError> {
        let pinned = self.allowed().iter().any(|rule| rule.covers(layout));
        for key in layout.tables()? {
            {
                let mut state = self.lock();
                if pinned {
                    state.pinned.insert(key.clone());
                }
                if self.has_table(&mut state, &key) {
                    continue;
                }
            }
            let table = self.build(&key, Instant::now())?;
            let bytes = table.memory_bytes();
            let mut state = self.lock();
            state
                .slots
                .insert(key.clone(), Arc::new(OnceLock::from(Ok(table))));
            let evicted = self.hold(&mut state, &key, bytes as u64);
            drop(state);
            drop(evicted);
        }
        Ok(())
    }
}
