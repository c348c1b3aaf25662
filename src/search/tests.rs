//! Engine tests on a small maze domain, independent of any puzzle.

use std::sync::Mutex;
use std::sync::mpsc;

use super::*;

/// A grid maze: `#` walls, `S` start, `G` goal; moves N, S, E, W; Manhattan bound.
pub(super) struct Maze {
    width: i32,
    height: i32,
    walls: Vec<bool>,
    start: (i32, i32),
    pub(super) goal: (i32, i32),
    /// See [`Domain::exhaustive`]: false stands for a domain that cuts moves.
    pub(super) exhaustive: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    N,
    S,
    E,
    W,
}

impl Maze {
    pub(super) fn parse(rows: &[&str]) -> Maze {
        let mut maze = Maze {
            width: rows[0].len() as i32,
            height: rows.len() as i32,
            walls: Vec::new(),
            start: (0, 0),
            goal: (0, 0),
            exhaustive: true,
        };
        for (y, row) in rows.iter().enumerate() {
            for (x, c) in row.chars().enumerate() {
                maze.walls.push(c == '#');
                match c {
                    'S' => maze.start = (x as i32, y as i32),
                    'G' => maze.goal = (x as i32, y as i32),
                    _ => {}
                }
            }
        }
        maze
    }
    fn open(&self, (x, y): (i32, i32)) -> bool {
        x >= 0
            && y >= 0
            && x < self.width
            && y < self.height
            && !self.walls[(y * self.width + x) as usize]
    }
    /// Shortest path length by a plain flood fill, to check the searches against.
    pub(super) fn shortest(&self) -> Option<u32> {
        let mut dist = vec![u32::MAX; self.walls.len()];
        let index = |(x, y): (i32, i32)| (y * self.width + x) as usize;
        let mut queue = std::collections::VecDeque::from([self.start]);
        dist[index(self.start)] = 0;
        while let Some(p) = queue.pop_front() {
            for (dx, dy) in [(0, -1), (0, 1), (1, 0), (-1, 0)] {
                let q = (p.0 + dx, p.1 + dy);
                if self.open(q) && dist[index(q)] == u32::MAX {
                    dist[index(q)] = dist[index(p)] + 1;
                    queue.push_back(q);
                }
            }
        }
        (dist[index(self.goal)] != u32::MAX).then(|| dist[index(self.goal)])
    }
    /// Plays `steps` from the start; the end cell, or `None` if a step hits a wall.
    pub(super) fn play(&self, steps: &[Step]) -> Option<(i32, i32)> {
        steps.iter().try_fold(self.start, |p, &s| {
            let q = self.step(p, s);
            self.open(q).then_some(q)
        })
    }
    fn step(&self, (x, y): (i32, i32), s: Step) -> (i32, i32) {
        match s {
            Step::N => (x, y - 1),
            Step::S => (x, y + 1),
            Step::E => (x + 1, y),
            Step::W => (x - 1, y),
        }
    }
}

impl Domain for Maze {
    type State = (i32, i32);
    type Key = (i32, i32);
    type Action = Step;
    fn initial_state(&self) -> (i32, i32) {
        self.start
    }
    fn is_goal(&self, s: &(i32, i32)) -> bool {
        *s == self.goal
    }
    fn key<'s>(&self, s: &'s (i32, i32)) -> &'s (i32, i32) {
        s
    }
    fn expand(&self, s: &(i32, i32), out: &mut Vec<Successor<(i32, i32), Step>>) {
        for action in [Step::N, Step::S, Step::E, Step::W] {
            let state = self.step(*s, action);
            if self.open(state) {
                out.push(Successor {
                    action,
                    state,
                    cost: 1,
                });
            }
        }
    }
    fn estimate(&self, s: &(i32, i32)) -> Option<Cost> {
        Some((s.0.abs_diff(self.goal.0) + s.1.abs_diff(self.goal.1)) as Cost)
    }
    fn exhaustive(&self) -> bool {
        self.exhaustive
    }
}

const ROOMS: &[&str] = &[
    "S....#.........",
    ".###.#.#######.",
    ".#...#.#.....#.",
    ".#.###.#.###.#.",
    ".#.....#.#G#...",
    ".#######.#.###.",
    ".........#.....",
];

const WALLED_OFF: &[&str] = &["S..#...", "...#.G.", "...#..."];

const ALL: [Algorithm; 7] = [
    Algorithm::IdaStar {
        weight: Weight::ONE,
    },
    Algorithm::AStar {
        weight: Weight::ONE,
    },
    Algorithm::BreadthFirst,
    Algorithm::GreedyBestFirst,
    Algorithm::EnforcedHillClimbing,
    Algorithm::FeatureSpace {
        advice: Advice::BestPerFeature,
    },
    Algorithm::FeatureSpace {
        advice: Advice::EveryImprovement,
    },
];

#[test]
fn every_algorithm_returns_a_legal_plan_and_optimal_ones_are_shortest() {
    let maze = Maze::parse(ROOMS);
    let shortest = maze.shortest().expect("the maze is solvable");
    for algorithm in ALL {
        let report = solve(&maze, algorithm, &mut Budget::unlimited());
        let Outcome::Solved(solution) = &report.outcome else {
            panic!("{algorithm:?} did not solve the maze: {:?}", report.outcome);
        };
        assert_eq!(
            maze.play(&solution.actions),
            Some(maze.goal),
            "{algorithm:?} plan is illegal or misses the goal"
        );
        assert_eq!(solution.cost as usize, solution.actions.len());
        assert_eq!(
            report.proved_optimal,
            algorithm.guarantees_optimal(),
            "{algorithm:?}"
        );
        if algorithm.guarantees_optimal() {
            assert_eq!(solution.cost, shortest, "{algorithm:?} is not optimal");
        } else {
            assert!(solution.cost >= shortest);
        }
        assert!(
            report.stats.nodes_expanded > 0
                && report.stats.nodes_generated >= report.stats.nodes_expanded
        );
        let stores_states = !matches!(algorithm, Algorithm::IdaStar { .. });
        assert_eq!(
            report.stats.unique_states.is_some(),
            stores_states,
            "{algorithm:?}"
        );
    }
}

#[test]
fn weighted_searches_stay_within_their_bound() {
    let maze = Maze::parse(ROOMS);
    let shortest = maze.shortest().expect("solvable");
    for algorithm in [
        Algorithm::IdaStar {
            weight: Weight::from_percent(250),
        },
        Algorithm::AStar {
            weight: Weight::from_percent(250),
        },
    ] {
        let report = solve(&maze, algorithm, &mut Budget::unlimited());
        let Outcome::Solved(solution) = report.outcome else {
            panic!("{algorithm:?} failed")
        };
        assert!(!report.proved_optimal);
        assert!(
            solution.cost * 100 <= shortest * 250,
            "{algorithm:?}: {} vs {shortest}",
            solution.cost
        );
        assert_eq!(maze.play(&solution.actions), Some(maze.goal));
    }
}

#[test]
fn graph_searches_prove_a_walled_off_goal_unreachable() {
    let maze = Maze::parse(WALLED_OFF);
    for algorithm in [
        Algorithm::AStar {
            weight: Weight::ONE,
        },
        Algorithm::BreadthFirst,
        Algorithm::GreedyBestFirst,
        Algorithm::FeatureSpace {
            advice: Advice::BestPerFeature,
        },
        Algorithm::FeatureSpace {
            advice: Advice::EveryImprovement,
        },
    ] {
        let report = solve(&maze, algorithm, &mut Budget::unlimited());
        assert_eq!(report.outcome, Outcome::Unsolvable, "{algorithm:?}");
        assert_eq!(
            report.stats.unique_states,
            Some(9),
            "{algorithm:?} should see the 9 open cells"
        );
    }
    let report = solve(
        &maze,
        Algorithm::EnforcedHillClimbing,
        &mut Budget::unlimited(),
    );
    assert_eq!(report.outcome, Outcome::GaveUp);
}

#[test]
fn node_limit_stops_exactly_and_keeps_statistics() {
    let maze = Maze::parse(WALLED_OFF);
    for (algorithm, max_nodes) in [
        (
            Algorithm::IdaStar {
                weight: Weight::ONE,
            },
            5000,
        ),
        (
            Algorithm::IdaStar {
                weight: Weight::ONE,
            },
            3,
        ),
    ] {
        let limits = Limits {
            max_nodes: Some(max_nodes),
            ..Limits::default()
        };
        let report = solve(
            &maze,
            algorithm,
            &mut Budget::new(limits, CancelFlag::new()),
        );
        assert_eq!(report.outcome, Outcome::Stopped(Stop::NodeLimit));
        assert_eq!(report.stats.nodes_expanded, max_nodes);
        assert!(report.stats.bound.is_some());
    }
}

#[test]
fn a_zero_timeout_stops_at_the_first_check() {
    let maze = Maze::parse(WALLED_OFF);
    let limits = Limits {
        timeout: Some(std::time::Duration::ZERO),
        ..Limits::default()
    };
    let report = solve(
        &maze,
        Algorithm::IdaStar {
            weight: Weight::ONE,
        },
        &mut Budget::new(limits, CancelFlag::new()),
    );
    assert_eq!(report.outcome, Outcome::Stopped(Stop::TimeLimit));
    assert_eq!(report.stats.nodes_expanded, 1);
}

/// A maze whose every expansion costs `cost` of wall-clock time (spun, not slept).
struct SlowMaze {
    maze: Maze,
    cost: std::time::Duration,
}

impl Domain for SlowMaze {
    type State = (i32, i32);
    type Key = (i32, i32);
    type Action = Step;
    fn initial_state(&self) -> (i32, i32) {
        self.maze.initial_state()
    }
    fn is_goal(&self, s: &(i32, i32)) -> bool {
        self.maze.is_goal(s)
    }
    fn key<'s>(&self, s: &'s (i32, i32)) -> &'s (i32, i32) {
        s
    }
    fn expand(&self, s: &(i32, i32), out: &mut Vec<Successor<(i32, i32), Step>>) {
        let started = std::time::Instant::now();
        while started.elapsed() < self.cost {
            std::hint::spin_loop();
        }
        self.maze.expand(s, out);
    }
    fn estimate(&self, s: &(i32, i32)) -> Option<Cost> {
        self.maze.estimate(s)
    }
}

#[test]
fn costly_expansions_are_checked_more_often() {
    // 1,000 open cells and no way to the goal: the search runs until the deadline.
    let rows: Vec<String> = (0..20)
        .map(|y| match y {
            0 => format!("S{}#G", ".".repeat(48)),
            _ => format!("{}#.", ".".repeat(49)),
        })
        .collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let maze = SlowMaze {
        maze: Maze::parse(&rows),
        cost: std::time::Duration::from_millis(1),
    };
    let limits = Limits {
        timeout: Some(std::time::Duration::from_millis(20)),
        ..Limits::default()
    };
    let report = solve(
        &maze,
        Algorithm::BreadthFirst,
        &mut Budget::new(limits, CancelFlag::new()),
    );
    assert_eq!(report.outcome, Outcome::Stopped(Stop::TimeLimit));
    // A fixed interval would expand CHECK_INTERVAL nodes (a second) before looking.
    assert!(
        report.stats.nodes_expanded < 64,
        "{} expansions for a 20 ms deadline at 1 ms each",
        report.stats.nodes_expanded
    );
}

/// A maze whose `trip_at`-th expansion is cut short by its interrupt (a cancel seen
/// mid-expansion): it returns no children, as a long Sokoban expansion does.
struct TruncatedMaze {
    maze: Maze,
    interrupt: Interrupt,
    cancel: CancelFlag,
    expansions: std::cell::Cell<u64>,
    trip_at: u64,
}

impl Domain for TruncatedMaze {
    type State = (i32, i32);
    type Key = (i32, i32);
    type Action = Step;
    fn initial_state(&self) -> (i32, i32) {
        self.maze.initial_state()
    }
    fn is_goal(&self, s: &(i32, i32)) -> bool {
        self.maze.is_goal(s)
    }
    fn key<'s>(&self, s: &'s (i32, i32)) -> &'s (i32, i32) {
        s
    }
    fn expand(&self, s: &(i32, i32), out: &mut Vec<Successor<(i32, i32), Step>>) {
        self.expansions.set(self.expansions.get() + 1);
        if self.expansions.get() == self.trip_at {
            self.cancel.cancel();
        }
        if self.interrupt.check().is_err() {
            return;
        }
        self.maze.expand(s, out);
    }
    fn estimate(&self, s: &(i32, i32)) -> Option<Cost> {
        self.maze.estimate(s)
    }
}

#[test]
fn a_truncated_expansion_stops_the_search_and_proves_nothing() {
    for rows in [ROOMS, WALLED_OFF] {
        for algorithm in ALL {
            let cancel = CancelFlag::new();
            let mut budget = Budget::new(Limits::default(), cancel.clone());
            let maze = TruncatedMaze {
                maze: Maze::parse(rows),
                interrupt: budget.interrupt(),
                cancel,
                expansions: std::cell::Cell::new(0),
                trip_at: 3,
            };
            let report = solve(&maze, algorithm, &mut budget);
            // Without the engine's check the childless expansion would empty the
            // frontier: `Unsolvable` (or `GaveUp`) from a search that saw a third of it.
            assert_eq!(
                report.outcome,
                Outcome::Stopped(Stop::Cancelled),
                "{algorithm:?}"
            );
            assert_eq!(report.stats.nodes_expanded, 3, "{algorithm:?}");
            assert!(!report.proved_optimal);
        }
    }
}

#[test]
fn an_interrupt_polls_the_clock_every_few_thousand_steps_and_keeps_its_first_stop() {
    let cancel = CancelFlag::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    let interrupt = Interrupt::new(cancel.clone(), Some(deadline), Some(1000));
    assert_eq!(interrupt.poll(1), Ok(()));
    cancel.cancel();
    // Seen at the next real check, within POLL_WORK steps.
    let steps = (0..=POLL_WORK).position(|_| interrupt.poll(1).is_err());
    assert!(steps.is_some_and(|n| n < POLL_WORK as usize), "{steps:?}");
    // Every clone sees the first stop, whatever else happens since.
    let clone = interrupt.clone();
    assert_eq!(clone.check_holding(2000), Err(Stop::Cancelled));
    assert_eq!(clone.tripped(), Some(Stop::Cancelled));
    let memory = Interrupt::new(CancelFlag::new(), None, Some(1000));
    assert_eq!(memory.poll_holding(POLL_WORK, || 999), Ok(()));
    assert_eq!(
        memory.poll_holding(POLL_WORK, || 1001),
        Err(Stop::MemoryLimit)
    );
    assert_eq!(Interrupt::never().check_holding(u64::MAX), Ok(()));
}

#[test]
fn memory_cap_stops_graph_searches() {
    let maze = Maze::parse(ROOMS);
    let limits = Limits {
        max_memory_bytes: Some(1),
        ..Limits::default()
    };
    for algorithm in [
        Algorithm::AStar {
            weight: Weight::ONE,
        },
        Algorithm::BreadthFirst,
        Algorithm::GreedyBestFirst,
    ] {
        let report = solve(
            &maze,
            algorithm,
            &mut Budget::new(limits, CancelFlag::new()),
        );
        assert_eq!(
            report.outcome,
            Outcome::Stopped(Stop::MemoryLimit),
            "{algorithm:?}"
        );
    }
}

/// Records progress; on the first report, tells another thread and waits for its
/// answer, so the test knows exactly when that thread acted.
struct SignalOnProgress {
    reports: Mutex<Vec<Progress>>,
    first: Mutex<Option<(mpsc::Sender<u64>, mpsc::Receiver<()>)>>,
}

impl ProgressSink for SignalOnProgress {
    fn progress(&self, progress: &Progress) {
        self.reports.lock().expect("lock").push(*progress);
        if let Some((tx, ack)) = self.first.lock().expect("lock").take() {
            tx.send(progress.nodes_expanded).expect("the test waits");
            ack.recv().expect("the other thread answers");
        }
    }
}

#[test]
fn cancel_from_another_thread_stops_at_the_next_check() {
    let maze = Maze::parse(WALLED_OFF);
    let cancel = CancelFlag::new();
    let (tx, rx) = mpsc::channel();
    let (ack_tx, ack_rx) = mpsc::channel();
    let sink = SignalOnProgress {
        reports: Mutex::new(Vec::new()),
        first: Mutex::new(Some((tx, ack_rx))),
    };
    let canceller = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            let seen = rx.recv().expect("a progress report");
            cancel.cancel();
            ack_tx.send(()).expect("the search waits");
            seen
        })
    };
    let mut budget =
        Budget::new(Limits::default(), cancel).with_progress(&sink, std::time::Duration::ZERO);
    // IDA* on an unreachable goal would run forever: only the cancel can stop it.
    let report = solve(
        &maze,
        Algorithm::IdaStar {
            weight: Weight::ONE,
        },
        &mut budget,
    );
    let seen_at_cancel = canceller.join().expect("canceller");
    assert_eq!(report.outcome, Outcome::Stopped(Stop::Cancelled));
    // The flag was set before the search went on; the next check sees it.
    assert!(report.stats.nodes_expanded <= seen_at_cancel + u64::from(CHECK_INTERVAL));
    let reports = sink.reports.lock().expect("lock");
    assert!(
        reports
            .windows(2)
            .all(|w| w[0].nodes_expanded < w[1].nodes_expanded),
        "progress is monotonic"
    );
}

#[test]
fn progress_is_rate_limited() {
    let maze = Maze::parse(WALLED_OFF);
    let sink = SignalOnProgress {
        reports: Mutex::new(Vec::new()),
        first: Mutex::new(None),
    };
    let limits = Limits {
        max_nodes: Some(50 * u64::from(CHECK_INTERVAL)),
        ..Limits::default()
    };
    let mut budget = Budget::new(limits, CancelFlag::new())
        .with_progress(&sink, std::time::Duration::from_secs(3600));
    let report = solve(
        &maze,
        Algorithm::IdaStar {
            weight: Weight::ONE,
        },
        &mut budget,
    );
    assert_eq!(report.outcome, Outcome::Stopped(Stop::NodeLimit));
    assert!(
        sink.reports.lock().expect("lock").is_empty(),
        "no report before the interval has passed"
    );
}
