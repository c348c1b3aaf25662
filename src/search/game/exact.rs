//! Exact values by full expansion with memoisation: every decision and chance state
//! valued once. For games whose states cannot recur (2048: every move adds a tile's
//! worth to the board), and boards small enough to enumerate. Stopped by the budget, it
//! answers greedily, not exactly. It recurses a frame a move: a line longer than
//! [`MAX_PLY`] moves stops it as a memory limit (the thread's stack), where a 4×4 game's
//! thousands of moves would overflow it.

use std::collections::HashMap;
use std::mem::size_of;

use super::{Answer, Choice, Game, GameReport, better, expand_moves, greedy};
use crate::search::{Budget, Stop};

/// The deepest line the search follows: a few hundred bytes of stack a move, well inside
/// a worker thread's 2 MiB, in debug builds too. Boards exact solving can finish (2×2,
/// 2×3) end far sooner.
pub const MAX_PLY: u32 = 1_000;

/// Bytes a memoised value takes, the map's own overhead included (roughly).
fn entry_bytes<S>() -> u64 {
    (size_of::<S>() + size_of::<f64>() + 16) as u64
}

struct Exact<'g, G: Game> {
    game: &'g G,
    decisions: HashMap<G::State, f64>,
    chances: HashMap<G::State, f64>,
    /// Buffers for the moves and outcomes of the states being valued, reused.
    move_bufs: Vec<Vec<Choice<G>>>,
    outcome_bufs: Vec<Vec<(f64, G::State)>>,
    /// The most moves below the root on any line valued.
    deepest: u32,
}

impl<G: Game> Exact<'_, G> {
    fn held(&self) -> u64 {
        (self.decisions.capacity() + self.chances.capacity()) as u64 * entry_bytes::<G::State>()
    }

    fn decision(&mut self, s: &G::State, ply: u32, budget: &mut Budget) -> Result<f64, Stop> {
        if let Some(&v) = self.decisions.get(s) {
            return Ok(v);
        }
        self.deepest = self.deepest.max(ply);
        if ply > MAX_PLY {
            return Err(Stop::MemoryLimit);
        }
        budget.expand()?;
        let moves = expand_moves(self.game, &mut self.move_bufs, s, budget);
        let side = self.game.side(s);
        let best = moves.iter().try_fold(None, |best, &(_, reward, after)| {
            Ok(better(
                side,
                best,
                reward + self.chance(&after, ply + 1, budget)?,
            ))
        });
        // The buffer goes back before a stop is passed up.
        self.move_bufs.push(moves);
        let value = best?.unwrap_or_else(|| self.game.final_value(s));
        self.decisions.insert(*s, value);
        if self.decisions.len() % 1024 == 0 {
            budget.check_memory(self.held())?;
        }
        Ok(value)
    }

    fn chance(&mut self, a: &G::State, ply: u32, budget: &mut Budget) -> Result<f64, Stop> {
        if let Some(&v) = self.chances.get(a) {
            return Ok(v);
        }
        let mut outcomes = self.outcome_bufs.pop().unwrap_or_default();
        outcomes.clear();
        self.game.outcomes(a, &mut outcomes);
        let value = outcomes.iter().try_fold(0.0, |sum, &(p, next)| {
            Ok(sum + p * self.decision(&next, ply, budget)?)
        });
        self.outcome_bufs.push(outcomes);
        let value = value?;
        self.chances.insert(*a, value);
        Ok(value)
    }
}

/// The exact value of `root` and of each of its moves.
pub fn solve<G: Game>(game: &G, root: &G::State, budget: &mut Budget) -> GameReport<G::Move> {
    let mut exact = Exact {
        game,
        decisions: HashMap::new(),
        chances: HashMap::new(),
        move_bufs: Vec::new(),
        outcome_bufs: Vec::new(),
        deepest: 0,
    };
    let mut moves = Vec::new();
    game.moves(root, &mut moves);
    let mut values = Vec::with_capacity(moves.len());
    for &(m, reward, after) in &moves {
        match exact.chance(&after, 1, budget) {
            Ok(v) => values.push((m, reward + v)),
            Err(stop) => {
                let mut report = greedy(game, root, budget);
                report.stop = Some(stop);
                return report;
            }
        }
    }
    let over = game.final_value(root);
    let answer = Answer::choose(game.side(root), values, exact.deepest, true, over);
    GameReport {
        answer,
        stop: None,
        stats: budget.finish(),
    }
}
