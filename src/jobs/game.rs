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

crate::named_enum! {
    /// The game-tree searches.
    pub enum GameAlgorithm {
        BestFirst = "best-first",
        Expectimax = "expectimax",
        Exact = "exact",
        Greedy = "greedy",
    }
}

/// The network trained by `puzzled train 2048` and shipped in `data/`.
const SHIPPED_NETWORK: &[u8] = include_bytes!("../../data/2048.ntuple");

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
}

impl Evaluator for Estimate {
    fn afterstate(&self, shape: Shape, board: Board) -> f64 {
        match self.0 {
            Some(network) => network.afterstate(shape, board),
            None => Heuristic.afterstate(shape, board),
        }
    }
}

/// One search from `board` under `limits` and `cancel`.
pub fn search(
    game: &Twenty48<Estimate>,
    board: Board,
    algorithm: GameAlgorithm,
    limits: Limits,
    cancel: &CancelFlag,
    on_answer: &mut dyn FnMut(&crate::search::game::Answer<Dir>),
) -> GameReport<Dir> {
    let mut budget = Budget::new(limits, cancel.clone());
    match algorithm {
        GameAlgorithm::Greedy => greedy(game, &board, &mut budget),
        GameAlgorithm::Exact => exact::solve(game, &board, &mut budget),
        GameAlgorithm::Expectimax => expectimax::search(
            game,
            &board,
            expectimax::DEFAULT_CUTOFF,
            u32::MAX,
            &mut budget,
            on_answer,
        ),
        GameAlgorithm::BestFirst => best_first::search(
            game,
            &board,
            best_first::Preferences::default(),
            &mut budget,
            1024,
            on_answer,
        ),
    }
}

/// A game played to its end.
#[derive(Clone, Debug)]
pub struct Playout {
    pub record: GameRecord,
    pub score: u64,
    pub max_tile: u64,
    pub moves: usize,
    pub elapsed: Duration,
    /// Why the game stopped before its end (a cancel, the job's deadline).
    pub stop: Option<Stop>,
}

impl Playout {
    pub fn moves_per_second(&self) -> f64 {
        self.moves as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Plays a game from `seed` (its start and spawns), each move chosen by `algorithm` on
/// `estimate` within `per_move`; the whole game stops at `deadline` or on `cancel`. The
/// record is replayed before it is returned.
pub fn playout(
    estimate: Estimate,
    shape: Shape,
    seed: u64,
    algorithm: GameAlgorithm,
    per_move: Limits,
    deadline: Option<Instant>,
    cancel: &CancelFlag,
) -> Playout {
    let started = Instant::now();
    let game = Twenty48 {
        shape,
        objective: Objective::Score,
        evaluator: estimate,
    };
    let mut rng = Rng::new(seed);
    let start = shape.start(&mut rng);
    let mut board = start;
    let mut steps = Vec::new();
    let mut stop = None;
    loop {
        if cancel.is_cancelled() {
            stop = Some(Stop::Cancelled);
            break;
        }
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            stop = Some(Stop::TimeLimit);
            break;
        }
        let limits = Limits {
            timeout: match (per_move.timeout, left) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            ..per_move
        };
        let report = search(&game, board, algorithm, limits, cancel, &mut |_| {});
        let Some(dir) = report.answer.best else { break };
        let (after, _) = shape.slide(board, dir).expect("the search's move is legal");
        let spawn = shape
            .spawn(after, &mut rng)
            .expect("a move leaves a cell empty");
        board = shape.set(after, spawn.cell, spawn.exponent);
        steps.push(Step { dir, spawn });
    }
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
        stop,
    }
}
