//! `/v1/jobs`: submit, read (and long-poll), list, cancel and delete jobs.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Extension, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tokio::sync::broadcast;

use super::{Body, MAX_WAIT_SECONDS, PathParam, RECHECK};
use crate::http::access::Caller;
use crate::http::problem::Problem;
use crate::http::wire::{JobList, JobRequest, JobView, RequestError};
use crate::http::{AppState, Caps};
use crate::jobs::JobId;
use crate::jobs::game::{GameSpec, GameTask};
use crate::jobs::service::JobEvent;
use crate::jobs::store::{CancelOutcome, DeleteOutcome, JobRecord, NewJob, Owner};
use crate::jobs::{JobSpec, PuzzleSpec, Status};

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
    if let PuzzleSpec::Twenty48(GameSpec {
        task: GameTask::Playout { per_move, .. },
        ..
    }) = &spec.puzzle
    {
        if let Some(nodes) = per_move.max_nodes {
            within(
                "/playout/nodes_per_move",
                "nodes_per_move",
                nodes,
                caps.max_nodes,
            )?;
        }
        if let Some(time) = per_move.timeout {
            within(
                "/playout/ms_per_move",
                "ms_per_move",
                time.as_millis() as u64,
                caps.max_timeout_ms,
            )?;
        }
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
pub(super) fn new_job(
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
    crate::jobs::resolve::admit(&spec, state.service.tables())?;
    Ok(NewJob {
        spec,
        priority,
        idempotency_key,
        request_hash,
        client: Some(caller.client),
        owner: caller.owner,
    })
}

pub(super) fn accepted(job: &JobRecord) -> Response {
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
pub(super) async fn load(
    state: &AppState,
    owner: &Owner,
    id: &JobId,
) -> Result<JobRecord, Problem> {
    state
        .service
        .get(id, owner)
        .await?
        .ok_or_else(|| Problem::not_found("job with this id"))
}

/// Waits up to `wait` for the job to finish; returns it as it then is.
pub(super) async fn wait_for_end(
    state: &AppState,
    owner: &Owner,
    id: &JobId,
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
                Ok(Ok(JobEvent::Changed { id: changed })) if &changed == id => break,
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
    PathParam(id): PathParam<JobId>,
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

pub async fn list_jobs(
    State(state): State<Arc<AppState>>,
    Extension(caller): Extension<Caller>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<JobList>, Problem> {
    let Query(query) = query?;
    if let Some(status) = &query.status
        && Status::parse(status).is_none()
    {
        return Err(Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-query",
            "Bad query string",
            format!(
                "unknown status '{status}'; expected one of: {}",
                Status::NAMES.join(", ")
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
    PathParam(id): PathParam<JobId>,
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
    PathParam(id): PathParam<JobId>,
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
