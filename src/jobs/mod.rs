//! The job layer: validated [`spec::JobSpec`]s, [`run::run_job`] which takes one from
//! request to validated plan, and the [`tables::TableStore`] that caches heuristic
//! tables on disk. Knows the engine and the puzzles; knows nothing of HTTP.

pub mod game;
pub mod generate;
pub mod group_commit;
pub mod id;
pub mod memory;
pub mod resolve;
pub mod run;
pub mod service;
pub mod spec;
pub mod status;
pub mod store;
pub mod tables;

pub use id::JobId;
pub use resolve::JobError;
pub use run::{Board, JobReport, Plan, run_job};
pub use spec::{
    AlgorithmChoice, Heuristic, HeuristicChoice, JobLimits, JobSpec, Objective, PuzzleKind,
    PuzzleSpec,
};
pub use status::{ExhaustedReason, JobStatus, Stage, Status};
pub use tables::TableStore;
