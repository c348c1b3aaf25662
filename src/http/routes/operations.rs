//! What the service offers and how it is: capabilities, health, readiness, metrics,
//! the contract, and the answer for unknown routes.

use crate::games::twenty48::{self, Dir};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::MAX_WAIT_SECONDS;
use crate::http::AppState;
use crate::http::problem::Problem;
use crate::http::wire;
use crate::jobs::{AlgorithmChoice, Heuristic, Objective, PuzzleKind, Status};
use crate::puzzles::sliding::GoalName;
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sokoban;
use crate::puzzles::sokoban::generate::{self, Method, rating::Label};

pub async fn capabilities(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    let partitions = |side: usize| -> Vec<&str> {
        PartitionKind::ALL
            .iter()
            .filter(|k| k.side() == side)
            .map(|k| k.name())
            .collect()
    };
    let defaults = |objective: Objective| {
        serde_json::json!({
            "algorithm": AlgorithmChoice::Auto.name(),
            "heuristic": Heuristic::Auto.name(),
            "objective": objective.name(),
        })
    };
    let mut sliding_defaults = defaults(Objective::Optimal);
    sliding_defaults["goal"] = GoalName::BlankLast.name().into();
    Json(serde_json::json!({
        "puzzles": {
            PuzzleKind::Sliding.name(): {
                "algorithms": AlgorithmChoice::names_for(PuzzleKind::Sliding),
                "heuristics": Heuristic::names_for(PuzzleKind::Sliding),
                "partitions": {"4x4": partitions(4), "5x5": partitions(5)},
                "goals": GoalName::NAMES,
                "ready_tables": ready_tables(state.service.tables()),
                "tables": tables_status(state.service.tables()),
                "objectives": Objective::NAMES,
                "defaults": sliding_defaults,
                "board": {"min_side": 2, "max_side": 8, "max_cells": state.caps.max_board_cells},
            },
            PuzzleKind::Sokoban.name(): {
                "algorithms": AlgorithmChoice::names_for(PuzzleKind::Sokoban),
                "heuristics": Heuristic::names_for(PuzzleKind::Sokoban),
                "objectives": Objective::NAMES,
                "defaults": defaults(Objective::Any),
                "level": {"format": "XSB or run-length XSB", "max_rows": sokoban::MAX_ROWS, "max_cols": sokoban::MAX_COLS, "max_boxes": sokoban::MAX_BOXES},
                "plan": "LURD: lower case moves, upper case pushes",
            },
            PuzzleKind::Twenty48.name(): {
                "algorithms": AlgorithmChoice::names_for(PuzzleKind::Twenty48),
                "heuristics": [Heuristic::Auto.name()],
                "objectives": [wire::SCORE_OBJECTIVE, "reach"],
                "defaults": {
                    "algorithm": AlgorithmChoice::Auto.name(),
                    "resolves_to": AlgorithmChoice::Expectimax.name(),
                    "objective": wire::SCORE_OBJECTIVE,
                    "rows": wire::DEFAULT_2048_SIDE,
                    "cols": wire::DEFAULT_2048_SIDE,
                },
                "board": {"min_side": twenty48::MIN_SIDE, "max_side": twenty48::MAX_SIDE, "max_tile": 1u64 << twenty48::MAX_EXPONENT},
                "moves": Dir::NAMES,
                "evaluation": if crate::jobs::game::shipped_network().is_some() { "n-tuple network" } else { "hand-written" },
                "playout": {"max_seed": generate::MAX_SEED},
            }
        },
        "generate": {
            "types": [PuzzleKind::Sokoban.name()],
            "methods": Method::NAMES,
            "difficulties": Label::NAMES,
            "width": {"min": generate::MIN_SIDE, "max": generate::MAX_SIDE},
            "height": {"min": generate::MIN_SIDE, "max": generate::MAX_SIDE},
            "boxes": {"min": 1, "max": generate::MAX_BOXES, "rule": "at most a quarter of the cells inside the outer wall"},
            "max_count": generate::MAX_COUNT,
            "max_seed": generate::MAX_SEED,
            "defaults": {"width": wire::DEFAULT_SIDE, "height": wire::DEFAULT_SIDE, "boxes": wire::DEFAULT_BOXES, "method": Method::Reverse.name(), "count": wire::DEFAULT_COUNT},
        },
        "rate": {"max_ms": (crate::jobs::service::RATE_TIME_BUDGET.as_millis() as u64).min(state.caps.max_timeout_ms)},
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
    use crate::puzzles::sliding::Geometry;
    use crate::puzzles::sliding::pdb::Partition;
    let ready = |side: usize| -> Vec<&'static str> {
        let geometry = Geometry {
            rows: side,
            cols: side,
        };
        PartitionKind::ALL
            .iter()
            .filter(|kind| kind.side() == side)
            .filter(|&&kind| {
                Partition::standard(kind, geometry, side * side - 1).is_ok_and(|p| {
                    p.patterns
                        .iter()
                        .all(|cells| tables.has_pattern_db(geometry, cells))
                })
            })
            .map(|kind| kind.name())
            .collect()
    };
    serde_json::json!({
        "4x4 blank-last": ready(4),
        "5x5 blank-last": ready(5),
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
    let count = |status: Status| {
        counts
            .iter()
            .find(|(s, _)| s == status.name())
            .map_or(0, |(_, n)| *n)
    };
    for &status in Status::ALL {
        metrics::gauge!("puzzled_jobs", "status" => status.name()).set(count(status) as f64);
    }
    metrics::gauge!("puzzled_queue_depth").set(count(Status::Queued) as f64);
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
    (
        [(header::CONTENT_TYPE, "application/yaml")],
        crate::http::OPENAPI,
    )
}

pub async fn not_found() -> Problem {
    Problem::not_found("route here; see /openapi.yaml")
}

/// A route that exists, asked with a method it does not answer.
pub async fn method_not_allowed(method: axum::http::Method) -> Problem {
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "Method not allowed",
        format!("this route does not answer {method}; see /openapi.yaml"),
    )
}
