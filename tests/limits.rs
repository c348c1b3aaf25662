//! The limits that keep one request or one client from taking the machine: each one,
//! exceeded, answers its own 4xx (or ends the job `exhausted`, or closes the connection),
//! as docs/reliability.md's table says.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{Db, Server, client, get, post};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

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

/// An open room `side` squares a side inside its walls (so `side + 2` rows and
/// columns of text): the player top left, `boxes` boxes on every other square of every
/// other row from the top, as many goals likewise from the bottom. Every box can move,
/// so every expansion is huge: a matching over all the boxes per child.
fn open_room(side: usize, boxes: usize) -> String {
    let mut rows = vec![vec![' '; side]; side];
    rows[0][0] = '@';
    let per_row = (side - 3) / 2;
    for k in 0..boxes {
        let col = 2 + 2 * (k % per_row);
        rows[2 + 2 * (k / per_row)][col] = '$';
        rows[side - 3 - 2 * (k / per_row)][col] = '.';
    }
    let wall = "#".repeat(side + 2);
    let inside = rows
        .iter()
        .map(|row| format!("#{}#", row.iter().collect::<String>()));
    std::iter::once(wall.clone())
        .chain(inside)
        .chain(std::iter::once(wall))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The largest level the caps allow: 100×100 with 500 boxes, about 10 KB of text.
fn largest_room(objective: &str) -> Value {
    json!({"puzzle": {"type": "sokoban", "level": open_room(98, 500)}, "objective": objective})
}

/// Submits `body` as a job; its id.
async fn submit(server: &Server, body: Value) -> String {
    let (status, job, _) = post(server, "/v1/jobs", body).await;
    assert_eq!(status, 202, "{job}");
    job["id"].as_str().expect("id").to_string()
}

/// Polls job `id` every 20 ms until `done` holds for it, for at most `cap`.
async fn until_job(
    server: &Server,
    id: &str,
    cap: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let give_up = Instant::now() + cap;
    loop {
        let (status, job) = get(server, &format!("/v1/jobs/{id}")).await;
        assert_eq!(status, 200, "{job}");
        if done(&job) {
            return job;
        }
        assert!(Instant::now() < give_up, "still {job} after {cap:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn terminal(job: &Value) -> bool {
    !matches!(job["status"].as_str(), Some("queued" | "running"))
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

/// A breadth-first search with a table of hundreds of MiB still ends within a second of
/// its deadline: the table's growth and its freeing do not push the job past it.
async fn a_big_search_ends_within_a_second_of_its_deadline(db: Db) {
    // A cap the search cannot reach in its time, so that it ends on the deadline.
    let server = Server::launch(
        &db.fresh("limits_overshoot").await,
        &["--max-job-memory-mib", "16384"],
    );
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

/// The largest level's first expansion alone is minutes of matchings (and its box
/// moves gigabytes of children): the deadline must be heard inside it, by the FESS
/// portfolio of `any` and by A* for `optimal` alike.
#[tokio::test]
async fn the_largest_sokoban_level_ends_at_its_deadline() {
    let server = Server::launch(&Db::Sqlite.fresh("limits_sokoban_deadline").await, &[]);
    let deadline = Duration::from_millis(5000);
    let submitted = Instant::now();
    let mut ids = Vec::new();
    for objective in ["any", "optimal"] {
        let mut body = largest_room(objective);
        body["limits"] = json!({"timeout_ms": deadline.as_millis() as u64});
        ids.push((objective, submit(&server, body).await));
    }
    for (objective, id) in ids {
        let job = until_job(&server, &id, Duration::from_secs(60), terminal).await;
        let ended = submitted.elapsed();
        eprintln!("{objective}: ended {ended:?} after submission, deadline {deadline:?}");
        assert_eq!(
            (job["status"].as_str(), job["reason"].as_str()),
            (Some("exhausted"), Some("timeout")),
            "{objective}: {job}"
        );
        // Within a second of the deadline, plus a little for polling and a debug build.
        assert!(
            ended < deadline + Duration::from_millis(1500),
            "{objective}: {ended:?}"
        );
    }
}

/// A cancel is heard inside the largest level's first expansion, and the one worker
/// goes on to the job queued behind.
#[tokio::test]
async fn a_cancel_stops_the_largest_sokoban_level_and_the_queue_moves_on() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_sokoban_cancel").await,
        &["--workers", "1"],
    );
    let small = json!({"puzzle": {"type": "sokoban", "level": "####\n# .#\n#  ###\n#*@  #\n#  $ #\n#  ###\n####"}});
    for objective in ["any", "optimal"] {
        let big = submit(&server, largest_room(objective)).await;
        let queued = submit(&server, small.clone()).await;
        let is_running = |job: &Value| job["status"] == "running";
        until_job(&server, &big, Duration::from_secs(10), is_running).await;
        let asked = Instant::now();
        let (status, answer, _) = post(&server, &format!("/v1/jobs/{big}/cancel"), json!({})).await;
        assert_eq!(status, 202, "{answer}");
        let job = until_job(&server, &big, Duration::from_secs(10), terminal).await;
        let latency = asked.elapsed();
        eprintln!("{objective}: cancelled {latency:?} after asking");
        assert_eq!(job["status"], "cancelled", "{objective}: {job}");
        assert!(latency < Duration::from_secs(1), "{objective}: {latency:?}");
        let next = until_job(&server, &queued, Duration::from_secs(30), terminal).await;
        assert_eq!(next["status"], "solved", "{objective}: {next}");
    }
}

/// SIGTERM gives running jobs a grace period, then cancels them: the largest level's
/// job must hear it, so the process exits soon after the grace.
#[tokio::test]
async fn sigterm_stops_the_largest_sokoban_level_after_the_grace() {
    let mut server = Server::launch(
        &Db::Sqlite.fresh("limits_sokoban_sigterm").await,
        &["--shutdown-grace-ms", "200"],
    );
    let id = submit(&server, largest_room("any")).await;
    until_job(&server, &id, Duration::from_secs(10), |job| {
        job["status"] == "running"
    })
    .await;
    let (exit, took) = common::sigterm_until_exit(&mut server, Duration::from_secs(10)).await;
    eprintln!("exited {took:?} after SIGTERM");
    assert!(exit.success(), "a clean stop: {exit:?}");
    assert!(took < Duration::from_millis(1700), "{took:?}");
}

/// The largest level's tables take 9.4 MiB and one box-move expansion would make a
/// million children: under an 11 MiB cap the job ends `memory_limit` long before its
/// deadline, and under 4 MiB before its tables are even built.
#[tokio::test]
async fn the_largest_sokoban_level_keeps_to_the_memory_cap() {
    for (mib, within) in [
        ("11", Duration::from_secs(10)),
        ("4", Duration::from_secs(2)),
    ] {
        let server = Server::launch(
            &Db::Sqlite
                .fresh(&format!("limits_sokoban_memory_{mib}"))
                .await,
            &["--max-job-memory-mib", mib],
        );
        let mut body = largest_room("any");
        body["limits"] = json!({"timeout_ms": 30_000});
        let submitted = Instant::now();
        let id = submit(&server, body).await;
        let job = until_job(&server, &id, Duration::from_secs(60), terminal).await;
        let ended = submitted.elapsed();
        eprintln!("{mib} MiB: ended {ended:?} after submission");
        assert_eq!(
            (job["status"].as_str(), job["reason"].as_str()),
            (Some("exhausted"), Some("memory_limit")),
            "{mib} MiB: {job}"
        );
        assert!(ended < within, "{mib} MiB: {ended:?}");
    }
}

// Connections: raw sockets against the real server, as a slow or hostile client would
// hold them. 127.0.0.0/8 is all loopback, so binding a socket to 127.0.0.2 before it
// connects makes a second client.

/// The server's address, for raw sockets.
fn socket_address(server: &Server) -> SocketAddr {
    server
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("an address")
}

/// A connection to `server` from the loopback address `from`.
async fn connect_from(server: &Server, from: [u8; 4]) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind(SocketAddr::from((from, 0)))
        .expect("a loopback address");
    socket
        .connect(socket_address(server))
        .await
        .expect("connect")
}

/// A whole HTTP/1.1 request with a JSON body (empty for none).
fn request(method: &str, path: &str, body: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: puzzled\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// One answer read off `stream`: its status, head and (`Content-Length`) body; `None`
/// when the server closed the connection (EOF or reset) before a whole answer. Panics if
/// neither has happened by `deadline`.
async fn answer_or_close(
    stream: &mut (impl AsyncRead + Unpin),
    deadline: Instant,
) -> Option<(u16, String, String)> {
    let mut bytes = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).to_string();
            let mut length = 0;
            for line in head.lines() {
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().expect("a length");
                }
            }
            if bytes.len() >= end + 4 + length {
                let status = head[9..12].parse().expect("a status");
                let body = String::from_utf8_lossy(&bytes[end + 4..end + 4 + length]).to_string();
                return Some((status, head, body));
            }
        }
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut buffer)).await {
            Err(_) => panic!(
                "neither an answer nor a close by the deadline; read {:?}",
                String::from_utf8_lossy(&bytes)
            ),
            Ok(Ok(0) | Err(_)) => return None,
            Ok(Ok(n)) => bytes.extend_from_slice(&buffer[..n]),
        }
    }
}

/// A whole answer off `stream` by `deadline`.
async fn answer(stream: &mut (impl AsyncRead + Unpin), deadline: Instant) -> (u16, String, String) {
    answer_or_close(stream, deadline)
        .await
        .expect("an answer, not a closed connection")
}

/// Reads `stream` until the server closes it (EOF or reset); returns what came, and
/// panics if it is still open at `deadline`.
async fn until_closed(stream: &mut TcpStream, deadline: Instant) -> String {
    let mut bytes = Vec::new();
    let mut buffer = [0; 4096];
    loop {
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut buffer)).await {
            Err(_) => panic!(
                "the connection is still open; read {:?}",
                String::from_utf8_lossy(&bytes)
            ),
            Ok(Ok(0) | Err(_)) => return String::from_utf8_lossy(&bytes).to_string(),
            Ok(Ok(n)) => bytes.extend_from_slice(&buffer[..n]),
        }
    }
}

/// Reads `stream` until what came holds `needle`; panics if it closes or `deadline` passes first.
async fn until_seen(stream: &mut TcpStream, needle: &str, deadline: Instant) -> String {
    let mut seen = String::new();
    let mut buffer = [0; 4096];
    while !seen.contains(needle) {
        let n = tokio::time::timeout_at(deadline.into(), stream.read(&mut buffer))
            .await
            .unwrap_or_else(|_| panic!("no {needle:?} by the deadline; read {seen:?}"))
            .expect("read");
        assert!(n > 0, "closed before {needle:?}; read {seen:?}");
        seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
    }
    seen
}

/// A problem+json answer of `status` whose type ends with `kind`.
fn is_problem((status, head, body): &(u16, String, String), expected: u16, kind: &str) {
    assert_eq!(*status, expected, "{head}\n{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{head}"
    );
    let problem: Value = serde_json::from_str(body).expect("JSON");
    assert_eq!(problem["status"], expected, "{problem}");
    assert!(
        problem["type"].as_str().is_some_and(|t| t.ends_with(kind)),
        "{problem}"
    );
}

const SMALL_SOLVE: &str =
    r#"{"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 0, 7, 8]}}"#;

#[tokio::test]
async fn a_half_sent_header_is_closed_within_the_header_timeout() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_header").await,
        &["--header-timeout-ms", "500", "--ops-bind", "127.0.0.1:0"],
    );
    let timeout = Duration::from_millis(500);
    // Half a request line, and nothing more. Timed from before the connect, which is
    // before the accept the server times it from.
    let connecting = Instant::now();
    let mut half = connect_from(&server, [127, 0, 0, 1]).await;
    half.write_all(b"GET /heal").await.expect("send");
    let said = until_closed(&mut half, connecting + Duration::from_secs(5)).await;
    let took = connecting.elapsed();
    assert!(said.is_empty(), "{said}");
    assert!(took >= timeout - Duration::from_millis(100), "{took:?}");
    assert!(took < timeout + Duration::from_secs(2), "{took:?}");

    // A byte every 100 ms: each one in time, the whole far too slow.
    let mut trickle = connect_from(&server, [127, 0, 0, 1]).await;
    let header = request("GET", "/v1/capabilities", "");
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let mut sent_bytes = 0;
    let mut buffer = [0; 64];
    let closed = loop {
        tokio::select! {
            _ = tick.tick(), if sent_bytes < header.len() => {
                if trickle.write_all(&header.as_bytes()[sent_bytes..=sent_bytes]).await.is_err() {
                    break started.elapsed();
                }
                sent_bytes += 1;
            }
            read = trickle.read(&mut buffer) => {
                assert!(!matches!(read, Ok(n) if n > 0), "answered a trickled header");
                break started.elapsed();
            }
        }
    };
    assert!(sent_bytes < header.len(), "the whole header went through");
    assert!(closed < timeout + Duration::from_secs(2), "{closed:?}");

    // After a whole request, the next one's header is timed from its first byte, not
    // left to the (default, one minute) idle timeout.
    let mut kept = connect_from(&server, [127, 0, 0, 1]).await;
    kept.write_all(request("GET", "/v1/capabilities", "").as_bytes())
        .await
        .expect("send");
    let (status, _, _) = answer(&mut kept, Instant::now() + Duration::from_secs(5)).await;
    assert_eq!(status, 200);
    kept.write_all(b"GET /v1/ca").await.expect("send");
    let sent = Instant::now();
    until_closed(&mut kept, sent + Duration::from_secs(5)).await;
    assert!(sent.elapsed() < timeout + Duration::from_secs(2));

    // The operations listener holds the same limits.
    let ops_address = server
        .ops_base
        .as_deref()
        .expect("an operations listener")
        .trim_start_matches("http://")
        .to_string();
    let connecting = Instant::now();
    let mut half = TcpStream::connect(&ops_address).await.expect("connect");
    half.write_all(b"GET /heal").await.expect("send");
    let said = until_closed(&mut half, connecting + Duration::from_secs(5)).await;
    let took = connecting.elapsed();
    assert!(said.is_empty(), "{said}");
    assert!(took >= timeout - Duration::from_millis(100), "{took:?}");
    assert!(took < timeout + Duration::from_secs(2), "{took:?}");

    let (status, _) = get(&server, "/v1/capabilities").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_slow_or_endless_body_is_ended_within_the_body_timeout() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_body_time").await,
        &["--body-timeout-ms", "500"],
    );
    let timeout = Duration::from_millis(500);
    // A body announced at 100 bytes, of which 11 come.
    let mut short = connect_from(&server, [127, 0, 0, 1]).await;
    short
        .write_all(b"POST /v1/solve HTTP/1.1\r\nHost: puzzled\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"puzzle\": ")
        .await
        .expect("send");
    let sent = Instant::now();
    let answered = answer(&mut short, sent + Duration::from_secs(5)).await;
    let took = sent.elapsed();
    is_problem(&answered, 408, "body-timeout");
    assert!(took >= timeout - Duration::from_millis(100), "{took:?}");
    assert!(took < timeout + Duration::from_secs(2), "{took:?}");
    until_closed(&mut short, Instant::now() + Duration::from_secs(5)).await;

    // An endless chunked body, a byte every 50 ms: under the size cap for minutes.
    let mut endless = connect_from(&server, [127, 0, 0, 1]).await;
    endless
        .write_all(b"POST /v1/jobs HTTP/1.1\r\nHost: puzzled\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        .await
        .expect("send");
    let sent = Instant::now();
    let (mut reader, mut writer) = endless.into_split();
    let trickle = async {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        for _ in 0..200 {
            tick.tick().await;
            if writer.write_all(b"1\r\n \r\n").await.is_err() {
                break;
            }
        }
    };
    let ended = tokio::select! {
        ended = answer_or_close(&mut reader, sent + Duration::from_secs(5)) => ended,
        () = trickle => panic!("ten seconds of body went on unanswered"),
    };
    let took = sent.elapsed();
    // The server closes the socket right after its 408, with chunks still arriving: the
    // reset may come before the client has read the answer.
    if let Some(answered) = ended {
        is_problem(&answered, 408, "body-timeout");
    }
    assert!(took >= timeout - Duration::from_millis(100), "{took:?}");
    assert!(took < timeout + Duration::from_secs(2), "{took:?}");

    // A body in time is served as ever.
    let (status, job, _) = post(
        &server,
        "/v1/solve",
        serde_json::from_str(SMALL_SOLVE).expect("JSON"),
    )
    .await;
    assert_eq!(status, 200, "{job}");
}

#[tokio::test]
async fn a_declared_length_over_the_cap_is_413_before_the_body() {
    let server = Server::start(Db::Sqlite, "limits_declared").await;
    for path in ["/v1/solve", "/v1/jobs", "/v1/validate", "/nowhere"] {
        let mut stream = connect_from(&server, [127, 0, 0, 1]).await;
        stream
            .write_all(format!("POST {path} HTTP/1.1\r\nHost: puzzled\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n").as_bytes())
            .await
            .expect("send");
        // At once: well within the body timeout (30 s by default).
        let answered = answer(&mut stream, Instant::now() + Duration::from_secs(2)).await;
        is_problem(&answered, 413, "too-large");
        assert!(answered.2.contains("999999999"), "{}", answered.2);
    }
}

#[tokio::test]
async fn a_client_at_its_connection_cap_is_refused_while_others_are_served() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_connections").await,
        &[
            "--max-connections-per-client",
            "3",
            "--max-connections",
            "5",
        ],
    );
    let soon = || Instant::now() + Duration::from_secs(5);
    // 127.0.0.1 holds its three with half-sent requests (the header timeout is 10 s).
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut slow = connect_from(&server, [127, 0, 0, 1]).await;
        slow.write_all(b"GET /heal").await.expect("send");
        held.push(slow);
    }
    // Accepted after those (the accept queue is in order), so counted after them.
    let mut fourth = connect_from(&server, [127, 0, 0, 1]).await;
    let _ = fourth
        .write_all(request("GET", "/healthz", "").as_bytes())
        .await;
    let said = until_closed(&mut fourth, soon()).await;
    assert!(said.is_empty(), "the fourth connection was served: {said}");

    // Another client is served, on both routes, over one kept-alive connection.
    let mut other = connect_from(&server, [127, 0, 0, 2]).await;
    other
        .write_all(request("GET", "/healthz", "").as_bytes())
        .await
        .expect("send");
    assert_eq!(answer(&mut other, soon()).await.0, 200);
    other
        .write_all(request("POST", "/v1/solve", SMALL_SOLVE).as_bytes())
        .await
        .expect("send");
    let (status, _, body) = answer(&mut other, soon()).await;
    assert_eq!(status, 200, "{body}");
    // A fifth connection is the most of all clients: a sixth is refused too.
    let _fifth = connect_from(&server, [127, 0, 0, 3]).await;
    let mut sixth = connect_from(&server, [127, 0, 0, 4]).await;
    let _ = sixth
        .write_all(request("GET", "/healthz", "").as_bytes())
        .await;
    let said = until_closed(&mut sixth, soon()).await;
    assert!(said.is_empty(), "the sixth connection was served: {said}");
    // The held ones are still there to finish their requests.
    held[0]
        .write_all(b"thz HTTP/1.1\r\nHost: puzzled\r\n\r\n")
        .await
        .expect("send");
    assert_eq!(answer(&mut held[0], soon()).await.0, 200);
}

#[tokio::test]
async fn an_idle_connection_is_closed_while_an_event_stream_stays_open() {
    let server = Server::launch(
        &Db::Sqlite.fresh("limits_idle").await,
        &["--idle-timeout-ms", "500"],
    );
    let idle_timeout = Duration::from_millis(500);
    let soon = || Instant::now() + Duration::from_secs(5);
    let (status, job, _) = post(&server, "/v1/jobs", hard_job()).await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().expect("id");
    // The job's event stream, opened first.
    let mut events = connect_from(&server, [127, 0, 0, 1]).await;
    events
        .write_all(request("GET", &format!("/v1/jobs/{id}/events"), "").as_bytes())
        .await
        .expect("send");
    until_seen(&mut events, "event: progress", soon()).await;
    let stream_opened = Instant::now();
    // A long poll is a request in flight too.
    let mut polling = connect_from(&server, [127, 0, 0, 1]).await;
    polling
        .write_all(request("GET", &format!("/v1/jobs/{id}?wait=2"), "").as_bytes())
        .await
        .expect("send");
    let poll_sent = Instant::now();
    // A kept-alive connection that asks once, then nothing.
    let mut idle = connect_from(&server, [127, 0, 0, 1]).await;
    // Before the request, so before the answer the server times the idling from.
    let asked = Instant::now();
    idle.write_all(request("GET", "/healthz", "").as_bytes())
        .await
        .expect("send");
    assert_eq!(answer(&mut idle, soon()).await.0, 200);
    let answered = asked.elapsed();
    until_closed(&mut idle, soon()).await;
    let closed = asked.elapsed();
    assert!(closed >= idle_timeout, "{closed:?}");
    assert!(
        closed < answered + idle_timeout + Duration::from_secs(2),
        "{closed:?}"
    );

    // Older than the idle timeout, the event stream still brings progress.
    until_seen(&mut events, "event: progress", soon()).await;
    assert!(stream_opened.elapsed() > idle_timeout);
    let (status, _, body) = answer(&mut polling, soon()).await;
    assert_eq!(status, 200, "{body}");
    assert!(poll_sent.elapsed() >= Duration::from_millis(1500));
    let (status, _, _) = post(&server, &format!("/v1/jobs/{id}/cancel"), json!({})).await;
    assert!(status == 200 || status == 202, "{status}");
}

common::on_both_stores!(
    one_client_cannot_fill_the_queue,
    a_queued_job_over_the_memory_cap_ends_exhausted_promptly,
    priority_orders_a_clients_own_jobs_only,
    a_nearly_full_queue_keeps_room_for_light_clients,
    a_big_search_ends_within_a_second_of_its_deadline,
);
