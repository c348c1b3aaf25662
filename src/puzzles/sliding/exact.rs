//! Complete distance tables for small boards (at most 9 cells, so the 8-puzzle):
//! a breadth-first search back from the goal gives every reachable state's exact
//! distance, and a search guided by it walks straight down an optimal path.

use std::sync::atomic::{AtomicBool, Ordering};

use super::pdb::STOP_CHECK_INTERVAL;
use super::{Geometry, MAX_CELLS, Move};
use crate::framing::{frame, unframe};

pub const MAX_EXACT_CELLS: usize = 9;
const UNREACHABLE: u8 = u8::MAX;
const EXACT_MAGIC: &[u8; 8] = b"PZLDEXA1";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExactError {
    #[error("exact tables cover boards of at most {MAX_EXACT_CELLS} cells; this one has {0}")]
    BoardTooLarge(usize),
    #[error("stored table is damaged or for another goal")]
    Damaged,
    #[error("the build was stopped")]
    Stopped,
}

/// Lehmer rank of a full permutation of `0..cells.len()`.
#[inline]
pub fn permutation_rank(cells: &[u8]) -> usize {
    let n = cells.len();
    let mut used = 0u32;
    let mut index = 0usize;
    for (i, &tile) in cells.iter().enumerate() {
        let smaller_used = (used & ((1u32 << tile) - 1)).count_ones() as usize;
        index = index * (n - i) + tile as usize - smaller_used;
        used |= 1 << tile;
    }
    index
}

fn permutation_unrank(mut index: usize, out: &mut [u8]) {
    let n = out.len();
    let mut digits = [0usize; MAX_EXACT_CELLS];
    for i in (0..n).rev() {
        digits[i] = index % (n - i);
        index /= n - i;
    }
    let mut used = 0u32;
    for i in 0..n {
        let mut skip = digits[i];
        let mut tile = 0;
        loop {
            if used & (1 << tile) == 0 {
                if skip == 0 {
                    break;
                }
                skip -= 1;
            }
            tile += 1;
        }
        out[i] = tile as u8;
        used |= 1 << tile;
    }
}

/// Exact distance to one goal for every state of one board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactTable {
    geometry: Geometry,
    goal: Vec<u8>,
    distances: Vec<u8>,
    reachable: usize,
}

impl ExactTable {
    /// Memory a build holds at its peak: a byte a state, and the queue (4 bytes for each
    /// of the half that is reachable).
    pub fn build_bytes(geometry: Geometry) -> u128 {
        (1..=geometry.cells() as u128).product::<u128>() * 3
    }

    /// Builds the table; gives up with [`ExactError::Stopped`] soon after `stop` is set.
    pub fn build(
        geometry: Geometry,
        goal: &[u8],
        stop: &AtomicBool,
    ) -> Result<ExactTable, ExactError> {
        let cells = geometry.cells();
        if cells > MAX_EXACT_CELLS {
            return Err(ExactError::BoardTooLarge(cells));
        }
        let size: usize = (1..=cells).product();
        let mut distances = vec![UNREACHABLE; size];
        let mut queue = Vec::with_capacity(size / 2);
        let start = permutation_rank(goal);
        distances[start] = 0;
        queue.push(start as u32);
        let mut board = [0u8; MAX_CELLS];
        let mut head = 0;
        while head < queue.len() {
            if head % STOP_CHECK_INTERVAL == 0 && stop.load(Ordering::Relaxed) {
                return Err(ExactError::Stopped);
            }
            let index = queue[head] as usize;
            head += 1;
            let board = &mut board[..cells];
            permutation_unrank(index, board);
            let blank = board.iter().position(|&t| t == 0).unwrap_or(0);
            let next_distance = distances[index] + 1;
            for step in Move::ALL {
                let Some(target) = geometry.neighbour(blank, step) else {
                    continue;
                };
                board.swap(blank, target);
                let neighbour = permutation_rank(board);
                board.swap(blank, target);
                if distances[neighbour] == UNREACHABLE {
                    distances[neighbour] = next_distance;
                    queue.push(neighbour as u32);
                }
            }
        }
        Ok(ExactTable {
            geometry,
            goal: goal.to_vec(),
            distances,
            reachable: queue.len(),
        })
    }

    /// Exact distance of `board` to the goal, `None` when it cannot reach it.
    #[inline]
    pub fn distance(&self, board: &[u8]) -> Option<u8> {
        let d = self.distances[permutation_rank(board)];
        (d != UNREACHABLE).then_some(d)
    }

    /// States from which the goal can be reached (half of all: 181,440 on 3×3).
    pub fn reachable_states(&self) -> usize {
        self.reachable
    }

    pub fn max_distance(&self) -> u8 {
        self.distances
            .iter()
            .copied()
            .filter(|&d| d != UNREACHABLE)
            .max()
            .unwrap_or(0)
    }

    pub fn memory_bytes(&self) -> usize {
        self.distances.len()
    }

    /// How many reachable states lie at each distance.
    pub fn histogram(&self) -> Vec<usize> {
        let mut counts = vec![0usize; usize::from(self.max_distance()) + 1];
        for &d in self.distances.iter().filter(|&&d| d != UNREACHABLE) {
            counts[usize::from(d)] += 1;
        }
        counts
    }

    fn header(geometry: Geometry, goal: &[u8]) -> Vec<u8> {
        let mut header = vec![geometry.rows as u8, geometry.cols as u8];
        header.extend_from_slice(goal);
        header
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        frame(
            EXACT_MAGIC,
            &Self::header(self.geometry, &self.goal),
            &self.distances,
        )
    }

    pub fn from_bytes(
        bytes: &[u8],
        geometry: Geometry,
        goal: &[u8],
    ) -> Result<ExactTable, ExactError> {
        let distances = unframe(EXACT_MAGIC, &Self::header(geometry, goal), bytes)
            .ok_or(ExactError::Damaged)?;
        let size: usize = (1..=geometry.cells()).product();
        if distances.len() != size {
            return Err(ExactError::Damaged);
        }
        let reachable = distances.iter().filter(|&&d| d != UNREACHABLE).count();
        Ok(ExactTable {
            geometry,
            goal: goal.to_vec(),
            distances: distances.to_vec(),
            reachable,
        })
    }
}
