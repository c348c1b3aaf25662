//! Where a job is in its life, and how it ended: the names clients see as `status` and
//! `reason`, the store keeps in its `status` and `reason` columns, and metrics label.

use crate::search::Stop;

crate::named_enum! {
    /// A job's status by name: the stage, or how it finished.
    pub enum Status {
        Queued = "queued",
        Running = "running",
        Solved = "solved",
        Unsolvable = "unsolvable",
        Exhausted = "exhausted",
        Cancelled = "cancelled",
        Failed = "failed",
    }
}

crate::named_enum! {
    /// Why a search ended without a plan but without an error.
    pub enum ExhaustedReason {
        NodeLimit = "node_limit",
        Timeout = "timeout",
        MemoryLimit = "memory_limit",
        /// An incomplete search (hill-climbing) ran out of ideas.
        GaveUp = "gave_up",
    }
}

/// How a job finished.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobStatus {
    Solved,
    Unsolvable,
    Exhausted(ExhaustedReason),
    Cancelled,
    /// An internal fault (a plan that failed its replay); the message is for logs.
    Failed(String),
}

impl From<Stop> for JobStatus {
    /// How a job stopped by its limits or its cancel ends.
    fn from(stop: Stop) -> JobStatus {
        match stop {
            Stop::Cancelled => JobStatus::Cancelled,
            Stop::NodeLimit => JobStatus::Exhausted(ExhaustedReason::NodeLimit),
            Stop::TimeLimit => JobStatus::Exhausted(ExhaustedReason::Timeout),
            Stop::MemoryLimit => JobStatus::Exhausted(ExhaustedReason::MemoryLimit),
        }
    }
}

impl JobStatus {
    pub fn status(&self) -> Status {
        match self {
            JobStatus::Solved => Status::Solved,
            JobStatus::Unsolvable => Status::Unsolvable,
            JobStatus::Exhausted(_) => Status::Exhausted,
            JobStatus::Cancelled => Status::Cancelled,
            JobStatus::Failed(_) => Status::Failed,
        }
    }

    pub fn name(&self) -> &'static str {
        self.status().name()
    }

    pub fn reason(&self) -> Option<ExhaustedReason> {
        match self {
            JobStatus::Exhausted(reason) => Some(*reason),
            _ => None,
        }
    }
}

/// Where a job is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    Queued,
    Running,
    Finished(JobStatus),
}

/// A stored stage that does not read back: the names are the store's, so this is a
/// damaged row, never a default.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StageError {
    #[error("unknown status '{0}'")]
    Status(String),
    #[error("status exhausted with reason {0:?}, which is not one of the reasons")]
    Reason(Option<String>),
}

impl Stage {
    pub fn status(&self) -> Status {
        match self {
            Stage::Queued => Status::Queued,
            Stage::Running => Status::Running,
            Stage::Finished(status) => status.status(),
        }
    }

    pub fn name(&self) -> &'static str {
        self.status().name()
    }

    pub fn is_terminal(&self) -> bool {
        matches!(self, Stage::Finished(_))
    }

    /// The stage from the store's columns: status, reason, and the failure's message.
    pub fn from_columns(
        status: &str,
        reason: Option<&str>,
        error: Option<&str>,
    ) -> Result<Stage, StageError> {
        let status = Status::parse(status).ok_or_else(|| StageError::Status(status.into()))?;
        Ok(match status {
            Status::Queued => Stage::Queued,
            Status::Running => Stage::Running,
            Status::Solved => Stage::Finished(JobStatus::Solved),
            Status::Unsolvable => Stage::Finished(JobStatus::Unsolvable),
            Status::Cancelled => Stage::Finished(JobStatus::Cancelled),
            Status::Failed => Stage::Finished(JobStatus::Failed(error.unwrap_or_default().into())),
            Status::Exhausted => {
                let reason = reason
                    .and_then(ExhaustedReason::parse)
                    .ok_or_else(|| StageError::Reason(reason.map(str::to_string)))?;
                Stage::Finished(JobStatus::Exhausted(reason))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_reads_back_from_its_columns() {
        let mut stages = vec![Stage::Queued, Stage::Running];
        stages.extend(
            [
                JobStatus::Solved,
                JobStatus::Unsolvable,
                JobStatus::Cancelled,
                JobStatus::Failed("replay".into()),
            ]
            .map(Stage::Finished),
        );
        stages.extend(
            ExhaustedReason::ALL
                .iter()
                .map(|&r| Stage::Finished(JobStatus::Exhausted(r))),
        );
        for stage in stages {
            let (reason, error) = match &stage {
                Stage::Finished(JobStatus::Exhausted(r)) => (Some(r.name()), None),
                Stage::Finished(JobStatus::Failed(why)) => (None, Some(why.as_str())),
                _ => (None, None),
            };
            assert_eq!(Stage::from_columns(stage.name(), reason, error), Ok(stage));
        }
    }

    #[test]
    fn a_stored_reason_that_does_not_parse_is_an_error_not_gave_up() {
        assert_eq!(
            Stage::from_columns("exhausted", Some("out_of_time"), None),
            Err(StageError::Reason(Some("out_of_time".into())))
        );
        assert_eq!(
            Stage::from_columns("exhausted", None, None),
            Err(StageError::Reason(None))
        );
        assert_eq!(
            Stage::from_columns("done", None, None),
            Err(StageError::Status("done".into()))
        );
    }
}
