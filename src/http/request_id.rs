//! Request ids: every request runs in a span named by its id (the client's `X-Request-Id`
//! when it sent a sane one, else a fresh one), the id goes back in `X-Request-Id` and in
//! every problem+json body, so a slow or failed request can be followed in the logs.

use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Problems are small; a body past this is passed on untouched.
const MAX_PROBLEM_BYTES: usize = 64 * 1024;

/// Answers slower than this are logged at info level, not debug.
const SLOW_MS: u128 = 1_000;

/// The client's id when it is 1 to 64 visible ASCII characters, else a new UUID.
fn request_id(request: &Request) -> HeaderValue {
    request
        .headers()
        .get(&REQUEST_ID)
        .filter(|v| {
            let bytes = v.as_bytes();
            !bytes.is_empty() && bytes.len() <= 64 && bytes.iter().all(|b| b.is_ascii_graphic())
        })
        .cloned()
        .unwrap_or_else(|| {
            HeaderValue::from_str(&uuid::Uuid::new_v4().to_string())
                .unwrap_or(HeaderValue::from_static("-"))
        })
}

/// Outermost layer: the span, the header, the id in problems, one log line per answer.
pub async fn trace(request: Request, next: Next) -> Response {
    let id = request_id(&request);
    let id_text = id.to_str().unwrap_or("-").to_string();
    let span = tracing::info_span!(
        "request",
        id = %id_text,
        method = %request.method(),
        route = tracing::field::Empty,
    );
    let started = Instant::now();
    let response = next.run(request).instrument(span.clone()).await;
    let mut response = with_id_in_problem(response, &id_text).await;
    response.headers_mut().insert(REQUEST_ID, id);
    let ms = started.elapsed().as_millis();
    let status = response.status().as_u16();
    span.in_scope(|| {
        if status >= 500 || ms >= SLOW_MS {
            tracing::info!(status, ms, "answered");
        } else {
            tracing::debug!(status, ms, "answered");
        }
    });
    response
}

/// Inside the router: names the matched route in the request's span.
pub async fn record_route(request: Request, next: Next) -> Response {
    if let Some(path) = request.extensions().get::<MatchedPath>() {
        tracing::Span::current().record("route", path.as_str());
    }
    next.run(request).await
}

/// A problem+json body with `request_id` added.
async fn with_id_in_problem(response: Response, id: &str) -> Response {
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/problem+json"));
    if !is_problem {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PROBLEM_BYTES).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let body = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(mut problem)) => {
            problem.insert("request_id".into(), id.into());
            let text = serde_json::to_vec(&problem).unwrap_or_else(|_| bytes.to_vec());
            parts.headers.remove(header::CONTENT_LENGTH);
            Body::from(text)
        }
        _ => Body::from(bytes),
    };
    Response::from_parts(parts, body)
}
