//! Where layouts stand ([`LayoutState`], [`Refusal`]) and what the store shows:
//! [`TablesStatus`] for readiness and capabilities, gauges for metrics.

use std::collections::HashSet;

use super::key::TableKey;
use super::store::{Place, held_bytes};
use super::{Layout, TableLimits, TableStore};
use crate::puzzles::sliding::Geometry;
use crate::puzzles::sliding::pdb::PartitionKind;

/// Where a layout stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutState {
    /// Every table is in memory or on disk.
    Ready,
    Queued,
    Building,
    Refused(Refusal),
}

crate::named_enum! {
    /// Why a layout is not built.
    pub enum Refusal {
        /// Not cheap and not named by `--build-tables` (or this is not the service).
        NotAllowed = "not-allowed",
        /// Its build would need more memory than `--table-build-memory-mib`.
        OverBudget = "over-build-budget",
        /// Too many builds are waiting.
        QueueFull = "queue-full",
        /// Its build failed (the log says why).
        Failed = "failed",
    }
}

impl LayoutState {
    /// Its name, as the `state` label of the build gauge.
    pub fn name(self) -> &'static str {
        match self {
            LayoutState::Ready => "ready",
            LayoutState::Queued => "queued",
            LayoutState::Building => "building",
            LayoutState::Refused(_) => "refused",
        }
    }
}

impl Refusal {
    /// For a job's note or a refusal's detail.
    pub fn explain(self) -> &'static str {
        match self {
            Refusal::NotAllowed => {
                "this service builds them only where the operator allows it (`puzzled tables`, or `serve --build-tables`)"
            }
            Refusal::OverBudget => {
                "their build would need more memory than this service's table build budget"
            }
            Refusal::QueueFull => "too many table builds are waiting; try again later",
            Refusal::Failed => "their build failed",
        }
    }
}

/// Which layouts are built, building, queued and refused, and what is held.
#[derive(Clone, Debug, Default)]
pub struct TablesStatus {
    pub built: Vec<String>,
    pub building: Vec<String>,
    pub queued: Vec<String>,
    /// Layout name and [`Refusal::name`], newest first.
    pub refused: Vec<(String, &'static str)>,
    pub memory_tables: usize,
    pub memory_bytes: u64,
    pub disk_tables: usize,
    pub disk_bytes: u64,
    /// `None` on the command line, which has no caps.
    pub limits: Option<TableLimits>,
}

impl TableStore {
    /// Sets the table gauges.
    pub fn publish_counts(&self) {
        let state = self.lock();
        for place in Place::ALL {
            let held = state.held(place);
            metrics::gauge!("puzzled_tables_held", "where" => place.name()).set(held.len() as f64);
            metrics::gauge!("puzzled_table_bytes", "where" => place.name())
                .set(held_bytes(held) as f64);
        }
        metrics::gauge!("puzzled_table_builds", "state" => LayoutState::Queued.name())
            .set(state.queue.len() as f64);
        metrics::gauge!("puzzled_table_builds", "state" => LayoutState::Building.name())
            .set(f64::from(u8::from(state.building.is_some())));
    }

    /// Which layouts are built (the standard partitions for every blank cell, and the
    /// exact tables held), building, queued and refused; what is held, and the caps.
    pub fn status(&self) -> TablesStatus {
        let state = self.lock();
        let ready: HashSet<&TableKey> = state.disk.keys().chain(state.memory.keys()).collect();
        let mut built: Vec<String> = Vec::new();
        for (geometry, kinds) in [
            (
                Geometry { rows: 4, cols: 4 },
                &[PartitionKind::SevenEight, PartitionKind::SixSixThree][..],
            ),
            (
                Geometry { rows: 5, cols: 5 },
                &[PartitionKind::SixSixSixSix][..],
            ),
        ] {
            for &kind in kinds {
                for blank in 0..geometry.cells() {
                    let layout = Layout::Partition {
                        geometry,
                        kind,
                        blank,
                    };
                    if layout
                        .tables()
                        .is_ok_and(|keys| keys.iter().all(|k| ready.contains(k)))
                    {
                        built.push(layout.name());
                    }
                }
            }
        }
        let mut exact: Vec<String> = ready
            .iter()
            .filter_map(|key| match key {
                TableKey::Exact { geometry, goal } => Some(Layout::exact(*geometry, goal).name()),
                TableKey::Pattern { .. } => None,
            })
            .collect();
        exact.sort();
        built.extend(exact);
        TablesStatus {
            built,
            building: state.building.iter().map(Layout::name).collect(),
            queued: state.queue.iter().map(Layout::name).collect(),
            refused: state
                .refused
                .iter()
                .map(|(layout, refusal)| (layout.name(), refusal.name()))
                .collect(),
            memory_tables: state.memory.len(),
            memory_bytes: held_bytes(&state.memory),
            disk_tables: state.disk.len(),
            disk_bytes: held_bytes(&state.disk),
            limits: self.limits.clone(),
        }
    }
}
