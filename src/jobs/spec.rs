//! A validated job request: what to solve and how. Parsed once at the edge; the
//! runner takes it as given.

use std::time::Duration;

use super::game::{GameAlgorithm, GameSpec};
use crate::puzzles::sliding::SlidingPuzzle;
use crate::puzzles::sliding::pdb::PartitionKind;
use crate::puzzles::sokoban::Level;
use crate::puzzles::sokoban::generate::GenerateParams;
use crate::search::Weight;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PuzzleSpec {
    Sliding(SlidingPuzzle),
    Sokoban(Level),
    /// New Sokoban levels, each solved and rated.
    Generate(GenerateParams),
    /// A 2048 position's best move, or a whole game played.
    Twenty48(GameSpec),
}

crate::named_enum! {
    /// The puzzle kinds, as the request's `puzzle.type` names them.
    pub enum PuzzleKind {
        Sliding = "sliding",
        Sokoban = "sokoban",
        Twenty48 = "2048",
    }
}

impl PuzzleSpec {
    pub fn kind(&self) -> PuzzleKind {
        match self {
            PuzzleSpec::Sliding(_) => PuzzleKind::Sliding,
            PuzzleSpec::Sokoban(_) | PuzzleSpec::Generate(_) => PuzzleKind::Sokoban,
            PuzzleSpec::Twenty48(_) => PuzzleKind::Twenty48,
        }
    }
}

crate::named_enum! {
    /// The search to run; `Auto` picks one from the puzzle and the objective.
    pub enum AlgorithmChoice {
        Auto = "auto",
        IdaStar = "ida-star",
        AStar = "a-star",
        BreadthFirst = "bfs",
        GreedyBestFirst = "greedy-best-first",
        EnforcedHillClimbing = "enforced-hill-climbing",
        FeatureSpace = "fess",
        BestFirst = "best-first",
        Expectimax = "expectimax",
        Exact = "exact",
        Greedy = "greedy",
    }
}

impl AlgorithmChoice {
    /// The game-tree search it names; `None` for the puzzle searches.
    pub fn game(self) -> Option<GameAlgorithm> {
        Some(match self {
            AlgorithmChoice::BestFirst => GameAlgorithm::BestFirst,
            AlgorithmChoice::Expectimax => GameAlgorithm::Expectimax,
            AlgorithmChoice::Exact => GameAlgorithm::Exact,
            AlgorithmChoice::Greedy => GameAlgorithm::Greedy,
            _ => return None,
        })
    }

    /// Whether it runs on `kind`: game searches on games, the others on puzzles.
    pub fn runs_on(self, kind: PuzzleKind) -> bool {
        self == AlgorithmChoice::Auto || self.game().is_some() == (kind == PuzzleKind::Twenty48)
    }

    /// The names that run on `kind`, `auto` first.
    pub fn names_for(kind: PuzzleKind) -> Vec<&'static str> {
        AlgorithmChoice::ALL
            .iter()
            .filter(|a| a.runs_on(kind))
            .map(|a| a.name())
            .collect()
    }
}

impl From<GameAlgorithm> for AlgorithmChoice {
    fn from(algorithm: GameAlgorithm) -> AlgorithmChoice {
        match algorithm {
            GameAlgorithm::BestFirst => AlgorithmChoice::BestFirst,
            GameAlgorithm::Expectimax => AlgorithmChoice::Expectimax,
            GameAlgorithm::Exact => AlgorithmChoice::Exact,
            GameAlgorithm::Greedy => AlgorithmChoice::Greedy,
        }
    }
}

crate::named_enum! {
    /// A heuristic by name; [`HeuristicChoice`] adds the partition.
    pub enum Heuristic {
        Auto = "auto",
        Misplaced = "misplaced",
        Manhattan = "manhattan",
        LinearConflict = "linear-conflict",
        PatternDatabase = "pattern-database",
        Matching = "matching",
        ClosestGoal = "closest-goal",
    }
}

impl Heuristic {
    /// The puzzle kind it scores; `None` for `auto`, which means each kind's default.
    pub fn puzzle(self) -> Option<PuzzleKind> {
        match self {
            Heuristic::Auto => None,
            Heuristic::Misplaced
            | Heuristic::Manhattan
            | Heuristic::LinearConflict
            | Heuristic::PatternDatabase => Some(PuzzleKind::Sliding),
            Heuristic::Matching | Heuristic::ClosestGoal => Some(PuzzleKind::Sokoban),
        }
    }

    /// The names a puzzle kind takes, `auto` first.
    pub fn names_for(kind: PuzzleKind) -> Vec<&'static str> {
        Heuristic::ALL
            .iter()
            .filter(|h| h.puzzle().is_none_or(|k| k == kind))
            .map(|h| h.name())
            .collect()
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
    pub fn kind(self) -> Heuristic {
        match self {
            HeuristicChoice::Auto => Heuristic::Auto,
            HeuristicChoice::Misplaced => Heuristic::Misplaced,
            HeuristicChoice::Manhattan => Heuristic::Manhattan,
            HeuristicChoice::LinearConflict => Heuristic::LinearConflict,
            HeuristicChoice::PatternDatabase(_) => Heuristic::PatternDatabase,
            HeuristicChoice::Matching => Heuristic::Matching,
            HeuristicChoice::ClosestGoal => Heuristic::ClosestGoal,
        }
    }

    pub fn name(self) -> &'static str {
        self.kind().name()
    }

    /// The choice a name makes; `partition` refines `pattern-database`.
    pub fn new(kind: Heuristic, partition: Option<PartitionKind>) -> HeuristicChoice {
        match kind {
            Heuristic::Auto => HeuristicChoice::Auto,
            Heuristic::Misplaced => HeuristicChoice::Misplaced,
            Heuristic::Manhattan => HeuristicChoice::Manhattan,
            Heuristic::LinearConflict => HeuristicChoice::LinearConflict,
            Heuristic::PatternDatabase => HeuristicChoice::PatternDatabase(partition),
            Heuristic::Matching => HeuristicChoice::Matching,
            Heuristic::ClosestGoal => HeuristicChoice::ClosestGoal,
        }
    }

    /// The partition it names, if any.
    pub fn partition(self) -> Option<PartitionKind> {
        match self {
            HeuristicChoice::PatternDatabase(kind) => kind,
            _ => None,
        }
    }
}

crate::named_enum! {
    pub enum Objective {
        /// A shortest plan, proved so.
        Optimal = "optimal",
        /// Any plan, found fast.
        Any = "any",
    }
}

impl Objective {
    /// What a request that names no objective asks for: optimal for sliding puzzles; any
    /// plan for Sokoban, whose optimum can take very long to prove. (2048 has its own
    /// objectives, in its [`GameSpec`].)
    pub fn default_for(kind: PuzzleKind) -> Objective {
        match kind {
            PuzzleKind::Sliding => Objective::Optimal,
            PuzzleKind::Sokoban | PuzzleKind::Twenty48 => Objective::Any,
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

impl JobSpec {
    /// A job on `puzzle` with every choice left to its default: `auto` search and
    /// heuristic, the puzzle kind's objective, no weight, no limits, no boards. Other
    /// choices are set on the fields:
    /// `JobSpec { algorithm: AlgorithmChoice::IdaStar, ..JobSpec::new(puzzle) }`.
    pub fn new(puzzle: PuzzleSpec) -> JobSpec {
        JobSpec {
            objective: Objective::default_for(puzzle.kind()),
            puzzle,
            algorithm: AlgorithmChoice::Auto,
            heuristic: HeuristicChoice::Auto,
            weight: None,
            limits: JobLimits::default(),
            include_boards: false,
        }
    }
}
