//! The game-tree engine: search over trees of decision vertices (a side chooses a move)
//! and chance vertices (outcomes with probabilities), for one side against chance (2048)
//! or two sides and chance (Pig). Generic over a [`Game`]; the same [`Budget`] (nodes,
//! deadline, memory, cancel, progress) as the puzzle engine. Every search is anytime:
//! the [`Answer`] it returns is its best so far when the budget stops it.
//!
//! - [`best_first`]: the seed's heap-ordered best-first search over decision and chance
//!   vertices, grown one vertex at a time.
//! - [`exact`]: full expansion with memoisation: the game's value, proved, for games
//!   whose states cannot recur (2048).
//! - [`iterate`]: value iteration over every reachable state: the game's value to a
//!   tolerance, for games whose states recur (Pig).
//! - [`expectimax`]: depth-limited expectimax with a transposition table and a
//!   probability cut-off, deepened one move at a time.

pub mod best_first;
pub mod exact;
pub mod expectimax;
pub mod iterate;

use std::fmt::Debug;
use std::hash::Hash;

use super::{Budget, Stats, Stop};

/// Who chooses at a decision vertex: values are the first side's, so `Max` takes the
/// largest and `Min` the smallest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Max,
    Min,
}

/// What a game offers the engine. Decision states lead by moves to chance states (an
/// afterstate: the move made, chance yet to act), which lead by outcomes to decision
/// states. A move without chance leads to a chance state with one outcome.
pub trait Game {
    type State: Copy + Eq + Hash + Debug;
    type Move: Copy + Eq + Debug;

    /// Who chooses at decision state `s`.
    fn side(&self, s: &Self::State) -> Side;
    /// The moves at `s`, each with its reward and afterstate; none when the game is over.
    fn moves(&self, s: &Self::State, out: &mut Vec<(Self::Move, f64, Self::State)>);
    /// The value of a decision state where the game is over.
    fn final_value(&self, s: &Self::State) -> f64;
    /// The outcomes of afterstate `a`: probabilities that sum to 1, and decision states.
    fn outcomes(&self, a: &Self::State, out: &mut Vec<(f64, Self::State)>);
    /// A static estimate of the value to come after afterstate `a`.
    fn estimate(&self, a: &Self::State) -> f64;
}

/// A move, its reward and its afterstate.
pub type Choice<G> = (<G as Game>::Move, f64, <G as Game>::State);

/// A search's answer at the root: the best move and the value of every legal one.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer<M> {
    /// `None` when the game is over at the root.
    pub best: Option<M>,
    /// The root's value for its side to move.
    pub value: f64,
    /// Each legal move's value (its reward included), in the game's move order.
    pub move_values: Vec<(M, f64)>,
    /// Moves searched in full below the root before static estimates were used.
    pub depth: u32,
    /// The values are the game's own, proved by full expansion.
    pub exact: bool,
}

/// A finished search: its last answer, why it stopped early (if it did), and its work.
#[derive(Clone, Debug)]
pub struct GameReport<M> {
    pub answer: Answer<M>,
    pub stop: Option<Stop>,
    pub stats: Stats,
}

/// The moves at `s`, into a buffer taken from `bufs` (to be given back), counted as
/// generated: how the recursive searches expand a decision state without allocating.
fn expand_moves<G: Game>(
    game: &G,
    bufs: &mut Vec<Vec<Choice<G>>>,
    s: &G::State,
    budget: &mut Budget,
) -> Vec<Choice<G>> {
    let mut moves = bufs.pop().unwrap_or_default();
    moves.clear();
    game.moves(s, &mut moves);
    budget.generated(moves.len());
    moves
}

/// The better of `best` so far and `value` for `side`.
fn better(side: Side, best: Option<f64>, value: f64) -> Option<f64> {
    Some(match (best, side) {
        (None, _) => value,
        (Some(b), Side::Max) => b.max(value),
        (Some(b), Side::Min) => b.min(value),
    })
}

impl<M: Copy> Answer<M> {
    /// The answer whose move values are `values`, for `side`.
    fn choose(side: Side, values: Vec<(M, f64)>, depth: u32, exact: bool, over: f64) -> Self {
        let best = values.iter().copied().reduce(|a, b| match side {
            Side::Max if b.1 > a.1 => b,
            Side::Min if b.1 < a.1 => b,
            _ => a,
        });
        Answer {
            best: best.map(|(m, _)| m),
            value: best.map_or(over, |(_, v)| v),
            move_values: values,
            depth,
            exact,
        }
    }
}

/// The greedy answer: each move's reward plus the estimate of its afterstate. It costs
/// one expansion, so every search has it before its budget can stop it.
pub fn greedy<G: Game>(game: &G, root: &G::State, budget: &mut Budget) -> GameReport<G::Move> {
    let mut moves = Vec::new();
    game.moves(root, &mut moves);
    let stop = budget.expand().err();
    budget.generated(moves.len());
    let values = moves
        .iter()
        .map(|&(m, reward, after)| (m, reward + game.estimate(&after)))
        .collect();
    let answer = Answer::choose(
        game.side(root),
        values,
        0,
        moves.is_empty(),
        game.final_value(root),
    );
    GameReport {
        answer,
        stop,
        stats: budget.finish(),
    }
}

#[cfg(test)]
mod tests;
