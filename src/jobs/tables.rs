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

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use crate::puzzles::sliding::Geometry;
use crate::puzzles::sliding::exact::{ExactError, ExactTable, MAX_EXACT_CELLS};
use crate::puzzles::sliding::pdb::{Partition, PartitionKind, PatternDb, PdbError, table_entries};

/// Tables of at most this many entries (the 6-tile 4×4 ones: 5.8 M; exact tables of
/// ≤ 9 cells: 363 k) are cheap: a build takes seconds and tens of megabytes, so any
/// goal gets them on first use.
pub const CHEAP_ENTRIES: u128 = 1 << 23;
/// Builds waiting at most; requests beyond are refused until the queue drains.
pub const MAX_QUEUED_BUILDS: usize = 32;
/// Refused layouts remembered for status, newest first.
const REFUSALS_SHOWN: usize = 32;

#[derive(Debug, Clone, thiserror::Error)]
pub enum TableError {
    #[error(transparent)]
    Pdb(#[from] PdbError),
    #[error(transparent)]
    Exact(#[from] ExactError),
    #[error("the table is not built")]
    NotReady,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum TableKey {
    Pattern {
        geometry: Geometry,
        goal_cells: Vec<u8>,
    },
    Exact {
        geometry: Geometry,
        goal: Vec<u8>,
    },
}

fn joined(cells: &[u8]) -> String {
    cells
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

fn parse_size(text: &str) -> Option<Geometry> {
    let (rows, cols) = text.split_once('x')?;
    Some(Geometry {
        rows: rows.parse().ok()?,
        cols: cols.parse().ok()?,
    })
}

impl TableKey {
    /// The cache file's name without `.bin`: `pdb-4x4-1.2.3`, `exact-3x3-1.2.3.4.5.6.7.8.0`.
    fn name(&self) -> String {
        match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => format!(
                "pdb-{}x{}-{}",
                geometry.rows,
                geometry.cols,
                joined(goal_cells)
            ),
            TableKey::Exact { geometry, goal } => {
                format!("exact-{}x{}-{}", geometry.rows, geometry.cols, joined(goal))
            }
        }
    }

    /// The key a cache file's name stands for.
    fn parse(stem: &str) -> Option<TableKey> {
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
            "pdb" => Some(TableKey::Pattern {
                geometry,
                goal_cells: cells,
            }),
            "exact" if cells.len() == geometry.cells() => Some(TableKey::Exact {
                geometry,
                goal: cells,
            }),
            _ => None,
        }
    }

    fn entries(&self) -> u128 {
        match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => table_entries(geometry.cells(), goal_cells.len()),
            TableKey::Exact { geometry, .. } => (1..=geometry.cells() as u128).product(),
        }
    }

    fn build_bytes(&self) -> u128 {
        match self {
            TableKey::Pattern {
                geometry,
                goal_cells,
            } => PatternDb::build_bytes(*geometry, goal_cells.len()),
            TableKey::Exact { geometry, .. } => ExactTable::build_bytes(*geometry),
        }
    }

    fn build(&self, stop: &AtomicBool) -> Result<Table, TableError> {
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

    fn read(&self, bytes: &[u8]) -> Option<Table> {
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
enum Table {
    Pattern(Arc<PatternDb>),
    Exact(Arc<ExactTable>),
}

impl Table {
    fn to_bytes(&self) -> Vec<u8> {
        match self {
            Table::Pattern(db) => db.to_bytes(),
            Table::Exact(table) => table.to_bytes(),
        }
    }
    fn memory_bytes(&self) -> usize {
        match self {
            Table::Pattern(db) => db.memory_bytes(),
            Table::Exact(table) => table.memory_bytes(),
        }
    }
}

type Slot = Arc<OnceLock<Result<Table, TableError>>>;

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
        match self {
            Layout::Partition {
                geometry,
                kind,
                blank,
            } => format!(
                "{}x{}:{}:{}",
                geometry.rows,
                geometry.cols,
                kind.name(),
                blank_name(*geometry, *blank)
            ),
            Layout::Exact { geometry, goal } => {
                format!("{}x{}:exact:{}", geometry.rows, geometry.cols, joined(goal))
            }
        }
    }

    /// The partition's name, or `exact`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Layout::Partition { kind, .. } => kind.name(),
            Layout::Exact { .. } => "exact",
        }
    }

    fn tables(&self) -> Result<Vec<TableKey>, TableError> {
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
                vec![TableKey::Exact {
                    geometry: *geometry,
                    goal: goal.clone(),
                }]
            }
        })
    }

    /// Peak memory of its build: tables are built one at a time, so the largest one's.
    pub fn build_bytes(&self) -> u128 {
        self.tables()
            .map(|keys| keys.iter().map(TableKey::build_bytes).max().unwrap_or(0))
            .unwrap_or(u128::MAX)
    }

    /// Cheap layouts are built for any goal on first use.
    pub fn is_cheap(&self) -> bool {
        self.tables()
            .is_ok_and(|keys| keys.iter().all(|key| key.entries() <= CHEAP_ENTRIES))
    }
}

fn blank_name(geometry: Geometry, blank: usize) -> String {
    if blank + 1 == geometry.cells() {
        "blank-last".into()
    } else if blank == 0 {
        "blank-first".into()
    } else {
        format!("blank={blank}")
    }
}

/// One `--build-tables` entry: `SIZE:PARTITION[:GOAL]`, where GOAL is `blank-last` (the
/// default, as for `puzzled tables`), `blank-first`, `blank=N` (the blank's cell,
/// row-major from 0) or `any` (every blank cell, each built when first asked for).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutRule {
    pub geometry: Geometry,
    pub kind: PartitionKind,
    /// `None`: any blank cell.
    pub blank: Option<usize>,
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
        let blank = match parts.next().unwrap_or("blank-last") {
            "blank-last" => Some(cells.saturating_sub(1)),
            "blank-first" => Some(0),
            "any" => None,
            other => Some(
                other
                    .strip_prefix("blank=")
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
            None => "any".into(),
        };
        write!(
            f,
            "{}x{}:{}:{goal}",
            self.geometry.rows,
            self.geometry.cols,
            self.kind.name()
        )
    }
}

impl LayoutRule {
    fn covers(&self, layout: &Layout) -> bool {
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

/// The service's caps on tables and builds.
#[derive(Clone, Debug)]
pub struct TableLimits {
    /// Tables held in memory at most, and files kept on disk at most.
    pub max_tables: usize,
    pub max_memory_bytes: u64,
    pub max_disk_bytes: u64,
    /// A build whose peak memory would exceed this is refused.
    pub build_memory_bytes: u64,
    /// Layouts beyond the cheap ones that may be built (`--build-tables`).
    pub allowed: Vec<LayoutRule>,
}

impl Default for TableLimits {
    fn default() -> TableLimits {
        TableLimits {
            max_tables: 128,
            max_memory_bytes: 2 << 30,
            max_disk_bytes: 4 << 30,
            build_memory_bytes: 2 << 30,
            allowed: Vec::new(),
        }
    }
}

/// Where a layout stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutState {
    /// Every table is in memory or on disk.
    Ready,
    Queued,
    Building,
    Refused(Refusal),
}

/// Why a layout is not built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not cheap and not named by `--build-tables` (or this is not the service).
    NotAllowed,
    /// Its build would need more memory than `--table-build-memory-mib`.
    OverBudget,
    /// Too many builds are waiting.
    QueueFull,
    /// Its build failed (the log says why).
    Failed,
}

impl Refusal {
    pub fn name(self) -> &'static str {
        match self {
            Refusal::NotAllowed => "not-allowed",
            Refusal::OverBudget => "over-build-budget",
            Refusal::QueueFull => "queue-full",
            Refusal::Failed => "failed",
        }
    }

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

/// How a table was obtained, for logs and the benchmark.
#[derive(Clone, Debug)]
pub struct TableEvent {
    pub name: String,
    pub built: bool,
    pub seconds: f64,
    pub bytes: usize,
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

#[derive(Clone, Copy, Debug)]
struct Held {
    bytes: u64,
    last_used: u64,
}

#[derive(Default)]
struct State {
    slots: HashMap<TableKey, Slot>,
    /// Tables in memory, for the caps: a subset of `slots` (the loaded ones).
    memory: HashMap<TableKey, Held>,
    /// Files in the data directory.
    disk: HashMap<TableKey, Held>,
    /// Tables of layouts the operator named: never evicted.
    pinned: HashSet<TableKey>,
    /// Orders uses, for least-recently-used eviction.
    tick: u64,
    queue: VecDeque<Layout>,
    building: Option<Layout>,
    refused: VecDeque<(Layout, Refusal)>,
}

impl State {
    fn touch(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }
}

pub struct TableStore {
    dir: Option<PathBuf>,
    /// `None`: the command line, which builds on demand.
    limits: Option<TableLimits>,
    state: Mutex<State>,
    /// Wakes the builder when a build is queued or the store stops.
    work: Condvar,
    /// Set at shutdown: the builder stops, and so does the build under way.
    stop: AtomicBool,
    events: Mutex<Vec<TableEvent>>,
}

impl TableStore {
    /// The command line's store: tables are cached under `dir` (`None`: memory only)
    /// and built in the asking thread when missing.
    pub fn new(dir: Option<PathBuf>) -> TableStore {
        TableStore {
            dir,
            limits: None,
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            stop: AtomicBool::new(false),
            events: Mutex::new(Vec::new()),
        }
    }

    /// The service's store: jobs only use tables that are ready; builds run on the
    /// builder thread, within `limits`. Files already in `dir` count as held, oldest
    /// modified first to go.
    pub fn managed(dir: Option<PathBuf>, limits: TableLimits) -> TableStore {
        let store = TableStore {
            limits: Some(limits),
            ..TableStore::new(dir)
        };
        let mut files = store.scan_dir();
        files.sort_by_key(|(_, _, modified)| *modified);
        {
            let mut state = store.lock();
            for (key, bytes, _) in files {
                let last_used = state.touch();
                state.disk.insert(key, Held { bytes, last_used });
            }
            let named: Vec<Layout> = store
                .allowed()
                .iter()
                .filter_map(LayoutRule::layout)
                .collect();
            for layout in named {
                state.pinned.extend(layout.tables().unwrap_or_default());
            }
            store.evict_disk(&mut state);
        }
        store.publish_counts();
        store
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    pub fn is_managed(&self) -> bool {
        self.limits.is_some()
    }

    fn allowed(&self) -> &[LayoutRule] {
        self.limits.as_ref().map_or(&[], |l| &l.allowed)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What was built or loaded so far, oldest first, and forgets it.
    pub fn take_events(&self) -> Vec<TableEvent> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn path(&self, key: &TableKey) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|dir| dir.join(format!("{}.bin", key.name())))
    }

    /// The table files in the data directory: key, size, modification time.
    fn scan_dir(&self) -> Vec<(TableKey, u64, std::time::SystemTime)> {
        let Some(entries) = self.dir.as_ref().and_then(|d| std::fs::read_dir(d).ok()) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name();
                let key = TableKey::parse(name.to_str()?.strip_suffix(".bin")?)?;
                let meta = entry.metadata().ok()?;
                Some((key, meta.len(), meta.modified().ok()?))
            })
            .collect()
    }

    /// In memory, or a file to load (one another process wrote is noticed here).
    fn has_table(&self, state: &mut State, key: &TableKey) -> bool {
        let in_memory = state
            .slots
            .get(key)
            .is_some_and(|slot| slot.get().is_some_and(Result::is_ok));
        if in_memory || state.disk.contains_key(key) {
            return true;
        }
        let Some(bytes) = self
            .path(key)
            .and_then(|p| std::fs::metadata(p).ok())
            .filter(std::fs::Metadata::is_file)
            .map(|m| m.len())
        else {
            return false;
        };
        let last_used = state.touch();
        state.disk.insert(key.clone(), Held { bytes, last_used });
        self.evict_disk(state);
        true
    }

    /// True when the pattern database is in memory or cached on disk.
    pub fn has_pattern_db(&self, geometry: Geometry, goal_cells: &[u8]) -> bool {
        let key = TableKey::Pattern {
            geometry,
            goal_cells: goal_cells.to_vec(),
        };
        self.has_table(&mut self.lock(), &key)
    }

    /// True when every table of the layout is in memory or on disk.
    pub fn is_ready(&self, layout: &Layout) -> bool {
        let Ok(keys) = layout.tables() else {
            return false;
        };
        let mut state = self.lock();
        keys.iter().all(|key| self.has_table(&mut state, key))
    }

    /// Whether this store would build the layout: cheap, or named by `--build-tables`.
    pub fn allows(&self, layout: &Layout) -> bool {
        self.limits.as_ref().is_some_and(|limits| {
            layout.is_cheap() || limits.allowed.iter().any(|rule| rule.covers(layout))
        })
    }

    /// Where the layout stands, queueing its build when it is missing and may be built:
    /// cheap, or allowed by `--build-tables`, within the build budget.
    pub fn request(&self, layout: &Layout) -> LayoutState {
        let Ok(keys) = layout.tables() else {
            return LayoutState::Refused(Refusal::NotAllowed);
        };
        let mut state = self.lock();
        if keys.iter().all(|key| self.has_table(&mut state, key)) {
            return LayoutState::Ready;
        }
        if state.building.as_ref() == Some(layout) {
            return LayoutState::Building;
        }
        if state.queue.contains(layout) {
            return LayoutState::Queued;
        }
        let Some(limits) = &self.limits else {
            return LayoutState::Refused(Refusal::NotAllowed);
        };
        let refusal = if !layout.is_cheap() && !limits.allowed.iter().any(|r| r.covers(layout)) {
            Some(Refusal::NotAllowed)
        } else if layout.build_bytes() > u128::from(limits.build_memory_bytes) {
            Some(Refusal::OverBudget)
        } else if state.queue.len() >= MAX_QUEUED_BUILDS || self.stop.load(Ordering::Relaxed) {
            Some(Refusal::QueueFull)
        } else {
            None
        };
        state.refused.retain(|(l, _)| l != layout);
        if let Some(refusal) = refusal {
            metrics::counter!("puzzled_table_refusals_total", "reason" => refusal.name())
                .increment(1);
            state.refused.push_front((layout.clone(), refusal));
            state.refused.truncate(REFUSALS_SHOWN);
            return LayoutState::Refused(refusal);
        }
        tracing::info!(layout = %layout.name(), "table build queued");
        state.queue.push_back(layout.clone());
        drop(state);
        self.work.notify_all();
        LayoutState::Queued
    }

    pub fn pattern_db(
        &self,
        geometry: Geometry,
        goal_cells: &[u8],
    ) -> Result<Arc<PatternDb>, TableError> {
        let key = TableKey::Pattern {
            geometry,
            goal_cells: goal_cells.to_vec(),
        };
        match self.get(key)? {
            Table::Pattern(db) => Ok(db),
            Table::Exact(_) => unreachable!("keys are typed"),
        }
    }

    pub fn exact(&self, geometry: Geometry, goal: &[u8]) -> Result<Arc<ExactTable>, TableError> {
        let key = TableKey::Exact {
            geometry,
            goal: goal.to_vec(),
        };
        match self.get(key)? {
            Table::Exact(table) => Ok(table),
            Table::Pattern(_) => unreachable!("keys are typed"),
        }
    }

    /// The table: from memory, else from its file; on the command line, else built
    /// here. The service's store answers [`TableError::NotReady`] instead of building.
    fn get(&self, key: TableKey) -> Result<Table, TableError> {
        let slot: Slot = {
            let mut state = self.lock();
            if self.is_managed() && !self.has_table(&mut state, &key) {
                return Err(TableError::NotReady);
            }
            state.slots.entry(key.clone()).or_default().clone()
        };
        let result = slot
            .get_or_init(|| {
                let started = Instant::now();
                if let Some(table) = self.load(&key, started) {
                    return Ok(table);
                }
                if self.is_managed() {
                    return Err(TableError::NotReady);
                }
                let table = key.build(&self.stop)?;
                self.record(&key, true, started, table.memory_bytes());
                self.write(&key, &table);
                Ok(table)
            })
            .clone();
        let mut state = self.lock();
        match &result {
            Ok(table) => {
                state.slots.entry(key.clone()).or_insert(slot);
                let evicted = self.hold(&mut state, &key, table.memory_bytes() as u64);
                drop(state);
                crate::jobs::memory::drop_in_background(evicted);
            }
            Err(_) => {
                // A damaged or vanished file: forget it, so that a build may replace it.
                if state.slots.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                    state.slots.remove(&key);
                }
                state.disk.remove(&key);
            }
        }
        result
    }

    /// Reads the table's file, if it has a sound one.
    fn load(&self, key: &TableKey, started: Instant) -> Option<Table> {
        let path = self.path(key)?;
        let bytes = std::fs::read(&path).ok()?;
        match key.read(&bytes) {
            Some(table) => {
                self.record(key, false, started, bytes.len());
                Some(table)
            }
            None => {
                tracing::warn!(path = %path.display(), "cached table is damaged; dropping it");
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Caches the table as a file; a cache that cannot be written only costs a rebuild.
    fn write(&self, key: &TableKey, table: &Table) {
        let Some(path) = self.path(key) else {
            return;
        };
        let bytes = table.to_bytes();
        if let Err(error) = write_atomically(&path, &bytes) {
            tracing::warn!(path = %path.display(), %error, "could not cache table");
            return;
        }
        let mut state = self.lock();
        let last_used = state.touch();
        state.disk.insert(
            key.clone(),
            Held {
                bytes: bytes.len() as u64,
                last_used,
            },
        );
        self.evict_disk(&mut state);
    }

    /// Marks the table used now (in memory, and its file), and evicts past the caps.
    /// Returns what was evicted, to be dropped away from the caller's path.
    fn hold(&self, state: &mut State, key: &TableKey, bytes: u64) -> Vec<Slot> {
        let last_used = state.touch();
        state.memory.insert(key.clone(), Held { bytes, last_used });
        if let Some(file) = state.disk.get_mut(key) {
            file.last_used = last_used;
        }
        let Some(limits) = &self.limits else {
            return Vec::new();
        };
        let mut evicted = Vec::new();
        while let Some(victim) = over_cap(
            &state.memory,
            &state.pinned,
            Some(key),
            limits.max_tables,
            limits.max_memory_bytes,
        ) {
            state.memory.remove(&victim);
            evicted.extend(state.slots.remove(&victim));
            metrics::counter!("puzzled_table_evictions_total", "where" => "memory").increment(1);
            tracing::info!(table = %victim.name(), "table evicted from memory");
        }
        evicted
    }

    /// Deletes the least recently used files past the caps.
    fn evict_disk(&self, state: &mut State) {
        let Some(limits) = &self.limits else {
            return;
        };
        while let Some(victim) = over_cap(
            &state.disk,
            &state.pinned,
            None,
            limits.max_tables,
            limits.max_disk_bytes,
        ) {
            state.disk.remove(&victim);
            if let Some(path) = self.path(&victim) {
                let _ = std::fs::remove_file(path);
            }
            metrics::counter!("puzzled_table_evictions_total", "where" => "disk").increment(1);
            tracing::info!(table = %victim.name(), "table file evicted");
        }
    }

    fn record(&self, key: &TableKey, built: bool, started: Instant, bytes: usize) {
        let name = key.name();
        let seconds = started.elapsed().as_secs_f64();
        tracing::info!(table = %name, built, seconds, bytes, "table ready");
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(TableEvent {
                name,
                built,
                seconds,
                bytes,
            });
    }

    /// Starts the thread that runs queued builds, one at a time, until [`Self::shutdown`].
    pub fn start_builder(self: &Arc<Self>) -> std::io::Result<std::thread::JoinHandle<()>> {
        let store = Arc::clone(self);
        std::thread::Builder::new()
            .name("table-builder".into())
            .spawn(move || store.run_builds())
    }

    /// Stops the builder, and the build under way within milliseconds; later requests
    /// are refused.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::Relaxed);
        // Taking the lock orders the flag before the builder's next wait.
        drop(self.lock());
        self.work.notify_all();
    }

    fn run_builds(&self) {
        loop {
            let layout = {
                let mut state = self.lock();
                loop {
                    if self.stop.load(Ordering::Relaxed) {
                        state.queue.clear();
                        return;
                    }
                    if let Some(layout) = state.queue.pop_front() {
                        state.building = Some(layout.clone());
                        break layout;
                    }
                    state = self.work.wait(state).unwrap_or_else(|e| e.into_inner());
                }
            };
            let started = Instant::now();
            tracing::info!(layout = %layout.name(), "table build started");
            let built = self.build_layout(&layout);
            let mut state = self.lock();
            state.building = None;
            let outcome = match built {
                Ok(()) => {
                    tracing::info!(layout = %layout.name(), seconds = started.elapsed().as_secs_f64(), "table build finished");
                    "built"
                }
                Err(
                    TableError::Pdb(PdbError::Stopped) | TableError::Exact(ExactError::Stopped),
                ) => {
                    tracing::info!(layout = %layout.name(), "table build stopped");
                    "stopped"
                }
                Err(error) => {
                    tracing::warn!(layout = %layout.name(), %error, "table build failed");
                    state.refused.push_front((layout.clone(), Refusal::Failed));
                    state.refused.truncate(REFUSALS_SHOWN);
                    "failed"
                }
            };
            drop(state);
            metrics::counter!("puzzled_table_builds_total", "outcome" => outcome).increment(1);
            self.publish_counts();
        }
    }

    /// Builds the layout's missing tables in turn, holding and caching each.
    fn build_layout(&self, layout: &Layout) -> Result<(), TableError> {
        let pinned = self.allowed().iter().any(|rule| rule.covers(layout));
        for key in layout.tables()? {
            {
                let mut state = self.lock();
                if pinned {
                    state.pinned.insert(key.clone());
                }
                if self.has_table(&mut state, &key) {
                    continue;
                }
            }
            let started = Instant::now();
            let table = key.build(&self.stop)?;
            let bytes = table.memory_bytes();
            self.record(&key, true, started, bytes);
            self.write(&key, &table);
            let mut state = self.lock();
            state
                .slots
                .insert(key.clone(), Arc::new(OnceLock::from(Ok(table))));
            let evicted = self.hold(&mut state, &key, bytes as u64);
            drop(state);
            drop(evicted);
        }
        Ok(())
    }

    /// Sets the table gauges.
    pub fn publish_counts(&self) {
        let state = self.lock();
        let sum = |held: &HashMap<TableKey, Held>| held.values().map(|h| h.bytes).sum::<u64>();
        metrics::gauge!("puzzled_tables_held", "where" => "memory").set(state.memory.len() as f64);
        metrics::gauge!("puzzled_tables_held", "where" => "disk").set(state.disk.len() as f64);
        metrics::gauge!("puzzled_table_bytes", "where" => "memory").set(sum(&state.memory) as f64);
        metrics::gauge!("puzzled_table_bytes", "where" => "disk").set(sum(&state.disk) as f64);
        metrics::gauge!("puzzled_table_builds", "state" => "queued").set(state.queue.len() as f64);
        metrics::gauge!("puzzled_table_builds", "state" => "building")
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
        let sum = |held: &HashMap<TableKey, Held>| held.values().map(|h| h.bytes).sum::<u64>();
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
            memory_bytes: sum(&state.memory),
            disk_tables: state.disk.len(),
            disk_bytes: sum(&state.disk),
            limits: self.limits.clone(),
        }
    }
}

/// The least recently used table to evict while `held` is over either cap: never a
/// pinned one, nor `keep` (the one just used). `None` when within the caps, or when
/// only such tables are left.
fn over_cap(
    held: &HashMap<TableKey, Held>,
    pinned: &HashSet<TableKey>,
    keep: Option<&TableKey>,
    max_tables: usize,
    max_bytes: u64,
) -> Option<TableKey> {
    let bytes: u64 = held.values().map(|h| h.bytes).sum();
    if held.len() <= max_tables && bytes <= max_bytes {
        return None;
    }
    held.iter()
        .filter(|(key, _)| Some(*key) != keep && !pinned.contains(*key))
        .min_by_key(|(_, h)| h.last_used)
        .map(|(key, _)| key.clone())
}

/// Writes to a temporary file and renames it, so readers never see half a table.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
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

#[cfg(test)]
mod tests {
    use super::*;

    const G2X4: Geometry = Geometry { rows: 2, cols: 4 };

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("puzzled-tables-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// The 2×4 goal with the tiles rotated by `shift`: another exact table each.
    fn goal(shift: u8) -> Vec<u8> {
        (0..8).map(|t| (t + shift) % 8).collect()
    }

    fn wait_ready(store: &TableStore, layout: &Layout) {
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        while !store.is_ready(layout) {
            assert!(Instant::now() < deadline, "{} never built", layout.name());
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn past_the_caps_the_least_recently_used_table_goes_but_jobs_keep_theirs() {
        let dir = scratch("evict");
        let limits = TableLimits {
            max_tables: 2,
            ..TableLimits::default()
        };
        let store = Arc::new(TableStore::managed(Some(dir.clone()), limits));
        let _builder = store.start_builder().expect("thread");
        let layouts: Vec<Layout> = (0..3).map(|s| Layout::exact(G2X4, &goal(s))).collect();
        for layout in &layouts[..2] {
            assert_eq!(store.request(layout), LayoutState::Queued);
            wait_ready(store.as_ref(), layout);
        }
        // A job holds the first table; the second is used after it, so the first is the
        // least recently used.
        let held = store.exact(G2X4, &goal(0)).expect("ready");
        store.exact(G2X4, &goal(1)).expect("ready");
        assert_eq!(store.request(&layouts[2]), LayoutState::Queued);
        wait_ready(store.as_ref(), &layouts[2]);
        // Memory and disk keep two: the first is gone from both.
        let status = store.status();
        assert_eq!((status.memory_tables, status.disk_tables), (2, 2));
        assert!(!store.is_ready(&layouts[0]));
        assert!(matches!(
            store.exact(G2X4, &goal(0)),
            Err(TableError::NotReady)
        ));
        assert_eq!(
            std::fs::read_dir(&dir).expect("dir").count(),
            2,
            "one file evicted"
        );
        // The job's copy lives on until it lets go.
        assert_eq!(held.distance(&goal(0)), Some(0));
        // Bytes count too: a cap below two tables keeps one.
        let small = TableStore::managed(
            Some(dir.clone()),
            TableLimits {
                max_disk_bytes: 50_000,
                ..TableLimits::default()
            },
        );
        assert_eq!(small.status().disk_tables, 1, "40,320 bytes a table");
        store.shutdown();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_cheap_or_allowed_layouts_are_built_and_named_ones_are_pinned() {
        let g4 = Geometry { rows: 4, cols: 4 };
        let store = TableStore::managed(None, TableLimits::default());
        let seven_eight = Layout::Partition {
            geometry: g4,
            kind: PartitionKind::SevenEight,
            blank: 3,
        };
        assert_eq!(
            store.request(&seven_eight),
            LayoutState::Refused(Refusal::NotAllowed)
        );
        let six_six_three = Layout::Partition {
            geometry: g4,
            kind: PartitionKind::SixSixThree,
            blank: 3,
        };
        assert!(six_six_three.is_cheap());
        assert_eq!(store.request(&six_six_three), LayoutState::Queued);
        assert_eq!(store.request(&six_six_three), LayoutState::Queued, "once");
        let status = store.status();
        assert_eq!(status.queued, vec!["4x4:6-6-3:blank=3".to_string()]);
        assert_eq!(
            status.refused,
            vec![("4x4:7-8:blank=3".to_string(), "not-allowed")]
        );
        // Allowed, but over the build budget.
        let rule: LayoutRule = "4x4:7-8:any".parse().expect("rule");
        let allowed = TableStore::managed(
            None,
            TableLimits {
                allowed: vec![rule],
                ..TableLimits::default()
            },
        );
        assert_eq!(
            allowed.request(&seven_eight),
            LayoutState::Refused(Refusal::OverBudget)
        );
        let rule: LayoutRule = "4x4:7-8".parse().expect("rule");
        assert_eq!(
            rule.layout().map(|l| l.name()).as_deref(),
            Some("4x4:7-8:blank-last")
        );
        assert!("4x4:6-6-6-6".parse::<LayoutRule>().is_err());
        assert!("4x4:7-8:blank=16".parse::<LayoutRule>().is_err());
        assert_eq!(
            "5x5:6-6-6-6:blank-first"
                .parse::<LayoutRule>()
                .map(|r| r.blank),
            Ok(Some(0))
        );
    }

    #[test]
    fn a_build_under_way_stops_at_shutdown_and_leaves_nothing() {
        let dir = scratch("stop");
        let store = Arc::new(TableStore::managed(
            Some(dir.clone()),
            TableLimits::default(),
        ));
        let builder = store.start_builder().expect("thread");
        // Blank-first 4×4 6-6-3: seconds of work for the two 6-tile tables.
        let layout = Layout::Partition {
            geometry: Geometry { rows: 4, cols: 4 },
            kind: PartitionKind::SixSixThree,
            blank: 0,
        };
        assert_eq!(store.request(&layout), LayoutState::Queued);
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        while store.status().building.is_empty() {
            assert!(Instant::now() < deadline, "the build never started");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let stopping = Instant::now();
        store.shutdown();
        builder.join().expect("builder ends");
        assert!(
            stopping.elapsed() < std::time::Duration::from_secs(1),
            "stopped in {:?}",
            stopping.elapsed()
        );
        assert!(!store.is_ready(&layout));
        assert!(store.status().building.is_empty());
        assert_eq!(
            store.request(&layout),
            LayoutState::Refused(Refusal::QueueFull),
            "nothing is queued once stopped"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
