//! `puzzled serve`: store → job service → worker pool → HTTP, and a clean stop.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::http::access::{Access, ApiKeys, KeysError};
use crate::http::listener::{self, ConnectionLimits};
use crate::http::rate_limit::RateLimiter;
use crate::http::{self, AppState, Caps, Operations};
use crate::jobs::TableStore;
use crate::jobs::service::{JobService, ServiceConfig};
use crate::jobs::store::{Backend, Store, StoreError, now_ms};
use crate::jobs::tables::{Layout, LayoutRule, TableLimits, default_data_dir};
use crate::puzzles::sliding::Geometry;
use crate::puzzles::sliding::pdb::PartitionKind;

crate::named_enum! {
    /// What one `puzzled serve` process does ([`Role::duties`]); several share a
    /// PostgreSQL job store.
    pub enum Role {
        All = "all",
        Api = "api",
        Worker = "worker",
    }
}

impl Role {
    /// What a process of this role does, as `--role`'s help says.
    pub fn duties(self) -> &'static str {
        match self {
            Role::All => "The API and the workers, in one process",
            Role::Api => "Accepts and answers requests; searches nothing",
            Role::Worker => "Claims and runs jobs; serves only health, readiness and metrics",
        }
    }
}

/// How to serve: `puzzled serve`'s flags as plain values (`puzzled serve --help` says
/// what each does and its default), times as durations.
#[derive(Clone)]
pub struct ServeConfig {
    pub bind: String,
    pub database_url: String,
    pub role: Role,
    /// How long a claimed job's lease lasts without a heartbeat (100 ms at least).
    pub lease: Duration,
    /// Search threads; `None`: the number of cores.
    pub workers: Option<usize>,
    pub max_nodes: u64,
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    pub max_queued: i64,
    pub max_queued_per_client: i64,
    pub max_body_bytes: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub body_timeout: Duration,
    pub max_connections: usize,
    pub max_connections_per_client: usize,
    pub max_board_cells: u64,
    pub max_job_memory_mib: u64,
    /// As given: `*` or `scheme://host[:port]`, checked at start-up.
    pub cors_origins: Vec<String>,
    pub api_keys_file: Option<PathBuf>,
    pub api_keys: Vec<String>,
    /// Requests per second per client; 0: no limit.
    pub rate_limit: f64,
    pub rate_burst: u32,
    pub ops_bind: Option<String>,
    pub retention: Duration,
    pub warm_tables: bool,
    pub shutdown_grace: Duration,
    /// `None`: [`default_data_dir`].
    pub data_dir: Option<PathBuf>,
    pub build_tables: Vec<LayoutRule>,
    pub table_build_memory_mib: u64,
    pub max_tables: usize,
    pub table_memory_mib: u64,
    pub table_disk_mib: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot open the job store {url}: {error}")]
    Store { url: String, error: StoreError },
    #[error("cannot listen on {bind}: {error}")]
    Bind { bind: String, error: std::io::Error },
    #[error("cannot set up metrics: {0}")]
    Metrics(#[from] metrics_exporter_prometheus::BuildError),
    #[error(
        "--role {0:?} splits the service across processes, which needs a postgres:// job store"
    )]
    RoleNeedsPostgres(Role),
    #[error(
        "--cors-origin {0:?} is not an origin: give `*` or scheme://host[:port], with no path or trailing slash"
    )]
    CorsOrigin(String),
    #[error("cannot read the API keys file {path}: {error}")]
    KeysFile {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("bad API keys: {0}")]
    Keys(#[from] KeysError),
    #[error("the server stopped: {0}")]
    Server(std::io::Error),
}

pub fn run(config: ServeConfig) -> Result<(), ServeError> {
    crate::jobs::memory::limit_arenas();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?
        .block_on(serve(config))
}

async fn serve(config: ServeConfig) -> Result<(), ServeError> {
    let cors_origins = config
        .cors_origins
        .iter()
        .map(|origin| {
            http::parse_origin(origin).ok_or_else(|| ServeError::CorsOrigin(origin.clone()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let access = access(&config)?;
    // First, so that what start-up records (recovered jobs) is counted.
    let metrics = http::install_metrics()?;
    let store = Store::open(&config.database_url)
        .await
        .map_err(|error| ServeError::Store {
            url: redacted(&config.database_url),
            error,
        })?;
    if config.role != Role::All && store.backend() == Backend::Sqlite {
        return Err(ServeError::RoleNeedsPostgres(config.role));
    }
    let data_dir = config.data_dir.clone().unwrap_or_else(default_data_dir);
    // An API-only process never resolves a job: its store only answers what is on disk.
    let tables = Arc::new(if config.role == Role::Api {
        TableStore::new(Some(data_dir))
    } else {
        TableStore::managed(Some(data_dir), table_limits(&config))
    });
    let workers = config
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let service_config = ServiceConfig {
        workers,
        max_queued: config.max_queued,
        max_queued_per_client: config.max_queued_per_client,
        max_attempts: 3,
        shutdown_grace: config.shutdown_grace,
        lease: config.lease.max(Duration::from_millis(100)),
        runs_searches: config.role != Role::Api,
        max_job_memory_bytes: config.max_job_memory_mib.saturating_mul(1024 * 1024),
    };
    let service = JobService::new(store.clone(), Arc::clone(&tables), service_config);
    // A worker serves nothing but operations: on --ops-bind when given, else on --bind.
    // The others serve operations on a listener of their own when --ops-bind is given.
    let (main_bind, ops_bind) = match (config.role, &config.ops_bind) {
        (Role::Worker, Some(ops_bind)) => (ops_bind, None),
        (_, ops_bind) => (&config.bind, ops_bind.as_ref()),
    };
    let listener = bind(main_bind).await?;
    let address = listener.local_addr().map_err(ServeError::Server)?;
    let ops_listener = match ops_bind {
        Some(ops_bind) => Some(bind(ops_bind).await?),
        None => None,
    };
    let ops_address = ops_listener
        .as_ref()
        .map(tokio::net::TcpListener::local_addr)
        .transpose()
        .map_err(ServeError::Server)?;
    tracing::info!(
        %address,
        ops_address = ops_address.map(tracing::field::display),
        workers,
        role = %config.role,
        database = %redacted(&config.database_url),
        api_keys = access.keys.as_ref().map_or(0, ApiKeys::count),
        "puzzled listening"
    );

    service.recover().await.map_err(|error| ServeError::Store {
        url: redacted(&config.database_url),
        error,
    })?;
    let mut background = Vec::new();
    background.extend(service.start_listener());
    if config.role != Role::Api {
        background.push(service.start_workers());
        background.push(service.start_reaper());
        if let Err(error) = tables.start_builder() {
            tracing::error!(%error, "cannot start the table builder; tables are not built");
        }
        for layout in config.build_tables.iter().filter_map(LayoutRule::layout) {
            tables.request(&layout);
        }
        if config.warm_tables {
            warm_tables(&tables);
        }
    }
    tokio::spawn(prune_forever(store, config.retention));

    let caps = Caps {
        max_nodes: config.max_nodes,
        default_timeout_ms: millis(config.default_timeout.min(config.max_timeout)),
        max_timeout_ms: millis(config.max_timeout),
        max_body_bytes: config.max_body_bytes,
        max_board_cells: config.max_board_cells,
        max_memory_bytes: config.max_job_memory_mib * 1024 * 1024,
        cors_origins,
    };
    let upkeep = metrics.clone();
    // Histogram samples wait in buffers until upkeep folds them into buckets.
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    let state = Arc::new(AppState {
        service: Arc::clone(&service),
        caps,
        metrics,
        access,
    });
    let limits = connection_limits(&config);
    if let Some(ops_listener) = ops_listener {
        let operations = http::operations_router(Arc::clone(&state));
        // Aborted with the other background tasks once the API has stopped, so that
        // /readyz answers 503 through the shutdown; the abort closes its connections.
        background.push(tokio::spawn(listener::serve(
            ops_listener,
            operations,
            limits,
            std::future::pending(),
        )));
    }
    tokio::spawn(evict_idle_callers(Arc::clone(&state)));
    let app = match (config.role, ops_address) {
        (Role::Worker, _) => http::operations_router(state),
        (Role::All | Role::Api, None) => http::router(state, Operations::Here),
        (Role::All | Role::Api, Some(_)) => http::router(state, Operations::Elsewhere),
    };
    let stopping = Arc::clone(&service);
    let stopping_tables = Arc::clone(&tables);
    let grace = config.shutdown_grace;
    listener::serve(listener, app, limits, async move {
        shutdown_signal().await;
        let deadline = tokio::time::Instant::now() + grace;
        tracing::info!("shutting down: no new jobs; running ones get a grace period");
        // Event streams and long polls end at once; other requests are answered while
        // running jobs have their grace period (503 to new jobs). Then the listener stops,
        // and the connections close by the grace period's end, whatever their clients do.
        // A table build stops within milliseconds; the process does not wait for it.
        stopping_tables.shutdown();
        stopping.shutdown().await;
        deadline.max(tokio::time::Instant::now() + LAST_ANSWERS)
    })
    .await;
    for task in background {
        task.abort();
    }
    Ok(())
}

/// Once the jobs have stopped, at least this long for the answers in flight to be
/// written, even when stopping the jobs took the whole grace period.
const LAST_ANSWERS: Duration = Duration::from_millis(200);

/// Whole milliseconds, as the caps on requests count them.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The connection limits of every listener.
fn connection_limits(config: &ServeConfig) -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: config.header_timeout,
        idle_timeout: config.idle_timeout,
        body_timeout: config.body_timeout,
        max_connections: config.max_connections,
        max_connections_per_client: config.max_connections_per_client,
    }
}

async fn bind(address: &str) -> Result<tokio::net::TcpListener, ServeError> {
    tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| ServeError::Bind {
            bind: address.to_string(),
            error,
        })
}

/// The API keys (from `--api-keys-file` and `PUZZLED_API_KEYS`) and the rate limiter.
fn access(config: &ServeConfig) -> Result<Access, ServeError> {
    let text = match &config.api_keys_file {
        Some(path) => {
            Some(
                std::fs::read_to_string(path).map_err(|error| ServeError::KeysFile {
                    path: path.clone(),
                    error,
                })?,
            )
        }
        None => None,
    };
    Ok(Access {
        keys: ApiKeys::parse(text.as_deref(), &config.api_keys)?,
        limiter: (config.rate_limit > 0.0)
            .then(|| RateLimiter::new(config.rate_limit, config.rate_burst)),
    })
}

/// Forgets, once a minute, the callers whose request-rate bucket has refilled, so that
/// the limiter's memory follows the callers of the last minute, not all callers ever.
async fn evict_idle_callers(state: Arc<AppState>) {
    let Some(limiter) = &state.access.limiter else {
        return;
    };
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        limiter.evict_idle(std::time::Instant::now());
    }
}

/// The table caps and build rules.
fn table_limits(config: &ServeConfig) -> TableLimits {
    const MIB: u64 = 1024 * 1024;
    TableLimits {
        // A layout of four tables (5x5 6-6-6-6) must fit, or its builds would evict each other.
        max_tables: config.max_tables.max(4),
        max_memory_bytes: config.table_memory_mib.saturating_mul(MIB),
        max_disk_bytes: config.table_disk_mib.saturating_mul(MIB),
        build_memory_bytes: config.table_build_memory_mib.saturating_mul(MIB),
        allowed: config.build_tables.clone(),
    }
}

/// Queues the 4×4 6-6-3 tables (seconds each) for blank-last and blank-first goals, so
/// `auto` has them before the first 15-puzzle; other goals get theirs on first use.
fn warm_tables(tables: &TableStore) {
    let geometry = Geometry { rows: 4, cols: 4 };
    for blank in [15, 0] {
        tables.request(&Layout::Partition {
            geometry,
            kind: PartitionKind::SixSixThree,
            blank,
        });
    }
}

/// The URL without its password, for logs and errors.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

async fn prune_forever(store: Store, retention: Duration) {
    let mut tick = tokio::time::interval(Duration::from_secs(600));
    loop {
        tick.tick().await;
        let cutoff = now_ms() - retention.as_millis() as i64;
        match store.prune(cutoff, 500).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "pruned finished jobs"),
            Err(error) => tracing::warn!(%error, "pruning failed"),
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => return ctrl_c.await.unwrap_or(()),
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await.unwrap_or(());
}
