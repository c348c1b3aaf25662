//! A mixed load against the service for a fixed time, then its figures: latency per
//! operation (p50, p99, max), answers by status, errors, how busy the workers were and
//! the server's memory (RSS) second by second.
//!
//! ```text
//! cargo build --release --bin puzzled --example load
//! target/release/examples/load --rate 150 --seconds 60            # starts target/release/puzzled on a fresh SQLite file
//! target/release/examples/load --rate 150 --database-url postgres://postgres@127.0.0.1:5432/load   # an empty database
//! target/release/examples/load --url http://127.0.0.1:8080 --pid 4321   # a server already running (RSS from its pid)
//! ```
//!
//! Requests arrive open-loop, `--rate` a second, and each is one of: a synchronous 8-puzzle
//! solve (`POST /v1/solve`), a queued 15-puzzle job capped at `--job-nodes` nodes or a
//! queued Microban level (`POST /v1/jobs`), a poll of a recent job (`GET /v1/jobs/{id}`),
//! an event stream followed to its end or for ten seconds (`GET /v1/jobs/{id}/events`), or a
//! cancel. Queued jobs arrive faster than two workers finish them, so the workers stay busy
//! and the per-client queue limit answers 429: that refusal, and 503 from a full queue, are
//! deliberate. Anything else is an error: a transport failure, another status, or a request
//! that could not start because `--max-in-flight` were already waiting. The run exits 1 if
//! there was any.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

#[derive(Parser, Debug)]
struct Args {
    /// Requests a second, all operations together
    #[arg(long, default_value_t = 100.0)]
    rate: f64,
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// A running server; without it the load starts `--server` itself
    #[arg(long)]
    url: Option<String>,
    /// The running server's process id, for its memory
    #[arg(long)]
    pid: Option<u32>,
    #[arg(long, default_value = "target/release/puzzled")]
    server: PathBuf,
    /// The started server's job store (default: a fresh SQLite file)
    #[arg(long)]
    database_url: Option<String>,
    /// Search threads of the started server (default: its own, the cores)
    #[arg(long)]
    workers: Option<usize>,
    /// Node limit of each queued 15-puzzle job (a few hundred milliseconds at 1,000,000)
    #[arg(long, default_value_t = 1_000_000)]
    job_nodes: u64,
    #[arg(long, default_value_t = 1024)]
    max_in_flight: usize,
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Operation {
    Solve,
    SubmitSliding,
    SubmitSokoban,
    Poll,
    Stream,
    Cancel,
}

impl Operation {
    const ALL: [Operation; 6] = [
        Operation::Solve,
        Operation::SubmitSliding,
        Operation::SubmitSokoban,
        Operation::Poll,
        Operation::Stream,
        Operation::Cancel,
    ];

    fn name(self) -> &'static str {
        match self {
            Operation::Solve => "POST /v1/solve (8-puzzle)",
            Operation::SubmitSliding => "POST /v1/jobs (15-puzzle)",
            Operation::SubmitSokoban => "POST /v1/jobs (Microban)",
            Operation::Poll => "GET /v1/jobs/{id}",
            Operation::Stream => "GET /v1/jobs/{id}/events",
            Operation::Cancel => "POST /v1/jobs/{id}/cancel",
        }
    }

    /// The operation's part of the mix, in percent.
    fn share(self) -> u64 {
        match self {
            Operation::Solve => 30,
            Operation::SubmitSliding => 8,
            Operation::SubmitSokoban => 4,
            Operation::Poll => 50,
            Operation::Stream => 4,
            Operation::Cancel => 4,
        }
    }

    fn expected(self, status: u16) -> bool {
        match self {
            // A solve that needs the queue meets its limits too.
            Operation::Solve => matches!(status, 200 | 429 | 503),
            Operation::SubmitSliding | Operation::SubmitSokoban => {
                matches!(status, 202 | 429 | 503)
            }
            Operation::Poll | Operation::Stream => status == 200,
            Operation::Cancel => matches!(status, 200 | 202),
        }
    }
}

/// SplitMix64, so a run's mix is fixed by `--seed`.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }

    fn operation(&mut self) -> Operation {
        let mut roll = self.below(100);
        for operation in Operation::ALL {
            if roll < operation.share() {
                return operation;
            }
            roll -= operation.share();
        }
        Operation::Poll
    }
}

/// Korf's 15-puzzles 1 to 10 (blank-first goal, 46–59 moves): with linear conflict each
/// needs millions of nodes or more, so a queued one mostly spends its whole node limit.
const KORF_FIRST_TEN: [[u8; 16]; 10] = [
    [14, 13, 15, 7, 11, 12, 9, 5, 6, 0, 2, 1, 4, 8, 10, 3],
    [13, 5, 4, 10, 9, 12, 8, 14, 2, 3, 7, 1, 0, 15, 11, 6],
    [14, 7, 8, 2, 13, 11, 10, 4, 9, 12, 5, 0, 3, 6, 1, 15],
    [5, 12, 10, 7, 15, 11, 14, 0, 8, 2, 1, 13, 3, 4, 9, 6],
    [4, 7, 14, 13, 10, 3, 9, 12, 11, 5, 6, 15, 1, 2, 8, 0],
    [14, 7, 1, 9, 12, 3, 6, 15, 8, 11, 2, 5, 10, 0, 4, 13],
    [2, 11, 15, 5, 13, 4, 6, 7, 12, 8, 10, 1, 9, 3, 14, 0],
    [12, 11, 15, 3, 8, 0, 4, 2, 6, 13, 9, 5, 14, 1, 10, 7],
    [3, 14, 9, 11, 5, 4, 8, 2, 13, 12, 6, 7, 10, 1, 15, 0],
    [13, 11, 8, 9, 0, 15, 7, 10, 4, 3, 6, 14, 5, 12, 2, 1],
];

/// The puzzles the load draws from.
struct Workload {
    eight_puzzles: Vec<Value>,
    fifteen_puzzles: Vec<Value>,
    levels: Vec<Value>,
}

impl Workload {
    fn new(job_nodes: u64) -> Workload {
        // Lines `id t0 … tN length`; `#` starts a comment.
        let boards = |text: &str| -> Vec<Vec<u64>> {
            text.lines()
                .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
                .map(|line| {
                    let numbers: Vec<u64> = line
                        .split_whitespace()
                        .filter_map(|n| n.parse().ok())
                        .collect();
                    numbers[1..numbers.len() - 1].to_vec()
                })
                .collect()
        };
        let eight = boards(include_str!("../benches/data/8puzzle100.txt"));
        let microban = include_str!("../benches/data/microban155.xsb");
        Workload {
            eight_puzzles: eight
                .into_iter()
                .map(|tiles| json!({"puzzle": {"type": "sliding", "tiles": tiles}}))
                .collect(),
            fifteen_puzzles: KORF_FIRST_TEN
                .into_iter()
                .map(|tiles| {
                    json!({"puzzle": {"type": "sliding", "tiles": tiles, "goal": "blank-first"},
                           "algorithm": "ida-star", "heuristic": "linear-conflict",
                           "limits": {"max_nodes": job_nodes}})
                })
                .collect(),
            // The first forty levels: each a few milliseconds to a second of search.
            levels: puzzled::puzzles::sokoban::read_collection(microban)
                .into_iter()
                .take(40)
                .map(|level| json!({"puzzle": {"type": "sokoban", "level": level.text}}))
                .collect(),
        }
    }
}

#[derive(Default)]
struct Tally {
    latencies_us: Vec<u64>,
    statuses: BTreeMap<u16, u64>,
    errors: u64,
}

#[derive(Default)]
struct Record {
    tallies: Mutex<HashMap<Operation, Tally>>,
    /// The first few errors, to say what went wrong.
    error_examples: Mutex<Vec<String>>,
    /// Recent jobs of any kind, for polls.
    recent: Mutex<VecDeque<String>>,
    /// Recent queued jobs, to stream and cancel.
    queued: Mutex<VecDeque<String>>,
}

const RECENT: usize = 256;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Record {
    fn answered(&self, operation: Operation, status: u16, took: Duration) {
        let mut tallies = lock(&self.tallies);
        let tally = tallies.entry(operation).or_default();
        tally.latencies_us.push(took.as_micros() as u64);
        *tally.statuses.entry(status).or_default() += 1;
        if !operation.expected(status) {
            tally.errors += 1;
            drop(tallies);
            self.error(format!("{}: status {status}", operation.name()));
        }
    }

    fn failed(&self, operation: Operation, why: String) {
        lock(&self.tallies).entry(operation).or_default().errors += 1;
        self.error(format!("{}: {why}", operation.name()));
    }

    fn error(&self, what: String) {
        let mut examples = lock(&self.error_examples);
        if examples.len() < 10 {
            examples.push(what);
        }
    }

    fn remember(list: &Mutex<VecDeque<String>>, id: &str) {
        let mut list = lock(list);
        if list.len() == RECENT {
            list.pop_front();
        }
        list.push_back(id.to_string());
    }

    fn pick(list: &Mutex<VecDeque<String>>, rng_value: u64) -> Option<String> {
        let list = lock(list);
        (!list.is_empty()).then(|| list[(rng_value % list.len() as u64) as usize].clone())
    }
}

/// One request of `operation`; `choice` picks the puzzle or the job.
async fn run(
    operation: Operation,
    choice: u64,
    http: &reqwest::Client,
    base: &str,
    workload: &Workload,
    record: &Record,
) {
    let started = Instant::now();
    let request = match operation {
        Operation::Solve => {
            let body = &workload.eight_puzzles[choice as usize % workload.eight_puzzles.len()];
            http.post(format!("{base}/v1/solve")).json(body)
        }
        Operation::SubmitSliding => {
            let body = &workload.fifteen_puzzles[choice as usize % workload.fifteen_puzzles.len()];
            http.post(format!("{base}/v1/jobs")).json(body)
        }
        Operation::SubmitSokoban => {
            let body = &workload.levels[choice as usize % workload.levels.len()];
            http.post(format!("{base}/v1/jobs")).json(body)
        }
        Operation::Poll => {
            let Some(id) = Record::pick(&record.recent, choice) else {
                return;
            };
            http.get(format!("{base}/v1/jobs/{id}"))
        }
        Operation::Stream => {
            let Some(id) = Record::pick(&record.queued, choice) else {
                return;
            };
            return stream(http, base, &id, record).await;
        }
        Operation::Cancel => {
            let Some(id) = Record::pick(&record.queued, choice) else {
                return;
            };
            http.post(format!("{base}/v1/jobs/{id}/cancel"))
        }
    };
    let response = match request.send().await {
        Ok(response) => response,
        Err(error) => return record.failed(operation, error.to_string()),
    };
    let status = response.status().as_u16();
    let body = match response.bytes().await {
        Ok(body) => body,
        Err(error) => return record.failed(operation, error.to_string()),
    };
    record.answered(operation, status, started.elapsed());
    if matches!(status, 200 | 202)
        && let Ok(job) = serde_json::from_slice::<Value>(&body)
        && let Some(id) = job["id"].as_str()
    {
        Record::remember(&record.recent, id);
        if status == 202 && operation != Operation::Cancel {
            Record::remember(&record.queued, id);
        }
    }
}

/// Follows a job's event stream to its `finished` event, or for ten seconds (a job deep
/// in the queue may wait longer). Its latency is the time to the first event.
async fn stream(http: &reqwest::Client, base: &str, id: &str, record: &Record) {
    const FOLLOW: Duration = Duration::from_secs(10);
    let started = Instant::now();
    let mut response = match http.get(format!("{base}/v1/jobs/{id}/events")).send().await {
        Ok(response) => response,
        Err(error) => return record.failed(Operation::Stream, error.to_string()),
    };
    let status = response.status().as_u16();
    if status != 200 {
        return record.answered(Operation::Stream, status, started.elapsed());
    }
    let mut seen = String::new();
    let mut first = None;
    let deadline = tokio::time::Instant::now() + FOLLOW;
    loop {
        match tokio::time::timeout_at(deadline, response.chunk()).await {
            // Followed long enough.
            Err(_) => break,
            Ok(Ok(Some(chunk))) => {
                first.get_or_insert_with(|| started.elapsed());
                seen.push_str(&String::from_utf8_lossy(&chunk));
                if seen.contains("event: finished") {
                    break;
                }
            }
            Ok(Ok(None)) => {
                return record.failed(Operation::Stream, "the stream ended unfinished".into());
            }
            Ok(Err(error)) => return record.failed(Operation::Stream, error.to_string()),
        }
    }
    match first {
        Some(took) => record.answered(Operation::Stream, status, took),
        None => record.failed(Operation::Stream, "no event within ten seconds".into()),
    }
}

/// What the sampler sees each second.
#[derive(Default)]
struct Samples {
    rss_kib: Vec<u64>,
    /// Seconds when every worker had a job.
    busy: u64,
    seconds: u64,
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A Prometheus series' value in an exposition.
fn series(exposition: &str, name: &str) -> Option<f64> {
    exposition
        .lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
}

async fn sample(http: &reqwest::Client, base: &str, pid: Option<u32>, samples: &Mutex<Samples>) {
    let exposition = match http.get(format!("{base}/metrics")).send().await {
        Ok(response) => response.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let running = series(&exposition, "puzzled_jobs_running");
    let workers = series(&exposition, "puzzled_workers");
    let mut samples = lock(samples);
    samples.seconds += 1;
    if running.is_some() && running == workers {
        samples.busy += 1;
    }
    if let Some(rss) = pid.and_then(rss_kib) {
        samples.rss_kib.push(rss);
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Starts the server on a free port and returns it with its address.
fn start_server(args: &Args) -> anyhow::Result<(Child, String)> {
    let dir = std::env::temp_dir().join(format!("puzzled-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let database = args
        .database_url
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", dir.join("jobs.db").display()));
    let mut command = Command::new(&args.server);
    command
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &database,
        ])
        // Table builds would only compete with the load; the jobs name their heuristics.
        .args(["--warm-tables", "false"])
        // One client drives the whole mixed load: the per-client request rate would
        // refuse most of it.
        .args(["--rate-limit", "0"])
        // ...and it holds up to 1,024 requests in flight, each on a connection: the
        // connection caps rise to match (every other protection stays as shipped).
        .args([
            "--max-connections",
            "2048",
            "--max-connections-per-client",
            "2048",
        ])
        .env("PUZZLED_DATA_DIR", dir.join("tables"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(workers) = args.workers {
        command.args(["--workers", &workers.to_string()]);
    }
    let mut child = command.spawn()?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| anyhow::anyhow!("no stderr"))?;
    let mut lines = BufReader::new(stderr).lines();
    let address = loop {
        let line = lines
            .next()
            .ok_or_else(|| anyhow::anyhow!("the server exited before listening"))??;
        if let Some(rest) = line.split("address=").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
        }
    };
    // Drained, or the server would block on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok((child, format!("http://{address}")))
}

fn percentile(sorted: &[u64], fraction: f64) -> f64 {
    let rank = ((sorted.len() as f64 * fraction).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1000.0
}

fn median(values: &[u64]) -> f64 {
    let mut values = values.to_vec();
    values.sort_unstable();
    values
        .get(values.len() / 2)
        .map_or(0.0, |&v| v as f64 / 1024.0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (mut server, base, pid) = match &args.url {
        Some(url) => (None, url.trim_end_matches('/').to_string(), args.pid),
        None => {
            let (child, base) = start_server(&args)?;
            let pid = child.id();
            (Some(child), base, Some(pid))
        }
    };
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    // Ready: the database answers and the workers run.
    let ready_by = Instant::now() + Duration::from_secs(30);
    while !http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        anyhow::ensure!(Instant::now() < ready_by, "{base} never became ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let load_before = load_average();
    let workload = Arc::new(Workload::new(args.job_nodes));
    let record = Arc::new(Record::default());
    let samples = Arc::new(Mutex::new(Samples::default()));
    let in_flight = Arc::new(Semaphore::new(args.max_in_flight));
    let mut rng = Rng(args.seed);
    let mut backlog = 0u64;
    let run_for = Duration::from_secs(args.seconds);
    let started = Instant::now();

    let sampler = {
        let (http, base, samples) = (http.clone(), base.clone(), samples.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                sample(&http, &base, pid, &samples).await;
            }
        })
    };
    let mut arrivals = tokio::time::interval(Duration::from_secs_f64(1.0 / args.rate));
    // Open loop: arrivals late behind a stalled timer are sent at once, not dropped.
    arrivals.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    while started.elapsed() < run_for {
        arrivals.tick().await;
        let operation = rng.operation();
        let choice = rng.below(u64::MAX);
        let Ok(permit) = in_flight.clone().try_acquire_owned() else {
            backlog += 1;
            continue;
        };
        let (http, base, workload, record) =
            (http.clone(), base.clone(), workload.clone(), record.clone());
        tokio::spawn(async move {
            run(operation, choice, &http, &base, &workload, &record).await;
            drop(permit);
        });
    }
    // The last requests get the client's timeout to finish.
    let drained = tokio::time::timeout(
        Duration::from_secs(35),
        in_flight.acquire_many(args.max_in_flight as u32),
    )
    .await;
    let drain = started.elapsed().saturating_sub(run_for).as_secs_f64();
    sampler.abort();
    let load_after = load_average();
    if let Some(server) = server.as_mut() {
        let _ = server.kill();
        let _ = server.wait();
    }

    println!(
        "{} s at {} requests/s against {base} (then {drain:.0} s for the last answers); \
         load average {load_before} before, {load_after} after",
        args.seconds, args.rate
    );
    println!("| operation | requests | per second | p50 ms | p99 ms | max ms | answers | errors |");
    println!("|---|---|---|---|---|---|---|---|");
    let tallies = lock(&record.tallies);
    let mut errors = backlog;
    for operation in Operation::ALL {
        let Some(tally) = tallies.get(&operation) else {
            continue;
        };
        let mut latencies = tally.latencies_us.clone();
        latencies.sort_unstable();
        let answers: Vec<String> = tally
            .statuses
            .iter()
            .map(|(status, n)| format!("{status}: {n}"))
            .collect();
        errors += tally.errors;
        let (p50, p99, max) = if latencies.is_empty() {
            (0.0, 0.0, 0.0)
        } else {
            (
                percentile(&latencies, 0.50),
                percentile(&latencies, 0.99),
                percentile(&latencies, 1.0),
            )
        };
        println!(
            "| {} | {} | {:.1} | {p50:.1} | {p99:.1} | {max:.1} | {} | {} |",
            operation.name(),
            latencies.len() as u64 + tally.errors,
            latencies.len() as f64 / run_for.as_secs_f64(),
            answers.join(", "),
            tally.errors
        );
    }
    let samples = lock(&samples);
    println!(
        "workers busy (every worker with a job) in {} of {} one-second samples",
        samples.busy, samples.seconds
    );
    let rss = &samples.rss_kib;
    if rss.len() >= 20 {
        println!(
            "RSS: median {:.1} MiB over the first 10 s, {:.1} MiB over the last 10 s, max {:.1} MiB",
            median(&rss[..10]),
            median(&rss[rss.len() - 10..]),
            rss.iter().max().copied().unwrap_or(0) as f64 / 1024.0
        );
        // The shape: growth that levels off is caches filling; a steady climb is a leak.
        let by_ten: Vec<String> = rss
            .chunks(10)
            .map(|chunk| format!("{:.1}", median(chunk)))
            .collect();
        println!("RSS median by 10 s, MiB: {}", by_ten.join(", "));
    }
    if drained.is_err() {
        errors += 1;
        println!("some requests were still waiting 35 s after the end");
    }
    if backlog > 0 {
        println!(
            "{backlog} requests not sent: {} already in flight",
            args.max_in_flight
        );
    }
    let examples = lock(&record.error_examples);
    println!("errors: {errors}");
    for example in examples.iter() {
        println!("  {example}");
    }
    if errors > 0 {
        std::process::exit(1);
    }
    Ok(())
}
