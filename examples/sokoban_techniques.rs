//! What each Sokoban enhancement buys: solves a collection once per configuration (all
//! on, then each one off) and prints a table of solved levels and nodes.
//!
//! ```text
//! cargo run --release --example sokoban_techniques -- benches/data/microban155.xsb any 10000 [ids]
//! ```
//! `any` runs greedy best-first over pushes, `fess` the feature-space search over box
//! moves (the two searches the `any` objective leans on), `optimal` runs A*.

use std::time::Duration;

use puzzled::puzzles::sokoban::{self, Bound, Level, Techniques};
use puzzled::search::{Advice, Algorithm, Budget, CancelFlag, Limits, Outcome, Weight};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, objective, timeout_ms, rest @ ..] = args.as_slice() else {
        eprintln!("usage: sokoban_techniques FILE any|fess|optimal TIMEOUT_MS [ID,ID,...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).expect("read the collection");
    let ids: Vec<usize> = rest
        .first()
        .map(|list| list.split(',').filter_map(|i| i.parse().ok()).collect())
        .unwrap_or_default();
    let levels: Vec<(usize, Level)> = sokoban::read_collection(&text)
        .into_iter()
        .filter(|l| ids.is_empty() || ids.contains(&l.index))
        .map(|l| (l.index, Level::parse(&l.text).expect("valid level")))
        .collect();
    let timeout = Duration::from_millis(timeout_ms.parse().expect("timeout in ms"));
    let (base, algorithm) = match objective.as_str() {
        "optimal" => (
            Techniques::optimal(Bound::Matching),
            Algorithm::AStar {
                weight: Weight::ONE,
            },
        ),
        "fess" => (
            Techniques {
                box_moves: true,
                ..Techniques::any(Bound::Matching)
            },
            Algorithm::FeatureSpace {
                advice: Advice::BestPerFeature,
            },
        ),
        _ => (Techniques::any(Bound::Matching), Algorithm::GreedyBestFirst),
    };
    let configurations = [
        ("all on", base),
        (
            "closest-goal bound instead of matching",
            Techniques {
                bound: Bound::ClosestGoal,
                ..base
            },
        ),
        (
            "no freeze deadlocks",
            Techniques {
                freeze_deadlocks: false,
                ..base
            },
        ),
        (
            "no PI-corral pruning",
            Techniques {
                pi_corrals: false,
                ..base
            },
        ),
        (
            "no corral deadlock search",
            Techniques {
                corral_deadlocks: false,
                ..base
            },
        ),
        (
            "no packing order",
            Techniques {
                packing_penalty: 0,
                ..base
            },
        ),
        (
            "no hotspot feature",
            Techniques {
                hotspots: false,
                ..base
            },
        ),
        (
            "single pushes instead of box moves",
            Techniques {
                box_moves: false,
                ..base
            },
        ),
    ];
    println!("| configuration | solved | nodes expanded (solved levels) | total s | unsolved |");
    println!("|---|---|---|---|---|");
    for (name, techniques) in configurations {
        if techniques == base && name != "all on" {
            continue; // packing and hotspots are off for `optimal`, box moves for all but `fess`
        }
        let (mut solved, mut nodes, mut seconds, mut unsolved) = (0, 0, 0.0, Vec::new());
        for (index, level) in &levels {
            let limits = Limits {
                timeout: Some(timeout),
                ..Limits::default()
            };
            let report = sokoban::solve(
                sokoban::Board::new(level),
                techniques,
                algorithm,
                &mut Budget::new(limits, CancelFlag::new()),
            );
            seconds += report.stats.elapsed.as_secs_f64();
            if let Outcome::Solved(_) = report.outcome {
                solved += 1;
                nodes += report.stats.nodes_expanded;
            } else {
                unsolved.push(index.to_string());
            }
        }
        println!(
            "| {name} | {solved}/{} | {nodes} | {seconds:.1} | {} |",
            levels.len(),
            unsolved.join(" ")
        );
    }
}
