//! Difficulty: features of a level and of a solution, a score fitted on Microban's
//! order (weights and the command that fitted them below), a label from the score, and
//! Murase's rule (`easy`/`good`) beside it.

use crate::puzzles::sokoban::{self, Board, Bound, Direction, Level, Push, Snapshots, Techniques};
use crate::search::{Advice, Algorithm, Budget, CancelFlag, Limits, Outcome, Stop, Weight};

crate::named_enum! {
    /// The difficulty shown to players, from the score.
    pub enum Label {
        Easy = "easy",
        Medium = "medium",
        Hard = "hard",
    }
}

crate::named_enum! {
    /// Murase, Matsubara and Hiraga's rule: a level solved in fewer than 7 pushes, or
    /// without pushing boxes in all four directions, is easy; the rest are good.
    pub enum SeedClass {
        Easy = "easy",
        Good = "good",
    }
}

/// Nodes of the fixed search whose count is the `effort` feature: A* with the
/// matching bound and every pruning on. A level it does not finish counts this many.
pub const EFFORT_NODES: u64 = 20_000;
/// Nodes of the feature-space search that finds a plan when A* did not finish.
pub const SOLVE_NODES: u64 = 200_000;

/// What the score is computed from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Features {
    pub pushes: u32,
    pub moves: u32,
    /// Maximal runs of pushes of one box in one direction.
    pub box_lines: u32,
    /// Times the next push moves another box than the last one did.
    pub box_changes: u32,
    pub boxes: u32,
    /// Squares the player can reach, walking through boxes.
    pub floor: u32,
    /// Share of the floor off goals where a box can never reach a goal.
    pub dead_share: f64,
    /// Nodes the fixed search expanded (at most [`EFFORT_NODES`]).
    pub effort: u64,
    /// Directions the solution pushes in (1 to 4).
    pub directions: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    /// Higher is harder; see [`THRESHOLDS`] for the labels.
    pub score: f64,
    pub label: Label,
    pub seed_class: SeedClass,
    pub features: Features,
}

/// A rated level: the solution its features were computed on.
#[derive(Clone, Debug, PartialEq)]
pub struct Rated {
    pub plan: String,
    pub pushes: u32,
    pub moves: u32,
    /// The push count is proved optimal.
    pub optimal: bool,
    pub rating: Rating,
}

/// A plan known before rating, and whether its push count is proved optimal.
#[derive(Clone, Copy, Debug)]
pub struct KnownPlan<'a> {
    pub lurd: &'a str,
    pub optimal: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RateError {
    #[error("the level has no solution")]
    Unsolvable,
    #[error("no solution was found within {SOLVE_NODES} nodes")]
    NotSolved,
    #[error("{}", stopped(*.0))]
    Stopped(Stop),
}

fn stopped(stop: Stop) -> &'static str {
    match stop {
        Stop::Cancelled => "cancelled",
        Stop::NodeLimit => "stopped at the node limit",
        Stop::TimeLimit => "stopped at the time limit",
        Stop::MemoryLimit => "stopped at the memory limit",
    }
}

/// Weights of the score over [`inputs`], fitted by
/// `cargo run --release --example fit_difficulty`: least squares against the rank of
/// Microban's levels in designer order (XSokoban after them as the hardest end), then a
/// search maximising Spearman's correlation on Microban, with counts held to weights of
/// zero or more. Microban's levels score 0 to 100. Floor size and box count carry most
/// of the weight; within rooms of one size, solver effort and box lines decide.
const WEIGHTS: [f64; 8] = [-35.914, 0.0, 0.467, 0.0, 15.285, 19.667, -6.130, 1.149];
/// Scores below the first are `easy`, from the first up to the second `medium`, above
/// `hard`: set so generated 8x8 levels with 3 boxes labelled `hard` have a median
/// optimum of at least 17 pushes, yet are common enough to generate quickly.
pub const THRESHOLDS: [f64; 2] = [48.0, 51.5];

/// The model's inputs: logarithms of the counts (difficulty grows by ratios), the
/// dead share as it is, and a constant.
pub fn inputs(f: &Features) -> [f64; 8] {
    let ln = |x: f64| (1.0 + x).ln();
    [
        1.0,
        ln(f64::from(f.pushes)),
        ln(f64::from(f.box_lines)),
        ln(f64::from(f.box_changes)),
        ln(f64::from(f.boxes)),
        ln(f64::from(f.floor)),
        f.dead_share,
        ln(f.effort as f64),
    ]
}

/// The score, label and Murase class of `features`, under `weights`.
pub fn classify_with(weights: &[f64; 8], features: Features) -> Rating {
    let score: f64 = inputs(&features)
        .iter()
        .zip(weights)
        .map(|(x, w)| x * w)
        .sum();
    let label = if score < THRESHOLDS[0] {
        Label::Easy
    } else if score < THRESHOLDS[1] {
        Label::Medium
    } else {
        Label::Hard
    };
    Rating {
        score,
        label,
        seed_class: seed_class(&features),
        features,
    }
}

/// [`classify_with`] the fitted weights.
pub fn classify(features: Features) -> Rating {
    classify_with(&WEIGHTS, features)
}

/// Murase's rule.
pub fn seed_class(features: &Features) -> SeedClass {
    if features.pushes < 7 || features.directions < 4 {
        SeedClass::Easy
    } else {
        SeedClass::Good
    }
}

/// The shape of a push sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub box_lines: u32,
    pub box_changes: u32,
    /// Bit `d` set when some push goes in direction `d`.
    pub directions: u8,
}

/// The shape of pushes given as (box square before, box square after, direction): a
/// push moves the box the last one moved when it starts where that one ended.
pub fn lines_and_changes(pushes: impl Iterator<Item = (usize, usize, Direction)>) -> Shape {
    let mut shape = Shape::default();
    let mut last: Option<(usize, Direction)> = None;
    for (from, to, direction) in pushes {
        let same_box = last.is_some_and(|(end, _)| end == from);
        if last.is_some() && !same_box {
            shape.box_changes += 1;
        }
        if !(same_box && last.is_some_and(|(_, d)| d == direction)) {
            shape.box_lines += 1;
        }
        shape.directions |= 1 << direction.index();
        last = Some((to, direction));
    }
    shape
}

/// The pushes of a legal LURD `plan` on `level`, as [`lines_and_changes`] takes them.
fn pushes_of(level: &Level, plan: &str) -> Vec<(usize, usize, Direction)> {
    let mut player = level.player();
    let mut pushes = Vec::new();
    for letter in plan.chars() {
        let Some((direction, push)) = Direction::from_letter(letter) else {
            continue;
        };
        let Some(next) = level.step(player, direction) else {
            continue;
        };
        if push && let Some(beyond) = level.step(next, direction) {
            pushes.push((next, beyond, direction));
        }
        player = next;
    }
    pushes
}

/// The features of `level` solved by `plan` (legal and solving), `effort` nodes.
pub fn features(level: &Level, board: &Board, plan: &str, effort: u64) -> Features {
    let pushes = pushes_of(level, plan);
    let shape = lines_and_changes(pushes.iter().copied());
    let squares = board.n_squares() as u16;
    let off_goals = (0..squares).filter(|&s| !board.is_goal(s)).count();
    let dead = (0..squares).filter(|&s| board.is_dead(s)).count();
    Features {
        pushes: pushes.len() as u32,
        moves: plan.chars().count() as u32,
        box_lines: shape.box_lines,
        box_changes: shape.box_changes,
        boxes: board.n_boxes() as u32,
        floor: u32::from(squares),
        dead_share: if off_goals == 0 {
            0.0
        } else {
            dead as f64 / off_goals as f64
        },
        effort,
        directions: shape.directions.count_ones(),
    }
}

/// Rates `level`: A* at [`EFFORT_NODES`] gives the effort and, when it finishes, a
/// proved optimal plan; otherwise `known` (when it replays) or a feature-space search
/// at [`SOLVE_NODES`] gives the plan. Every plan returned has been replayed. The
/// deadline and cancel of `limits` and `cancel` hold throughout.
pub fn rate(
    level: &Level,
    known: Option<KnownPlan<'_>>,
    limits: Limits,
    cancel: &CancelFlag,
) -> Result<Rated, RateError> {
    let started = std::time::Instant::now();
    let left = |nodes: u64| Limits {
        max_nodes: Some(nodes),
        timeout: limits.timeout.map(|t| t.saturating_sub(started.elapsed())),
        max_memory_bytes: limits.max_memory_bytes,
    };
    let mut budget = Budget::new(left(EFFORT_NODES), cancel.clone());
    let board = Board::build(level, &budget.interrupt()).map_err(RateError::Stopped)?;
    let report = sokoban::solve(
        board.clone(),
        Techniques::optimal(Bound::Matching),
        Algorithm::AStar {
            weight: Weight::ONE,
        },
        &mut budget,
    );
    let effort = report.stats.nodes_expanded.min(EFFORT_NODES);
    let (plan, optimal) = match report.outcome {
        Outcome::Solved(solution) => (lurd(&board, &solution.actions)?, report.proved_optimal),
        Outcome::Unsolvable => return Err(RateError::Unsolvable),
        Outcome::Stopped(stop) if stop != Stop::NodeLimit => return Err(RateError::Stopped(stop)),
        Outcome::Stopped(_) | Outcome::GaveUp => match known.filter(|k| solves(level, k.lurd)) {
            Some(known) => (known.lurd.to_string(), known.optimal),
            None => (solve_any(level, &board, left(SOLVE_NODES), cancel)?, false),
        },
    };
    let replay = sokoban::replay(level, &plan, Snapshots::None);
    if !replay.solved {
        return Err(RateError::NotSolved);
    }
    let features = features(level, &board, &plan, effort);
    Ok(Rated {
        pushes: features.pushes,
        moves: features.moves,
        plan,
        optimal,
        rating: classify(features),
    })
}

fn solves(level: &Level, plan: &str) -> bool {
    sokoban::replay(level, plan, Snapshots::None).solved
}

fn lurd(board: &Board, pushes: &[Push]) -> Result<String, RateError> {
    sokoban::plan::lurd(board, pushes).ok_or(RateError::NotSolved)
}

fn solve_any(
    level: &Level,
    board: &Board,
    limits: Limits,
    cancel: &CancelFlag,
) -> Result<String, RateError> {
    let mut budget = Budget::new(limits, cancel.clone());
    let techniques = Techniques {
        box_moves: true,
        ..Techniques::any(Bound::Matching)
    };
    let report = sokoban::solve(
        board.clone(),
        techniques,
        Algorithm::FeatureSpace {
            advice: Advice::EveryImprovement,
        },
        &mut budget,
    );
    match report.outcome {
        Outcome::Solved(solution) => {
            let plan = lurd(board, &solution.actions)?;
            if solves(level, &plan) {
                Ok(plan)
            } else {
                Err(RateError::NotSolved)
            }
        }
        Outcome::Unsolvable => Err(RateError::Unsolvable),
        Outcome::Stopped(stop) if stop != Stop::NodeLimit => Err(RateError::Stopped(stop)),
        Outcome::Stopped(_) | Outcome::GaveUp => Err(RateError::NotSolved),
    }
}
