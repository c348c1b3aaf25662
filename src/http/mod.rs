//! The edge: axum routes over the job service, problem+json errors, SSE, the wire
//! types (also printed by the CLI's `--json`), the web page and widget (`web`), who
//! may call how often (`access`, `rate_limit`), and the listener that accepts and times
//! connections (`listener`).

pub mod access;
pub mod guard;
pub mod listener;
pub mod problem;
pub mod rate_limit;
pub mod request_id;
pub mod routes;
pub mod web;
pub mod wire;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
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
    /// Origins allowed to call from a browser (`*`: any); empty means same origin only.
    pub cors_origins: Vec<HeaderValue>,
}

pub struct AppState {
    pub service: Arc<JobService>,
    pub caps: Caps,
    /// Renders what the `metrics` facade recorded, for `GET /metrics`.
    pub metrics: PrometheusHandle,
    pub access: access::Access,
}

/// Where health, readiness and metrics are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operations {
    /// Beside the API, on its listener.
    Here,
    /// On a listener of their own (`--ops-bind`), not beside the API.
    Elsewhere,
}

pub fn router(state: Arc<AppState>, operations: Operations) -> Router {
    let cors = cors(&state.caps.cors_origins);
    let max_body = state.caps.max_body_bytes;
    // Every /v1 route, and only those, goes through the guard (API keys, request rate,
    // no-store); the page, the widget, the contract and operations stay open.
    let app = Router::new()
        .route("/v1/jobs", post(routes::create_job).get(routes::list_jobs))
        .route(
            "/v1/jobs/{id}",
            get(routes::get_job).delete(routes::delete_job),
        )
        .route("/v1/jobs/{id}/cancel", post(routes::cancel_job))
        .route("/v1/jobs/{id}/events", get(routes::events))
        .route("/v1/solve", post(routes::solve))
        .route("/v1/validate", post(routes::validate))
        .route("/v1/rate", post(routes::rate))
        .route("/v1/capabilities", get(routes::capabilities))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            guard::guard,
        ))
        .route("/openapi.yaml", get(routes::openapi))
        .route("/", get(web::page))
        .route("/embed.js", get(web::embed))
        .route("/assets/{file}", get(web::asset));
    let app = match operations {
        Operations::Here => app.merge(self::operations()),
        Operations::Elsewhere => app,
    };
    app.route_layer(middleware::from_fn(request_id::record_route))
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(
            max_body,
            declared_length_within,
        ))
        .layer(middleware::map_response(no_sniff))
        .layer(cors)
        .layer(middleware::from_fn(request_id::trace))
        .with_state(state)
}

/// A body whose `Content-Length` is over the cap is refused before any of it is read: a
/// client that announces a gigabyte, and may never send it, is answered 413 at once
/// (`DefaultBodyLimit` alone would wait for the body until the cap's worth came in).
async fn declared_length_within(
    State(max_body): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.parse::<u64>().ok());
    match declared {
        Some(length) if length > max_body as u64 => problem::Problem::too_large(format!(
            "the request body's Content-Length of {length} bytes is over this service's cap of {max_body} bytes"
        ))
        .into_response(),
        _ => next.run(request).await,
    }
}

/// Every answer is what its `Content-Type` says: browsers must not guess (a problem or
/// a job read as a script or a page).
async fn no_sniff(mut response: Response) -> Response {
    response
        .headers_mut()
        .entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}

/// Health, readiness and metrics: all a worker-only process serves.
fn operations() -> Router<Arc<AppState>> {
    Router::new()
        .route("/healthz", get(routes::healthz))
        .route("/readyz", get(routes::readyz))
        .route("/metrics", get(routes::metrics))
}

/// The router of a worker-only process, or of `--ops-bind`'s listener.
pub fn operations_router(state: Arc<AppState>) -> Router {
    operations()
        .route_layer(middleware::from_fn(request_id::record_route))
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(middleware::map_response(no_sniff))
        .layer(middleware::from_fn(request_id::trace))
        .with_state(state)
}

/// A `--cors-origin` value: `*`, or an origin as browsers send it (`scheme://host[:port]`,
/// no path, not even a trailing slash, or it would never match).
pub fn parse_origin(origin: &str) -> Option<HeaderValue> {
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    let well_formed =
        origin == "*" || rest.is_some_and(|host| !host.is_empty() && !host.contains('/'));
    well_formed
        .then(|| HeaderValue::from_str(origin).ok())
        .flatten()
}

/// Browsers may call from `origins` (none: same origin only). The API takes no cookies
/// or credentials, so even `*` exposes nothing a plain HTTP client could not read.
/// Preflights are cached for ten minutes; `embed.js` submits with an `Idempotency-Key`.
fn cors(origins: &[HeaderValue]) -> CorsLayer {
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().cloned())
    };
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::POST, Method::DELETE])
        .allow_headers([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            HeaderName::from_static("idempotency-key"),
            HeaderName::from_static("last-event-id"),
        ])
        .expose_headers([
            header::LOCATION,
            header::RETRY_AFTER,
            HeaderName::from_static("x-cancel-outcome"),
            request_id::REQUEST_ID,
        ])
        .max_age(std::time::Duration::from_secs(600))
}

/// Installs the process-wide Prometheus recorder: durations (`*_seconds`) and search
/// speed as histograms with fixed buckets.
pub fn install_metrics() -> Result<PrometheusHandle, BuildError> {
    const SECONDS: &[f64] = &[
        0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0,
    ];
    const NODES_PER_SECOND: &[f64] = &[1e4, 1e5, 5e5, 1e6, 2e6, 4e6, 8e6, 1.6e7];
    const BATCH: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)?
        .set_buckets_for_metric(
            Matcher::Full("puzzled_job_nodes_per_second".into()),
            NODES_PER_SECOND,
        )?
        .set_buckets_for_metric(Matcher::Full("puzzled_group_commit_jobs".into()), BATCH)?
        .install_recorder()
}
