//! Several `puzzled` processes sharing one PostgreSQL job store: API and worker roles,
//! leases with fencing tokens, the reaper, cross-process cancellation and outages.
//! Real processes against the machine's PostgreSQL, each test on a database of its own.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Db, Server, TestStore, get, metrics_text, post};
use puzzled::jobs::store::{LeaseState, NewJob, Owner, Stage, Store};
use puzzled::jobs::{
    AlgorithmChoice, HeuristicChoice, JobLimits, JobSpec, Objective, PuzzleSpec, TableStore,
    run_job,
};
use puzzled::puzzles::sliding::{GoalSpec, SlidingPuzzle};
use puzzled::search::CancelFlag;
use serde_json::{Value, json};
use sqlx::{Connection, Executor, Row};

const KORF_88: [u64; 16] = [15, 2, 12, 11, 14, 13, 9, 5, 1, 3, 8, 7, 0, 10, 6, 4];

fn api(store: &TestStore) -> Server {
    // These tests submit hundreds of jobs from one address at once, on purpose: the
    // per-client limits on queued jobs and connections (tested in tests/limits.rs) are
    // raised to the global ones.
    Server::launch(
        store,
        &[
            "--role",
            "api",
            "--max-queued-per-client",
            "1000",
            "--max-connections",
            "1024",
            "--max-connections-per-client",
            "1024",
        ],
    )
}

/// A worker process with `threads` search threads and leases of `lease_ms`.
fn worker(store: &TestStore, threads: &str, lease_ms: &str) -> Server {
    Server::launch(
        store,
        &[
            "--role",
            "worker",
            "--workers",
            threads,
            "--lease-ms",
            lease_ms,
        ],
    )
}

/// A 15-puzzle search of `max_nodes` with Manhattan distance (seconds in a debug build).
fn long_job(max_nodes: u64) -> Value {
    json!({"puzzle": {"type": "sliding", "tiles": KORF_88, "goal": "blank-first"},
           "algorithm": "ida-star", "heuristic": "manhattan", "limits": {"max_nodes": max_nodes}})
}

fn small_job(i: usize) -> Value {
    let boards = [
        [8, 6, 7, 2, 5, 4, 3, 0, 1],
        [4, 1, 3, 7, 2, 6, 0, 5, 8],
        [1, 2, 3, 4, 5, 6, 7, 0, 8],
    ];
    json!({"puzzle": {"type": "sliding", "tiles": boards[i % boards.len()]}})
}

async fn submit(server: &Server, body: Value) -> String {
    let (status, job, _) = post(server, "/v1/jobs", body).await;
    assert_eq!(status, 202, "{job}");
    job["id"].as_str().expect("id").to_string()
}

/// Rows of the jobs table, read straight from the database.
async fn jobs_table(store: &TestStore) -> Vec<(String, String, i64, i64, Option<String>)> {
    let mut connection = sqlx::PgConnection::connect(&store.url)
        .await
        .expect("connect");
    connection
        .fetch_all("SELECT id, status, attempts, lease_token, worker FROM jobs")
        .await
        .expect("jobs")
        .iter()
        .map(|row| {
            (
                row.get("id"),
                row.get("status"),
                row.get("attempts"),
                row.get("lease_token"),
                row.get("worker"),
            )
        })
        .collect()
}

/// Waits (up to `limit`) until no job is queued or running; returns the jobs.
async fn until_all_finished(
    store: &TestStore,
    limit: Duration,
) -> Vec<(String, String, i64, i64, Option<String>)> {
    let deadline = Instant::now() + limit;
    let mut changes = tokio::time::interval(Duration::from_millis(200));
    loop {
        let jobs = jobs_table(store).await;
        let open = jobs
            .iter()
            .filter(|j| j.1 == "queued" || j.1 == "running")
            .count();
        if open == 0 {
            return jobs;
        }
        assert!(
            Instant::now() < deadline,
            "{open} jobs still open after {limit:?}"
        );
        changes.tick().await;
    }
}

#[tokio::test]
async fn a_killed_worker_loses_no_job_and_its_jobs_run_again_elsewhere() {
    let store = Db::Postgres.fresh("scale_kill").await;
    let front = api(&store);
    // Short leases, so the dead worker's jobs come back soon.
    let mut doomed = worker(&store, "2", "2000");
    let survivor = worker(&store, "2", "2000");
    let doomed_prefix = format!("{}-", doomed.child.id());
    // Long jobs first, so each worker is busy with some when the doomed one dies.
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(submit(&front, long_job(3_000_000)).await);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut poll = tokio::time::interval(Duration::from_millis(50));
    let held = loop {
        let held: Vec<String> = jobs_table(&store)
            .await
            .into_iter()
            .filter(|j| {
                j.1 == "running"
                    && j.4
                        .as_deref()
                        .is_some_and(|w| w.starts_with(&doomed_prefix))
            })
            .map(|j| j.0)
            .collect();
        if !held.is_empty() {
            break held;
        }
        assert!(
            Instant::now() < deadline,
            "the doomed worker never ran a job"
        );
        poll.tick().await;
    };
    doomed.child.kill().expect("SIGKILL");
    doomed.child.wait().expect("reaped");
    for i in 0..196 {
        ids.push(submit(&front, small_job(i)).await);
    }
    let jobs = until_all_finished(&store, Duration::from_secs(240)).await;
    assert_eq!(jobs.len(), 200);
    let by_id: HashMap<_, _> = jobs.iter().map(|j| (j.0.clone(), j)).collect();
    let mut rerun = Vec::new();
    for id in &ids {
        let job = by_id[id];
        assert!(
            job.1 == "solved" || job.1 == "exhausted",
            "job {id} ended {}",
            job.1
        );
        match job.2 {
            1 => {}
            // Recovered from the dead worker, and finished by the survivor.
            2 => {
                assert!(
                    !job.4
                        .as_deref()
                        .is_some_and(|w| w.starts_with(&doomed_prefix))
                );
                rerun.push(id.clone());
            }
            attempts => panic!("job {id} ran {attempts} times"),
        }
    }
    // The jobs the dead worker held ran again elsewhere; nothing else ran twice.
    for id in &held {
        assert!(
            rerun.contains(id),
            "{id} was held by the dead worker but not rerun"
        );
    }
    let (_, recovered) = get(&front, &format!("/v1/jobs/{}", held[0])).await;
    assert_eq!(recovered["attempts"], 2);
    // The survivor's reaper counted exactly those recoveries.
    let metrics = metrics_text(&survivor).await;
    assert!(
        metrics.contains(&format!(
            "puzzled_jobs_recovered_total{{outcome=\"requeued\"}} {}",
            rerun.len()
        )),
        "{} rerun; {metrics}",
        rerun.len()
    );
}

#[tokio::test]
async fn four_workers_racing_run_each_job_exactly_once() {
    let store = Db::Postgres.fresh("scale_race").await;
    let front = api(&store);
    let workers: Vec<Server> = (0..4).map(|_| worker(&store, "1", "10000")).collect();
    let submissions = (0..500).map(|i| {
        let front = &front;
        async move { submit(front, small_job(i)).await }
    });
    futures_util::future::join_all(submissions).await;
    let jobs = until_all_finished(&store, Duration::from_secs(240)).await;
    assert_eq!(jobs.len(), 500);
    for (id, status, attempts, lease_token, _) in &jobs {
        assert_eq!(status, "solved", "{id}");
        // One claim each: the claim is the only writer of both counters.
        assert_eq!(
            (*attempts, *lease_token),
            (1, 1),
            "{id} was claimed more than once"
        );
    }
    let claimers: std::collections::HashSet<_> = jobs.iter().filter_map(|j| j.4.clone()).collect();
    assert!(claimers.len() > 1, "the work was shared: {claimers:?}");
    drop(workers);
}

#[tokio::test]
async fn a_cancel_through_one_api_process_stops_the_search_on_another_worker() {
    let store = Db::Postgres.fresh("scale_cancel").await;
    let first_api = api(&store);
    let second_api = api(&store);
    let _worker = worker(&store, "1", "10000");
    let id = submit(&first_api, long_job(100_000_000)).await;
    // The other API process streams the job's events, fed by the worker's notices.
    let (mut stream, mut seen) = common::stream_until_progress(&second_api, &id).await;
    let started = Instant::now();
    let (status, cancelled, _) =
        post(&first_api, &format!("/v1/jobs/{id}/cancel"), json!({})).await;
    assert_eq!(status, 202);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(started.elapsed() < Duration::from_secs(1));
    while let Some(chunk) = stream.chunk().await.expect("chunk") {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("event: finished"), "{seen}");
    let (_, job) = get(&second_api, &format!("/v1/jobs/{id}")).await;
    assert_eq!(
        (job["status"].as_str(), job["attempts"].as_i64()),
        (Some("cancelled"), Some(1))
    );
}

/// A job spec to store directly, and its real search report.
fn spec() -> JobSpec {
    let puzzle = SlidingPuzzle::new(&[8, 6, 7, 2, 5, 4, 3, 0, 1], None, &GoalSpec::BlankLast)
        .expect("board");
    JobSpec {
        puzzle: PuzzleSpec::Sliding(puzzle),
        algorithm: AlgorithmChoice::Auto,
        heuristic: HeuristicChoice::Auto,
        objective: Objective::Optimal,
        weight: None,
        limits: JobLimits::default(),
        include_boards: false,
    }
}

/// A queued job of [`spec`] from nobody in particular.
fn new_job() -> NewJob {
    NewJob {
        spec: spec(),
        priority: 0,
        idempotency_key: None,
        request_hash: None,
        client: None,
        owner: Owner::Anyone,
    }
}

async fn a_stalled_worker_whose_lease_was_taken_over_cannot_write(db: Db) {
    let test = db.fresh("scale_fence").await;
    let store = Store::open(&test.url).await.expect("store");
    let (job, _) = store.insert(new_job()).await.expect("insert");
    // The stalled worker's lease is already over when it is granted.
    let stalled = store
        .claim("stalled", Duration::ZERO)
        .await
        .expect("claim")
        .expect("a job");
    let tables = Arc::new(TableStore::new(None));
    let report = run_job(&stalled.spec, &tables, CancelFlag::new(), None).expect("runs");
    let (requeued, failed) = store
        .reap(puzzled::jobs::store::now_ms() + 1, 3)
        .await
        .expect("reap");
    assert_eq!((requeued, failed), (1, 0));
    let fresh = store
        .claim("fresh", Duration::from_secs(60))
        .await
        .expect("claim")
        .expect("the requeued job");
    assert_eq!(fresh.id, job.id);
    assert_eq!(
        (fresh.attempts, fresh.lease_token),
        (2, stalled.lease_token + 1)
    );
    // The stalled worker wakes up: its heartbeat and its result are refused.
    assert_eq!(
        store
            .heartbeat(&job.id, stalled.lease_token, Duration::from_secs(60), None)
            .await
            .expect("heartbeat"),
        LeaseState::Lost
    );
    assert!(
        !store
            .finish(&job.id, stalled.lease_token, &report)
            .await
            .expect("finish")
    );
    assert_eq!(
        store.get(&job.id).await.expect("get").expect("job").stage,
        Stage::Running
    );
    // The holder's result is the one that counts.
    assert!(
        store
            .finish(&job.id, fresh.lease_token, &report)
            .await
            .expect("finish")
    );
    let done = store.get(&job.id).await.expect("get").expect("job");
    assert_eq!(done.stage, Stage::Finished(report.status.clone()));
    assert_eq!(done.result.and_then(|r| r.length), Some(31));
}

/// Jobs inserted back to back (many within one millisecond) are claimed in the order
/// they arrived, not in the order of their random ids.
async fn jobs_of_one_millisecond_run_in_arrival_order(db: Db) {
    let test = db.fresh("scale_arrival").await;
    let store = Store::open(&test.url).await.expect("store");
    let mut inserted = Vec::new();
    for _ in 0..40 {
        let (job, _) = store.insert(new_job()).await.expect("insert");
        inserted.push(job.id);
    }
    let mut claimed = Vec::new();
    while let Some(job) = store
        .claim("worker", Duration::from_secs(60))
        .await
        .expect("claim")
    {
        claimed.push(job.id);
    }
    assert_eq!(claimed, inserted);
}

common::on_both_stores!(
    a_stalled_worker_whose_lease_was_taken_over_cannot_write,
    jobs_of_one_millisecond_run_in_arrival_order,
);

#[tokio::test]
async fn a_database_outage_makes_the_service_unready_and_loses_nothing() {
    let store = Db::Postgres.fresh("scale_outage").await;
    let server = Server::launch(&store, &["--lease-ms", "1000"]);
    let admin = common::postgres_admin_url();
    let database = store.url.rsplit('/').next().expect("name").to_string();
    let mut connection = sqlx::PgConnection::connect(&admin).await.expect("admin");
    let id = submit(&server, long_job(3_000_000)).await;
    // Cut the service off: no new connections, and the open ones closed.
    connection
        .execute(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE {database} ALLOW_CONNECTIONS false"
        )))
        .await
        .expect("limit");
    connection
        .execute(sqlx::AssertSqlSafe(format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'"
        )))
        .await
        .expect("terminate");
    let deadline = Instant::now() + Duration::from_secs(30);
    common::until_readyz(&server, 503, deadline).await;
    // Requests answer 503 with a problem, never 500.
    let (status, problem) = get(&server, &format!("/v1/jobs/{id}")).await;
    assert_eq!(status, 503, "{problem}");
    connection
        .execute(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE {database} ALLOW_CONNECTIONS true"
        )))
        .await
        .expect("unlimit");
    common::until_readyz(&server, 200, deadline).await;
    let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=60")).await;
    assert_eq!(
        (done["status"].as_str(), done["reason"].as_str()),
        (Some("exhausted"), Some("node_limit")),
        "{done}"
    );
    // Nothing was lost: the job and a new one both finish.
    let (status, after, _) = post(&server, "/v1/solve", small_job(0)).await;
    assert_eq!((status, after["status"].as_str()), (200, Some("solved")));
}
