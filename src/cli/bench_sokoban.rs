//! `puzzled bench` on a Sokoban collection: levels solved `--jobs` at a time, each
//! against its proved push optimum when an optima file lists it.

use puzzled::http::wire;
use puzzled::jobs::resolve::resolve;
use puzzled::jobs::run::run_resolved;
use puzzled::jobs::{AlgorithmChoice, JobStatus};
use puzzled::puzzles::sokoban;
use puzzled::search::CancelFlag;
use std::path::{Path, PathBuf};

use super::bench::{BenchArgs, median};
use super::{CliError, read_text, sokoban_puzzle};

/// One Sokoban level's result, as `bench --json` prints it.
#[derive(serde::Serialize)]
struct LevelLine<'a> {
    id: usize,
    title: Option<&'a str>,
    status: &'a str,
    /// The search that ran (for `auto`: feature-space variants taking turns for `any`,
    /// A* for `optimal`).
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
    /// As requested: what `auto` resolves to, the level lines name.
    algorithm: String,
    heuristic: &'static str,
    solved: usize,
    /// Solved with the plan proved push-optimal.
    optimal: usize,
    total: usize,
    wrong_pushes: usize,
    total_ms: f64,
    /// Over solved levels only.
    median_ms: f64,
    nodes_expanded: u64,
    /// The machine's one-minute load average when the run began and ended (Linux), to
    /// tell a quiet machine's figures from a busy one's.
    load_average: Option<[f64; 2]>,
}

/// The one-minute load average, where the system tells it.
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// `level pushes` lines, `#` comments: proved push optima to check against.
fn read_optima(
    args: &BenchArgs,
    suite: &Path,
) -> Result<std::collections::HashMap<usize, usize>, CliError> {
    let path = match &args.optima {
        Some(path) => path.clone(),
        None => {
            let default = suite.with_extension("optima");
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
pub fn run(args: &BenchArgs, suite: &PathBuf) -> Result<i32, CliError> {
    let optima = read_optima(args, suite)?;
    let mut levels = sokoban::read_collection(&read_text(suite)?);
    if !args.ids.is_empty() {
        levels.retain(|l| args.ids.contains(&l.index.to_string()));
    }
    let specs = levels
        .iter()
        .map(|level| Ok(args.search.spec(sokoban_puzzle(&level.text)?, false)?))
        .collect::<Result<Vec<_>, CliError>>()?;
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
            .unwrap_or_else(|| AlgorithmChoice::Auto.name().into()),
        total: levels.len(),
        ..LevelSummary::default()
    };
    let load_at_start = load_average();
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
                summary.heuristic = report.heuristic.name();
                let elapsed_ms = wire::millis(report.stats.elapsed);
                summary.total_ms += elapsed_ms;
                summary.nodes_expanded += report.stats.nodes_expanded;
                let pushes = report.plan.as_ref().and_then(|p| p.pushes);
                let expected = optima.get(&level.index).copied();
                if report.status == JobStatus::Solved {
                    summary.solved += 1;
                    summary.optimal += usize::from(report.optimal);
                    times.push(elapsed_ms);
                }
                let wrong = report.optimal && expected.is_some() && pushes != expected;
                summary.wrong_pushes += usize::from(wrong);
                let line = LevelLine {
                    id: level.index,
                    title: level.title.as_deref(),
                    status: report.status.name(),
                    algorithm: report.algorithm.name(),
                    length: report.plan.as_ref().map(|p| p.length),
                    moves: report.plan.as_ref().map(|p| p.length),
                    pushes,
                    expected_pushes: expected,
                    optimal: report.optimal,
                    plan: report.plan.as_ref().map(|p| p.text.as_str()),
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
    summary.load_average = load_at_start.zip(load_average()).map(|(a, b)| [a, b]);
    if args.json {
        println!("{}", serde_json::json!({ "summary": summary }));
    } else {
        println!(
            "{} {}: solved {}/{} ({} proved optimal), median {:.3} ms per solved level, total {:.1} ms, {} nodes expanded{}",
            summary.algorithm,
            summary.heuristic,
            summary.solved,
            summary.total,
            summary.optimal,
            summary.median_ms,
            summary.total_ms,
            summary.nodes_expanded,
            summary.load_average.map_or(String::new(), |[a, b]| format!(
                ", load average {a:.2} to {b:.2}"
            ))
        );
    }
    if summary.wrong_pushes > 0 {
        return Err(CliError::WrongLengths(summary.wrong_pushes));
    }
    Ok(0)
}
