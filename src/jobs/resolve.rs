//! From a job spec to the search it runs: `admit` refuses at submission what cannot
//! run (a heuristic of another puzzle, tables that are not ready), and `resolve` turns
//! `auto` into a concrete algorithm, heuristic and weight and fetches the tables, or
//! the Sokoban portfolio of searches.

use std::sync::Arc;

use super::game::GameAlgorithm;
use super::spec::{
    AlgorithmChoice, Heuristic, HeuristicChoice, JobSpec, Objective, PuzzleKind, PuzzleSpec,
};
use super::tables::{Layout, LayoutState, TableError, TableStore};
use crate::puzzles::sliding::exact::MAX_EXACT_CELLS;
use crate::puzzles::sliding::heuristic::PdbSet;
use crate::puzzles::sliding::pdb::{Partition, PartitionKind};
use crate::puzzles::sliding::{self, Evaluator, SlidingPuzzle};
use crate::puzzles::sokoban::{self, Bound, Techniques};
use crate::search::{Advice, Algorithm, Weight};

/// Heuristic weight `auto` uses for the `any` objective on boards without tables.
pub const AUTO_ANY_WEIGHT: u32 = 300;

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("heuristic {heuristic} is not available for a {rows}x{cols} board: {why}")]
    HeuristicUnavailable {
        heuristic: Heuristic,
        rows: usize,
        cols: usize,
        why: String,
    },
    #[error("heuristic {heuristic} does not apply to {puzzle} puzzles")]
    WrongPuzzle {
        heuristic: Heuristic,
        puzzle: PuzzleKind,
    },
    #[error("partition {partition} is not available for a {rows}x{cols} board: {why}")]
    PartitionUnavailable {
        partition: PartitionKind,
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
    #[error("algorithm {algorithm} does not apply to {puzzle} puzzles; expected one of: {}", AlgorithmChoice::names_for(*puzzle).join(", "))]
    WrongAlgorithm {
        algorithm: AlgorithmChoice,
        puzzle: PuzzleKind,
    },
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
    Sokoban(SokobanSearch),
    /// The level generator, which rates with A* and the matching bound.
    Generate,
    /// A game-tree search.
    Game(GameAlgorithm),
}

/// What a Sokoban job runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SokobanSearch {
    /// One search, over pushes or box moves as `techniques` say.
    One {
        search: Algorithm,
        techniques: Techniques,
    },
    /// Feature-space searches over box moves taking turns until one ends the job.
    Interleaved(sokoban::Portfolio),
}

/// A game search on a puzzle, or a puzzle search on a game, cannot run.
fn check_algorithm(spec: &JobSpec) -> Result<(), JobError> {
    let puzzle = spec.puzzle.kind();
    if spec.algorithm.runs_on(puzzle) {
        Ok(())
    } else {
        Err(JobError::WrongAlgorithm {
            algorithm: spec.algorithm,
            puzzle,
        })
    }
}

/// Resolves `auto` and fetches (or builds) the tables the heuristic needs.
pub fn resolve(spec: &JobSpec, tables: &TableStore) -> Result<Resolved, JobError> {
    check_algorithm(spec)?;
    match &spec.puzzle {
        PuzzleSpec::Sliding(puzzle) => resolve_sliding(spec, puzzle, tables),
        PuzzleSpec::Sokoban(_) => resolve_sokoban(spec),
        PuzzleSpec::Twenty48(_) => {
            // Expectimax: the stronger at equal nodes (docs/performance.md, 2048).
            let algorithm = spec.algorithm.game().unwrap_or(GameAlgorithm::Expectimax);
            Ok(Resolved {
                algorithm: algorithm.into(),
                heuristic: HeuristicChoice::Auto,
                weight: Weight::ONE,
                evaluation: Evaluation::Game(algorithm),
                note: None,
            })
        }
        PuzzleSpec::Generate(_) => Ok(Resolved {
            algorithm: AlgorithmChoice::AStar,
            heuristic: HeuristicChoice::Matching,
            weight: Weight::ONE,
            evaluation: Evaluation::Generate,
            note: None,
        }),
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
                heuristic: other.kind(),
                puzzle: PuzzleKind::Sokoban,
            });
        }
    };
    let weight = spec.weight.unwrap_or(Weight::ONE);
    let (algorithm, search) = match (spec.algorithm, spec.objective) {
        (AlgorithmChoice::Auto, Objective::Optimal) => {
            let search = SokobanSearch::One {
                search: search_algorithm(AlgorithmChoice::AStar, weight),
                techniques: Techniques::optimal(bound),
            };
            (AlgorithmChoice::AStar, search)
        }
        (AlgorithmChoice::Auto, Objective::Any) => (
            AlgorithmChoice::FeatureSpace,
            SokobanSearch::Interleaved(sokoban::portfolio(bound)),
        ),
        (algorithm, objective) => {
            let techniques = match objective {
                Objective::Optimal => Techniques::optimal(bound),
                Objective::Any => Techniques::any(bound),
            };
            let search = SokobanSearch::One {
                search: search_algorithm(algorithm, weight),
                // The feature-space search needs box moves: single pushes rarely change
                // a feature.
                techniques: Techniques {
                    box_moves: algorithm == AlgorithmChoice::FeatureSpace,
                    ..techniques
                },
            };
            (algorithm, search)
        }
    };
    Ok(Resolved {
        algorithm,
        heuristic,
        weight,
        evaluation: Evaluation::Sokoban(search),
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
    let mut states: Vec<(Layout, LayoutState)> = Vec::with_capacity(candidates.len());
    for (choice, layout) in candidates {
        let state = tables.request(&layout);
        // A cheap table queued above may already be finished (milliseconds).
        if state == LayoutState::Ready {
            return (choice, None);
        }
        states.push((layout, state));
    }
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
        let verb = match layout {
            Layout::Exact { .. } => "is",
            Layout::Partition { .. } => "are",
        };
        return format!(
            "{} {verb} being built in the background; this job used {fallback}, later jobs use them",
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
            heuristic: Heuristic::PatternDatabase,
            rows: geometry.rows,
            cols: geometry.cols,
            why: "pattern databases are laid out for 3x3 (exact), 4x4 and 5x5 boards".into(),
        })?;
    let blank_goal = puzzle.goal().iter().position(|&t| t == 0).unwrap_or(0);
    Partition::standard(kind, geometry, blank_goal).map_err(|e| {
        JobError::PartitionUnavailable {
            partition: kind,
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
    let heuristic = spec.heuristic.kind();
    let puzzle = spec.puzzle.kind();
    if heuristic.puzzle().is_some_and(|kind| kind != puzzle) {
        return Err(JobError::WrongPuzzle { heuristic, puzzle });
    }
    check_algorithm(spec)?;
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
                heuristic: heuristic.kind(),
                puzzle: PuzzleKind::Sliding,
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
                        partition: kind,
                        rows: geometry.rows,
                        cols: geometry.cols,
                        why: e.to_string(),
                    })?,
            };
            let unavailable = |why: String| JobError::HeuristicUnavailable {
                heuristic: Heuristic::PatternDatabase,
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

pub(super) fn search_algorithm(choice: AlgorithmChoice, weight: Weight) -> Algorithm {
    match choice {
        AlgorithmChoice::Auto | AlgorithmChoice::IdaStar => Algorithm::IdaStar { weight },
        AlgorithmChoice::AStar => Algorithm::AStar { weight },
        AlgorithmChoice::BreadthFirst => Algorithm::BreadthFirst,
        AlgorithmChoice::GreedyBestFirst => Algorithm::GreedyBestFirst,
        AlgorithmChoice::EnforcedHillClimbing => Algorithm::EnforcedHillClimbing,
        AlgorithmChoice::FeatureSpace => Algorithm::FeatureSpace {
            advice: Advice::BestPerFeature,
        },
        // Refused by `admit` on puzzles: a game search cannot run on one.
        AlgorithmChoice::BestFirst
        | AlgorithmChoice::Expectimax
        | AlgorithmChoice::Exact
        | AlgorithmChoice::Greedy => Algorithm::IdaStar { weight },
    }
}
