//! Faults injected into the real service, on SQLite and on PostgreSQL: SIGKILL of the
//! server (and of a worker process) at random moments of a 500-job run, the job database
//! unavailable for a while, and what comes back afterwards; and SIGTERM with clients
//! that never finish their requests. Randomness is seeded
//! (`PUZZLED_FAULT_SEED`, default 7) so a failure reproduces; every wait polls against a
//! deadline. `cargo test --test faults -- --nocapture` prints each run's figures.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Db, Server, TestStore, client, conforming, get, post};
use puzzled::http::wire::{ValidateAnswer, ValidateRequest};
use serde_json::{Value, json};
use sqlx::{AnyPool, Connection, Executor, Row};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

const JOBS: usize = 500;
const KILLS: usize = 5;
const KORF_88: [u64; 16] = [15, 2, 12, 11, 14, 13, 9, 5, 1, 3, 8, 7, 0, 10, 6, 4];

/// SplitMix64: small enough to carry, so a run is fixed by its seed.
struct Rng(u64);

impl Rng {
    fn seeded() -> (Rng, u64) {
        let seed = std::env::var("PUZZLED_FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(7);
        (Rng(seed), seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// An 8-puzzle scrambled by a random walk from the goal (so solvable), or, one job in
/// five, a tiny Sokoban level: each a few milliseconds of search even in a debug build.
fn small_job(rng: &mut Rng, i: usize) -> Value {
    const LEVELS: [&str; 2] = [
        "####|# .#|#  ###|#*@  #|#  $ #|#  ###|####",
        "#######|#.  $@#|#######",
    ];
    if i % 5 == 4 {
        let level = LEVELS[rng.below(LEVELS.len() as u64) as usize];
        return json!({"puzzle": {"type": "sokoban", "level": level}});
    }
    let mut tiles = [1, 2, 3, 4, 5, 6, 7, 8, 0];
    let mut blank = 8;
    for _ in 0..20 + rng.below(20) {
        let (row, col) = (blank / 3, blank % 3);
        let mut neighbours = Vec::with_capacity(4);
        if row > 0 {
            neighbours.push(blank - 3);
        }
        if row < 2 {
            neighbours.push(blank + 3);
        }
        if col > 0 {
            neighbours.push(blank - 1);
        }
        if col < 2 {
            neighbours.push(blank + 1);
        }
        let next = neighbours[rng.below(neighbours.len() as u64) as usize];
        tiles.swap(blank, next);
        blank = next;
    }
    json!({"puzzle": {"type": "sliding", "tiles": tiles}})
}

/// A 15-puzzle search capped at `max_nodes` (seconds in a debug build at 3 M).
fn long_job(max_nodes: u64) -> Value {
    json!({"puzzle": {"type": "sliding", "tiles": KORF_88, "goal": "blank-first"},
           "algorithm": "ida-star", "heuristic": "manhattan", "limits": {"max_nodes": max_nodes}})
}

async fn pool(store: &TestStore) -> AnyPool {
    sqlx::any::install_default_drivers();
    AnyPool::connect(&store.url).await.expect("the job store")
}

/// Jobs in the store, and those not yet terminal, read straight from the database (the
/// server may be down).
async fn job_counts(db: &AnyPool) -> (usize, usize) {
    let row = sqlx::query(
        "SELECT COUNT(*) AS total, \
         COALESCE(SUM(CASE WHEN status IN ('queued', 'running') THEN 1 ELSE 0 END), 0) AS open FROM jobs",
    )
    .fetch_one(db)
    .await
    .expect("count");
    (
        row.get::<i64, _>("total") as usize,
        row.get::<i64, _>("open") as usize,
    )
}

/// What the database says of each job at the end.
struct JobRow {
    id: String,
    key: Option<String>,
    status: String,
    attempts: i64,
    finishes: i64,
    error: Option<String>,
}

async fn all_jobs(db: &AnyPool) -> Vec<JobRow> {
    sqlx::query("SELECT id, idempotency_key, status, attempts, finishes, error FROM jobs")
        .fetch_all(db)
        .await
        .expect("jobs")
        .iter()
        .map(|row| JobRow {
            id: row.get("id"),
            key: row.get("idempotency_key"),
            status: row.get("status"),
            attempts: row.get("attempts"),
            finishes: row.get("finishes"),
            error: row.get("error"),
        })
        .collect()
}

/// The processes of a run: the API with its workers and, on PostgreSQL, a worker-only
/// process beside it. Clients follow the API's address through `api_base`.
struct Fleet {
    store: TestStore,
    api: Server,
    worker: Option<Server>,
    api_base: watch::Sender<String>,
}

/// Short leases, so a killed worker's jobs come back within a second or two; the
/// per-client queue limit raised, since one test client submits everything.
const API_FLAGS: [&str; 4] = ["--lease-ms", "1000", "--max-queued-per-client", "1000"];
const WORKER_FLAGS: [&str; 6] = ["--role", "worker", "--workers", "1", "--lease-ms", "1000"];

impl Fleet {
    fn start(db: Db, store: &TestStore) -> Fleet {
        let api = Server::launch(store, &API_FLAGS);
        let worker = (db == Db::Postgres).then(|| Server::launch(store, &WORKER_FLAGS));
        let (api_base, _) = watch::channel(api.base.clone());
        Fleet {
            store: store.clone(),
            api,
            worker,
            api_base,
        }
    }

    /// SIGKILL to the `n`th victim (on PostgreSQL the API and the worker process take
    /// turns), then a fresh process on the same store. Returns which was killed.
    fn kill_and_restart(&mut self, n: usize) -> &'static str {
        let (victim, flags, name) = match &mut self.worker {
            Some(worker) if n % 2 == 1 => (worker, &WORKER_FLAGS[..], "worker"),
            _ => (&mut self.api, &API_FLAGS[..], "api"),
        };
        victim.child.kill().expect("SIGKILL");
        victim.child.wait().expect("reaped");
        *victim = Server::launch(&self.store, flags);
        if name == "api" {
            self.api_base.send_replace(self.api.base.clone());
        }
        name
    }
}

/// Posts `body` under `key` until the API accepts it. A request the server died under
/// may or may not have made the job: the retry, with the same key, answers with it if
/// it did. Returns the job's id and how many sends failed.
async fn submit_until_accepted(
    mut api_base: watch::Receiver<String>,
    key: &str,
    body: &Value,
    deadline: Instant,
) -> (String, u64) {
    let http = client();
    let mut failed_sends = 0;
    loop {
        let base = api_base.borrow_and_update().clone();
        let sent = http
            .post(format!("{base}/v1/jobs"))
            .header("idempotency-key", key)
            .json(body)
            .send()
            .await;
        let answered = match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                response.bytes().await.map(|bytes| (status, bytes))
            }
            Err(error) => Err(error),
        };
        match answered {
            Ok((status, bytes)) => {
                let job: Value = serde_json::from_slice(&bytes).expect("JSON");
                common::Contract::get().check("post", "/v1/jobs", status, "application/json", &job);
                assert_eq!(status, 202, "{job}");
                return (job["id"].as_str().expect("id").to_string(), failed_sends);
            }
            Err(_) => {
                failed_sends += 1;
                // The server is gone: wait for its successor (at once if it is up already).
                tokio::time::timeout_at(deadline.into(), api_base.changed())
                    .await
                    .expect("the API came back")
                    .expect("the test still runs");
            }
        }
    }
}

/// SIGKILLs at `KILLS` random moments of a `JOBS`-job run, each followed by a restart,
/// while a client submits with idempotency keys and retries what the kills interrupted.
async fn every_accepted_job_ends_once_whatever_is_killed_when(db: Db) {
    let store = db.fresh("faults_kill").await;
    let (mut rng, seed) = Rng::seeded();
    let bodies: Vec<(String, Value)> = (0..JOBS)
        .map(|i| (format!("kill-{seed}-{i}"), small_job(&mut rng, i)))
        .collect();
    // Kill moments as points of progress (jobs accepted + jobs ended, 0..=2 JOBS), so
    // the same seed kills at the same stage of the run however fast the machine is.
    let mut kill_points: Vec<usize> = (0..KILLS)
        .map(|_| JOBS / 10 + rng.below((JOBS * 18 / 10) as u64) as usize)
        .collect();
    kill_points.sort_unstable();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(150);
    let mut fleet = Fleet::start(db, &store);
    let database = pool(&store).await;

    let accepted = Arc::new(AtomicU64::new(0));
    let next = Arc::new(AtomicU64::new(0));
    let bodies = Arc::new(bodies);
    let submitters: Vec<_> = (0..8)
        .map(|_| {
            let (accepted, next, bodies) = (accepted.clone(), next.clone(), bodies.clone());
            let api_base = fleet.api_base.subscribe();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some((key, body)) = bodies.get(i) else {
                        return answers;
                    };
                    let (id, failed_sends) =
                        submit_until_accepted(api_base.clone(), key, body, deadline).await;
                    accepted.fetch_add(1, Ordering::Relaxed);
                    answers.push((i, id, failed_sends));
                }
            })
        })
        .collect();

    let mut killed = Vec::new();
    let mut poll = tokio::time::interval(Duration::from_millis(10));
    loop {
        let accepted = accepted.load(Ordering::Relaxed) as usize;
        let (total, open) = job_counts(&database).await;
        let progress = accepted + total - open;
        if killed.len() < KILLS && progress >= kill_points[killed.len()] {
            killed.push(fleet.kill_and_restart(killed.len()));
            continue;
        }
        if killed.len() == KILLS && accepted == JOBS && open == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "seed {seed}: {accepted} accepted, {open} open, {} kills of {KILLS} after {:?}",
            killed.len(),
            started.elapsed()
        );
        poll.tick().await;
    }
    let mut answers = Vec::new();
    for submitter in submitters {
        answers.extend(submitter.await.expect("submitter"));
    }
    let elapsed = started.elapsed();

    // Exactly the jobs asked for: one row per key, and the id every answer gave.
    let rows = all_jobs(&database).await;
    let by_key: HashMap<&str, &JobRow> = rows
        .iter()
        .map(|row| (row.key.as_deref().expect("every job has a key"), row))
        .collect();
    assert_eq!(rows.len(), JOBS, "seed {seed}: duplicated or stray jobs");
    assert_eq!(by_key.len(), JOBS, "seed {seed}: a key made two jobs");
    let mut ids = HashSet::new();
    for (i, id, _) in &answers {
        let row = by_key[bodies[*i].0.as_str()];
        assert_eq!(
            &row.id, id,
            "seed {seed}: a retry answered with another job"
        );
        assert!(ids.insert(id.clone()), "seed {seed}: two keys, one job");
    }
    assert_eq!(ids.len(), JOBS, "seed {seed}: every job was accepted");
    // Each ended once: solved, or failed after too many interrupted attempts.
    let mut interrupted_out = 0;
    for row in &rows {
        assert_eq!(
            row.finishes, 1,
            "seed {seed}: job {} ended {} times",
            row.id, row.finishes
        );
        match row.status.as_str() {
            "solved" => {}
            "failed" if row.error.as_deref() == Some("the job was interrupted too many times") => {
                interrupted_out += 1
            }
            other => panic!(
                "seed {seed}: job {} ended {other} ({:?})",
                row.id, row.error
            ),
        }
    }
    // Every plan replays on the board this client sent, as the service reports it.
    for (i, id, _) in &answers {
        let (status, job) = get(&fleet.api, &format!("/v1/jobs/{id}")).await;
        assert_eq!(status, 200);
        if job["status"] != "solved" {
            continue;
        }
        let plan = job["result"]["plan"].clone();
        let request: ValidateRequest =
            serde_json::from_value(json!({"puzzle": bodies[*i].1["puzzle"], "plan": plan}))
                .expect("a validate request");
        let ValidateAnswer::Plan(replay) = request.check().expect("the puzzle parses") else {
            panic!("a plan's verdict");
        };
        assert!(
            replay.legal && replay.solved,
            "seed {seed}: job {id}'s plan {plan}"
        );
        assert_eq!(Some(replay.length as u64), job["result"]["length"].as_u64());
    }
    let failed_sends: u64 = answers.iter().map(|a| a.2).sum();
    let reruns = rows.iter().filter(|row| row.attempts > 1).count();
    eprintln!(
        "faults {db:?} seed {seed}: kills {killed:?} at progress {kill_points:?}; {JOBS} accepted, \
         {} terminal, 0 lost, 0 duplicated; {failed_sends} sends retried; {reruns} jobs rerun; \
         {interrupted_out} failed after 3 interruptions; {elapsed:.1?}",
        rows.len()
    );
}

/// A TCP proxy in front of PostgreSQL that the test can cut (open connections dropped,
/// new ones refused) and restore on the same port.
struct Proxy {
    port: u16,
    upstream: String,
    serving: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("address").port();
        let serving = Some(tokio::spawn(forward(listener, upstream.clone())));
        Proxy {
            port,
            upstream,
            serving,
        }
    }

    /// Aborting the task drops the listener (new connections are refused) and every
    /// forwarding task with it (open connections close).
    fn cut(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.abort();
        }
    }

    async fn restore(&mut self) {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .expect("the proxy's port again");
        self.serving = Some(tokio::spawn(forward(listener, self.upstream.clone())));
    }
}

async fn forward(listener: tokio::net::TcpListener, upstream: String) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((mut client, _)) = accepted else { continue };
                let upstream = upstream.clone();
                connections.spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
            Some(_) = connections.join_next() => {}
        }
    }
}

/// Takes the job database away from the server and gives it back.
enum Outage {
    /// PostgreSQL: the server connects through a [`Proxy`].
    Postgres(Proxy),
    /// SQLite: another connection takes the write lock (`BEGIN EXCLUSIVE`), as a shell or
    /// a maintenance script might; reads go on beside it, writes cannot.
    Sqlite {
        url: String,
        holder: Option<sqlx::SqliteConnection>,
    },
}

impl Outage {
    /// The outage-to-be, and the store the server should be given.
    async fn prepare(db: Db, store: &TestStore) -> (Outage, TestStore) {
        match db {
            Db::Sqlite => (
                Outage::Sqlite {
                    url: store.url.clone(),
                    holder: None,
                },
                store.clone(),
            ),
            Db::Postgres => {
                // postgres://user@host:port/database: the host and port go through the proxy.
                let (scheme, rest) = store.url.split_once("://").expect("a URL");
                let (authority, database) = rest.split_once('/').expect("a database");
                let (user, upstream) = match authority.rsplit_once('@') {
                    Some((user, host)) => (format!("{user}@"), host),
                    None => (String::new(), authority),
                };
                let proxy = Proxy::start(upstream.to_string()).await;
                let url = format!("{scheme}://{user}127.0.0.1:{}/{database}", proxy.port);
                let through = TestStore {
                    url,
                    dir: store.dir.clone(),
                };
                (Outage::Postgres(proxy), through)
            }
        }
    }

    async fn begin(&mut self) {
        match self {
            Outage::Postgres(proxy) => proxy.cut(),
            Outage::Sqlite { url, holder } => {
                let mut connection = sqlx::SqliteConnection::connect(url).await.expect("connect");
                connection
                    .execute("BEGIN EXCLUSIVE")
                    .await
                    .expect("the write lock");
                *holder = Some(connection);
            }
        }
    }

    async fn end(&mut self) {
        match self {
            Outage::Postgres(proxy) => proxy.restore().await,
            Outage::Sqlite { holder, .. } => {
                let mut connection = holder.take().expect("an outage to end");
                connection.execute("ROLLBACK").await.expect("rollback");
            }
        }
    }
}

/// How long an answer may take while the database is away: the time the store gives a
/// connection or a lock before it reports failure, and some slack for a loaded machine.
const UNAVAILABLE_ANSWER_BOUND: Duration = Duration::from_secs(8);

async fn the_database_away_for_a_while_means_503_then_recovery(db: Db) {
    let store = db.fresh("faults_outage").await;
    let (mut outage, reached_through) = Outage::prepare(db, &store).await;
    let server = Server::launch(&reached_through, &["--lease-ms", "2000"]);
    // Accepted before the outage: a search that runs across it.
    let (status, job, _) = post(&server, "/v1/jobs", long_job(20_000_000)).await;
    assert_eq!(status, 202);
    let running = job["id"].as_str().expect("id").to_string();
    let _ = common::stream_until_progress(&server, &running).await;

    outage.begin().await;
    let deadline = Instant::now() + Duration::from_secs(60);
    common::until_readyz(&server, 503, deadline).await;
    let mut rng = Rng(1);
    let mut unavailable = vec![
        ("post", "/v1/jobs".to_string(), Some(small_job(&mut rng, 0))),
        (
            "post",
            "/v1/solve".to_string(),
            Some(small_job(&mut rng, 1)),
        ),
        ("post", format!("/v1/jobs/{running}/cancel"), None),
    ];
    if db == Db::Postgres {
        unavailable.push(("get", format!("/v1/jobs/{running}"), None));
        unavailable.push(("get", "/v1/jobs".to_string(), None));
    }
    for (method, path, body) in &unavailable {
        let asked = Instant::now();
        let request = match body {
            Some(body) => client().post(server.url(path)).json(body),
            None if *method == "post" => client().post(server.url(path)),
            None => client().get(server.url(path)),
        };
        let response = request.send().await.expect("an answer");
        let retry_after = response.headers().get("retry-after").cloned();
        let (status, problem) = conforming(method, path, response).await;
        let took = asked.elapsed();
        eprintln!(
            "faults {db:?}: {method} {path} answered {status} in {took:.1?} while the database was away"
        );
        assert_eq!(status, 503, "{method} {path}: {problem}");
        assert!(retry_after.is_some(), "{method} {path} says when to retry");
        assert!(
            took < UNAVAILABLE_ANSWER_BOUND,
            "{method} {path} took {took:?}"
        );
    }
    if db == Db::Sqlite {
        // A write lock stops writers only: the job still reads.
        let (status, job) = get(&server, &format!("/v1/jobs/{running}")).await;
        assert_eq!(status, 200, "{job}");
    }

    outage.end().await;
    common::until_readyz(&server, 200, deadline).await;
    // Everything accepted before ends, and new work is taken again.
    let (_, done) = get(&server, &format!("/v1/jobs/{running}?wait=60")).await;
    assert_eq!(
        (done["status"].as_str(), done["reason"].as_str()),
        (Some("exhausted"), Some("node_limit")),
        "{done}"
    );
    let (status, solved, _) = post(&server, "/v1/solve", small_job(&mut rng, 2)).await;
    assert_eq!(
        (status, solved["status"].as_str()),
        (200, Some("solved")),
        "{solved}"
    );
    let (status, queued, _) = post(&server, "/v1/jobs", small_job(&mut rng, 3)).await;
    assert_eq!(status, 202);
    let id = queued["id"].as_str().expect("id");
    let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
    assert_eq!(done["status"], "solved", "{done}");
    let database = pool(&store).await;
    for row in all_jobs(&database).await {
        assert_eq!(
            row.finishes, 1,
            "job {} ended {} times",
            row.id, row.finishes
        );
    }
}

/// Every fault test runs on both job stores, each on a database of its own.
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                super::$test(super::Db::Sqlite).await
            })*
        }
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                super::$test(super::Db::Postgres).await
            })*
        }
    };
}

on_both_stores!(
    every_accepted_job_ends_once_whatever_is_killed_when,
    the_database_away_for_a_while_means_503_then_recovery,
);

/// Clients that sent half a request, or a request whose body never comes, do not hold
/// the process past the grace period: SIGTERM ends it within the grace period and a
/// second whatever they do. The store plays no part, so SQLite alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_do_not_hold_sigterm_past_the_grace_period() {
    let grace = Duration::from_millis(2000);
    let mut server = Server::launch(
        &Db::Sqlite.fresh("faults_stray").await,
        &["--shutdown-grace-ms", "2000"],
    );
    let address = server.base.trim_start_matches("http://").to_string();
    // Half a request line (the header timeout is 10 s, the body timeout 30 s).
    let mut half_header = TcpStream::connect(&address).await.expect("connect");
    half_header.write_all(b"GET /heal").await.expect("send");
    let mut half_body = TcpStream::connect(&address).await.expect("connect");
    half_body
        .write_all(b"POST /v1/solve HTTP/1.1\r\nHost: puzzled\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        .await
        .expect("send");
    // Connections are accepted in order: an answer on a later one means both are open in
    // the server.
    let ready = client()
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(ready.status().as_u16(), 200);

    let (exit, took) =
        common::sigterm_until_exit(&mut server, grace + Duration::from_secs(10)).await;
    eprintln!("faults: SIGTERM with two half-sent requests: exited after {took:.2?}");
    assert!(exit.success(), "a clean stop: {exit:?}");
    assert!(took < grace + Duration::from_secs(1), "{took:?}");
    for stray in [&mut half_header, &mut half_body] {
        let mut buffer = [0; 1024];
        let read = tokio::time::timeout(Duration::from_secs(1), stray.read(&mut buffer)).await;
        assert!(
            matches!(read, Ok(Ok(0) | Err(_))),
            "the stray connection is closed: {read:?}"
        );
    }
}
