//! `/v1/validate`: a plan replayed on a puzzle, or a 2048 game record, step by step.

use serde::{Deserialize, Serialize};

use super::game::{GameCheckView, GameRecordView, check_record};
use super::request::GivenPuzzle;
use super::{BoardView, PuzzleRequest, RequestError};
use crate::puzzles::sokoban::{self, Snapshots};

/// Most board squares (steps × squares per board) `/v1/validate` returns with
/// `include_boards`: a few megabytes of JSON.
pub const MAX_VALIDATE_BOARD_SQUARES: usize = 2_000_000;

/// `POST /v1/validate` body.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub puzzle: Option<PuzzleRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    #[serde(default)]
    pub include_boards: bool,
    /// A 2048 game record, instead of a puzzle and a plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<GameRecordView>,
    /// The score the record claims, checked against its replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u64>,
}

/// What `/v1/validate` answers: a plan's replay, or a game record's.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ValidateAnswer {
    Plan(ValidateResponse),
    Game(GameCheckView),
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
    pub fn check(self) -> Result<ValidateAnswer, RequestError> {
        match (self.puzzle, self.plan, self.game) {
            (None, None, Some(game)) => {
                if self.include_boards {
                    return Err(RequestError::NotForGame {
                        field: "include_boards",
                    });
                }
                let record = game.into_record()?;
                Ok(ValidateAnswer::Game(check_record(&record, self.score)))
            }
            (Some(puzzle), Some(plan), None) => {
                if self.score.is_some() {
                    return Err(RequestError::OnlyForGame { field: "score" });
                }
                check_plan(puzzle, &plan, self.include_boards).map(ValidateAnswer::Plan)
            }
            _ => Err(RequestError::ValidateWhat),
        }
    }
}

fn check_plan(
    puzzle: PuzzleRequest,
    plan: &str,
    include_boards: bool,
) -> Result<ValidateResponse, RequestError> {
    let error = |e: crate::puzzles::StepError| StepErrorView {
        step: e.step,
        reason: e.reason,
    };
    let puzzle = puzzle.into_puzzle()?;
    let squares = match &puzzle {
        GivenPuzzle::Sliding(puzzle) => puzzle.geometry().cells(),
        GivenPuzzle::Sokoban(level) => level.rows() * (level.cols() + 1),
        GivenPuzzle::Twenty48(..) => return Err(game_has_no_plan()),
    };
    if include_boards {
        // A board per step: a long plan on a large level would make an answer of
        // hundreds of megabytes from a body of a few kilobytes.
        let steps = plan.chars().count() as u64;
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
        GivenPuzzle::Sliding(puzzle) => {
            let replay = crate::puzzles::sliding::replay(&puzzle, plan, include_boards);
            ValidateResponse {
                legal: replay.legal,
                solved: replay.solved,
                length: replay.length,
                error: replay.error.map(error),
                pushes: None,
                boards: include_boards
                    .then(|| replay.boards.into_iter().map(BoardView::Tiles).collect()),
            }
        }
        GivenPuzzle::Sokoban(level) => {
            let snapshots = if include_boards {
                Snapshots::EachStep
            } else {
                Snapshots::None
            };
            let replay = sokoban::replay(&level, plan, snapshots);
            ValidateResponse {
                legal: replay.legal,
                solved: replay.solved,
                length: replay.moves,
                error: replay.error.map(error),
                pushes: Some(replay.pushes),
                boards: include_boards
                    .then(|| replay.boards.into_iter().map(BoardView::Xsb).collect()),
            }
        }
        GivenPuzzle::Twenty48(..) => return Err(game_has_no_plan()),
    })
}

/// A game is checked by its record (moves and spawns), not by a plan.
fn game_has_no_plan() -> RequestError {
    RequestError::NotForGame { field: "plan" }
}
