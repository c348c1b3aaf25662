//! The job service: accepts jobs into the store, runs them on a bounded pool of
//! blocking threads, and tells listeners (long polls, SSE) what changed. The live
//! registry (a `DashMap`) holds each running job's cancel flag.

mod rate;
mod worker;

pub use rate::RATE_TIME_BUDGET;
use worker::{Reporter, record_finish};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dashmap::DashMap;
use tokio::sync::{Notify, Semaphore, broadcast, watch};

use crate::jobs::group_commit::GroupCommit;
use crate::jobs::id::JobId;
use crate::jobs::memory::Trimmer;
use crate::jobs::run::{self};
use crate::jobs::spec::{JobSpec, PuzzleSpec};
use crate::jobs::status::{ExhaustedReason, JobStatus};
use crate::jobs::store::{
    Backend, CHANNEL, CancelOutcome, JobRecord, LeaseState, NewJob, Notice, Owner, ProgressRecord,
    ResultRecord, Stage, Store, StoreError, now_ms,
};
use crate::jobs::tables::TableStore;
use crate::search::CancelFlag;

/// How often a running job's progress reaches listeners, and the database.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);
const PROGRESS_WRITE_INTERVAL: Duration = Duration::from_secs(1);
/// The queue is polled this often too, so a lost wake-up only delays.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Nodes a synchronous solve may spend before the job is queued: a few milliseconds of
/// search, which answers every 8-puzzle and most small boards without a queue round trip.
pub const INLINE_NODE_BUDGET: u64 = 20_000;
/// And the time it may spend, for searches whose nodes are costly (Sokoban box moves).
pub const INLINE_TIME_BUDGET: Duration = Duration::from_millis(50);

#[derive(Clone, Debug)]
pub enum JobEvent {
    /// The job's stage changed (queued → running → finished).
    Changed {
        id: JobId,
    },
    Progress {
        id: JobId,
        progress: ProgressRecord,
    },
}

impl JobEvent {
    pub fn id(&self) -> &JobId {
        match self {
            JobEvent::Changed { id } | JobEvent::Progress { id, .. } => id,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ServiceConfig {
    pub workers: usize,
    pub max_queued: i64,
    /// Queued jobs one client (one API key, or one IP address without keys) may have at
    /// once, so that one client cannot take the whole queue.
    pub max_queued_per_client: i64,
    pub max_attempts: i64,
    /// How long running jobs may finish after shutdown starts before they are requeued.
    pub shutdown_grace: Duration,
    /// How long a claim holds without a heartbeat; a job whose worker stops renewing
    /// it is requeued by the reaper this long after the last renewal.
    pub lease: Duration,
    /// Whether this process runs searches itself: workers and inline solves. API-only
    /// processes of a scaled-out deployment leave them to the worker processes.
    pub runs_searches: bool,
    /// The memory cap every job this process runs is held to, however it was submitted
    /// (a job read back from the store carries no cap of its own).
    pub max_job_memory_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("the queue is full ({0} jobs waiting)")]
    QueueFull(i64),
    #[error(
        "this client already has {queued} jobs waiting, the most one client may queue is {cap}; wait for some to start or cancel them"
    )]
    ClientQueueFull { queued: i64, cap: i64 },
    #[error(
        "the queue is nearly full ({queued} jobs waiting) and its last {reserve} places are kept for clients with fewer than {light} jobs waiting; this client has {client_queued}"
    )]
    QueueReserved {
        queued: i64,
        reserve: i64,
        light: i64,
        client_queued: i64,
    },
    #[error("the service is shutting down")]
    ShuttingDown,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether a client with `client_queued` jobs waiting may queue one more when `queued`
/// wait in all. Each client may hold at most `max_queued_per_client`; the last quarter
/// of the queue is kept for light clients (fewer than a tenth of that waiting), so a few
/// heavy clients filling the queue do not shut a newcomer out.
fn admit(config: &ServiceConfig, queued: i64, client_queued: i64) -> Result<(), SubmitError> {
    if queued >= config.max_queued {
        return Err(SubmitError::QueueFull(queued));
    }
    let cap = config.max_queued_per_client;
    if client_queued >= cap {
        return Err(SubmitError::ClientQueueFull {
            queued: client_queued,
            cap,
        });
    }
    let reserve = config.max_queued / 4;
    let light = (cap / 10).max(1);
    if queued >= config.max_queued - reserve && client_queued >= light {
        return Err(SubmitError::QueueReserved {
            queued,
            reserve,
            light,
            client_queued,
        });
    }
    Ok(())
}

struct LiveJob {
    cancel: CancelFlag,
    /// The search's latest progress, fresher than the copy written to the store.
    reporter: Arc<Reporter>,
    /// Set at shutdown: a stopped search goes back to the queue instead of ending cancelled.
    requeue: Arc<AtomicBool>,
}

pub struct JobService {
    store: Store,
    tables: Arc<TableStore>,
    config: ServiceConfig,
    live: DashMap<JobId, LiveJob>,
    events: broadcast::Sender<JobEvent>,
    wake: Notify,
    slots: Arc<Semaphore>,
    /// Bounds the small synchronous searches that run before (instead of) queueing.
    inline_slots: Semaphore,
    /// Writes the jobs those searches finished, many to a commit.
    finished_inline: GroupCommit,
    stopping: AtomicBool,
    /// Flips to true when shutdown starts, so long polls and event streams end instead
    /// of holding the server open.
    stop_signal: watch::Sender<bool>,
    /// True while the claim loop runs (readiness).
    workers_running: AtomicBool,
    /// Names this process in the leases it takes.
    worker_id: String,
    /// Returns what queued searches freed to the system.
    trimmer: Arc<Trimmer>,
}

impl JobService {
    pub fn new(store: Store, tables: Arc<TableStore>, config: ServiceConfig) -> Arc<JobService> {
        let (events, _) = broadcast::channel(1024);
        Arc::new(JobService {
            tables,
            config,
            live: DashMap::new(),
            events,
            wake: Notify::new(),
            slots: Arc::new(Semaphore::new(config.workers.max(1))),
            inline_slots: Semaphore::new(4 * config.workers.max(1)),
            finished_inline: GroupCommit::spawn(store.clone()),
            store,
            stopping: AtomicBool::new(false),
            stop_signal: watch::Sender::new(false),
            workers_running: AtomicBool::new(false),
            trimmer: Arc::default(),
            worker_id: format!(
                "{}-{}",
                std::process::id(),
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            ),
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
    /// Resolves (`wait_for(|s| *s)`) once shutdown has started.
    pub fn stop_signal(&self) -> watch::Receiver<bool> {
        self.stop_signal.subscribe()
    }
    pub fn workers_running(&self) -> bool {
        self.workers_running.load(Ordering::Relaxed)
    }
    /// Jobs whose search is under way in this process.
    /// `spec` held to this process's memory cap, whatever cap (or none) it came with.
    fn capped(&self, spec: &JobSpec) -> JobSpec {
        let cap = self.config.max_job_memory_bytes;
        let mut spec = spec.clone();
        spec.limits.max_memory_bytes =
            Some(spec.limits.max_memory_bytes.map_or(cap, |m| m.min(cap)));
        spec
    }

    pub fn running_jobs(&self) -> usize {
        self.live.len()
    }

    pub async fn submit(&self, job: NewJob) -> Result<(JobRecord, bool), SubmitError> {
        if self.is_stopping() {
            return Err(SubmitError::ShuttingDown);
        }
        // A retry of a job already accepted is answered with it whatever the limits say;
        // a new key is a new job and counts like any other.
        if let Some(key) = &job.idempotency_key
            && let Some(existing) = self
                .store
                .by_idempotency_key(&job.owner, key, job.request_hash.as_deref())
                .await?
        {
            return Ok((existing, false));
        }
        let queued = self.store.count_queued().await?;
        let client_queued = match &job.client {
            Some(client) => self.store.count_queued_by(client).await?,
            None => 0,
        };
        admit(&self.config, queued, client_queued)?;
        let (record, created) = self.store.insert(job).await?;
        if created {
            metrics::counter!("puzzled_jobs_submitted_total", "path" => "queue").increment(1);
            self.wake.notify_one();
            let _ = self.events.send(JobEvent::Changed {
                id: record.id.clone(),
            });
        }
        Ok((record, created))
    }

    /// Runs a small job at once, within [`INLINE_NODE_BUDGET`] nodes and
    /// [`INLINE_TIME_BUDGET`], and records it
    /// finished (durably: the answer waits for the commit). `Ok(None)` when it needs more (or carries an idempotency key, which
    /// only the queue checks): submit it to the queue then.
    pub async fn solve_now(&self, job: &NewJob) -> Result<Option<JobRecord>, SubmitError> {
        if self.is_stopping() {
            return Err(SubmitError::ShuttingDown);
        }
        if job.idempotency_key.is_some() || !self.config.runs_searches {
            return Ok(None);
        }
        // Inline searches are milliseconds at most, so waiting for a slot beats queueing.
        let permit = self
            .inline_slots
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let created_at = now_ms();
        let requested_nodes = job.spec.limits.max_nodes;
        let requested_time = job.spec.limits.timeout;
        let mut trial = job.spec.clone();
        if let PuzzleSpec::Twenty48(_) = job.spec.puzzle {
            // A game search is anytime: stopped by a trial budget it would answer, worse
            // than its own limits would. It runs here only when those are as small.
            let small = requested_nodes.is_some_and(|n| n <= INLINE_NODE_BUDGET)
                || requested_time.is_some_and(|t| t <= INLINE_TIME_BUDGET);
            if !small {
                return Ok(None);
            }
        } else {
            trial.limits.max_nodes =
                Some(requested_nodes.map_or(INLINE_NODE_BUDGET, |n| n.min(INLINE_NODE_BUDGET)));
            trial.limits.timeout =
                Some(requested_time.map_or(INLINE_TIME_BUDGET, |t| t.min(INLINE_TIME_BUDGET)));
        }
        let tables = Arc::clone(&self.tables);
        let ran = tokio::task::spawn_blocking(move || {
            run::run_job(&trial, &tables, CancelFlag::new(), None)
        })
        .await;
        drop(permit);
        // Errors and panics are the queue's to record, with its retries and logs.
        let Ok(Ok(report)) = ran else {
            return Ok(None);
        };
        let stopped_by_trial_budget = match report.status {
            JobStatus::Exhausted(ExhaustedReason::NodeLimit) => {
                requested_nodes.is_none_or(|n| n > INLINE_NODE_BUDGET)
            }
            JobStatus::Exhausted(ExhaustedReason::Timeout) => {
                requested_time.is_none_or(|t| t > INLINE_TIME_BUDGET)
            }
            _ => false,
        };
        if stopped_by_trial_budget {
            return Ok(None);
        }
        let record = JobRecord {
            id: JobId::random(),
            stage: Stage::Finished(report.status.clone()),
            priority: job.priority,
            spec: job.spec.clone(),
            created_at,
            started_at: Some(created_at),
            finished_at: Some(now_ms()),
            attempts: 1,
            lease_token: 0,
            progress: None,
            result: Some(ResultRecord::from_report(&report)),
            error: match &report.status {
                JobStatus::Failed(why) => Some(why.clone()),
                _ => None,
            },
            owner: job.owner.clone(),
        };
        self.finished_inline.write(record.clone()).await?;
        metrics::counter!("puzzled_jobs_submitted_total", "path" => "inline").increment(1);
        record_finish(&report, Duration::ZERO);
        let _ = self.events.send(JobEvent::Changed {
            id: record.id.clone(),
        });
        Ok(Some(record))
    }

    /// The job as stored, with the live progress of its search if it runs here, if a
    /// caller acting as `owner` may see it.
    pub async fn get(&self, id: &JobId, owner: &Owner) -> Result<Option<JobRecord>, StoreError> {
        let mut job = self.store.get_visible(id, owner).await?;
        if let Some(job) = job.as_mut()
            && job.stage == Stage::Running
            && let Some(live) = self.live.get(id)
            && let Some(progress) = live.reporter.latest()
        {
            job.progress = Some(progress);
        }
        Ok(job)
    }

    pub async fn cancel(&self, id: &JobId, owner: &Owner) -> Result<CancelOutcome, StoreError> {
        let outcome = self.store.cancel(id, owner).await?;
        match outcome {
            CancelOutcome::StopRequested => {
                if let Some(job) = self.live.get(id) {
                    job.cancel.cancel();
                }
            }
            CancelOutcome::CancelledQueued => {
                let _ = self.events.send(JobEvent::Changed { id: id.clone() });
            }
            _ => {}
        }
        Ok(outcome)
    }

    /// At start-up: with SQLite this is the only process, so every job left running was
    /// interrupted by the last shutdown and goes back to the queue (or fails, out of
    /// attempts) at once. With PostgreSQL other processes may be running jobs: only
    /// expired leases are taken, by the reaper.
    pub async fn recover(&self) -> Result<(), StoreError> {
        if self.store.backend() == Backend::Sqlite {
            self.reap(i64::MAX).await?;
        }
        Ok(())
    }

    async fn reap(&self, expired_before: i64) -> Result<(), StoreError> {
        let (requeued, failed) = self
            .store
            .reap(expired_before, self.config.max_attempts)
            .await?;
        metrics::counter!("puzzled_jobs_recovered_total", "outcome" => "requeued")
            .increment(requeued);
        metrics::counter!("puzzled_jobs_recovered_total", "outcome" => "failed").increment(failed);
        if requeued + failed > 0 {
            tracing::info!(requeued, failed, "recovered jobs whose worker stopped");
            self.wake.notify_one();
        }
        Ok(())
    }

    /// Requeues jobs whose lease expired, every half lease, until shutdown.
    pub fn start_reaper(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let service = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(service.config.lease / 2);
            let mut stopping = service.stop_signal();
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = stopping.wait_for(|stop| *stop) => return,
                }
                if let Err(error) = service.reap(now_ms()).await {
                    tracing::warn!(%error, "reaping expired leases failed; retrying");
                }
            }
        })
    }

    /// PostgreSQL: turns other processes' notices into local wake-ups, events and
    /// cancels. A lost notice only delays: workers also poll the queue, and heartbeats
    /// carry cancel requests.
    pub fn start_listener(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        if self.store.backend() != Backend::Postgres {
            return None;
        }
        let service = Arc::clone(self);
        Some(tokio::spawn(async move {
            loop {
                if let Err(error) = service.listen().await {
                    tracing::warn!(%error, "listening for job notices failed; reconnecting");
                }
                tokio::time::sleep(POLL_INTERVAL).await;
            }
        }))
    }

    async fn listen(&self) -> Result<(), sqlx::Error> {
        let mut listener = sqlx::postgres::PgListener::connect(self.store.url()).await?;
        listener.listen(CHANNEL).await?;
        loop {
            let notification = listener.recv().await?;
            let Some((notice, id)) = Notice::read(notification.payload()) else {
                continue;
            };
            match notice {
                Notice::Queued => self.wake.notify_one(),
                Notice::Changed => {
                    let _ = self.events.send(JobEvent::Changed { id });
                }
                // Jobs running here report their progress themselves.
                Notice::Progress if !self.live.contains_key(&id) => {
                    if let Ok(Some(job)) = self.store.get(&id).await
                        && let Some(progress) = job.progress
                    {
                        let _ = self.events.send(JobEvent::Progress { id, progress });
                    }
                }
                Notice::Progress => {}
                Notice::Cancel => {
                    if let Some(job) = self.live.get(&id) {
                        job.cancel.cancel();
                    }
                }
            }
        }
    }

    /// Stops claiming, lets running jobs finish within the grace period, then stops
    /// the rest and puts them back in the queue.
    pub async fn shutdown(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.stop_signal.send_replace(true);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config(max_queued: i64, max_queued_per_client: i64) -> ServiceConfig {
        ServiceConfig {
            workers: 1,
            max_queued,
            max_queued_per_client,
            max_attempts: 3,
            shutdown_grace: Duration::ZERO,
            lease: Duration::from_secs(5),
            runs_searches: true,
            max_job_memory_bytes: 1 << 20,
        }
    }

    #[test]
    fn the_last_quarter_of_the_queue_is_kept_for_light_clients() {
        let config = config(1000, 100);
        // Below the reserve any client under its own cap gets in.
        assert!(admit(&config, 749, 99).is_ok());
        // In the reserve, a client with 10 waiting (a tenth of its cap) is refused...
        assert!(matches!(
            admit(&config, 750, 10),
            Err(SubmitError::QueueReserved {
                reserve: 250,
                light: 10,
                ..
            })
        ));
        // ...and a newcomer, or a client with a few waiting, is not.
        assert!(admit(&config, 750, 0).is_ok());
        assert!(admit(&config, 999, 9).is_ok());
        assert!(matches!(
            admit(&config, 1000, 0),
            Err(SubmitError::QueueFull(1000))
        ));
        assert!(matches!(
            admit(&config, 10, 100),
            Err(SubmitError::ClientQueueFull {
                queued: 100,
                cap: 100
            })
        ));
    }

    #[test]
    fn small_queues_still_admit_one_job_per_light_client() {
        // A per-client cap under 10 makes "light" one job: a client with none waiting.
        let config = config(4, 2);
        assert!(admit(&config, 3, 0).is_ok());
        assert!(matches!(
            admit(&config, 3, 1),
            Err(SubmitError::QueueReserved { .. })
        ));
    }
}
