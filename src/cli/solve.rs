//! `puzzled solve`: one puzzle, given by flags or as a JSON job request.

use std::io::Read;
use std::path::PathBuf;

use clap::Args;
use puzzled::http::wire::{self, JobOutcome, JobRequest};
use puzzled::jobs::resolve::resolve;
use puzzled::jobs::run::{Board, run_resolved};
use puzzled::jobs::{JobReport, JobSpec, JobStatus, PuzzleSpec};
use puzzled::puzzles::sliding::{GoalSpec, parse_tiles};
use puzzled::puzzles::sokoban;
use puzzled::search::{CancelFlag, Weight};

use super::{CliError, SearchArgs, read_text, sliding_puzzle, sokoban_puzzle};

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// A JSON job request file, or - for standard input
    pub request: Option<PathBuf>,
    /// Tiles row-major, 0 the blank, e.g. "8 6 7 2 5 4 3 0 1"
    #[arg(long, conflicts_with = "request")]
    pub tiles: Option<String>,
    /// A Sokoban level or collection file (XSB, run-length XSB, .sok)
    #[arg(long, conflicts_with_all = ["request", "tiles"])]
    pub level: Option<PathBuf>,
    /// Which level of the collection, 1-based
    #[arg(long, default_value_t = 1, requires = "level")]
    pub index: usize,
    /// Columns (default: a square board)
    #[arg(long)]
    pub cols: Option<usize>,
    /// blank-last (default), blank-first, or an explicit tile list
    #[arg(long)]
    pub goal: Option<String>,
    /// List the board after every step
    #[arg(long)]
    pub boards: bool,
    /// Print one JSON object instead of text
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub search: SearchArgs,
}

fn read_request(path: &PathBuf) -> Result<JobRequest, CliError> {
    let mut text = String::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(path).map(|t| text = t)
    };
    read.map_err(|error| CliError::Read {
        path: path.display().to_string(),
        error,
    })?;
    Ok(serde_json::from_str(&text)?)
}

pub fn run(args: SolveArgs) -> Result<i32, CliError> {
    let spec = match (&args.request, &args.tiles) {
        (Some(path), _) => read_request(path)?.into_spec()?,
        (None, None) if args.level.is_some() => {
            let path = args.level.as_ref().ok_or(CliError::NoPuzzle)?;
            let levels = sokoban::read_collection(&read_text(path)?);
            let count = levels.len();
            let level = levels
                .into_iter()
                .nth(args.index.wrapping_sub(1))
                .ok_or_else(|| CliError::NoSuchLevel {
                    path: path.display().to_string(),
                    count,
                    index: args.index,
                })?;
            args.search
                .spec(sokoban_puzzle(&level.text)?, args.boards)?
        }
        (None, Some(tiles)) => {
            let tiles = parse_tiles("tiles", tiles)?;
            let goal = match &args.goal {
                None => GoalSpec::BlankLast,
                Some(text) => wire::parse_goal_text(text)?,
            };
            let puzzle = sliding_puzzle(&tiles, args.cols, &goal)?;
            args.search.spec(puzzle, args.boards)?
        }
        (None, None) => return Err(CliError::NoPuzzle),
    };
    let tables = args.search.tables();
    let resolved = resolve(&spec, &tables)?;
    let report = run_resolved(&spec, &resolved, CancelFlag::new(), None);
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&JobOutcome::new(&spec, &report))?
        );
    } else {
        print_human(&spec, &report);
    }
    Ok(if report.status == JobStatus::Solved {
        0
    } else {
        1
    })
}

fn print_human(spec: &JobSpec, report: &JobReport) {
    let stats = &report.stats;
    match (&report.status, &report.plan) {
        (JobStatus::Solved, Some(plan)) => {
            let proof = if report.optimal {
                "optimal"
            } else {
                "not proved optimal"
            };
            match plan.pushes {
                Some(pushes) => println!(
                    "solved: {} moves, {pushes} pushes ({})",
                    plan.length,
                    if report.optimal {
                        "push-optimal"
                    } else {
                        "not proved push-optimal"
                    }
                ),
                None => println!("solved: {} moves ({proof})", plan.length),
            }
            println!("plan: {}", plan.text);
        }
        (status, _) => println!(
            "{}{}",
            status.name(),
            status
                .reason()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        ),
    }
    println!(
        "{} {}{}: {} expanded, {} generated, {} unique states, {} ms",
        report.algorithm,
        report.heuristic.name(),
        if report.weight != Weight::ONE {
            format!(" weight {}", f64::from(report.weight.percent()) / 100.0)
        } else {
            String::new()
        },
        stats.nodes_expanded,
        stats.nodes_generated,
        stats
            .unique_states
            .map_or("untracked".to_string(), |n| n.to_string()),
        wire::millis(stats.elapsed)
    );
    let Some(boards) = &report.boards else {
        return;
    };
    for (step, board) in boards.iter().enumerate() {
        match (board, &spec.puzzle) {
            (Board::Xsb(text), _) => println!("push {}:\n{text}", step + 1),
            (Board::Tiles(board), PuzzleSpec::Sliding(puzzle)) => {
                let cols = puzzle.geometry().cols;
                let rows: Vec<String> = board
                    .chunks(cols)
                    .map(|row| {
                        row.iter()
                            .map(|t| format!("{t:>2}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                println!("step {}: {}", step + 1, rows.join(" | "));
            }
            (Board::Tiles(_), _) => {}
        }
    }
}
