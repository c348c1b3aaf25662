//! 2048 for jobs and the command line: the searches by name, one move's search under its
//! limits, and whole games played a move at a time (playouts), every record replayed by
//! the validator before it is returned. The shipped network is loaded once.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::games::twenty48::game::{Evaluator, Heuristic, Objective, Twenty48};
use crate::games::twenty48::ntuple::Network;
use crate::games::twenty48::{Board, Dir, GameRecord, Shape, Step, replay};
use crate::search::game::{GameReport, best_first, exact, expectimax, greedy};
use crate::search::rng::Rng;
use crate::search::{Budget, CancelFlag, Limits, Stop};

#[cfg(doc)]
use super::AlgorithmChoice;

mod job;

pub use job::{GameOutcome, GameProgress, GameSpec, GameTask, run_game};

/// The game-tree searches; their names are [`AlgorithmChoice`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameAlgorithm {
    BestFirst,
    Expectimax,
    Exact,
    Greedy,
}

/// The network trained by `puzzled train 2048` and shipped in `data/`.
const SHIPPED_NETWORK: &[u8] = include_bytes!("../../../data/2048.ntuple");

/// The shipped network, read once; `None` if the file in the binary were damaged.
pub fn shipped_network() -> Option<&'static Network> {
    static NETWORK: OnceLock<Option<Network>> = OnceLock::new();
    NETWORK
        .get_or_init(|| Network::from_bytes(SHIPPED_NETWORK).ok())
        .as_ref()
}

/// The estimate searches use: the network on 4×4 boards, the hand-written one elsewhere
/// (and if no network loads).
#[derive(Clone, Copy)]
pub struct Estimate(Option<&'static Network>);

impl Estimate {
    pub fn shipped() -> Estimate {
        Estimate(shipped_network())
    }

    /// Another network's estimate (one being trained or compared).
    pub fn network(network: &'static Network) -> Estimate {
        Estimate(Some(network))
    }

    /// The hand-written estimate alone.
    pub fn hand_written() -> Estimate {
        Estimate(None)
    }
}

impl Evaluator for Estimate {
    fn afterstate(&self, shape: Shape, board: Board) -> f64 {
        match self.0 {
            Some(network) => network.afterstate(shape, board),
            None => Heuristic.afterstate(shape, board),
        }
    }
}

/// One search from `board` within `budget`; `on_answer` hears the root's answer as it
/// improves.
pub fn search(
    game: &Twenty48<Estimate>,
    board: Board,
    algorithm: GameAlgorithm,
    budget: &mut Budget,
    on_answer: &mut dyn FnMut(&crate::search::game::Answer<Dir>),
) -> GameReport<Dir> {
    match algorithm {
        GameAlgorithm::Greedy => greedy(game, &board, budget),
        GameAlgorithm::Exact => exact::solve(game, &board, budget),
        GameAlgorithm::Expectimax => expectimax::search(
            game,
            &board,
            expectimax::DEFAULT_CUTOFF,
            u32::MAX,
            budget,
            on_answer,
        ),
        GameAlgorithm::BestFirst => best_first::search(
            game,
            &board,
            best_first::Preferences::default(),
            budget,
            1024,
            on_answer,
        ),
    }
}

/// A game played to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct Playout {
    pub record: GameRecord,
    pub score: u64,
    pub max_tile: u64,
    pub moves: usize,
    pub elapsed: Duration,
    /// Nodes expanded by all the moves' searches.
    pub nodes: u64,
    /// Why the game stopped before its end (a cancel, the job's deadline or nodes).
    pub stop: Option<Stop>,
}

impl Playout {
    pub fn moves_per_second(&self) -> f64 {
        self.moves as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// What a playout plays: where it starts, its spawns' seed, and each move's search.
#[derive(Clone, Copy)]
pub struct Play {
    pub estimate: Estimate,
    pub shape: Shape,
    pub objective: Objective,
    /// `None` starts from two tiles the seed places.
    pub start: Option<Board>,
    pub seed: u64,
    pub algorithm: GameAlgorithm,
    /// Each move's own budget.
    pub per_move: Limits,
}

/// A playout's state after each move, for progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayedSoFar {
    pub moves: usize,
    pub score: u64,
    pub max_tile: u64,
    pub nodes: u64,
    pub elapsed: Duration,
}

/// Plays `play` to the game's end, each move searched within its own budget; `whole`
/// bounds the game (its deadline from now, its nodes in all, each move's memory) and
/// `cancel` stops it. `on_move` hears each move. The record is replayed before it is
/// returned.
pub fn playout(
    play: &Play,
    whole: Limits,
    cancel: &CancelFlag,
    on_move: &mut dyn FnMut(&PlayedSoFar),
) -> Playout {
    let started = Instant::now();
    let shape = play.shape;
    let game = Twenty48 {
        shape,
        objective: play.objective,
        evaluator: play.estimate,
    };
    let mut rng = Rng::new(play.seed);
    let start = play.start.unwrap_or_else(|| shape.start(&mut rng));
    let deadline = whole.timeout.map(|t| started + t);
    let mut board = start;
    let mut steps = Vec::new();
    let mut so_far = PlayedSoFar {
        moves: 0,
        score: 0,
        max_tile: shape.max_tile(start),
        nodes: 0,
        elapsed: Duration::ZERO,
    };
    let stop = loop {
        if cancel.is_cancelled() {
            break Some(Stop::Cancelled);
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            break Some(Stop::TimeLimit);
        }
        let nodes_left = whole.max_nodes.map(|n| n.saturating_sub(so_far.nodes));
        if nodes_left == Some(0) {
            break Some(Stop::NodeLimit);
        }
        let limits = Limits {
            timeout: smaller(play.per_move.timeout, left),
            max_nodes: smaller(play.per_move.max_nodes, nodes_left),
            max_memory_bytes: smaller(play.per_move.max_memory_bytes, whole.max_memory_bytes),
        };
        let mut budget = Budget::new(limits, cancel.clone());
        let report = search(&game, board, play.algorithm, &mut budget, &mut |_| {});
        so_far.nodes += report.stats.nodes_expanded;
        let Some(dir) = report.answer.best else {
            break None;
        };
        let (after, gained) = shape.slide(board, dir).expect("the search's move is legal");
        let spawn = shape
            .spawn(after, &mut rng)
            .expect("a move leaves a cell empty");
        board = shape.set(after, spawn.cell, spawn.exponent);
        steps.push(Step { dir, spawn });
        so_far.moves += 1;
        so_far.score += u64::from(gained);
        so_far.max_tile = shape.max_tile(board);
        so_far.elapsed = started.elapsed();
        on_move(&so_far);
    };
    let played = replay(shape, start, &steps).expect("a game the engine played replays");
    Playout {
        score: played.score,
        max_tile: played.max_tile,
        moves: played.moves,
        record: GameRecord {
            shape,
            start,
            steps,
        },
        elapsed: started.elapsed(),
        nodes: so_far.nodes,
        stop,
    }
}

/// The tighter of two optional limits.
fn smaller<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use crate::games::twenty48::ntuple::TUPLES;

    #[test]
    fn the_shipped_network_loads_with_the_current_tuples() {
        let network = super::shipped_network().expect("data/2048.ntuple loads");
        assert_eq!(network.tuples(), TUPLES);
    }
}
