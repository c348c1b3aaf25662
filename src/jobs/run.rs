//! Running one job end to end: search under the budget what [`resolve`] chose, replay
//! the plan with the validator, and report. Synchronous and pure apart from the table
//! store; the worker pool calls it on its own threads.

use std::time::Duration;

use super::game::{GameOutcome, GameProgress, run_game};
use super::generate::{Generation, run_generate};
use super::resolve::{Evaluation, JobError, Resolved, SokobanSearch, resolve, search_algorithm};
use super::spec::{AlgorithmChoice, HeuristicChoice, JobSpec, PuzzleSpec};
use super::status::{ExhaustedReason, JobStatus};
use super::tables::TableStore;
use crate::puzzles::sliding::{self, Evaluator, SlidingDomain, SlidingPuzzle};
use crate::puzzles::sokoban::generate::GenProgress;
use crate::puzzles::sokoban::{self, Bound, Level, Shortened};
use crate::search::{self, Budget, CancelFlag, Limits, Outcome, ProgressSink, Stats, Weight};

/// One plan type for every puzzle: its text, and its length in moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `u d l r` for sliding puzzles (the blank's direction); LURD for Sokoban
    /// (lower case moves, upper case pushes).
    pub text: String,
    pub length: usize,
    /// Sokoban only: how many of the moves push a box.
    pub pushes: Option<usize>,
}

/// A board after one plan step (sliding) or push (Sokoban).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Board {
    Tiles(Vec<u8>),
    /// XSB text.
    Xsb(String),
}

#[derive(Clone, Debug)]
pub struct JobReport {
    pub status: JobStatus,
    /// What `auto` resolved to.
    pub algorithm: AlgorithmChoice,
    pub heuristic: HeuristicChoice,
    pub weight: Weight,
    pub plan: Option<Plan>,
    /// True only when the algorithm and heuristic guarantee the plan is shortest.
    pub optimal: bool,
    pub stats: Stats,
    /// Boards after each step, when the spec asked for them.
    pub boards: Option<Vec<Board>>,
    /// Why the job ran on another heuristic than the one it would have used.
    pub note: Option<String>,
    /// A generate job's levels.
    pub generation: Option<Generation>,
    /// A 2048 job's answer or game.
    pub game: Option<GameOutcome>,
}

/// Hears a job's progress: a search's, a generator's or a game's. A sink that follows
/// searches only need not hear the others.
pub trait JobSink: ProgressSink {
    fn generation(&self, _progress: &GenProgress) {}
    fn game(&self, _progress: &GameProgress) {}
}

/// How a job reports progress while it runs.
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    pub sink: &'a dyn JobSink,
    pub interval: Duration,
}

/// A plan that passed its replay, and the boards it went through (when asked).
struct Checked {
    plan: Plan,
    boards: Vec<Board>,
}

/// Runs a resolved job. Every plan is replayed by the validator before it is reported.
pub fn run_resolved(
    spec: &JobSpec,
    resolved: &Resolved,
    cancel: CancelFlag,
    progress: Option<Progress>,
) -> JobReport {
    let limits = Limits {
        max_nodes: spec.limits.max_nodes,
        timeout: spec.limits.timeout,
        max_memory_bytes: spec.limits.max_memory_bytes,
    };
    let budget = |limits| {
        let budget = Budget::new(limits, cancel.clone());
        match &progress {
            Some(progress) => budget.with_progress(progress.sink, progress.interval),
            None => budget,
        }
    };
    match (&spec.puzzle, &resolved.evaluation) {
        (PuzzleSpec::Sliding(puzzle), Evaluation::Sliding(evaluator)) => {
            let domain = SlidingDomain::new(puzzle, evaluator.clone());
            let algorithm = search_algorithm(resolved.algorithm, resolved.weight);
            let report = search::solve(&domain, algorithm, &mut budget(limits));
            job_report(resolved, report, spec.include_boards, |moves| {
                check_sliding(puzzle, moves, spec.include_boards)
            })
        }
        (PuzzleSpec::Sokoban(level), Evaluation::Sokoban(search)) => {
            let mut job_budget = budget(limits);
            // The level is compiled once for every search, under the job's limits: on a
            // big level its tables take a while, and a cancel must still be heard.
            let board = match sokoban::Board::build(level, &job_budget.interrupt()) {
                Ok(board) => board,
                Err(stop) => {
                    let report = search::Report {
                        outcome: Outcome::Stopped(stop),
                        stats: job_budget.finish(),
                        proved_optimal: false,
                    };
                    return job_report(resolved, report, false, |_: &[sokoban::Push]| {
                        Err("a stopped search has no plan".to_string())
                    });
                }
            };
            let report = match search {
                SokobanSearch::One { search, techniques } => {
                    sokoban::solve(board.clone(), *techniques, *search, &mut job_budget)
                }
                SokobanSearch::Interleaved(portfolio) => {
                    let (report, _) =
                        sokoban::solve_interleaved(&board, portfolio, &mut job_budget);
                    let spent = report.stats;
                    // As long again as the search took, within what is left.
                    let want = spent.elapsed.max(SHORTEN_AT_LEAST);
                    let timeout = limits
                        .timeout
                        .map_or(want, |total| want.min(total.saturating_sub(spent.elapsed)));
                    let mut after = budget(Limits {
                        timeout: Some(timeout),
                        ..limits
                    });
                    after.carry_on(&spent);
                    let bound = portfolio
                        .variants
                        .first()
                        .map_or(Bound::Matching, |v| v.techniques.bound);
                    shorten(&board, bound, report, after)
                }
            };
            job_report(resolved, report, spec.include_boards, |pushes| {
                let text =
                    sokoban::plan::lurd(&board, pushes).ok_or("the pushes could not be walked")?;
                check_sokoban(level, text, spec.include_boards)
            })
        }
        (PuzzleSpec::Generate(params), Evaluation::Generate) => {
            run_generate(params, limits, cancel, progress)
        }
        (PuzzleSpec::Twenty48(game), Evaluation::Game(algorithm)) => {
            run_game(game, *algorithm, limits, cancel, progress)
        }
        _ => failed(
            resolved,
            "internal error: resolved for another puzzle",
            Stats::default(),
        ),
    }
}

/// The least time a found Sokoban plan is given to be shortened.
const SHORTEN_AT_LEAST: Duration = Duration::from_millis(100);

/// A solved `report` with its plan replaced by a push-optimal one, or marked optimal,
/// when [`sokoban::shorten`] manages within `budget` (one that carries the search's
/// counts on: [`Budget::carry_on`]).
fn shorten(
    board: &sokoban::Board,
    bound: Bound,
    mut report: search::Report<sokoban::Push>,
    mut budget: Budget,
) -> search::Report<sokoban::Push> {
    let Outcome::Solved(solution) = &mut report.outcome else {
        return report;
    };
    if budget.cut_short().is_err() {
        return report;
    }
    let (found, stats) =
        sokoban::shorten(board.clone(), bound, solution.actions.len(), &mut budget);
    match found {
        Shortened::Shorter(pushes) => {
            solution.cost = pushes.len() as search::Cost;
            solution.actions = pushes;
            report.proved_optimal = true;
        }
        Shortened::Optimal => report.proved_optimal = true,
        Shortened::Unknown => {}
    }
    // The budget carried the search's counts on: these are the job's totals.
    report.stats.nodes_expanded = stats.nodes_expanded;
    report.stats.nodes_generated = stats.nodes_generated;
    report.stats.elapsed = stats.elapsed;
    report
}

fn failed(resolved: &Resolved, why: &str, stats: Stats) -> JobReport {
    JobReport {
        status: JobStatus::Failed(why.into()),
        algorithm: resolved.algorithm,
        heuristic: resolved.heuristic,
        weight: resolved.weight,
        plan: None,
        optimal: false,
        stats,
        boards: None,
        note: resolved.note.clone(),
        generation: None,
        game: None,
    }
}

fn check_sliding(
    puzzle: &SlidingPuzzle,
    moves: &[sliding::Move],
    include_boards: bool,
) -> Result<Checked, String> {
    let text = sliding::plan_text(moves);
    let replay = sliding::replay(puzzle, &text, include_boards);
    if !replay.solved {
        return Err(format!("{:?}", replay.error));
    }
    Ok(Checked {
        plan: Plan {
            length: replay.length,
            text,
            pushes: None,
        },
        boards: replay.boards.into_iter().map(Board::Tiles).collect(),
    })
}

/// Replays a LURD plan; the boards, when asked, are the level after each push.
fn check_sokoban(level: &Level, text: String, include_boards: bool) -> Result<Checked, String> {
    let snapshots = if include_boards {
        sokoban::Snapshots::EachPush
    } else {
        sokoban::Snapshots::None
    };
    let replay = sokoban::replay(level, &text, snapshots);
    if !replay.solved {
        return Err(format!("{:?}", replay.error));
    }
    Ok(Checked {
        plan: Plan {
            length: replay.moves,
            text,
            pushes: Some(replay.pushes),
        },
        boards: replay.boards.into_iter().map(Board::Xsb).collect(),
    })
}

/// The job's report from the search's: a solution counts only once `check` has
/// replayed it.
fn job_report<A>(
    resolved: &Resolved,
    report: search::Report<A>,
    include_boards: bool,
    check: impl FnOnce(&[A]) -> Result<Checked, String>,
) -> JobReport {
    let mut job = JobReport {
        status: JobStatus::Solved,
        algorithm: resolved.algorithm,
        heuristic: resolved.heuristic,
        weight: resolved.weight,
        plan: None,
        optimal: false,
        stats: report.stats,
        boards: None,
        note: resolved.note.clone(),
        generation: None,
        game: None,
    };
    job.status = match report.outcome {
        Outcome::Solved(solution) => match check(&solution.actions) {
            Ok(checked) => {
                job.optimal = report.proved_optimal;
                job.plan = Some(checked.plan);
                job.boards = include_boards.then_some(checked.boards);
                JobStatus::Solved
            }
            Err(why) => JobStatus::Failed(format!(
                "internal error: the plan failed its replay ({why})"
            )),
        },
        Outcome::Unsolvable => JobStatus::Unsolvable,
        Outcome::GaveUp => JobStatus::Exhausted(ExhaustedReason::GaveUp),
        Outcome::Stopped(stop) => JobStatus::from(stop),
    };
    job
}

/// Resolves and runs a job.
pub fn run_job(
    spec: &JobSpec,
    tables: &TableStore,
    cancel: CancelFlag,
    progress: Option<Progress>,
) -> Result<JobReport, JobError> {
    let resolved = resolve(spec, tables)?;
    let report = run_resolved(spec, &resolved, cancel, progress);
    // The job may hold the last copy of a table evicted while it ran: freeing hundreds of
    // megabytes is not the report's business.
    if let Evaluation::Sliding(Evaluator::PatternDatabase(_) | Evaluator::Exact(_)) =
        resolved.evaluation
    {
        super::memory::drop_in_background(resolved);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use std::sync::Arc;

    use super::*;
    use crate::jobs::resolve::admit;
    use crate::jobs::spec::{JobLimits, Objective};
    use crate::jobs::tables::LayoutState;
    use crate::jobs::tables::TableLimits;
    use crate::puzzles::sliding::GoalSpec;
    use crate::puzzles::sliding::pdb::PartitionKind;

    fn blank_first_job(tiles: &[u64], heuristic: HeuristicChoice) -> JobSpec {
        JobSpec {
            puzzle: PuzzleSpec::Sliding(
                SlidingPuzzle::new(tiles, None, &GoalSpec::BlankFirst).expect("valid"),
            ),
            algorithm: AlgorithmChoice::Auto,
            heuristic,
            objective: Objective::Optimal,
            weight: None,
            limits: JobLimits::default(),
            include_boards: false,
        }
    }

    /// A blank-first 15-puzzle: `auto` runs on linear conflict while the background
    /// builder makes its 6-6-3 tables (about 50 s in a debug build, seconds in release),
    /// then on the pattern databases; an explicit request is refused until then.
    #[test]
    fn a_blank_first_15_puzzle_gets_its_6_6_3_tables_in_the_background() {
        let tables = Arc::new(TableStore::managed(None, TableLimits::default()));
        let builder = tables.start_builder().expect("thread");
        let tiles: Vec<u64> = vec![1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        let auto = blank_first_job(&tiles, HeuristicChoice::Auto);
        let first = resolve(&auto, &tables).expect("resolves");
        assert_eq!(first.heuristic, HeuristicChoice::LinearConflict);
        assert!(
            first
                .note
                .as_deref()
                .is_some_and(|n| n.contains("4x4:6-6-3:blank-first") && n.contains("being built")),
            "{:?}",
            first.note
        );
        let explicit = blank_first_job(&tiles, HeuristicChoice::PatternDatabase(None));
        assert!(matches!(
            admit(&explicit, &tables),
            Err(JobError::TableNotReady {
                field: "/heuristic",
                state: LayoutState::Queued | LayoutState::Building,
                ..
            })
        ));
        let deadline = Instant::now() + Duration::from_secs(600);
        while !tables
            .status()
            .built
            .contains(&"4x4:6-6-3:blank-first".to_string())
        {
            assert!(
                Instant::now() < deadline,
                "never built: {:?}",
                tables.status()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        admit(&explicit, &tables).expect("ready now");
        let report = run_job(&auto, &tables, CancelFlag::new(), None).expect("runs");
        assert_eq!(
            report.heuristic,
            HeuristicChoice::PatternDatabase(Some(PartitionKind::SixSixThree))
        );
        assert_eq!(report.note, None);
        assert_eq!(report.plan.map(|p| p.length), Some(1));
        tables.shutdown();
        builder.join().expect("builder ends");
    }
}
