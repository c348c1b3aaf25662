use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;

use super::exact::ExactTable;
use super::heuristic::PdbSet;
use super::pdb::{self, Partition, PartitionKind, PatternDb};
use super::*;
use crate::search::{Domain, Successor};

fn puzzle(tiles: &[u64], cols: Option<usize>, goal: &GoalSpec) -> SlidingPuzzle {
    SlidingPuzzle::new(tiles, cols, goal).expect("valid puzzle")
}

/// A stop flag nobody sets.
fn go() -> AtomicBool {
    AtomicBool::new(false)
}

fn blank_last_3x3() -> &'static ExactTable {
    static TABLE: OnceLock<ExactTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        ExactTable::build(
            Geometry { rows: 3, cols: 3 },
            &[1, 2, 3, 4, 5, 6, 7, 8, 0],
            &go(),
        )
        .expect("3x3 fits")
    })
}

#[test]
fn bad_boards_get_errors_that_name_the_problem() {
    let cases: &[(&[u64], Option<usize>, GoalSpec, &str)] = &[
        (
            &[1, 2, 3, 0, 4],
            None,
            GoalSpec::BlankLast,
            "5 tiles do not form a square board",
        ),
        (
            &[1, 2, 3, 4, 5, 0],
            Some(4),
            GoalSpec::BlankLast,
            "6 tiles do not fill whole rows of 4 columns",
        ),
        (
            &[1, 2, 0],
            Some(3),
            GoalSpec::BlankLast,
            "1x3 board is outside the supported sizes",
        ),
        (
            &[1, 2, 3, 9, 5, 6, 7, 8, 0],
            None,
            GoalSpec::BlankLast,
            "tile 9 is out of range",
        ),
        (
            &[1, 2, 3, 3, 5, 6, 7, 8, 0],
            None,
            GoalSpec::BlankLast,
            "tile 3 appears more than once",
        ),
        (
            &[1, 2, 3, 0],
            None,
            GoalSpec::Tiles(vec![0, 1, 2]),
            "goal: has 3 tiles, but the board needs 4",
        ),
        (
            &[1, 2, 3, 0],
            None,
            GoalSpec::Tiles(vec![0, 1, 1, 2]),
            "goal: tile 1 appears more than once",
        ),
    ];
    for (tiles, cols, goal, message) in cases {
        let error = SlidingPuzzle::new(tiles, *cols, goal).expect_err("must be rejected");
        assert!(
            error.to_string().contains(message),
            "{tiles:?}: got '{error}', want '{message}'"
        );
    }
    let oversized: Vec<u64> = (0..81).collect();
    assert!(matches!(
        SlidingPuzzle::new(&oversized, None, &GoalSpec::BlankFirst),
        Err(BoardError::BadSize {
            rows: 9,
            cols: 9,
            ..
        })
    ));
    let error = parse_tiles("tiles", "1 2 x 3").expect_err("x is no number");
    assert_eq!(
        error.to_string(),
        "tiles: 'x' (item 3) is not a whole number"
    );
    assert_eq!(
        parse_tiles("tiles", "1,2, 3\n4").expect("numbers"),
        vec![1, 2, 3, 4]
    );
}

#[test]
fn rectangular_boards_and_explicit_goals_are_accepted() {
    let p = puzzle(&[1, 2, 3, 4, 5, 0], Some(3), &GoalSpec::BlankLast);
    assert_eq!(p.geometry(), Geometry { rows: 2, cols: 3 });
    let korf = puzzle(&[1, 0, 2, 3], None, &GoalSpec::BlankFirst);
    assert_eq!(korf.goal(), &[0, 1, 2, 3]);
}

#[test]
fn moves_follow_the_blank_and_stay_on_the_board() {
    let g = Geometry { rows: 3, cols: 4 };
    assert_eq!(g.neighbour(0, Move::Up), None);
    assert_eq!(g.neighbour(0, Move::Left), None);
    assert_eq!(g.neighbour(0, Move::Right), Some(1));
    assert_eq!(g.neighbour(0, Move::Down), Some(4));
    assert_eq!(g.neighbour(11, Move::Right), None);
    assert_eq!(g.neighbour(11, Move::Down), None);
    assert_eq!(
        g.neighbour(3, Move::Right),
        None,
        "no wrap-around to the next row"
    );
    assert_eq!(
        g.neighbour(4, Move::Left),
        None,
        "no wrap-around to the previous row"
    );
    let p = puzzle(&[1, 2, 3, 4, 0, 5, 6, 7, 8], None, &GoalSpec::BlankLast);
    let domain = SlidingDomain::new(&p, Evaluator::Manhattan);
    let mut out: Vec<Successor<_, Move>> = Vec::new();
    domain.expand(&domain.initial_state(), &mut out);
    let moves: Vec<Move> = out.iter().map(|s| s.action).collect();
    assert_eq!(moves, Move::ALL.to_vec(), "the centre blank has four moves");
    let up = &out[0].state;
    assert_eq!(up.cells(p.geometry()), &[1, 0, 3, 4, 2, 5, 6, 7, 8]);
}

#[test]
fn replay_reports_the_first_bad_step_and_the_boards() {
    let p = puzzle(&[1, 2, 3, 4, 5, 6, 7, 0, 8], None, &GoalSpec::BlankLast);
    let good = replay(&p, "r", true);
    assert!(good.legal && good.solved);
    assert_eq!(good.boards, vec![vec![1, 2, 3, 4, 5, 6, 7, 8, 0]]);
    let wall = replay(&p, "ldd", false);
    assert!(!wall.legal && !wall.solved);
    assert_eq!(wall.length, 1);
    let error = wall.error.expect("an error");
    assert_eq!(error.step, 2);
    assert_eq!(
        error.reason,
        "the blank at row 3, column 1 cannot move down"
    );
    let letter = replay(&p, "rx", false);
    assert_eq!(
        letter.error.map(|e| (e.step, e.reason)),
        Some((2, "'x' is not a move (use u, d, l, r)".to_string()))
    );
    let short = replay(&p, "lr", false);
    assert!(short.legal && !short.solved);
    assert!(
        replay(&p, "R", false).solved,
        "letters are case-insensitive"
    );
}

#[test]
fn the_exact_table_matches_the_known_8_puzzle_facts() {
    let table = blank_last_3x3();
    assert_eq!(table.reachable_states(), 181_440);
    assert_eq!(table.max_distance(), 31);
    let histogram = table.histogram();
    assert_eq!(
        &histogram[29..],
        &[760, 221, 2],
        "OEIS A089473 ends 760, 221, 2"
    );
    assert_eq!(table.distance(&[8, 6, 7, 2, 5, 4, 3, 0, 1]), Some(31));
    assert_eq!(table.distance(&[6, 4, 7, 8, 5, 0, 3, 2, 1]), Some(31));
    assert_eq!(
        table.distance(&[1, 2, 3, 4, 5, 6, 8, 7, 0]),
        None,
        "one swap is the other parity class"
    );
}

#[test]
fn exact_tables_survive_a_round_trip_and_reject_damage() {
    let g = Geometry { rows: 2, cols: 3 };
    let goal = [1, 2, 3, 4, 5, 0];
    let table = ExactTable::build(g, &goal, &go()).expect("small");
    assert_eq!(table.reachable_states(), 360);
    let bytes = table.to_bytes();
    assert_eq!(ExactTable::from_bytes(&bytes, g, &goal), Ok(table));
    let mut damaged = bytes.clone();
    damaged[30] ^= 1;
    assert!(ExactTable::from_bytes(&damaged, g, &goal).is_err());
    assert!(
        ExactTable::from_bytes(&bytes, g, &[0, 1, 2, 3, 4, 5]).is_err(),
        "another goal's table"
    );
    assert!(
        ExactTable::from_bytes(&bytes[..bytes.len() - 1], g, &goal).is_err(),
        "truncated"
    );
}

fn random_board(cells: usize, seed: u64) -> Vec<u64> {
    // A small deterministic shuffle (xorshift) so failures reproduce.
    let mut state = seed | 1;
    let mut tiles: Vec<u64> = (0..cells as u64).collect();
    for i in (1..cells).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        tiles.swap(i, (state % (i as u64 + 1)) as usize);
    }
    tiles
}

#[test]
fn parity_agrees_with_reachability_on_every_small_board_shape() {
    for (rows, cols) in [(2, 2), (2, 3), (3, 2), (2, 4), (4, 2), (3, 3)] {
        let g = Geometry { rows, cols };
        for goal in [
            GoalSpec::BlankLast,
            GoalSpec::BlankFirst,
            GoalSpec::Tiles(random_board(rows * cols, 99)),
        ] {
            let goal_board = puzzle(&random_board(rows * cols, 1), Some(cols), &goal)
                .goal()
                .to_vec();
            let table = ExactTable::build(g, &goal_board, &go()).expect("small");
            for seed in 0..200 {
                let p = puzzle(&random_board(rows * cols, seed), Some(cols), &goal);
                assert_eq!(
                    p.is_solvable(),
                    table.distance(p.start()).is_some(),
                    "{rows}x{cols} {:?} -> {:?}",
                    p.start(),
                    p.goal()
                );
            }
        }
    }
}

#[test]
fn parity_on_larger_boards_matches_the_classic_rule() {
    // Classic rule for the blank-last goal: odd width, inversions even; even width,
    // inversions plus the blank's row from the bottom (1-based) odd.
    for (rows, cols) in [(4, 4), (5, 5), (3, 4), (4, 5), (8, 8), (6, 7)] {
        for seed in 0..100 {
            let tiles = random_board(rows * cols, seed + 1000);
            let p = puzzle(&tiles, Some(cols), &GoalSpec::BlankLast);
            let values: Vec<u64> = tiles.iter().copied().filter(|&t| t != 0).collect();
            let inversions = (0..values.len())
                .flat_map(|i| (i + 1..values.len()).map(move |j| (i, j)))
                .filter(|&(i, j)| values[i] > values[j])
                .count();
            let blank_row_from_bottom =
                rows - tiles.iter().position(|&t| t == 0).expect("blank") / cols;
            let classic = if cols % 2 == 1 {
                inversions % 2 == 0
            } else {
                (inversions + blank_row_from_bottom) % 2 == 1
            };
            assert_eq!(p.is_solvable(), classic, "{rows}x{cols} {tiles:?}");
        }
    }
}

#[test]
fn rank_and_unrank_are_inverse() {
    let cells = 9;
    let mut seen = std::collections::HashSet::new();
    let mut out = [0u8; 3];
    for index in 0..pdb::table_entries(cells, 3) as usize {
        pdb::unrank(index, cells, &mut out);
        assert_eq!(pdb::rank(&out, cells), index);
        assert!(seen.insert(out));
    }
    assert_eq!(seen.len(), 9 * 8 * 7);
}

/// Two 4-tile patterns on the 3×3 board: small enough to build in a test.
fn small_pdb(goal: &[u8]) -> PdbSet {
    let g = Geometry { rows: 3, cols: 3 };
    let blank = goal.iter().position(|&t| t == 0).expect("blank");
    let cells: Vec<u8> = (0..9).filter(|&c| c != blank as u8).collect();
    let patterns = vec![cells[..4].to_vec(), cells[4..].to_vec()];
    let partition = Partition::new("4-4", g, blank, patterns.clone()).expect("valid");
    let tables = patterns
        .iter()
        .map(|p| Arc::new(PatternDb::build(g, p, |_| {}, &go()).expect("small")))
        .collect();
    PdbSet::new(g, goal, partition, tables).expect("consistent")
}

fn evaluators() -> Vec<(&'static str, Evaluator)> {
    vec![
        ("misplaced", Evaluator::Misplaced),
        ("manhattan", Evaluator::Manhattan),
        ("linear-conflict", Evaluator::LinearConflict),
        (
            "pdb 4-4",
            Evaluator::PatternDatabase(Arc::new(small_pdb(&[1, 2, 3, 4, 5, 6, 7, 8, 0]))),
        ),
        (
            "exact",
            Evaluator::Exact(Arc::new(blank_last_3x3().clone())),
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every heuristic is a lower bound on the exact distance, and the incremental update
    /// along a random walk equals scoring from scratch.
    #[test]
    fn heuristics_are_admissible_and_incremental_updates_are_exact(seed in 1u64.., walk in proptest::collection::vec(0usize..4, 0..40)) {
        let table = blank_last_3x3();
        let tiles = random_board(9, seed);
        let p = puzzle(&tiles, None, &GoalSpec::BlankLast);
        prop_assume!(p.is_solvable());
        for (name, evaluator) in evaluators() {
            let domain = SlidingDomain::new(&p, evaluator);
            let mut state = domain.initial_state();
            let mut out = Vec::new();
            for &pick in &walk {
                let exact = table.distance(state.cells(p.geometry())).expect("reachable");
                prop_assert!(state.estimate() <= u32::from(exact), "{name}: {} > {exact}", state.estimate());
                prop_assert_eq!(domain.score(state.cells(p.geometry())), state, "{} drifted", name);
                out.clear();
                domain.expand(&state, &mut out);
                state = out[pick % out.len()].state;
            }
        }
    }
}

#[test]
fn pattern_databases_with_mirror_are_admissible_for_an_off_corner_goal() {
    // Blank's goal in the middle of an edge: the mirror must switch itself off.
    let goal = [1, 0, 2, 3, 4, 5, 6, 7, 8];
    let set = small_pdb(&goal);
    assert!(
        !set.mirrors(),
        "the mirrored board would put a tile on the blank's goal"
    );
    let g = Geometry { rows: 3, cols: 3 };
    let table = ExactTable::build(g, &goal, &go()).expect("small");
    let set = Arc::new(set);
    for seed in 0..300 {
        let p = puzzle(
            &random_board(9, seed),
            None,
            &GoalSpec::Tiles(goal.iter().map(|&t| u64::from(t)).collect()),
        );
        if !p.is_solvable() {
            continue;
        }
        let domain = SlidingDomain::new(&p, Evaluator::PatternDatabase(set.clone()));
        let exact = table.distance(p.start()).expect("solvable");
        assert!(domain.initial_state().estimate() <= u32::from(exact));
    }
    assert!(
        small_pdb(&[0, 1, 2, 3, 4, 5, 6, 7, 8]).mirrors(),
        "a corner blank mirrors onto itself"
    );
}

#[test]
fn pattern_databases_survive_a_round_trip() {
    let g = Geometry { rows: 3, cols: 3 };
    let db = PatternDb::build(g, &[0, 1, 2], |_| {}, &go()).expect("small");
    assert_eq!(db.memory_bytes(), 9 * 8 * 7);
    assert_eq!(db.lookup(&[0, 1, 2]), 0, "the goal placement costs nothing");
    assert_eq!(db.lookup(&[3, 1, 2]), 1, "one tile one step below its goal");
    // With one pattern tile the table is that tile's Manhattan distance.
    let single = PatternDb::build(g, &[4], |_| {}, &go()).expect("small");
    for cell in 0..9u8 {
        assert_eq!(
            usize::from(single.lookup(&[cell])),
            g.distance(cell as usize, 4)
        );
    }
    let bytes = db.to_bytes();
    assert_eq!(
        PatternDb::from_bytes(&bytes, g, &[0, 1, 2]).as_ref(),
        Ok(&db)
    );
    assert!(
        PatternDb::from_bytes(&bytes, g, &[0, 1, 3]).is_err(),
        "another pattern's table"
    );
}

#[test]
fn standard_partitions_cover_every_tile_but_the_blank() {
    let g4 = Geometry { rows: 4, cols: 4 };
    let g5 = Geometry { rows: 5, cols: 5 };
    for (kind, g, sizes) in [
        (PartitionKind::SevenEight, g4, vec![7, 8]),
        (PartitionKind::SixSixThree, g4, vec![3, 6, 6]),
        (PartitionKind::SixSixSixSix, g5, vec![6, 6, 6, 6]),
    ] {
        for blank in 0..g.cells() {
            let partition = Partition::standard(kind, g, blank).expect("laid out");
            let mut all: Vec<u8> = partition.patterns.iter().flatten().copied().collect();
            all.sort_unstable();
            let expected: Vec<u8> = (0..g.cells() as u8)
                .filter(|&c| c as usize != blank)
                .collect();
            assert_eq!(all, expected, "{} with blank at {blank}", kind.name());
            let mut got: Vec<usize> = partition.patterns.iter().map(Vec::len).collect();
            got.sort_unstable();
            let mut want = sizes.clone();
            want.sort_unstable();
            assert_eq!(got, want, "{} with blank at {blank}", kind.name());
        }
    }
    assert!(Partition::standard(PartitionKind::SevenEight, g5, 0).is_err());
    assert!(
        PatternDb::check_size(Geometry { rows: 6, cols: 6 }, 4).is_err(),
        "36 cells exceed the mask width"
    );
}

#[test]
fn a_stopped_build_gives_up_with_stopped() {
    let g4 = Geometry { rows: 4, cols: 4 };
    let stopped = AtomicBool::new(true);
    let started = std::time::Instant::now();
    // A 6-tile 4×4 table: seconds of work, given up at the first check.
    assert_eq!(
        PatternDb::build(g4, &[1, 2, 3, 4, 5, 6], |_| {}, &stopped),
        Err(pdb::PdbError::Stopped)
    );
    let g3 = Geometry { rows: 3, cols: 3 };
    assert_eq!(
        ExactTable::build(g3, &[1, 2, 3, 4, 5, 6, 7, 8, 0], &stopped),
        Err(exact::ExactError::Stopped)
    );
    assert!(started.elapsed() < std::time::Duration::from_millis(500));
    assert!(
        PatternDb::build_bytes(g4, 8) > 5_000_000_000,
        "the 8-tile 4x4 build needs gigabytes"
    );
    assert!(PatternDb::build_bytes(g4, 6) < 100_000_000);
}
