//! `puzzled tables`: a board's pattern databases built (or loaded) ahead of time.

use std::path::PathBuf;

use clap::Args;
use puzzled::http::wire::{self, RequestError, SearchNames};
use puzzled::jobs::resolve::resolve;
use puzzled::jobs::{Heuristic, JobSpec};
use puzzled::puzzles::sliding::GoalName;
use puzzled::puzzles::sliding::pdb::PartitionKind;

use super::{CliError, names_help, sliding_puzzle, table_store};

#[derive(Args, Debug)]
pub struct TablesArgs {
    /// Board size, ROWSxCOLS: 4x4 or 5x5 (3x3 and smaller get exact tables)
    #[arg(long, default_value = "4x4")]
    pub size: String,
    #[arg(long, help = names_help("Partition (default 7-8 on 4x4)", PartitionKind::NAMES))]
    pub partition: Option<String>,
    /// blank-last (default), blank-first, or an explicit tile list
    #[arg(long, default_value = GoalName::BlankLast.name())]
    pub goal: String,
    /// Where pattern databases are cached
    #[arg(long, env = "PUZZLED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

pub fn run(args: TablesArgs) -> Result<i32, CliError> {
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
    let default_partition = (rows == 4 && cols == 4).then(|| PartitionKind::SevenEight.name());
    // The goal board itself stands in as the puzzle: its tables are the ones wanted.
    let goal = wire::parse_goal(&args.goal)?;
    let start: Vec<u64> = goal
        .board(rows * cols)?
        .into_iter()
        .map(u64::from)
        .collect();
    let puzzle = sliding_puzzle(&start, Some(cols), &goal)?;
    let names = SearchNames {
        heuristic: Some(Heuristic::PatternDatabase.name()),
        partition: args.partition.as_deref().or(default_partition),
        ..SearchNames::default()
    };
    let spec = names.apply(JobSpec::new(puzzle))?;
    let tables = table_store(args.data_dir.as_deref());
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
