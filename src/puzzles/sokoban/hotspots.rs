//! Hotspots, a feature of Festival's FESS (Shoham & Schaeffer, 2020): a box off its
//! goal that stands where it cuts another box off from goals that box could reach
//! with the square free. Moving hotspots aside opens the way for the others.

use super::board::{Board, UNREACHABLE};
use crate::search::{Interrupt, Stop};

/// Boards larger than this (squares² × goals) get no hotspot table: building it would
/// cost more than a small level's whole search.
const MAX_WORK: usize = 10_000_000;

/// Which square, holding a box, blocks a box on which other square: computed once per
/// level on an otherwise empty board.
pub struct Hotspots {
    n: usize,
    /// Bit `p * n + b`: with a box on `b`, a box on `p` reaches fewer goals.
    blocks: Vec<u64>,
}

impl Hotspots {
    /// `None` for boards too large to tabulate (see [`MAX_WORK`]); polls `interrupt`
    /// per blocker square.
    pub fn new(board: &Board, interrupt: &Interrupt) -> Result<Option<Hotspots>, Stop> {
        let n = board.n_squares();
        let goals = board.goals();
        if n * n * goals.len().max(1) > MAX_WORK {
            return Ok(None);
        }
        let blocker_work = (n * goals.len().max(1)) as u32;
        let reachable = |distance: &dyn Fn(usize) -> u16| {
            (0..goals.len())
                .filter(|&g| distance(g) != UNREACHABLE)
                .count()
        };
        let free: Vec<usize> = (0..n as u16)
            .map(|p| reachable(&|g| board.distance(g, p)))
            .collect();
        let mut blocks = vec![0u64; (n * n).div_ceil(64)];
        let mut rows = vec![UNREACHABLE; goals.len() * n];
        let mut queue = Vec::with_capacity(n);
        for blocker in 0..n as u16 {
            if board.is_goal(blocker) || board.is_dead(blocker) {
                continue;
            }
            interrupt.poll(blocker_work)?;
            rows.fill(UNREACHABLE);
            for (g, &goal) in goals.iter().enumerate() {
                board.pull_from(goal, blocker, &mut rows[g * n..(g + 1) * n], &mut queue);
            }
            for p in 0..n {
                let square = p as u16;
                if square == blocker || board.is_goal(square) || board.is_dead(square) {
                    continue;
                }
                if reachable(&|g| rows[g * n + p]) < free[p] {
                    let bit = p * n + blocker as usize;
                    blocks[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        Ok(Some(Hotspots { n, blocks }))
    }

    /// Whether a box on `blocker` cuts a box on `square` off from some goal.
    #[inline]
    fn blocks(&self, square: u16, blocker: u16) -> bool {
        let bit = square as usize * self.n + blocker as usize;
        self.blocks[bit / 64] >> (bit % 64) & 1 == 1
    }

    /// The boxes (squares in `boxes`) that block another box.
    pub fn count(&self, boxes: &[u16]) -> u16 {
        boxes
            .iter()
            .filter(|&&blocker| {
                boxes
                    .iter()
                    .any(|&other| other != blocker && self.blocks(other, blocker))
            })
            .count() as u16
    }
}
