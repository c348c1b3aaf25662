//! 2048 on boards of 2×2 to 4×4: a board packed in a `u64` (a nibble a cell holding the
//! tile's exponent, 16 bits a row), moves by row tables ([`rows`]), spawns (a 2 with
//! probability 0.9, else a 4, on an empty cell chosen uniformly), seeded games, and the
//! replay of a game record ([`replay`]). The standard rules: a move must change the
//! board, each tile merges at most once a move, the score is the sum of merged tiles.

pub mod game;
pub mod ntuple;
mod replay;
mod rows;
pub mod train;

pub use replay::{GameRecord, Played, ReplayError, Step, replay};
pub use rows::MAX_EXPONENT;

use crate::search::rng::Rng;

crate::named_enum! {
    /// Where the tiles slide.
    pub enum Dir {
        Up = "up",
        Down = "down",
        Left = "left",
        Right = "right",
    }
}

/// Board sides: 2 to 4 rows and columns.
pub const MIN_SIDE: usize = 2;
pub const MAX_SIDE: usize = 4;
/// Chance that a spawned tile is a 2 (else a 4).
pub const TWO_PROBABILITY: f64 = 0.9;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    rows: usize,
    cols: usize,
}

/// A board: cell (r, c) is the nibble at bit `16 r + 4 c`, 0 for empty, else the tile's
/// exponent (1 for a 2, 11 for 2048).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Board(pub u64);

/// A tile placed after a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spawn {
    /// Row-major index.
    pub cell: usize,
    /// 1 for a 2, 2 for a 4.
    pub exponent: u8,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("a {rows}x{cols} board is outside 2x2 to 4x4")]
    Size { rows: usize, cols: usize },
    #[error("a {rows}x{cols} board has {expected} cells, not {got}")]
    CellCount {
        rows: usize,
        cols: usize,
        expected: usize,
        got: usize,
    },
    #[error("cell {index} holds {value}, which is not 0 or a power of two from 2 to 32768")]
    Tile { index: usize, value: u64 },
}

impl Shape {
    pub fn new(rows: usize, cols: usize) -> Result<Shape, BoardError> {
        let side = MIN_SIDE..=MAX_SIDE;
        if side.contains(&rows) && side.contains(&cols) {
            Ok(Shape { rows, cols })
        } else {
            Err(BoardError::Size { rows, cols })
        }
    }

    pub fn rows(self) -> usize {
        self.rows
    }

    pub fn cols(self) -> usize {
        self.cols
    }

    pub fn cells(self) -> usize {
        self.rows * self.cols
    }

    fn shift(self, cell: usize) -> u32 {
        (16 * (cell / self.cols) + 4 * (cell % self.cols)) as u32
    }

    /// The exponent at row-major `cell`.
    pub fn get(self, board: Board, cell: usize) -> u8 {
        ((board.0 >> self.shift(cell)) & 0xF) as u8
    }

    pub fn set(self, board: Board, cell: usize, exponent: u8) -> Board {
        let shift = self.shift(cell);
        Board((board.0 & !(0xF << shift)) | (u64::from(exponent) << shift))
    }

    /// A board from tile values, row by row (0 for empty).
    pub fn board(self, values: &[u64]) -> Result<Board, BoardError> {
        if values.len() != self.cells() {
            return Err(BoardError::CellCount {
                rows: self.rows,
                cols: self.cols,
                expected: self.cells(),
                got: values.len(),
            });
        }
        let mut board = Board(0);
        for (index, &value) in values.iter().enumerate() {
            let exponent = match value {
                0 => 0,
                v if v.is_power_of_two() && (2..=1 << MAX_EXPONENT).contains(&v) => {
                    v.trailing_zeros() as u8
                }
                _ => return Err(BoardError::Tile { index, value }),
            };
            board = self.set(board, index, exponent);
        }
        Ok(board)
    }

    /// Tile values, row by row (0 for empty).
    pub fn values(self, board: Board) -> Vec<u64> {
        (0..self.cells())
            .map(|cell| match self.get(board, cell) {
                0 => 0,
                e => 1 << e,
            })
            .collect()
    }

    pub fn empty_cells(self, board: Board) -> impl Iterator<Item = usize> {
        (0..self.cells()).filter(move |&cell| self.get(board, cell) == 0)
    }

    /// The largest tile's exponent (0 on an empty board).
    pub fn max_exponent(self, board: Board) -> u8 {
        (0..self.cells())
            .map(|cell| self.get(board, cell))
            .max()
            .unwrap_or(0)
    }

    /// The largest tile's value, 0 on an empty board.
    pub fn max_tile(self, board: Board) -> u64 {
        match self.max_exponent(board) {
            0 => 0,
            e => 1 << e,
        }
    }

    /// The board after sliding toward `dir`, and the move's score; `None` when nothing
    /// moves (the move is illegal).
    pub fn slide(self, board: Board, dir: Dir) -> Option<(Board, u32)> {
        let (lines, width, toward_start) = match dir {
            Dir::Left => (self.rows, self.cols, true),
            Dir::Right => (self.rows, self.cols, false),
            Dir::Up => (self.cols, self.rows, true),
            Dir::Down => (self.cols, self.rows, false),
        };
        let table = rows::table(width);
        let table = if toward_start {
            &table.toward_start
        } else {
            &table.toward_end
        };
        let mut out = board.0;
        let mut score = 0;
        for line in 0..lines {
            score += match dir {
                Dir::Left | Dir::Right => {
                    let shift = 16 * line;
                    let row = ((board.0 >> shift) & 0xFFFF) as u16;
                    let (new, gained) = table[usize::from(row)];
                    out = (out & !(0xFFFF << shift)) | (u64::from(new) << shift);
                    gained
                }
                Dir::Up | Dir::Down => {
                    // A column as a row: its cell r at nibble r.
                    let mut column = 0u16;
                    for r in 0..self.rows {
                        column |= (((board.0 >> (16 * r + 4 * line)) & 0xF) as u16) << (4 * r);
                    }
                    let (new, gained) = table[usize::from(column)];
                    for r in 0..self.rows {
                        let shift = 16 * r + 4 * line;
                        let nibble = u64::from((new >> (4 * r)) & 0xF);
                        out = (out & !(0xF << shift)) | (nibble << shift);
                    }
                    gained
                }
            };
        }
        (out != board.0).then_some((Board(out), score))
    }

    /// The legal moves, each with its afterstate and score.
    pub fn moves(self, board: Board) -> impl Iterator<Item = (Dir, Board, u32)> {
        Dir::ALL
            .iter()
            .filter_map(move |&dir| self.slide(board, dir).map(|(b, s)| (dir, b, s)))
    }

    /// Every board a spawn on `after` can make, with its probability.
    pub fn spawns(self, after: Board, out: &mut Vec<(f64, Board)>) {
        out.clear();
        let empty: Vec<usize> = self.empty_cells(after).collect();
        let each = 1.0 / empty.len() as f64;
        for &cell in &empty {
            out.push((each * TWO_PROBABILITY, self.set(after, cell, 1)));
            out.push((each * (1.0 - TWO_PROBABILITY), self.set(after, cell, 2)));
        }
    }

    /// A random spawn on `after`; `None` when it is full.
    pub fn spawn(self, after: Board, rng: &mut Rng) -> Option<Spawn> {
        let empty: Vec<usize> = self.empty_cells(after).collect();
        if empty.is_empty() {
            return None;
        }
        let cell = empty[rng.below(empty.len())];
        let exponent = if rng.chance(TWO_PROBABILITY) { 1 } else { 2 };
        Some(Spawn { cell, exponent })
    }

    /// A new game's board: two spawns on an empty board.
    pub fn start(self, rng: &mut Rng) -> Board {
        let mut board = Board(0);
        for _ in 0..2 {
            if let Some(s) = self.spawn(board, rng) {
                board = self.set(board, s.cell, s.exponent);
            }
        }
        board
    }
}

#[cfg(test)]
mod tests;
