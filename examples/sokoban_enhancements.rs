//! What each Sokoban enhancement buys, after Rolling Stone's table (Junghanns &
//! Schaeffer 2001): solves a collection under a fixed budget per level, once per
//! configuration, and prints two tables. The cumulative one starts from a bare greedy
//! search and adds the techniques one at a time, in the order puzzled gained them; the
//! leave-one-out one turns each off in the full `any` search (the portfolio `auto` runs).
//!
//! ```text
//! cargo run --release --example sokoban_enhancements -- FILE nodes|ms LIMIT [--jobs N] [--ids 1,2,...] [--rows TEXT]
//! cargo run --release --example sokoban_enhancements -- benches/data/xsokoban90.xsb nodes 10000 --jobs 2
//! ```
//! A node limit makes the tables the same on any machine and under any load; a time
//! limit weighs each technique's cost per node too. `--rows` runs only the rows whose
//! name contains TEXT.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use puzzled::puzzles::sokoban::{self, Board, Bound, Level, Portfolio, Techniques, Variant};
use puzzled::search::{Advice, Algorithm, Budget, CancelFlag, Limits, Origin, Outcome, Report};

/// One way to search a level.
#[derive(Clone)]
enum Search {
    One(Techniques, Algorithm),
    Interleaved(Portfolio),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: sokoban_enhancements FILE nodes|ms LIMIT [--jobs N] [--ids 1,2,...] [--rows TEXT]";
    let [path, unit, limit, options @ ..] = args.as_slice() else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let limit: u64 = limit.parse().expect("LIMIT is a number");
    let limits = match unit.as_str() {
        "nodes" => Limits {
            max_nodes: Some(limit),
            ..Limits::default()
        },
        "ms" => Limits {
            timeout: Some(Duration::from_millis(limit)),
            ..Limits::default()
        },
        other => {
            eprintln!("the budget is in nodes or ms, not {other}");
            std::process::exit(2);
        }
    };
    let (mut jobs, mut ids, mut only) = (1, Vec::new(), String::new());
    for pair in options.chunks(2) {
        match pair {
            [flag, value] if flag == "--jobs" => jobs = value.parse().expect("--jobs N"),
            [flag, value] if flag == "--ids" => {
                ids = value.split(',').filter_map(|i| i.parse().ok()).collect();
            }
            [flag, value] if flag == "--rows" => only = value.clone(),
            _ => {
                eprintln!("{usage}");
                std::process::exit(2);
            }
        }
    }
    let text = std::fs::read_to_string(path).expect("read the collection");
    let levels: Vec<(usize, Level)> = sokoban::read_collection(&text)
        .into_iter()
        .filter(|l| ids.is_empty() || ids.contains(&l.index))
        .map(|l| (l.index, Level::parse(&l.text).expect("valid level")))
        .collect();
    println!("{} levels, {limit} {unit} per level\n", levels.len());
    for (title, rows) in [
        ("Cumulative", cumulative()),
        ("Leave one out", leave_one_out()),
    ] {
        println!("{title}:\n");
        println!("| configuration | solved | nodes expanded (solved levels) | s | unsolved |");
        println!("|---|---|---|---|---|");
        for (name, search) in rows.into_iter().filter(|(name, _)| name.contains(&only)) {
            let results = solve_all(&levels, &search, limits, jobs);
            let solved: Vec<_> = results.iter().filter(|r| r.1).collect();
            let nodes: u64 = solved.iter().map(|r| r.2).sum();
            let seconds: f64 = results.iter().map(|r| r.3).sum();
            let unsolved: Vec<String> = results
                .iter()
                .filter(|r| !r.1)
                .map(|r| r.0.to_string())
                .collect();
            println!(
                "| {name} | {}/{} | {nodes} | {seconds:.0} | {} |",
                solved.len(),
                levels.len(),
                unsolved.join(" ")
            );
        }
        println!();
    }
}

fn base() -> Techniques {
    Techniques {
        bound: Bound::ClosestGoal,
        freeze_deadlocks: false,
        pi_corrals: false,
        corral_deadlocks: false,
        learned_deadlocks: false,
        ..Techniques::optimal(Bound::ClosestGoal)
    }
}

fn fess(techniques: Techniques, advice: Advice, weight: u32) -> Variant {
    Variant {
        techniques: Techniques {
            box_moves: true,
            ..techniques
        },
        advice,
        weight,
        origin: Origin::Start,
    }
}

/// The `any` portfolio as `auto` runs it, with `change` applied to every variant.
fn portfolio(change: impl Fn(Techniques) -> Techniques) -> Search {
    let all = sokoban::portfolio(Bound::Matching);
    let changed = |variant: Variant| Variant {
        techniques: change(variant.techniques),
        ..variant
    };
    Search::Interleaved(Portfolio {
        variants: all.variants.into_iter().map(changed).collect(),
        sprint: all.sprint.map(|(variant, n)| (changed(variant), n)),
    })
}

/// The variants of a portfolio, and its sprint, that `keep` holds for.
fn keeping(search: Search, keep: fn(&Variant) -> bool) -> Search {
    let Search::Interleaved(all) = search else {
        unreachable!("the portfolio interleaves")
    };
    Search::Interleaved(Portfolio {
        variants: all.variants.into_iter().filter(keep).collect(),
        sprint: all.sprint.filter(|(variant, _)| keep(variant)),
    })
}

/// The portfolio's variants taking turns from the start.
fn no_sprint(search: Search) -> Search {
    let Search::Interleaved(all) = search else {
        unreachable!("the portfolio interleaves")
    };
    Search::Interleaved(Portfolio {
        sprint: None,
        ..all
    })
}

/// The portfolio's forward variants alone.
fn forward(search: Search) -> Search {
    keeping(search, |v| v.origin == Origin::Start)
}

/// The portfolio without the search that has Festival's opener and explorer.
fn unadvised(search: Search) -> Search {
    keeping(search, |v| !v.techniques.advisors)
}

/// The techniques in the order puzzled gained them. Dead squares are always on.
fn cumulative() -> Vec<(&'static str, Search)> {
    let greedy = Algorithm::GreedyBestFirst;
    let mut techniques = base();
    let mut rows = vec![(
        "greedy best-first over pushes, closest-goal bound, dead squares",
        Search::One(techniques, greedy),
    )];
    let mut add = |name, change: &dyn Fn(&mut Techniques), algorithm| {
        change(&mut techniques);
        rows.push((name, Search::One(techniques, algorithm)));
    };
    add(
        "+ matching bound (bipartite deadlocks)",
        &|t| t.bound = Bound::Matching,
        greedy,
    );
    add("+ freeze deadlocks", &|t| t.freeze_deadlocks = true, greedy);
    add("+ PI-corral pruning", &|t| t.pi_corrals = true, greedy);
    add(
        "+ packing order",
        &|t| t.packing_penalty = Techniques::PACKING_PENALTY,
        greedy,
    );
    add("+ box moves", &|t| t.box_moves = true, greedy);
    let advisors = Algorithm::FeatureSpace {
        advice: Advice::BestPerFeature,
    };
    add("+ feature-space search (advisors)", &|_| {}, advisors);
    add(
        "+ corral deadlock search",
        &|t| t.corral_deadlocks = true,
        advisors,
    );
    add("+ hotspot feature", &|t| t.hotspots = true, advisors);
    rows.push((
        "+ a second advice, the two taking turns",
        Search::Interleaved(Portfolio {
            variants: vec![
                fess(
                    Techniques {
                        hotspots: false,
                        ..techniques
                    },
                    Advice::EveryImprovement,
                    2,
                ),
                fess(techniques, Advice::BestPerFeature, 3),
            ],
            sprint: None,
        }),
    ));
    rows.push((
        "+ goal cuts (each advice without and with)",
        forward(unadvised(portfolio(unlearned))),
    ));
    rows.push((
        "+ a search from the goal, meeting the others",
        unadvised(portfolio(unlearned)),
    ));
    rows.push(("+ learned deadlock patterns", unadvised(portfolio(|t| t))));
    rows.push((
        "+ a sixth search with the opener and explorer",
        no_sprint(portfolio(|t| t)),
    ));
    rows.push((
        "+ that search alone first (a sprint): `auto`",
        portfolio(|t| t),
    ));
    rows
}

fn unlearned(techniques: Techniques) -> Techniques {
    Techniques {
        learned_deadlocks: false,
        ..techniques
    }
}

fn leave_one_out() -> Vec<(&'static str, Search)> {
    let mut rows = vec![("all on (`auto`)", portfolio(|t| t))];
    type Change = fn(Techniques) -> Techniques;
    let offs: [(&str, Change); 7] = [
        ("closest-goal bound instead of matching", |t| Techniques {
            bound: Bound::ClosestGoal,
            ..t
        }),
        ("no freeze deadlocks", |t| Techniques {
            freeze_deadlocks: false,
            ..t
        }),
        ("no PI-corral pruning", |t| Techniques {
            pi_corrals: false,
            ..t
        }),
        ("no corral deadlock search", |t| Techniques {
            corral_deadlocks: false,
            ..t
        }),
        ("no learned deadlock patterns", unlearned),
        ("no packing order", |t| Techniques {
            packing_penalty: 0,
            ..t
        }),
        ("no hotspot feature", |t| Techniques {
            hotspots: false,
            ..t
        }),
    ];
    rows.extend(offs.map(|(name, change)| (name, portfolio(change))));
    let Search::Interleaved(all) = portfolio(|t| t) else {
        unreachable!("the portfolio interleaves")
    };
    rows.push(("no sprint", no_sprint(portfolio(|t| t))));
    rows.push((
        "no goal cuts",
        keeping(portfolio(|t| t), |v| !v.techniques.goal_cuts),
    ));
    rows.push(("no search from the goal", forward(portfolio(|t| t))));
    rows.push((
        "no search with the opener and explorer",
        unadvised(portfolio(|t| t)),
    ));
    rows.push((
        "one search (advisors, hotspots, no cuts) instead of six",
        Search::Interleaved(Portfolio {
            variants: vec![all.variants[2]],
            sprint: None,
        }),
    ));
    rows
}

/// Per level: its id, whether it was solved (the plan replayed), nodes and seconds.
fn solve_all(
    levels: &[(usize, Level)],
    search: &Search,
    limits: Limits,
    jobs: usize,
) -> Vec<(usize, bool, u64, f64)> {
    let next = AtomicUsize::new(0);
    let mut results = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some((id, level)) = levels.get(next.fetch_add(1, Ordering::Relaxed)) {
                        mine.push(solve_one(*id, level, search, limits));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a worker panicked"))
            .collect::<Vec<_>>()
    });
    results.sort_by_key(|r| r.0);
    results
}

fn solve_one(id: usize, level: &Level, search: &Search, limits: Limits) -> (usize, bool, u64, f64) {
    let board = Board::new(level);
    let mut budget = Budget::new(limits, CancelFlag::new());
    let report: Report<sokoban::Push> = match search {
        Search::One(techniques, algorithm) => {
            sokoban::solve(board.clone(), *techniques, *algorithm, &mut budget)
        }
        Search::Interleaved(portfolio) => {
            sokoban::solve_interleaved(&board, portfolio, &mut budget).0
        }
    };
    let solved = match &report.outcome {
        Outcome::Solved(solution) => sokoban::plan::lurd(&board, &solution.actions)
            .is_some_and(|text| sokoban::replay(level, &text, sokoban::Snapshots::None).solved),
        _ => false,
    };
    (
        id,
        solved,
        report.stats.nodes_expanded,
        report.stats.elapsed.as_secs_f64(),
    )
}
