//! `puzzled serve`'s flags, and the service's configuration made from them.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser};
use puzzled::serve::{Role, ServeConfig};

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    #[arg(long, env = "PUZZLED_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// sqlite://FILE (one process) or postgres://… (several processes share the jobs)
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://puzzled.db")]
    pub database_url: String,
    /// all: API and workers; api: answers requests, runs no search; worker: claims and runs
    /// jobs, serving only /healthz, /readyz and /metrics
    #[arg(long, env = "PUZZLED_ROLE", value_parser = role(), default_value_t = Role::All)]
    pub role: Role,
    /// How long a claimed job's lease lasts without a heartbeat (workers renew it every
    /// second); a dead worker's jobs run again this long after its last heartbeat
    #[arg(long, env = "PUZZLED_LEASE_MS", default_value_t = 5_000)]
    pub lease_ms: u64,
    /// Search threads (default: the number of cores)
    #[arg(long, env = "PUZZLED_WORKERS")]
    pub workers: Option<usize>,
    /// Most nodes a job may expand (the default for requests without limits.max_nodes;
    /// a larger request is refused with 422)
    #[arg(long, env = "PUZZLED_MAX_NODES", default_value_t = 200_000_000)]
    pub max_nodes: u64,
    /// Time limit for requests without limits.timeout_ms
    #[arg(long, env = "PUZZLED_DEFAULT_TIMEOUT_MS", default_value_t = 30_000)]
    pub default_timeout_ms: u64,
    /// Largest limits.timeout_ms a request may ask for (more is refused with 422)
    #[arg(long, env = "PUZZLED_MAX_TIMEOUT_MS", default_value_t = 300_000)]
    pub max_timeout_ms: u64,
    /// Jobs waiting in the queue at most; a submission beyond is refused with 503
    #[arg(long, env = "PUZZLED_MAX_QUEUED", default_value_t = 1000)]
    pub max_queued: i64,
    /// Jobs one client (IP address) may have waiting in the queue; beyond, 429
    #[arg(long, env = "PUZZLED_MAX_QUEUED_PER_CLIENT", default_value_t = 100)]
    pub max_queued_per_client: i64,
    /// Largest request body; a larger one is refused with 413
    #[arg(long, env = "PUZZLED_MAX_BODY_BYTES", default_value_t = 64 * 1024)]
    pub max_body_bytes: usize,
    /// A connection's request headers must be in within this of its accept (or of the
    /// first byte of a later request on it); else the connection is closed
    #[arg(long, env = "PUZZLED_HEADER_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,
    /// A kept-alive connection with no request in flight is closed after this long
    /// (event streams and long polls are requests in flight)
    #[arg(long, env = "PUZZLED_IDLE_TIMEOUT_MS", default_value_t = 60_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_ms: u64,
    /// A request body must arrive in full within this of its headers; else 408
    #[arg(long, env = "PUZZLED_BODY_TIMEOUT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: u64,
    /// Open connections, all clients together (on each listener); more are closed at once.
    /// Keep it below the process's descriptor limit (`ulimit -n`)
    #[arg(long, env = "PUZZLED_MAX_CONNECTIONS", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Open connections from one IP address (on each listener); more are closed at once
    #[arg(long, env = "PUZZLED_MAX_CONNECTIONS_PER_CLIENT", default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_client: u64,
    /// Most cells of a sliding board (8x8 = 64 is the most the solver takes); more is 422
    #[arg(long, env = "PUZZLED_MAX_BOARD_CELLS", default_value_t = 64)]
    pub max_board_cells: u64,
    /// Memory cap per job for stored states (A*, BFS), in MiB
    #[arg(long, env = "PUZZLED_MAX_JOB_MEMORY_MIB", default_value_t = 2048)]
    pub max_job_memory_mib: u64,
    /// Other sites' origins allowed to call the API and load /embed.js from a browser, as
    /// scheme://host[:port] or `*` for any (repeat or comma-separate); default: same origin only
    #[arg(long, env = "PUZZLED_CORS_ORIGIN", value_delimiter = ',')]
    pub cors_origin: Vec<String>,
    /// A file of API keys, one a line: a key, or `sha256:` and the key's SHA-256 in hex;
    /// `#` comments. With keys, every /v1 route needs `Authorization: Bearer <key>` and
    /// each key sees only its own jobs
    #[arg(long, env = "PUZZLED_API_KEYS_FILE")]
    pub api_keys_file: Option<PathBuf>,
    /// API keys, comma-separated, added to the file's (better set in the environment than
    /// on a command line, which other users of the machine can read)
    #[arg(
        long,
        env = "PUZZLED_API_KEYS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub api_keys: Vec<String>,
    /// Requests per second one client (API key, or IP address without keys) may make to
    /// /v1 on average; 0: no limit. Counted in each process
    #[arg(long, env = "PUZZLED_RATE_LIMIT", default_value_t = 50.0, value_parser = rate)]
    pub rate_limit: f64,
    /// Requests one client may make at once above --rate-limit before it must wait
    #[arg(long, env = "PUZZLED_RATE_BURST", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_burst: u32,
    /// Serve /healthz, /readyz and /metrics on this address instead of beside the API
    #[arg(long, env = "PUZZLED_OPS_BIND")]
    pub ops_bind: Option<String>,
    /// Finished jobs are deleted after this many hours
    #[arg(long, env = "PUZZLED_RETENTION_HOURS", default_value_t = 24)]
    pub retention_hours: u64,
    /// Logs as JSON lines instead of text
    #[arg(long, env = "PUZZLED_LOG_JSON")]
    pub log_json: bool,
    /// Build the 4x4 6-6-3 tables for blank-last and blank-first goals in the background at
    /// start-up (true or false); other goals get theirs on first use
    #[arg(long, env = "PUZZLED_WARM_TABLES", default_value_t = true, action = clap::ArgAction::Set)]
    pub warm_tables: bool,
    /// On SIGTERM, how long running jobs may finish before they are put back in the queue
    #[arg(long, env = "PUZZLED_SHUTDOWN_GRACE_MS", default_value_t = 10_000)]
    pub shutdown_grace_ms: u64,
    /// Where pattern databases are cached
    #[arg(long, env = "PUZZLED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Large table layouts the service may build in the background, one at a time, beyond
    /// the cheap ones (4x4 6-6-3 and exact tables of at most 9 cells, built for any goal on
    /// first use): SIZE:PARTITION[:GOAL], GOAL blank-last (default), blank-first, blank=N
    /// or any (each blank cell built when first asked for); e.g. 4x4:7-8,5x5:6-6-6-6:any.
    /// Named layouts are built at start-up and never evicted
    #[arg(long, env = "PUZZLED_BUILD_TABLES", value_delimiter = ',')]
    pub build_tables: Vec<puzzled::jobs::tables::LayoutRule>,
    /// Peak memory one table build may take, in MiB; a larger build is refused (the 4x4
    /// 7-8 tables need about 5,300, 5x5 6-6-6-6 about 1,300)
    #[arg(long, env = "PUZZLED_TABLE_BUILD_MEMORY_MIB", default_value_t = 2048)]
    pub table_build_memory_mib: u64,
    /// Tables held in memory at most, and table files kept in the data directory at most;
    /// beyond, the least recently used go (a job using one keeps its copy)
    #[arg(long, env = "PUZZLED_MAX_TABLES", default_value_t = 128)]
    pub max_tables: usize,
    /// Table bytes held in memory at most, in MiB
    #[arg(long, env = "PUZZLED_TABLE_MEMORY_MIB", default_value_t = 2048)]
    pub table_memory_mib: u64,
    /// Table file bytes kept in the data directory at most, in MiB
    #[arg(long, env = "PUZZLED_TABLE_DISK_MIB", default_value_t = 4096)]
    pub table_disk_mib: u64,
}

/// `--role`'s names, each with what it does.
fn role() -> impl TypedValueParser<Value = Role> {
    let roles = Role::ALL
        .iter()
        .map(|role| PossibleValue::new(role.name()).help(role.duties()));
    PossibleValuesParser::new(roles).map(|name| Role::parse(&name).expect("one of the roles"))
}

/// A request rate: 0 (no limit), or from one request in 1000 s to any finite number a
/// second.
fn rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|rate| rate.is_finite() && (*rate == 0.0 || *rate >= 0.001))
        .ok_or_else(|| {
            format!(
                "'{text}' is not a rate: give requests per second, 0 (no limit) or 0.001 and up"
            )
        })
}

impl From<ServeArgs> for ServeConfig {
    fn from(args: ServeArgs) -> ServeConfig {
        ServeConfig {
            bind: args.bind,
            database_url: args.database_url,
            role: args.role,
            lease: Duration::from_millis(args.lease_ms),
            workers: args.workers,
            max_nodes: args.max_nodes,
            default_timeout: Duration::from_millis(args.default_timeout_ms),
            max_timeout: Duration::from_millis(args.max_timeout_ms),
            max_queued: args.max_queued,
            max_queued_per_client: args.max_queued_per_client,
            max_body_bytes: args.max_body_bytes,
            header_timeout: Duration::from_millis(args.header_timeout_ms),
            idle_timeout: Duration::from_millis(args.idle_timeout_ms),
            body_timeout: Duration::from_millis(args.body_timeout_ms),
            max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
            max_connections_per_client: usize::try_from(args.max_connections_per_client)
                .unwrap_or(usize::MAX),
            max_board_cells: args.max_board_cells,
            max_job_memory_mib: args.max_job_memory_mib,
            cors_origins: args.cors_origin,
            api_keys_file: args.api_keys_file,
            api_keys: args.api_keys,
            rate_limit: args.rate_limit,
            rate_burst: args.rate_burst,
            ops_bind: args.ops_bind,
            retention: Duration::from_secs(args.retention_hours.saturating_mul(3600)),
            warm_tables: args.warm_tables,
            shutdown_grace: Duration::from_millis(args.shutdown_grace_ms),
            data_dir: args.data_dir,
            build_tables: args.build_tables,
            table_build_memory_mib: args.table_build_memory_mib,
            max_tables: args.max_tables,
            table_memory_mib: args.table_memory_mib,
            table_disk_mib: args.table_disk_mib,
        }
    }
}

/// `serve`'s flags alone, so a bare `puzzled` gets their defaults and environment.
#[derive(Parser)]
struct ServeOnly {
    #[command(flatten)]
    args: ServeArgs,
}

impl Default for ServeArgs {
    fn default() -> ServeArgs {
        ServeOnly::parse_from(["puzzled"]).args
    }
}
