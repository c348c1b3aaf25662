//! PI-corral pruning (as in YASS and Sokolution; sokobano.de, "Solver"). A corral is a
//! connected area the player cannot reach, boxes included. If it holds unfinished
//! business (a box off its goal, or an empty goal), some box of it must move before
//! the level is solved; and if no box of it can be pushed out into the player's area
//! (the I condition), the first such push is one of the pushes into the corral that
//! are legal now. Pushes elsewhere cannot touch the corral, so they commute with it:
//! searching only the corral's pushes loses no solution and no push-optimal one. A
//! corral like that with no legal push at all is a deadlock.

use super::Direction;
use super::board::{Board, NONE};
use super::boxes::has_box;
use super::corral_deadlock::CorralSearch;
use super::flood::Flood;
use super::learned::Learned;
use crate::search::Interrupt;

/// What the corral analysis allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No PI-corral: every push stays.
    AllPushes,
    /// Only pushes of the boxes in [`Corrals::boxes`].
    OnlyCorral,
    /// A PI-corral no push can open, or a corral proved dead by [`CorralSearch`].
    Deadlock,
}

/// Which corral tests [`Corrals::analyse`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorralTests {
    pub pi_pruning: bool,
    pub deadlock_search: bool,
    /// Keep each corral the search proves dead as a learned pattern.
    pub learn_patterns: bool,
}

/// Scratch space for the corral search, reused across expansions.
#[derive(Default)]
pub struct Corrals {
    stamp: Vec<u32>,
    generation: u32,
    queue: Vec<u16>,
    members: Vec<u16>,
    /// The boxes of the chosen PI-corral.
    boxes: Vec<u16>,
    interior: Vec<u16>,
    search: CorralSearch,
}

impl Corrals {
    pub fn boxes(&self) -> &[u16] {
        &self.boxes
    }

    /// Looks at every corral of `boxes`, given the player's `region` (filled already,
    /// from `player`): with `tests.pi_pruning` picks the PI-corral with the fewest legal
    /// pushes, with `tests.deadlock_search` tries each corral for a deadlock (asking
    /// and telling the job's `learned` deadlocks). Polls
    /// `interrupt` per corral; cut short, it says [`Verdict::AllPushes`] (the caller
    /// must look at the interrupt).
    pub fn analyse(
        &mut self,
        board: &Board,
        boxes: &[u64],
        (region, player): (&Flood, u16),
        tests: CorralTests,
        learned: &mut Learned,
        interrupt: &Interrupt,
    ) -> Verdict {
        let n = board.n_squares();
        if self.stamp.len() != n || self.generation == u32::MAX {
            self.stamp = vec![0; n];
            self.generation = 0;
        }
        self.generation += 1;
        let generation = self.generation;
        let mut best: Option<usize> = None;
        for start in 0..n as u16 {
            if region.reached(start) || self.stamp[start as usize] == generation {
                continue;
            }
            // The corral: every unreached square connected to `start`, boxes included.
            self.queue.clear();
            self.queue.push(start);
            self.stamp[start as usize] = generation;
            let mut next = 0;
            let mut unfinished = false;
            while next < self.queue.len() {
                let square = self.queue[next];
                next += 1;
                unfinished |= has_box(boxes, square) != board.is_goal(square);
                for direction in Direction::ALL {
                    let s = board.neighbour(square, direction);
                    if s != NONE && !region.reached(s) && self.stamp[s as usize] != generation {
                        self.stamp[s as usize] = generation;
                        self.queue.push(s);
                    }
                }
            }
            if interrupt.poll(self.queue.len() as u32).is_err() {
                return Verdict::AllPushes;
            }
            if !unfinished {
                continue;
            }
            if tests.deadlock_search
                && self.proved_dead(board, boxes, (player, tests), learned, interrupt)
            {
                return Verdict::Deadlock;
            }
            if !tests.pi_pruning {
                continue;
            }
            let Some(pushes) = self.legal_pushes_if_pi(board, boxes, region) else {
                continue;
            };
            if pushes == 0 {
                return Verdict::Deadlock;
            }
            if best.is_none_or(|b| pushes < b) {
                best = Some(pushes);
                self.boxes.clone_from(&self.members);
            }
        }
        match best {
            Some(_) => Verdict::OnlyCorral,
            None => Verdict::AllPushes,
        }
    }

    /// Whether [`CorralSearch`] proves the corral in `queue` dead.
    fn proved_dead(
        &mut self,
        board: &Board,
        boxes: &[u64],
        (player, tests): (u16, CorralTests),
        learned: &mut Learned,
        interrupt: &Interrupt,
    ) -> bool {
        self.members.clear();
        self.interior.clear();
        for &square in &self.queue {
            if has_box(boxes, square) {
                self.members.push(square);
            } else {
                self.interior.push(square);
            }
        }
        let corral = (&self.members[..], &self.interior[..]);
        self.search.is_deadlock(
            board,
            corral,
            player,
            (learned, tests.learn_patterns),
            interrupt,
        )
    }

    /// For the corral in `queue`: `None` if a box of it can be pushed out into the
    /// player's area (onto a live square), else the number of legal pushes into it.
    /// Leaves the corral's boxes in `members`.
    fn legal_pushes_if_pi(
        &mut self,
        board: &Board,
        boxes: &[u64],
        region: &Flood,
    ) -> Option<usize> {
        self.members.clear();
        let mut pushes = 0;
        for &square in &self.queue {
            if !has_box(boxes, square) {
                continue;
            }
            self.members.push(square);
            for direction in Direction::ALL {
                let to = board.neighbour(square, direction);
                let from = board.neighbour(square, direction.opposite());
                if to == NONE || from == NONE || board.is_dead(to) {
                    continue;
                }
                if region.reached(to) {
                    return None;
                }
                if !has_box(boxes, to) && region.reached(from) {
                    pushes += 1;
                }
            }
        }
        Some(pushes)
    }
}
