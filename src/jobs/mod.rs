//! The job layer: validated [`spec::JobSpec`]s, [`run::run_job`] which takes one from
//! request to validated plan, and the [`tables::TableStore`] that caches heuristic
//! tables on disk. Knows the engine and the puzzles; knows nothing of HTTP.

pub mod group_commit;
pub mod memory;
pub mod run;
pub mod service;
pub mod spec;
pub mod store;
pub mod tables;

pub use run::{Board, ExhaustedReason, JobError, JobReport, JobStatus, Plan, run_job};
pub use spec::{AlgorithmChoice, HeuristicChoice, JobLimits, JobSpec, Objective, PuzzleSpec};
pub use tables::TableStore;
