//! Learning the n-tuple network on afterstates from self-play (Szubert and Jaśkowski
//! 2014): the player moves greedily on reward plus the afterstate's value, and each
//! afterstate's value is moved toward the next move's reward plus the next afterstate's
//! value (0 when the game ends). How far it moves is the [`Learning`] rule's: TD(0) at
//! one rate, or temporal coherence, each weight at its own rate (Jaśkowski 2016).
//! Reproducible from its seed.

use std::time::{Duration, Instant};

use super::ntuple::Network;
use super::{Board, Shape};
use crate::search::rng::Rng;
use crate::search::{Interrupt, Stop};

crate::named_enum! {
    /// How a step toward a target is shared out among the weights a board reads.
    pub enum Learning {
        /// Temporal coherence (Beal and Smith 1999, Jaśkowski 2016): each weight's step
        /// is the rate times its own |E| / A, where E sums the weight's past steps and A
        /// their sizes, so weights whose errors keep one sign learn fast and those whose
        /// errors cancel settle.
        Tc = "tc",
        /// TD(0): every weight at the one rate.
        Td = "td",
    }
}

impl Learning {
    /// What the rule does, in a line (`puzzled train --help`).
    pub fn summary(self) -> &'static str {
        match self {
            Learning::Tc => {
                "Temporal coherence: each weight at its own rate, which falls as its errors cancel"
            }
            Learning::Td => "TD(0): every weight at the one rate",
        }
    }

    /// The rate unless told: temporal coherence's base rate, which its weights' own
    /// rates scale down as they settle; TD's step, large while the network is new.
    pub fn default_rate(self) -> f64 {
        match self {
            Learning::Tc => 1.0,
            Learning::Td => 0.1,
        }
    }
}

/// How to train: games of self-play from a seed, under a learning rule at a rate.
#[derive(Clone, Copy, Debug)]
pub struct Training {
    pub games: usize,
    pub seed: u64,
    pub learning: Learning,
    /// The step toward each target, shared among the network's features (see
    /// [`Learning::default_rate`]; smaller to fine-tune).
    pub rate: f64,
}

/// Games per progress report.
pub const REPORT_EVERY: usize = 1000;

/// How a game went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameResult {
    pub score: u64,
    pub max_tile: u64,
    pub moves: u64,
}

/// Training so far: games played, and how the last [`REPORT_EVERY`] went.
#[derive(Clone, Copy, Debug)]
pub struct TrainProgress {
    pub games: usize,
    pub mean_score: f64,
    /// Share of the window's games that reached 2048.
    pub reached_2048: f64,
    pub elapsed: Duration,
}

fn the_4x4() -> Shape {
    Shape::new(4, 4).expect("4x4 is a board")
}

/// The greedy move at `board`: the one with the most reward plus afterstate value.
fn greedy(shape: Shape, network: &Network, board: Board) -> Option<(Board, u32)> {
    shape
        .moves(board)
        .map(|(_, after, reward)| (after, reward, f64::from(reward) + network.value(after)))
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(after, reward, _)| (after, reward))
}

/// A learning rule with what it keeps between steps.
enum Learner {
    Td {
        rate: f64,
    },
    /// Per weight, the sum of its steps and the sum of their sizes (in `f64`: they grow
    /// for the whole run, and in `f32` a long run's small steps would stop counting).
    Tc {
        rate: f64,
        coherence: Vec<Coherence>,
    },
}

#[derive(Clone, Copy, Default)]
struct Coherence {
    error: f64,
    absolute: f64,
}

impl Learner {
    fn new(network: &Network, learning: Learning, rate: f64) -> Learner {
        match learning {
            Learning::Td => Learner::Td { rate },
            Learning::Tc => Learner::Tc {
                rate,
                coherence: vec![Coherence::default(); network.n_weights()],
            },
        }
    }

    /// Moves `board`'s value toward `target`.
    fn learn(&mut self, network: &mut Network, board: Board, target: f64) {
        let error = target - network.value(board);
        let n_features = network.n_features() as f64;
        match self {
            Learner::Td { rate } => {
                let each = (*rate * error / n_features) as f32;
                network.update(board, |_, weight| *weight += each);
            }
            Learner::Tc { rate, coherence } => {
                let each = error / n_features;
                network.update(board, |i, weight| {
                    let c = &mut coherence[i];
                    // A weight not yet moved takes the whole rate.
                    let own = if c.absolute > 0.0 {
                        c.error.abs() / c.absolute
                    } else {
                        1.0
                    };
                    *weight += (*rate * own * each) as f32;
                    c.error += each;
                    c.absolute += each.abs();
                });
            }
        }
    }
}

/// One game, greedy on the network, learning from it when `learner` is given.
fn play(network: &mut Network, rng: &mut Rng, mut learner: Option<&mut Learner>) -> GameResult {
    let shape = the_4x4();
    let mut board = shape.start(rng);
    let mut previous: Option<Board> = None;
    let mut result = GameResult {
        score: 0,
        max_tile: 0,
        moves: 0,
    };
    loop {
        let Some((after, reward)) = greedy(shape, network, board) else {
            if let (Some(learner), Some(p)) = (learner.as_deref_mut(), previous) {
                learner.learn(network, p, 0.0);
            }
            break;
        };
        if let (Some(learner), Some(p)) = (learner.as_deref_mut(), previous) {
            let target = f64::from(reward) + network.value(after);
            learner.learn(network, p, target);
        }
        previous = Some(after);
        result.score += u64::from(reward);
        result.moves += 1;
        let spawn = shape.spawn(after, rng).expect("a move leaves a cell empty");
        board = shape.set(after, spawn.cell, spawn.exponent);
    }
    result.max_tile = shape.max_tile(board);
    result
}

/// A game played greedily on `network`, from `seed`, without learning.
pub fn play_greedy(network: &Network, seed: u64) -> GameResult {
    let mut network = network.clone();
    play(&mut network, &mut Rng::new(seed), None)
}

/// Trains `network` as `training` says, polling `interrupt` between games; `progress`
/// hears every [`REPORT_EVERY`] games. Temporal coherence starts its sums afresh, even
/// on a network trained before.
pub fn train(
    network: &mut Network,
    training: &Training,
    interrupt: &Interrupt,
    progress: &mut dyn FnMut(&TrainProgress),
) -> Result<(), Stop> {
    let started = Instant::now();
    let mut rng = Rng::new(training.seed);
    let mut learner = Learner::new(network, training.learning, training.rate);
    let (mut window_score, mut window_2048) = (0u64, 0usize);
    for game in 1..=training.games {
        interrupt.check()?;
        let result = play(network, &mut rng, Some(&mut learner));
        window_score += result.score;
        window_2048 += usize::from(result.max_tile >= 2048);
        if game % REPORT_EVERY == 0 || game == training.games {
            let n = (game - 1) % REPORT_EVERY + 1;
            progress(&TrainProgress {
                games: game,
                mean_score: window_score as f64 / n as f64,
                reached_2048: window_2048 as f64 / n as f64,
                elapsed: started.elapsed(),
            });
            (window_score, window_2048) = (0, 0);
        }
    }
    Ok(())
}
