//! Corral deadlocks (Festival's `corral_deadlock`, YASS): a corral the player cannot
//! enter is tried on its own. Every box outside it is lifted off the board, which only
//! frees squares, so any push of a corral box that is legal in the real position is
//! legal here too; a small breadth-first search over the corral's pushes then looks
//! for a way to open it (the player reaches a square inside) or to put all its boxes on
//! goals. If the whole space runs out first, no real solution exists either: the
//! position is dead. The search is bounded, and its verdicts are cached by the corral's
//! boxes and the player's area, the whole of what they depend on, in the job's
//! [`Learned`] deadlocks; a dead corral, shrunk to the boxes its proof needs, is kept
//! there as a pattern too.

use std::collections::HashSet;

use rustc_hash::FxBuildHasher;

use super::Direction;
use super::board::{Board, NONE};
use super::boxes::{BoxSet, flip, has_box, squares, words};
use super::deadlock::freeze_deadlock;
use super::flood::Flood;
use super::learned::{Corral, Learned};
use crate::search::{Interrupt, Stop};

/// Positions one corral search may visit before it gives up and says "not proved".
const NODE_LIMIT: usize = 400;
/// Corrals with more boxes than this are not tried: their searches rarely finish.
const MAX_BOXES: usize = 12;

#[derive(Default)]
pub struct CorralSearch {
    seen: HashSet<Corral, FxBuildHasher>,
    queue: Vec<Corral>,
    flood: Flood,
    normalise: Flood,
    frozen: Vec<u16>,
    interior: Vec<u16>,
}

impl CorralSearch {
    /// Whether the corral made of `boxes` around the empty squares `interior` can be
    /// proved never to open nor finish, the player standing on `player` outside it. A
    /// search the interrupt cuts short proves nothing and is not cached. With `learn`,
    /// a dead corral is kept as a pattern too.
    pub fn is_deadlock(
        &mut self,
        board: &Board,
        (boxes, interior): (&[u16], &[u16]),
        player: u16,
        (learned, learn): (&mut Learned, bool),
        interrupt: &Interrupt,
    ) -> bool {
        if boxes.len() > MAX_BOXES || interior.is_empty() {
            return false;
        }
        let mut start: BoxSet = smallvec::smallvec![0; words(board)];
        for &b in boxes {
            flip(&mut start, b);
        }
        let area = self.flood.fill(board, &start, player);
        let key = (start, area);
        if let Some(dead) = learned.verdict(&key) {
            return dead;
        }
        self.interior.clear();
        self.interior.extend_from_slice(interior);
        let Ok(dead) = self.exhausts(board, &key, interrupt) else {
            return false;
        };
        learned.remember(key.clone(), dead);
        // A group already all on goals is dead only for want of its interior's empty
        // goal, which another position may fill: no pattern.
        if learn && dead && boxes.iter().any(|&b| !board.is_goal(b)) {
            let pattern = self.shrink(board, key.0, player, interrupt);
            self.flood.fill(board, &pattern, player);
            learned.learn(board, &pattern, &self.flood);
        }
        dead
    }

    /// The dead group `boxes` with every box left out whose absence its proof
    /// survives, one box at a time; the interrupt ends the shrinking early.
    fn shrink(
        &mut self,
        board: &Board,
        mut boxes: BoxSet,
        player: u16,
        interrupt: &Interrupt,
    ) -> BoxSet {
        let members: smallvec::SmallVec<[u16; MAX_BOXES]> = squares(&boxes).collect();
        for square in members {
            flip(&mut boxes, square);
            let off_goal = squares(&boxes).any(|b| !board.is_goal(b));
            let area = self.flood.fill(board, &boxes, player);
            let opened = self.interior.iter().any(|&s| self.flood.reached(s));
            let candidate = (boxes, area);
            let proved = off_goal
                && !opened
                && matches!(self.exhausts(board, &candidate, interrupt), Ok(true));
            boxes = candidate.0;
            if !proved {
                flip(&mut boxes, square);
            }
            if interrupt.tripped().is_some() {
                break;
            }
        }
        boxes
    }

    /// Breadth-first over the corral's pushes from `start`: true when every position
    /// was seen without the corral opening or filling, within the node limit.
    fn exhausts(
        &mut self,
        board: &Board,
        start: &Corral,
        interrupt: &Interrupt,
    ) -> Result<bool, Stop> {
        self.seen.clear();
        self.queue.clear();
        self.seen.insert(start.clone());
        self.queue.push(start.clone());
        let mut next = 0;
        while next < self.queue.len() {
            if next >= NODE_LIMIT {
                return Ok(false);
            }
            interrupt.poll(board.n_squares() as u32)?;
            let (boxes, player) = self.queue[next].clone();
            next += 1;
            self.flood.fill(board, &boxes, player);
            if self.interior.iter().any(|&s| self.flood.reached(s)) {
                return Ok(false);
            }
            for square in squares(&boxes).collect::<smallvec::SmallVec<[u16; 16]>>() {
                for direction in Direction::ALL {
                    let to = board.neighbour(square, direction);
                    let from = board.neighbour(square, direction.opposite());
                    if to == NONE
                        || from == NONE
                        || has_box(&boxes, to)
                        || board.is_dead(to)
                        || !self.flood.reached(from)
                    {
                        continue;
                    }
                    let mut pushed = boxes.clone();
                    flip(&mut pushed, square);
                    flip(&mut pushed, to);
                    if freeze_deadlock(board, &pushed, to, &mut self.frozen) {
                        continue;
                    }
                    if squares(&pushed).all(|b| board.is_goal(b)) {
                        return Ok(false);
                    }
                    let area = self.normalise.fill(board, &pushed, square);
                    let key = (pushed, area);
                    if self.seen.insert(key.clone()) {
                        self.queue.push(key);
                    }
                }
            }
        }
        Ok(true)
    }
}
