//! `/v1/solve` (a job answered in the request), `/v1/validate` (a plan replayed) and
//! `/v1/rate` (a level's difficulty).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Extension, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::jobs::{accepted, new_job, wait_for_end};
use super::{Body, MAX_WAIT_SECONDS};
use crate::http::AppState;
use crate::http::access::Caller;
use crate::http::problem::Problem;
use crate::http::wire::{
    self, JobRequest, JobView, RateRequest, RatingView, RequestError, ValidateRequest,
};
use crate::puzzles::sokoban::Level;

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
) -> Result<Json<wire::ValidateAnswer>, Problem> {
    Ok(Json(request.check()?))
}

pub async fn rate(
    State(state): State<Arc<AppState>>,
    Body(request): Body<RateRequest>,
) -> Result<Json<RatingView>, Problem> {
    let level = Level::parse(&request.level).map_err(RequestError::RateLevel)?;
    let time = Duration::from_millis(state.caps.max_timeout_ms);
    let rated = state.service.rate(level, request.plan, time).await?;
    let rated = rated.map_err(RequestError::NotRated)?;
    Ok(Json(RatingView::from(&rated)))
}
