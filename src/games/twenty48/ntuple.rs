//! An n-tuple network for 4×4 boards (Szubert and Jaśkowski 2014; Jaśkowski 2016): base
//! tuples of cells, each read in all eight symmetries of the board, a weight per
//! arrangement of the tuple's exponents. Its value estimates the score still to come
//! after an afterstate; learning is in [`super::train`].
//!
//! - [`Tuple`]: a base tuple's cells, and how many exponents each cell tells apart.
//! - [`TUPLES`]: the tuples of a new network, five 4-tuples and two 5-tuples.
//! - [`Network`]: the weights of a set of tuples, read from and written to bytes
//!   (`PZ2048N2`, whose header records the tuples; the first version's `PZ2048N1`, the
//!   five 4-tuples alone, is still read).

use super::game::Evaluator;
use super::{Board, Shape};

/// The most cells a tuple has.
const MAX_TUPLE_CELLS: usize = 5;
/// The exponents a 4×4 board holds: 0 (empty) to 15 (32768).
const EXPONENTS: u8 = 16;

/// A base tuple: row-major cells of a 4×4 board, and the exponents each cell tells
/// apart. Exponents from `exponents - 1` up share the top index, which keeps a long
/// tuple's table small: tiles that large are rare, and learned slowly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuple {
    cells: [u8; MAX_TUPLE_CELLS],
    len: u8,
    exponents: u8,
}

impl Tuple {
    const fn new<const N: usize>(cells: [u8; N], exponents: u8) -> Tuple {
        assert!(N >= 1 && N <= MAX_TUPLE_CELLS);
        let mut padded = [0; MAX_TUPLE_CELLS];
        let mut i = 0;
        while i < N {
            padded[i] = cells[i];
            i += 1;
        }
        Tuple {
            cells: padded,
            len: N as u8,
            exponents,
        }
    }

    pub fn cells(&self) -> &[u8] {
        &self.cells[..usize::from(self.len)]
    }

    /// Exponents from 0 to this less one are told apart; larger ones read as it.
    pub fn exponents(&self) -> u8 {
        self.exponents
    }

    /// Its table's size: a weight per arrangement of its cells' exponents.
    pub fn weights(&self) -> usize {
        usize::from(self.exponents).pow(u32::from(self.len))
    }
}

/// The tuples of a new network: two straight lines and three 2×2 squares, each cell
/// telling every tile apart, then two 5-tuples (a row and the cell below its first; three
/// cells of a row and two below), in which tiles from 2048 up share one index: 825,344
/// weights.
pub const TUPLES: [Tuple; 7] = [
    Tuple::new([0, 1, 2, 3], EXPONENTS),
    Tuple::new([4, 5, 6, 7], EXPONENTS),
    Tuple::new([0, 1, 4, 5], EXPONENTS),
    Tuple::new([1, 2, 5, 6], EXPONENTS),
    Tuple::new([5, 6, 9, 10], EXPONENTS),
    Tuple::new([0, 1, 2, 3, 4], 12),
    Tuple::new([0, 1, 2, 4, 5], 12),
];

/// The tuples of the first version's files, `PZ2048N1`: the 4-tuples alone.
const FIRST_VERSION_TUPLES: &[Tuple] = TUPLES.split_at(5).0;
const FIRST_VERSION_MAGIC: &[u8; 8] = b"PZ2048N1";
const MAGIC: &[u8; 8] = b"PZ2048N2";

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NetworkError {
    #[error("not a 2048 network of a version this build reads, or damaged (its checksum fails)")]
    Damaged,
}

/// One symmetric copy of a tuple, as the board is read.
#[derive(Clone, Copy, Debug)]
struct Feature {
    /// Its cells' bit shifts in the packed board, in the tuple's order.
    shifts: [u8; MAX_TUPLE_CELLS],
    len: u8,
    /// The largest exponent told apart; larger ones read as it.
    top: u8,
    /// Where its tuple's weights begin.
    offset: usize,
}

impl Feature {
    /// Its weight's index at `board`: the cells' exponents as digits, the tuple's first
    /// cell the lowest (so 4-tuples of 16 exponents index as the first version did).
    #[inline]
    fn index(&self, board: Board) -> usize {
        let radix = usize::from(self.top) + 1;
        let digits = &self.shifts[..usize::from(self.len)];
        self.offset
            + digits.iter().rev().fold(0, |index, &shift| {
                let exponent = ((board.0 >> shift) & 0xF) as u8;
                index * radix + usize::from(exponent.min(self.top))
            })
    }
}

/// The network: its tuples, their weights, and the features (every tuple in every
/// symmetry) that read them.
#[derive(Clone)]
pub struct Network {
    tuples: Vec<Tuple>,
    features: Vec<Feature>,
    weights: Vec<f32>,
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
    /// A network of [`TUPLES`] whose every weight is 0.
    pub fn zero() -> Network {
        Network::zero_of(&TUPLES)
    }

    /// A network of `tuples` whose every weight is 0.
    fn zero_of(tuples: &[Tuple]) -> Network {
        let mut features = Vec::with_capacity(tuples.len() * 8);
        let mut offset = 0;
        for tuple in tuples {
            for s in 0..8 {
                let mut shifts = [0; MAX_TUPLE_CELLS];
                for (shift, &cell) in shifts.iter_mut().zip(tuple.cells()) {
                    let (r, c) = symmetric(s, usize::from(cell / 4), usize::from(cell % 4));
                    *shift = (16 * r + 4 * c) as u8;
                }
                features.push(Feature {
                    shifts,
                    len: tuple.len,
                    top: tuple.exponents - 1,
                    offset,
                });
            }
            offset += tuple.weights();
        }
        Network {
            tuples: tuples.to_vec(),
            features,
            weights: vec![0.0; offset],
        }
    }

    pub fn tuples(&self) -> &[Tuple] {
        &self.tuples
    }

    /// How many weights it has, over all its tuples.
    pub fn n_weights(&self) -> usize {
        self.weights.len()
    }

    /// How many weights a board's value sums: every tuple in every symmetry.
    pub fn n_features(&self) -> usize {
        self.features.len()
    }

    /// The estimated score still to come after afterstate `board` (4×4).
    pub fn value(&self, board: Board) -> f64 {
        self.features
            .iter()
            .map(|f| f64::from(self.weights[f.index(board)]))
            .sum()
    }

    /// Hands `change` each weight `board`'s value sums, with its index, a feature at a
    /// time (a weight two symmetries read is handed twice).
    pub fn update(&mut self, board: Board, mut change: impl FnMut(usize, &mut f32)) {
        for feature in &self.features {
            let i = feature.index(board);
            change(i, &mut self.weights[i]);
        }
    }

    /// The network as bytes: framed, its tuples in the header, with a checksum.
    pub fn to_bytes(&self) -> Vec<u8> {
        let values: Vec<u8> = self.weights.iter().flat_map(|w| w.to_le_bytes()).collect();
        crate::framing::frame(MAGIC, &header(&self.tuples), &values)
    }

    /// A network from its bytes, of this version or the first.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetworkError> {
        let first_version_header: Vec<u8> = FIRST_VERSION_TUPLES
            .iter()
            .flat_map(|t| t.cells().iter().copied())
            .collect();
        let (tuples, values) =
            match crate::framing::unframe(FIRST_VERSION_MAGIC, &first_version_header, bytes) {
                Some(values) => (FIRST_VERSION_TUPLES.to_vec(), values),
                None => {
                    let (header, values) = crate::framing::unframe_described(MAGIC, bytes)
                        .ok_or(NetworkError::Damaged)?;
                    (tuples_of(header).ok_or(NetworkError::Damaged)?, values)
                }
            };
        // The values' length bounds what the tuples may ask for before it is allocated.
        let n_weights = tuples
            .iter()
            .try_fold(0usize, |n, t| n.checked_add(t.weights()));
        if n_weights.and_then(|n| n.checked_mul(4)) != Some(values.len()) {
            return Err(NetworkError::Damaged);
        }
        let mut network = Network::zero_of(&tuples);
        for (w, bytes) in network.weights.iter_mut().zip(values.chunks_exact(4)) {
            *w = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        Ok(network)
    }
}

/// The header that records `tuples`: for each, its length, its exponents, its cells.
fn header(tuples: &[Tuple]) -> Vec<u8> {
    tuples
        .iter()
        .flat_map(|t| {
            [t.len, t.exponents]
                .into_iter()
                .chain(t.cells().iter().copied())
        })
        .collect()
}

/// The tuples a header records, if it records valid ones: 1 to 5 distinct cells of the
/// 4×4 board, telling 2 to 16 exponents apart.
fn tuples_of(mut header: &[u8]) -> Option<Vec<Tuple>> {
    let mut tuples = Vec::new();
    while let [len, exponents, rest @ ..] = header {
        let len = usize::from(*len);
        if !(1..=MAX_TUPLE_CELLS).contains(&len) || !(2..=EXPONENTS).contains(exponents) {
            return None;
        }
        let (cells, rest) = rest.split_at_checked(len)?;
        let distinct = cells
            .iter()
            .enumerate()
            .all(|(i, c)| *c < 16 && !cells[..i].contains(c));
        if !distinct {
            return None;
        }
        let mut tuple = Tuple::new([0; MAX_TUPLE_CELLS], *exponents);
        tuple.cells[..len].copy_from_slice(cells);
        tuple.len = len as u8;
        tuples.push(tuple);
        header = rest;
    }
    (header.is_empty() && !tuples.is_empty()).then_some(tuples)
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
