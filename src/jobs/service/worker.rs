//! The worker pool: claims jobs while a slot is free, runs each on a blocking thread
//! with its progress reported and its lease renewed, and records how it ended.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::broadcast;

use super::*;
use crate::jobs::game::GameProgress;
use crate::jobs::id::JobId;
use crate::jobs::resolve::JobError;
use crate::jobs::run::{self, JobReport};
use crate::jobs::status::JobStatus;
use crate::jobs::store::LevelCounts;
use crate::puzzles::sokoban::generate::GenProgress;
use crate::search::{Progress, ProgressSink};

/// Sends progress to listeners and keeps the latest for the database writer.
pub(super) struct Reporter {
    id: JobId,
    events: broadcast::Sender<JobEvent>,
    latest: Mutex<Option<ProgressRecord>>,
}

impl Reporter {
    pub(super) fn latest(&self) -> Option<ProgressRecord> {
        self.latest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends the latest record changed by `update`: a search's nodes and a game's news
    /// come separately, and each event carries both.
    fn send(&self, update: impl FnOnce(&mut ProgressRecord)) {
        let record = {
            let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
            let record = latest.get_or_insert(ProgressRecord {
                nodes_expanded: 0,
                threshold: None,
                elapsed_ms: 0,
                levels: None,
                game: None,
            });
            update(record);
            record.clone()
        };
        // No listener is fine.
        let _ = self.events.send(JobEvent::Progress {
            id: self.id.clone(),
            progress: record,
        });
    }
}

impl ProgressSink for Reporter {
    fn progress(&self, progress: &Progress) {
        self.send(|record| {
            record.nodes_expanded = progress.nodes_expanded;
            record.threshold = progress.bound;
            record.elapsed_ms = progress.elapsed.as_millis() as u64;
        });
    }
}

impl run::JobSink for Reporter {
    fn generation(&self, progress: &GenProgress) {
        self.send(|record| {
            record.nodes_expanded = progress.nodes;
            record.elapsed_ms = progress.elapsed.as_millis() as u64;
            record.levels = Some(LevelCounts {
                made: progress.made as u64,
                tried: progress.tried as u64,
            });
        });
    }

    fn game(&self, progress: &GameProgress) {
        self.send(|record| {
            if let GameProgress::Played(played) = progress {
                record.nodes_expanded = played.nodes;
                record.elapsed_ms = played.elapsed.as_millis() as u64;
            }
            record.game = Some(progress.clone());
        });
    }
}

impl JobService {
    /// Claims and runs jobs until shutdown, on the current runtime.
    pub fn start_workers(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        self.workers_running.store(true, Ordering::Relaxed);
        let service = Arc::clone(self);
        tokio::spawn(async move {
            Arc::clone(&service).claim_and_run().await;
            service.workers_running.store(false, Ordering::Relaxed);
        })
    }

    /// Claims jobs while a worker slot is free, until shutdown; a failed claim is retried.
    async fn claim_and_run(self: Arc<Self>) {
        loop {
            let permit = Arc::clone(&self.slots)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            if self.is_stopping() {
                return;
            }
            let claiming = std::time::Instant::now();
            let claimed = self.store.claim(&self.worker_id, self.config.lease).await;
            metrics::histogram!("puzzled_claim_seconds").record(claiming.elapsed().as_secs_f64());
            let claimed = match claimed {
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
        let token = job.lease_token;
        let cancel = CancelFlag::new();
        let requeue = Arc::new(AtomicBool::new(false));
        let reporter = Arc::new(Reporter {
            id: id.clone(),
            events: self.events.clone(),
            latest: Mutex::new(None),
        });
        self.live.insert(
            id.clone(),
            LiveJob {
                cancel: cancel.clone(),
                reporter: Arc::clone(&reporter),
                requeue: Arc::clone(&requeue),
            },
        );
        let _ = self.events.send(JobEvent::Changed { id: id.clone() });

        let search = {
            let reporter = Arc::clone(&reporter);
            let tables = Arc::clone(&self.tables);
            let spec = self.capped(&job.spec);
            let cancel = cancel.clone();
            let trimmer = Arc::clone(&self.trimmer);
            tokio::task::spawn_blocking(move || {
                let progress = run::Progress {
                    sink: &*reporter,
                    interval: PROGRESS_INTERVAL,
                };
                let ran = run::run_job(&spec, &tables, cancel, Some(progress));
                // After the job's tables are freed, and off the path to its report.
                crate::jobs::memory::off_path(move || {
                    trimmer.search_ended();
                });
                ran
            })
        };
        tokio::pin!(search);
        // The first tick is at once: a cancel that came between claim and start counts.
        // Three renewals a lease, so one late heartbeat does not lose it.
        let mut heartbeat =
            tokio::time::interval(PROGRESS_WRITE_INTERVAL.min(self.config.lease / 3));
        let mut lease_lost = false;
        let joined = loop {
            tokio::select! {
                joined = &mut search => break joined,
                _ = heartbeat.tick() => {
                    match self.store.heartbeat(&id, token, self.config.lease, reporter.latest().as_ref()).await {
                        Ok(LeaseState::Held { cancel_requested: true }) => cancel.cancel(),
                        Ok(LeaseState::Held { .. }) => {}
                        // Another worker has the job now: stop, and write nothing.
                        Ok(LeaseState::Lost) => {
                            lease_lost = true;
                            cancel.cancel();
                        }
                        Err(error) => tracing::warn!(%error, job = %id, "renewing the lease failed"),
                    }
                }
            }
        };
        self.live.remove(&id);
        if lease_lost {
            tracing::warn!(job = %id, "the job's lease was taken over; its result is dropped");
            return;
        }
        let written = self.record_end(&job, token, joined, &requeue).await;
        if let Err(error) = written {
            tracing::error!(job = %id, %error, "recording the job's end failed; the reaper will run it again");
        }
        let _ = self.events.send(JobEvent::Changed { id });
    }

    /// Writes how a claimed job ended, retrying while the store is unreachable (a
    /// database restart) for as long as the lease would last.
    async fn record_end(
        &self,
        job: &JobRecord,
        token: i64,
        joined: Result<Result<JobReport, JobError>, tokio::task::JoinError>,
        requeue: &AtomicBool,
    ) -> Result<bool, StoreError> {
        let id = &job.id;
        let end = match joined {
            Ok(Ok(report))
                if report.status == JobStatus::Cancelled && requeue.load(Ordering::Relaxed) =>
            {
                End::Requeue
            }
            Ok(Ok(report)) => {
                log_finish(id, &report);
                let queue_wait = job.started_at.map_or(0, |s| s - job.created_at);
                record_finish(&report, Duration::from_millis(queue_wait.max(0) as u64));
                End::Finish(Box::new(report))
            }
            Ok(Err(error)) => {
                tracing::error!(job = %id, %error, "job could not start");
                End::Fail(error.to_string())
            }
            // A panic in a search ends that job, never the worker.
            Err(join_error) => {
                tracing::error!(job = %id, error = %join_error, "search panicked");
                End::Fail("the search panicked".to_string())
            }
        };
        let deadline = tokio::time::Instant::now() + self.config.lease;
        loop {
            let written = match &end {
                End::Requeue => self.store.requeue(id, token).await,
                End::Finish(report) => self.store.finish(id, token, report).await,
                End::Fail(why) => self.store.fail(id, token, why).await,
            };
            match written {
                Err(error) if tokio::time::Instant::now() < deadline => {
                    tracing::warn!(job = %id, %error, "recording the job's end failed; retrying");
                    tokio::time::sleep(POLL_INTERVAL).await;
                }
                Ok(false) => {
                    tracing::warn!(job = %id, "the job's lease was taken over; its result is dropped");
                    return Ok(false);
                }
                other => return other,
            }
        }
    }
}

/// Prometheus series for a finished search (rendered by the HTTP layer's `/metrics`).
pub(super) fn record_finish(report: &JobReport, queue_wait: Duration) {
    let status = report.status.name();
    metrics::counter!("puzzled_jobs_finished_total", "status" => status).increment(1);
    metrics::counter!("puzzled_nodes_expanded_total").increment(report.stats.nodes_expanded);
    metrics::histogram!("puzzled_job_run_seconds").record(report.stats.elapsed.as_secs_f64());
    metrics::histogram!("puzzled_job_queue_wait_seconds").record(queue_wait.as_secs_f64());
    let seconds = report.stats.elapsed.as_secs_f64();
    if seconds > 0.0 {
        metrics::histogram!("puzzled_job_nodes_per_second")
            .record(report.stats.nodes_expanded as f64 / seconds);
    }
}

/// What a worker writes when its search ends.
enum End {
    Finish(Box<JobReport>),
    Requeue,
    Fail(String),
}

fn log_finish(id: &JobId, report: &JobReport) {
    tracing::info!(
        job = %id,
        status = report.status.name(),
        length = report.plan.as_ref().map(|p| p.length),
        nodes = report.stats.nodes_expanded,
        ms = report.stats.elapsed.as_millis() as u64,
        "job finished"
    );
}
