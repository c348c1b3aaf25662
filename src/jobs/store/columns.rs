//! The `jobs` table's columns, each named once, here. A statement names the columns
//! through one of the lists below ([`READ`], [`INSERT`], [`INSERT_FINISHED`], [`FINISH`]),
//! made of groups that each have one binder beside them, binding the group's values in
//! the group's order; so the count of a statement's parameters is the list's length, not
//! a number counted by hand. A test holds each binder to its group's length.
//!
//! Statements that set a few columns of their own (a claim's lease, a heartbeat's
//! progress, a cancel's flag) name them where they are written.

use sqlx::Any;
use sqlx::any::AnyArguments;
use sqlx::query::Query;

use super::{Owner, ResultRecord, game, generation};
use crate::jobs::id::JobId;
use crate::jobs::spec::{AlgorithmChoice, Heuristic, JobSpec, Objective, PuzzleKind, PuzzleSpec};
use crate::jobs::status::JobStatus;
use crate::puzzles::sliding::pdb::PartitionKind;

/// A job as it is queued: its id and priority, its spec, when it was made and whose it
/// is. Bound by [`bind_job`].
const JOB: &[&str] = &[
    "id",
    "priority",
    "puzzle_type",
    "tiles",
    "cols",
    "goal",
    "level",
    "algorithm",
    "heuristic",
    "partition_kind",
    "objective",
    "weight_percent",
    "max_nodes",
    "timeout_ms",
    "include_boards",
    "generate",
    "game",
    "created_at",
    "owner",
];

/// What the request that queued a job said besides the job: kept to answer a retry and
/// to count a client's queue, never read back into a record. Bound by [`bind_request`].
const REQUEST: &[&str] = &["idempotency_key", "request_hash", "client"];

/// A job's runs: when the latest started, and how many times it was claimed. Bound by
/// [`bind_runs`].
const RUNS: &[&str] = &["started_at", "attempts"];

/// The latest claim's fencing token and the running job's progress: written by a claim
/// and by heartbeats, where they are named, and read back.
const LEASE: &[&str] = &[
    "lease_token",
    "progress_nodes",
    "progress_threshold",
    "progress_elapsed_ms",
    "progress_made",
    "progress_tried",
    "progress_game",
];

/// How a job ended: its status, why, when, the result, the error and the note. Bound by
/// [`bind_result`].
const RESULT: &[&str] = &[
    "status",
    "reason",
    "finished_at",
    "resolved_algorithm",
    "resolved_heuristic",
    "plan",
    "plan_length",
    "optimal",
    "nodes_expanded",
    "nodes_generated",
    "unique_states",
    "threshold",
    "elapsed_us",
    "error",
    "note",
    "generation",
    "levels",
    "game_result",
];

/// What [`super::decode::record`] reads: a whole job.
pub(super) const READ: Columns = Columns(&[JOB, RUNS, LEASE, RESULT]);
/// What inserting a queued job writes (its status, `queued`, aside).
pub(super) const INSERT: Columns = Columns(&[JOB, REQUEST]);
/// What inserting a finished job writes, a row at a time (its count of finishes aside).
pub(super) const INSERT_FINISHED: Columns = Columns(&[JOB, RUNS, RESULT]);
/// What finishing a running job writes.
pub(super) const FINISH: Columns = Columns(&[RESULT]);

/// A statement's columns: groups, in order.
pub(super) struct Columns(&'static [&'static [&'static str]]);

impl Columns {
    /// How many columns, and so how many parameters their values take.
    pub(super) const fn len(&self) -> usize {
        let mut n = 0;
        let mut group = 0;
        while group < self.0.len() {
            n += self.0[group].len();
            group += 1;
        }
        n
    }

    fn iter(&self) -> impl Iterator<Item = &'static str> {
        self.0.iter().flat_map(|group| group.iter().copied())
    }

    /// `a, b, c`: the column list of a SELECT, a RETURNING or an INSERT.
    pub(super) fn names(&self) -> String {
        self.iter().collect::<Vec<_>>().join(", ")
    }

    /// `$first, $first+1, …`: one numbered parameter a column.
    pub(super) fn parameters(&self, first: usize) -> String {
        (first..first + self.len())
            .map(|n| format!("${n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `a = $first, b = $first+1, …`: an UPDATE's SET list.
    pub(super) fn assignments(&self, first: usize) -> String {
        self.iter()
            .zip(first..)
            .map(|(name, n)| format!("{name} = ${n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Binds a flag the way both schemas store it (0 or 1).
fn flag(value: bool) -> i64 {
    i64::from(value)
}

/// Binds a job as it is queued, in the order [`JOB`] names it.
pub(super) fn bind_job<'q>(
    query: Query<'q, Any, AnyArguments>,
    id: &JobId,
    priority: i64,
    spec: &JobSpec,
    created_at: i64,
    owner: &Owner,
) -> Query<'q, Any, AnyArguments> {
    bind_spec(query.bind(id.as_str()).bind(priority), spec)
        .bind(created_at)
        .bind(owner.column())
}

/// Binds what a request said besides its job, in the order [`REQUEST`] names it.
pub(super) fn bind_request<'q>(
    query: Query<'q, Any, AnyArguments>,
    idempotency_key: Option<&str>,
    request_hash: Option<&str>,
    client: Option<&str>,
) -> Query<'q, Any, AnyArguments> {
    query.bind(idempotency_key).bind(request_hash).bind(client)
}

/// Binds a job's runs, in the order [`RUNS`] names them.
pub(super) fn bind_runs<'q>(
    query: Query<'q, Any, AnyArguments>,
    started_at: Option<i64>,
    attempts: i64,
) -> Query<'q, Any, AnyArguments> {
    query.bind(started_at).bind(attempts)
}

/// Binds how a job ended, in the order [`RESULT`] names it.
pub(super) fn bind_result<'q>(
    query: Query<'q, Any, AnyArguments>,
    status: &JobStatus,
    result: &ResultRecord,
    finished_at: i64,
) -> Query<'q, Any, AnyArguments> {
    let reason = status.reason().map(|reason| reason.name());
    let error = match status {
        JobStatus::Failed(why) => Some(why.clone()),
        _ => None,
    };
    query
        .bind(status.name())
        .bind(reason)
        .bind(finished_at)
        .bind(result.algorithm.name())
        .bind(result.heuristic.name())
        .bind(result.plan.clone())
        .bind(result.length.map(|l| l as i64))
        .bind(flag(result.optimal))
        .bind(result.nodes_expanded as i64)
        .bind(result.nodes_generated as i64)
        .bind(result.unique_states.map(|n| n as i64))
        .bind(result.threshold.map(i64::from))
        .bind(result.elapsed_us as i64)
        .bind(error)
        .bind(result.note.clone())
        .bind(result.generation.as_ref().map(generation::counts_text))
        .bind(
            result
                .generation
                .as_ref()
                .map(|g| generation::levels_text(&g.levels)),
        )
        .bind(result.game.as_ref().map(game::outcome_text))
}

/// Binds a spec's columns, in the order [`JOB`] names them.
fn bind_spec<'q>(
    query: Query<'q, Any, AnyArguments>,
    spec: &JobSpec,
) -> Query<'q, Any, AnyArguments> {
    let columns = SpecColumns::from(spec);
    query
        .bind(columns.puzzle_type.name())
        .bind(columns.tiles)
        .bind(columns.cols)
        .bind(columns.goal)
        .bind(columns.level)
        .bind(columns.algorithm.name())
        .bind(columns.heuristic.name())
        .bind(columns.partition.map(PartitionKind::name))
        .bind(columns.objective.name())
        .bind(columns.weight_percent)
        .bind(columns.max_nodes)
        .bind(columns.timeout_ms)
        .bind(flag(spec.include_boards))
        .bind(columns.generate)
        .bind(columns.game)
}

/// A spec as stored: names and numbers, parsed back by [`super::decode::record`].
struct SpecColumns {
    puzzle_type: PuzzleKind,
    /// Sliding puzzles: start, columns and goal.
    tiles: Option<String>,
    cols: Option<i64>,
    goal: Option<String>,
    /// Sokoban: the level as XSB text.
    level: Option<String>,
    /// A generate job's parameters.
    generate: Option<String>,
    /// A 2048 job's spec.
    game: Option<String>,
    algorithm: AlgorithmChoice,
    heuristic: Heuristic,
    partition: Option<PartitionKind>,
    objective: Objective,
    weight_percent: Option<i64>,
    max_nodes: Option<i64>,
    timeout_ms: Option<i64>,
}

fn join(tiles: &[u8]) -> String {
    tiles
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

impl From<&JobSpec> for SpecColumns {
    fn from(spec: &JobSpec) -> SpecColumns {
        let mut columns = SpecColumns {
            puzzle_type: spec.puzzle.kind(),
            tiles: None,
            cols: None,
            goal: None,
            level: None,
            generate: None,
            game: None,
            algorithm: spec.algorithm,
            heuristic: spec.heuristic.kind(),
            partition: spec.heuristic.partition(),
            objective: spec.objective,
            weight_percent: spec.weight.map(|w| i64::from(w.percent())),
            max_nodes: spec.limits.max_nodes.map(|n| n as i64),
            timeout_ms: spec.limits.timeout.map(|t| t.as_millis() as i64),
        };
        match &spec.puzzle {
            PuzzleSpec::Sliding(puzzle) => {
                columns.tiles = Some(join(puzzle.start()));
                columns.cols = Some(puzzle.geometry().cols as i64);
                columns.goal = Some(join(puzzle.goal()));
            }
            PuzzleSpec::Sokoban(level) => columns.level = Some(level.to_xsb()),
            PuzzleSpec::Generate(params) => {
                columns.generate = Some(generation::params_text(params));
            }
            PuzzleSpec::Twenty48(spec) => columns.game = Some(game::spec_text(spec)),
        }
        columns
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::time::Duration;

    use sqlx::Execute;

    use super::*;
    use crate::jobs::spec::{HeuristicChoice, JobLimits};
    use crate::puzzles::sokoban::Level;
    use crate::search::Weight;

    /// How many parameters `query` binds.
    fn bound(mut query: Query<'_, Any, AnyArguments>) -> usize {
        query
            .take_arguments()
            .expect("the values bind")
            .map_or(0, |arguments| sqlx::Arguments::len(&arguments))
    }

    /// A Sokoban job with every optional value set: a value binds one parameter, as a
    /// NULL does.
    fn spec() -> JobSpec {
        let level = Level::parse("#####\n#@$.#\n#####").expect("a level");
        JobSpec {
            puzzle: PuzzleSpec::Sokoban(level),
            algorithm: AlgorithmChoice::AStar,
            heuristic: HeuristicChoice::new(Heuristic::Matching, None),
            objective: Objective::Any,
            weight: Some(Weight::from_percent(150)),
            limits: JobLimits {
                max_nodes: Some(1_000),
                timeout: Some(Duration::from_secs(1)),
                max_memory_bytes: None,
            },
            include_boards: true,
        }
    }

    #[test]
    fn each_binder_binds_its_groups_columns() {
        let query = || sqlx::query("");
        let job = bind_job(query(), &JobId::random(), 0, &spec(), 0, &Owner::Anyone);
        assert_eq!(bound(job), JOB.len());
        assert_eq!(
            bound(bind_request(query(), None, None, None)),
            REQUEST.len()
        );
        assert_eq!(bound(bind_runs(query(), None, 1)), RUNS.len());
        let result = ResultRecord {
            algorithm: AlgorithmChoice::Auto,
            heuristic: HeuristicChoice::Auto,
            plan: None,
            length: None,
            optimal: false,
            nodes_expanded: 0,
            nodes_generated: 0,
            unique_states: None,
            threshold: None,
            elapsed_us: 0,
            note: None,
            generation: None,
            game: None,
        };
        let ended = bind_result(query(), &JobStatus::Cancelled, &result, 0);
        assert_eq!(bound(ended), RESULT.len());
    }

    #[test]
    fn each_column_is_named_once() {
        let mut seen = HashSet::new();
        for group in [JOB, REQUEST, RUNS, LEASE, RESULT] {
            for name in group {
                assert!(seen.insert(name), "{name} is in two groups");
            }
        }
        assert_eq!(READ.names().split(", ").count(), READ.len());
        assert_eq!(FINISH.assignments(1).matches(" = $").count(), FINISH.len());
        assert_eq!(INSERT.parameters(1).matches('$').count(), INSERT.len());
    }
}
