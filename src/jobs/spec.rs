//! A validated job request: what to solve and how. Parsed once at the edge; the
//! runner takes it as given.

use std::time::Duration;

use crate::puzzles::sliding::SlidingPuzzle;
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sokoban::Level;
use crate::search::Weight;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PuzzleSpec {
    Sliding(SlidingPuzzle),
    Sokoban(Level),
}

/// The search to run; `Auto` picks one from the puzzle and the objective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlgorithmChoice {
    Auto,
    IdaStar,
    AStar,
    BreadthFirst,
    GreedyBestFirst,
    EnforcedHillClimbing,
    FeatureSpace,
}

impl AlgorithmChoice {
    pub const ALL: [AlgorithmChoice; 7] = [
        AlgorithmChoice::Auto,
        AlgorithmChoice::IdaStar,
        AlgorithmChoice::AStar,
        AlgorithmChoice::BreadthFirst,
        AlgorithmChoice::GreedyBestFirst,
        AlgorithmChoice::EnforcedHillClimbing,
        AlgorithmChoice::FeatureSpace,
    ];

    /// The name used on the wire and the command line.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmChoice::Auto => "auto",
            AlgorithmChoice::IdaStar => "ida-star",
            AlgorithmChoice::AStar => "a-star",
            AlgorithmChoice::BreadthFirst => "bfs",
            AlgorithmChoice::GreedyBestFirst => "greedy-best-first",
            AlgorithmChoice::EnforcedHillClimbing => "enforced-hill-climbing",
            AlgorithmChoice::FeatureSpace => "fess",
        }
    }

    pub fn parse(name: &str) -> Option<AlgorithmChoice> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeuristicChoice {
    Auto,
    Misplaced,
    Manhattan,
    LinearConflict,
    /// Additive pattern databases (4×4, 5×5), or the exact table on boards of ≤ 9 cells.
    /// `None` takes the default partition for the board.
    PatternDatabase(Option<PartitionKind>),
    /// Sokoban: minimum-cost box–goal matching over push distances.
    Matching,
    /// Sokoban: each box's push distance to its closest goal.
    ClosestGoal,
}

impl HeuristicChoice {
    /// The sliding-puzzle heuristics, `auto` first.
    pub const NAMES: [&'static str; 5] = [
        "auto",
        "misplaced",
        "manhattan",
        "linear-conflict",
        "pattern-database",
    ];
    /// The Sokoban lower bounds, `auto` first.
    pub const SOKOBAN_NAMES: [&'static str; 3] = ["auto", "matching", "closest-goal"];

    pub fn name(self) -> &'static str {
        match self {
            HeuristicChoice::Auto => "auto",
            HeuristicChoice::Misplaced => "misplaced",
            HeuristicChoice::Manhattan => "manhattan",
            HeuristicChoice::LinearConflict => "linear-conflict",
            HeuristicChoice::PatternDatabase(_) => "pattern-database",
            HeuristicChoice::Matching => "matching",
            HeuristicChoice::ClosestGoal => "closest-goal",
        }
    }

    /// Parses a name; `partition` refines `pattern-database`.
    pub fn parse(name: &str, partition: Option<PartitionKind>) -> Option<HeuristicChoice> {
        Some(match name {
            "auto" => HeuristicChoice::Auto,
            "misplaced" => HeuristicChoice::Misplaced,
            "manhattan" => HeuristicChoice::Manhattan,
            "linear-conflict" => HeuristicChoice::LinearConflict,
            "pattern-database" => HeuristicChoice::PatternDatabase(partition),
            "matching" => HeuristicChoice::Matching,
            "closest-goal" => HeuristicChoice::ClosestGoal,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// A shortest plan, proved so.
    Optimal,
    /// Any plan, found fast.
    Any,
}

impl Objective {
    pub fn name(self) -> &'static str {
        match self {
            Objective::Optimal => "optimal",
            Objective::Any => "any",
        }
    }
    pub fn parse(name: &str) -> Option<Objective> {
        match name {
            "optimal" => Some(Objective::Optimal),
            "any" => Some(Objective::Any),
            _ => None,
        }
    }
}

/// Per-job limits; the service caps them, the CLI passes them through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobLimits {
    pub max_nodes: Option<u64>,
    pub timeout: Option<Duration>,
    pub max_memory_bytes: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    pub puzzle: PuzzleSpec,
    pub algorithm: AlgorithmChoice,
    pub heuristic: HeuristicChoice,
    pub objective: Objective,
    /// Heuristic weight for IDA*/A*; `None` is 1 (or auto's choice).
    pub weight: Option<Weight>,
    pub limits: JobLimits,
    pub include_boards: bool,
}
