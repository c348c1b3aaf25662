//! Route handlers: parse, call the job service, answer. Nothing else.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Json, extract::FromRequest};
use futures_util::Stream;
use serde::Deserialize;
use tokio::sync::broadcast;

use super::access::Caller;
use super::problem::Problem;
use super::wire::{
    self, JobList, JobRequest, JobView, ProgressView, RequestError, ValidateRequest,
};
use super::{AppState, Caps};
use crate::jobs::service::JobEvent;
use crate::jobs::store::{CancelOutcome, DeleteOutcome, JobRecord, NewJob, Owner, Stage};
use crate::jobs::{AlgorithmChoice, HeuristicChoice, JobSpec, PuzzleSpec};
use crate::puzzles::sokoban;

/// JSON body whose rejections become problem+json.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = Problem;
    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Problem> {
        let Json(value) = Json::<T>::from_request(req, state)
            .await
            .map_err(|e: JsonRejection| Problem::from(e))?;
        Ok(Body(value))
    }
}

/// A path parameter whose rejections (an id that is not UTF-8) become problem+json.
pub struct PathParam<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> axum::extract::FromRequestParts<S>
    for PathParam<T>
{
    type Rejection = Problem;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Problem> {
        let Path(value) = Path::<T>::from_request_parts(parts, state).await?;
        Ok(PathParam(value))
    }
}

pub const MAX_WAIT_SECONDS: u64 = 60;
/// Waiters look at the stored job this often even without an event.
const RECHECK: Duration = Duration::from_secs(1);

/// `value`, or a 422 naming `field` when it is over `cap`.
fn within(field: &'static str, name: &'static str, value: u64, cap: u64) -> Result<u64, Problem> {
    if value > cap {
        return Err(RequestError::OverLimit {
            field,
            name,
            value,
            cap,
        }
        .into());
    }
    Ok(value)
}

/// A job request validated into a spec with the service's caps applied: absent limits
/// take the caps, larger ones are refused. Pure (no I/O), so the fuzzer drives it as is.
pub fn capped(caps: &Caps, request: JobRequest) -> Result<(JobSpec, i64), Problem> {
    let priority = request.priority.unwrap_or(0);
    let mut spec = request.into_spec()?;
    // Sokoban levels are held to the parser's own limits (100x100 squares, 500 boxes).
    if let PuzzleSpec::Sliding(puzzle) = &spec.puzzle {
        within(
            "/puzzle/tiles",
            "board size",
            puzzle.geometry().cells() as u64,
            caps.max_board_cells,
        )?;
    }
    let max_nodes = within(
        "/limits/max_nodes",
        "max_nodes",
        spec.limits.max_nodes.unwrap_or(caps.max_nodes),
        caps.max_nodes,
    )?;
    let requested_timeout = spec
        .limits
        .timeout
        .map_or(caps.default_timeout_ms, |t| t.as_millis() as u64);
    let timeout_ms = within(
        "/limits/timeout_ms",
        "timeout_ms",
        requested_timeout,
        caps.max_timeout_ms,
    )?;
    spec.limits.max_nodes = Some(max_nodes);
    spec.limits.timeout = Some(Duration::from_millis(timeout_ms));
    spec.limits.max_memory_bytes = Some(caps.max_memory_bytes);
    Ok((spec, priority))
}

/// A fingerprint of what a request means, to tell an honest retry from a reused key:
/// SHA-256 of the job as the service understood it (defaults filled in, names
/// canonical), so the same request written another way (keys in another order, a
/// default spelled out) is the same job. Stable across builds, unlike `std`'s hasher,
/// since it is stored.
fn fingerprint(spec: &JobSpec, priority: i64) -> String {
    use sha2::{Digest, Sha256};
    let canonical = serde_json::to_vec(&JobRequest::from_spec(spec, priority)).unwrap_or_default();
    Sha256::digest(&canonical)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The job a request asks for, with the caps applied and its idempotency key read.
fn new_job(
    state: &AppState,
    caller: Caller,
    headers: &HeaderMap,
    request: JobRequest,
) -> Result<NewJob, Problem> {
    let idempotency_key = match headers.get("idempotency-key") {
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .filter(|k| !k.is_empty() && k.len() <= 255)
                .ok_or_else(|| {
                    Problem::new(
                        StatusCode::BAD_REQUEST,
                        "bad-idempotency-key",
                        "Bad Idempotency-Key",
                        "use 1 to 255 visible ASCII characters",
                    )
                })?
                .to_string(),
        ),
        None => None,
    };
    let (spec, priority) = capped(&state.caps, request)?;
    let request_hash = idempotency_key
        .as_ref()
        .map(|_| fingerprint(&spec, priority));
    // Refused now, not accepted and failed later: tables it insists on must be ready.
    crate::jobs::run::admit(&spec, state.service.tables())?;
    Ok(NewJob {
        spec,
        priority,
        idempotency_key,
        request_hash,
        client: Some(caller.client),
        owner: caller.owner,
    })
}

fn accepted(job: &JobRecord) -> Response {
    let location = format!("/v1/jobs/{}", job.id);
    let mut response = (StatusCode::ACCEPTED, Json(JobView::from(job))).into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

pub async fn create_job(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    Body(request): Body<JobRequest>,
) -> Result<Response, Problem> {
    let job = new_job(&state, caller, &headers, request)?;
    let (job, _) = state.service.submit(job).await?;
    Ok(accepted(&job))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitQuery {
    wait: Option<u64>,
}

/// The job, if `owner` may see it: another owner's job is not found, exactly like one
/// that does not exist.
async fn load(state: &AppState, owner: &Owner, id: &str) -> Result<JobRecord, Problem> {
    state
        .service
        .get(id, owner)
        .await?
        .ok_or_else(|| Problem::not_found("job with this id"))
}

/// Waits up to `wait` for the job to finish; returns it as it then is.
async fn wait_for_end(
    state: &AppState,
    owner: &Owner,
    id: &str,
    wait: Duration,
) -> Result<JobRecord, Problem> {
    let mut events = state.service.subscribe();
    let mut stopping = state.service.stop_signal();
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        // Subscribed before reading, so an end between the read and the wait is not missed.
        let job = load(state, owner, id).await?;
        if job.stage.is_terminal() {
            return Ok(job);
        }
        loop {
            // Another process's change may come only by polling (a lost notice).
            let recheck = deadline.min(tokio::time::Instant::now() + RECHECK);
            let event = tokio::select! {
                event = tokio::time::timeout_at(recheck, events.recv()) => event,
                // A shutting-down server answers with the job as it is.
                _ = stopping.wait_for(|stop| *stop) => return Ok(job),
            };
            match event {
                Err(_) if recheck < deadline => break,
                Err(_) => return Ok(job),
                Ok(Ok(JobEvent::Changed { id: changed })) if changed == id => break,
                Ok(Ok(_)) => continue,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => break,
                Ok(Err(broadcast::error::RecvError::Closed)) => return Ok(job),
            }
        }
    }
}

pub async fn get_job(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathParam(id): PathParam<String>,
    query: Result<Query<WaitQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<JobView>, Problem> {
    let Query(query) = query?;
    let job = match query.wait {
        Some(seconds) if seconds > 0 => {
            wait_for_end(
                &state,
                &caller.owner,
                &id,
                Duration::from_secs(seconds.min(MAX_WAIT_SECONDS)),
            )
            .await?
        }
        _ => load(&state, &caller.owner, &id).await?,
    };
    Ok(Json(JobView::from(&job)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    status: Option<String>,
    limit: Option<i64>,
    cursor: Option<String>,
}

const STATUSES: [&str; 7] = [
    "queued",
    "running",
    "solved",
    "unsolvable",
    "exhausted",
    "cancelled",
    "failed",
];

pub async fn list_jobs(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<JobList>, Problem> {
    let Query(query) = query?;
    if let Some(status) = &query.status
        && !STATUSES.contains(&status.as_str())
    {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-query",
            "Bad query string",
            format!(
                "unknown status '{status}'; expected one of: {}",
                STATUSES.join(", ")
            ),
        ));
    }
    let limit = query.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-query",
            "Bad query string",
            "limit must be between 1 and 100",
        ));
    }
    let bad_cursor = || {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-query",
            "Bad query string",
            "cursor is not one this service issued",
        )
    };
    let after = match &query.cursor {
        Some(cursor) => {
            let (time, id) = cursor.split_once('_').ok_or_else(bad_cursor)?;
            Some((
                time.parse::<i64>().map_err(|_| bad_cursor())?,
                id.to_string(),
            ))
        }
        None => None,
    };
    let jobs = state
        .service
        .store()
        .list(&caller.owner, query.status.as_deref(), limit + 1, after)
        .await?;
    let more = jobs.len() as i64 > limit;
    let page = &jobs[..jobs.len().min(limit as usize)];
    let next_cursor = if more {
        page.last().map(|j| format!("{}_{}", j.created_at, j.id))
    } else {
        None
    };
    Ok(Json(JobList {
        jobs: page.iter().map(JobView::from).collect(),
        next_cursor,
    }))
}

pub async fn cancel_job(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathParam(id): PathParam<String>,
) -> Result<Response, Problem> {
    let owner = &caller.owner;
    let outcome = state.service.cancel(&id, owner).await?;
    let job = match outcome {
        CancelOutcome::NotFound => return Err(Problem::not_found("job with this id")),
        CancelOutcome::StopRequested => {
            wait_for_end(&state, owner, &id, Duration::from_secs(1)).await?
        }
        _ => load(&state, owner, &id).await?,
    };
    let status = match outcome {
        CancelOutcome::AlreadyFinished => StatusCode::OK,
        _ => StatusCode::ACCEPTED,
    };
    let mut response = (status, Json(JobView::from(&job))).into_response();
    let note = match outcome {
        CancelOutcome::AlreadyFinished => "already-finished",
        CancelOutcome::CancelledQueued => "cancelled",
        _ => "stop-requested",
    };
    response
        .headers_mut()
        .insert("x-cancel-outcome", HeaderValue::from_static(note));
    Ok(response)
}

pub async fn delete_job(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    PathParam(id): PathParam<String>,
) -> Result<StatusCode, Problem> {
    let owner = &caller.owner;
    if let CancelOutcome::StopRequested = state.service.cancel(&id, owner).await? {
        wait_for_end(&state, owner, &id, Duration::from_secs(5)).await?;
    }
    match state.service.store().delete(&id, owner).await? {
        DeleteOutcome::Deleted => Ok(StatusCode::NO_CONTENT),
        DeleteOutcome::NotFound => Err(Problem::not_found("job with this id")),
        DeleteOutcome::NotFinished => Err(Problem::new(
            StatusCode::CONFLICT,
            "still-running",
            "Job still running",
            "the job did not stop in time; try again",
        )),
    }
}

/// One client's view of one job's events.
struct EventFeed {
    state: Arc<AppState>,
    receiver: broadcast::Receiver<JobEvent>,
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Who opened the stream: it was allowed to see the job.
    owner: Owner,
    id: String,
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
    PathParam(id): PathParam<String>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolveQuery {
    wait_ms: Option<u64>,
}

pub async fn solve(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    query: Result<Query<SolveQuery>, axum::extract::rejection::QueryRejection>,
    Body(request): Body<JobRequest>,
) -> Result<Response, Problem> {
    let Query(query) = query?;
    let wait = Duration::from_millis(query.wait_ms.unwrap_or(10_000).min(MAX_WAIT_SECONDS * 1000));
    let owner = caller.owner.clone();
    let job = new_job(&state, caller, &headers, request)?;
    if let Some(finished) = state.service.solve_now(&job).await? {
        return Ok((StatusCode::OK, Json(JobView::from(&finished))).into_response());
    }
    let (job, _) = state.service.submit(job).await?;
    let job = wait_for_end(&state, &owner, &job.id, wait).await?;
    if job.stage.is_terminal() {
        Ok((StatusCode::OK, Json(JobView::from(&job))).into_response())
    } else {
        Ok(accepted(&job))
    }
}

pub async fn validate(
    Body(request): Body<ValidateRequest>,
) -> Result<Json<wire::ValidateResponse>, Problem> {
    Ok(Json(request.check()?))
}

pub async fn capabilities(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    let algorithms: Vec<&str> = AlgorithmChoice::ALL.iter().map(|a| a.name()).collect();
    Json(serde_json::json!({
        "puzzles": {
            "sliding": {
                "algorithms": algorithms,
                "heuristics": HeuristicChoice::NAMES,
                "partitions": {"4x4": ["7-8", "6-6-3"], "5x5": ["6-6-6-6"]},
                "ready_tables": ready_tables(state.service.tables()),
                "tables": tables_status(state.service.tables()),
                "objectives": ["optimal", "any"],
                "defaults": {"algorithm": "auto", "heuristic": "auto", "objective": "optimal", "goal": "blank-last"},
                "board": {"min_side": 2, "max_side": 8, "max_cells": state.caps.max_board_cells},
            },
            "sokoban": {
                "algorithms": algorithms,
                "heuristics": HeuristicChoice::SOKOBAN_NAMES,
                "objectives": ["any", "optimal"],
                "defaults": {"algorithm": "auto", "heuristic": "auto", "objective": "any"},
                "level": {"format": "XSB or run-length XSB", "max_rows": sokoban::MAX_ROWS, "max_cols": sokoban::MAX_COLS, "max_boxes": sokoban::MAX_BOXES},
                "plan": "LURD: lower case moves, upper case pushes",
            }
        },
        "limits": {
            "max_nodes": state.caps.max_nodes,
            "default_timeout_ms": state.caps.default_timeout_ms,
            "max_timeout_ms": state.caps.max_timeout_ms,
            "max_body_bytes": state.caps.max_body_bytes,
            "max_queued_jobs": state.service.config().max_queued,
            "max_queued_jobs_per_client": state.service.config().max_queued_per_client,
            "max_wait_seconds": MAX_WAIT_SECONDS,
        },
    }))
}

/// Which table layouts are built, building, queued and refused; what is held, and the
/// caps.
fn tables_status(tables: &crate::jobs::TableStore) -> serde_json::Value {
    let status = tables.status();
    let refused: Vec<serde_json::Value> = status
        .refused
        .iter()
        .map(|(layout, reason)| serde_json::json!({"layout": layout, "reason": reason}))
        .collect();
    let mut view = serde_json::json!({
        "built": status.built,
        "building": status.building,
        "queued": status.queued,
        "refused": refused,
        "held": {
            "memory_tables": status.memory_tables,
            "memory_bytes": status.memory_bytes,
            "disk_tables": status.disk_tables,
            "disk_bytes": status.disk_bytes,
        },
    });
    if let Some(limits) = status.limits {
        view["limits"] = serde_json::json!({
            "max_tables": limits.max_tables,
            "max_memory_bytes": limits.max_memory_bytes,
            "max_disk_bytes": limits.max_disk_bytes,
            "build_memory_bytes": limits.build_memory_bytes,
            "build_tables": limits.allowed.iter().map(|rule| rule.to_string()).collect::<Vec<_>>(),
        });
    }
    view
}

/// The standard partitions whose tables are built, for blank-last boards.
fn ready_tables(tables: &crate::jobs::TableStore) -> serde_json::Value {
    let ready = |names: &[&'static str], side: usize| -> Vec<&'static str> {
        names
            .iter()
            .copied()
            .filter(|name| partition_ready(tables, name, side, side * side - 1))
            .collect()
    };
    serde_json::json!({
        "4x4 blank-last": ready(&["7-8", "6-6-3"], 4),
        "5x5 blank-last": ready(&["6-6-6-6"], 5),
    })
}

fn partition_ready(
    tables: &crate::jobs::TableStore,
    name: &str,
    side: usize,
    blank_goal: usize,
) -> bool {
    use crate::puzzles::sliding::Geometry;
    use crate::puzzles::sliding::pdb::{Partition, PartitionKind};
    let geometry = Geometry {
        rows: side,
        cols: side,
    };
    PartitionKind::parse(name)
        .and_then(|kind| Partition::standard(kind, geometry, blank_goal).ok())
        .is_some_and(|p| {
            p.patterns
                .iter()
                .all(|cells| tables.has_pattern_db(geometry, cells))
        })
}

pub async fn healthz() -> &'static str {
    "ok"
}

/// How long readiness waits for the job database.
const READINESS_TIMEOUT: Duration = Duration::from_secs(1);

/// Ready when the database answers and the workers run; the body also says which
/// heuristic tables are built, since `auto` uses only those.
pub async fn readyz(
    State(state): State<Arc<AppState>>,
) -> Result<Json<serde_json::Value>, Problem> {
    let unavailable = |detail: &str| {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not-ready",
            "Not ready",
            detail.to_string(),
        )
    };
    if state.service.is_stopping() {
        return Err(unavailable("the service is shutting down"));
    }
    if state.service.config().runs_searches && !state.service.workers_running() {
        return Err(unavailable("the workers are not running yet"));
    }
    // A probe that hangs is as bad as one that fails, and probes give up after a second.
    let pinged = tokio::time::timeout(READINESS_TIMEOUT, state.service.store().ping()).await;
    if !matches!(pinged, Ok(Ok(()))) {
        return Err(unavailable("the job database does not answer"));
    }
    Ok(Json(serde_json::json!({
        "status": "ready",
        "database": "ok",
        "workers": state.service.config().workers,
        "ready_tables": ready_tables(state.service.tables()),
        "tables": tables_status(state.service.tables()),
    })))
}

/// Prometheus exposition: counters and histograms kept by the job layer, plus gauges
/// read from the store at scrape time.
pub async fn metrics(State(state): State<Arc<AppState>>) -> Result<Response, Problem> {
    let counts = state.service.store().count_by_status().await?;
    for status in STATUSES {
        let n = counts
            .iter()
            .find(|(s, _)| s == status)
            .map_or(0, |(_, n)| *n);
        metrics::gauge!("puzzled_jobs", "status" => status).set(n as f64);
    }
    let queued = counts
        .iter()
        .find(|(s, _)| s == "queued")
        .map_or(0, |(_, n)| *n);
    metrics::gauge!("puzzled_queue_depth").set(queued as f64);
    metrics::gauge!("puzzled_jobs_running").set(state.service.running_jobs() as f64);
    metrics::gauge!("puzzled_workers").set(state.service.config().workers as f64);
    state.service.tables().publish_counts();
    if let Some(limiter) = &state.access.limiter {
        metrics::gauge!("puzzled_rate_limited_callers").set(limiter.callers() as f64);
    }
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response())
}

pub async fn openapi() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/yaml")], super::OPENAPI)
}

pub async fn not_found() -> Problem {
    Problem::not_found("route here; see /openapi.yaml")
}
