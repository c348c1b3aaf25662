//! 2048 as a [`Game`] for the engine: the player against the spawns, valued by an
//! objective: the expected score still to come, or the chance of reaching a tile.

use super::{Board, Dir, Shape};
use crate::search::game::{Game, Side};

/// What a position is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// The expected sum of the merges still to come.
    Score,
    /// The chance of reaching a tile of at least 2^exponent.
    Reach(u8),
}

/// A static estimate of an afterstate's value under the score objective: the score
/// still to come.
pub trait Evaluator {
    fn afterstate(&self, shape: Shape, board: Board) -> f64;
}

/// The hand-written estimate: rewards empty cells, neighbours that can merge, and rows
/// and columns whose tiles rise or fall monotonically, in units of score.
#[derive(Clone, Copy, Debug, Default)]
pub struct Heuristic;

impl Evaluator for Heuristic {
    fn afterstate(&self, shape: Shape, board: Board) -> f64 {
        let cell = |r: usize, c: usize| f64::from(shape.get(board, r * shape.cols() + c));
        let mut value = 0.0;
        let lines = (0..shape.rows())
            .map(|r| (0..shape.cols()).map(|c| cell(r, c)).collect::<Vec<_>>())
            .chain((0..shape.cols()).map(|c| (0..shape.rows()).map(|r| cell(r, c)).collect()));
        for line in lines {
            let empty = line.iter().filter(|&&e| e == 0.0).count() as f64;
            let merges = line
                .windows(2)
                .filter(|w| w[0] != 0.0 && w[0] == w[1])
                .count() as f64;
            // The smaller of the rises and the falls along the line: 0 when monotone.
            let (mut up, mut down) = (0.0, 0.0);
            for w in line.windows(2) {
                let (a, b) = (w[0].powf(2.0), w[1].powf(2.0));
                if a > b {
                    down += a - b;
                } else {
                    up += b - a;
                }
            }
            value += 40.0 * empty + 60.0 * merges - 4.0 * f64::min(up, down);
        }
        value
    }
}

/// 2048 on `shape` under `objective`, estimated by `evaluator`.
pub struct Twenty48<E> {
    pub shape: Shape,
    pub objective: Objective,
    pub evaluator: E,
}

impl<E: Evaluator> Twenty48<E> {
    fn reached(&self, board: &Board) -> bool {
        matches!(self.objective, Objective::Reach(t) if self.shape.max_exponent(*board) >= t)
    }
}

impl<E: Evaluator> Game for Twenty48<E> {
    type State = Board;
    type Move = Dir;

    fn side(&self, _: &Board) -> Side {
        Side::Max
    }

    fn moves(&self, board: &Board, out: &mut Vec<(Dir, f64, Board)>) {
        if self.reached(board) {
            return;
        }
        let scored = self.objective == Objective::Score;
        out.extend(
            self.shape.moves(*board).map(|(dir, after, score)| {
                (dir, if scored { f64::from(score) } else { 0.0 }, after)
            }),
        );
    }

    fn final_value(&self, board: &Board) -> f64 {
        if self.reached(board) { 1.0 } else { 0.0 }
    }

    fn outcomes(&self, after: &Board, out: &mut Vec<(f64, Board)>) {
        self.shape.spawns(*after, out);
    }

    fn estimate(&self, after: &Board) -> f64 {
        match self.objective {
            Objective::Score => self.evaluator.afterstate(self.shape, *after).max(0.0),
            // The share of the tile's value already on the board: crude, but 1 when it
            // is reached and rising as the board fills with larger tiles.
            Objective::Reach(t) => {
                let sum: f64 = self.shape.values(*after).iter().map(|&v| v as f64).sum();
                (sum / f64::from(1u32 << t)).min(1.0)
            }
        }
    }
}
