//! `puzzled bench --game 2048`: seeded games played to their end, each move searched
//! within a budget; a line per game and a summary with the mean and median scores and
//! the share of games that reached each tile from 2048 to 32768.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use puzzled::games::twenty48::Shape;
use puzzled::games::twenty48::game::Objective;
use puzzled::games::twenty48::ntuple::Network;
use puzzled::jobs::game::{Estimate, GameAlgorithm, Play, Playout, playout};
use puzzled::jobs::{AlgorithmChoice, PuzzleKind};
use puzzled::search::{CancelFlag, Limits};

use super::CliError;
use super::bench::BenchArgs;

/// The tiles whose reach the summary counts.
const REACH: [u64; 5] = [2048, 4096, 8192, 16384, 32768];

pub fn run(args: &BenchArgs) -> Result<i32, CliError> {
    let algorithm = game_algorithm(args.search.algorithm.as_deref())?;
    let per_move = Limits {
        max_nodes: args.nodes_per_move,
        timeout: args.ms_per_move.map(Duration::from_millis),
        max_memory_bytes: None,
    };
    let estimate = match &args.network {
        None if args.hand_written => Estimate::hand_written(),
        None => Estimate::shipped(),
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|error| CliError::Read {
                path: path.display().to_string(),
                error,
            })?;
            let network = Network::from_bytes(&bytes).map_err(|e| CliError::Network {
                path: path.display().to_string(),
                why: e.to_string(),
            })?;
            // Read once for the whole run, which ends with the process.
            Estimate::network(Box::leak(Box::new(network)))
        }
    };
    let shape = Shape::new(4, 4).expect("4x4");
    let next = AtomicU64::new(0);
    let results: Mutex<Vec<(u64, Playout)>> = Mutex::new(Vec::new());
    let cancel = CancelFlag::new();
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= args.games as u64 {
                        break;
                    }
                    let seed = args.seed + i;
                    let play = Play {
                        estimate,
                        shape,
                        objective: Objective::Score,
                        start: None,
                        seed,
                        algorithm,
                        per_move,
                    };
                    let game = playout(&play, Limits::default(), &cancel, &mut |_| {});
                    let line = serde_json::json!({
                        "seed": seed,
                        "score": game.score,
                        "max_tile": game.max_tile,
                        "moves": game.moves,
                        "moves_per_second": (game.moves_per_second() * 10.0).round() / 10.0,
                    });
                    if args.json {
                        println!("{line}");
                    } else {
                        println!(
                            "seed {seed}: score {}, max tile {}, {} moves, {:.0} moves/s",
                            game.score,
                            game.max_tile,
                            game.moves,
                            game.moves_per_second()
                        );
                    }
                    results.lock().expect("lock").push((seed, game));
                }
            });
        }
    });
    let results = results.into_inner().expect("lock");
    let mut scores: Vec<u64> = results.iter().map(|(_, g)| g.score).collect();
    scores.sort_unstable();
    let n = scores.len().max(1) as f64;
    let reach: serde_json::Map<String, serde_json::Value> = REACH
        .iter()
        .map(|&t| {
            let share = results.iter().filter(|(_, g)| g.max_tile >= t).count() as f64 / n;
            (t.to_string(), serde_json::json!(share))
        })
        .collect();
    let median = scores.get(scores.len() / 2).copied().unwrap_or(0);
    let summary = serde_json::json!({"summary": {
        "games": results.len(),
        "algorithm": AlgorithmChoice::from(algorithm).name(),
        "mean_score": scores.iter().sum::<u64>() as f64 / n,
        "median_score": median,
        "reach": reach,
    }});
    println!("{summary}");
    Ok(0)
}

/// A game search by name; none is expectimax.
pub fn game_algorithm(name: Option<&str>) -> Result<GameAlgorithm, CliError> {
    let Some(name) = name else {
        return Ok(GameAlgorithm::Expectimax);
    };
    AlgorithmChoice::parse(name)
        .and_then(AlgorithmChoice::game)
        .ok_or_else(|| CliError::GameAlgorithm {
            name: name.to_string(),
            expected: AlgorithmChoice::names_for(PuzzleKind::Twenty48)[1..].join(", "),
        })
}
