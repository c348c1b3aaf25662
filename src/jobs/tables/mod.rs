//! The table store: pattern databases and exact tables, held in memory, cached as files
//! in a data directory, and built by one background thread.
//!
//! Map: a [`Layout`] is what a heuristic needs for one goal (a standard partition for
//! the goal's blank cell, or the exact table of one goal); a [`LayoutRule`] is one
//! `--build-tables` entry; [`TableLimits`] are the caps and the build budget; the
//! [`TableStore`] answers whether a layout is ready, queues builds
//! ([`TableStore::request`]), runs them one at a time ([`TableStore::start_builder`]),
//! and evicts the least recently used tables past its caps; [`TablesStatus`] is what
//! readiness, capabilities and metrics show.
//!
//! Two modes. [`TableStore::new`] (the command line) builds what its caller asks for in
//! the caller's thread: the operator is at the keyboard. [`TableStore::managed`] (the
//! service) never builds on a job's path. Jobs use tables that are ready (in memory, or
//! a file to load); cheap layouts are built in the background on first use, large ones
//! only when the operator allows them, within the build budget.
//!
//! Files: `key.rs` (table keys, their files), `layout.rs` (layouts and rules), `store.rs`
//! (the store: get, load, write, evict), `builder.rs` (the queue and the builder
//! thread), `status.rs` (layout states, status and gauges).

mod builder;
mod key;
mod layout;
mod status;
mod store;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use crate::puzzles::sliding::exact::ExactError;
use crate::puzzles::sliding::pdb::PdbError;

pub use layout::{Layout, LayoutRule, LayoutRuleError};
pub use status::{LayoutState, Refusal, TablesStatus};
pub use store::{TableEvent, TableLimits, TableStore};

#[derive(Debug, Clone, thiserror::Error)]
pub enum TableError {
    #[error(transparent)]
    Pdb(#[from] PdbError),
    #[error(transparent)]
    Exact(#[from] ExactError),
    #[error("the table is not built")]
    NotReady,
}

/// The default data directory: `$XDG_DATA_HOME/puzzled`, `~/.local/share/puzzled`,
/// or `./puzzled-data` when neither is known.
pub fn default_data_dir() -> PathBuf {
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(xdg).join("puzzled");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home).join(".local/share/puzzled");
    }
    PathBuf::from("puzzled-data")
}
