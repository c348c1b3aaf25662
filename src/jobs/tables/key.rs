//! Table keys and their files: a [`TableKey`] names one table (a pattern database's
//! goal cells, or one goal's exact table) and its cache file, builds it, and reads it
//! back; a [`Table`] is the built thing.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::TableError;
use crate::puzzles::sliding::Geometry;
use crate::puzzles::sliding::exact::ExactTable;
use crate::puzzles::sliding::pdb::{PatternDb, table_entries};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum TableKey {
    Pattern {
        geometry: Geometry,
        goal_cells: Vec<u8>,
    },
    Exact {
        geometry: Geometry,
        goal: Vec<u8>,
    },
}

/// The kinds of table in cache file names.
const PATTERN_FILE: &str = "pdb";
const EXACT_FILE: &str = "exact";

/// Cells as names write them: `1.2.3`.
pub(super) fn joined(cells: &[u8]) -> String {
    cells
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// A board's size as names write it: `4x4`.
pub(super) fn size_name(geometry: Geometry) -> String {
    format!("{}x{}", geometry.rows, geometry.cols)
}

/// The size [`size_name`] writes.
pub(super) fn parse_size(text: &str) -> Option<Geometry> {
    let (rows, cols) = text.split_once('x')?;
    Some(Geometry {
        rows: rows.parse().ok()?,
        cols: cols.parse().ok()?,
    })
}

impl TableKey {
    pub(super) fn pattern(geometry: Geometry, goal_cells: &[u8]) -> TableKey {
        TableKey::Pattern {
            geometry,
            goal_cells: goal_cells.to_vec(),
        }
    }

    pub(super) fn exact(geometry: Geometry, goal: &[u8]) -> TableKey {
        TableKey::Exact {
            geometry,
            goal: goal.to_vec(),
        }
    }

    /// The cache file's name without `.bin`: `pdb-4x4-1.2.3`, `exact-3x3-1.2.3.4.5.6.7.8.0`.
    pub(super) fn name(&self) -> String {
        let (kind, geometry, cells) = match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => (PATTERN_FILE, geometry, goal_cells),
            TableKey::Exact { geometry, goal } => (EXACT_FILE, geometry, goal),
        };
        format!("{kind}-{}-{}", size_name(*geometry), joined(cells))
    }

    /// The key a cache file's name stands for.
    pub(super) fn parse(stem: &str) -> Option<TableKey> {
        let (kind, rest) = stem.split_once('-')?;
        let (size, cells) = rest.split_once('-')?;
        let geometry = parse_size(size)?;
        let cells: Vec<u8> = cells
            .split('.')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .ok()?;
        if cells.iter().any(|&c| usize::from(c) >= geometry.cells()) {
            return None;
        }
        match kind {
            PATTERN_FILE => Some(TableKey::Pattern {
                geometry,
                goal_cells: cells,
            }),
            EXACT_FILE if cells.len() == geometry.cells() => Some(TableKey::Exact {
                geometry,
                goal: cells,
            }),
            _ => None,
        }
    }

    pub(super) fn entries(&self) -> u128 {
        match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => table_entries(geometry.cells(), goal_cells.len()),
            TableKey::Exact { geometry, .. } => (1..=geometry.cells() as u128).product(),
        }
    }

    pub(super) fn build_bytes(&self) -> u128 {
        match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => PatternDb::build_bytes(*geometry, goal_cells.len()),
            TableKey::Exact { geometry, .. } => ExactTable::build_bytes(*geometry),
        }
    }

    pub(super) fn build(&self, stop: &AtomicBool) -> Result<Table, TableError> {
        Ok(match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => {
                PatternDb::check_size(*geometry, goal_cells.len())?;
                let name = self.name();
                let db = PatternDb::build(
                    *geometry,
                    goal_cells,
                    |layer| {
                        tracing::debug!(table = %name, depth = layer.depth, states = layer.layer_states,
                            filled = layer.placements_filled, total = layer.placements_total, "pattern database layer");
                    },
                    stop,
                )?;
                Table::Pattern(Arc::new(db))
            }
            TableKey::Exact { geometry, goal } => {
                Table::Exact(Arc::new(ExactTable::build(*geometry, goal, stop)?))
            }
        })
    }

    pub(super) fn read(&self, bytes: &[u8]) -> Option<Table> {
        match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => PatternDb::from_bytes(bytes, *geometry, goal_cells)
                .ok()
                .map(|db| Table::Pattern(Arc::new(db))),
            TableKey::Exact { geometry, goal } => ExactTable::from_bytes(bytes, *geometry, goal)
                .ok()
                .map(|table| Table::Exact(Arc::new(table))),
        }
    }
}

#[derive(Clone)]
pub(super) enum Table {
    Pattern(Arc<PatternDb>),
    Exact(Arc<ExactTable>),
}

impl Table {
    pub(super) fn to_bytes(&self) -> Vec<u8> {
        match self {
            Table::Pattern(db) => db.to_bytes(),
            Table::Exact(table) => table.to_bytes(),
        }
    }
    pub(super) fn memory_bytes(&self) -> usize {
        match self {
            Table::Pattern(db) => db.memory_bytes(),
            Table::Exact(table) => table.memory_bytes(),
        }
    }
}
