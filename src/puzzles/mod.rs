//! Puzzle domains. Each owns its text formats, heuristics, tables and plan
//! validator, and implements [`crate::search::Domain`]. No I/O here.

pub mod sliding;
