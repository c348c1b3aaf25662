//! The edge: axum routes over the job service, problem+json errors, SSE, and the
//! wire types (also printed by the CLI's `--json`).

pub mod problem;
pub mod routes;
pub mod wire;

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::routing::{get, post};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::jobs::service::JobService;

/// The HTTP contract, served at `GET /openapi.yaml`.
pub const OPENAPI: &str = include_str!("../../openapi.yaml");

/// Caps the service puts on every request.
#[derive(Clone, Debug)]
pub struct Caps {
    pub max_nodes: u64,
    pub default_timeout_ms: u64,
    pub max_timeout_ms: u64,
    pub max_body_bytes: usize,
    pub max_board_cells: u64,
    pub max_memory_bytes: u64,
    /// Origins allowed to call from a browser; empty means same origin only.
    pub cors_origins: Vec<String>,
}

pub struct AppState {
    pub service: Arc<JobService>,
    pub caps: Caps,
}

pub fn router(state: Arc<AppState>) -> Router {
    let cors = cors(&state.caps.cors_origins);
    let max_body = state.caps.max_body_bytes;
    Router::new()
        .route("/v1/jobs", post(routes::create_job).get(routes::list_jobs))
        .route(
            "/v1/jobs/{id}",
            get(routes::get_job).delete(routes::delete_job),
        )
        .route("/v1/jobs/{id}/cancel", post(routes::cancel_job))
        .route("/v1/jobs/{id}/events", get(routes::events))
        .route("/v1/solve", post(routes::solve))
        .route("/v1/validate", post(routes::validate))
        .route("/v1/capabilities", get(routes::capabilities))
        .route("/healthz", get(routes::healthz))
        .route("/readyz", get(routes::readyz))
        .route("/openapi.yaml", get(routes::openapi))
        .fallback(routes::not_found)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(cors)
        .with_state(state)
}

fn cors(origins: &[String]) -> CorsLayer {
    let allowed: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|o| HeaderValue::from_str(o).ok())
        .collect();
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(allowed))
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([header::LOCATION, header::RETRY_AFTER])
}
