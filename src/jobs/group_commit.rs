//! Group commit for jobs finished on the request path: writers hand their job to one
//! task, which inserts everything waiting in a single statement and then acknowledges
//! each. Under load one commit serves a whole batch; alone, a job waits for no one.

use tokio::sync::{mpsc, oneshot};

use super::store::{JobRecord, Store, StoreError};

/// Jobs per statement: 33 parameters each stays well inside SQLite's 32,766.
const MAX_BATCH: usize = 256;

struct Pending {
    job: JobRecord,
    written: oneshot::Sender<Result<(), StoreError>>,
}

#[derive(Clone)]
pub struct GroupCommit {
    queue: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts the writing task on the current runtime.
    pub fn spawn(store: Store) -> GroupCommit {
        let (queue, incoming) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(write_batches(store, incoming));
        GroupCommit { queue }
    }

    /// Returns once `job` is committed.
    pub async fn write(&self, job: JobRecord) -> Result<(), StoreError> {
        let (written, ack) = oneshot::channel();
        self.queue
            .send(Pending { job, written })
            .await
            .map_err(|_| StoreError::BatchWrite("the writer has stopped".into()))?;
        ack.await
            .map_err(|_| StoreError::BatchWrite("the writer has stopped".into()))?
    }
}

async fn write_batches(store: Store, mut incoming: mpsc::Receiver<Pending>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    while incoming.recv_many(&mut batch, MAX_BATCH).await > 0 {
        jobs.extend(batch.iter().map(|pending: &Pending| pending.job.clone()));
        metrics::histogram!("puzzled_group_commit_jobs").record(jobs.len() as f64);
        let started = std::time::Instant::now();
        let result = store.insert_finished(&jobs).await;
        metrics::histogram!("puzzled_group_commit_seconds").record(started.elapsed().as_secs_f64());
        jobs.clear();
        if let Err(error) = &result {
            tracing::error!(%error, jobs = batch.len(), "writing finished jobs failed");
        }
        for pending in batch.drain(..) {
            let outcome = match &result {
                Ok(()) => Ok(()),
                Err(error) => Err(StoreError::BatchWrite(error.to_string())),
            };
            // A requester that went away needs no answer.
            let _ = pending.written.send(outcome);
        }
    }
}
