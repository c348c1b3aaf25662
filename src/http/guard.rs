//! The guard in front of every `/v1` route: who the caller is ([`access`]), refused
//! here with 401 or 429 when it may not go on.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::access::{self, AccessError};
use super::problem::Problem;

/// In front of every `/v1` route: the request goes on with its [`Caller`] in its
/// extensions, or is answered 401 or 429 here. Job data is the caller's own, so no
/// answer may be kept by a shared cache.
pub async fn guard(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut request: Request,
    next: Next,
) -> Response {
    let mut response =
        match access::admit(&state.access, peer.ip(), request.headers(), Instant::now()) {
            Ok(caller) => {
                request.extensions_mut().insert(caller);
                next.run(request).await
            }
            Err(refusal) => {
                let kind = match refusal {
                    AccessError::MissingKey | AccessError::UnknownKey => "unauthorized",
                    AccessError::RateLimited { .. } => "rate_limited",
                };
                metrics::counter!("puzzled_requests_refused_total", "reason" => kind).increment(1);
                Problem::from(refusal).into_response()
            }
        };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
