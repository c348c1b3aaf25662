//! Route handlers, one file per resource: parse, call the job service, answer.
//! Nothing else. Here: the extractors whose rejections become problem+json.

mod events;
mod jobs;
mod operations;
mod solve;

pub use events::events;
pub use jobs::{cancel_job, capped, create_job, delete_job, get_job, list_jobs};
pub use operations::{
    capabilities, healthz, method_not_allowed, metrics, not_found, openapi, readyz,
};
pub use solve::{rate, solve, validate};

use std::time::Duration;

use axum::extract::Path;
use axum::extract::rejection::JsonRejection;
use axum::{Json, extract::FromRequest};

use super::problem::Problem;

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

impl<S: Send + Sync, T: From<String>> axum::extract::FromRequestParts<S> for PathParam<T> {
    type Rejection = Problem;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Problem> {
        let Path(value) = Path::<String>::from_request_parts(parts, state).await?;
        Ok(PathParam(T::from(value)))
    }
}

pub const MAX_WAIT_SECONDS: u64 = 60;
/// Waiters look at the stored job this often even without an event.
pub(super) const RECHECK: Duration = Duration::from_secs(1);
