//! The job service: accepts jobs into the store, runs them on a bounded pool of
//! blocking threads, and tells listeners (long polls, SSE) what changed. The live
//! registry (a `DashMap`) holds each running job's cancel flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dashmap::DashMap;
use tokio::sync::{Notify, Semaphore, broadcast};

use super::run::{self, JobReport, JobStatus};
use super::store::{CancelOutcome, JobRecord, NewJob, ProgressRecord, Store, StoreError};
use super::tables::TableStore;
use crate::search::{CancelFlag, Progress, ProgressSink};

/// How often a running job's progress reaches listeners, and the database.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);
const PROGRESS_WRITE_INTERVAL: Duration = Duration::from_secs(1);
/// The queue is polled this often too, so a lost wake-up only delays.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

#[derive(Clone, Debug)]
pub enum JobEvent {
    /// The job's stage changed (queued → running → finished).
    Changed { id: String },
    Progress {
        id: String,
        progress: ProgressRecord,
    },
}

impl JobEvent {
    pub fn id(&self) -> &str {
        match self {
            JobEvent::Changed { id } | JobEvent::Progress { id, .. } => id,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ServiceConfig {
    pub workers: usize,
    pub max_queued: i64,
    pub max_attempts: i64,
    /// How long running jobs may finish after shutdown starts before they are requeued.
    pub shutdown_grace: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("the queue is full ({0} jobs waiting)")]
    QueueFull(i64),
    #[error("the service is shutting down")]
    ShuttingDown,
    #[error(transparent)]
    Store(#[from] StoreError),
}

struct LiveJob {
    cancel: CancelFlag,
    /// Set at shutdown: a stopped search goes back to the queue instead of ending cancelled.
    requeue: Arc<AtomicBool>,
}

pub struct JobService {
    store: Store,
    tables: Arc<TableStore>,
    config: ServiceConfig,
    live: DashMap<String, LiveJob>,
    events: broadcast::Sender<JobEvent>,
    wake: Notify,
    slots: Arc<Semaphore>,
    stopping: AtomicBool,
}

/// Sends progress to listeners and keeps the latest for the database writer.
struct Reporter {
    id: String,
    events: broadcast::Sender<JobEvent>,
    latest: Mutex<Option<ProgressRecord>>,
}

impl ProgressSink for Reporter {
    fn progress(&self, progress: &Progress) {
        let record = ProgressRecord {
            nodes_expanded: progress.nodes_expanded,
            threshold: progress.bound,
            elapsed_ms: progress.elapsed.as_millis() as u64,
        };
        *self.latest.lock().unwrap_or_else(|e| e.into_inner()) = Some(record.clone());
        // No listener is fine.
        let _ = self.events.send(JobEvent::Progress {
            id: self.id.clone(),
            progress: record,
        });
    }
}

impl JobService {
    pub fn new(store: Store, tables: Arc<TableStore>, config: ServiceConfig) -> Arc<JobService> {
        let (events, _) = broadcast::channel(1024);
        Arc::new(JobService {
            store,
            tables,
            config,
            live: DashMap::new(),
            events,
            wake: Notify::new(),
            slots: Arc::new(Semaphore::new(config.workers.max(1))),
            stopping: AtomicBool::new(false),
        })
    }

    pub fn store(&self) -> &Store {
        &self.store
    }
    pub fn tables(&self) -> &TableStore {
        &self.tables
    }
    pub fn config(&self) -> ServiceConfig {
        self.config
    }
    pub fn subscribe(&self) -> broadcast::Receiver<JobEvent> {
        self.events.subscribe()
    }
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    pub async fn submit(&self, job: NewJob) -> Result<(JobRecord, bool), SubmitError> {
        if self.is_stopping() {
            return Err(SubmitError::ShuttingDown);
        }
        if job.idempotency_key.is_none() {
            let queued = self.store.count_queued().await?;
            if queued >= self.config.max_queued {
                return Err(SubmitError::QueueFull(queued));
            }
        }
        let (record, created) = self.store.insert(job).await?;
        if created {
            self.wake.notify_one();
            let _ = self.events.send(JobEvent::Changed {
                id: record.id.clone(),
            });
        }
        Ok((record, created))
    }

    pub async fn cancel(&self, id: &str) -> Result<CancelOutcome, StoreError> {
        let outcome = self.store.cancel(id).await?;
        match outcome {
            CancelOutcome::StopRequested => {
                if let Some(job) = self.live.get(id) {
                    job.cancel.cancel();
                }
            }
            CancelOutcome::CancelledQueued => {
                let _ = self.events.send(JobEvent::Changed { id: id.to_string() });
            }
            _ => {}
        }
        Ok(outcome)
    }

    /// Requeues jobs a crash left running, then claims and runs jobs until shutdown.
    pub async fn run_workers(self: Arc<Self>) -> Result<(), StoreError> {
        let (requeued, failed) = self.store.recover(self.config.max_attempts).await?;
        if requeued + failed > 0 {
            tracing::info!(
                requeued,
                failed,
                "recovered jobs interrupted by the last shutdown"
            );
        }
        loop {
            let permit = Arc::clone(&self.slots)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            if self.is_stopping() {
                return Ok(());
            }
            let claimed = match self.store.claim().await {
                Ok(claimed) => claimed,
                Err(error) => {
                    tracing::warn!(%error, "claiming a job failed; retrying");
                    None
                }
            };
            let Some(job) = claimed else {
                drop(permit);
                tokio::select! {
                    _ = self.wake.notified() => {}
                    _ = tokio::time::sleep(POLL_INTERVAL) => {}
                }
                continue;
            };
            let service = Arc::clone(&self);
            tokio::spawn(async move {
                service.run_one(job).await;
                drop(permit);
                // A slot is free: look at the queue again at once.
                service.wake.notify_one();
            });
        }
    }

    async fn run_one(self: &Arc<Self>, job: JobRecord) {
        let id = job.id.clone();
        let cancel = CancelFlag::new();
        let requeue = Arc::new(AtomicBool::new(false));
        self.live.insert(
            id.clone(),
            LiveJob {
                cancel: cancel.clone(),
                requeue: Arc::clone(&requeue),
            },
        );
        // A cancel that arrived between claim and registration must still count.
        if self.store.cancel_requested(&id).await.unwrap_or(false) {
            cancel.cancel();
        }
        let _ = self.events.send(JobEvent::Changed { id: id.clone() });

        let reporter = Arc::new(Reporter {
            id: id.clone(),
            events: self.events.clone(),
            latest: Mutex::new(None),
        });
        let search = {
            let reporter = Arc::clone(&reporter);
            let tables = Arc::clone(&self.tables);
            let spec = job.spec.clone();
            tokio::task::spawn_blocking(move || {
                let progress = run::Progress {
                    sink: &*reporter,
                    interval: PROGRESS_INTERVAL,
                };
                run::run_job(&spec, &tables, cancel, Some(progress))
            })
        };
        tokio::pin!(search);
        let mut ticker = tokio::time::interval(PROGRESS_WRITE_INTERVAL);
        let joined = loop {
            tokio::select! {
                joined = &mut search => break joined,
                _ = ticker.tick() => {
                    let latest = reporter.latest.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    if let Some(progress) = latest && let Err(error) = self.store.save_progress(&id, &progress).await {
                        tracing::warn!(%error, job = %id, "saving progress failed");
                    }
                }
            }
        };
        self.live.remove(&id);
        let written = match joined {
            Ok(Ok(report))
                if report.status == JobStatus::Cancelled && requeue.load(Ordering::Relaxed) =>
            {
                self.store.requeue(&id).await
            }
            Ok(Ok(report)) => {
                log_finish(&id, &report);
                self.store.finish(&id, &report).await
            }
            Ok(Err(error)) => {
                tracing::error!(job = %id, %error, "job could not start");
                self.store.fail(&id, &error.to_string()).await
            }
            // A panic in a search ends that job, never the worker.
            Err(join_error) => {
                tracing::error!(job = %id, error = %join_error, "search panicked");
                self.store.fail(&id, "the search panicked").await
            }
        };
        if let Err(error) = written {
            tracing::error!(job = %id, %error, "recording the job's end failed; it will be retried after restart");
        }
        let _ = self.events.send(JobEvent::Changed { id });
    }

    /// Stops claiming, lets running jobs finish within the grace period, then stops
    /// the rest and puts them back in the queue.
    pub async fn shutdown(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.wake.notify_waiters();
        let all = self.config.workers.max(1) as u32;
        let drained =
            tokio::time::timeout(self.config.shutdown_grace, self.slots.acquire_many(all)).await;
        if drained.is_err() {
            for job in self.live.iter() {
                job.requeue.store(true, Ordering::Relaxed);
                job.cancel.cancel();
            }
            let _ = self.slots.acquire_many(all).await;
        }
    }
}

fn log_finish(id: &str, report: &JobReport) {
    tracing::info!(
        job = id,
        status = report.status.name(),
        length = report.plan.as_ref().map(|p| p.length),
        nodes = report.stats.nodes_expanded,
        ms = report.stats.elapsed.as_millis() as u64,
        "job finished"
    );
}
