//! Puzzle domains. Each owns its text formats, heuristics, tables and plan
//! validator, and implements [`crate::search::Domain`]. No I/O here.

pub mod sliding;
pub mod sokoban;

/// Why a plan step could not be played (both validators report it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepError {
    /// 1-based index of the offending step.
    pub step: usize,
    pub reason: String,
}
