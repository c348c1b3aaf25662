use std::collections::{HashSet, VecDeque};

use proptest::prelude::*;

use super::*;
use crate::search::{
    self, Advice, Algorithm, Budget, CancelFlag, Limits, Origin, Outcome, Stop, Weight,
};

const MICROBAN: &str = include_str!("../../../benches/data/microban155.xsb");

fn level(text: &str) -> Level {
    Level::parse(text).unwrap_or_else(|e| panic!("valid level: {e}\n{text}"))
}

#[test]
fn bad_levels_get_errors_that_name_the_problem_and_where() {
    let check = |input: &str, expected: &str| {
        let error = Level::parse(input).expect_err("must be rejected");
        assert!(
            error.to_string().contains(expected),
            "{input:?}: got '{error}', want '{expected}'"
        );
    };
    check("", "no board rows");
    check("\n  \n", "no board rows");
    check(
        "#####\n#@$.#\n#####\nx",
        "unknown character 'x' at row 4, column 1",
    );
    check(
        "#####\n#@$.!\n#####",
        "unknown character '!' at row 2, column 5",
    );
    check("#####|#@$.#|###3", "run-length count at row 3, column 4");
    check("#####\n# $.#\n#####", "no player");
    check("######\n#@$.@#\n######", "second player at row 2, column 5");
    check("#####\n#@ .#\n#####", "no boxes");
    check("######\n#@$$.#\n######", "2 boxes but 1 goals");
    check("######\n#@$..#\n######", "1 boxes but 2 goals");
    check(
        "#####\n#@$. \n#####",
        "not closed: the player can walk off it at row 2, column 5",
    );
    check("#####\n#@$.\n#####", "walk off it at row 2, column 5");
    check(
        &format!("{}#", "#".repeat(100)),
        "1 rows and 101 columns is over the limit",
    );
    check(&"#\n".repeat(101), "101 rows");
    let many = format!("102#\n#@{}#\n#{}#\n102#", "$".repeat(100), ".".repeat(100));
    check(&many, "over the limit");
}

/// A closed 100-column level with `n` boxes and `n` goals laid out row by row.
fn crowded(n: usize) -> String {
    let mut interior: Vec<char> = std::iter::once('@')
        .chain(std::iter::repeat_n('$', n))
        .chain(std::iter::repeat_n('.', n))
        .collect();
    interior.resize(interior.len().div_ceil(98) * 98, ' ');
    let rows: Vec<String> = interior
        .chunks(98)
        .map(|row| format!("#{}#", row.iter().collect::<String>()))
        .collect();
    format!("100#\n{}\n100#", rows.join("\n"))
}

#[test]
fn level_limits_allow_the_documented_maximum() {
    assert_eq!(level(&crowded(MAX_BOXES)).n_boxes(), MAX_BOXES);
    assert_eq!(
        Level::parse(&crowded(MAX_BOXES + 1)),
        Err(LevelError::TooManyBoxes { boxes: 501 })
    );
}

#[test]
fn xsb_variants_parse_to_the_same_level() {
    let plain = level("#####\n#@$.#\n#####");
    for variant in [
        "\n\n#####\n#@$.#\n#####\n\n",
        "5#|#@$.#|5#",
        "5#\n#@$.#\n5#",
        "#####\r\n#@$.#\r\n#####\r\n",
    ] {
        assert_eq!(level(variant), plain, "{variant:?}");
    }
    // Floor as space, '-' or '_'; ragged rows are padded.
    let dashes = level("  ####\n###--#\n#@$_.#\n######");
    let spaces = level("  ####\n###  #\n#@$ .#\n######");
    assert_eq!(dashes, spaces);
    assert_eq!(spaces.to_xsb(), "  ####\n###  #\n#@$ .#\n######\n");
    // Every character: player on goal, box on goal.
    let all = level("######\n#+$*$#\n#.   #\n######");
    assert_eq!(all.n_boxes(), 3);
    assert_eq!(all.to_xsb(), "######\n#+$*$#\n#.   #\n######\n");
}

#[test]
fn collections_split_into_titled_levels() {
    let levels = read_collection(MICROBAN);
    assert_eq!(levels.len(), 155);
    assert_eq!(levels[0].title.as_deref(), Some("Microban 1"));
    assert_eq!(levels[154].index, 155);
    for text in &levels {
        Level::parse(&text.text).unwrap_or_else(|e| panic!("level {}: {e}", text.index));
    }
    let sok = "; first\n#####\n#@$.#\n#####\nTitle: One\nAuthor: me\n\n#####\n#.$@#\n#####\n";
    let levels = read_collection(sok);
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[0].title.as_deref(), Some("One"));
    assert_eq!(levels[0].line, 2);
    assert_eq!(levels[1].title, None);
}

#[test]
fn replay_checks_every_step() {
    let lvl = level("#######\n#@ $ .#\n#######");
    let check = |plan: &str, legal: bool, solved: bool, reason: &str| {
        let r = replay(&lvl, plan, Snapshots::None);
        assert_eq!((r.legal, r.solved), (legal, solved), "{plan}: {r:?}");
        let why = r.error.map(|e| format!("step {}: {}", e.step, e.reason));
        assert!(why.unwrap_or_default().contains(reason), "{plan}");
    };
    check("rRR", true, true, "");
    check("rR", true, false, "");
    check(
        "rrR",
        false,
        false,
        "step 2: 'r' moves the box at row 2, column 4 but is written in lower case",
    );
    check(
        "R",
        false,
        false,
        "step 1: 'R' is written as a push but there is no box",
    );
    check(
        "l",
        false,
        false,
        "step 1: the player at row 2, column 2 walks into a wall going left",
    );
    check(
        "rRRR",
        false,
        false,
        "step 4: the box at row 2, column 6 cannot be pushed right",
    );
    check("rx", false, false, "step 2: 'x' is not a LURD step");
    let r = replay(&lvl, "rRR", Snapshots::EachPush);
    assert_eq!((r.moves, r.pushes), (3, 2));
    assert_eq!(
        r.boards,
        ["#######\n#  @$.#\n#######\n", "#######\n#   @*#\n#######\n"]
    );
    assert_eq!(replay(&lvl, "rRR", Snapshots::EachStep).boards.len(), 3);
    assert_eq!(count_pushes("rRRlu"), 2);
}

/// Push-optimal A* with the matching bound; returns (pushes, LURD) after replaying it.
fn solve_optimal(lvl: &Level) -> Option<(usize, String)> {
    let domain = SokobanDomain::new(lvl, Techniques::optimal(Bound::Matching));
    let mut budget = Budget::unlimited();
    let report = search::solve(
        &domain,
        Algorithm::AStar {
            weight: Weight::ONE,
        },
        &mut budget,
    );
    match report.outcome {
        Outcome::Solved(solution) => {
            let text = plan::lurd(domain.board(), &solution.actions).expect("plan");
            let r = replay(lvl, &text, Snapshots::None);
            assert!(r.solved, "{text}: {r:?}");
            assert_eq!(r.pushes, solution.actions.len());
            Some((r.pushes, text))
        }
        Outcome::Unsolvable => None,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn hand_written_levels_have_known_push_optima() {
    let cases: &[(&str, Option<usize>)] = &[
        ("#######\n#@ $ .#\n#######", Some(2)),
        ("#####\n#.  #\n# $ #\n# @ #\n#####", Some(2)),
        // Two boxes that must be untangled.
        ("######\n#    #\n# $$ #\n#.@ .#\n######", Some(4)),
        // A box in a corner off its goal.
        ("#####\n#$  #\n#  .#\n# @ #\n#####", None),
        ("######\n#. $ #\n#  $.#\n#   @#\n######", Some(3)),
    ];
    for (text, expected) in cases {
        let got = solve_optimal(&level(text)).map(|(pushes, _)| pushes);
        assert_eq!(got, *expected, "{text}");
    }
}

#[test]
fn microban_levels_match_their_proved_push_optima() {
    let levels = read_collection(MICROBAN);
    // (level, optimal pushes) from ../shared/levels/README.md; small enough for debug.
    for (index, optimum) in [
        (1, 8),
        (2, 3),
        (3, 13),
        (4, 7),
        (9, 10),
        (21, 5),
        (44, 1),
        (154, 2),
    ] {
        let lvl = level(&levels[index - 1].text);
        assert_eq!(
            solve_optimal(&lvl).map(|s| s.0),
            Some(optimum),
            "Microban {index}"
        );
    }
}

#[test]
fn every_search_returns_replayable_lurd() {
    let lvl = level(&read_collection(MICROBAN)[5].text);
    let domain = SokobanDomain::new(&lvl, Techniques::optimal(Bound::Matching));
    for algorithm in [
        Algorithm::GreedyBestFirst,
        Algorithm::AStar {
            weight: Weight::from_percent(300),
        },
        Algorithm::IdaStar {
            weight: Weight::ONE,
        },
        Algorithm::BreadthFirst,
        Algorithm::EnforcedHillClimbing,
    ] {
        let report = search::solve(&domain, algorithm, &mut Budget::unlimited());
        if let Outcome::Solved(solution) = report.outcome {
            let text = plan::lurd(domain.board(), &solution.actions).expect("plan");
            assert!(replay(&lvl, &text, Snapshots::None).solved, "{algorithm:?}");
        } else {
            assert_eq!(
                algorithm,
                Algorithm::EnforcedHillClimbing,
                "{:?}",
                report.outcome
            );
        }
    }
}

#[test]
fn node_limit_and_cancellation_stop_a_hard_level_with_statistics() {
    let xsokoban = include_str!("../../../benches/data/xsokoban90.xsb");
    let lvl = level(&read_collection(xsokoban)[28].text);
    let domain = SokobanDomain::new(&lvl, Techniques::optimal(Bound::Matching));
    let limits = Limits {
        max_nodes: Some(2000),
        ..Limits::default()
    };
    let mut budget = Budget::new(limits, CancelFlag::new());
    let report = search::solve(
        &domain,
        Algorithm::AStar {
            weight: Weight::ONE,
        },
        &mut budget,
    );
    assert_eq!(report.outcome, Outcome::Stopped(Stop::NodeLimit));
    assert_eq!(report.stats.nodes_expanded, 2000);
    assert!(report.stats.nodes_generated > 2000);

    let cancel = CancelFlag::new();
    cancel.cancel();
    let mut budget = Budget::new(Limits::default(), cancel);
    let report = search::solve(&domain, Algorithm::GreedyBestFirst, &mut budget);
    assert_eq!(report.outcome, Outcome::Stopped(Stop::Cancelled));
    assert!(report.stats.nodes_expanded <= u64::from(search::CHECK_INTERVAL));
}

/// Push-optimal breadth-first search with no pruning at all, on the level grid.
fn reference_pushes(lvl: &Level) -> Option<usize> {
    let cells = lvl.rows() * lvl.cols();
    let start: Vec<bool> = (0..cells).map(|c| lvl.has_box(c)).collect();
    let goal: Vec<bool> = (0..cells).map(|c| lvl.is_goal(c)).collect();
    let region = |boxes: &[bool], from: usize| {
        let mut seen = vec![false; cells];
        let mut stack = vec![from];
        seen[from] = true;
        while let Some(c) = stack.pop() {
            for d in Direction::ALL {
                if let Some(n) = lvl.step(c, d)
                    && !lvl.is_wall(n)
                    && !boxes[n]
                    && !std::mem::replace(&mut seen[n], true)
                {
                    stack.push(n);
                }
            }
        }
        seen
    };
    let canonical =
        |boxes: &[bool], from: usize| region(boxes, from).iter().position(|&s| s).unwrap_or(from);
    let mut seen = HashSet::new();
    let mut queue = VecDeque::new();
    seen.insert((start.clone(), canonical(&start, lvl.player())));
    queue.push_back((start, lvl.player(), 0));
    while let Some((boxes, player, depth)) = queue.pop_front() {
        if boxes == goal {
            return Some(depth);
        }
        let reach = region(&boxes, player);
        for b in (0..cells).filter(|&c| boxes[c]) {
            for d in Direction::ALL {
                let (Some(from), Some(to)) = (lvl.step(b, d.opposite()), lvl.step(b, d)) else {
                    continue;
                };
                if !reach[from] || lvl.is_wall(to) || boxes[to] {
                    continue;
                }
                let mut next = boxes.clone();
                next[b] = false;
                next[to] = true;
                if seen.insert((next.clone(), canonical(&next, b))) {
                    queue.push_back((next, b, depth + 1));
                }
            }
        }
    }
    None
}

/// A shuffle of `0..len` from `seed` (a small LCG: the strategy stays one value).
fn shuffled(len: usize, seed: u64) -> impl Iterator<Item = u64> {
    std::iter::successors(Some(seed), |s| {
        Some(
            s.wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
        )
    })
    .map(|s| s >> 33)
    .take(len)
}

fn walled(grid: &[char]) -> String {
    let rows: Vec<String> = grid
        .chunks(5)
        .map(|r| format!("#{}#", r.iter().collect::<String>()))
        .collect();
    format!("#######\n{}\n#######", rows.join("\n"))
}

/// A 5×5 interior walled in, with random walls, boxes and goals: mostly unsolvable.
fn random_level() -> impl Strategy<Value = String> {
    (prop::collection::vec(0u8..8, 25), 1usize..4, any::<u64>()).prop_map(|(cells, n, seed)| {
        let mut grid: Vec<char> = cells
            .iter()
            .map(|&c| if c < 1 { '#' } else { ' ' })
            .collect();
        let mut order: Vec<usize> = (0..25).filter(|&i| grid[i] == ' ').collect();
        for (i, r) in (1..order.len()).rev().zip(shuffled(order.len(), seed)) {
            order.swap(i, r as usize % (i + 1));
        }
        if order.len() > 2 * n {
            for &i in &order[..n] {
                grid[i] = '$';
            }
            for &i in &order[n..2 * n] {
                grid[i] = '.';
            }
            grid[order[2 * n]] = '@';
        }
        walled(&grid)
    })
}

/// Boxes start on their goals and the player pulls them about at random: always
/// solvable, by the pushes that undo the pulls.
fn scrambled_level() -> impl Strategy<Value = String> {
    (prop::collection::vec(0u8..8, 25), 1usize..4, any::<u64>()).prop_map(|(cells, n, seed)| {
        let wall: Vec<bool> = cells.iter().map(|&c| c < 1).collect();
        let free: Vec<usize> = (0..25).filter(|&i| !wall[i]).collect();
        if free.len() <= n {
            return walled(&['#'; 25]);
        }
        let mut rolls = shuffled(200, seed);
        let mut boxes = vec![false; 25];
        let mut picked = 0;
        while picked < n {
            let cell = free[rolls.next().unwrap_or(0) as usize % free.len()];
            picked += usize::from(!std::mem::replace(&mut boxes[cell], true));
        }
        let goals = boxes.clone();
        let mut player = free.iter().copied().find(|&c| !boxes[c]).unwrap_or(0);
        let step = |cell: usize, d: u64| -> Option<usize> {
            let (r, c) = (cell / 5, cell % 5);
            match d % 4 {
                0 if c > 0 => Some(cell - 1),
                1 if c < 4 => Some(cell + 1),
                2 if r > 0 => Some(cell - 5),
                3 if r < 4 => Some(cell + 5),
                _ => None,
            }
        };
        for roll in rolls {
            let Some(to) = step(player, roll).filter(|&t| !wall[t] && !boxes[t]) else {
                continue;
            };
            // Pull the box behind the player along, half of the time.
            let behind = step(player, roll ^ 1).filter(|&b| boxes[b]);
            if let Some(b) = behind.filter(|_| roll & 4 == 0) {
                boxes[b] = false;
                boxes[player] = true;
            }
            player = to;
        }
        let grid: Vec<char> = (0..25)
            .map(|i| match (wall[i], boxes[i], goals[i], i == player) {
                (true, ..) => '#',
                (_, true, true, _) => '*',
                (_, true, false, _) => '$',
                (_, false, true, true) => '+',
                (_, false, false, true) => '@',
                (_, false, true, false) => '.',
                _ => ' ',
            })
            .collect();
        walled(&grid)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    /// Dead squares, freeze and bipartite tests, corral deadlocks and the patterns
    /// learned from them never cut off a solution: the pruned A* finds exactly the
    /// push optimum an unpruned breadth-first search finds.
    #[test]
    fn pruning_never_loses_a_solution(text in prop_oneof![random_level(), scrambled_level()]) {
        if let Ok(lvl) = Level::parse(&text) {
            let expected = reference_pushes(&lvl);
            prop_assert_eq!(solve_optimal(&lvl).map(|s| s.0), expected, "{}", text);
        }
    }
}

#[test]
fn greedy_search_expands_states_whose_path_it_shortened() {
    // Microban 87 once came back "unsolvable": greedy best-first dropped states whose
    // cost it had lowered, as if their open-list entry were stale.
    let lvl = level(&read_collection(MICROBAN)[86].text);
    let domain = SokobanDomain::new(&lvl, Techniques::any(Bound::Matching));
    let report = search::solve(
        &domain,
        Algorithm::GreedyBestFirst,
        &mut Budget::unlimited(),
    );
    let Outcome::Solved(solution) = report.outcome else {
        panic!("{:?}", report.outcome);
    };
    let text = plan::lurd(domain.board(), &solution.actions).expect("plan");
    assert!(replay(&lvl, &text, Snapshots::None).solved);
}

/// Runs `algorithm` through [`solve`] with `techniques`; the pushes of the plan after
/// replaying its LURD, or `None` when the search proved the level unsolvable.
fn solve_through(lvl: &Level, techniques: Techniques, algorithm: Algorithm) -> Option<usize> {
    let board = Board::new(lvl);
    let report = solve(
        board.clone(),
        techniques,
        algorithm,
        &mut Budget::unlimited(),
    );
    match report.outcome {
        Outcome::Solved(solution) => {
            let text = plan::lurd(&board, &solution.actions).expect("plan");
            let r = replay(lvl, &text, Snapshots::None);
            assert!(r.solved, "{text}: {r:?}");
            assert_eq!(r.pushes as u32, solution.cost, "{text}");
            Some(r.pushes)
        }
        Outcome::Unsolvable => None,
        other => panic!("unexpected {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// A box move is its shortest push path, so A* over box moves is still push-optimal;
    /// and the feature-space search, with or without the opener and explorer, solves
    /// exactly the solvable levels, with plans that replay.
    #[test]
    fn box_moves_keep_push_optima_and_fess_is_complete(
        text in prop_oneof![random_level(), scrambled_level()]
    ) {
        if let Ok(lvl) = Level::parse(&text) {
            let expected = reference_pushes(&lvl);
            let moves = Techniques {
                box_moves: true,
                ..Techniques::optimal(Bound::Matching)
            };
            let a_star = Algorithm::AStar { weight: Weight::ONE };
            prop_assert_eq!(solve_through(&lvl, moves, a_star), expected, "{}", text);
            let fess = Techniques { box_moves: true, ..Techniques::any(Bound::Matching) };
            let cut = Techniques { goal_cuts: true, ..fess };
            // The opener and explorer only choose what goes first: still complete.
            let guided = Techniques { advisors: true, ..fess };
            for advice in [Advice::BestPerFeature, Advice::EveryImprovement] {
                for techniques in [fess, guided] {
                    let found = solve_through(&lvl, techniques, Algorithm::FeatureSpace { advice });
                    prop_assert_eq!(found.is_some(), expected.is_some(), "{:?} {:?}: {}", advice, techniques, text);
                }
                // Goal cuts may lose a level, never solve a wrong one, and claim one
                // unsolvable only when that is proved without searching.
                let report = solve(Board::new(&lvl), cut, Algorithm::FeatureSpace { advice }, &mut Budget::unlimited());
                if let Outcome::Solved(solution) = report.outcome {
                    let plan = plan::lurd(&Board::new(&lvl), &solution.actions).expect("plan");
                    prop_assert!(replay(&lvl, &plan, Snapshots::None).solved, "{}", text);
                } else if report.outcome == Outcome::Unsolvable {
                    prop_assert!(expected.is_none(), "{}", text);
                } else {
                    prop_assert!(matches!(report.outcome, Outcome::GaveUp), "{:?}: {}", report.outcome, text);
                }
            }
            // Taking turns, a search with cuts and one from the goal beside a complete
            // one, after a short sprint of one with cuts (which ends the job on the
            // smallest levels): still complete, and a plan joined where two of them
            // meet replays.
            let sprinter = Variant { techniques: cut, advice: Advice::BestPerFeature, weight: 1, origin: Origin::Start };
            let portfolio = Portfolio {
                variants: vec![
                    Variant { techniques: cut, advice: Advice::EveryImprovement, weight: 1, origin: Origin::Start },
                    Variant { techniques: fess, advice: Advice::BestPerFeature, weight: 1, origin: Origin::Start },
                    Variant { techniques: fess, advice: Advice::EveryImprovement, weight: 1, origin: Origin::Goal },
                ],
                sprint: Some((sprinter, 3)),
            };
            let board = Board::new(&lvl);
            let (report, _) = solve_interleaved(&board, &portfolio, &mut Budget::unlimited());
            match report.outcome {
                Outcome::Solved(solution) => {
                    let plan = plan::lurd(&board, &solution.actions).expect("plan");
                    prop_assert!(replay(&lvl, &plan, Snapshots::None).solved, "{}", text);
                    prop_assert!(expected.is_some(), "{}", text);
                    // Shortening finds the optimum, or proves the plan is one.
                    let found = solution.actions.len();
                    let (shortened, _) = shorten(board.clone(), Bound::Matching, found, &mut Budget::unlimited());
                    match shortened {
                        Shortened::Optimal => prop_assert_eq!(Some(found), expected, "{}", text),
                        Shortened::Shorter(pushes) => {
                            prop_assert_eq!(Some(pushes.len()), expected, "{}", text);
                            let plan = plan::lurd(&board, &pushes).expect("plan");
                            prop_assert!(replay(&lvl, &plan, Snapshots::None).solved, "{}", text);
                        }
                        Shortened::Unknown => prop_assert!(false, "unlimited, yet unknown: {}", text),
                    }
                }
                outcome => prop_assert!(outcome == Outcome::Unsolvable && expected.is_none(), "{:?}: {}", outcome, text),
            }
        }
    }
}

#[test]
fn fess_solves_xsokoban_1_through_box_moves() {
    let xsokoban = include_str!("../../../benches/data/xsokoban90.xsb");
    let lvl = level(&read_collection(xsokoban)[0].text);
    let techniques = Techniques {
        box_moves: true,
        ..Techniques::any(Bound::Matching)
    };
    let pushes = solve_through(
        &lvl,
        techniques,
        Algorithm::FeatureSpace {
            advice: Advice::BestPerFeature,
        },
    );
    // 97 is the optimum; any solution has at least as many pushes.
    assert!(pushes.is_some_and(|p| p >= 97), "{pushes:?}");
}

/// Two boxes seal the top-left corner. Each could reach a goal if the player stood in
/// the corner, and neither is frozen, so only the corral's own search sees that no push
/// can ever open it: with it the start is dead at once, without it every position of
/// the third box is tried first.
#[test]
fn corral_deadlock_search_proves_a_sealed_corner_dead() {
    let lvl = level("########\n# $   .#\n#$     #\n#  @ $ #\n#.    .#\n########");
    let expansions = |corral_deadlocks: bool| {
        let techniques = Techniques {
            corral_deadlocks,
            ..Techniques::optimal(Bound::Matching)
        };
        let domain = SokobanDomain::new(&lvl, techniques);
        let mut budget = Budget::unlimited();
        let a_star = Algorithm::AStar {
            weight: Weight::ONE,
        };
        let report = search::solve(&domain, a_star, &mut budget);
        assert!(matches!(report.outcome, Outcome::Unsolvable), "{report:?}");
        report.stats.nodes_expanded
    };
    assert_eq!(expansions(true), 1);
    assert!(expansions(false) > 10, "{}", expansions(false));
}

/// Two goals in a dead-end room with a pocket of floor behind them: the player can
/// only stand in the pocket once both goals are empty, so the far goal is filled first.
/// Counting the pocket as a place the player starts from would make both goals equal.
#[test]
fn packing_order_fills_the_far_goal_first_even_with_a_pocket_behind_it() {
    let lvl = level("###########\n#@ $$ ..  #\n###########");
    let board = Board::new(&lvl);
    let square = |col: usize| board.square(lvl.cols() + col);
    let (near, far) = (square(6), square(7));
    assert!(board.is_goal(near) && board.is_goal(far));
    assert_eq!(
        board.packing_faults(|g| g == near),
        1,
        "the near goal filled first"
    );
    assert_eq!(
        board.packing_faults(|g| g == far),
        0,
        "the far goal filled first"
    );
}

/// The top-right goal can be pulled one step left once the middle goal is empty, but
/// no further until the goal below its way out is empty too: it is filled before
/// that one. Peeling by single pulls put the two in one layer.
#[test]
fn packing_order_pulls_each_box_all_the_way_out() {
    let lvl = level("#######\n###  .#\n#$ . ##\n#@#$. #\n# $ # #\n#######");
    let board = Board::new(&lvl);
    let square = |row: usize, col: usize| board.square(row * lvl.cols() + col);
    let (corner, below) = (square(1, 5), square(3, 4));
    assert!(board.is_goal(corner) && board.is_goal(below));
    assert_eq!(
        board.packing_faults(|g| g == below),
        1,
        "the corner goal is deeper"
    );
    assert_eq!(board.packing_faults(|g| g == corner), 0);
}

/// The packing layer of each goal of XSokoban level `number`, by (row, column).
fn xsokoban_layers(number: usize) -> impl Fn(usize, usize) -> u16 {
    let xsokoban = include_str!("../../../benches/data/xsokoban90.xsb");
    let lvl = level(&read_collection(xsokoban)[number - 1].text);
    let board = Board::new(&lvl);
    move |row, col| {
        let square = board.square(row * lvl.cols() + col);
        assert!(board.is_goal(square), "no goal at ({row}, {col})");
        board.layer_of(square).expect("a goal has a layer")
    }
}

/// XSokoban 41: the goal at row 11, column 3 lies below a column of floor the player
/// walks down from the corridor, but no box can follow (the corridor has a wall above
/// it), so a box on that goal is not pulled out there. Counting that column as a way
/// out put the goal in the first layer, filled last, when by then both goals beside it
/// are full and nothing can reach it. It is filled just after the goal at the row's
/// end and before the one beside it.
#[test]
fn packing_order_only_pulls_boxes_out_where_a_box_could_come_in() {
    let layer = xsokoban_layers(41);
    let (under_column, beside, end) = (layer(11, 3), layer(11, 4), layer(11, 2));
    assert!(under_column > beside, "{under_column} {beside}");
    assert!(under_column < end, "{under_column} {end}");
}

/// XSokoban 42: the goal at row 4, column 6 opens upward onto a corridor that joins the
/// player's area, but no box can be pushed into that corridor except up through the goal
/// itself. Pulled out onto it, its box would stand on floor a start box reaches only
/// across full goals; so it is filled from below, before the goal under it (it was in
/// layer 0, filled last, which walls it in).
#[test]
fn packing_order_brings_boxes_in_only_past_empty_goals() {
    let layer = xsokoban_layers(42);
    let (behind, way_up) = (layer(4, 6), layer(5, 6));
    assert!(behind > way_up, "{behind} {way_up}");
}

/// Found by the property test above: the feature-space search found a shorter way to a
/// position after expanding it, and reported the cost of the old path (8 pushes) with
/// the plan of the new one (6). A solution's cost is now summed along its own path.
#[test]
fn fess_reports_the_pushes_of_the_plan_it_returns() {
    let lvl = level("#######\n#    @#\n# $.  #\n## . ##\n#  $$ #\n#  .  #\n#######");
    let fess = Techniques {
        box_moves: true,
        ..Techniques::any(Bound::Matching)
    };
    // solve_through checks the pushes replayed against the cost reported.
    assert!(
        solve_through(
            &lvl,
            fess,
            Algorithm::FeatureSpace {
                advice: Advice::BestPerFeature
            }
        )
        .is_some()
    );
}

/// In a corridor the box nearer the goals cuts the other off from them: it is a
/// hotspot. With a gap between them the far box blocks nothing (the player fits in the
/// gap to push the near one on); right behind it, it does, since the player cannot get
/// behind the near box. A box alone blocks nothing.
#[test]
fn a_box_in_the_way_of_another_is_a_hotspot() {
    let lvl = level("########\n#@$ $..#\n########");
    let board = Board::new(&lvl);
    let square = |col: usize| board.square(lvl.cols() + col);
    let hotspots = hotspots::Hotspots::new(&board, &crate::search::Interrupt::never())
        .expect("never interrupted")
        .expect("a small board gets a table");
    assert_eq!(hotspots.count(&[square(2), square(4)]), 1);
    assert_eq!(hotspots.count(&[square(3), square(4)]), 2);
    assert_eq!(hotspots.count(&[square(4)]), 0);
}

/// Breadth-first from the start over at most 300 states of `domain`: each successor's
/// player is the smallest square of the area the player stands in after the action
/// (`stands`), the area count it carries, if any (`view`), is the one a flood fill
/// of its boxes gives, and its bound, repaired from its parent's matching, is the one
/// `fresh` solves for its boxes alone.
fn check_successors<D: search::Domain<Key = State>>(
    domain: &D,
    board: &Board,
    stands: impl Fn(D::Action) -> u16,
    view: impl Fn(&D::State) -> (&State, Option<u16>),
    fresh: &impl Fn(&State) -> Option<search::Cost>,
) -> Result<(), TestCaseError> {
    let mut flood = flood::Flood::default();
    let check = |state: &D::State, flood: &mut flood::Flood| {
        let (position, regions) = view(state);
        let flooded = regions.map(|_| flood.count_regions(board, &position.boxes));
        (regions, flooded)
    };
    let start = domain.initial_state();
    let (carried, flooded) = check(&start, &mut flood);
    prop_assert_eq!(carried, flooded);
    let mut seen = HashSet::from([domain.key(&start).clone()]);
    let mut queue = VecDeque::from([start]);
    let mut successors = Vec::new();
    while let Some(state) = queue.pop_front() {
        successors.clear();
        domain.expand(&state, &mut successors);
        for successor in successors.drain(..) {
            let child = successor.state;
            let position = view(&child).0;
            let player = flood.fill(board, &position.boxes, stands(successor.action));
            prop_assert_eq!(position.player, player, "{:?}", successor.action);
            let (carried, flooded) = check(&child, &mut flood);
            prop_assert_eq!(carried, flooded, "{:?}", successor.action);
            let position = view(&child).0;
            prop_assert_eq!(
                Some(position.bound),
                fresh(position),
                "{:?}",
                successor.action
            );
            if seen.len() < 300 && seen.insert(domain.key(&child).clone()) {
                queue.push_back(child);
            }
        }
    }
    Ok(())
}

/// [`check_successors`] over single pushes and over box moves.
fn check_both_domains(lvl: &Level) -> Result<(), TestCaseError> {
    let pushes = SokobanDomain::new(lvl, Techniques::any(Bound::Matching));
    let board = pushes.board().clone();
    let reference = SokobanDomain::new(lvl, Techniques::any(Bound::Matching));
    let fresh = |state: &State| {
        let list: Vec<u16> = boxes::squares(&state.boxes).collect();
        let mut hungarian = matching::Hungarian::default();
        reference.lower_bound(&mut hungarian, &state.boxes, &list, None)
    };
    check_successors(&pushes, &board, |push| push.square, |s| (s, None), &fresh)?;
    let moves = BoxMoveDomain::new(pushes);
    let stand = |m: BoxMove| board.neighbour(m.to, m.side);
    check_successors(
        &moves,
        &board,
        stand,
        |p: &Placed| (&p.position, Some(p.regions)),
        &fresh,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// The player's area and the area count that [`cuts`] derives for every box move
    /// are the ones a flood fill finds, and every child's bound the one a matching
    /// solved afresh finds.
    #[test]
    fn successors_carry_the_flooded_player_area_area_count_and_bound(
        text in prop_oneof![random_level(), scrambled_level()]
    ) {
        if let Ok(lvl) = Level::parse(&text) {
            // The searches never expand a level proved unsolvable before they start.
            let domain = SokobanDomain::new(&lvl, Techniques::any(Bound::Matching));
            prop_assume!(!search::Domain::known_unsolvable(&domain));
            check_both_domains(&lvl)?;
        }
    }
}

#[test]
fn microban_successors_carry_the_flooded_player_area_area_count_and_bound() {
    for entry in read_collection(MICROBAN).iter().step_by(7) {
        let lvl = level(&entry.text);
        check_both_domains(&lvl).unwrap_or_else(|e| panic!("Microban {}: {e}", entry.index));
    }
}
