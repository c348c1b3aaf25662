//! The limits that keep one request or one client from taking the machine: each one,
//! exceeded, answers its own 4xx (or ends the job `exhausted`), as README's table says.

mod common;

use common::{Db, Server, client, get, post};
use serde_json::{Value, json};

/// Korf #88: far more than a few thousand nodes for IDA* with Manhattan distance.
fn hard_job() -> Value {
    json!({"puzzle": {"type": "sliding", "tiles": [15, 2, 12, 11, 14, 13, 9, 5, 1, 3, 8, 7, 0, 10, 6, 4], "goal": "blank-first"}, "algorithm": "ida-star", "heuristic": "manhattan"})
}

/// A level of `rows` rows of `width` squares inside its walls, in run-length XSB, with
/// the player top left and `boxes` boxes on goals after it.
fn big_level(rows: usize, width: usize, boxes: usize) -> String {
    let wall = format!("{}#", width + 2);
    let mut text = vec![wall.clone()];
    let mut left = boxes;
    for row in 0..rows {
        let on_row = left.min(width - 1);
        left -= on_row;
        let player = if row == 0 { "@" } else { "-" };
        let floor = width - 1 - on_row;
        let mut line = format!("#{player}");
        if on_row > 0 {
            line.push_str(&format!("{on_row}*"));
        }
        if floor > 0 {
            line.push_str(&format!("{floor}-"));
        }
        line.push('#');
        text.push(line);
    }
    text.push(wall);
    text.join("|")
}

/// Posts `body` and checks the answer is the problem `kind` with `status`, naming
/// `pointer` and saying `detail`.
async fn refused(
    server: &Server,
    path: &str,
    body: Value,
    (status, kind, pointer, detail): (u16, &str, &str, &str),
) {
    let (got, problem, _) = post(server, path, body).await;
    assert_eq!(got, status, "{problem}");
    assert!(
        problem["type"].as_str().is_some_and(|t| t.ends_with(kind)),
        "{problem}"
    );
    assert_eq!(problem["pointer"], pointer, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains(detail)),
        "{problem}"
    );
}

#[tokio::test]
async fn each_request_cap_answers_a_problem_naming_it() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_caps").await,
        &[
            "--max-board-cells",
            "9",
            "--max-nodes",
            "1000",
            "--max-timeout-ms",
            "500",
        ],
    );
    let sliding = |tiles: Vec<u64>, limits: Value| json!({"puzzle": {"type": "sliding", "tiles": tiles}, "limits": limits});
    let cases = [
        (
            sliding((0..16).collect(), json!({})),
            (
                422,
                "invalid-request",
                "/puzzle/tiles",
                "board size 16 is over this service's cap of 9",
            ),
        ),
        (
            sliding((0..81).collect(), json!({})),
            (
                422,
                "invalid-request",
                "/puzzle/tiles",
                "a 9x9 board is outside the supported sizes",
            ),
        ),
        (
            sliding(vec![1, 2, 3, 0], json!({"max_nodes": 1001})),
            (
                422,
                "invalid-request",
                "/limits/max_nodes",
                "max_nodes 1001 is over this service's cap of 1000",
            ),
        ),
        (
            sliding(vec![1, 2, 3, 0], json!({"timeout_ms": 501})),
            (
                422,
                "invalid-request",
                "/limits/timeout_ms",
                "timeout_ms 501 is over this service's cap of 500",
            ),
        ),
        (
            json!({"puzzle": {"type": "sokoban", "level": big_level(20, 40, 501)}}),
            (
                422,
                "invalid-request",
                "/puzzle/level",
                "501 boxes are over the limit of 500",
            ),
        ),
        (
            json!({"puzzle": {"type": "sokoban", "level": big_level(3, 100, 1)}}),
            (
                422,
                "invalid-request",
                "/puzzle/level",
                "over the limit of 100x100",
            ),
        ),
    ];
    for (body, expected) in cases {
        for path in ["/v1/jobs", "/v1/solve"] {
            refused(&server, path, body.clone(), expected).await;
        }
    }
    // Within the caps the same board is accepted.
    let (status, job, _) = post(&server, "/v1/solve", sliding(vec![1, 2, 3, 0], json!({}))).await;
    assert_eq!((status, job["status"].as_str()), (200, Some("solved")));

    // A board per step of a long plan on a large level would be a huge answer.
    let level = big_level(60, 90, 1);
    let plan = "du".repeat(200);
    refused(
        &server,
        "/v1/validate",
        json!({"puzzle": {"type": "sokoban", "level": level}, "plan": plan, "include_boards": true}),
        (422, "invalid-request", "/include_boards", "plan length with include_boards on this board 400"),
    )
    .await;
    let (status, verdict, _) = post(
        &server,
        "/v1/validate",
        json!({"puzzle": {"type": "sokoban", "level": level}, "plan": plan}),
    )
    .await;
    assert_eq!((status, verdict["legal"].as_bool()), (200, Some(true)));
}

#[tokio::test]
async fn a_body_over_the_cap_is_413() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_body").await,
        &["--max-body-bytes", "2048"],
    );
    let level = big_level(40, 40, 1);
    assert!(level.len() < 2048, "the level alone fits");
    let padding = " ".repeat(2048);
    for path in ["/v1/jobs", "/v1/solve", "/v1/validate"] {
        let response = client()
            .post(server.url(path))
            .header("content-type", "application/json")
            .body(format!(
                r#"{{"puzzle": {{"type": "sokoban", "level": "{level}"}}, "plan": ""}}{padding}"#
            ))
            .send()
            .await
            .expect("send");
        assert_eq!(response.status().as_u16(), 413, "{path}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        let problem: Value = response.json().await.expect("problem");
        assert!(
            problem["type"]
                .as_str()
                .is_some_and(|t| t.ends_with("too-large"))
        );
    }
}

#[tokio::test]
async fn a_job_over_its_memory_cap_ends_exhausted() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_memory").await,
        &["--max-job-memory-mib", "1"],
    );
    let mut body = hard_job();
    body["algorithm"] = json!("bfs");
    let (status, job, _) = post(&server, "/v1/solve", body).await;
    assert_eq!(status, 200, "{job}");
    assert_eq!(
        (job["status"].as_str(), job["reason"].as_str()),
        (Some("exhausted"), Some("memory_limit")),
        "{job}"
    );
}

/// One client (one IP address) may keep only so many jobs waiting, whatever
/// idempotency keys it sends; a retry of a job already accepted is still answered.
async fn one_client_cannot_fill_the_queue(db: Db) {
    let server = Server::launch(
        &db.fresh("limits_client").await,
        &["--workers", "1", "--max-queued-per-client", "2"],
    );
    let (_, caps) = get(&server, "/v1/capabilities").await;
    assert_eq!(caps["limits"]["max_queued_jobs_per_client"], 2);
    let submit = |key: String| {
        client()
            .post(server.url("/v1/jobs"))
            .header("idempotency-key", key)
            .json(&hard_job())
            .send()
    };
    // One job runs on the one worker and two wait: the fourth is refused at the latest.
    let mut accepted = 0;
    let refusal = loop {
        assert!(accepted < 4, "the client's queue never filled");
        let response = submit(format!("key-{accepted}")).await.expect("send");
        if response.status().as_u16() == 429 {
            break response;
        }
        assert_eq!(response.status().as_u16(), 202);
        accepted += 1;
    };
    assert!(accepted >= 2);
    assert_eq!(refusal.headers()["retry-after"], "5");
    assert_eq!(
        refusal.headers()["content-type"],
        "application/problem+json"
    );
    let problem: Value = refusal.json().await.expect("problem");
    assert_eq!(problem["status"], 429);
    assert!(
        problem["type"]
            .as_str()
            .is_some_and(|t| t.ends_with("too-many-queued")),
        "{problem}"
    );
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("the most one client may queue is 2")),
        "{problem}"
    );
    let retry = submit("key-0".to_string()).await.expect("send");
    assert_eq!(retry.status().as_u16(), 202, "a retry is not a new job");
}

#[tokio::test]
async fn one_client_cannot_fill_the_queue_sqlite() {
    one_client_cannot_fill_the_queue(Db::Sqlite).await;
}

#[tokio::test]
async fn one_client_cannot_fill_the_queue_postgres() {
    one_client_cannot_fill_the_queue(Db::Postgres).await;
}

/// The most the server process has held resident so far, in MiB (Linux's high-water mark).
fn peak_resident_mib(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id()))
        .expect("process status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("VmHWM");
    kib / 1024
}

/// An 8x8 board 400 random moves from its goal: breadth-first search never gets there.
fn scrambled_8x8() -> Vec<u64> {
    let mut tiles: Vec<u64> = (1..64).collect();
    tiles.push(0);
    let mut blank = 63usize;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut previous = usize::MAX;
    for _ in 0..400 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let (row, col) = (blank / 8, blank % 8);
        let moves: Vec<usize> = [
            (row > 0).then(|| blank - 8),
            (row < 7).then(|| blank + 8),
            (col > 0).then(|| blank - 1),
            (col < 7).then(|| blank + 1),
        ]
        .into_iter()
        .flatten()
        .filter(|&to| to != previous)
        .collect();
        let to = moves[(state % moves.len() as u64) as usize];
        tiles.swap(blank, to);
        previous = blank;
        blank = to;
    }
    tiles
}

/// A queued job is held to `--max-job-memory-mib` like an inline one: it is rebuilt from
/// its stored row, which carries no cap, and the worker applies its own.
async fn a_queued_job_over_the_memory_cap_ends_exhausted_promptly(db: Db) {
    let server = Server::launch(
        &db.fresh("limits_queued_memory").await,
        &["--max-job-memory-mib", "64"],
    );
    let baseline = peak_resident_mib(&server);
    // Far more states than 64 MiB hold.
    let tiles = scrambled_8x8();
    let body = json!({"puzzle": {"type": "sliding", "tiles": tiles}, "algorithm": "bfs", "limits": {"timeout_ms": 20_000}});
    let (status, job, _) = post(&server, "/v1/jobs", body).await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().expect("id");
    let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
    assert_eq!(
        (done["status"].as_str(), done["reason"].as_str()),
        (Some("exhausted"), Some("memory_limit")),
        "{done}"
    );
    // Stopped at the cap, long before its 20 s.
    assert!(
        done["result"]["elapsed_ms"]
            .as_f64()
            .is_some_and(|ms| ms < 15_000.0),
        "{done}"
    );
    let grown = peak_resident_mib(&server).saturating_sub(baseline);
    assert!(grown <= 64 + 32, "the process grew by {grown} MiB");
}

#[tokio::test]
async fn a_queued_job_over_the_memory_cap_ends_exhausted_promptly_sqlite() {
    a_queued_job_over_the_memory_cap_ends_exhausted_promptly(Db::Sqlite).await;
}

#[tokio::test]
async fn a_queued_job_over_the_memory_cap_ends_exhausted_promptly_postgres() {
    a_queued_job_over_the_memory_cap_ends_exhausted_promptly(Db::Postgres).await;
}

/// A client calling from `address` (any 127.x.y.z is this machine).
fn client_at(address: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::from(address))
        .timeout(std::time::Duration::from_secs(90))
        .build()
        .expect("client")
}

async fn submit_from(server: &Server, from: [u8; 4], body: &Value) -> (u16, Value) {
    let response = client_at(from)
        .post(server.url("/v1/jobs"))
        .json(body)
        .send()
        .await
        .expect("send");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

/// One worker kept busy by a job that waits for its cancel.
async fn occupy_the_worker(server: &Server) -> String {
    let mut blocker = hard_job();
    blocker["limits"] = json!({"timeout_ms": 120_000});
    let (status, job) = submit_from(server, [127, 0, 0, 9], &blocker).await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().expect("id").to_string();
    let (_, _seen) = common::stream_until_progress(server, &id).await;
    id
}

/// A job's priority orders it among its own client's jobs only: a client asking for the
/// highest priority does not run before another client's older job.
async fn priority_orders_a_clients_own_jobs_only(db: Db) {
    let server = Server::launch(&db.fresh("limits_priority").await, &["--workers", "1"]);
    let blocker = occupy_the_worker(&server).await;
    // Tens of milliseconds each, so their start times (in milliseconds) differ.
    let small = |priority: i64| {
        let mut job = hard_job();
        job["limits"] = json!({"max_nodes": 100_000});
        job["priority"] = json!(priority);
        job
    };
    let mut ids = Vec::new();
    for (from, priority) in [
        ([127, 0, 0, 1], 0),
        ([127, 0, 0, 2], 5),
        ([127, 0, 0, 1], 1000),
        ([127, 0, 0, 1], 0),
    ] {
        let (status, job) = submit_from(&server, from, &small(priority)).await;
        assert_eq!(status, 202, "{job}");
        ids.push(job["id"].as_str().expect("id").to_string());
    }
    let (status, _, _) = post(&server, &format!("/v1/jobs/{blocker}/cancel"), json!({})).await;
    assert_eq!(status, 202);
    let mut started = Vec::new();
    for id in &ids {
        let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
        assert_eq!(done["reason"], "node_limit", "{done}");
        started.push((
            done["started_at"].as_str().expect("started").to_string(),
            id.clone(),
        ));
    }
    started.sort();
    let order: Vec<&str> = started.iter().map(|(_, id)| id.as_str()).collect();
    // 127.0.0.1's turn comes first (its oldest job is the oldest), and its priority-1000
    // job takes it; 127.0.0.1 has the oldest job again, then 127.0.0.2's priority 5
    // counts for nothing against it.
    assert_eq!(
        order,
        [&ids[2], &ids[0], &ids[1], &ids[3]].map(String::as_str)
    );
}

#[tokio::test]
async fn priority_orders_a_clients_own_jobs_only_sqlite() {
    priority_orders_a_clients_own_jobs_only(Db::Sqlite).await;
}

#[tokio::test]
async fn priority_orders_a_clients_own_jobs_only_postgres() {
    priority_orders_a_clients_own_jobs_only(Db::Postgres).await;
}

/// The last quarter of the queue is kept for clients with few jobs waiting.
async fn a_nearly_full_queue_keeps_room_for_light_clients(db: Db) {
    let server = Server::launch(
        &db.fresh("limits_reserve").await,
        &[
            "--workers",
            "1",
            "--max-queued",
            "4",
            "--max-queued-per-client",
            "3",
        ],
    );
    let _blocker = occupy_the_worker(&server).await;
    let job = json!({"puzzle": {"type": "sliding", "tiles": [4, 1, 3, 7, 2, 6, 0, 5, 8]}});
    // Three places are open to anyone; 127.0.0.1 takes two, 127.0.0.2 one.
    for from in [[127, 0, 0, 1], [127, 0, 0, 1], [127, 0, 0, 2]] {
        let (status, body) = submit_from(&server, from, &job).await;
        assert_eq!(status, 202, "{body}");
    }
    // The last place is kept for a client with nothing waiting.
    let (status, problem) = submit_from(&server, [127, 0, 0, 1], &job).await;
    assert_eq!(status, 429, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("kept for clients with fewer than 1 jobs waiting")),
        "{problem}"
    );
    let (status, body) = submit_from(&server, [127, 0, 0, 3], &job).await;
    assert_eq!(status, 202, "{body}");
    let (status, problem) = submit_from(&server, [127, 0, 0, 4], &job).await;
    assert_eq!(status, 503, "{problem}");
}

#[tokio::test]
async fn a_nearly_full_queue_keeps_room_for_light_clients_sqlite() {
    a_nearly_full_queue_keeps_room_for_light_clients(Db::Sqlite).await;
}

#[tokio::test]
async fn a_nearly_full_queue_keeps_room_for_light_clients_postgres() {
    a_nearly_full_queue_keeps_room_for_light_clients(Db::Postgres).await;
}

/// A breadth-first search with a table of hundreds of MiB still ends within a second of
/// its deadline: the table's growth and its freeing do not push the job past it.
async fn a_big_search_ends_within_a_second_of_its_deadline(db: Db) {
    let server = Server::launch(&db.fresh("limits_overshoot").await, &[]);
    let body = json!({"puzzle": {"type": "sliding", "tiles": scrambled_8x8()}, "algorithm": "bfs", "limits": {"timeout_ms": 4_000}});
    let submitted = std::time::Instant::now();
    let (status, job, _) = post(&server, "/v1/jobs", body).await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().expect("id");
    let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
    let took = submitted.elapsed();
    assert_eq!(
        (done["status"].as_str(), done["reason"].as_str()),
        (Some("exhausted"), Some("timeout")),
        "{done}"
    );
    assert!(
        took < std::time::Duration::from_millis(5_000),
        "ended after {took:?}: {done}"
    );
}

#[tokio::test]
async fn a_big_search_ends_within_a_second_of_its_deadline_sqlite() {
    a_big_search_ends_within_a_second_of_its_deadline(Db::Sqlite).await;
}

#[tokio::test]
async fn a_big_search_ends_within_a_second_of_its_deadline_postgres() {
    a_big_search_ends_within_a_second_of_its_deadline(Db::Postgres).await;
}
