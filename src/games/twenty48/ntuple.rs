//! An n-tuple network for 4×4 boards (Szubert and Jaśkowski 2014): five 4-tuples (two
//! straight lines, three 2×2 squares), each read in all eight symmetries of the board, a
//! weight per arrangement of the four cells' exponents. Its value estimates the score
//! still to come after an afterstate; TD(0) learning is in [`super::train`].

use super::game::Evaluator;
use super::{Board, Shape};

/// The base tuples, row-major cells of a 4×4 board.
const TUPLES: [[usize; 4]; 5] = [
    [0, 1, 2, 3],
    [4, 5, 6, 7],
    [0, 1, 4, 5],
    [1, 2, 5, 6],
    [5, 6, 9, 10],
];
/// Weights a tuple holds: 16 exponents in each of 4 cells.
const TUPLE_WEIGHTS: usize = 1 << 16;
/// Tuples read per board: every base tuple in every symmetry.
pub const FEATURES: usize = TUPLES.len() * 8;
const MAGIC: &[u8; 8] = b"PZ2048N1";

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NetworkError {
    #[error("not a 2048 network of this version, or damaged (its checksum fails)")]
    Damaged,
}

/// The network: weights, and the board's cells each symmetric copy of a tuple reads.
#[derive(Clone)]
pub struct Network {
    weights: Vec<f32>,
    /// For feature `f`, its four cells' bit shifts in the packed board.
    shifts: [[u32; 4]; FEATURES],
}

/// The cell (row, col) maps to under symmetry `s` (0–7: four rotations, each mirrored).
fn symmetric(s: usize, r: usize, c: usize) -> (usize, usize) {
    let (r, c) = if s & 4 != 0 { (r, 3 - c) } else { (r, c) };
    match s & 3 {
        0 => (r, c),
        1 => (c, 3 - r),
        2 => (3 - r, 3 - c),
        _ => (3 - c, r),
    }
}

impl Default for Network {
    fn default() -> Self {
        Network::zero()
    }
}

impl Network {
    /// A network whose every weight is 0.
    pub fn zero() -> Network {
        let mut shifts = [[0u32; 4]; FEATURES];
        for (t, tuple) in TUPLES.iter().enumerate() {
            for s in 0..8 {
                for (i, &cell) in tuple.iter().enumerate() {
                    let (r, c) = symmetric(s, cell / 4, cell % 4);
                    shifts[t * 8 + s][i] = (16 * r + 4 * c) as u32;
                }
            }
        }
        Network {
            weights: vec![0.0; TUPLES.len() * TUPLE_WEIGHTS],
            shifts,
        }
    }

    #[inline]
    fn index(&self, feature: usize, board: Board) -> usize {
        let [a, b, c, d] = self.shifts[feature];
        let nibble = |shift: u32| ((board.0 >> shift) & 0xF) as usize;
        (feature / 8) * TUPLE_WEIGHTS
            + (nibble(a) | nibble(b) << 4 | nibble(c) << 8 | nibble(d) << 12)
    }

    /// The estimated score still to come after afterstate `board` (4×4).
    pub fn value(&self, board: Board) -> f64 {
        (0..FEATURES)
            .map(|f| f64::from(self.weights[self.index(f, board)]))
            .sum()
    }

    /// Moves the value of `board` by `delta`, shared among its features.
    pub fn adjust(&mut self, board: Board, delta: f64) {
        let each = (delta / FEATURES as f64) as f32;
        for f in 0..FEATURES {
            let i = self.index(f, board);
            self.weights[i] += each;
        }
    }

    /// The network as bytes: framed, with a checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        let values: Vec<u8> = self.weights.iter().flat_map(|w| w.to_le_bytes()).collect();
        crate::framing::frame(MAGIC, &header(), &values)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetworkError> {
        let values =
            crate::framing::unframe(MAGIC, &header(), bytes).ok_or(NetworkError::Damaged)?;
        let mut network = Network::zero();
        if values.len() != network.weights.len() * 4 {
            return Err(NetworkError::Damaged);
        }
        for (w, bytes) in network.weights.iter_mut().zip(values.chunks_exact(4)) {
            *w = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        Ok(network)
    }
}

/// What the bytes must be for: the tuples, so a network for others is refused.
fn header() -> Vec<u8> {
    TUPLES.iter().flatten().map(|&c| c as u8).collect()
}

impl Evaluator for Network {
    /// The network on 4×4 boards; other sizes have no network and get the hand-written
    /// estimate.
    fn afterstate(&self, shape: Shape, board: Board) -> f64 {
        if shape.rows() == 4 && shape.cols() == 4 {
            self.value(board)
        } else {
            super::game::Heuristic.afterstate(shape, board)
        }
    }
}
