//! Sliding-tile puzzles on any board from 2×2 to 8×8.
//!
//! Map: [`SlidingPuzzle`] is a validated start and goal; [`Move`] names the direction
//! the blank moves; [`replay`] is the plan validator; [`SlidingDomain`] is the search
//! domain, scored by a [`heuristic::Evaluator`]; [`pdb`] builds additive pattern
//! databases and [`exact`] complete distance tables for boards of up to 9 cells.

pub mod exact;
pub mod heuristic;
pub mod pdb;

use std::fmt;

pub use super::StepError;

pub use heuristic::{Evaluator, SlidingDomain};

/// Largest board side, and so at most 64 cells (one byte per tile, tiles < 64).
pub const MAX_SIDE: usize = 8;
pub const MIN_SIDE: usize = 2;
pub const MAX_CELLS: usize = MAX_SIDE * MAX_SIDE;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    pub rows: usize,
    pub cols: usize,
}

impl Geometry {
    pub fn cells(self) -> usize {
        self.rows * self.cols
    }
    pub fn row(self, cell: usize) -> usize {
        cell / self.cols
    }
    pub fn col(self, cell: usize) -> usize {
        cell % self.cols
    }
    /// The cell the blank reaches from `cell` by `step`, if it stays on the board.
    #[inline]
    pub fn neighbour(self, cell: usize, step: Move) -> Option<usize> {
        match step {
            Move::Up if cell >= self.cols => Some(cell - self.cols),
            Move::Down if cell + self.cols < self.cells() => Some(cell + self.cols),
            Move::Left if cell % self.cols > 0 => Some(cell - 1),
            Move::Right if cell % self.cols + 1 < self.cols => Some(cell + 1),
            _ => None,
        }
    }
    pub fn distance(self, a: usize, b: usize) -> usize {
        self.row(a).abs_diff(self.row(b)) + self.col(a).abs_diff(self.col(b))
    }
    pub fn is_square(self) -> bool {
        self.rows == self.cols
    }
    /// Reflection about the main diagonal (square boards only).
    pub fn transpose(self, cell: usize) -> usize {
        self.col(cell) * self.cols + self.row(cell)
    }
}

/// A move, named by the direction the blank moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Up,
    Down,
    Left,
    Right,
}

impl Move {
    pub const ALL: [Move; 4] = [Move::Up, Move::Down, Move::Left, Move::Right];

    pub fn letter(self) -> char {
        match self {
            Move::Up => 'u',
            Move::Down => 'd',
            Move::Left => 'l',
            Move::Right => 'r',
        }
    }
    pub fn from_letter(letter: char) -> Option<Move> {
        match letter.to_ascii_lowercase() {
            'u' => Some(Move::Up),
            'd' => Some(Move::Down),
            'l' => Some(Move::Left),
            'r' => Some(Move::Right),
            _ => None,
        }
    }
    pub fn opposite(self) -> Move {
        match self {
            Move::Up => Move::Down,
            Move::Down => Move::Up,
            Move::Left => Move::Right,
            Move::Right => Move::Left,
        }
    }
}

/// Writes moves as a plan string such as `"uldr"`.
pub fn plan_text(moves: &[Move]) -> String {
    moves.iter().map(|m| m.letter()).collect()
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("{what}: '{token}' (item {position}) is not a whole number")]
    NotANumber {
        what: &'static str,
        token: String,
        position: usize,
    },
    #[error("{what}: {count} tiles do not form a square board; give the number of columns")]
    NotSquare { what: &'static str, count: usize },
    #[error("{what}: {count} tiles do not fill whole rows of {cols} columns")]
    NotRectangular {
        what: &'static str,
        count: usize,
        cols: usize,
    },
    #[error(
        "{what}: a {rows}x{cols} board is outside the supported sizes {MIN_SIDE}x{MIN_SIDE} to {MAX_SIDE}x{MAX_SIDE}"
    )]
    BadSize {
        what: &'static str,
        rows: usize,
        cols: usize,
    },
    #[error("{what}: has {found} tiles, but the board needs {expected}")]
    WrongCount {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("{what}: tile {tile} is out of range (tiles are 0 to {max}, 0 is the blank)")]
    OutOfRange {
        what: &'static str,
        tile: u64,
        max: usize,
    },
    #[error("{what}: tile {tile} appears more than once")]
    Duplicate { what: &'static str, tile: u8 },
}

/// The goal layout named by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoalSpec {
    /// `1 2 … n-1` then the blank.
    BlankLast,
    /// `0 1 2 … n-1`, Korf's convention.
    BlankFirst,
    Tiles(Vec<u64>),
}

crate::named_enum! {
    /// The goals known by name.
    pub enum GoalName {
        BlankLast = "blank-last",
        BlankFirst = "blank-first",
    }
}

impl From<GoalName> for GoalSpec {
    fn from(name: GoalName) -> GoalSpec {
        match name {
            GoalName::BlankLast => GoalSpec::BlankLast,
            GoalName::BlankFirst => GoalSpec::BlankFirst,
        }
    }
}

impl GoalSpec {
    /// The goal board for `cells` cells, checked to be a permutation.
    pub fn board(&self, cells: usize) -> Result<Vec<u8>, BoardError> {
        Ok(match self {
            GoalSpec::BlankLast => (1..cells as u8).chain([0]).collect(),
            GoalSpec::BlankFirst => (0..cells as u8).collect(),
            GoalSpec::Tiles(goal) => permutation("goal", goal, cells)?,
        })
    }
}

/// A validated puzzle: start and goal are permutations of `0..cells` on one board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlidingPuzzle {
    geometry: Geometry,
    start: Vec<u8>,
    goal: Vec<u8>,
}

/// Parses whitespace- or comma-separated tile numbers.
pub fn parse_tiles(what: &'static str, text: &str) -> Result<Vec<u64>, BoardError> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .enumerate()
        .map(|(i, token)| {
            token.parse::<u64>().map_err(|_| BoardError::NotANumber {
                what,
                token: token.to_string(),
                position: i + 1,
            })
        })
        .collect()
}

fn permutation(what: &'static str, tiles: &[u64], cells: usize) -> Result<Vec<u8>, BoardError> {
    if tiles.len() != cells {
        return Err(BoardError::WrongCount {
            what,
            expected: cells,
            found: tiles.len(),
        });
    }
    let mut seen = [false; MAX_CELLS];
    tiles
        .iter()
        .map(|&tile| {
            if tile >= cells as u64 {
                return Err(BoardError::OutOfRange {
                    what,
                    tile,
                    max: cells - 1,
                });
            }
            let tile = tile as u8;
            if std::mem::replace(&mut seen[tile as usize], true) {
                return Err(BoardError::Duplicate { what, tile });
            }
            Ok(tile)
        })
        .collect()
}

impl SlidingPuzzle {
    /// Validates a start board (row-major, `cols` columns, or square when `None`) and goal.
    pub fn new(
        tiles: &[u64],
        cols: Option<usize>,
        goal: &GoalSpec,
    ) -> Result<SlidingPuzzle, BoardError> {
        let what = "tiles";
        let count = tiles.len();
        let cols = match cols {
            Some(cols) => cols,
            None => {
                let side = (count as f64).sqrt().round() as usize;
                if side * side != count {
                    return Err(BoardError::NotSquare { what, count });
                }
                side
            }
        };
        if cols == 0 || count % cols != 0 {
            return Err(BoardError::NotRectangular { what, count, cols });
        }
        let geometry = Geometry {
            rows: count / cols,
            cols,
        };
        if !(MIN_SIDE..=MAX_SIDE).contains(&geometry.rows)
            || !(MIN_SIDE..=MAX_SIDE).contains(&geometry.cols)
        {
            return Err(BoardError::BadSize {
                what,
                rows: geometry.rows,
                cols: geometry.cols,
            });
        }
        let start = permutation(what, tiles, count)?;
        let goal = goal.board(count)?;
        Ok(SlidingPuzzle {
            geometry,
            start,
            goal,
        })
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }
    pub fn start(&self) -> &[u8] {
        &self.start
    }
    pub fn goal(&self) -> &[u8] {
        &self.goal
    }

    /// Every move swaps the blank with a tile (flipping the permutation's parity) and
    /// moves the blank one step (flipping its distance's parity), so a board can reach
    /// the goal exactly when the two parities agree. This covers odd and even widths.
    pub fn is_solvable(&self) -> bool {
        let cells = self.geometry.cells();
        let mut goal_cell = [0usize; MAX_CELLS];
        for (cell, &tile) in self.goal.iter().enumerate() {
            goal_cell[tile as usize] = cell;
        }
        // Parity of the permutation taking each start cell to its tile's goal cell.
        let mut visited = [false; MAX_CELLS];
        let mut transpositions = 0;
        for first in 0..cells {
            let mut cell = first;
            let mut length = 0usize;
            while !visited[cell] {
                visited[cell] = true;
                cell = goal_cell[self.start[cell] as usize];
                length += 1;
            }
            transpositions += length.saturating_sub(1);
        }
        let blank_start = self.start.iter().position(|&t| t == 0).unwrap_or(0);
        let blank_distance = self.geometry.distance(blank_start, goal_cell[0]);
        transpositions % 2 == blank_distance % 2
    }
}

/// The validator's verdict on a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    pub legal: bool,
    pub solved: bool,
    /// Moves played before the first illegal one (all of them when legal).
    pub length: usize,
    pub error: Option<StepError>,
    /// The board after each legal step, when asked.
    pub boards: Vec<Vec<u8>>,
}

/// Replays `plan` (letters `u d l r`, the blank's direction; case-insensitive) from
/// the puzzle's start and says whether it is legal and reaches the goal.
pub fn replay(puzzle: &SlidingPuzzle, plan: &str, keep_boards: bool) -> Replay {
    let geometry = puzzle.geometry;
    let mut board = puzzle.start.clone();
    let mut blank = board.iter().position(|&t| t == 0).unwrap_or(0);
    let mut boards = Vec::new();
    let mut error = None;
    let mut length = 0;
    for (i, letter) in plan.chars().enumerate() {
        let step = i + 1;
        let Some(direction) = Move::from_letter(letter) else {
            error = Some(StepError {
                step,
                reason: format!("'{letter}' is not a move (use u, d, l, r)"),
            });
            break;
        };
        let Some(target) = geometry.neighbour(blank, direction) else {
            let reason = format!(
                "the blank at row {}, column {} cannot move {direction}",
                geometry.row(blank) + 1,
                geometry.col(blank) + 1
            );
            error = Some(StepError { step, reason });
            break;
        };
        board.swap(blank, target);
        blank = target;
        length += 1;
        if keep_boards {
            boards.push(board.clone());
        }
    }
    Replay {
        legal: error.is_none(),
        solved: error.is_none() && board == puzzle.goal,
        length,
        error,
        boards,
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Move::Up => "up",
            Move::Down => "down",
            Move::Left => "left",
            Move::Right => "right",
        })
    }
}

#[cfg(test)]
mod tests;
