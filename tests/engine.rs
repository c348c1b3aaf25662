//! The job runner on real instances: every algorithm returns a legal plan, the
//! optimal ones return the known optimal lengths, and limits stop hard searches.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use puzzled::jobs::{
    AlgorithmChoice, Board, ExhaustedReason, HeuristicChoice, JobLimits, JobReport, JobSpec,
    JobStatus, Objective, PuzzleSpec, TableStore, run_job,
};
use puzzled::puzzles::sliding::{GoalSpec, SlidingPuzzle};
use puzzled::search::{CHECK_INTERVAL, CancelFlag, Progress, ProgressSink};

/// `(id, tiles, optimal length)` from a suite file.
fn suite(path: &Path) -> Vec<(String, Vec<u64>, usize)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let numbers: Vec<u64> = fields[1..]
                .iter()
                .map(|t| t.parse().expect("number"))
                .collect();
            let (length, tiles) = numbers.split_last().expect("fields");
            (fields[0].to_string(), tiles.to_vec(), *length as usize)
        })
        .collect()
}

fn eight_puzzles() -> Vec<(String, Vec<u64>, usize)> {
    suite(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/8puzzle100.txt"))
}

fn korf100() -> Vec<(String, Vec<u64>, usize)> {
    suite(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/korf100.txt"))
}

/// A job on a square sliding board, every choice left to its default.
fn sliding(tiles: &[u64], goal: GoalSpec) -> JobSpec {
    let puzzle = SlidingPuzzle::new(tiles, None, &goal).expect("valid board");
    JobSpec::new(PuzzleSpec::Sliding(puzzle))
}

fn run(spec: &JobSpec) -> JobReport {
    run_job(spec, &TableStore::new(None), CancelFlag::new(), None).expect("job runs")
}

/// An independent replay: the blank moves in the plan's direction; returns the final board.
fn play(tiles: &[u64], cols: usize, plan: &str) -> Vec<u64> {
    let mut board = tiles.to_vec();
    let mut blank = board.iter().position(|&t| t == 0).expect("blank");
    for step in plan.chars() {
        let target = match step {
            'u' => blank - cols,
            'd' => blank + cols,
            'l' => blank - 1,
            'r' => blank + 1,
            other => panic!("unexpected move {other}"),
        };
        if step == 'l' || step == 'r' {
            assert_eq!(target / cols, blank / cols, "plan wraps around a row");
        }
        board.swap(blank, target);
        blank = target;
    }
    board
}

#[test]
fn every_algorithm_and_heuristic_solves_8_puzzles_legally_and_optimal_ones_optimally() {
    let goal: Vec<u64> = vec![1, 2, 3, 4, 5, 6, 7, 8, 0];
    let algorithms = [
        AlgorithmChoice::IdaStar,
        AlgorithmChoice::AStar,
        AlgorithmChoice::BreadthFirst,
        AlgorithmChoice::GreedyBestFirst,
        AlgorithmChoice::EnforcedHillClimbing,
        AlgorithmChoice::FeatureSpace,
    ];
    let heuristics = [
        HeuristicChoice::Misplaced,
        HeuristicChoice::Manhattan,
        HeuristicChoice::LinearConflict,
        HeuristicChoice::PatternDatabase(None),
    ];
    for (id, tiles, optimal) in eight_puzzles().into_iter().step_by(10) {
        for algorithm in algorithms {
            for heuristic in heuristics {
                let report = run(&JobSpec {
                    algorithm,
                    heuristic,
                    ..sliding(&tiles, GoalSpec::BlankLast)
                });
                let heuristic = heuristic.name();
                assert_eq!(
                    report.status,
                    JobStatus::Solved,
                    "#{id} {algorithm} {heuristic}"
                );
                let plan = report.plan.as_ref().expect("plan");
                assert_eq!(
                    play(&tiles, 3, &plan.text),
                    goal,
                    "#{id} {algorithm} {heuristic}: plan does not reach the goal"
                );
                let claims_optimal = matches!(
                    algorithm,
                    AlgorithmChoice::IdaStar
                        | AlgorithmChoice::AStar
                        | AlgorithmChoice::BreadthFirst
                );
                assert_eq!(
                    report.optimal, claims_optimal,
                    "#{id} {algorithm} {heuristic}"
                );
                if claims_optimal {
                    assert_eq!(plan.length, optimal, "#{id} {algorithm} {heuristic}");
                } else {
                    assert!(plan.length >= optimal);
                }
            }
        }
    }
}

#[test]
fn the_exact_table_answers_every_8_puzzle_optimally_along_a_single_path() {
    for (id, tiles, optimal) in eight_puzzles() {
        let report = run(&sliding(&tiles, GoalSpec::BlankLast));
        assert!(report.optimal, "#{id}");
        assert_eq!(
            report.plan.as_ref().map(|p| p.length),
            Some(optimal),
            "#{id}"
        );
        // A perfect heuristic expands only the nodes on the path.
        assert_eq!(report.stats.nodes_expanded, optimal as u64, "#{id}");
    }
}

#[test]
fn easy_korf_instances_are_solved_optimally_with_linear_conflict() {
    let korf = korf100();
    for wanted in ["94", "55", "79", "12", "48"] {
        let (id, tiles, optimal) = korf.iter().find(|(id, ..)| id == wanted).expect("instance");
        let report = run(&JobSpec {
            algorithm: AlgorithmChoice::IdaStar,
            heuristic: HeuristicChoice::LinearConflict,
            ..sliding(tiles, GoalSpec::BlankFirst)
        });
        assert_eq!(report.status, JobStatus::Solved, "#{id}");
        assert!(report.optimal);
        let plan = report.plan.expect("plan");
        assert_eq!(plan.length, *optimal, "#{id}");
        assert_eq!(
            play(tiles, 4, &plan.text),
            (0..16).collect::<Vec<u64>>(),
            "#{id}"
        );
    }
}

#[test]
fn unsolvable_boards_are_answered_without_searching() {
    let report = run(&sliding(
        &[2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0],
        GoalSpec::BlankLast,
    ));
    assert_eq!(report.status, JobStatus::Unsolvable);
    assert_eq!(report.stats.nodes_expanded, 0);
}

fn hardest_korf() -> Vec<u64> {
    korf100()
        .into_iter()
        .find(|(id, ..)| id == "88")
        .expect("#88")
        .1
}

#[test]
fn a_node_limit_stops_a_hard_search_exactly_with_statistics() {
    let report = run(&JobSpec {
        algorithm: AlgorithmChoice::IdaStar,
        heuristic: HeuristicChoice::Manhattan,
        limits: JobLimits {
            max_nodes: Some(20000),
            ..JobLimits::default()
        },
        ..sliding(&hardest_korf(), GoalSpec::BlankFirst)
    });
    assert_eq!(
        report.status,
        JobStatus::Exhausted(ExhaustedReason::NodeLimit)
    );
    assert_eq!(report.stats.nodes_expanded, 20000);
    assert!(report.stats.nodes_generated > 20000);
    // IDA*'s threshold never passes the optimal length (65) before it finds a plan.
    assert!(
        report.stats.bound.is_some_and(|b| b > 0 && b <= 65),
        "{:?}",
        report.stats.bound
    );
    assert!(report.plan.is_none() && !report.optimal);
}

#[test]
fn a_timeout_stops_a_hard_search() {
    let report = run(&JobSpec {
        algorithm: AlgorithmChoice::AStar,
        heuristic: HeuristicChoice::Misplaced,
        limits: JobLimits {
            timeout: Some(Duration::from_millis(1)),
            ..JobLimits::default()
        },
        ..sliding(&hardest_korf(), GoalSpec::BlankFirst)
    });
    assert_eq!(
        report.status,
        JobStatus::Exhausted(ExhaustedReason::Timeout)
    );
    assert!(report.stats.nodes_expanded > 0);
    assert!(report.stats.unique_states.is_some_and(|u| u > 0));
}

/// Cancels from another thread on the first progress report and waits until it has.
struct CancelOnFirstReport {
    tx: std::sync::Mutex<Option<(mpsc::Sender<u64>, mpsc::Receiver<()>)>>,
}

impl ProgressSink for CancelOnFirstReport {
    fn progress(&self, progress: &Progress) {
        if let Some((tx, done)) = self.tx.lock().expect("lock").take() {
            tx.send(progress.nodes_expanded).expect("listener");
            done.recv().expect("canceller answers");
        }
    }
}

/// A search job hears nothing of generators or games.
impl puzzled::jobs::run::JobSink for CancelOnFirstReport {}

#[test]
fn cancelling_a_running_job_stops_it_promptly_with_statistics() {
    let job = JobSpec {
        algorithm: AlgorithmChoice::IdaStar,
        heuristic: HeuristicChoice::Manhattan,
        ..sliding(&hardest_korf(), GoalSpec::BlankFirst)
    };
    let cancel = CancelFlag::new();
    let (tx, rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    let sink = CancelOnFirstReport {
        tx: std::sync::Mutex::new(Some((tx, done_rx))),
    };
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            let nodes = rx.recv().expect("a report");
            cancel.cancel();
            done_tx.send(()).expect("job waits");
            nodes
        })
    };
    let progress = puzzled::jobs::run::Progress {
        sink: &sink,
        interval: Duration::ZERO,
    };
    let report = run_job(&job, &TableStore::new(None), cancel, Some(progress)).expect("runs");
    let nodes_at_cancel = canceller.join().expect("canceller");
    assert_eq!(report.status, JobStatus::Cancelled);
    assert!(report.stats.nodes_expanded <= nodes_at_cancel + u64::from(CHECK_INTERVAL));
    assert!(report.stats.nodes_expanded >= nodes_at_cancel);
}

#[test]
fn weighted_search_answers_a_24_puzzle_fast_and_says_it_is_not_optimal() {
    let korf24 = suite(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/korf24.txt"));
    let (id, tiles, optimal) = &korf24[0];
    let report = run(&JobSpec {
        objective: Objective::Any,
        heuristic: HeuristicChoice::LinearConflict,
        ..sliding(tiles, GoalSpec::BlankFirst)
    });
    assert_eq!(report.status, JobStatus::Solved, "#{id}");
    assert!(!report.optimal);
    let plan = report.plan.expect("plan");
    assert!(plan.length >= *optimal);
    assert_eq!(play(tiles, 5, &plan.text), (0..25).collect::<Vec<u64>>());
}

#[test]
fn boards_after_each_step_end_on_the_goal() {
    let report = run(&JobSpec {
        include_boards: true,
        ..sliding(&[1, 2, 3, 0, 5, 6, 4, 7, 8], GoalSpec::BlankLast)
    });
    let boards = report.boards.expect("boards were asked for");
    assert_eq!(boards.len(), report.plan.expect("plan").length);
    assert_eq!(
        boards.last(),
        Some(&Board::Tiles(vec![1, 2, 3, 4, 5, 6, 7, 8, 0]))
    );
}
