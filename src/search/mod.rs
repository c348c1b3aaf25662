//! The search engine: generic over a [`Domain`], free of I/O.
//!
//! Map of the main types:
//! - [`Domain`]: what a puzzle must offer (states, successors, a lower bound).
//! - [`Algorithm`]: which search to run; [`solve`] runs it.
//! - [`Budget`]: node limit, deadline, memory cap and a shared cancel flag, checked
//!   every [`CHECK_INTERVAL`] expansions; it also counts [`Stats`] and reports [`Progress`].
//! - [`Report`]: the [`Outcome`] (solved with a [`Solution`], unsolvable, gave up, or
//!   [`Stop`]ped by the budget) plus the statistics gathered so far.

mod best_first;
mod bfs;
mod budget;
mod chunked;
mod ehc;
mod fess;
pub mod game;
mod idastar;
mod node_table;
pub mod rng;

use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

pub use budget::{
    Budget, CHECK_INTERVAL, CancelFlag, Interrupt, Limits, POLL_WORK, Progress, ProgressSink,
};
pub use fess::Sprint;

/// Path cost and heuristic values. Unit moves on the puzzles we serve.
pub type Cost = u32;

/// Where a state stands on a few measures of progress, each lower-is-better; the
/// feature-space search ([`Algorithm::FeatureSpace`]) takes turns among states with
/// equal features.
pub type Features = [u16; 4];

/// A new child of an expansion of the feature-space search, as its advisors see it:
/// the move that made it, its features and estimate, and whether it is advised.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<A> {
    pub action: A,
    pub features: Features,
    pub h: Cost,
    pub advised: bool,
}

/// One successor of a state, produced by [`Domain::expand`].
#[derive(Clone, Debug)]
pub struct Successor<S, A> {
    pub action: A,
    pub state: S,
    pub cost: Cost,
}

/// A search problem. Implementations keep per-state data small: states are cloned
/// into successor buffers and, for the graph searches, stored once in a node table.
pub trait Domain {
    type State: Clone;
    /// Duplicate-detection key; may normalise the state (e.g. a player's region).
    type Key: Eq + Hash;
    type Action: Copy + Debug;

    fn initial_state(&self) -> Self::State;
    fn is_goal(&self, state: &Self::State) -> bool;
    /// Borrowed from the state, so that probing a table never copies a stored state.
    fn key<'s>(&self, state: &'s Self::State) -> &'s Self::Key;
    /// Appends the successors of `state` to `out` (the caller clears and reuses it).
    fn expand(&self, state: &Self::State, out: &mut Vec<Successor<Self::State, Self::Action>>);
    /// [`Domain::expand`] without the successors `known` accepts: it is asked with
    /// each successor's key-equal state and step cost before the domain finishes the
    /// successor (its estimate, its deadlock tests), so domains where that is costly
    /// override this to skip the work for states a search has already stored.
    fn expand_unknown(
        &self,
        state: &Self::State,
        out: &mut Vec<Successor<Self::State, Self::Action>>,
        known: &mut dyn FnMut(&Self::State, Cost) -> bool,
    ) {
        let start = out.len();
        self.expand(state, out);
        let mut index = 0;
        out.retain(|successor| {
            index += 1;
            index <= start || !known(&successor.state, successor.cost)
        });
    }
    /// A lower bound on the cost to the goal, or `None` for a proven dead end.
    fn estimate(&self, state: &Self::State) -> Option<Cost>;
    /// True when `later` undoes `earlier`; depth-first searches skip such moves.
    fn reverses(&self, _earlier: Self::Action, _later: Self::Action) -> bool {
        false
    }
    /// True when the domain can prove, without searching, that no solution exists.
    fn known_unsolvable(&self) -> bool {
        false
    }
    /// True when running out of states proves there is no solution; false when the
    /// domain drops moves that may be needed (then the searches give up instead).
    fn exhaustive(&self) -> bool {
        true
    }
    /// True when [`Domain::estimate`] never overestimates (so A*/IDA* are optimal).
    fn admissible(&self) -> bool {
        true
    }
    /// The state's [`Features`]. By default the estimate alone (saturated), which makes
    /// the feature-space search take turns among estimate levels.
    fn features(&self, state: &Self::State) -> Features {
        let h = self
            .estimate(state)
            .map_or(u16::MAX, |h| h.min(Cost::from(u16::MAX)) as u16);
        [h, 0, 0, 0]
    }
    /// The domain's own advisors for the feature-space search, beside those of its
    /// [`Advice`]: marks the `children` of `parent` (whose features are `features`)
    /// that they name. By default none.
    fn advise(
        &self,
        _parent: &Self::State,
        _features: &Features,
        _children: &mut [Candidate<Self::Action>],
    ) {
    }
    /// Heap bytes each stored state owns beyond its inline size, for the memory cap.
    fn state_heap_bytes(&self) -> usize {
        0
    }
    /// Where its searches set out from. A domain that searches back from the goal
    /// ([`Origin::Goal`]) takes turns with forward ones in [`solve_interleaved`], which
    /// joins the two where they meet and turns its half around with [`Domain::undo`].
    fn origin(&self) -> Origin {
        Origin::Start
    }
    /// For a domain searching from the goal: the forward action that undoes `action`
    /// (never asked of a forward domain).
    fn undo(&self, action: Self::Action) -> Self::Action {
        action
    }
}

/// Where a search sets out from ([`Domain::origin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The initial state, toward the goal: the actions are the plan.
    Start,
    /// The goal, toward the initial state: the plan is the actions undone, in reverse.
    Goal,
}

/// Weight on the heuristic, in percent: 100 is plain A*/IDA*; more trades
/// optimality for speed (the plan is then at most weight/100 times optimal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weight(u32);

impl Weight {
    pub const ONE: Weight = Weight(100);

    /// `percent` below 100 is raised to 100: lighter weights buy nothing.
    pub fn from_percent(percent: u32) -> Weight {
        Weight(percent.max(100))
    }

    pub fn percent(self) -> u32 {
        self.0
    }

    /// The priority `100·g + weight·h`, scaled so weights stay integral.
    #[inline]
    fn f(self, g: Cost, h: Cost) -> u64 {
        100 * u64::from(g) + u64::from(self.0) * u64::from(h)
    }
}

/// The searches the engine offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    IdaStar {
        weight: Weight,
    },
    AStar {
        weight: Weight,
    },
    BreadthFirst,
    GreedyBestFirst,
    EnforcedHillClimbing,
    /// FESS: turns among cells of equal [`Domain::features`].
    FeatureSpace {
        advice: Advice,
    },
}

/// Which children of an expansion the feature-space search takes at no weight: the
/// moves it follows first, however long the plan gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Festival's advisors: per feature, the one child that improves it (without
    /// worsening the first, the main one) and ranks best overall.
    BestPerFeature,
    /// Every child that improves any feature: broader, and faster on easy levels.
    EveryImprovement,
}

impl Algorithm {
    /// Whether a solution found by this algorithm is optimal, given an admissible
    /// heuristic and unit action costs.
    pub fn guarantees_optimal(self) -> bool {
        match self {
            Algorithm::IdaStar { weight } | Algorithm::AStar { weight } => weight == Weight::ONE,
            Algorithm::BreadthFirst => true,
            Algorithm::GreedyBestFirst
            | Algorithm::EnforcedHillClimbing
            | Algorithm::FeatureSpace { .. } => false,
        }
    }
}

/// A plan as a sequence of domain actions and its total cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution<A> {
    pub actions: Vec<A>,
    pub cost: Cost,
}

/// Why the budget stopped a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Cancelled,
    NodeLimit,
    TimeLimit,
    MemoryLimit,
}

impl Stop {
    /// A nonzero byte per stop, for [`Interrupt`]'s shared latch.
    fn code(self) -> u8 {
        match self {
            Stop::Cancelled => 1,
            Stop::NodeLimit => 2,
            Stop::TimeLimit => 3,
            Stop::MemoryLimit => 4,
        }
    }

    fn from_code(code: u8) -> Option<Stop> {
        match code {
            1 => Some(Stop::Cancelled),
            2 => Some(Stop::NodeLimit),
            3 => Some(Stop::TimeLimit),
            4 => Some(Stop::MemoryLimit),
            _ => None,
        }
    }
}

/// How a search ended. "No solution" is an outcome, not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<A> {
    Solved(Solution<A>),
    /// The whole reachable space was searched (or the domain proved it) without a goal.
    Unsolvable,
    /// An incomplete search (hill-climbing) reached a dead end.
    GaveUp,
    Stopped(Stop),
}

/// Counters every search keeps; a stopped search still reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    /// Distinct states stored; `None` for IDA*, which stores none.
    pub unique_states: Option<u64>,
    /// Final IDA* threshold (in moves, unweighted searches) or deepest BFS layer.
    pub bound: Option<Cost>,
    pub elapsed: Duration,
}

#[derive(Clone, Debug)]
pub struct Report<A> {
    pub outcome: Outcome<A>,
    pub stats: Stats,
    /// True when the plan is proved optimal: an optimal algorithm, an admissible heuristic.
    pub proved_optimal: bool,
}

/// Runs `algorithm` on `domain` under `budget`.
pub fn solve<D: Domain>(
    domain: &D,
    algorithm: Algorithm,
    budget: &mut Budget,
) -> Report<D::Action> {
    if domain.known_unsolvable() {
        return unsolvable(budget);
    }
    let outcome = match algorithm {
        Algorithm::IdaStar { weight } => idastar::search(domain, weight, budget),
        Algorithm::AStar { weight } => {
            best_first::search(domain, best_first::Priority::AStar(weight), None, budget)
        }
        Algorithm::GreedyBestFirst => {
            best_first::search(domain, best_first::Priority::Greedy, None, budget)
        }
        Algorithm::BreadthFirst => bfs::search(domain, budget),
        Algorithm::EnforcedHillClimbing => ehc::search(domain, budget),
        Algorithm::FeatureSpace { advice } => fess::search(domain, advice, budget),
    };
    finish(domain, outcome, algorithm.guarantees_optimal(), budget)
}

/// A\* for a plan cheaper than `cost` (one is known): `Solved` is then the optimum,
/// proved when the domain is admissible; `Unsolvable` says that none is cheaper, so the
/// known plan is optimal.
pub fn solve_below<D: Domain>(domain: &D, cost: Cost, budget: &mut Budget) -> Report<D::Action> {
    if domain.known_unsolvable() {
        return unsolvable(budget);
    }
    let a_star = best_first::Priority::AStar(Weight::ONE);
    let outcome = best_first::search(domain, a_star, Some(cost), budget);
    finish(domain, outcome, true, budget)
}

/// Feature-space searches over `searches` (a domain, its advice and its weight each)
/// taking turns in this thread under one budget, after the `sprint` search alone if
/// one is given; see [`fess::interleave`]. Returns the
/// report and the index of the search that ended it.
pub fn solve_interleaved<D: Domain>(
    searches: &[(&D, Advice, u32)],
    sprint: Option<Sprint>,
    budget: &mut Budget,
) -> (Report<D::Action>, usize) {
    if let Some(known) = searches.iter().position(|s| s.0.known_unsolvable()) {
        return (unsolvable(budget), known);
    }
    let (outcome, last) = fess::interleave(searches, sprint, budget);
    (finish(searches[last].0, outcome, false, budget), last)
}

/// The report for a domain that proves, without searching, that no solution exists.
fn unsolvable<A>(budget: &mut Budget) -> Report<A> {
    Report {
        outcome: Outcome::Unsolvable,
        stats: budget.finish(),
        proved_optimal: false,
    }
}

/// The report on a search's `outcome`, with no verdict a cut-short expansion or a
/// non-exhaustive domain could have drawn wrongly.
fn finish<D: Domain>(
    domain: &D,
    outcome: Outcome<D::Action>,
    guarantees_optimal: bool,
    budget: &mut Budget,
) -> Report<D::Action> {
    // The engines stop after any expansion the interrupt cut short; this makes sure no
    // verdict drawn after one survives: a truncated expansion proves nothing.
    let interrupted = budget.cut_short().err();
    let outcome = match (outcome, interrupted) {
        (Outcome::Unsolvable | Outcome::GaveUp, Some(stop)) => Outcome::Stopped(stop),
        (Outcome::Unsolvable, None) if !domain.exhaustive() => Outcome::GaveUp,
        (outcome, _) => outcome,
    };
    let proved_optimal = matches!(outcome, Outcome::Solved(_))
        && interrupted.is_none()
        && guarantees_optimal
        && domain.admissible();
    Report {
        outcome,
        stats: budget.finish(),
        proved_optimal,
    }
}

#[cfg(test)]
mod interleave_tests;
#[cfg(test)]
mod tests;
