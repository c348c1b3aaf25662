//! What the store hands out and takes: a job as stored ([`JobRecord`]) with its result
//! and progress, who owns it ([`Owner`]), a job to queue ([`NewJob`]), and what a cancel,
//! a delete or a heartbeat did.

use super::Stage;
use crate::jobs::game::{GameOutcome, GameProgress};
use crate::jobs::generate::Generation;
use crate::jobs::id::JobId;
use crate::jobs::run::JobReport;
use crate::jobs::spec::{AlgorithmChoice, HeuristicChoice, JobSpec};

#[derive(Clone, Debug, PartialEq)]
pub struct ProgressRecord {
    pub nodes_expanded: u64,
    pub threshold: Option<u32>,
    pub elapsed_ms: u64,
    /// A generate job's levels made and candidates tried.
    pub levels: Option<LevelCounts>,
    /// A 2048 job's latest answer or game so far.
    pub game: Option<GameProgress>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelCounts {
    pub made: u64,
    pub tried: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResultRecord {
    pub algorithm: AlgorithmChoice,
    pub heuristic: HeuristicChoice,
    pub plan: Option<String>,
    pub length: Option<usize>,
    pub optimal: bool,
    pub nodes_expanded: u64,
    pub nodes_generated: u64,
    pub unique_states: Option<u64>,
    pub threshold: Option<u32>,
    pub elapsed_us: u64,
    /// Why the job ran on another heuristic than the one it would have used.
    pub note: Option<String>,
    /// A generate job's levels.
    pub generation: Option<Generation>,
    /// A 2048 job's answer or game.
    pub game: Option<GameOutcome>,
}

impl ResultRecord {
    /// What the store keeps of a finished search.
    pub fn from_report(report: &JobReport) -> ResultRecord {
        ResultRecord {
            algorithm: report.algorithm,
            heuristic: report.heuristic,
            plan: report.plan.as_ref().map(|p| p.text.clone()),
            length: report.plan.as_ref().map(|p| p.length),
            optimal: report.optimal,
            nodes_expanded: report.stats.nodes_expanded,
            nodes_generated: report.stats.nodes_generated,
            unique_states: report.stats.unique_states,
            threshold: report.stats.bound,
            elapsed_us: report.stats.elapsed.as_micros() as u64,
            note: report.note.clone(),
            generation: report.generation.clone(),
            game: report.game.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    pub id: JobId,
    pub stage: Stage,
    pub priority: i64,
    pub spec: JobSpec,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub attempts: i64,
    /// The fencing token of the latest claim; a worker's writes must name it.
    pub lease_token: i64,
    pub progress: Option<ProgressRecord>,
    pub result: Option<ResultRecord>,
    pub error: Option<String>,
    pub owner: Owner,
}

/// Who a job belongs to, and so who may see, cancel and delete it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A service without API keys: every caller sees every job.
    Anyone,
    /// One API key, named by an id derived from its hash (the store never sees a key):
    /// only callers with the same key see the job.
    Key(String),
}

impl Owner {
    /// As stored: the key's id, or '' for [`Owner::Anyone`] (not NULL, so that the
    /// unique index on (owner, idempotency_key) holds for jobs without a key too).
    pub(super) fn column(&self) -> &str {
        match self {
            Owner::Anyone => "",
            Owner::Key(id) => id,
        }
    }

    pub(super) fn from_column(column: String) -> Owner {
        if column.is_empty() {
            Owner::Anyone
        } else {
            Owner::Key(column)
        }
    }

    /// The owner whose jobs a caller acting as `self` is limited to; `None`: every job.
    pub(super) fn filter(&self) -> Option<&str> {
        match self {
            Owner::Anyone => None,
            Owner::Key(id) => Some(id),
        }
    }

    /// Whether a caller acting as `self` may see a job `job` owns.
    pub fn sees(&self, job: &Owner) -> bool {
        match self {
            Owner::Anyone => true,
            Owner::Key(_) => self == job,
        }
    }
}

pub struct NewJob {
    pub spec: JobSpec,
    pub priority: i64,
    pub idempotency_key: Option<String>,
    /// Fingerprint of the request body, to tell an honest retry from a reused key.
    pub request_hash: Option<String>,
    /// Who asked (the API key's id, or the peer's IP address without keys), for the
    /// per-client queue limit.
    pub client: Option<String>,
    pub owner: Owner,
}

/// What cancelling did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelOutcome {
    /// Was queued: it will never run.
    CancelledQueued,
    /// Is running: its search has been asked to stop.
    StopRequested,
    /// Had finished already; nothing changed.
    AlreadyFinished,
    NotFound,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeleteOutcome {
    Deleted,
    NotFinished,
    NotFound,
}

/// Held: the lease was renewed, and whether a cancel was asked for. Lost: another
/// claim has the job now, and this worker must stop writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseState {
    Held { cancel_requested: bool },
    Lost,
}
