//! RFC 9457 problem details: every error the service answers, mapped once, here.

use axum::Json;
use axum::extract::rejection::{JsonDataError, JsonRejection, PathRejection, QueryRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::access::AccessError;
use super::listener::BodyTimedOut;
use super::wire::RequestError;
use crate::games::twenty48::BoardError as GameBoardError;
use crate::jobs::JobError;
use crate::jobs::service::SubmitError;
use crate::jobs::store::StoreError;
use crate::jobs::tables::LayoutState;

#[derive(Debug, Serialize)]
pub struct Problem {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    /// JSON pointer to the offending request field, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<Box<str>>,
    #[serde(skip)]
    retry_after: Option<u64>,
    /// A `WWW-Authenticate` challenge, for 401.
    #[serde(skip)]
    challenge: Option<&'static str>,
}

impl Problem {
    pub fn new(
        status: StatusCode,
        slug: &str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Problem {
        Problem {
            kind: format!("https://puzzled.dev/problems/{slug}"),
            title,
            status: status.as_u16(),
            detail: detail.into(),
            pointer: None,
            retry_after: None,
            challenge: None,
        }
    }
    pub fn at(mut self, pointer: impl Into<Box<str>>) -> Problem {
        self.pointer = Some(pointer.into());
        self
    }
    pub fn not_found(what: &str) -> Problem {
        Problem::new(
            StatusCode::NOT_FOUND,
            "not-found",
            "Not found",
            format!("no {what}"),
        )
    }
    /// 413: the request body is (or says it is) over `--max-body-bytes`.
    pub fn too_large(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            "Request body too large",
            detail,
        )
    }
    pub fn retry_after(mut self, seconds: u64) -> Problem {
        self.retry_after = Some(seconds);
        self
    }
    pub fn challenge(mut self, challenge: &'static str) -> Problem {
        self.challenge = Some(challenge);
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let (retry_after, challenge) = (self.retry_after, self.challenge);
        let mut response = (status, Json(self)).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(seconds) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(challenge) = challenge {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
        }
        response
    }
}

impl From<JsonRejection> for Problem {
    fn from(rejection: JsonRejection) -> Problem {
        if let Some(timed_out) = cause::<BodyTimedOut>(&rejection) {
            return Problem::from(timed_out);
        }
        match rejection {
            JsonRejection::MissingJsonContentType(_) => Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                "Unsupported media type",
                "send the request body as JSON with Content-Type: application/json",
            ),
            JsonRejection::JsonSyntaxError(e) => Problem::new(
                StatusCode::BAD_REQUEST,
                "malformed-json",
                "Malformed JSON",
                e.body_text(),
            ),
            JsonRejection::JsonDataError(e) => data_error(&e),
            other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Problem::too_large(other.body_text())
            }
            other => Problem::new(
                StatusCode::BAD_REQUEST,
                "bad-request",
                "Bad request",
                other.body_text(),
            ),
        }
    }
}

/// A body that is JSON but not a request: a wrong type, an unknown or duplicate field,
/// a number out of range. The problem points at the field and says what is wrong there.
fn data_error(error: &JsonDataError) -> Problem {
    use std::error::Error;
    type PathError = serde_path_to_error::Error<serde_json::Error>;
    let Some(found) = error.source().and_then(cause::<PathError>) else {
        return Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-request",
            "Invalid request",
            error.body_text(),
        );
    };
    let mut pointer: String = found
        .path()
        .iter()
        .filter_map(|segment| match segment {
            serde_path_to_error::Segment::Seq { index } => Some(format!("/{index}")),
            serde_path_to_error::Segment::Map { key } => {
                Some(format!("/{}", key.replace('~', "~0").replace('/', "~1")))
            }
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {
                None
            }
        })
        .collect();
    // serde_json ends its messages with the position; the pointer says where.
    let message = found.inner().to_string();
    // A duplicate is reported at the object holding it: point at the field itself.
    if let Some(field) = message
        .strip_prefix("duplicate field `")
        .and_then(|rest| rest.split('`').next())
    {
        pointer.push('/');
        pointer.push_str(field);
    }
    let message = message
        .split(" at line ")
        .next()
        .unwrap_or(&message)
        .to_string();
    let detail = if pointer.is_empty() {
        message
    } else {
        format!("{pointer}: {message}")
    };
    Problem::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid-request",
        "Invalid request",
        detail,
    )
    .at(pointer)
}

impl From<PathRejection> for Problem {
    fn from(rejection: PathRejection) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-path",
            "Bad path",
            format!("the path cannot be read: {}", rejection.body_text()),
        )
    }
}

/// The first error of type `E` in `error`'s chain of sources, `error` itself included.
fn cause<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(found) = error.downcast_ref::<E>() {
            return Some(found);
        }
        next = error.source();
    }
    None
}

impl From<&BodyTimedOut> for Problem {
    fn from(error: &BodyTimedOut) -> Problem {
        Problem::new(
            StatusCode::REQUEST_TIMEOUT,
            "body-timeout",
            "Request body too slow",
            error.to_string(),
        )
    }
}

impl From<QueryRejection> for Problem {
    fn from(rejection: QueryRejection) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-query",
            "Bad query string",
            rejection.body_text(),
        )
    }
}

impl From<RequestError> for Problem {
    fn from(error: RequestError) -> Problem {
        let pointer = match &error {
            RequestError::Board(e) if e.to_string().starts_with("goal") => "/puzzle/goal".into(),
            RequestError::Board(_) => "/puzzle/tiles".into(),
            RequestError::Level(_) => "/puzzle/level".into(),
            RequestError::Game(e) => match e {
                GameBoardError::Size { .. } => "/puzzle/rows".into(),
                GameBoardError::CellCount { .. } => "/puzzle/cells".into(),
                GameBoardError::Tile { index, .. } => format!("/puzzle/cells/{index}"),
            },
            RequestError::ReachTile(_) => "/objective/reach".into(),
            RequestError::NoMoveBudget => "/playout".into(),
            RequestError::PlayoutSeed(_) => "/playout/seed".into(),
            RequestError::NotForGame { field } | RequestError::OnlyForGame { field } => {
                format!("/{field}")
            }
            RequestError::Record(e) => format!("/game/{}", e.field()),
            RequestError::ValidateWhat => String::new(),
            RequestError::UnknownName { field, .. } => match *field {
                "algorithm" => "/algorithm",
                "heuristic" => "/heuristic",
                "partition" => "/partition",
                "goal" => "/puzzle/goal",
                "puzzle type" => "/puzzle/type",
                "generate type" => "/generate/type",
                "method" => "/generate/method",
                "difficulty" => "/generate/difficulty",
                _ => "/objective",
            }
            .into(),
            RequestError::Missing { field, .. } | RequestError::NotFor { field, .. } => {
                format!("/puzzle/{field}")
            }
            RequestError::BadWeight(_) => "/weight".into(),
            RequestError::PartitionWithoutPdb => "/partition".into(),
            RequestError::OverLimit { field, .. } => field.to_string(),
            RequestError::Generate(e) => format!("/generate/{}", e.field()),
            RequestError::NotForGenerate { field } => format!("/{field}"),
            RequestError::NoTask => String::new(),
            RequestError::BothTasks => "/generate".into(),
            RequestError::RateLevel(_) | RequestError::NotRated(_) => "/level".into(),
        };
        Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-request",
            "Invalid request",
            error.to_string(),
        )
        .at(pointer)
    }
}

impl From<StoreError> for Problem {
    fn from(error: StoreError) -> Problem {
        match error {
            StoreError::IdempotencyConflict => Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency-conflict",
                "Idempotency key reused",
                "this Idempotency-Key was used with a different request body",
            ),
            other => {
                // Details stay in the log; the client learns the store is unavailable.
                tracing::error!(error = %other, "store error");
                Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "Service unavailable",
                    "the job store is unavailable",
                )
                .retry_after(5)
            }
        }
    }
}

impl From<SubmitError> for Problem {
    fn from(error: SubmitError) -> Problem {
        match error {
            SubmitError::QueueFull(_) => Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "queue-full",
                "Queue full",
                error.to_string(),
            )
            .retry_after(5),
            SubmitError::ClientQueueFull { .. } | SubmitError::QueueReserved { .. } => {
                Problem::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too-many-queued",
                    "Too many queued jobs",
                    error.to_string(),
                )
                .retry_after(5)
            }
            SubmitError::ShuttingDown => Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "shutting-down",
                "Shutting down",
                error.to_string(),
            )
            .retry_after(5),
            SubmitError::Store(e) => e.into(),
        }
    }
}

impl From<JobError> for Problem {
    fn from(error: JobError) -> Problem {
        if let JobError::WrongAlgorithm { .. } = error {
            return Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid-request",
                "Invalid request",
                error.to_string(),
            )
            .at("/algorithm");
        }
        let (pointer, retry_after) = match &error {
            JobError::PartitionUnavailable { .. } => ("/partition", None),
            // A build under way: a retry in a few seconds finds the tables.
            JobError::TableNotReady {
                field,
                state: LayoutState::Queued | LayoutState::Building,
                ..
            } => (*field, Some(5)),
            JobError::TableNotReady { field, .. } => (*field, None),
            _ => ("/heuristic", None),
        };
        let problem = Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unavailable-heuristic",
            "Heuristic unavailable",
            error.to_string(),
        )
        .at(pointer);
        match retry_after {
            Some(seconds) => problem.retry_after(seconds),
            None => problem,
        }
    }
}

impl From<AccessError> for Problem {
    fn from(error: AccessError) -> Problem {
        // RFC 6750: no error code when no key came, `invalid_token` for a wrong one.
        match error {
            AccessError::MissingKey => Problem::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "API key needed",
                error.to_string(),
            )
            .challenge("Bearer realm=\"puzzled\""),
            AccessError::UnknownKey => Problem::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "API key needed",
                error.to_string(),
            )
            .challenge("Bearer realm=\"puzzled\", error=\"invalid_token\""),
            AccessError::RateLimited { retry_after } => Problem::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                "Too many requests",
                error.to_string(),
            )
            .retry_after(retry_after),
        }
    }
}
