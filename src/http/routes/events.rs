//! `/v1/jobs/{id}/events`: a job's progress and stage changes as server-sent events.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use tokio::sync::broadcast;

use super::jobs::load;
use super::{PathParam, RECHECK};
use crate::http::AppState;
use crate::http::access::Caller;
use crate::http::problem::Problem;
use crate::http::wire::{JobView, ProgressView};
use crate::jobs::JobId;
use crate::jobs::service::JobEvent;
use crate::jobs::store::{JobRecord, Owner, Stage};

/// One client's view of one job's events.
struct EventFeed {
    state: Arc<AppState>,
    receiver: broadcast::Receiver<JobEvent>,
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Who opened the stream: it was allowed to see the job.
    owner: Owner,
    id: JobId,
    /// The job as it was when the stream opened: the first event.
    first: Option<JobRecord>,
    done: bool,
    /// The stage last sent.
    stage: Stage,
    last_progress: Option<tokio::time::Instant>,
}

impl EventFeed {
    async fn next(&mut self) -> Option<Event> {
        if self.done {
            return None;
        }
        if let Some(job) = self.first.take() {
            return Some(self.job_event(&job));
        }
        loop {
            let received = tokio::select! {
                received = self.receiver.recv() => Some(received),
                // The stream ends at shutdown; clients reconnect or poll.
                _ = self.stopping.wait_for(|stop| *stop) => return None,
                // A lost notice from another process only delays the stream.
                _ = tokio::time::sleep(RECHECK) => None,
            };
            let Some(received) = received else {
                let job = self.stored().await?;
                if job.stage == self.stage {
                    continue;
                }
                return Some(self.job_event(&job));
            };
            match received {
                Ok(JobEvent::Progress { id, progress }) if id == self.id => {
                    // At most four progress events a second.
                    let now = tokio::time::Instant::now();
                    if self
                        .last_progress
                        .is_some_and(|t| now - t < Duration::from_millis(250))
                    {
                        continue;
                    }
                    self.last_progress = Some(now);
                    let data =
                        serde_json::to_string(&ProgressView::from(&progress)).unwrap_or_default();
                    return Some(Event::default().event("progress").data(data));
                }
                // A change, or missed events: either way the stored job says where it is.
                Ok(JobEvent::Changed { id }) if id == self.id => {}
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Ok(_) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
            let job = self.stored().await?;
            return Some(self.job_event(&job));
        }
    }

    /// The job as stored now; `None` once it is gone or the store cannot say, which
    /// ends the stream (the client reconnects or polls).
    async fn stored(&self) -> Option<JobRecord> {
        self.state
            .service
            .get(&self.id, &self.owner)
            .await
            .ok()
            .flatten()
    }

    /// `status` on a transition, `finished` (with the whole job) at the end.
    fn job_event(&mut self, job: &JobRecord) -> Event {
        self.done = job.stage.is_terminal();
        self.stage = job.stage.clone();
        let data = serde_json::to_string(&JobView::from(job)).unwrap_or_default();
        Event::default()
            .event(if self.done { "finished" } else { "status" })
            .data(data)
    }
}

pub async fn events(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathParam(id): PathParam<JobId>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Problem> {
    let receiver = state.service.subscribe();
    let first = Some(load(&state, &caller.owner, &id).await?);
    let feed = EventFeed {
        stopping: state.service.stop_signal(),
        state,
        receiver,
        owner: caller.owner,
        id,
        first,
        done: false,
        stage: Stage::Queued,
        last_progress: None,
    };
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
