//! Requests: a job as JSON, validated into a job spec; every wrong field named.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::GenerateRequest;
use super::game::{ObjectiveRequest, PlayoutRequest, RecordError};
use crate::games::twenty48::{self, Board, Shape};
use crate::jobs::game::{GameSpec, GameTask};
use crate::jobs::{
    AlgorithmChoice, Heuristic, HeuristicChoice, JobLimits, JobSpec, Objective, PuzzleKind,
    PuzzleSpec,
};
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sliding::{BoardError, GoalName, GoalSpec, SlidingPuzzle};
use crate::puzzles::sokoban::generate::ParamError;
use crate::puzzles::sokoban::generate::rating::RateError;
use crate::puzzles::sokoban::{Level, LevelError};
use crate::search::Weight;

/// `POST /v1/jobs` body, and `puzzled solve --json -` input.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JobRequest {
    /// The puzzle to solve; or `generate`, levels to make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub puzzle: Option<PuzzleRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<GenerateRequest>,
    #[serde(default)]
    pub algorithm: Option<String>,
    #[serde(default)]
    pub heuristic: Option<String>,
    /// Pattern-database partition: `7-8`, `6-6-3` (4×4) or `6-6-6-6` (5×5).
    #[serde(default)]
    pub partition: Option<String>,
    /// `optimal` or `any` for puzzles; `score` or `{"reach": tile}` for 2048.
    #[serde(default)]
    pub objective: Option<ObjectiveRequest>,
    /// 2048: play a whole game instead of answering one position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout: Option<PlayoutRequest>,
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

/// A puzzle: `type` names its kind, and the other fields are that kind's: `tiles`, `cols`
/// and `goal` for a sliding puzzle, `level` (XSB or run-length XSB text) for Sokoban,
/// `rows`, `cols` and `cells` for 2048. One flat struct, not a tagged enum, so that a
/// field of the wrong type is pointed at by its own path.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PuzzleRequest {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiles: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<GoalRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// 2048: rows (4 when absent; `cols` likewise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    /// 2048: tile values row by row, 0 for empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells: Option<Vec<u64>>,
}

/// A puzzle a request gives, as opposed to one a job makes.
pub enum GivenPuzzle {
    Sliding(SlidingPuzzle),
    Sokoban(Level),
    /// A 2048 board; `None` for a playout that starts from its seed.
    Twenty48(Shape, Option<Board>),
}

/// The side of a 2048 board a request leaves out.
pub const DEFAULT_2048_SIDE: usize = 4;

impl PuzzleRequest {
    /// Validates the puzzle: its kind, the fields that kind needs, none of another's.
    pub fn into_puzzle(self) -> Result<GivenPuzzle, RequestError> {
        let kind = parse_name(
            "puzzle type",
            &self.kind,
            PuzzleKind::parse,
            PuzzleKind::NAMES,
        )?;
        let foreign = match kind {
            PuzzleKind::Sliding => [
                ("level", self.level.is_some()),
                ("rows", self.rows.is_some()),
                ("cells", self.cells.is_some()),
            ]
            .to_vec(),
            PuzzleKind::Sokoban => [
                ("tiles", self.tiles.is_some()),
                ("cols", self.cols.is_some()),
                ("goal", self.goal.is_some()),
                ("rows", self.rows.is_some()),
                ("cells", self.cells.is_some()),
            ]
            .to_vec(),
            PuzzleKind::Twenty48 => [
                ("tiles", self.tiles.is_some()),
                ("goal", self.goal.is_some()),
                ("level", self.level.is_some()),
            ]
            .to_vec(),
        };
        if let Some((field, _)) = foreign.into_iter().find(|(_, present)| *present) {
            return Err(RequestError::NotFor { field, kind });
        }
        Ok(match kind {
            PuzzleKind::Sliding => {
                let tiles = self.tiles.ok_or(RequestError::Missing {
                    field: "tiles",
                    kind,
                })?;
                let goal = match self.goal {
                    None => GoalSpec::BlankLast,
                    Some(GoalRequest::Named(text)) => parse_goal_text(&text)?,
                    Some(GoalRequest::Tiles(tiles)) => GoalSpec::Tiles(tiles),
                };
                GivenPuzzle::Sliding(SlidingPuzzle::new(&tiles, self.cols, &goal)?)
            }
            PuzzleKind::Sokoban => {
                let level = self.level.ok_or(RequestError::Missing {
                    field: "level",
                    kind,
                })?;
                GivenPuzzle::Sokoban(Level::parse(&level)?)
            }
            PuzzleKind::Twenty48 => {
                let shape = Shape::new(
                    self.rows.unwrap_or(DEFAULT_2048_SIDE),
                    self.cols.unwrap_or(DEFAULT_2048_SIDE),
                )?;
                let board = match self.cells {
                    Some(cells) => Some(shape.board(&cells)?),
                    None => None,
                };
                GivenPuzzle::Twenty48(shape, board)
            }
        })
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
    #[error("puzzle: {0}")]
    Game(#[from] twenty48::BoardError),
    #[error("a reach objective takes a tile from 4 to 32768, a power of two, not {0}")]
    ReachTile(u64),
    #[error("a playout needs a budget for each move: ms_per_move, nodes_per_move or both")]
    NoMoveBudget,
    #[error("playout: a seed of {0} is over the largest, 9007199254740991")]
    PlayoutSeed(u64),
    #[error("`{field}` does not apply to 2048")]
    NotForGame { field: &'static str },
    #[error("`{field}` is only for 2048")]
    OnlyForGame { field: &'static str },
    #[error("game: {0}")]
    Record(#[from] RecordError),
    #[error("validate takes `puzzle` and `plan`, or a 2048 `game` record")]
    ValidateWhat,
    #[error("unknown {field} '{value}'; expected one of: {expected}")]
    UnknownName {
        field: &'static str,
        value: String,
        expected: String,
    },
    #[error("a {kind} puzzle needs `{field}`")]
    Missing {
        field: &'static str,
        kind: PuzzleKind,
    },
    #[error("`{field}` is not a field of a {kind} puzzle")]
    NotFor {
        field: &'static str,
        kind: PuzzleKind,
    },
    #[error("weight must be a number of at least 1, not {0}")]
    BadWeight(f64),
    #[error("partition is only meaningful with heuristic pattern-database")]
    PartitionWithoutPdb,
    #[error("generate: {0}")]
    Generate(ParamError),
    #[error("`{field}` is a search setting; a generate job takes none")]
    NotForGenerate { field: &'static str },
    #[error("a job needs `puzzle` (to solve) or `generate` (to make levels)")]
    NoTask,
    #[error("a job takes `puzzle` or `generate`, not both")]
    BothTasks,
    #[error("level: {0}")]
    RateLevel(LevelError),
    #[error("the level could not be rated: {0}")]
    NotRated(RateError),
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
    match GoalName::parse(text.trim()) {
        Some(name) => Ok(name.into()),
        None => crate::puzzles::sliding::parse_tiles("goal", text).map(GoalSpec::Tiles),
    }
}

/// A name of `T`'s vocabulary, or the error that lists them.
fn parse_name<T>(
    field: &'static str,
    name: &str,
    parse: fn(&str) -> Option<T>,
    names: &[&str],
) -> Result<T, RequestError> {
    parse(name).ok_or_else(|| unknown(field, name, names))
}

impl JobRequest {
    /// Validates the request into a job spec; every wrong field gets a named error.
    pub fn into_spec(mut self) -> Result<JobSpec, RequestError> {
        let puzzle = match (self.puzzle.take(), self.generate.take()) {
            (Some(puzzle), None) => match puzzle.into_puzzle()? {
                GivenPuzzle::Twenty48(shape, board) => {
                    return game_spec(shape, board, self);
                }
                GivenPuzzle::Sliding(puzzle) => PuzzleSpec::Sliding(puzzle),
                GivenPuzzle::Sokoban(level) => PuzzleSpec::Sokoban(level),
            },
            (None, Some(generate)) => {
                let search = [
                    ("algorithm", self.algorithm.is_some()),
                    ("heuristic", self.heuristic.is_some()),
                    ("partition", self.partition.is_some()),
                    ("objective", self.objective.is_some()),
                    ("weight", self.weight.is_some()),
                    ("include_boards", self.include_boards),
                ];
                if let Some((field, _)) = search.into_iter().find(|(_, given)| *given) {
                    return Err(RequestError::NotForGenerate { field });
                }
                PuzzleSpec::Generate(generate.into_params()?)
            }
            (None, None) => return Err(RequestError::NoTask),
            (Some(_), Some(_)) => return Err(RequestError::BothTasks),
        };
        if self.playout.is_some() {
            return Err(RequestError::OnlyForGame { field: "playout" });
        }
        let objective = match &self.objective {
            None => None,
            Some(ObjectiveRequest::Name(name)) => Some(name.as_str()),
            Some(ObjectiveRequest::Reach { .. }) => {
                return Err(RequestError::OnlyForGame { field: "objective" });
            }
        };
        let choices = SearchNames {
            algorithm: self.algorithm.as_deref(),
            heuristic: self.heuristic.as_deref(),
            partition: self.partition.as_deref(),
            objective,
            weight: self.weight,
        };
        choices.apply(JobSpec {
            limits: JobLimits {
                max_nodes: self.limits.max_nodes,
                timeout: self.limits.timeout_ms.map(Duration::from_millis),
                max_memory_bytes: None,
            },
            include_boards: self.include_boards,
            ..JobSpec::new(puzzle)
        })
    }
}

/// A 2048 job: one position's best move, or (with `playout`) a whole game.
fn game_spec(
    shape: Shape,
    board: Option<Board>,
    request: JobRequest,
) -> Result<JobSpec, RequestError> {
    let puzzle_only = [
        ("partition", request.partition.is_some()),
        ("weight", request.weight.is_some()),
        ("include_boards", request.include_boards),
    ];
    if let Some((field, _)) = puzzle_only.into_iter().find(|(_, given)| *given) {
        return Err(RequestError::NotForGame { field });
    }
    let objective = ObjectiveRequest::game(request.objective.as_ref())?;
    let task = match (&request.playout, board) {
        (Some(playout), start) => GameTask::Playout {
            seed: playout.checked_seed()?,
            start,
            per_move: JobLimits {
                max_nodes: playout.nodes_per_move,
                timeout: playout.ms_per_move.map(Duration::from_millis),
                max_memory_bytes: None,
            },
        },
        (None, Some(board)) => GameTask::Move(board),
        (None, None) => {
            return Err(RequestError::Missing {
                field: "cells",
                kind: PuzzleKind::Twenty48,
            });
        }
    };
    let spec = JobSpec::new(PuzzleSpec::Twenty48(GameSpec {
        shape,
        objective,
        task,
    }));
    let choices = SearchNames {
        algorithm: request.algorithm.as_deref(),
        heuristic: request.heuristic.as_deref(),
        ..SearchNames::default()
    };
    choices.apply(JobSpec {
        limits: JobLimits {
            max_nodes: request.limits.max_nodes,
            timeout: request.limits.timeout_ms.map(Duration::from_millis),
            max_memory_bytes: None,
        },
        ..spec
    })
}

/// A goal given as text: a name, or (the CLI's `--goal`) a tile list.
pub fn parse_goal_text(text: &str) -> Result<GoalSpec, RequestError> {
    if text.chars().any(|c| c.is_ascii_digit()) {
        Ok(parse_goal(text)?)
    } else {
        Ok(parse_name("goal", text, GoalName::parse, GoalName::NAMES)?.into())
    }
}

/// How to search, by name, as a JSON request's fields or the command line's flags give
/// it; `None` leaves a choice to the job's default.
#[derive(Clone, Copy, Debug, Default)]
pub struct SearchNames<'a> {
    pub algorithm: Option<&'a str>,
    pub heuristic: Option<&'a str>,
    pub partition: Option<&'a str>,
    pub objective: Option<&'a str>,
    pub weight: Option<f64>,
}

impl SearchNames<'_> {
    /// `spec` with these choices, each name parsed by its enum: one error, naming the
    /// field, for the service and the command line.
    pub fn apply(self, spec: JobSpec) -> Result<JobSpec, RequestError> {
        let algorithm = match self.algorithm {
            None => spec.algorithm,
            Some(name) => parse_name(
                "algorithm",
                name,
                AlgorithmChoice::parse,
                AlgorithmChoice::NAMES,
            )?,
        };
        let partition = match self.partition {
            None => None,
            Some(name) => Some(parse_name(
                "partition",
                name,
                PartitionKind::parse,
                PartitionKind::NAMES,
            )?),
        };
        let heuristic = match self.heuristic {
            None => spec.heuristic.kind(),
            Some(name) => parse_name("heuristic", name, Heuristic::parse, Heuristic::NAMES)?,
        };
        let heuristic = HeuristicChoice::new(heuristic, partition.or(spec.heuristic.partition()));
        if partition.is_some() && !matches!(heuristic, HeuristicChoice::PatternDatabase(_)) {
            return Err(RequestError::PartitionWithoutPdb);
        }
        let objective = match self.objective {
            None => spec.objective,
            Some(name) => parse_name("objective", name, Objective::parse, Objective::NAMES)?,
        };
        let weight = match self.weight {
            None => spec.weight,
            Some(w) if w.is_finite() && (1.0..=100.0).contains(&w) => {
                Some(Weight::from_percent((w * 100.0).round() as u32))
            }
            Some(w) => return Err(RequestError::BadWeight(w)),
        };
        Ok(JobSpec {
            algorithm,
            heuristic,
            objective,
            weight,
            ..spec
        })
    }
}

impl JobRequest {
    /// The request as the service understood it, for echoing back.
    pub fn from_spec(spec: &JobSpec, priority: i64) -> JobRequest {
        let limits = LimitsRequest {
            max_nodes: spec.limits.max_nodes,
            timeout_ms: spec.limits.timeout.map(|t| t.as_millis() as u64),
        };
        let puzzle = match &spec.puzzle {
            PuzzleSpec::Sliding(puzzle) => PuzzleRequest {
                kind: PuzzleKind::Sliding.name().to_string(),
                tiles: Some(puzzle.start().iter().map(|&t| u64::from(t)).collect()),
                cols: Some(puzzle.geometry().cols),
                goal: Some(GoalRequest::Tiles(
                    puzzle.goal().iter().map(|&t| u64::from(t)).collect(),
                )),
                level: None,
                rows: None,
                cells: None,
            },
            PuzzleSpec::Sokoban(level) => PuzzleRequest {
                kind: PuzzleKind::Sokoban.name().to_string(),
                tiles: None,
                cols: None,
                goal: None,
                level: Some(level.to_xsb()),
                rows: None,
                cells: None,
            },
            PuzzleSpec::Twenty48(game) => {
                let (board, playout) = match &game.task {
                    GameTask::Move(board) => (Some(*board), None),
                    GameTask::Playout {
                        start,
                        seed,
                        per_move,
                    } => (
                        *start,
                        Some(PlayoutRequest {
                            seed: Some(*seed),
                            ms_per_move: per_move.timeout.map(|t| t.as_millis() as u64),
                            nodes_per_move: per_move.max_nodes,
                        }),
                    ),
                };
                return JobRequest {
                    puzzle: Some(PuzzleRequest {
                        kind: PuzzleKind::Twenty48.name().to_string(),
                        tiles: None,
                        cols: Some(game.shape.cols()),
                        goal: None,
                        level: None,
                        rows: Some(game.shape.rows()),
                        cells: board.map(|b| game.shape.values(b)),
                    }),
                    generate: None,
                    algorithm: Some(spec.algorithm.name().to_string()),
                    heuristic: None,
                    partition: None,
                    objective: Some(ObjectiveRequest::from_game(game.objective)),
                    playout,
                    weight: None,
                    limits,
                    include_boards: false,
                    priority: Some(priority),
                };
            }
            PuzzleSpec::Generate(params) => {
                return JobRequest {
                    puzzle: None,
                    generate: Some(GenerateRequest::from_params(params)),
                    algorithm: None,
                    heuristic: None,
                    partition: None,
                    objective: None,
                    playout: None,
                    weight: None,
                    limits,
                    include_boards: false,
                    priority: Some(priority),
                };
            }
        };
        JobRequest {
            puzzle: Some(puzzle),
            generate: None,
            algorithm: Some(spec.algorithm.name().to_string()),
            heuristic: Some(spec.heuristic.name().to_string()),
            partition: spec.heuristic.partition().map(|k| k.name().to_string()),
            objective: Some(ObjectiveRequest::Name(spec.objective.name().to_string())),
            playout: None,
            weight: spec.weight.map(|w| f64::from(w.percent()) / 100.0),
            limits,
            include_boards: spec.include_boards,
            priority: Some(priority),
        }
    }
}
