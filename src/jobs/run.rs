//! Running one job end to end: resolve `auto` choices, fetch tables, search under
//! the budget, replay the plan with the validator, and report. Synchronous and
//! pure apart from the table store; the worker pool calls it on its own threads.

use std::sync::Arc;
use std::time::Duration;

use super::spec::{AlgorithmChoice, HeuristicChoice, JobSpec, Objective, PuzzleSpec};
use super::tables::{Layout, LayoutState, TableError, TableStore};
use crate::puzzles::sliding::exact::MAX_EXACT_CELLS;
use crate::puzzles::sliding::heuristic::PdbSet;
use crate::puzzles::sliding::pdb::{Partition, PartitionKind};
use crate::puzzles::sliding::{self, Evaluator, SlidingDomain, SlidingPuzzle};
use crate::puzzles::sokoban::{self, Bound, Level, Techniques};
use crate::search::{
    self, Advice, Algorithm, Budget, CancelFlag, Interrupt, Limits, Outcome, ProgressSink, Stats,
    Stop, Weight,
};

/// Heuristic weight `auto` uses for the `any` objective on boards without tables.
pub const AUTO_ANY_WEIGHT: u32 = 300;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("heuristic {heuristic} is not available for a {rows}x{cols} board: {why}")]
    HeuristicUnavailable {
        heuristic: &'static str,
        rows: usize,
        cols: usize,
        why: String,
    },
    #[error("heuristic {heuristic} does not apply to {puzzle} puzzles")]
    WrongPuzzle {
        heuristic: &'static str,
        puzzle: &'static str,
    },
    #[error("partition {partition} is not available for a {rows}x{cols} board: {why}")]
    PartitionUnavailable {
        partition: &'static str,
        rows: usize,
        cols: usize,
        why: String,
    },
    /// Refused when the request arrives: a job never waits for a table build.
    #[error("{}", table_not_ready(layout, *state))]
    TableNotReady {
        layout: String,
        /// The request field that asked for it: `/partition` or `/heuristic`.
        field: &'static str,
        state: LayoutState,
    },
    #[error(transparent)]
    Table(#[from] TableError),
}

fn table_not_ready(layout: &str, state: LayoutState) -> String {
    match state {
        LayoutState::Refused(refusal) => format!(
            "the pattern databases this request needs ({layout}) are not built: {}; heuristic auto runs without them",
            refusal.explain()
        ),
        _ => format!(
            "the pattern databases this request needs ({layout}) are being built; try again in a few seconds, or use heuristic auto"
        ),
    }
}

/// Why a search ended without a plan but without an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExhaustedReason {
    NodeLimit,
    Timeout,
    MemoryLimit,
    /// An incomplete search (hill-climbing) ran out of ideas.
    GaveUp,
}

impl ExhaustedReason {
    pub fn name(self) -> &'static str {
        match self {
            ExhaustedReason::NodeLimit => "node_limit",
            ExhaustedReason::Timeout => "timeout",
            ExhaustedReason::MemoryLimit => "memory_limit",
            ExhaustedReason::GaveUp => "gave_up",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobStatus {
    Solved,
    Unsolvable,
    Exhausted(ExhaustedReason),
    Cancelled,
    /// An internal fault (a plan that failed its replay); the message is for logs.
    Failed(String),
}

impl JobStatus {
    pub fn name(&self) -> &'static str {
        match self {
            JobStatus::Solved => "solved",
            JobStatus::Unsolvable => "unsolvable",
            JobStatus::Exhausted(_) => "exhausted",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Failed(_) => "failed",
        }
    }
}

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
}

/// The concrete search a spec resolves to.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub algorithm: AlgorithmChoice,
    pub heuristic: HeuristicChoice,
    pub weight: Weight,
    pub evaluation: Evaluation,
    /// For the report: why the heuristic is not the one asked for (tables not ready).
    pub note: Option<String>,
}

/// What scores states: per puzzle, the concrete heuristic.
#[derive(Clone, Debug)]
pub enum Evaluation {
    Sliding(Evaluator),
    /// Searches run in turn, each with its share of what is left of the limits, until
    /// one solves the level, proves it unsolvable or is cancelled.
    Sokoban(Vec<Phase>),
}

/// One search of a Sokoban job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// What the job reports it ran.
    pub algorithm: AlgorithmChoice,
    pub search: Algorithm,
    pub techniques: Techniques,
    /// Its part of the limits, against the `share`s of the phases still to run.
    pub share: u32,
}

/// Resolves `auto` and fetches (or builds) the tables the heuristic needs.
pub fn resolve(spec: &JobSpec, tables: &TableStore) -> Result<Resolved, JobError> {
    match &spec.puzzle {
        PuzzleSpec::Sliding(puzzle) => resolve_sliding(spec, puzzle, tables),
        PuzzleSpec::Sokoban(_) => resolve_sokoban(spec),
    }
}

/// Sokoban needs no tables: the matching bound by default; for `any`, feature-space
/// searches over box moves guided by the packing order, for `optimal`, A* (IDA*
/// revisits too many transpositions).
fn resolve_sokoban(spec: &JobSpec) -> Result<Resolved, JobError> {
    let (heuristic, bound) = match spec.heuristic {
        HeuristicChoice::Auto | HeuristicChoice::Matching => {
            (HeuristicChoice::Matching, Bound::Matching)
        }
        HeuristicChoice::ClosestGoal => (HeuristicChoice::ClosestGoal, Bound::ClosestGoal),
        other => {
            return Err(JobError::WrongPuzzle {
                heuristic: other.name(),
                puzzle: "sokoban",
            });
        }
    };
    let weight = spec.weight.unwrap_or(Weight::ONE);
    // The feature-space search needs box moves: single pushes rarely change a feature.
    let phase = |algorithm, techniques: Techniques, share| Phase {
        algorithm,
        search: search_algorithm(algorithm, weight),
        techniques: Techniques {
            box_moves: algorithm == AlgorithmChoice::FeatureSpace,
            ..techniques
        },
        share,
    };
    let fess = |advice, hotspots, share| {
        let mut fess = phase(AlgorithmChoice::FeatureSpace, Techniques::any(bound), share);
        fess.search = Algorithm::FeatureSpace { advice };
        fess.techniques.hotspots = hotspots;
        fess
    };
    let phases = match (spec.algorithm, spec.objective) {
        (AlgorithmChoice::Auto, Objective::Optimal) => {
            vec![phase(AlgorithmChoice::AStar, Techniques::optimal(bound), 1)]
        }
        // Three feature-space searches that fail on different levels (docs/performance.md, Sokoban)
        // take turns, the fastest on easy levels first. Greedy best-first and A* used to
        // follow them; in their 2/10 they solved nothing the others did not.
        (AlgorithmChoice::Auto, Objective::Any) => vec![
            fess(Advice::EveryImprovement, false, 3),
            fess(Advice::BestPerFeature, true, 4),
            fess(Advice::EveryImprovement, true, 3),
        ],
        (algorithm, Objective::Optimal) => vec![phase(algorithm, Techniques::optimal(bound), 1)],
        (algorithm, Objective::Any) => vec![phase(algorithm, Techniques::any(bound), 1)],
    };
    Ok(Resolved {
        algorithm: phases[0].algorithm,
        heuristic,
        weight,
        evaluation: Evaluation::Sokoban(phases),
        note: None,
    })
}

fn resolve_sliding(
    spec: &JobSpec,
    puzzle: &SlidingPuzzle,
    tables: &TableStore,
) -> Result<Resolved, JobError> {
    let geometry = puzzle.geometry();
    let (mut heuristic, mut note) = match spec.heuristic {
        HeuristicChoice::Auto => auto_heuristic(puzzle, tables),
        other => (other, None),
    };
    // Parity proves an unsolvable board at once; it needs no tables built for it.
    let evaluator = if puzzle.is_solvable() {
        match sliding_evaluator(puzzle, heuristic, tables) {
            // Admitted when its tables were ready, they are gone now (evicted, or this
            // worker never had them): the job runs without them rather than build them.
            Err(JobError::Table(TableError::NotReady)) => {
                if let HeuristicChoice::PatternDatabase(kind) = heuristic
                    && let Ok(layout) = pdb_layout(puzzle, kind, tables)
                    && tables.allows(&layout)
                {
                    tables.request(&layout);
                }
                metrics::counter!("puzzled_table_fallbacks_total").increment(1);
                note = Some(format!(
                    "the pattern databases were not ready when the job ran; it used {}",
                    HeuristicChoice::LinearConflict.name()
                ));
                heuristic = HeuristicChoice::LinearConflict;
                Evaluator::LinearConflict
            }
            other => other?,
        }
    } else {
        Evaluator::Misplaced
    };
    let strong_tables = matches!(
        evaluator,
        Evaluator::Exact(_) | Evaluator::PatternDatabase(_)
    );
    let algorithm = match spec.algorithm {
        AlgorithmChoice::Auto => AlgorithmChoice::IdaStar,
        other => other,
    };
    let weight = match (spec.weight, spec.algorithm, spec.objective) {
        (Some(weight), _, _) => weight,
        // With strong tables optimal answers are fast anyway; otherwise trade length for time.
        (None, AlgorithmChoice::Auto, Objective::Any)
            if !strong_tables || geometry.cells() > 16 =>
        {
            Weight::from_percent(AUTO_ANY_WEIGHT)
        }
        (None, _, _) => Weight::ONE,
    };
    // Weighted IDA* re-expands too much on big boards; weighted A* is the fast choice.
    let algorithm = if spec.algorithm == AlgorithmChoice::Auto && weight != Weight::ONE {
        AlgorithmChoice::AStar
    } else {
        algorithm
    };
    Ok(Resolved {
        algorithm,
        heuristic,
        weight,
        evaluation: Evaluation::Sliding(evaluator),
        note,
    })
}

/// The standard partitions of a board, strongest first.
fn partition_kinds(geometry: sliding::Geometry) -> &'static [PartitionKind] {
    match (geometry.rows, geometry.cols) {
        (4, 4) => &[PartitionKind::SevenEight, PartitionKind::SixSixThree],
        (5, 5) => &[PartitionKind::SixSixSixSix],
        _ => &[],
    }
}

/// The strongest heuristic whose tables are ready: the exact table on boards of ≤ 9
/// cells, else the strongest standard partition. Missing tables that may be built are
/// queued for the background builder (cheap ones for any goal, large ones where the
/// operator allows them); meanwhile the job runs on linear conflict, with a note. The
/// command line builds a small board's exact table at once (milliseconds).
fn auto_heuristic(
    puzzle: &SlidingPuzzle,
    tables: &TableStore,
) -> (HeuristicChoice, Option<String>) {
    let geometry = puzzle.geometry();
    let goal = puzzle.goal();
    let candidates: Vec<(HeuristicChoice, Layout)> = if geometry.cells() <= MAX_EXACT_CELLS {
        vec![(
            HeuristicChoice::PatternDatabase(None),
            Layout::exact(geometry, goal),
        )]
    } else {
        partition_kinds(geometry)
            .iter()
            .map(|&kind| {
                (
                    HeuristicChoice::PatternDatabase(Some(kind)),
                    Layout::partition(kind, geometry, goal),
                )
            })
            .collect()
    };
    if candidates.is_empty() {
        return (HeuristicChoice::LinearConflict, None);
    }
    for (choice, layout) in &candidates {
        if tables.is_ready(layout) {
            return (*choice, None);
        }
        // A stronger layout than the one ready is built where the operator allows it.
        if tables.allows(layout) {
            tables.request(layout);
        }
    }
    if !tables.is_managed() && geometry.cells() <= MAX_EXACT_CELLS {
        return (HeuristicChoice::PatternDatabase(None), None);
    }
    let states: Vec<(Layout, LayoutState)> = candidates
        .into_iter()
        .map(|(_, layout)| {
            let state = tables.request(&layout);
            (layout, state)
        })
        .collect();
    metrics::counter!("puzzled_table_fallbacks_total").increment(1);
    (
        HeuristicChoice::LinearConflict,
        Some(fallback_note(&states)),
    )
}

/// Why `auto` ran on linear conflict: which tables it would have used, and when.
fn fallback_note(states: &[(Layout, LayoutState)]) -> String {
    let fallback = HeuristicChoice::LinearConflict.name();
    let what = |layout: &Layout| match layout {
        Layout::Exact { .. } => format!("the exact table for this goal ({})", layout.name()),
        Layout::Partition { .. } => format!(
            "the {} pattern databases for this goal ({})",
            layout.kind_name(),
            layout.name()
        ),
    };
    let coming = states
        .iter()
        .find(|(_, state)| matches!(state, LayoutState::Queued | LayoutState::Building));
    if let Some((layout, _)) = coming {
        return format!(
            "{} are being built in the background; this job used {fallback}, later jobs use them",
            what(layout)
        );
    }
    let refusals: Vec<String> = states
        .iter()
        .map(|(layout, state)| match state {
            LayoutState::Refused(refusal) => format!("{}: {}", what(layout), refusal.explain()),
            _ => what(layout),
        })
        .collect();
    format!(
        "no pattern database for this goal is built ({}); this job used {fallback}",
        refusals.join("; ")
    )
}

/// The partition `pattern-database` means when none is named: the strongest ready one,
/// or the smallest that can be built (6-6-3 on 4×4, 6-6-6-6 on 5×5).
fn default_partition(puzzle: &SlidingPuzzle, tables: &TableStore) -> Option<PartitionKind> {
    let geometry = puzzle.geometry();
    let kinds = partition_kinds(geometry);
    kinds
        .iter()
        .copied()
        .find(|&kind| tables.is_ready(&Layout::partition(kind, geometry, puzzle.goal())))
        .or_else(|| kinds.last().copied())
}

/// The tables `pattern-database` (with `kind`, if named) needs for this puzzle.
fn pdb_layout(
    puzzle: &SlidingPuzzle,
    kind: Option<PartitionKind>,
    tables: &TableStore,
) -> Result<Layout, JobError> {
    let geometry = puzzle.geometry();
    if kind.is_none() && geometry.cells() <= MAX_EXACT_CELLS {
        return Ok(Layout::exact(geometry, puzzle.goal()));
    }
    let kind = kind
        .or_else(|| default_partition(puzzle, tables))
        .ok_or_else(|| JobError::HeuristicUnavailable {
            heuristic: "pattern-database",
            rows: geometry.rows,
            cols: geometry.cols,
            why: "pattern databases are laid out for 3x3 (exact), 4x4 and 5x5 boards".into(),
        })?;
    let blank_goal = puzzle.goal().iter().position(|&t| t == 0).unwrap_or(0);
    Partition::standard(kind, geometry, blank_goal).map_err(|e| {
        JobError::PartitionUnavailable {
            partition: kind.name(),
            rows: geometry.rows,
            cols: geometry.cols,
            why: e.to_string(),
        }
    })?;
    Ok(Layout::partition(kind, geometry, puzzle.goal()))
}

/// Checks, when a request arrives, that its heuristic fits its puzzle and that the
/// tables an explicit `pattern-database` needs are ready: the service never makes a job wait for a build, nor accepts a job
/// it would then fail. A missing cheap layout is queued, so that a retry in a few
/// seconds finds it. `auto` needs no check: it runs on what is ready.
pub fn admit(spec: &JobSpec, tables: &TableStore) -> Result<(), JobError> {
    // A heuristic of the other kind of puzzle is refused here, not failed by a worker.
    let for_sokoban = matches!(
        spec.heuristic,
        HeuristicChoice::Matching | HeuristicChoice::ClosestGoal
    );
    match &spec.puzzle {
        PuzzleSpec::Sliding(_) if for_sokoban => {
            return Err(JobError::WrongPuzzle {
                heuristic: spec.heuristic.name(),
                puzzle: "sliding",
            });
        }
        PuzzleSpec::Sokoban(_) if !for_sokoban && spec.heuristic != HeuristicChoice::Auto => {
            return Err(JobError::WrongPuzzle {
                heuristic: spec.heuristic.name(),
                puzzle: "sokoban",
            });
        }
        _ => {}
    }
    let (PuzzleSpec::Sliding(puzzle), HeuristicChoice::PatternDatabase(kind)) =
        (&spec.puzzle, spec.heuristic)
    else {
        return Ok(());
    };
    // Parity answers an unsolvable board without tables.
    if !puzzle.is_solvable() {
        return Ok(());
    }
    let layout = pdb_layout(puzzle, kind, tables)?;
    if !tables.is_managed() {
        return Ok(());
    }
    match tables.request(&layout) {
        LayoutState::Ready => Ok(()),
        state => Err(JobError::TableNotReady {
            layout: layout.name(),
            field: if kind.is_some() {
                "/partition"
            } else {
                "/heuristic"
            },
            state,
        }),
    }
}

fn sliding_evaluator(
    puzzle: &SlidingPuzzle,
    heuristic: HeuristicChoice,
    tables: &TableStore,
) -> Result<Evaluator, JobError> {
    let geometry = puzzle.geometry();
    Ok(match heuristic {
        HeuristicChoice::Auto => unreachable!("resolved above"),
        HeuristicChoice::Matching | HeuristicChoice::ClosestGoal => {
            return Err(JobError::WrongPuzzle {
                heuristic: heuristic.name(),
                puzzle: "sliding",
            });
        }
        HeuristicChoice::Misplaced => Evaluator::Misplaced,
        HeuristicChoice::Manhattan => Evaluator::Manhattan,
        HeuristicChoice::LinearConflict => Evaluator::LinearConflict,
        HeuristicChoice::PatternDatabase(kind) => {
            let partition = match pdb_layout(puzzle, kind, tables)? {
                Layout::Exact { .. } => {
                    return Ok(Evaluator::Exact(tables.exact(geometry, puzzle.goal())?));
                }
                Layout::Partition { kind, blank, .. } => Partition::standard(kind, geometry, blank)
                    .map_err(|e| JobError::PartitionUnavailable {
                        partition: kind.name(),
                        rows: geometry.rows,
                        cols: geometry.cols,
                        why: e.to_string(),
                    })?,
            };
            let unavailable = |why: String| JobError::HeuristicUnavailable {
                heuristic: "pattern-database",
                rows: geometry.rows,
                cols: geometry.cols,
                why,
            };
            // One thread a table: on the command line a cold start builds them in parallel
            // and waits for the largest; the service only loads them.
            let dbs = std::thread::scope(|scope| {
                let builds: Vec<_> = partition
                    .patterns
                    .iter()
                    .map(|cells| scope.spawn(move || tables.pattern_db(geometry, cells)))
                    .collect();
                builds
                    .into_iter()
                    .map(|build| {
                        build
                            .join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })?;
            let set = PdbSet::new(geometry, puzzle.goal(), partition, dbs)
                .map_err(|e| unavailable(e.to_string()))?;
            Evaluator::PatternDatabase(Arc::new(set))
        }
    })
}

fn search_algorithm(choice: AlgorithmChoice, weight: Weight) -> Algorithm {
    match choice {
        AlgorithmChoice::Auto | AlgorithmChoice::IdaStar => Algorithm::IdaStar { weight },
        AlgorithmChoice::AStar => Algorithm::AStar { weight },
        AlgorithmChoice::BreadthFirst => Algorithm::BreadthFirst,
        AlgorithmChoice::GreedyBestFirst => Algorithm::GreedyBestFirst,
        AlgorithmChoice::EnforcedHillClimbing => Algorithm::EnforcedHillClimbing,
        AlgorithmChoice::FeatureSpace => Algorithm::FeatureSpace {
            advice: Advice::BestPerFeature,
        },
    }
}

/// How a job reports progress while it runs.
pub struct Progress<'a> {
    pub sink: &'a dyn ProgressSink,
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
        (PuzzleSpec::Sokoban(level), Evaluation::Sokoban(all_phases)) => {
            let started = std::time::Instant::now();
            // The level is compiled once for every phase, under the job's whole limits:
            // on a big level its tables take a while, and a cancel must still be heard.
            let whole_job = Interrupt::new(
                cancel.clone(),
                limits.timeout.map(|t| started + t),
                limits.max_memory_bytes,
            );
            let board = match sokoban::Board::build(level, &whole_job) {
                Ok(board) => board,
                Err(stop) => {
                    let report = search::Report {
                        outcome: Outcome::Stopped(stop),
                        stats: Stats {
                            elapsed: started.elapsed(),
                            ..Stats::default()
                        },
                        proved_optimal: false,
                    };
                    return job_report(resolved, report, false, |_: &[sokoban::Push]| {
                        Err("a stopped search has no plan".to_string())
                    });
                }
            };
            let mut spent = Stats::default();
            let mut phases = all_phases.iter().enumerate().peekable();
            loop {
                let Some((i, phase)) = phases.next() else {
                    break failed(resolved, "internal error: no search to run", spent);
                };
                let shares_left: u32 = all_phases[i..].iter().map(|p| p.share).sum();
                let part = |total: u64| total * u64::from(phase.share) / u64::from(shares_left);
                let share = Limits {
                    max_nodes: limits
                        .max_nodes
                        .map(|n| part(n.saturating_sub(spent.nodes_expanded))),
                    timeout: limits.timeout.map(|t| {
                        let left = t.saturating_sub(started.elapsed());
                        left * phase.share / shares_left
                    }),
                    max_memory_bytes: limits.max_memory_bytes,
                };
                let mut report = sokoban::solve(
                    board.clone(),
                    phase.techniques,
                    phase.search,
                    &mut budget(share),
                );
                spent.nodes_expanded += report.stats.nodes_expanded;
                spent.nodes_generated += report.stats.nodes_generated;
                spent.unique_states = report.stats.unique_states;
                spent.bound = report.stats.bound;
                spent.elapsed = started.elapsed();
                let decided = matches!(
                    report.outcome,
                    Outcome::Solved(_) | Outcome::Unsolvable | Outcome::Stopped(Stop::Cancelled)
                );
                if decided || phases.peek().is_none() {
                    report.stats = spent;
                    let mut job = job_report(resolved, report, spec.include_boards, |pushes| {
                        let text = sokoban::plan::lurd(&board, pushes)
                            .ok_or("the pushes could not be walked")?;
                        check_sokoban(level, text, spec.include_boards)
                    });
                    job.algorithm = phase.algorithm;
                    break job;
                }
            }
        }
        _ => failed(
            resolved,
            "internal error: resolved for another puzzle",
            Stats::default(),
        ),
    }
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
        Outcome::Stopped(Stop::Cancelled) => JobStatus::Cancelled,
        Outcome::Stopped(Stop::NodeLimit) => JobStatus::Exhausted(ExhaustedReason::NodeLimit),
        Outcome::Stopped(Stop::TimeLimit) => JobStatus::Exhausted(ExhaustedReason::Timeout),
        Outcome::Stopped(Stop::MemoryLimit) => JobStatus::Exhausted(ExhaustedReason::MemoryLimit),
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

    use super::*;
    use crate::jobs::spec::JobLimits;
    use crate::jobs::tables::TableLimits;
    use crate::puzzles::sliding::GoalSpec;

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
