//! Wire types: the JSON the service and the CLI's `--json` speak. The only serde
//! types in the crate; converted to and from the job layer by hand, here.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::jobs::{
    AlgorithmChoice, HeuristicChoice, JobLimits, JobReport, JobSpec, JobStatus, Objective,
    PuzzleSpec,
};
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sliding::{BoardError, GoalSpec, SlidingPuzzle};
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
    #[serde(default)]
    pub max_nodes: Option<u64>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// A request field that is present but wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error("puzzle: {0}")]
    Board(#[from] BoardError),
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
                    Some(GoalRequest::Named(name)) => parse_goal(&name)?,
                    Some(GoalRequest::Tiles(tiles)) => GoalSpec::Tiles(tiles),
                };
                PuzzleSpec::Sliding(SlidingPuzzle::new(&tiles, cols, &goal)?)
            }
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
            Some(name) => HeuristicChoice::parse(name, partition)
                .ok_or_else(|| unknown("heuristic", name, &HeuristicChoice::NAMES))?,
        };
        if partition.is_some() && !matches!(heuristic, HeuristicChoice::PatternDatabase(_)) {
            return Err(RequestError::PartitionWithoutPdb);
        }
        let objective = match self.objective.as_deref() {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boards: Option<Vec<Vec<u8>>>,
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
                boards: report.boards.clone(),
            },
            error,
        }
    }
}
