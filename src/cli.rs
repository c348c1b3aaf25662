//! The `puzzled` command line: `solve` one puzzle, `bench` a suite of instances.
//!
//! ```text
//! puzzled solve --tiles "8 6 7 2 5 4 3 0 1"
//! echo '{"puzzle":{"type":"sliding","tiles":[1,2,3,4,5,6,0,7,8]}}' | puzzled solve --json -
//! puzzled bench --suite benches/data/korf100.txt --goal blank-first
//! puzzled solve --level benches/data/microban155.xsb --index 3
//! puzzled bench --suite benches/data/microban155.xsb --objective any --timeout-ms 10000 --jobs 2
//! ```

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::http::wire::{
    self, GoalRequest, JobOutcome, JobRequest, LimitsRequest, PuzzleRequest, RequestError,
};
use crate::jobs::run::Board;
use crate::jobs::run::{Resolved, resolve, run_resolved};
use crate::jobs::tables::{TableStore, default_data_dir};
use crate::jobs::{AlgorithmChoice, HeuristicChoice, JobError, JobReport, JobSpec, JobStatus};
use crate::puzzles::sliding::{BoardError, parse_tiles};
use crate::puzzles::sokoban;
use crate::search::CancelFlag;

#[derive(Parser, Debug)]
#[command(
    name = "puzzled",
    version,
    about = "Solve sliding-tile and Sokoban puzzles with IDA*, A*, BFS, greedy and hill-climbing search"
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
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    #[arg(long, env = "PUZZLED_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// sqlite://FILE (one process) or postgres://… (several processes share the jobs)
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://puzzled.db")]
    pub database_url: String,
    /// all: API and workers; api: answers requests, runs no search; worker: claims and runs
    /// jobs, serving only /healthz, /readyz and /metrics
    #[arg(long, env = "PUZZLED_ROLE", value_enum, default_value_t = crate::serve::Role::All)]
    pub role: crate::serve::Role,
    /// How long a claimed job's lease lasts without a heartbeat (workers renew it every
    /// second); a dead worker's jobs run again this long after its last heartbeat
    #[arg(long, env = "PUZZLED_LEASE_MS", default_value_t = 5_000)]
    pub lease_ms: u64,
    /// Search threads (default: the number of cores)
    #[arg(long, env = "PUZZLED_WORKERS")]
    pub workers: Option<usize>,
    /// Most nodes a job may expand (the default for requests without limits.max_nodes;
    /// a larger request is refused with 422)
    #[arg(long, env = "PUZZLED_MAX_NODES", default_value_t = 200_000_000)]
    pub max_nodes: u64,
    /// Time limit for requests without limits.timeout_ms
    #[arg(long, env = "PUZZLED_DEFAULT_TIMEOUT_MS", default_value_t = 30_000)]
    pub default_timeout_ms: u64,
    /// Largest limits.timeout_ms a request may ask for (more is refused with 422)
    #[arg(long, env = "PUZZLED_MAX_TIMEOUT_MS", default_value_t = 300_000)]
    pub max_timeout_ms: u64,
    /// Jobs waiting in the queue at most; a submission beyond is refused with 503
    #[arg(long, env = "PUZZLED_MAX_QUEUED", default_value_t = 1000)]
    pub max_queued: i64,
    /// Jobs one client (IP address) may have waiting in the queue; beyond, 429
    #[arg(long, env = "PUZZLED_MAX_QUEUED_PER_CLIENT", default_value_t = 100)]
    pub max_queued_per_client: i64,
    /// Largest request body; a larger one is refused with 413
    #[arg(long, env = "PUZZLED_MAX_BODY_BYTES", default_value_t = 64 * 1024)]
    pub max_body_bytes: usize,
    /// A connection's request headers must be in within this of its accept (or of the
    /// first byte of a later request on it); else the connection is closed
    #[arg(long, env = "PUZZLED_HEADER_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,
    /// A kept-alive connection with no request in flight is closed after this long
    /// (event streams and long polls are requests in flight)
    #[arg(long, env = "PUZZLED_IDLE_TIMEOUT_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: u64,
    /// A request body must arrive in full within this of its headers; else 408
    #[arg(long, env = "PUZZLED_BODY_TIMEOUT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: u64,
    /// Open connections, all clients together (on each listener); more are closed at once.
    /// Keep it below the process's descriptor limit (`ulimit -n`)
    #[arg(long, env = "PUZZLED_MAX_CONNECTIONS", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Open connections from one IP address (on each listener); more are closed at once
    #[arg(long, env = "PUZZLED_MAX_CONNECTIONS_PER_CLIENT", default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_client: u64,
    /// Most cells of a sliding board (8x8 = 64 is the most the solver takes); more is 422
    #[arg(long, env = "PUZZLED_MAX_BOARD_CELLS", default_value_t = 64)]
    pub max_board_cells: u64,
    /// Memory cap per job for stored states (A*, BFS), in MiB
    #[arg(long, env = "PUZZLED_MAX_JOB_MEMORY_MIB", default_value_t = 2048)]
    pub max_job_memory_mib: u64,
    /// Other sites' origins allowed to call the API and load /embed.js from a browser, as
    /// scheme://host[:port] or `*` for any (repeat or comma-separate); default: same origin only
    #[arg(long, env = "PUZZLED_CORS_ORIGIN", value_delimiter = ',')]
    pub cors_origin: Vec<String>,
    /// A file of API keys, one a line: a key, or `sha256:` and the key's SHA-256 in hex;
    /// `#` comments. With keys, every /v1 route needs `Authorization: Bearer <key>` and
    /// each key sees only its own jobs
    #[arg(long, env = "PUZZLED_API_KEYS_FILE")]
    pub api_keys_file: Option<PathBuf>,
    /// API keys, comma-separated, added to the file's (better set in the environment than
    /// on a command line, which other users of the machine can read)
    #[arg(
        long,
        env = "PUZZLED_API_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub api_keys: Vec<String>,
    /// Requests per second one client (API key, or IP address without keys) may make to
    /// /v1 on average; 0: no limit. Counted in each process
    #[arg(long, env = "PUZZLED_RATE_LIMIT", default_value_t = 50.0, value_parser = rate)]
    pub rate_limit: f64,
    /// Requests one client may make at once above --rate-limit before it must wait
    #[arg(long, env = "PUZZLED_RATE_BURST", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_burst: u32,
    /// Serve /healthz, /readyz and /metrics on this address instead of beside the API
    #[arg(long, env = "PUZZLED_OPS_BIND")]
    pub ops_bind: Option<String>,
    /// Finished jobs are deleted after this many hours
    #[arg(long, env = "PUZZLED_RETENTION_HOURS", default_value_t = 24)]
    pub retention_hours: u64,
    /// Logs as JSON lines instead of text
    #[arg(long, env = "PUZZLED_LOG_JSON")]
    pub log_json: bool,
    /// Build the 4x4 6-6-3 tables for blank-last and blank-first goals in the background at
    /// start-up (true or false); other goals get theirs on first use
    #[arg(long, env = "PUZZLED_WARM_TABLES", default_value_t = true, action = clap::ArgAction::Set)]
    pub warm_tables: bool,
    /// On SIGTERM, how long running jobs may finish before they are put back in the queue
    #[arg(long, env = "PUZZLED_SHUTDOWN_GRACE_MS", default_value_t = 10_000)]
    pub shutdown_grace_ms: u64,
    /// Where pattern databases are cached
    #[arg(long, env = "PUZZLED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Large table layouts the service may build in the background, one at a time, beyond
    /// the cheap ones (4x4 6-6-3 and exact tables of at most 9 cells, built for any goal on
    /// first use): SIZE:PARTITION[:GOAL], GOAL blank-last (default), blank-first, blank=N
    /// or any (each blank cell built when first asked for); e.g. 4x4:7-8,5x5:6-6-6-6:any.
    /// Named layouts are built at start-up and never evicted
    #[arg(long, env = "PUZZLED_BUILD_TABLES", value_delimiter = ',')]
    pub build_tables: Vec<crate::jobs::tables::LayoutRule>,
    /// Peak memory one table build may take, in MiB; a larger build is refused (the 4x4
    /// 7-8 tables need about 5,300, 5x5 6-6-6-6 about 1,300)
    #[arg(long, env = "PUZZLED_TABLE_BUILD_MEMORY_MIB", default_value_t = 2048)]
    pub table_build_memory_mib: u64,
    /// Tables held in memory at most, and table files kept in the data directory at most;
    /// beyond, the least recently used go (a job using one keeps its copy)
    #[arg(long, env = "PUZZLED_MAX_TABLES", default_value_t = 128)]
    pub max_tables: usize,
    /// Table bytes held in memory at most, in MiB
    #[arg(long, env = "PUZZLED_TABLE_MEMORY_MIB", default_value_t = 2048)]
    pub table_memory_mib: u64,
    /// Table file bytes kept in the data directory at most, in MiB
    #[arg(long, env = "PUZZLED_TABLE_DISK_MIB", default_value_t = 4096)]
    pub table_disk_mib: u64,
}

/// A request rate: 0 (no limit), or from one request in 1000 s to any finite number a
/// second.
fn rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|rate| rate.is_finite() && (*rate == 0.0 || *rate >= 0.001))
        .ok_or_else(|| {
            format!(
                "'{text}' is not a rate: give requests per second, 0 (no limit) or 0.001 and up"
            )
        })
}

/// `serve`'s flags alone, so a bare `puzzled` gets their defaults and environment.
#[derive(Parser)]
struct ServeOnly {
    #[command(flatten)]
    args: ServeArgs,
}

impl Default for ServeArgs {
    fn default() -> ServeArgs {
        ServeOnly::parse_from(["puzzled"]).args
    }
}

#[derive(Args, Debug)]
pub struct TablesArgs {
    /// Board size, ROWSxCOLS: 4x4 or 5x5 (3x3 and smaller get exact tables)
    #[arg(long, default_value = "4x4")]
    pub size: String,
    /// Partition: 7-8 (4x4 default) or 6-6-3, 6-6-6-6 (5x5)
    #[arg(long)]
    pub partition: Option<String>,
    /// blank-last (default), blank-first, or an explicit tile list
    #[arg(long, default_value = "blank-last")]
    pub goal: String,
    /// Where pattern databases are cached
    #[arg(long, env = "PUZZLED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

/// Search settings shared by `solve` and `bench`.
#[derive(Args, Debug, Clone)]
pub struct SearchArgs {
    /// auto, ida-star, a-star, bfs, greedy-best-first, enforced-hill-climbing, fess
    #[arg(long)]
    pub algorithm: Option<String>,
    /// auto, misplaced, manhattan, linear-conflict, pattern-database
    #[arg(long)]
    pub heuristic: Option<String>,
    /// Pattern-database partition: 7-8 or 6-6-3 (4x4), 6-6-6-6 (5x5)
    #[arg(long)]
    pub partition: Option<String>,
    /// optimal (default) or any
    #[arg(long)]
    pub objective: Option<String>,
    /// Heuristic weight for ida-star and a-star (1 = optimal)
    #[arg(long)]
    pub weight: Option<f64>,
    #[arg(long)]
    pub max_nodes: Option<u64>,
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Where pattern databases are cached
    #[arg(long, env = "PUZZLED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

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

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Suite file: lines of `id t0 ... tN optimal`, `#` comments, square boards; or a
    /// Sokoban collection (`.xsb`, `.sok`)
    #[arg(long)]
    pub suite: PathBuf,
    /// Sokoban: a file of `level pushes` lines with proved optima to check against
    /// (default: the suite's path with `.optima` when that file exists)
    #[arg(long)]
    pub optima: Option<PathBuf>,
    /// Sokoban: levels solved at once (each on its own thread)
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// blank-last (default), blank-first, or an explicit tile list
    #[arg(long, default_value = "blank-last")]
    pub goal: String,
    /// Only these instance ids (comma-separated)
    #[arg(long, value_delimiter = ',')]
    pub ids: Vec<String>,
    /// Compare every algorithm with every heuristic on the suite
    #[arg(long)]
    pub matrix: bool,
    /// One JSON line per instance and a summary line
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub search: SearchArgs,
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
    Serve(#[from] crate::serve::ServeError),
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
    fn request(&self, puzzle: PuzzleRequest, include_boards: bool) -> JobRequest {
        JobRequest {
            puzzle,
            algorithm: self.algorithm.clone(),
            heuristic: self.heuristic.clone(),
            partition: self.partition.clone(),
            objective: self.objective.clone(),
            weight: self.weight,
            limits: LimitsRequest {
                max_nodes: self.max_nodes,
                timeout_ms: self.timeout_ms,
            },
            include_boards,
            priority: None,
        }
    }

    fn tables(&self) -> TableStore {
        TableStore::new(Some(self.data_dir.clone().unwrap_or_else(default_data_dir)))
    }
}

/// Runs the command; `Ok` carries the exit status for outcomes without a plan.
pub fn run(cli: Cli) -> Result<i32, CliError> {
    match cli
        .command
        .unwrap_or_else(|| Command::Serve(ServeArgs::default()))
    {
        Command::Serve(args) => crate::serve::run(args).map(|()| 0).map_err(CliError::Serve),
        Command::Solve(args) => solve(args),
        Command::Bench(args) => bench(args),
        Command::Tables(args) => build_tables(args),
    }
}

fn build_tables(args: TablesArgs) -> Result<i32, CliError> {
    let bad_size = || {
        CliError::Request(RequestError::UnknownName {
            field: "size",
            value: args.size.clone(),
            expected: "ROWSxCOLS, e.g. 4x4".into(),
        })
    };
    let (rows, cols) = args.size.split_once('x').ok_or_else(bad_size)?;
    let (rows, cols): (usize, usize) = (
        rows.parse().map_err(|_| bad_size())?,
        cols.parse().map_err(|_| bad_size())?,
    );
    let partition = args
        .partition
        .clone()
        .or_else(|| (rows == 4 && cols == 4).then(|| "7-8".to_string()));
    // The goal board itself stands in as the puzzle: its tables are the ones wanted.
    let goal = wire::parse_goal(&args.goal)?;
    let start = goal
        .board(rows * cols)?
        .into_iter()
        .map(u64::from)
        .collect();
    let request = JobRequest {
        puzzle: PuzzleRequest::Sliding {
            tiles: start,
            cols: Some(cols),
            goal: Some(GoalRequest::Named(args.goal.clone())),
        },
        algorithm: None,
        heuristic: Some("pattern-database".into()),
        partition,
        objective: None,
        weight: None,
        limits: LimitsRequest::default(),
        include_boards: false,
        priority: None,
    };
    let spec = request.into_spec()?;
    let tables = TableStore::new(Some(args.data_dir.clone().unwrap_or_else(default_data_dir)));
    let started = std::time::Instant::now();
    resolve(&spec, &tables)?;
    for event in tables.take_events() {
        println!(
            "{} {}: {:.1} MB in {:.2} s",
            if event.built { "built" } else { "loaded" },
            event.name,
            event.bytes as f64 / 1e6,
            event.seconds
        );
    }
    println!(
        "ready in {:.2} s; cached under {}",
        started.elapsed().as_secs_f64(),
        tables
            .dir()
            .map_or("memory".into(), |d| d.display().to_string())
    );
    Ok(0)
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

fn read_text(path: &PathBuf) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|error| CliError::Read {
        path: path.display().to_string(),
        error,
    })
}

fn solve(args: SolveArgs) -> Result<i32, CliError> {
    let request = match (&args.request, &args.tiles) {
        (Some(path), _) => read_request(path)?,
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
            let puzzle = PuzzleRequest::Sokoban { level: level.text };
            args.search.request(puzzle, args.boards)
        }
        (None, Some(tiles)) => {
            let puzzle = PuzzleRequest::Sliding {
                tiles: parse_tiles("tiles", tiles)?,
                cols: args.cols,
                goal: args.goal.clone().map(GoalRequest::Named),
            };
            args.search.request(puzzle, args.boards)
        }
        (None, None) => return Err(CliError::NoPuzzle),
    };
    let spec = request.into_spec()?;
    let tables = args.search.tables();
    let resolved = resolve(&spec, &tables)?;
    let report = run_resolved(&spec, &resolved, CancelFlag::new(), None);
    let outcome = JobOutcome::from(&report);
    if args.json {
        println!("{}", serde_json::to_string(&outcome)?);
    } else {
        print_human(&spec, &report, &outcome);
    }
    Ok(if report.status == JobStatus::Solved {
        0
    } else {
        1
    })
}

fn print_human(spec: &JobSpec, report: &JobReport, outcome: &JobOutcome) {
    let result = &outcome.result;
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
            outcome
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        ),
    }
    println!(
        "{} {}{}: {} expanded, {} generated, {} unique states, {} ms",
        outcome.algorithm,
        outcome.heuristic,
        if outcome.weight > 1.0 {
            format!(" weight {}", outcome.weight)
        } else {
            String::new()
        },
        result.nodes_expanded,
        result.nodes_generated,
        result
            .unique_states
            .map_or("untracked".to_string(), |n| n.to_string()),
        result.elapsed_ms
    );
    let Some(boards) = &report.boards else {
        return;
    };
    for (step, board) in boards.iter().enumerate() {
        match (board, &spec.puzzle) {
            (Board::Xsb(text), _) => println!("push {}:\n{text}", step + 1),
            (Board::Tiles(board), crate::jobs::PuzzleSpec::Sliding(puzzle)) => {
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
            (Board::Tiles(_), crate::jobs::PuzzleSpec::Sokoban(_)) => {}
        }
    }
}

/// One line of a suite file.
struct Instance {
    id: String,
    tiles: Vec<u64>,
    expected: Option<usize>,
}

fn read_suite(path: &PathBuf) -> Result<Vec<Instance>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|error| CliError::Read {
        path: path.display().to_string(),
        error,
    })?;
    let suite_error = |line: usize, message: String| CliError::Suite {
        path: path.display().to_string(),
        line,
        message,
    };
    let mut instances = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (id, numbers) = fields
            .split_first()
            .ok_or_else(|| suite_error(number + 1, "empty line".into()))?;
        let values = numbers
            .iter()
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|_| suite_error(number + 1, format!("'{t}' is not a whole number")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // `id` plus a square number of tiles plus the optimal length.
        let side = ((values.len().saturating_sub(1)) as f64).sqrt().round() as usize;
        let (tiles, expected) = if side * side + 1 == values.len() {
            (
                values[..values.len() - 1].to_vec(),
                Some(values[values.len() - 1] as usize),
            )
        } else if side * side == values.len() {
            (values, None)
        } else {
            return Err(suite_error(
                number + 1,
                format!(
                    "{} numbers do not form a square board plus a length",
                    values.len()
                ),
            ));
        };
        instances.push(Instance {
            id: id.to_string(),
            tiles,
            expected,
        });
    }
    Ok(instances)
}

/// One instance's result, as `bench --json` prints it.
#[derive(serde::Serialize)]
struct BenchLine<'a> {
    id: &'a str,
    status: &'a str,
    length: Option<usize>,
    expected: Option<usize>,
    optimal: bool,
    plan: Option<&'a str>,
    nodes_expanded: u64,
    nodes_generated: u64,
    unique_states: Option<u64>,
    elapsed_ms: f64,
}

#[derive(Default, serde::Serialize)]
struct Summary {
    algorithm: String,
    heuristic: String,
    solved: usize,
    total: usize,
    wrong_lengths: usize,
    total_ms: f64,
    median_ms: f64,
    mean_length: f64,
    mean_unique_states: Option<f64>,
    nodes_expanded: u64,
    table_ms: f64,
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

fn bench(args: BenchArgs) -> Result<i32, CliError> {
    let extension = args.suite.extension().and_then(|e| e.to_str());
    if matches!(extension, Some("xsb" | "sok")) {
        return bench_sokoban(&args);
    }
    let mut instances = read_suite(&args.suite)?;
    if !args.ids.is_empty() {
        instances.retain(|i| args.ids.contains(&i.id));
    }
    let tables = args.search.tables();
    if args.matrix {
        return bench_matrix(&args, &instances, &tables);
    }
    let summary = bench_suite(&args, &args.search, &instances, &tables, true)?;
    if args.json {
        println!("{}", serde_json::json!({ "summary": summary }));
    } else {
        println!(
            "{} {}: solved {}/{}, total {:.1} ms, median {:.3} ms, {} nodes expanded, tables {:.1} ms",
            summary.algorithm,
            summary.heuristic,
            summary.solved,
            summary.total,
            summary.total_ms,
            summary.median_ms,
            summary.nodes_expanded,
            summary.table_ms
        );
    }
    if summary.wrong_lengths > 0 {
        return Err(CliError::WrongLengths(summary.wrong_lengths));
    }
    Ok(0)
}

fn bench_suite(
    args: &BenchArgs,
    search: &SearchArgs,
    instances: &[Instance],
    tables: &TableStore,
    print_lines: bool,
) -> Result<Summary, CliError> {
    let mut summary = Summary {
        total: instances.len(),
        ..Summary::default()
    };
    let mut times = Vec::new();
    let mut lengths = Vec::new();
    let mut unique = Vec::new();
    let goal = GoalRequest::Named(args.goal.clone());
    for instance in instances {
        let puzzle = PuzzleRequest::Sliding {
            tiles: instance.tiles.clone(),
            cols: None,
            goal: Some(goal.clone()),
        };
        let spec = search.request(puzzle, false).into_spec()?;
        // Table builds and loads are timed apart from the search.
        let started = std::time::Instant::now();
        let resolved: Resolved = resolve(&spec, tables)?;
        summary.table_ms += started.elapsed().as_secs_f64() * 1e3;
        let report = run_resolved(&spec, &resolved, CancelFlag::new(), None);
        let outcome = JobOutcome::from(&report);
        summary.algorithm = outcome.algorithm.clone();
        summary.heuristic = outcome.heuristic.clone();
        let length = report.plan.as_ref().map(|p| p.length);
        if report.status == JobStatus::Solved {
            summary.solved += 1;
            lengths.extend(length.map(|l| l as f64));
            unique.extend(report.stats.unique_states.map(|u| u as f64));
        }
        if report.optimal && length != instance.expected && instance.expected.is_some() {
            summary.wrong_lengths += 1;
        }
        let elapsed_ms = wire::millis(report.stats.elapsed);
        summary.total_ms += elapsed_ms;
        summary.nodes_expanded += report.stats.nodes_expanded;
        times.push(elapsed_ms);
        if print_lines {
            let line = BenchLine {
                id: &instance.id,
                status: report.status.name(),
                length,
                expected: instance.expected,
                optimal: report.optimal,
                plan: outcome.result.plan.as_deref(),
                nodes_expanded: report.stats.nodes_expanded,
                nodes_generated: report.stats.nodes_generated,
                unique_states: report.stats.unique_states,
                elapsed_ms,
            };
            if args.json {
                println!("{}", serde_json::to_string(&line)?);
            } else {
                let mark = match (report.optimal, instance.expected, length) {
                    (true, Some(e), Some(l)) if e != l => "  WRONG LENGTH",
                    _ => "",
                };
                println!(
                    "{:>4} {:<11} length {:>4} (expected {:>4}) {:>12} nodes {:>10.3} ms{mark}",
                    instance.id,
                    report.status.name(),
                    length.map_or("-".into(), |l| l.to_string()),
                    instance.expected.map_or("?".into(), |l| l.to_string()),
                    report.stats.nodes_expanded,
                    elapsed_ms
                );
            }
        }
    }
    summary.median_ms = median(&mut times);
    summary.mean_length = if lengths.is_empty() {
        0.0
    } else {
        lengths.iter().sum::<f64>() / lengths.len() as f64
    };
    summary.mean_unique_states =
        (!unique.is_empty()).then(|| unique.iter().sum::<f64>() / unique.len() as f64);
    Ok(summary)
}

/// Every algorithm with every heuristic (BFS ignores heuristics: one row).
fn bench_matrix(
    args: &BenchArgs,
    instances: &[Instance],
    tables: &TableStore,
) -> Result<i32, CliError> {
    let algorithms = AlgorithmChoice::ALL
        .iter()
        .filter(|a| **a != AlgorithmChoice::Auto)
        .map(|a| a.name());
    let heuristics = &HeuristicChoice::NAMES[1..];
    if !args.json {
        println!(
            "| algorithm | heuristic | solved | mean length | mean unique states | median ms | total ms |"
        );
        println!("|---|---|---|---|---|---|---|");
    }
    let mut wrong = 0;
    for algorithm in algorithms {
        let row_heuristics = if algorithm == "bfs" {
            &heuristics[..1]
        } else {
            heuristics
        };
        for heuristic in row_heuristics {
            let mut search = args.search.clone();
            search.algorithm = Some(algorithm.to_string());
            search.heuristic = Some(heuristic.to_string());
            let summary = bench_suite(args, &search, instances, tables, false)?;
            wrong += summary.wrong_lengths;
            if args.json {
                println!("{}", serde_json::json!({ "summary": summary }));
            } else {
                println!(
                    "| {} | {} | {}/{} | {:.2} | {} | {:.3} | {:.1} |",
                    algorithm,
                    if algorithm == "bfs" { "—" } else { heuristic },
                    summary.solved,
                    summary.total,
                    summary.mean_length,
                    summary
                        .mean_unique_states
                        .map_or("not tracked".to_string(), |u| format!("{u:.0}")),
                    summary.median_ms,
                    summary.total_ms
                );
            }
        }
    }
    if wrong > 0 {
        return Err(CliError::WrongLengths(wrong));
    }
    Ok(0)
}

/// One Sokoban level's result, as `bench --json` prints it.
#[derive(serde::Serialize)]
struct LevelLine<'a> {
    id: usize,
    title: Option<&'a str>,
    status: &'a str,
    /// The search that ended the job (for `auto`, the portfolio's phase).
    algorithm: &'a str,
    length: Option<usize>,
    moves: Option<usize>,
    pushes: Option<usize>,
    /// The proved push optimum, when the optima file lists it.
    expected_pushes: Option<usize>,
    optimal: bool,
    plan: Option<&'a str>,
    nodes_expanded: u64,
    nodes_generated: u64,
    elapsed_ms: f64,
}

#[derive(Default, serde::Serialize)]
struct LevelSummary {
    /// As requested: `auto` runs a portfolio, whose phases the level lines name.
    algorithm: String,
    heuristic: String,
    solved: usize,
    total: usize,
    wrong_pushes: usize,
    total_ms: f64,
    /// Over solved levels only.
    median_ms: f64,
    nodes_expanded: u64,
}

/// `level pushes` lines, `#` comments: proved push optima to check against.
fn read_optima(args: &BenchArgs) -> Result<std::collections::HashMap<usize, usize>, CliError> {
    let path = match &args.optima {
        Some(path) => path.clone(),
        None => {
            let default = args.suite.with_extension("optima");
            if !default.exists() {
                return Ok(Default::default());
            }
            default
        }
    };
    let text = read_text(&path)?;
    let mut optima = std::collections::HashMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let pair = line.split_once(' ').and_then(|(level, pushes)| {
            Some((level.trim().parse().ok()?, pushes.trim().parse().ok()?))
        });
        let (level, pushes) = pair.ok_or_else(|| CliError::Suite {
            path: path.display().to_string(),
            line: number + 1,
            message: "expected `level pushes`".into(),
        })?;
        optima.insert(level, pushes);
    }
    Ok(optima)
}

/// Solves every level of a collection, `--jobs` at a time, and prints the results in
/// level order as they complete.
fn bench_sokoban(args: &BenchArgs) -> Result<i32, CliError> {
    let optima = read_optima(args)?;
    let mut levels = sokoban::read_collection(&read_text(&args.suite)?);
    if !args.ids.is_empty() {
        levels.retain(|l| args.ids.contains(&l.index.to_string()));
    }
    let specs = levels
        .iter()
        .map(|level| {
            let puzzle = PuzzleRequest::Sokoban {
                level: level.text.clone(),
            };
            args.search.request(puzzle, false).into_spec()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let tables = args.search.tables();
    let resolved = specs
        .iter()
        .map(|spec| resolve(spec, &tables))
        .collect::<Result<Vec<_>, _>>()?;
    let mut summary = LevelSummary {
        algorithm: args
            .search
            .algorithm
            .clone()
            .unwrap_or_else(|| "auto".into()),
        total: levels.len(),
        ..LevelSummary::default()
    };
    let mut times = Vec::new();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (sender, receiver) = std::sync::mpsc::channel();
    let printed: Result<(), CliError> = std::thread::scope(|scope| {
        for _ in 0..args.jobs.max(1) {
            let sender = sender.clone();
            let (next, specs, resolved) = (&next, &specs, &resolved);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= specs.len() {
                        break;
                    }
                    let report = run_resolved(&specs[i], &resolved[i], CancelFlag::new(), None);
                    if sender.send((i, report)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut pending = std::collections::BTreeMap::new();
        let mut done = 0;
        for (i, report) in receiver {
            pending.insert(i, report);
            while let Some(report) = pending.remove(&done) {
                let level = &levels[done];
                done += 1;
                let outcome = JobOutcome::from(&report);
                summary.heuristic = outcome.heuristic.clone();
                let elapsed_ms = wire::millis(report.stats.elapsed);
                summary.total_ms += elapsed_ms;
                summary.nodes_expanded += report.stats.nodes_expanded;
                let pushes = report.plan.as_ref().and_then(|p| p.pushes);
                let expected = optima.get(&level.index).copied();
                if report.status == JobStatus::Solved {
                    summary.solved += 1;
                    times.push(elapsed_ms);
                }
                let wrong = report.optimal && expected.is_some() && pushes != expected;
                summary.wrong_pushes += usize::from(wrong);
                let line = LevelLine {
                    id: level.index,
                    title: level.title.as_deref(),
                    status: report.status.name(),
                    algorithm: &outcome.algorithm,
                    length: report.plan.as_ref().map(|p| p.length),
                    moves: report.plan.as_ref().map(|p| p.length),
                    pushes,
                    expected_pushes: expected,
                    optimal: report.optimal,
                    plan: outcome.result.plan.as_deref(),
                    nodes_expanded: report.stats.nodes_expanded,
                    nodes_generated: report.stats.nodes_generated,
                    elapsed_ms,
                };
                if args.json {
                    println!("{}", serde_json::to_string(&line)?);
                } else {
                    println!(
                        "{:>4} {:<11} pushes {:>5} (optimum {:>4}) moves {:>6} {:>12} nodes {:>10.3} ms{}",
                        line.id,
                        line.status,
                        pushes.map_or("-".into(), |p| p.to_string()),
                        expected.map_or("?".into(), |p| p.to_string()),
                        line.moves.map_or("-".into(), |m| m.to_string()),
                        line.nodes_expanded,
                        elapsed_ms,
                        if wrong { "  WRONG PUSH COUNT" } else { "" }
                    );
                }
            }
        }
        Ok(())
    });
    printed?;
    summary.median_ms = median(&mut times);
    if args.json {
        println!("{}", serde_json::json!({ "summary": summary }));
    } else {
        println!(
            "{} {}: solved {}/{}, median {:.3} ms per solved level, total {:.1} ms, {} nodes expanded",
            summary.algorithm,
            summary.heuristic,
            summary.solved,
            summary.total,
            summary.median_ms,
            summary.total_ms,
            summary.nodes_expanded
        );
    }
    if summary.wrong_pushes > 0 {
        return Err(CliError::WrongLengths(summary.wrong_pushes));
    }
    Ok(0)
}
