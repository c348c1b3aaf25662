//! A generate job: the Sokoban level generator run under the job's limits and cancel,
//! its progress (levels made, candidates tried) reported at the job's rate, and the
//! levels made so far kept when it stops short.

use std::time::{Duration, Instant};

use super::run::{JobReport, Progress};
use super::spec::{AlgorithmChoice, HeuristicChoice};
use super::status::{ExhaustedReason, JobStatus};
use crate::puzzles::sokoban::generate::{
    self, GenProgress, GenerateParams, Generated, MuraseCounts, Shortfall,
};
use crate::search::{CancelFlag, Limits, Stats, Weight};

/// What a generate job made.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    /// Every plan replayed; in the order made.
    pub levels: Vec<Generated>,
    /// Candidates tried, kept or not.
    pub tried: usize,
    /// The `murase` method's table.
    pub murase: Option<MuraseCounts>,
}

/// Runs the generator. The job ends `solved` when it made every level asked for, and
/// otherwise says why it stopped, with the levels made until then.
pub fn run_generate(
    params: &GenerateParams,
    limits: Limits,
    cancel: CancelFlag,
    progress: Option<Progress>,
) -> JobReport {
    let mut last_report: Option<Instant> = None;
    let mut hear = |made: Option<&Generated>, now: GenProgress| {
        let Some(progress) = &progress else { return };
        let due = last_report.is_none_or(|t| t.elapsed() >= progress.interval);
        if made.is_some() || due {
            progress.sink.generation(&now);
            last_report = Some(Instant::now());
        }
    };
    let report = generate::generate(params, limits, &cancel, &mut hear);
    let status = match report.shortfall {
        None => JobStatus::Solved,
        Some(Shortfall::Tries) => JobStatus::Exhausted(ExhaustedReason::GaveUp),
        Some(Shortfall::Stopped(stop)) => JobStatus::from(stop),
    };
    metrics::counter!("puzzled_levels_generated_total", "method" => params.method.name())
        .increment(report.levels.len() as u64);
    JobReport {
        status,
        // What rates every level: A* with the matching bound.
        algorithm: AlgorithmChoice::AStar,
        heuristic: HeuristicChoice::Matching,
        weight: Weight::ONE,
        plan: None,
        optimal: !report.levels.is_empty() && report.levels.iter().all(|l| l.optimal),
        stats: Stats {
            nodes_expanded: report.nodes,
            elapsed: report.elapsed,
            ..Stats::default()
        },
        boards: None,
        note: None,
        generation: Some(Generation {
            levels: report.levels,
            tried: report.tried,
            murase: report.murase,
        }),
        game: None,
    }
}

/// Levels a second at `elapsed`, for summaries.
pub fn levels_per_second(made: usize, elapsed: Duration) -> f64 {
    let seconds = elapsed.as_secs_f64();
    if seconds > 0.0 {
        made as f64 / seconds
    } else {
        0.0
    }
}
