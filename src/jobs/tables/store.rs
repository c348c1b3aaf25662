//! The [`TableStore`]: tables in memory and their files, got, loaded, built on the
//! command line, written, and evicted least recently used first past the caps.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use super::key::{Table, TableKey};
use super::{Layout, LayoutRule, Refusal, TableError};
use crate::puzzles::sliding::Geometry;
use crate::puzzles::sliding::exact::ExactTable;
use crate::puzzles::sliding::pdb::PatternDb;

pub(super) type Slot = Arc<OnceLock<Result<Table, TableError>>>;

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

/// How a table was obtained, for logs and the benchmark.
#[derive(Clone, Debug)]
pub struct TableEvent {
    pub name: String,
    pub built: bool,
    pub seconds: f64,
    pub bytes: usize,
}

/// Where a table is held: its `where` label in the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    Memory,
    Disk,
}

impl Place {
    pub(super) const ALL: [Place; 2] = [Place::Memory, Place::Disk];

    pub(super) fn name(self) -> &'static str {
        match self {
            Place::Memory => "memory",
            Place::Disk => "disk",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    pub(super) bytes: u64,
    pub(super) last_used: u64,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) slots: HashMap<TableKey, Slot>,
    /// Tables in memory, for the caps: a subset of `slots` (the loaded ones).
    pub(super) memory: HashMap<TableKey, Held>,
    /// Files in the data directory.
    pub(super) disk: HashMap<TableKey, Held>,
    /// Tables of layouts the operator named: never evicted.
    pub(super) pinned: HashSet<TableKey>,
    /// Orders uses, for least-recently-used eviction.
    tick: u64,
    pub(super) queue: VecDeque<Layout>,
    pub(super) building: Option<Layout>,
    pub(super) refused: VecDeque<(Layout, Refusal)>,
}

impl State {
    fn touch(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    pub(super) fn held(&self, place: Place) -> &HashMap<TableKey, Held> {
        match place {
            Place::Memory => &self.memory,
            Place::Disk => &self.disk,
        }
    }
}

/// The bytes of the tables held.
pub(super) fn held_bytes(held: &HashMap<TableKey, Held>) -> u64 {
    held.values().map(|h| h.bytes).sum()
}

pub struct TableStore {
    dir: Option<PathBuf>,
    /// `None`: the command line, which builds on demand.
    pub(super) limits: Option<TableLimits>,
    state: Mutex<State>,
    /// Wakes the builder when a build is queued or the store stops.
    pub(super) work: Condvar,
    /// Set at shutdown: the builder stops, and so does the build under way.
    pub(super) stop: AtomicBool,
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

    pub(super) fn allowed(&self) -> &[LayoutRule] {
        self.limits.as_ref().map_or(&[], |l| &l.allowed)
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
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
    pub(super) fn has_table(&self, state: &mut State, key: &TableKey) -> bool {
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
        self.has_table(&mut self.lock(), &TableKey::pattern(geometry, goal_cells))
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

    pub fn pattern_db(
        &self,
        geometry: Geometry,
        goal_cells: &[u8],
    ) -> Result<Arc<PatternDb>, TableError> {
        match self.get(TableKey::pattern(geometry, goal_cells))? {
            Table::Pattern(db) => Ok(db),
            Table::Exact(_) => unreachable!("keys are typed"),
        }
    }

    pub fn exact(&self, geometry: Geometry, goal: &[u8]) -> Result<Arc<ExactTable>, TableError> {
        match self.get(TableKey::exact(geometry, goal))? {
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
                self.build(&key, started)
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

    /// Builds the table here, and caches it as a file. `started` is when it was asked for.
    pub(super) fn build(&self, key: &TableKey, started: Instant) -> Result<Table, TableError> {
        let table = key.build(&self.stop)?;
        self.record(key, true, started, table.memory_bytes());
        self.write(key, &table);
        Ok(table)
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
    pub(super) fn hold(&self, state: &mut State, key: &TableKey, bytes: u64) -> Vec<Slot> {
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
            metrics::counter!("puzzled_table_evictions_total", "where" => Place::Memory.name())
                .increment(1);
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
            metrics::counter!("puzzled_table_evictions_total", "where" => Place::Disk.name())
                .increment(1);
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
    if held.len() <= max_tables && held_bytes(held) <= max_bytes {
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
