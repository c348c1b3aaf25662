//! puzzled: a puzzle-solving service.
//!
//! Layers, with dependencies pointing one way (`http → jobs → puzzles → search`):
//! - [`search`]: the engine (IDA*, A*, BFS, greedy, enforced hill-climbing), std only.
//! - [`puzzles`]: domains (sliding tiles) with their formats, heuristics and validators.
//! - [`jobs`]: validated job specs, running a job end to end, the on-disk table store.
//! - [`http`]: the wire types (JSON), shared by the service and the CLI's `--json`.
//! - [`cli`]: the `puzzled` command line.

pub mod cli;
pub mod http;
pub mod jobs;
pub mod puzzles;
pub mod search;
pub mod serve;
