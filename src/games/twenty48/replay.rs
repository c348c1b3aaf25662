//! A game record replayed: every move legal, every spawn on an empty cell and a 2 or a
//! 4, and the score the moves' merges add up to.

use super::{Board, Dir, Shape, Spawn};

/// One turn: a move, then the tile that appeared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub dir: Dir,
    pub spawn: Spawn,
}

/// A whole game as played: its start and its turns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub shape: Shape,
    pub start: Board,
    pub steps: Vec<Step>,
}

/// Where a replayed record ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Played {
    pub board: Board,
    pub score: u64,
    /// The largest tile's value.
    pub max_tile: u64,
    pub moves: usize,
    /// No move is legal on the last board.
    pub over: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("step {step}: moving {dir} changes nothing")]
    Illegal { step: usize, dir: Dir },
    #[error("step {step}: the spawn's cell {cell} is not on the board")]
    OffBoard { step: usize, cell: usize },
    #[error("step {step}: the spawn's cell {cell} is not empty")]
    Occupied { step: usize, cell: usize },
    #[error("step {step}: a spawn is a 2 or a 4")]
    Value { step: usize },
}

impl ReplayError {
    /// The step at fault, from 1.
    pub fn step(&self) -> usize {
        match *self {
            ReplayError::Illegal { step, .. }
            | ReplayError::OffBoard { step, .. }
            | ReplayError::Occupied { step, .. }
            | ReplayError::Value { step } => step,
        }
    }
}

/// Replays `steps` from `start` on `shape`.
pub fn replay(shape: Shape, start: Board, steps: &[Step]) -> Result<Played, ReplayError> {
    let mut board = start;
    let mut score = 0u64;
    for (i, step) in steps.iter().enumerate() {
        let n = i + 1;
        let (after, gained) = shape.slide(board, step.dir).ok_or(ReplayError::Illegal {
            step: n,
            dir: step.dir,
        })?;
        score += u64::from(gained);
        let Spawn { cell, exponent } = step.spawn;
        if cell >= shape.cells() {
            return Err(ReplayError::OffBoard { step: n, cell });
        }
        if shape.get(after, cell) != 0 {
            return Err(ReplayError::Occupied { step: n, cell });
        }
        if !(1..=2).contains(&exponent) {
            return Err(ReplayError::Value { step: n });
        }
        board = shape.set(after, cell, exponent);
    }
    Ok(Played {
        board,
        score,
        max_tile: shape.max_tile(board),
        moves: steps.len(),
        over: shape.moves(board).next().is_none(),
    })
}
