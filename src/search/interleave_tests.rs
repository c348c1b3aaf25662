//! Searches that share a job: feature-space searches taking turns
//! ([`solve_interleaved`]), A* below a known cost ([`solve_below`]) on the test maze, and
//! a budget that goes on from an earlier search ([`Budget::carry_on`]).

use std::time::Duration;

use super::tests::Maze;
use super::*;

const SIZE: usize = 40;

/// A SIZE×SIZE room with the start and goal in the top corners, either side of a wall
/// that leaves a gap only at the bottom; with `sealed`, no gap. The estimate pulls
/// every search along the wall first, so each takes many turns. Not `exhaustive`, it
/// stands for a domain that cuts moves.
fn room(sealed: bool, exhaustive: bool) -> Maze {
    let rows: Vec<String> = (0..SIZE)
        .map(|y| {
            (0..SIZE)
                .map(|x| match (x, y) {
                    (0, 0) => 'S',
                    (x, 0) if x == SIZE - 1 => 'G',
                    (x, y) if x == SIZE / 2 && (sealed || y < SIZE - 1) => '#',
                    _ => '.',
                })
                .collect()
        })
        .collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let mut maze = Maze::parse(&rows);
    maze.exhaustive = exhaustive;
    maze
}

/// Open cells on the start's side of the sealed wall.
const START_SIDE: u64 = (SIZE * SIZE / 2) as u64;

const BEST: Advice = Advice::BestPerFeature;
const EVERY: Advice = Advice::EveryImprovement;

#[test]
fn interleaved_searches_take_turns_until_one_solves() {
    let open = room(false, true);
    let (report, last) = solve_interleaved(
        &[(&open, BEST, 1), (&open, EVERY, 3)],
        None,
        &mut Budget::unlimited(),
    );
    let Outcome::Solved(solution) = &report.outcome else {
        panic!("{:?}", report.outcome);
    };
    assert_eq!(open.play(&solution.actions), Some(open.goal));
    assert!(last < 2);
    assert!(!report.proved_optimal);
    // More than a turn of each: the searches did take turns.
    assert!(report.stats.nodes_expanded > 4 * fess::TURN_EXPANSIONS);
}

#[test]
fn only_an_exhaustive_domain_proves_a_sealed_goal_unreachable() {
    let cut = room(true, false);
    let (report, _) = solve_interleaved(
        &[(&cut, BEST, 1), (&cut, EVERY, 1)],
        None,
        &mut Budget::unlimited(),
    );
    assert_eq!(report.outcome, Outcome::GaveUp);
    // Both searches saw all of the start's side before giving up.
    assert_eq!(report.stats.unique_states, Some(2 * START_SIDE));

    // Once the cut search drops out, the exhaustive one goes on and proves it.
    let plain = room(true, true);
    let (report, last) = solve_interleaved(
        &[(&cut, EVERY, 1), (&plain, BEST, 1)],
        None,
        &mut Budget::unlimited(),
    );
    assert_eq!((report.outcome, last), (Outcome::Unsolvable, 1));
    assert_eq!(report.stats.unique_states, Some(2 * START_SIDE));

    // Alone, a cut search proves nothing either.
    let report = solve(
        &cut,
        Algorithm::FeatureSpace { advice: BEST },
        &mut Budget::unlimited(),
    );
    assert_eq!(report.outcome, Outcome::GaveUp);
}

#[test]
fn interleaved_searches_share_the_node_limit_and_the_memory_cap() {
    let cut = room(true, false);
    let searches = [(&cut, BEST, 1), (&cut, EVERY, 1)];
    let limits = Limits {
        max_nodes: Some(300),
        ..Limits::default()
    };
    let (report, _) =
        solve_interleaved(&searches, None, &mut Budget::new(limits, CancelFlag::new()));
    assert_eq!(report.outcome, Outcome::Stopped(Stop::NodeLimit));
    assert_eq!(report.stats.nodes_expanded, 300);

    // A cap one search fits under alone, but not two.
    let alone = |cap| {
        let limits = Limits {
            max_memory_bytes: Some(cap),
            ..Limits::default()
        };
        let mut budget = Budget::new(limits, CancelFlag::new());
        solve_interleaved(&searches[..1], None, &mut budget)
            .0
            .outcome
    };
    let mut cap = 1u64 << 40;
    while alone(cap / 2) == Outcome::GaveUp {
        cap /= 2;
    }
    assert_eq!(alone(cap), Outcome::GaveUp);
    let together = |cap| {
        let limits = Limits {
            max_memory_bytes: Some(cap),
            ..Limits::default()
        };
        solve_interleaved(&searches, None, &mut Budget::new(limits, CancelFlag::new())).0
    };
    // The search that fills the cap drops out, and the other one finishes in the
    // memory it held: it saw all of the start's side.
    let report = together(cap);
    assert_eq!(report.outcome, Outcome::GaveUp);
    let stored = report.stats.unique_states.expect("counted");
    assert!(stored > START_SIDE && stored < 2 * START_SIDE, "{stored}");
    // Under a cap that neither fits alone, the last one stops at it.
    assert_eq!(
        together(cap / 2).outcome,
        Outcome::Stopped(Stop::MemoryLimit)
    );
}

#[test]
fn memory_held_elsewhere_counts_against_the_cap() {
    let limits = Limits {
        max_memory_bytes: Some(1000),
        ..Limits::default()
    };
    let mut budget = Budget::new(limits, CancelFlag::new());
    assert_eq!(budget.check_memory(600), Ok(()));
    budget.set_held_elsewhere(500);
    assert_eq!(budget.check_memory(600), Err(Stop::MemoryLimit));
    budget.set_held_elsewhere(0);
    assert_eq!(budget.check_memory(600), Ok(()));
}

#[test]
fn a_star_below_a_known_cost_finds_the_optimum_or_proves_there_is_none_cheaper() {
    let open = room(false, true);
    let shortest = open.shortest().expect("a way round the wall");
    let report = solve_below(&open, shortest + 10, &mut Budget::unlimited());
    let Outcome::Solved(solution) = &report.outcome else {
        panic!("{:?}", report.outcome);
    };
    assert_eq!(solution.cost, shortest);
    assert!(report.proved_optimal);
    assert_eq!(open.play(&solution.actions), Some(open.goal));

    let report = solve_below(&open, shortest, &mut Budget::unlimited());
    assert_eq!(report.outcome, Outcome::Unsolvable);
    // Only the states that could still beat the bound were stored.
    assert!(report.stats.unique_states < Some(START_SIDE * 2));
}

#[test]
fn a_budget_carries_an_earlier_search_s_counts_and_time_on() {
    let limits = Limits {
        max_nodes: Some(10),
        ..Limits::default()
    };
    let mut budget = Budget::new(limits, CancelFlag::new());
    let spent = Stats {
        nodes_expanded: 8,
        nodes_generated: 20,
        elapsed: std::time::Duration::from_secs(1),
        ..Stats::default()
    };
    budget.carry_on(&spent);
    assert_eq!(budget.expand(), Ok(()));
    assert_eq!(budget.expand(), Err(Stop::NodeLimit));
    let stats = budget.finish();
    assert_eq!((stats.nodes_expanded, stats.nodes_generated), (10, 20));
    assert!(stats.elapsed >= spent.elapsed);
}

/// Cells 0..=LINE in a row, walked a step at a time from 0, or back from LINE
/// ([`Origin::Goal`]); each way sees only its own half and a step past the middle, so
/// neither reaches the other end alone.
struct Half(Origin);

const LINE: i64 = 4 * fess::TURN_EXPANSIONS as i64;

impl Domain for Half {
    type State = i64;
    type Key = i64;
    /// The step: +1 or -1.
    type Action = i64;

    fn initial_state(&self) -> i64 {
        match self.0 {
            Origin::Start => 0,
            Origin::Goal => LINE,
        }
    }
    fn is_goal(&self, cell: &i64) -> bool {
        *cell == LINE - self.initial_state()
    }
    fn key<'s>(&self, cell: &'s i64) -> &'s i64 {
        cell
    }
    fn expand(&self, cell: &i64, out: &mut Vec<Successor<i64, i64>>) {
        let (step, seen) = match self.0 {
            Origin::Start => (1, -1..=LINE / 2 + 1),
            Origin::Goal => (-1, LINE / 2 - 1..=LINE + 1),
        };
        if seen.contains(&(cell + step)) {
            out.push(Successor {
                action: step,
                state: cell + step,
                cost: 1,
            });
        }
    }
    fn estimate(&self, cell: &i64) -> Option<Cost> {
        Some((LINE - self.initial_state() - cell).unsigned_abs() as Cost)
    }
    fn exhaustive(&self) -> bool {
        false
    }
    fn origin(&self) -> Origin {
        self.0
    }
    fn undo(&self, step: i64) -> i64 {
        -step
    }
}

#[test]
fn searches_from_both_ends_meet_and_join_their_paths() {
    let (forward, backward) = (Half(Origin::Start), Half(Origin::Goal));
    for alone in [&forward, &backward] {
        let (report, _) = solve_interleaved(&[(alone, EVERY, 1)], None, &mut Budget::unlimited());
        assert_eq!(report.outcome, Outcome::GaveUp);
    }
    let (report, _) = solve_interleaved(
        &[(&backward, EVERY, 1), (&forward, BEST, 1)],
        None,
        &mut Budget::unlimited(),
    );
    let Outcome::Solved(solution) = report.outcome else {
        panic!("{:?}", report.outcome);
    };
    // The forward half, then the backward one undone: every step forward, 0 to LINE.
    assert_eq!(solution.actions, vec![1; LINE as usize]);
    assert_eq!(solution.cost, LINE as Cost);
}

#[test]
fn a_sprint_runs_alone_first_and_drops_out_unless_it_ends_the_job() {
    let open = room(false, true);
    let searches = [(&open, BEST, 1), (&open, EVERY, 1)];
    let sprint = |expansions, time| {
        Some(Sprint {
            search: 1,
            expansions,
            time,
            patience: u64::MAX,
        })
    };
    let impatient = Some(Sprint {
        patience: 0,
        ..sprint(u64::MAX, None).expect("a sprint")
    });
    let alone = |advice| {
        let report = solve(
            &open,
            Algorithm::FeatureSpace { advice },
            &mut Budget::unlimited(),
        );
        assert!(matches!(report.outcome, Outcome::Solved(_)));
        report.stats.nodes_expanded
    };
    // Long enough, it solves alone: the other search never ran.
    let (report, last) =
        solve_interleaved(&searches, sprint(u64::MAX, None), &mut Budget::unlimited());
    let Outcome::Solved(solution) = &report.outcome else {
        panic!("{:?}", report.outcome);
    };
    assert_eq!(open.play(&solution.actions), Some(open.goal));
    assert_eq!((last, report.stats.nodes_expanded), (1, alone(EVERY)));

    // Cut short, it drops out and the other search starts from nothing.
    let (report, last) = solve_interleaved(&searches, sprint(10, None), &mut Budget::unlimited());
    assert!(matches!(report.outcome, Outcome::Solved(_)));
    assert_eq!((last, report.stats.nodes_expanded), (0, 10 + alone(BEST)));

    // Out of time or of patience before its first turn, it expands nothing.
    for stopped in [sprint(u64::MAX, Some(Duration::ZERO)), impatient] {
        let (report, last) = solve_interleaved(&searches, stopped, &mut Budget::unlimited());
        assert_eq!((last, report.stats.nodes_expanded), (0, alone(BEST)));
    }

    // One that runs out of states without proving anything drops out too.
    let (cut, plain) = (room(true, false), room(true, true));
    let (report, last) = solve_interleaved(
        &[(&cut, EVERY, 1), (&plain, BEST, 1)],
        Some(Sprint {
            search: 0,
            expansions: u64::MAX,
            time: None,
            patience: u64::MAX,
        }),
        &mut Budget::unlimited(),
    );
    assert_eq!((report.outcome, last), (Outcome::Unsolvable, 1));
    assert_eq!(report.stats.unique_states, Some(2 * START_SIDE));
}
