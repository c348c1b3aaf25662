//! What a heuristic needs for one goal ([`Layout`]) and the operator's `--build-tables`
//! entries ([`LayoutRule`]) that allow the large ones.

use super::TableError;
use super::key::{TableKey, joined, parse_size, size_name};
use crate::puzzles::sliding::exact::{ExactError, MAX_EXACT_CELLS};
use crate::puzzles::sliding::pdb::{Partition, PartitionKind};
use crate::puzzles::sliding::{Geometry, GoalName};

/// Tables of at most this many entries (the 6-tile 4×4 ones: 5.8 M; exact tables of
/// ≤ 9 cells: 363 k) are cheap: a build takes seconds and tens of megabytes, so any
/// goal gets them on first use.
const CHEAP_ENTRIES: u128 = 1 << 23;

/// What a heuristic needs for one goal: a standard partition for the goal's blank cell
/// (pattern databases depend only on their goal cells), or the exact table of one goal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    Partition {
        geometry: Geometry,
        kind: PartitionKind,
        blank: usize,
    },
    Exact {
        geometry: Geometry,
        goal: Vec<u8>,
    },
}

impl Layout {
    /// The partition's layout for goals that put the blank where `goal` does.
    pub fn partition(kind: PartitionKind, geometry: Geometry, goal: &[u8]) -> Layout {
        Layout::Partition {
            geometry,
            kind,
            blank: goal.iter().position(|&t| t == 0).unwrap_or(0),
        }
    }

    pub fn exact(geometry: Geometry, goal: &[u8]) -> Layout {
        Layout::Exact {
            geometry,
            goal: goal.to_vec(),
        }
    }

    /// As `--build-tables` and the status name it: `4x4:7-8:blank-last`,
    /// `4x4:6-6-3:blank=5`, `3x3:exact:1.2.3.4.5.6.7.8.0`.
    pub fn name(&self) -> String {
        let (geometry, goal) = match self {
            Layout::Partition {
                geometry, blank, ..
            } => (geometry, blank_name(*geometry, *blank)),
            Layout::Exact { geometry, goal } => (geometry, joined(goal)),
        };
        layout_name(*geometry, self.kind_name(), &goal)
    }

    /// The partition's name, or `exact`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Layout::Partition { kind, .. } => kind.name(),
            Layout::Exact { .. } => EXACT_KIND,
        }
    }

    pub(super) fn tables(&self) -> Result<Vec<TableKey>, TableError> {
        Ok(match self {
            Layout::Partition {
                geometry,
                kind,
                blank,
            } => Partition::standard(*kind, *geometry, *blank)?
                .patterns
                .into_iter()
                .map(|goal_cells| TableKey::Pattern {
                    geometry: *geometry,
                    goal_cells,
                })
                .collect(),
            Layout::Exact { geometry, goal } => {
                if geometry.cells() > MAX_EXACT_CELLS {
                    return Err(ExactError::BoardTooLarge(geometry.cells()).into());
                }
                vec![TableKey::exact(*geometry, goal)]
            }
        })
    }

    /// Peak memory of its build: tables are built one at a time, so the largest one's.
    pub(super) fn build_bytes(&self) -> u128 {
        self.tables()
            .map(|keys| keys.iter().map(TableKey::build_bytes).max().unwrap_or(0))
            .unwrap_or(u128::MAX)
    }

    /// Cheap layouts are built for any goal on first use.
    pub(super) fn is_cheap(&self) -> bool {
        self.tables()
            .is_ok_and(|keys| keys.iter().all(|key| key.entries() <= CHEAP_ENTRIES))
    }
}

/// The kind of a layout of one exact table.
const EXACT_KIND: &str = "exact";
/// The goals a layout or rule names: the blank's cell (last, first — [`GoalName`] —
/// or `blank=N`), or any.
const BLANK_AT: &str = "blank=";
const ANY_BLANK: &str = "any";

/// `SIZE:KIND:GOAL`, as `--build-tables` and the status write layouts and rules.
fn layout_name(geometry: Geometry, kind: &str, goal: &str) -> String {
    format!("{}:{kind}:{goal}", size_name(geometry))
}

fn blank_name(geometry: Geometry, blank: usize) -> String {
    if blank + 1 == geometry.cells() {
        GoalName::BlankLast.name().into()
    } else if blank == 0 {
        GoalName::BlankFirst.name().into()
    } else {
        format!("{BLANK_AT}{blank}")
    }
}

/// One `--build-tables` entry: `SIZE:PARTITION[:GOAL]`, where GOAL is `blank-last` (the
/// default, as for `puzzled tables`), `blank-first`, `blank=N` (the blank's cell,
/// row-major from 0) or `any` (every blank cell, each built when first asked for).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutRule {
    pub(super) geometry: Geometry,
    pub(super) kind: PartitionKind,
    /// `None`: any blank cell.
    pub(super) blank: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' does not name table layouts: give SIZE:PARTITION[:GOAL], e.g. 4x4:7-8, 4x4:7-8:blank-first, 5x5:6-6-6-6:any, 4x4:6-6-3:blank=5"
)]
pub struct LayoutRuleError(String);

impl std::str::FromStr for LayoutRule {
    type Err = LayoutRuleError;

    fn from_str(text: &str) -> Result<LayoutRule, LayoutRuleError> {
        let bad = || LayoutRuleError(text.to_string());
        let mut parts = text.trim().split(':');
        let geometry = parts.next().and_then(parse_size).ok_or_else(bad)?;
        let kind = parts
            .next()
            .and_then(PartitionKind::parse)
            .ok_or_else(bad)?;
        let cells = geometry.cells();
        let goal = parts.next().unwrap_or(GoalName::BlankLast.name());
        let blank = match GoalName::parse(goal) {
            Some(GoalName::BlankLast) => Some(cells.saturating_sub(1)),
            Some(GoalName::BlankFirst) => Some(0),
            None if goal == ANY_BLANK => None,
            None => Some(
                goal.strip_prefix(BLANK_AT)
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|&n| n < cells)
                    .ok_or_else(bad)?,
            ),
        };
        if parts.next().is_some() || Partition::standard(kind, geometry, 0).is_err() {
            return Err(bad());
        }
        Ok(LayoutRule {
            geometry,
            kind,
            blank,
        })
    }
}

impl std::fmt::Display for LayoutRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let goal = match self.blank {
            Some(blank) => blank_name(self.geometry, blank),
            None => ANY_BLANK.into(),
        };
        f.write_str(&layout_name(self.geometry, self.kind.name(), &goal))
    }
}

impl LayoutRule {
    pub(super) fn covers(&self, layout: &Layout) -> bool {
        match layout {
            Layout::Partition {
                geometry,
                kind,
                blank,
            } => {
                *geometry == self.geometry
                    && *kind == self.kind
                    && self.blank.is_none_or(|b| b == *blank)
            }
            Layout::Exact { .. } => false,
        }
    }

    /// The one layout it names, unless it says `any`.
    pub fn layout(&self) -> Option<Layout> {
        self.blank.map(|blank| Layout::Partition {
            geometry: self.geometry,
            kind: self.kind,
            blank,
        })
    }
}
