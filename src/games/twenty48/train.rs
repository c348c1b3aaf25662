//! Learning the n-tuple network by TD(0) on afterstates from self-play (Szubert and
//! Jaśkowski 2014): the player moves greedily on reward plus the afterstate's value, and
//! each afterstate's value is moved toward the next move's reward plus the next
//! afterstate's value (0 when the game ends). Reproducible from its seed.

use std::time::{Duration, Instant};

use super::ntuple::Network;
use super::{Board, Shape};
use crate::search::rng::Rng;
use crate::search::{Interrupt, Stop};

/// The step toward each target, shared among the network's features: large while the
/// network is new, smaller to fine-tune it (`puzzled train --from … --rate 0.01`).
pub const LEARNING_RATE: f64 = 0.1;
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

/// One game, greedy on the network, learning from it when `learn` is set.
fn play(network: &mut Network, rng: &mut Rng, learn: Option<f64>) -> GameResult {
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
            if let (Some(rate), Some(p)) = (learn, previous) {
                network.adjust(p, -rate * network.value(p));
            }
            break;
        };
        if let (Some(rate), Some(p)) = (learn, previous) {
            let target = f64::from(reward) + network.value(after);
            network.adjust(p, rate * (target - network.value(p)));
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

/// Trains `network` for `games` games of self-play from `seed` at learning `rate`,
/// polling `interrupt` between games; `progress` hears every [`REPORT_EVERY`] games.
pub fn train(
    network: &mut Network,
    games: usize,
    seed: u64,
    rate: f64,
    interrupt: &Interrupt,
    progress: &mut dyn FnMut(&TrainProgress),
) -> Result<(), Stop> {
    let started = Instant::now();
    let mut rng = Rng::new(seed);
    let (mut window_score, mut window_2048) = (0u64, 0usize);
    for game in 1..=games {
        interrupt.check()?;
        let result = play(network, &mut rng, Some(rate));
        window_score += result.score;
        window_2048 += usize::from(result.max_tile >= 2048);
        if game % REPORT_EVERY == 0 || game == games {
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
