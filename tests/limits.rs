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
