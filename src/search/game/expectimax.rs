//! Depth-limited expectimax, deepened one move at a time so it is anytime: max (or min)
//! at decision vertices, the probability-weighted mean at chance vertices, static
//! estimates at the depth limit and below chance lines less likely than a cut-off, and a
//! transposition table for chance vertices. An iteration that used no estimate is exact,
//! and ends the search.

use std::collections::HashMap;
use std::mem::size_of;
use std::time::{Duration, Instant};

use super::{Answer, Choice, Game, GameReport, better, expand_moves, greedy};
use crate::search::{Budget, Stop};

/// Chance lines less likely than this are estimated, not searched.
pub const DEFAULT_CUTOFF: f64 = 1e-4;
/// The table is cleared past this many bytes (or half the memory cap, if less).
const TABLE_BYTES: u64 = 256 << 20;

struct Expectimax<'g, G: Game> {
    game: &'g G,
    cutoff: f64,
    /// Chance vertices valued, by state and depth left, with whether the value rests
    /// on an estimate.
    table: HashMap<(G::State, u32), (f64, bool)>,
    table_cap: u64,
    move_bufs: Vec<Vec<Choice<G>>>,
    outcome_bufs: Vec<Vec<(f64, G::State)>>,
    /// Whether this iteration used a static estimate anywhere.
    estimated: bool,
}

impl<G: Game> Expectimax<'_, G> {
    fn decision(
        &mut self,
        s: &G::State,
        depth: u32,
        p: f64,
        budget: &mut Budget,
    ) -> Result<f64, Stop> {
        budget.expand()?;
        let moves = expand_moves(self.game, &mut self.move_bufs, s, budget);
        let side = self.game.side(s);
        let best = moves.iter().try_fold(None, |best, &(_, reward, after)| {
            let v = if depth == 0 {
                self.estimated = true;
                self.game.estimate(&after)
            } else {
                self.chance(&after, depth, p, budget)?
            };
            Ok(better(side, best, reward + v))
        });
        // The buffer goes back before a stop is passed up.
        self.move_bufs.push(moves);
        Ok(best?.unwrap_or_else(|| self.game.final_value(s)))
    }

    /// Afterstate `a` reached with probability `p`, `depth` moves left to search.
    fn chance(
        &mut self,
        a: &G::State,
        depth: u32,
        p: f64,
        budget: &mut Budget,
    ) -> Result<f64, Stop> {
        if p < self.cutoff {
            self.estimated = true;
            return Ok(self.game.estimate(a));
        }
        if let Some(&(v, estimated)) = self.table.get(&(*a, depth)) {
            self.estimated |= estimated;
            return Ok(v);
        }
        // Whether this vertex's own subtree uses an estimate.
        let above = std::mem::take(&mut self.estimated);
        let mut outcomes = self.outcome_bufs.pop().unwrap_or_default();
        outcomes.clear();
        self.game.outcomes(a, &mut outcomes);
        let value = outcomes.iter().try_fold(0.0, |sum, &(q, next)| {
            Ok(sum + q * self.decision(&next, depth - 1, p * q, budget)?)
        });
        self.outcome_bufs.push(outcomes);
        let estimated = self.estimated;
        self.estimated |= above;
        let value = value?;
        if self.table.len() as u64 * entry_bytes::<G::State>() > self.table_cap {
            self.table.clear();
        }
        self.table.insert((*a, depth), (value, estimated));
        Ok(value)
    }
}

fn entry_bytes<S>() -> u64 {
    (size_of::<S>() + size_of::<u32>() + size_of::<(f64, bool)>() + 16) as u64
}

/// Expectimax from `root`, one move deeper each iteration from the greedy answer up,
/// until the budget stops it, an iteration is exact, or `max_depth` is done. Each
/// completed iteration's answer goes to `on_answer`. Under a deadline, an iteration that
/// would not finish in time (judged by how fast the last ones grew) is not begun: its
/// work would be thrown away.
pub fn search<G: Game>(
    game: &G,
    root: &G::State,
    cutoff: f64,
    max_depth: u32,
    budget: &mut Budget,
    on_answer: &mut dyn FnMut(&Answer<G::Move>),
) -> GameReport<G::Move> {
    let mut report = greedy(game, root, budget);
    on_answer(&report.answer);
    if report.stop.is_some() || report.answer.best.is_none() {
        return report;
    }
    let mut search = Expectimax {
        game,
        cutoff,
        table: HashMap::new(),
        table_cap: budget
            .limits()
            .max_memory_bytes
            .map_or(TABLE_BYTES, |m| (m / 2).min(TABLE_BYTES)),
        move_bufs: Vec::new(),
        outcome_bufs: Vec::new(),
        estimated: false,
    };
    let mut moves = Vec::new();
    game.moves(root, &mut moves);
    let mut last: Option<Duration> = None;
    for depth in 1..=max_depth {
        let began = Instant::now();
        search.estimated = false;
        let mut values = Vec::with_capacity(moves.len());
        for &(m, reward, after) in &moves {
            match search.chance(&after, depth, 1.0, budget) {
                Ok(v) => values.push((m, reward + v)),
                Err(stop) => {
                    report.stop = Some(stop);
                    report.stats = budget.finish();
                    return report;
                }
            }
        }
        let exact = !search.estimated;
        let over = game.final_value(root);
        report.answer = Answer::choose(game.side(root), values, depth, exact, over);
        on_answer(&report.answer);
        if exact {
            break;
        }
        let took = began.elapsed();
        let growth = last.map_or(MIN_GROWTH, |before| {
            (took.as_secs_f64() / before.as_secs_f64().max(1e-9)).clamp(MIN_GROWTH, MAX_GROWTH)
        });
        if let Err(stop) = budget.check_time_for(took.mul_f64(growth)) {
            report.stop = Some(stop);
            break;
        }
        last = Some(took);
    }
    report.stats = budget.finish();
    report
}

/// Bounds on how much longer an iteration is taken to be than the one before.
const MIN_GROWTH: f64 = 2.0;
const MAX_GROWTH: f64 = 16.0;
