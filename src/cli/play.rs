//! `puzzled play 2048`: one seeded game played to its end by a game search, each move
//! within its budget; the final board and the score, or (`--json`) the game record as
//! the service returns it, replayed before it is printed.

use std::time::Duration;

use clap::Args;
use puzzled::games::twenty48::game::Objective;
use puzzled::games::twenty48::{Board, Shape};
use puzzled::http::wire::{PlayoutView, RequestError};
use puzzled::jobs::game::{Estimate, Play, playout};
use puzzled::search::{CancelFlag, Limits};

use super::CliError;
use super::bench_game::game_algorithm;

/// Each move's time when no budget is given.
const DEFAULT_MS_PER_MOVE: u64 = 50;

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// The game
    #[arg(value_parser = ["2048"])]
    pub game: String,
    /// The start's and the spawns' seed: the same seed and a node budget play the same game
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Time each move's search may take (50 when neither budget is given)
    #[arg(long)]
    pub ms_per_move: Option<u64>,
    /// Nodes each move's search may expand
    #[arg(long)]
    pub nodes_per_move: Option<u64>,
    /// The search: best-first, expectimax (the default), exact or greedy
    #[arg(long)]
    pub algorithm: Option<String>,
    #[arg(long, default_value_t = 4)]
    pub rows: usize,
    #[arg(long, default_value_t = 4)]
    pub cols: usize,
    /// Print the game record as JSON
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: PlayArgs) -> Result<i32, CliError> {
    let shape = Shape::new(args.rows, args.cols).map_err(RequestError::from)?;
    let algorithm = game_algorithm(args.algorithm.as_deref())?;
    let ms = match (args.ms_per_move, args.nodes_per_move) {
        (None, None) => Some(DEFAULT_MS_PER_MOVE),
        (ms, _) => ms,
    };
    let play = Play {
        estimate: Estimate::shipped(),
        shape,
        objective: Objective::Score,
        start: None,
        seed: args.seed,
        algorithm,
        per_move: Limits {
            max_nodes: args.nodes_per_move,
            timeout: ms.map(Duration::from_millis),
            max_memory_bytes: None,
        },
    };
    let mut hear = |so_far: &puzzled::jobs::game::PlayedSoFar| {
        if !args.json && so_far.moves % 1000 == 0 {
            eprintln!(
                "{} moves, score {}, largest tile {}",
                so_far.moves, so_far.score, so_far.max_tile
            );
        }
    };
    let game = playout(&play, Limits::default(), &CancelFlag::new(), &mut hear);
    if args.json {
        let mut view = serde_json::to_value(PlayoutView::from(&game))?;
        view["seed"] = args.seed.into();
        println!("{view}");
    } else {
        let end = puzzled::games::twenty48::replay(shape, game.record.start, &game.record.steps)
            .map_err(|e| CliError::Replay(e.to_string()))?;
        print!("{}", board_text(shape, end.board));
        println!(
            "seed {}: score {}, largest tile {}, {} moves, {:.0} moves/s",
            args.seed,
            game.score,
            game.max_tile,
            game.moves,
            game.moves_per_second()
        );
    }
    Ok(0)
}

/// The board as rows of right-aligned tiles, `.` for empty.
fn board_text(shape: Shape, board: Board) -> String {
    let values = shape.values(board);
    values
        .chunks(shape.cols())
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .map(|&v| match v {
                    0 => format!("{:>6}", "."),
                    v => format!("{v:>6}"),
                })
                .collect();
            cells.concat() + "\n"
        })
        .collect()
}
