//! A 2048 job: the best move from a position, by an anytime search whose root's answer
//! is reported as it improves; or a whole game played from a seed, its record replayed.

use std::time::{Duration, Instant};

use super::{Estimate, GameAlgorithm, Play, PlayedSoFar, Playout, playout, search};
use crate::games::twenty48::game::{Objective, Twenty48};
use crate::games::twenty48::{Board, Dir, Shape};
use crate::jobs::run::{JobReport, Progress};
use crate::jobs::spec::{AlgorithmChoice, HeuristicChoice, JobLimits};
use crate::jobs::status::JobStatus;
use crate::search::game::Answer;
use crate::search::{Budget, CancelFlag, Limits, Stats, Stop, Weight};

/// What a 2048 job is asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSpec {
    pub shape: Shape,
    pub objective: Objective,
    pub task: GameTask,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameTask {
    /// The best move from this position, and every move's value.
    Move(Board),
    /// A whole game: from `start` (or two tiles the seed places), spawns drawn from
    /// `seed`, each move searched within `per_move`.
    Playout {
        start: Option<Board>,
        seed: u64,
        per_move: JobLimits,
    },
}

/// What a 2048 job found.
#[derive(Clone, Debug, PartialEq)]
pub enum GameOutcome {
    Move(Answer<Dir>),
    Playout(Playout),
}

/// A running 2048 job's news.
#[derive(Clone, Debug, PartialEq)]
pub enum GameProgress {
    /// The root's answer so far.
    Answer(Answer<Dir>),
    /// The game so far.
    Played(PlayedSoFar),
}

/// Runs a 2048 job under `limits` (the whole job's) and `cancel`.
pub fn run_game(
    spec: &GameSpec,
    algorithm: GameAlgorithm,
    limits: Limits,
    cancel: CancelFlag,
    progress: Option<Progress>,
) -> JobReport {
    let mut throttle = Throttle::new(progress);
    let (status, stats, outcome, exact) = match &spec.task {
        GameTask::Move(board) => {
            let game = Twenty48 {
                shape: spec.shape,
                objective: spec.objective,
                evaluator: Estimate::shipped(),
            };
            let mut budget = Budget::new(limits, cancel);
            if let Some(progress) = &progress {
                budget = budget.with_progress(progress.sink, progress.interval);
            }
            let mut best = None;
            let report = search(&game, *board, algorithm, &mut budget, &mut |answer| {
                // A new best move is news at once; values alone at the job's rate.
                let changed = best != Some(answer.best);
                best = Some(answer.best);
                throttle.send(changed, || GameProgress::Answer(answer.clone()));
            });
            let status = match report.stop {
                Some(Stop::Cancelled) => JobStatus::Cancelled,
                // An exact answer was asked for and not proved within the limits.
                Some(stop) if algorithm == GameAlgorithm::Exact && !report.answer.exact => {
                    JobStatus::from(stop)
                }
                _ => JobStatus::Solved,
            };
            let exact = report.answer.exact;
            (
                status,
                report.stats,
                GameOutcome::Move(report.answer),
                exact,
            )
        }
        GameTask::Playout {
            start,
            seed,
            per_move,
        } => {
            let play = Play {
                estimate: Estimate::shipped(),
                shape: spec.shape,
                objective: spec.objective,
                start: *start,
                seed: *seed,
                algorithm,
                per_move: Limits {
                    max_nodes: per_move.max_nodes,
                    timeout: per_move.timeout,
                    max_memory_bytes: None,
                },
            };
            let played = playout(&play, limits, &cancel, &mut |so_far| {
                throttle.send(false, || GameProgress::Played(*so_far));
            });
            let status = played.stop.map_or(JobStatus::Solved, JobStatus::from);
            let stats = Stats {
                nodes_expanded: played.nodes,
                elapsed: played.elapsed,
                ..Stats::default()
            };
            (status, stats, GameOutcome::Playout(played), false)
        }
    };
    JobReport {
        status,
        algorithm: AlgorithmChoice::from(algorithm),
        heuristic: HeuristicChoice::Auto,
        weight: Weight::ONE,
        plan: None,
        optimal: exact,
        stats,
        boards: None,
        note: None,
        generation: None,
        game: Some(outcome),
    }
}

/// Sends game progress at most once a progress interval, unless it is urgent.
struct Throttle<'a> {
    progress: Option<Progress<'a>>,
    last: Option<Instant>,
}

impl<'a> Throttle<'a> {
    fn new(progress: Option<Progress<'a>>) -> Self {
        Throttle {
            progress,
            last: None,
        }
    }

    fn send(&mut self, urgent: bool, news: impl FnOnce() -> GameProgress) {
        let Some(progress) = &self.progress else {
            return;
        };
        let due = self
            .last
            .is_none_or(|t| t.elapsed() >= progress.interval.max(Duration::from_millis(1)));
        if urgent || due {
            progress.sink.game(&news());
            self.last = Some(Instant::now());
        }
    }
}
