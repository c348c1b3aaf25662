//! Criterion benchmarks of single solves: `cargo bench --bench engine`.
//! 8-puzzles from `benches/data/8puzzle100.txt` with the exact table (IDA*) and with
//! A* + Manhattan, the classic comparison; the exact table is built before timing.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use puzzled::jobs::resolve::resolve;
use puzzled::jobs::run::run_resolved;
use puzzled::jobs::{AlgorithmChoice, HeuristicChoice, JobSpec, JobStatus, PuzzleSpec, TableStore};
use puzzled::puzzles::sliding::{GoalSpec, SlidingPuzzle};
use puzzled::search::CancelFlag;

fn eight_puzzles() -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/data/8puzzle100.txt"
    ))
    .expect("suite");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let numbers: Vec<u64> = l
                .split_whitespace()
                .skip(1)
                .map(|t| t.parse().expect("number"))
                .collect();
            numbers[..9].to_vec()
        })
        .collect()
}

fn spec(tiles: &[u64], algorithm: AlgorithmChoice, heuristic: HeuristicChoice) -> JobSpec {
    let puzzle = SlidingPuzzle::new(tiles, None, &GoalSpec::BlankLast).expect("valid board");
    JobSpec {
        algorithm,
        heuristic,
        ..JobSpec::new(PuzzleSpec::Sliding(puzzle))
    }
}

fn bench_8_puzzle(c: &mut Criterion) {
    let tables = TableStore::new(None);
    for (name, algorithm, heuristic) in [
        (
            "8-puzzle ida-star exact table",
            AlgorithmChoice::IdaStar,
            HeuristicChoice::PatternDatabase(None),
        ),
        (
            "8-puzzle a-star manhattan",
            AlgorithmChoice::AStar,
            HeuristicChoice::Manhattan,
        ),
        (
            "8-puzzle ida-star linear-conflict",
            AlgorithmChoice::IdaStar,
            HeuristicChoice::LinearConflict,
        ),
    ] {
        let jobs: Vec<_> = eight_puzzles()
            .iter()
            .map(|tiles| {
                let spec = spec(tiles, algorithm, heuristic);
                let resolved = resolve(&spec, &tables).expect("tables");
                (spec, resolved)
            })
            .collect();
        let mut next = 0;
        // One solve per iteration, cycling through the 100 instances.
        c.bench_function(name, |b| {
            b.iter(|| {
                let (spec, resolved) = &jobs[next % jobs.len()];
                next += 1;
                let report = run_resolved(black_box(spec), resolved, CancelFlag::new(), None);
                assert_eq!(report.status, JobStatus::Solved);
                report.stats.nodes_expanded
            })
        });
    }
}

criterion_group!(benches, bench_8_puzzle);
criterion_main!(benches);
