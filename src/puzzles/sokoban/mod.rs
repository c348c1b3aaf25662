//! Sokoban: levels in XSB text, plans in LURD, and a push-based search domain.
//!
//! Map: [`Level`] is a validated level (parsed by [`Level::parse`], collections by
//! [`read_collection`]); [`replay`] is the LURD plan validator; [`Board`] is the level
//! compiled for search (squares, push distances, dead squares); [`SokobanDomain`]
//! implements [`crate::search::Domain`] over box pushes with the player normalised to
//! its region, pruned by [`deadlock`] tests, PI-corrals and corral deadlocks, and
//! bounded by a box–goal [`matching`];
//! [`BoxMoveDomain`] searches the same positions with whole box moves as actions;
//! [`solve`] picks one of the two; [`solve_interleaved`] runs feature-space variants
//! over box moves taking turns; [`shorten`] looks for a plan with fewer pushes than a
//! known one; [`plan`] turns a push sequence back into LURD.

mod advisors;
mod board;
mod box_moves;
mod boxes;
mod corral;
mod corral_deadlock;
mod cuts;
mod dead_squares;
pub mod deadlock;
mod domain;
mod flood;
pub mod generate;
mod hotspots;
mod learned;
pub mod matching;
mod packing;
mod parse;
pub mod plan;
mod pulls;
mod replay;
mod scratch;

pub use board::Board;
pub use box_moves::{BoxMove, BoxMoveDomain, Placed};
pub use domain::{Bound, Push, SokobanDomain, State, Techniques};
pub use learned::Learned;
pub use parse::{LevelText, read_collection};
pub use replay::{Replay, Snapshots, count_pushes, replay};

use std::rc::Rc;

use crate::search::{self, Advice, Algorithm, Budget, Domain, Origin, Outcome, Report, Solution};

/// Runs `algorithm` on the compiled level `board` ([`Board::build`], once per job:
/// each search takes a copy), over single pushes or, when `techniques.box_moves` says
/// so, over box moves; either way the plan comes back as pushes, for [`plan::lurd`] to
/// walk on the board. The domain polls the budget's interrupt inside its expansions.
pub fn solve(
    board: Board,
    techniques: Techniques,
    algorithm: Algorithm,
    budget: &mut Budget,
) -> Report<Push> {
    let pushes = SokobanDomain::on_board(board, techniques, budget.interrupt());
    if !techniques.box_moves {
        return search::solve(&pushes, algorithm, budget);
    }
    let moves = BoxMoveDomain::new(pushes);
    let report = search::solve(&moves, algorithm, budget);
    in_pushes(&moves, report)
}

/// One feature-space search of a [`solve_interleaved`] portfolio, over box moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub techniques: Techniques,
    pub advice: Advice,
    /// Its turns' length against the others'.
    pub weight: u32,
    /// Forward by pushes, or back from the goal by pulls ([`BoxMoveDomain::from_goal`]),
    /// meeting the forward ones.
    pub origin: Origin,
}

/// Feature-space searches over box moves taking turns ([`solve_interleaved`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Portfolio {
    pub variants: Vec<Variant>,
    /// A search that runs alone first, with learned deadlocks of its own, for at most
    /// this many expansions (a quarter of a node limit, half of a time limit, and
    /// [`SPRINT_PATIENCE`] without progress), and is then dropped unless it ended the
    /// job.
    pub sprint: Option<(Variant, u64)>,
}

/// Expansions of the `any` portfolio's sprint: about a third of a 10 s job on the
/// biggest XSokoban levels, a few hundred milliseconds on most.
pub const SPRINT_EXPANSIONS: u64 = 40_000;

/// A sprint ends once this many of its expansions brought it no nearer the goal: on a
/// level it does not solve alone it soon stalls, and the portfolio starts sooner.
pub const SPRINT_PATIENCE: u64 = 10_000;

/// The `any` objective's searches (docs/performance.md, Sokoban): feature-space
/// searches over box moves that fail on different levels, taking turns. Two advices,
/// each without and with goal cuts; one from the goal, meeting the others; and the
/// first again with Festival's opener and explorer ([`Techniques::advisors`]), which
/// also runs alone first: it solves many levels alone that it is slow to solve sharing
/// the time, and the others' learned patterns change its course.
pub fn portfolio(bound: Bound) -> Portfolio {
    let fess = |advice, hotspots, goal_cuts, weight| Variant {
        techniques: Techniques {
            hotspots,
            goal_cuts,
            ..Techniques::any(bound)
        },
        advice,
        weight,
        origin: Origin::Start,
    };
    let first = fess(Advice::EveryImprovement, false, false, 2);
    let advised = Variant {
        techniques: Techniques {
            advisors: true,
            ..first.techniques
        },
        ..first
    };
    Portfolio {
        variants: vec![
            first,
            fess(Advice::EveryImprovement, false, true, 2),
            fess(Advice::BestPerFeature, true, false, 3),
            fess(Advice::BestPerFeature, true, true, 3),
            Variant {
                origin: Origin::Goal,
                ..first
            },
            advised,
        ],
        sprint: Some((advised, SPRINT_EXPANSIONS)),
    }
}

/// The searches of `portfolio`, one per variant, taking turns in this thread under
/// `budget` until one ends the job ([`search::solve_interleaved`]), after its sprint.
/// Returns the report in pushes and the index of the variant that ended it (the
/// sprint's is one past the last).
pub fn solve_interleaved(
    board: &Board,
    portfolio: &Portfolio,
    budget: &mut Budget,
) -> (Report<Push>, usize) {
    let domain = |variant: &Variant, learned| {
        let techniques = Techniques {
            box_moves: true,
            ..variant.techniques
        };
        let pushes =
            SokobanDomain::on_board(board.clone(), techniques, budget.interrupt()).sharing(learned);
        match variant.origin {
            Origin::Start => BoxMoveDomain::new(pushes),
            Origin::Goal => BoxMoveDomain::from_goal(pushes),
        }
    };
    // The forward searches are on the same squares: a deadlock one proves holds for all.
    let learned = Rc::default();
    let mut domains: Vec<BoxMoveDomain> = portfolio
        .variants
        .iter()
        .map(|variant| domain(variant, &learned))
        .collect();
    let mut variants: Vec<&Variant> = portfolio.variants.iter().collect();
    // The sprint learns alone: what it learns would change the others' course.
    let own = Rc::default();
    let sprint = portfolio.sprint.as_ref().map(|(variant, expansions)| {
        domains.push(domain(variant, &own));
        variants.push(variant);
        let limits = budget.limits();
        search::Sprint {
            search: portfolio.variants.len(),
            expansions: limits
                .max_nodes
                .map_or(*expansions, |n| (n / 4).min(*expansions)),
            time: limits.timeout.map(|t| t / 2),
            patience: SPRINT_PATIENCE,
        }
    });
    let searches: Vec<_> = domains
        .iter()
        .zip(variants)
        .map(|(domain, variant)| (domain, variant.advice, variant.weight))
        .collect();
    let (report, last) = search::solve_interleaved(&searches, sprint, budget);
    (in_pushes(&domains[last], report), last)
}

/// What [`shorten`] found out about a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shortened {
    /// A plan with fewer pushes, and the fewest possible.
    Shorter(Vec<Push>),
    /// No plan has fewer pushes: the known one is push-optimal.
    Optimal,
    /// The budget ran out first.
    Unknown,
}

/// Push-optimal A\* (with `bound`) for a plan of fewer than `pushes` pushes: the known
/// plan's length prunes every position that cannot beat it, so on a small level this
/// proves the known plan optimal or finds the optimum.
pub fn shorten(
    board: Board,
    bound: Bound,
    pushes: usize,
    budget: &mut Budget,
) -> (Shortened, search::Stats) {
    let domain = SokobanDomain::on_board(board, Techniques::optimal(bound), budget.interrupt());
    let below = search::Cost::try_from(pushes).unwrap_or(search::Cost::MAX);
    let report = search::solve_below(&domain, below, budget);
    let found = match report.outcome {
        Outcome::Solved(solution) if report.proved_optimal => Shortened::Shorter(solution.actions),
        Outcome::Unsolvable if domain.admissible() => Shortened::Optimal,
        _ => Shortened::Unknown,
    };
    (found, report.stats)
}

/// A box-move report with its plan in pushes.
fn in_pushes(moves: &BoxMoveDomain, report: Report<BoxMove>) -> Report<Push> {
    let outcome = match report.outcome {
        Outcome::Solved(solution) => Outcome::Solved(Solution {
            // Never `None` for a correct search; the caller's replay reports it as failed.
            actions: moves.to_pushes(&solution.actions).unwrap_or_default(),
            cost: solution.cost,
        }),
        Outcome::Unsolvable => Outcome::Unsolvable,
        Outcome::GaveUp => Outcome::GaveUp,
        Outcome::Stopped(stop) => Outcome::Stopped(stop),
    };
    Report {
        outcome,
        stats: report.stats,
        proved_optimal: report.proved_optimal,
    }
}

/// Largest board, in rows and columns of the level text.
pub const MAX_ROWS: usize = 100;
pub const MAX_COLS: usize = 100;
/// Most boxes a level may hold.
pub const MAX_BOXES: usize = 500;

/// A player step, in LURD order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Left,
    Up,
    Right,
    Down,
}

impl Direction {
    pub const ALL: [Direction; 4] = [
        Direction::Left,
        Direction::Up,
        Direction::Right,
        Direction::Down,
    ];

    /// The LURD letter: lower case for a move, upper case for a push.
    pub fn letter(self, push: bool) -> char {
        let letter = match self {
            Direction::Left => 'l',
            Direction::Up => 'u',
            Direction::Right => 'r',
            Direction::Down => 'd',
        };
        if push {
            letter.to_ascii_uppercase()
        } else {
            letter
        }
    }

    /// The direction a LURD letter names, and whether it is written as a push.
    pub fn from_letter(letter: char) -> Option<(Direction, bool)> {
        let direction = match letter.to_ascii_lowercase() {
            'l' => Direction::Left,
            'u' => Direction::Up,
            'r' => Direction::Right,
            'd' => Direction::Down,
            _ => return None,
        };
        Some((direction, letter.is_ascii_uppercase()))
    }

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn opposite(self) -> Direction {
        match self {
            Direction::Left => Direction::Right,
            Direction::Up => Direction::Down,
            Direction::Right => Direction::Left,
            Direction::Down => Direction::Up,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Direction::Left => "left",
            Direction::Up => "up",
            Direction::Right => "right",
            Direction::Down => "down",
        }
    }
}

/// Why a level text was rejected. Rows and columns are 1-based, counted on the board
/// after run-length expansion (`|` starts a new row).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LevelError {
    #[error("no board rows found")]
    Empty,
    #[error("unknown character '{character}' at row {row}, column {col}")]
    UnknownCharacter {
        character: char,
        row: usize,
        col: usize,
    },
    #[error("the run-length count at row {row}, column {col} is not followed by a board character")]
    DanglingCount { row: usize, col: usize },
    #[error("a board of {rows} rows and {cols} columns is over the limit of {MAX_ROWS}x{MAX_COLS}")]
    TooLarge { rows: usize, cols: usize },
    #[error("no player (@ or +)")]
    NoPlayer,
    #[error("a second player at row {row}, column {col}")]
    ManyPlayers { row: usize, col: usize },
    #[error("no boxes")]
    NoBoxes,
    #[error("{boxes} boxes are over the limit of {MAX_BOXES}")]
    TooManyBoxes { boxes: usize },
    #[error("{boxes} boxes but {goals} goals")]
    BoxGoalMismatch { boxes: usize, goals: usize },
    #[error("the board is not closed: the player can walk off it at row {row}, column {col}")]
    Open { row: usize, col: usize },
}

/// A validated level: a closed board, one player, as many boxes as goals (at least one).
/// Cells are numbered row-major; rows shorter than the widest are padded with floor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Level {
    rows: usize,
    cols: usize,
    walls: Vec<bool>,
    goals: Vec<bool>,
    boxes: Vec<bool>,
    player: usize,
}

impl Level {
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    pub fn is_wall(&self, cell: usize) -> bool {
        self.walls[cell]
    }
    pub fn is_goal(&self, cell: usize) -> bool {
        self.goals[cell]
    }
    pub fn has_box(&self, cell: usize) -> bool {
        self.boxes[cell]
    }
    pub fn player(&self) -> usize {
        self.player
    }
    pub fn n_boxes(&self) -> usize {
        self.boxes.iter().filter(|&&b| b).count()
    }

    /// The cell one step from `cell` in `direction`, if it is on the board.
    #[inline]
    pub fn step(&self, cell: usize, direction: Direction) -> Option<usize> {
        let (row, col) = (cell / self.cols, cell % self.cols);
        match direction {
            Direction::Left if col > 0 => Some(cell - 1),
            Direction::Right if col + 1 < self.cols => Some(cell + 1),
            Direction::Up if row > 0 => Some(cell - self.cols),
            Direction::Down if row + 1 < self.rows => Some(cell + self.cols),
            _ => None,
        }
    }

    /// The level as XSB text with `boxes` and `player` in place of the start's.
    pub fn xsb_with(&self, boxes: &[bool], player: usize) -> String {
        let mut text = String::with_capacity(self.rows * (self.cols + 1));
        for row in 0..self.rows {
            let start = text.len();
            let cells = row * self.cols..(row + 1) * self.cols;
            for (cell, ((&wall, &goal), &has_box)) in cells.clone().zip(
                self.walls[cells.clone()]
                    .iter()
                    .zip(&self.goals[cells.clone()])
                    .zip(&boxes[cells]),
            ) {
                text.push(match (wall, goal, has_box, cell == player) {
                    (true, ..) => '#',
                    (_, true, true, _) => '*',
                    (_, false, true, _) => '$',
                    (_, true, false, true) => '+',
                    (_, false, false, true) => '@',
                    (_, true, false, false) => '.',
                    (_, false, false, false) => ' ',
                });
            }
            text.truncate(start + text[start..].trim_end().len());
            text.push('\n');
        }
        text
    }

    /// The level as XSB text (floor as spaces, trailing spaces dropped).
    pub fn to_xsb(&self) -> String {
        self.xsb_with(&self.boxes, self.player)
    }
}

#[cfg(test)]
mod tests;
