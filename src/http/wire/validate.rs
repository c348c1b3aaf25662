//! `/v1/validate`: a plan replayed on a puzzle, step by step.

use serde::{Deserialize, Serialize};

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
        let error = |e: crate::puzzles::StepError| StepErrorView {
            step: e.step,
            reason: e.reason,
        };
        let puzzle = self.puzzle.into_puzzle()?;
        if self.include_boards {
            let squares = match &puzzle {
                GivenPuzzle::Sliding(puzzle) => puzzle.geometry().cells(),
                GivenPuzzle::Sokoban(level) => level.rows() * (level.cols() + 1),
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
            GivenPuzzle::Sliding(puzzle) => {
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
            GivenPuzzle::Sokoban(level) => {
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
