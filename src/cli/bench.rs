//! `puzzled bench` on a suite of sliding puzzles: each instance against its known
//! optimal length, or every algorithm with every heuristic (`--matrix`). Sokoban
//! collections go to [`super::bench_sokoban`].

use std::path::PathBuf;

use clap::Args;
use puzzled::http::wire;
use puzzled::jobs::resolve::{Resolved, resolve};
use puzzled::jobs::run::run_resolved;
use puzzled::jobs::tables::TableStore;
use puzzled::jobs::{AlgorithmChoice, Heuristic, JobStatus, PuzzleKind};
use puzzled::puzzles::sliding::GoalName;
use puzzled::search::CancelFlag;

use super::bench_sokoban;
use super::{CliError, SearchArgs, read_text, sliding_puzzle};

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Suite file: lines of `id t0 ... tN optimal`, `#` comments, square boards; or a
    /// Sokoban collection (`.xsb`, `.sok`)
    #[arg(long, required_unless_present = "game")]
    pub suite: Option<PathBuf>,
    /// Play seeded games of this game instead of a suite
    #[arg(long, value_parser = ["2048"], conflicts_with = "suite")]
    pub game: Option<String>,
    /// Games to play (with --game)
    #[arg(long, default_value_t = 100, requires = "game")]
    pub games: usize,
    /// The first game's seed; game i plays seed + i (with --game)
    #[arg(long, default_value_t = 1, requires = "game")]
    pub seed: u64,
    /// Time each move's search may take (with --game)
    #[arg(long, requires = "game")]
    pub ms_per_move: Option<u64>,
    /// Nodes each move's search may expand (with --game)
    #[arg(long, requires = "game")]
    pub nodes_per_move: Option<u64>,
    /// Evaluate with this network (from `puzzled train`) instead of the shipped one
    /// (with --game)
    #[arg(long, requires = "game", conflicts_with = "hand_written")]
    pub network: Option<std::path::PathBuf>,
    /// Evaluate with the hand-written estimate instead of a network (with --game)
    #[arg(long, requires = "game")]
    pub hand_written: bool,
    /// Sokoban: a file of `level pushes` lines with proved optima to check against
    /// (default: the suite's path with `.optima` when that file exists)
    #[arg(long)]
    pub optima: Option<PathBuf>,
    /// Sokoban: levels solved at once (each on its own thread)
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// blank-last (default), blank-first, or an explicit tile list
    #[arg(long, default_value = GoalName::BlankLast.name())]
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

/// One line of a suite file.
struct Instance {
    id: String,
    tiles: Vec<u64>,
    expected: Option<usize>,
}

fn read_suite(path: &PathBuf) -> Result<Vec<Instance>, CliError> {
    let text = read_text(path)?;
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
    algorithm: &'static str,
    heuristic: &'static str,
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

pub fn median(values: &mut [f64]) -> f64 {
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

pub fn run(args: BenchArgs) -> Result<i32, CliError> {
    let Some(suite) = &args.suite else {
        return super::bench_game::run(&args);
    };
    let extension = suite.extension().and_then(|e| e.to_str());
    if matches!(extension, Some("xsb" | "sok")) {
        return bench_sokoban::run(&args, suite);
    }
    let mut instances = read_suite(suite)?;
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
    for instance in instances {
        let goal = wire::parse_goal_text(&args.goal)?;
        let spec = search.spec(sliding_puzzle(&instance.tiles, None, &goal)?, false)?;
        // Table builds and loads are timed apart from the search.
        let started = std::time::Instant::now();
        let resolved: Resolved = resolve(&spec, tables)?;
        summary.table_ms += started.elapsed().as_secs_f64() * 1e3;
        let report = run_resolved(&spec, &resolved, CancelFlag::new(), None);
        summary.algorithm = report.algorithm.name();
        summary.heuristic = report.heuristic.name();
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
                plan: report.plan.as_ref().map(|p| p.text.as_str()),
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
        .filter(|&&a| a != AlgorithmChoice::Auto && a.runs_on(PuzzleKind::Sliding));
    let heuristics: Vec<&str> = Heuristic::ALL
        .iter()
        .filter(|h| h.puzzle() == Some(PuzzleKind::Sliding))
        .map(|h| h.name())
        .collect();
    if !args.json {
        println!(
            "| algorithm | heuristic | solved | mean length | mean unique states | median ms | total ms |"
        );
        println!("|---|---|---|---|---|---|---|");
    }
    let mut wrong = 0;
    for &algorithm in algorithms {
        // Breadth-first search ignores the heuristic: one row.
        let blind = algorithm == AlgorithmChoice::BreadthFirst;
        let row_heuristics = if blind {
            &heuristics[..1]
        } else {
            &heuristics[..]
        };
        for heuristic in row_heuristics {
            let mut search = args.search.clone();
            search.algorithm = Some(algorithm.name().to_string());
            search.heuristic = Some(heuristic.to_string());
            let summary = bench_suite(args, &search, instances, tables, false)?;
            wrong += summary.wrong_lengths;
            if args.json {
                println!("{}", serde_json::json!({ "summary": summary }));
            } else {
                println!(
                    "| {} | {} | {}/{} | {:.2} | {} | {:.3} | {:.1} |",
                    algorithm,
                    if blind { "—" } else { heuristic },
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
