//! Wire types: the JSON the service and the CLI's `--json` speak. The only serde
//! types in the crate; converted to and from the job layer by hand, here.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::jobs::run::Board;
use crate::jobs::store::{JobRecord, ProgressRecord, Stage};
use crate::jobs::{
    AlgorithmChoice, HeuristicChoice, JobLimits, JobReport, JobSpec, JobStatus, Objective,
    PuzzleSpec,
};
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sliding::{BoardError, GoalSpec, SlidingPuzzle};
use crate::puzzles::sokoban::{self, Level, LevelError, Snapshots};
use crate::search::Weight;

/// `POST /v1/jobs` body, and `puzzled solve --json -` input.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JobRequest {
    pub puzzle: PuzzleRequest,
    #[serde(default)]
    pub algorithm: Option<String>,
    #[serde(default)]
    pub heuristic: Option<String>,
    /// Pattern-database partition: `7-8`, `6-6-3` (4×4) or `6-6-6-6` (5×5).
    #[serde(default)]
    pub partition: Option<String>,
    #[serde(default)]
    pub objective: Option<String>,
    /// Heuristic weight for `ida-star`/`a-star`, at least 1.
    #[serde(default)]
    pub weight: Option<f64>,
    #[serde(default)]
    pub limits: LimitsRequest,
    #[serde(default)]
    pub include_boards: bool,
    /// Higher runs first (service only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum PuzzleRequest {
    Sliding {
        tiles: Vec<u64>,
        #[serde(default)]
        cols: Option<usize>,
        #[serde(default)]
        goal: Option<GoalRequest>,
    },
    /// One level in XSB (or run-length XSB) text.
    Sokoban { level: String },
}

/// A board on the wire: a sliding board's tiles, or a Sokoban level as XSB text.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum BoardView {
    Tiles(Vec<u8>),
    Xsb(String),
}

impl From<&Board> for BoardView {
    fn from(board: &Board) -> BoardView {
        match board {
            Board::Tiles(tiles) => BoardView::Tiles(tiles.clone()),
            Board::Xsb(text) => BoardView::Xsb(text.clone()),
        }
    }
}

/// A goal as a tile list or by name (`blank-last`, `blank-first`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum GoalRequest {
    Named(String),
    Tiles(Vec<u64>),
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// A request field that is present but wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error("puzzle: {0}")]
    Board(#[from] BoardError),
    #[error("puzzle: level: {0}")]
    Level(#[from] LevelError),
    #[error("unknown {field} '{value}'; expected one of: {expected}")]
    UnknownName {
        field: &'static str,
        value: String,
        expected: String,
    },
    #[error("weight must be a number of at least 1, not {0}")]
    BadWeight(f64),
    #[error("partition is only meaningful with heuristic pattern-database")]
    PartitionWithoutPdb,
    #[error("{name} {value} is over this service's cap of {cap}")]
    OverLimit {
        field: &'static str,
        name: &'static str,
        value: u64,
        cap: u64,
    },
}

fn unknown(field: &'static str, value: &str, expected: &[&str]) -> RequestError {
    RequestError::UnknownName {
        field,
        value: value.to_string(),
        expected: expected.join(", "),
    }
}

pub fn parse_goal(text: &str) -> Result<GoalSpec, BoardError> {
    match text.trim() {
        "blank-last" => Ok(GoalSpec::BlankLast),
        "blank-first" => Ok(GoalSpec::BlankFirst),
        list => crate::puzzles::sliding::parse_tiles("goal", list).map(GoalSpec::Tiles),
    }
}

impl JobRequest {
    /// Validates the request into a job spec; every wrong field gets a named error.
    pub fn into_spec(self) -> Result<JobSpec, RequestError> {
        let puzzle = match self.puzzle {
            PuzzleRequest::Sliding { tiles, cols, goal } => {
                let goal = match goal {
                    None => GoalSpec::BlankLast,
                    Some(GoalRequest::Named(name)) => match name.as_str() {
                        "blank-last" => GoalSpec::BlankLast,
                        "blank-first" => GoalSpec::BlankFirst,
                        // The CLI passes `--goal` through as text: a tile list, or a name.
                        list if list.chars().any(|c| c.is_ascii_digit()) => parse_goal(list)?,
                        _ => return Err(unknown("goal", &name, &["blank-last", "blank-first"])),
                    },
                    Some(GoalRequest::Tiles(tiles)) => GoalSpec::Tiles(tiles),
                };
                PuzzleSpec::Sliding(SlidingPuzzle::new(&tiles, cols, &goal)?)
            }
            PuzzleRequest::Sokoban { level } => PuzzleSpec::Sokoban(Level::parse(&level)?),
        };
        let algorithm_names: Vec<&str> = AlgorithmChoice::ALL.iter().map(|a| a.name()).collect();
        let algorithm = match self.algorithm.as_deref() {
            None => AlgorithmChoice::Auto,
            Some(name) => AlgorithmChoice::parse(name)
                .ok_or_else(|| unknown("algorithm", name, &algorithm_names))?,
        };
        let partition_names = ["7-8", "6-6-3", "6-6-6-6"];
        let partition = match self.partition.as_deref() {
            None => None,
            Some(name) => Some(
                PartitionKind::parse(name)
                    .ok_or_else(|| unknown("partition", name, &partition_names))?,
            ),
        };
        let heuristic = match self.heuristic.as_deref() {
            None => HeuristicChoice::Auto,
            Some(name) => HeuristicChoice::parse(name, partition).ok_or_else(|| {
                let names = [
                    &HeuristicChoice::NAMES[..],
                    &HeuristicChoice::SOKOBAN_NAMES[1..],
                ];
                unknown("heuristic", name, &names.concat())
            })?,
        };
        if partition.is_some() && !matches!(heuristic, HeuristicChoice::PatternDatabase(_)) {
            return Err(RequestError::PartitionWithoutPdb);
        }
        let objective = match self.objective.as_deref() {
            // Proving a Sokoban optimum can take very long; any solution is the useful default.
            None if matches!(puzzle, PuzzleSpec::Sokoban(_)) => Objective::Any,
            None => Objective::Optimal,
            Some(name) => Objective::parse(name)
                .ok_or_else(|| unknown("objective", name, &["optimal", "any"]))?,
        };
        let weight = match self.weight {
            None => None,
            Some(w) if w.is_finite() && (1.0..=100.0).contains(&w) => {
                Some(Weight::from_percent((w * 100.0).round() as u32))
            }
            Some(w) => return Err(RequestError::BadWeight(w)),
        };
        Ok(JobSpec {
            puzzle,
            algorithm,
            heuristic,
            objective,
            weight,
            limits: JobLimits {
                max_nodes: self.limits.max_nodes,
                timeout: self.limits.timeout_ms.map(Duration::from_millis),
                max_memory_bytes: None,
            },
            include_boards: self.include_boards,
        })
    }
}

/// A finished job as JSON: `status`, `reason` when exhausted, and `result`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobOutcome {
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub algorithm: String,
    pub heuristic: String,
    pub weight: f64,
    pub result: JobResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the job ran on another heuristic than it would have used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub plan: Option<String>,
    pub length: Option<usize>,
    pub optimal: bool,
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    /// Distinct states stored; `null` for IDA*, which keeps none.
    pub unique_states: Option<u64>,
    /// Final IDA* threshold, A* f-bound or BFS depth.
    pub threshold: Option<u32>,
    pub elapsed_ms: f64,
    /// Sokoban: moves (the plan's length) and pushes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boards: Option<Vec<BoardView>>,
}

/// Milliseconds with microsecond precision: 8-puzzle solves take microseconds.
pub fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

impl From<&JobReport> for JobOutcome {
    fn from(report: &JobReport) -> JobOutcome {
        let (reason, error) = match &report.status {
            JobStatus::Exhausted(reason) => (Some(reason.name().to_string()), None),
            // Internal details stay in the logs; clients get a plain sentence.
            JobStatus::Failed(_) => (
                None,
                Some("internal error while solving; the job was not completed".to_string()),
            ),
            _ => (None, None),
        };
        JobOutcome {
            status: report.status.name().to_string(),
            reason,
            algorithm: report.algorithm.name().to_string(),
            heuristic: report.heuristic.name().to_string(),
            weight: f64::from(report.weight.percent()) / 100.0,
            result: JobResult {
                plan: report.plan.as_ref().map(|p| p.text.clone()),
                length: report.plan.as_ref().map(|p| p.length),
                optimal: report.optimal,
                nodes_expanded: report.stats.nodes_expanded,
                nodes_generated: report.stats.nodes_generated,
                unique_states: report.stats.unique_states,
                threshold: report.stats.bound,
                elapsed_ms: millis(report.stats.elapsed),
                moves: report
                    .plan
                    .as_ref()
                    .and_then(|p| p.pushes.map(|_| p.length)),
                pushes: report.plan.as_ref().and_then(|p| p.pushes),
                boards: report
                    .boards
                    .as_ref()
                    .map(|boards| boards.iter().map(BoardView::from).collect()),
            },
            error,
            note: report.note.clone(),
        }
    }
}

impl JobRequest {
    /// The request as the service understood it, for echoing back.
    pub fn from_spec(spec: &JobSpec, priority: i64) -> JobRequest {
        let (heuristic, partition) = match spec.heuristic {
            HeuristicChoice::PatternDatabase(kind) => {
                ("pattern-database", kind.map(|k| k.name().to_string()))
            }
            other => (other.name(), None),
        };
        JobRequest {
            puzzle: match &spec.puzzle {
                PuzzleSpec::Sliding(puzzle) => PuzzleRequest::Sliding {
                    tiles: puzzle.start().iter().map(|&t| u64::from(t)).collect(),
                    cols: Some(puzzle.geometry().cols),
                    goal: Some(GoalRequest::Tiles(
                        puzzle.goal().iter().map(|&t| u64::from(t)).collect(),
                    )),
                },
                PuzzleSpec::Sokoban(level) => PuzzleRequest::Sokoban {
                    level: level.to_xsb(),
                },
            },
            algorithm: Some(spec.algorithm.name().to_string()),
            heuristic: Some(heuristic.to_string()),
            partition,
            objective: Some(spec.objective.name().to_string()),
            weight: spec.weight.map(|w| f64::from(w.percent()) / 100.0),
            limits: LimitsRequest {
                max_nodes: spec.limits.max_nodes,
                timeout_ms: spec.limits.timeout.map(|t| t.as_millis() as u64),
            },
            include_boards: spec.include_boards,
            priority: Some(priority),
        }
    }
}

/// A job as `GET /v1/jobs/{id}` shows it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobView {
    pub id: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub request: JobRequest,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub attempts: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<ProgressView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProgressView {
    pub nodes_expanded: u64,
    pub threshold: Option<u32>,
    pub elapsed_ms: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultView {
    pub plan: Option<String>,
    pub length: Option<usize>,
    pub optimal: bool,
    pub algorithm: String,
    pub heuristic: String,
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    pub unique_states: Option<u64>,
    pub threshold: Option<u32>,
    pub elapsed_ms: f64,
    /// Time from submission to the start of the search.
    pub queue_ms: Option<i64>,
    /// Sokoban: moves (the plan's length) and pushes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moves: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boards: Option<Vec<BoardView>>,
    /// Why the job ran on another heuristic than it would have used (its pattern
    /// databases were not built yet, or are not built by this service).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub fn timestamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

impl From<&ProgressRecord> for ProgressView {
    fn from(p: &ProgressRecord) -> ProgressView {
        ProgressView {
            nodes_expanded: p.nodes_expanded,
            threshold: p.threshold,
            elapsed_ms: p.elapsed_ms,
        }
    }
}

impl From<&JobRecord> for JobView {
    fn from(job: &JobRecord) -> JobView {
        let reason = match &job.stage {
            Stage::Finished(JobStatus::Exhausted(reason)) => Some(reason.name().to_string()),
            _ => None,
        };
        let error = match &job.stage {
            // The stored message is for the logs; clients get a plain sentence.
            Stage::Finished(JobStatus::Failed(_)) => {
                Some("the job failed inside the service; it was not completed".to_string())
            }
            _ => None,
        };
        let result = job.result.as_ref().map(|r| {
            let boards = match (&job.spec.puzzle, &r.plan) {
                (PuzzleSpec::Sliding(puzzle), Some(plan)) if job.spec.include_boards => Some(
                    crate::puzzles::sliding::replay(puzzle, plan, true)
                        .boards
                        .into_iter()
                        .map(BoardView::Tiles)
                        .collect(),
                ),
                (PuzzleSpec::Sokoban(level), Some(plan)) if job.spec.include_boards => Some(
                    sokoban::replay(level, plan, Snapshots::EachPush)
                        .boards
                        .into_iter()
                        .map(BoardView::Xsb)
                        .collect(),
                ),
                _ => None,
            };
            let is_sokoban = matches!(job.spec.puzzle, PuzzleSpec::Sokoban(_));
            ResultView {
                plan: r.plan.clone(),
                length: r.length,
                optimal: r.optimal,
                algorithm: r.algorithm.clone(),
                heuristic: r.heuristic.clone(),
                nodes_expanded: r.nodes_expanded,
                nodes_generated: r.nodes_generated,
                unique_states: r.unique_states,
                threshold: r.threshold,
                elapsed_ms: r.elapsed_us as f64 / 1e3,
                queue_ms: job.started_at.map(|s| s - job.created_at),
                moves: r.length.filter(|_| is_sokoban),
                pushes: r
                    .plan
                    .as_deref()
                    .filter(|_| is_sokoban)
                    .map(sokoban::count_pushes),
                boards,
                note: r.note.clone(),
            }
        });
        JobView {
            id: job.id.clone(),
            status: job.stage.name().to_string(),
            reason,
            request: JobRequest::from_spec(&job.spec, job.priority),
            created_at: timestamp(job.created_at),
            started_at: job.started_at.map(timestamp),
            finished_at: job.finished_at.map(timestamp),
            attempts: job.attempts,
            progress: job.progress.as_ref().map(ProgressView::from),
            result,
            error,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobList {
    pub jobs: Vec<JobView>,
    pub next_cursor: Option<String>,
}

/// Most board squares (steps × squares per board) `/v1/validate` returns with
/// `include_boards`: a few megabytes of JSON.
pub const MAX_VALIDATE_BOARD_SQUARES: usize = 2_000_000;

/// `POST /v1/validate` body.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateRequest {
    pub puzzle: PuzzleRequest,
    pub plan: String,
    #[serde(default)]
    pub include_boards: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepErrorView {
    pub step: usize,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ValidateResponse {
    pub legal: bool,
    pub solved: bool,
    pub length: usize,
    pub error: Option<StepErrorView>,
    /// Sokoban: pushes among the legal steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushes: Option<usize>,
    /// The board after each legal step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boards: Option<Vec<BoardView>>,
}

impl ValidateRequest {
    pub fn check(self) -> Result<ValidateResponse, RequestError> {
        let request = JobRequest {
            puzzle: self.puzzle,
            algorithm: None,
            heuristic: None,
            partition: None,
            objective: None,
            weight: None,
            limits: LimitsRequest::default(),
            include_boards: false,
            priority: None,
        };
        let error = |e: crate::puzzles::StepError| StepErrorView {
            step: e.step,
            reason: e.reason,
        };
        let puzzle = request.into_spec()?.puzzle;
        if self.include_boards {
            let squares = match &puzzle {
                PuzzleSpec::Sliding(puzzle) => puzzle.geometry().cells(),
                PuzzleSpec::Sokoban(level) => level.rows() * (level.cols() + 1),
            };
            // A board per step: a long plan on a large level would make an answer of
            // hundreds of megabytes from a body of a few kilobytes.
            let steps = self.plan.chars().count() as u64;
            let cap = (MAX_VALIDATE_BOARD_SQUARES / squares) as u64;
            if steps > cap {
                return Err(RequestError::OverLimit {
                    field: "/include_boards",
                    name: "plan length with include_boards on this board",
                    value: steps,
                    cap,
                });
            }
        }
        Ok(match puzzle {
            PuzzleSpec::Sliding(puzzle) => {
                let replay =
                    crate::puzzles::sliding::replay(&puzzle, &self.plan, self.include_boards);
                ValidateResponse {
                    legal: replay.legal,
                    solved: replay.solved,
                    length: replay.length,
                    error: replay.error.map(error),
                    pushes: None,
                    boards: self
                        .include_boards
                        .then(|| replay.boards.into_iter().map(BoardView::Tiles).collect()),
                }
            }
            PuzzleSpec::Sokoban(level) => {
                let snapshots = if self.include_boards {
                    Snapshots::EachStep
                } else {
                    Snapshots::None
                };
                let replay = sokoban::replay(&level, &self.plan, snapshots);
                ValidateResponse {
                    legal: replay.legal,
                    solved: replay.solved,
                    length: replay.moves,
                    error: replay.error.map(error),
                    pushes: Some(replay.pushes),
                    boards: self
                        .include_boards
                        .then(|| replay.boards.into_iter().map(BoardView::Xsb).collect()),
                }
            }
        })
    }
}
