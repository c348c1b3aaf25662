//! The player's flood fill: where the player can walk around the boxes, and into how
//! many separate areas the boxes cut the floor.

use super::Direction;
use super::board::{Board, NONE};
use super::boxes::has_box;

/// A flood fill with generation stamps, so it never clears its array.
#[derive(Clone, Debug, Default)]
pub struct Flood {
    stamp: Vec<u32>,
    generation: u32,
    queue: Vec<u16>,
}

impl Flood {
    /// Marks the squares the player reaches from `start` around `boxes`; returns the
    /// smallest, the region's canonical square.
    pub fn fill(&mut self, board: &Board, boxes: &[u64], start: u16) -> u16 {
        self.begin(board);
        self.spread(board, boxes, start)
    }

    /// The number of separate areas the boxes cut the floor into: the player's area
    /// and the corrals it cannot enter.
    pub fn count_regions(&mut self, board: &Board, boxes: &[u64]) -> u16 {
        self.begin(board);
        let mut regions = 0;
        for square in 0..board.n_squares() as u16 {
            if !has_box(boxes, square) && self.stamp[square as usize] != self.generation {
                self.spread(board, boxes, square);
                regions += 1;
            }
        }
        regions
    }

    /// Starts a new generation: every square unmarked.
    fn begin(&mut self, board: &Board) {
        if self.stamp.len() != board.n_squares() || self.generation == u32::MAX {
            self.stamp = vec![0; board.n_squares()];
            self.generation = 0;
        }
        self.generation += 1;
    }

    /// Marks what the player reaches from `start` in this generation; returns the
    /// smallest square reached.
    fn spread(&mut self, board: &Board, boxes: &[u64], start: u16) -> u16 {
        let generation = self.generation;
        self.queue.clear();
        self.queue.push(start);
        self.stamp[start as usize] = generation;
        let mut smallest = start;
        let mut next = 0;
        while next < self.queue.len() {
            let square = self.queue[next];
            next += 1;
            smallest = smallest.min(square);
            for direction in Direction::ALL {
                let n = board.neighbour(square, direction);
                if n != NONE && self.stamp[n as usize] != generation && !has_box(boxes, n) {
                    self.stamp[n as usize] = generation;
                    self.queue.push(n);
                }
            }
        }
        smallest
    }

    /// Whether the last [`Flood::fill`] reached `square`.
    #[inline]
    pub fn reached(&self, square: u16) -> bool {
        self.stamp[square as usize] == self.generation
    }
}
