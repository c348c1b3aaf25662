//! Answers: a job, its progress and its result as JSON; the result is also what
//! `puzzled solve --json` prints.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::game::{outcome_views, progress_views};
use super::{AnswerView, GenerationView, JobRequest, LevelView, PlayedView, PlayoutView};
use crate::jobs::run::Board;
use crate::jobs::store::{JobRecord, ProgressRecord, ResultRecord};
use crate::jobs::{JobReport, JobSpec, JobStatus, PuzzleSpec, Stage};
use crate::puzzles::sokoban::{self, Snapshots};

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

/// A job's end as the command line's `--json` prints it: the same `status`, `reason`,
/// `result` and `error` as the service's [`JobView`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobOutcome {
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub result: JobResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A finished search, the one result type of the service and the command line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub plan: Option<String>,
    pub length: Option<usize>,
    pub optimal: bool,
    /// What `auto` resolved to.
    pub algorithm: String,
    pub heuristic: String,
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    /// Distinct states stored; `null` for IDA*, which keeps none.
    pub unique_states: Option<u64>,
    /// Final IDA* threshold, A* f-bound or BFS depth.
    pub threshold: Option<u32>,
    pub elapsed_ms: f64,
    /// Time from submission to the start of the search (service only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ms: Option<i64>,
    /// Sokoban: moves (the plan's length) and pushes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boards: Option<Vec<BoardView>>,
    /// Why the job ran on another heuristic than it would have used (its pattern
    /// databases were not built yet, or are not built by this service).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A generate job: the levels made, in order, and the counts of candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<LevelView>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<GenerationView>,
    /// A 2048 position: `move`, `value`, `move_values`, `depth` and `exact`.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerView>,
    /// A 2048 game played: its record, score, largest tile, moves and pace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout: Option<PlayoutView>,
}

/// Milliseconds with microsecond precision: 8-puzzle solves take microseconds.
pub fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

/// What a client is told of a failure: the stored message is for the logs.
const FAILED: &str = "the job failed inside the service; it was not completed";

impl JobResult {
    /// The result of `spec`'s search; the boards, when the spec asks for them, replayed
    /// from the plan.
    pub fn new(result: &ResultRecord, spec: &JobSpec, queue_ms: Option<i64>) -> JobResult {
        let boards = match (&spec.puzzle, &result.plan) {
            (PuzzleSpec::Sliding(puzzle), Some(plan)) if spec.include_boards => Some(
                crate::puzzles::sliding::replay(puzzle, plan, true)
                    .boards
                    .into_iter()
                    .map(BoardView::Tiles)
                    .collect(),
            ),
            (PuzzleSpec::Sokoban(level), Some(plan)) if spec.include_boards => Some(
                sokoban::replay(level, plan, Snapshots::EachPush)
                    .boards
                    .into_iter()
                    .map(BoardView::Xsb)
                    .collect(),
            ),
            _ => None,
        };
        let is_sokoban = matches!(spec.puzzle, PuzzleSpec::Sokoban(_));
        let (answer, playout) = outcome_views(result.game.as_ref());
        JobResult {
            plan: result.plan.clone(),
            length: result.length,
            optimal: result.optimal,
            algorithm: result.algorithm.name().to_string(),
            heuristic: result.heuristic.name().to_string(),
            nodes_expanded: result.nodes_expanded,
            nodes_generated: result.nodes_generated,
            unique_states: result.unique_states,
            threshold: result.threshold,
            elapsed_ms: result.elapsed_us as f64 / 1e3,
            queue_ms,
            moves: result.length.filter(|_| is_sokoban),
            pushes: result
                .plan
                .as_deref()
                .filter(|_| is_sokoban)
                .map(sokoban::count_pushes),
            boards,
            note: result.note.clone(),
            levels: result
                .generation
                .as_ref()
                .map(|g| g.levels.iter().map(LevelView::from).collect()),
            generation: result
                .generation
                .as_ref()
                .map(|g| GenerationView::new(g, Duration::from_micros(result.elapsed_us))),
            answer,
            playout,
        }
    }
}

impl JobOutcome {
    pub fn new(spec: &JobSpec, report: &JobReport) -> JobOutcome {
        JobOutcome {
            status: report.status.name().to_string(),
            reason: report.status.reason().map(|r| r.name().to_string()),
            result: JobResult::new(&ResultRecord::from_report(report), spec, None),
            error: matches!(report.status, JobStatus::Failed(_)).then(|| FAILED.to_string()),
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
    pub result: Option<JobResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProgressView {
    pub nodes_expanded: u64,
    pub threshold: Option<u32>,
    pub elapsed_ms: u64,
    /// A generate job: levels made and candidates tried so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels_made: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates_tried: Option<u64>,
    /// A 2048 position: the root's answer so far.
    #[serde(default, flatten, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerView>,
    /// A 2048 game: moves made, score and largest tile so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub played: Option<PlayedView>,
}

pub fn timestamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

impl From<&ProgressRecord> for ProgressView {
    fn from(p: &ProgressRecord) -> ProgressView {
        let (answer, played) = progress_views(p.game.as_ref());
        ProgressView {
            answer,
            played,
            nodes_expanded: p.nodes_expanded,
            threshold: p.threshold,
            elapsed_ms: p.elapsed_ms,
            levels_made: p.levels.map(|l| l.made),
            candidates_tried: p.levels.map(|l| l.tried),
        }
    }
}

impl From<&JobRecord> for JobView {
    fn from(job: &JobRecord) -> JobView {
        let status = match &job.stage {
            Stage::Finished(status) => Some(status),
            _ => None,
        };
        JobView {
            id: job.id.to_string(),
            status: job.stage.name().to_string(),
            reason: status
                .and_then(JobStatus::reason)
                .map(|r| r.name().to_string()),
            request: JobRequest::from_spec(&job.spec, job.priority),
            created_at: timestamp(job.created_at),
            started_at: job.started_at.map(timestamp),
            finished_at: job.finished_at.map(timestamp),
            attempts: job.attempts,
            progress: job.progress.as_ref().map(ProgressView::from),
            result: job.result.as_ref().map(|result| {
                JobResult::new(
                    result,
                    &job.spec,
                    job.started_at.map(|s| s - job.created_at),
                )
            }),
            error: matches!(status, Some(JobStatus::Failed(_))).then(|| FAILED.to_string()),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobList {
    pub jobs: Vec<JobView>,
    pub next_cursor: Option<String>,
}
