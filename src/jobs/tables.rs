//! The table store: pattern databases and exact tables, built once per process
//! (concurrent askers wait for the one build), shared read-only, and cached as
//! files in a data directory so later processes load them in a moment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::puzzles::sliding::Geometry;
use crate::puzzles::sliding::exact::{ExactError, ExactTable};
use crate::puzzles::sliding::pdb::{PatternDb, PdbError};

#[derive(Debug, Clone, thiserror::Error)]
pub enum TableError {
    #[error(transparent)]
    Pdb(#[from] PdbError),
    #[error(transparent)]
    Exact(#[from] ExactError),
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

#[derive(Clone)]
enum Table {
    Pattern(Arc<PatternDb>),
    Exact(Arc<ExactTable>),
}

type Slot = Arc<OnceLock<Result<Table, TableError>>>;

/// How a table was obtained, for logs and the benchmark.
#[derive(Clone, Debug)]
pub struct TableEvent {
    pub name: String,
    pub built: bool,
    pub seconds: f64,
    pub bytes: usize,
}

pub struct TableStore {
    dir: Option<PathBuf>,
    slots: Mutex<HashMap<TableKey, Slot>>,
    events: Mutex<Vec<TableEvent>>,
}

impl TableStore {
    /// Tables are cached under `dir`; `None` keeps them in memory only.
    pub fn new(dir: Option<PathBuf>) -> TableStore {
        TableStore {
            dir,
            slots: Mutex::new(HashMap::new()),
            events: Mutex::new(Vec::new()),
        }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// What was built or loaded so far, oldest first, and forgets it.
    pub fn take_events(&self) -> Vec<TableEvent> {
        std::mem::take(&mut *self.events.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn pattern_name(geometry: Geometry, goal_cells: &[u8]) -> String {
        format!(
            "pdb-{}x{}-{}",
            geometry.rows,
            geometry.cols,
            goal_cells
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(".")
        )
    }

    fn path(&self, name: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|dir| dir.join(format!("{name}.bin")))
    }

    /// True when the table is in memory or cached on disk, so using it costs no build.
    pub fn has_pattern_db(&self, geometry: Geometry, goal_cells: &[u8]) -> bool {
        let key = TableKey::Pattern {
            geometry,
            goal_cells: goal_cells.to_vec(),
        };
        let in_memory = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .is_some_and(|slot| slot.get().is_some_and(Result::is_ok));
        in_memory
            || self
                .path(&Self::pattern_name(geometry, goal_cells))
                .is_some_and(|p| p.is_file())
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
        let name = Self::pattern_name(geometry, goal_cells);
        let table = self.get(key, &name, |bytes| PatternDb::from_bytes(bytes, geometry, goal_cells).ok(), || {
            PatternDb::check_size(geometry, goal_cells.len())?;
            let db = PatternDb::build(geometry, goal_cells, |layer| {
                tracing::debug!(table = %name, depth = layer.depth, states = layer.layer_states,
                    filled = layer.placements_filled, total = layer.placements_total, "pattern database layer");
            })?;
            let bytes = db.memory_bytes();
            Ok((Table::Pattern(Arc::new(db)), bytes))
        })?;
        match table {
            Table::Pattern(db) => Ok(db),
            Table::Exact(_) => unreachable!("keys are typed"),
        }
    }

    pub fn exact(&self, geometry: Geometry, goal: &[u8]) -> Result<Arc<ExactTable>, TableError> {
        let key = TableKey::Exact {
            geometry,
            goal: goal.to_vec(),
        };
        let name = format!(
            "exact-{}x{}-{}",
            geometry.rows,
            geometry.cols,
            goal.iter().map(u8::to_string).collect::<Vec<_>>().join(".")
        );
        let table = self.get(
            key,
            &name,
            |bytes| ExactTable::from_bytes(bytes, geometry, goal).ok(),
            || {
                let table = ExactTable::build(geometry, goal)?;
                let bytes = table.memory_bytes();
                Ok((Table::Exact(Arc::new(table)), bytes))
            },
        )?;
        match table {
            Table::Exact(table) => Ok(table),
            Table::Pattern(_) => unreachable!("keys are typed"),
        }
    }

    fn get<T>(
        &self,
        key: TableKey,
        name: &str,
        load: impl FnOnce(&[u8]) -> Option<T>,
        build: impl FnOnce() -> Result<(Table, usize), TableError>,
    ) -> Result<Table, TableError>
    where
        T: Into<Table>,
    {
        let slot: Slot = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone();
        slot.get_or_init(|| {
            let started = Instant::now();
            let path = self.path(name);
            if let Some(path) = &path
                && let Ok(bytes) = std::fs::read(path)
            {
                match load(&bytes) {
                    Some(table) => {
                        self.record(name, false, started, bytes.len());
                        return Ok(table.into());
                    }
                    None => tracing::warn!(path = %path.display(), "cached table is damaged; rebuilding"),
                }
            }
            let (table, bytes) = build()?;
            self.record(name, true, started, bytes);
            if let Some(path) = &path {
                // A cache that cannot be written only costs a rebuild next time.
                if let Err(error) = write_atomically(path, &table.to_bytes()) {
                    tracing::warn!(path = %path.display(), %error, "could not cache table");
                }
            }
            Ok(table)
        })
        .clone()
    }

    fn record(&self, name: &str, built: bool, started: Instant, bytes: usize) {
        let seconds = started.elapsed().as_secs_f64();
        tracing::info!(table = name, built, seconds, bytes, "table ready");
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(TableEvent {
                name: name.to_string(),
                built,
                seconds,
                bytes,
            });
    }
}

impl Table {
    fn to_bytes(&self) -> Vec<u8> {
        match self {
            Table::Pattern(db) => db.to_bytes(),
            Table::Exact(table) => table.to_bytes(),
        }
    }
}

impl From<PatternDb> for Table {
    fn from(db: PatternDb) -> Table {
        Table::Pattern(Arc::new(db))
    }
}

impl From<ExactTable> for Table {
    fn from(table: ExactTable) -> Table {
        Table::Exact(Arc::new(table))
    }
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
