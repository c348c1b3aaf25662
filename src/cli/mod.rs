//! The `puzzled` command line, one file a command: `serve` (the service, the default),
//! `solve` one puzzle, `bench` a suite of instances (`bench_sokoban` for a collection of
//! levels, `bench_game` for seeded 2048 games), `tables` built ahead of time, `generate`
//! new Sokoban levels, `rate` a collection's difficulty, `train` 2048's network, `play` a
//! game of 2048. Here: the commands, the search flags they
//! share, and [`CliError`] with its exit status.
//!
//! ```text
//! puzzled solve --tiles "8 6 7 2 5 4 3 0 1"
//! echo '{"puzzle":{"type":"sliding","tiles":[1,2,3,4,5,6,0,7,8]}}' | puzzled solve --json -
//! puzzled bench --suite benches/data/korf100.txt --goal blank-first
//! puzzled solve --level benches/data/microban155.xsb --index 3
//! puzzled bench --suite benches/data/microban155.xsb --objective any --timeout-ms 10000 --jobs 2
//! puzzled generate --size 8x8 --boxes 3 --count 20 --difficulty hard --seed 7 > levels.xsb
//! puzzled rate --suite levels.xsb --json
//! puzzled play 2048 --seed 1 --ms-per-move 50
//! puzzled bench --game 2048 --games 100 --nodes-per-move 1000 --json
//! ```

mod bench;
mod bench_game;
mod bench_sokoban;
mod generate;
mod play;
mod rate;
mod serve;
mod solve;
mod tables;
mod train;

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use puzzled::http::wire::{RequestError, SearchNames};
use puzzled::jobs::tables::{TableStore, default_data_dir};
use puzzled::jobs::{
    AlgorithmChoice, Heuristic, JobError, JobLimits, JobSpec, Objective, PuzzleSpec,
};
use puzzled::puzzles::sliding::pdb::PartitionKind;
use puzzled::puzzles::sliding::{BoardError, GoalSpec, SlidingPuzzle};
use puzzled::puzzles::sokoban::Level;

use self::bench::BenchArgs;
use self::generate::GenerateArgs;
use self::play::PlayArgs;
use self::rate::RateArgs;
use self::serve::ServeArgs;
use self::solve::SolveArgs;
use self::tables::TablesArgs;
use self::train::TrainArgs;

#[derive(Parser, Debug)]
#[command(
    name = "puzzled",
    version,
    about = "Solve sliding-tile and Sokoban puzzles with IDA*, A*, BFS, greedy and hill-climbing search; make and rate Sokoban levels"
)]
pub struct Cli {
    /// With no command, `puzzled` runs the service (`serve`) with its defaults.
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the REST service (embedded SQLite by default).
    Serve(ServeArgs),
    /// Solve one puzzle, given by flags or as a JSON job request.
    Solve(SolveArgs),
    /// Solve every instance of a suite file and report times and lengths.
    Bench(BenchArgs),
    /// Build (or load) a board's pattern databases ahead of time, with their cost.
    Tables(TablesArgs),
    /// Make new Sokoban levels, each solved, replayed and rated.
    Generate(GenerateArgs),
    /// Rate the difficulty of every level of a collection.
    Rate(RateArgs),
    /// Learn a game's evaluation by self-play (2048's n-tuple network).
    Train(TrainArgs),
    /// Play a seeded game of 2048 to its end, each move searched within a budget.
    Play(PlayArgs),
}

/// A flag's help: what it sets, and the names it takes.
fn names_help(what: &str, names: &[&str]) -> String {
    format!("{what}: {}", names.join(", "))
}

/// Search settings shared by `solve` and `bench`.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    // The names are checked where requests are (one message for the CLI and the
    // service); the help lists them from their enums.
    #[arg(long, help = names_help("The search (default auto)", AlgorithmChoice::NAMES))]
    pub algorithm: Option<String>,
    #[arg(long, help = names_help(
        "The heuristic (default auto; matching and closest-goal are for Sokoban)",
        Heuristic::NAMES,
    ))]
    pub heuristic: Option<String>,
    #[arg(long, help = names_help("Pattern-database partition", PartitionKind::NAMES))]
    pub partition: Option<String>,
    #[arg(long, help = names_help(
        "What to find (default: optimal for sliding puzzles, any for Sokoban)",
        Objective::NAMES,
    ))]
    pub objective: Option<String>,
    /// Heuristic weight for ida-star and a-star (1 = optimal)
    #[arg(long)]
    pub weight: Option<f64>,
    #[arg(long)]
    pub max_nodes: Option<u64>,
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Memory cap for what the search stores, in MiB (the service's --max-job-memory-mib)
    #[arg(long)]
    pub max_memory_mib: Option<u64>,
    /// Where pattern databases are cached
    #[arg(long, env = "PUZZLED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

/// What went wrong, with the exit status it earns.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Request(#[from] RequestError),
    #[error("{0}")]
    Board(#[from] BoardError),
    #[error("{0}")]
    Job(#[from] JobError),
    #[error("invalid JSON request: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "give a puzzle: --tiles \"...\", --level FILE or a JSON request (- for standard input)"
    )]
    NoPuzzle,
    #[error("{path} has {count} level(s); there is no level {index}")]
    NoSuchLevel {
        path: String,
        count: usize,
        index: usize,
    },
    #[error("cannot read {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}:{line}: {message}")]
    Suite {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{0} claimed-optimal solution(s) differ from the expected length")]
    WrongLengths(usize),
    #[error("{0}")]
    Serve(#[from] puzzled::serve::ServeError),
    #[error("{path}: {why}")]
    Network { path: String, why: String },
    #[error("unknown game algorithm '{name}'; expected one of: {expected}")]
    GameAlgorithm { name: String, expected: String },
    #[error("--size {0}: give the room as WIDTHxHEIGHT, e.g. 8x8")]
    Size(String),
    #[error("internal error: the game's record did not replay ({0})")]
    Replay(String),
    #[error("writing the output failed: {0}")]
    Write(std::io::Error),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::WrongLengths(_) => 1,
            _ => 2,
        }
    }
}

impl SearchArgs {
    /// The job these flags ask for on `puzzle`. A wrong name gets the one-line error a
    /// request's field would.
    fn spec(&self, puzzle: PuzzleSpec, include_boards: bool) -> Result<JobSpec, RequestError> {
        let names = SearchNames {
            algorithm: self.algorithm.as_deref(),
            heuristic: self.heuristic.as_deref(),
            partition: self.partition.as_deref(),
            objective: self.objective.as_deref(),
            weight: self.weight,
        };
        let limits = JobLimits {
            max_nodes: self.max_nodes,
            timeout: self.timeout_ms.map(Duration::from_millis),
            max_memory_bytes: self.max_memory_mib.map(|mib| mib.saturating_mul(1 << 20)),
        };
        names.apply(JobSpec {
            limits,
            include_boards,
            ..JobSpec::new(puzzle)
        })
    }

    fn tables(&self) -> TableStore {
        table_store(self.data_dir.as_deref())
    }
}

/// The tables cached in `data_dir`, or in the default data directory; built, when
/// missing, in the asking thread.
fn table_store(data_dir: Option<&Path>) -> TableStore {
    let dir = data_dir.map_or_else(default_data_dir, Path::to_path_buf);
    TableStore::new(Some(dir))
}

/// A sliding puzzle from the command line, refused as a request's `puzzle` would be.
fn sliding_puzzle(
    tiles: &[u64],
    cols: Option<usize>,
    goal: &GoalSpec,
) -> Result<PuzzleSpec, CliError> {
    let puzzle = SlidingPuzzle::new(tiles, cols, goal).map_err(RequestError::from)?;
    Ok(PuzzleSpec::Sliding(puzzle))
}

/// A Sokoban level from the command line, refused as a request's `puzzle` would be.
fn sokoban_puzzle(text: &str) -> Result<PuzzleSpec, CliError> {
    let level = Level::parse(text).map_err(RequestError::from)?;
    Ok(PuzzleSpec::Sokoban(level))
}

impl Cli {
    /// The command to run: none is `serve` with its defaults and environment.
    pub fn command(self) -> Command {
        self.command
            .unwrap_or_else(|| Command::Serve(ServeArgs::default()))
    }
}

/// Runs the command; `Ok` carries the exit status for outcomes without a plan.
pub fn run(command: Command) -> Result<i32, CliError> {
    match command {
        Command::Serve(args) => puzzled::serve::run(args.into())
            .map(|()| 0)
            .map_err(CliError::Serve),
        Command::Solve(args) => solve::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Tables(args) => tables::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Rate(args) => rate::run(args),
        Command::Train(args) => train::run(args),
        Command::Play(args) => play::run(args),
    }
}

fn read_text(path: &PathBuf) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|error| CliError::Read {
        path: path.display().to_string(),
        error,
    })
}
