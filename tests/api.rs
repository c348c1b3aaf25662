//! The REST service end to end: the real binary on a random port with a fresh
//! SQLite file per test, driven over HTTP.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Contract, Db, Server, client, get, metrics_text, post};
use serde_json::{Value, json};

const KORF_88: [u64; 16] = [15, 2, 12, 11, 14, 13, 9, 5, 1, 3, 8, 7, 0, 10, 6, 4];

fn hard_job() -> Value {
    json!({"puzzle": {"type": "sliding", "tiles": KORF_88, "goal": "blank-first"}, "algorithm": "ida-star", "heuristic": "manhattan"})
}

/// Submits a hard job capped at `max_nodes` and returns once its search is running:
/// its id, its still-open event stream, and what the stream has said so far.
async fn start_running_job(
    server: &Server,
    max_nodes: Option<u64>,
) -> (String, reqwest::Response, String) {
    let mut body = hard_job();
    if let Some(max_nodes) = max_nodes {
        body["limits"] = json!({"max_nodes": max_nodes});
    }
    let (_, job, _) = post(server, "/v1/jobs", body).await;
    let id = job["id"].as_str().expect("id").to_string();
    let (stream, seen) = common::stream_until_progress(server, &id).await;
    (id, stream, seen)
}

async fn a_submitted_job_is_solved_optimally_and_its_plan_replays(db: Db) {
    let server = Server::start(db, "submit").await;
    let body = json!({"puzzle": {"type": "sliding", "tiles": [8, 6, 7, 2, 5, 4, 3, 0, 1]}, "include_boards": true});
    let (status, job, headers) = post(&server, "/v1/jobs", body).await;
    assert_eq!(status, 202);
    let id = job["id"].as_str().expect("id");
    assert_eq!(headers["location"], format!("/v1/jobs/{id}").as_str());
    let (status, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
    assert_eq!(status, 200);
    assert_eq!(done["status"], "solved");
    assert_eq!(done["attempts"], 1);
    let result = &done["result"];
    assert_eq!(
        (result["length"].as_u64(), result["optimal"].as_bool()),
        (Some(31), Some(true))
    );
    assert_eq!(result["boards"].as_array().map(Vec::len), Some(31));
    assert_eq!(result["boards"][30], json!([1, 2, 3, 4, 5, 6, 7, 8, 0]));
    assert!(done["started_at"].is_string() && done["finished_at"].is_string());
    let (_, check, _) = post(&server, "/v1/validate", json!({"puzzle": {"type": "sliding", "tiles": [8, 6, 7, 2, 5, 4, 3, 0, 1]}, "plan": result["plan"]})).await;
    assert_eq!(
        (check["legal"].as_bool(), check["solved"].as_bool()),
        (Some(true), Some(true))
    );
}

async fn solve_answers_synchronously_and_validate_explains_bad_plans(db: Db) {
    let server = Server::start(db, "solve").await;
    let (status, job, _) = post(
        &server,
        "/v1/solve",
        json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 0, 7, 8]}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(job["result"]["plan"], "rr");
    // The command line prints the same result for the same request.
    let request = json!({"puzzle": {"type": "sokoban", "level": "#####\n#@$.#\n#####"}, "include_boards": true});
    let (_, served, _) = post(&server, "/v1/solve", request.clone()).await;
    let mut cli = Command::new(env!("CARGO_BIN_EXE_puzzled"))
        .args(["solve", "--json", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the CLI starts");
    use std::io::Write;
    cli.stdin
        .take()
        .expect("the CLI's input")
        .write_all(request.to_string().as_bytes())
        .expect("the request is written");
    let output = cli.wait_with_output().expect("the CLI ends");
    let printed: Value = serde_json::from_slice(&output.stdout).expect("the CLI prints JSON");
    let timeless = |result: &Value| {
        let mut result = result.clone();
        for timing in ["elapsed_ms", "queue_ms"] {
            result.as_object_mut().expect("a result").remove(timing);
        }
        result
    };
    assert_eq!(printed["status"], served["status"]);
    assert_eq!(timeless(&printed["result"]), timeless(&served["result"]));
    assert_eq!(served["result"]["pushes"], 1);
    let (status, check, _) = post(&server, "/v1/validate", json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 0, 7, 8]}, "plan": "rd", "include_boards": true})).await;
    assert_eq!(status, 200);
    assert_eq!(check["legal"], false);
    assert_eq!(check["error"]["step"], 2);
    assert_eq!(check["boards"].as_array().map(Vec::len), Some(1));
    let (status, unsolvable, _) = post(
        &server,
        "/v1/solve",
        json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 8, 7, 0]}}),
    )
    .await;
    assert_eq!(
        (status, unsolvable["status"].as_str()),
        (200, Some("unsolvable")),
        "parity is an outcome, not an error"
    );
}

/// The value of one Prometheus series in a `/metrics` exposition (0 when absent).
fn series(exposition: &str, name_and_labels: &str) -> f64 {
    exposition
        .lines()
        .find_map(|line| line.strip_prefix(name_and_labels)?.trim().parse().ok())
        .unwrap_or(0.0)
}

async fn small_sync_solves_skip_the_queue_and_big_ones_go_through_it(db: Db) {
    let server = Server::start(db, "inline").await;
    // The 8-puzzle needs a few nodes: solved on the request's own path.
    let (status, small, _) = post(
        &server,
        "/v1/solve",
        json!({"puzzle": {"type": "sliding", "tiles": [8, 6, 7, 2, 5, 4, 3, 0, 1]}}),
    )
    .await;
    assert_eq!((status, small["status"].as_str()), (200, Some("solved")));
    assert_eq!(small["result"]["length"], 31);
    // It is a job like any other: stored, listed, with one attempt.
    let id = small["id"].as_str().expect("id");
    let (status, stored) = get(&server, &format!("/v1/jobs/{id}")).await;
    assert_eq!((status, stored["attempts"].as_i64()), (200, Some(1)));
    // The answer was built in memory; the stored job reads back the same, field by field.
    assert_eq!(stored, small);
    // A hard 15-puzzle allowed more nodes than the inline budget goes through the queue
    // and spends all of its own limit there.
    let mut hard = hard_job();
    hard["limits"] = json!({"max_nodes": 100_000});
    let (status, big, _) = post(&server, "/v1/solve?wait_ms=60000", hard).await;
    assert_eq!(
        (status, big["status"].as_str(), big["reason"].as_str()),
        (200, Some("exhausted"), Some("node_limit"))
    );
    assert_eq!(big["result"]["nodes_expanded"], 100_000);
    let exposition = metrics_text(&server).await;
    assert_eq!(
        series(
            &exposition,
            r#"puzzled_jobs_submitted_total{path="inline"}"#
        ),
        1.0
    );
    assert_eq!(
        series(&exposition, r#"puzzled_jobs_submitted_total{path="queue"}"#),
        1.0
    );
    assert_eq!(series(&exposition, r#"puzzled_jobs{status="solved"}"#), 1.0);
    assert_eq!(
        series(
            &exposition,
            r#"puzzled_jobs_finished_total{status="exhausted"}"#
        ),
        1.0
    );
    assert!(series(&exposition, "puzzled_nodes_expanded_total") > 100_000.0);
    assert_eq!(series(&exposition, "puzzled_job_run_seconds_count"), 2.0);
    assert_eq!(series(&exposition, "puzzled_workers"), 2.0);
}

#[test]
fn every_route_the_router_serves_is_in_the_contract() {
    let router = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/http/mod.rs"))
        .expect("router source");
    let contract = Contract::get();
    let mut routes = 0;
    // `.route("/path", get(..).post(..))`: each path with each method chained on it.
    for call in router.split(".route(").skip(1) {
        let path = call.split('"').nth(1).expect("route path");
        let handlers = call.split(")\n").next().unwrap_or(call);
        for method in ["get", "post", "delete", "put", "patch"] {
            if handlers.contains(&format!("{method}(routes::"))
                || handlers.contains(&format!("{method}(web::"))
            {
                routes += 1;
                assert!(
                    contract.spec["paths"][path][method].is_object(),
                    "the router serves {method} {path}, which openapi.yaml does not describe"
                );
            }
        }
    }
    assert!(
        routes >= 16,
        "found only {routes} routes in src/http/mod.rs"
    );
}

async fn errors_are_problem_json_with_the_right_status(db: Db) {
    let server = Server::start(db, "errors").await;
    let http = client();
    let raw = |body: &'static str, content_type: &'static str| {
        http.post(server.url("/v1/jobs"))
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    // (response, route as the contract names it, or None off the map, status, problem type)
    let jobs = Some(("post", "/v1/jobs"));
    let cases = [
        (raw("{", "application/json").await.expect("send"), jobs, 400, "malformed-json"),
        (raw("{}", "text/plain").await.expect("send"), jobs, 415, "unsupported-media-type"),
        (raw(r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,3]}}"#, "application/json").await.expect("send"), jobs, 422, "invalid-request"),
        (raw(r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0]},"limits":{"max_nodes":999999999999}}"#, "application/json").await.expect("send"), jobs, 422, "invalid-request"),
        (http.get(server.url("/v1/jobs/no-such-job")).send().await.expect("send"), Some(("get", "/v1/jobs/no-such-job")), 404, "not-found"),
        (http.get(server.url("/v2/nothing")).send().await.expect("send"), None, 404, "not-found"),
        (http.get(server.url("/v1/jobs?status=sleeping")).send().await.expect("send"), Some(("get", "/v1/jobs")), 400, "bad-query"),
        (http.put(server.url("/v1/jobs")).send().await.expect("send"), None, 405, "method-not-allowed"),
        // On a client of its own: the early 413 closes its connection, which a shared
        // client could pool and reuse.
        (client().post(server.url("/v1/jobs")).header("content-type", "application/json").body(vec![b' '; 200 * 1024]).send().await.expect("send"), jobs, 413, "too-large"),
    ];
    for (response, route, status, kind) in cases {
        assert_eq!(response.status().as_u16(), status, "{kind}");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{kind}"
        );
        let problem: Value = response.json().await.expect("problem body");
        if let Some((method, path)) = route {
            Contract::get().check(method, path, status, "application/problem+json", &problem);
        }
        assert_eq!(problem["status"], status);
        assert!(
            problem["type"].as_str().is_some_and(|t| t.ends_with(kind)),
            "{problem}"
        );
        assert!(problem["detail"].as_str().is_some_and(|d| !d.is_empty()));
    }
    let (_, problem, _) = post(
        &server,
        "/v1/jobs",
        json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 0], "goal": [0, 1, 1, 2]}}),
    )
    .await;
    assert_eq!(problem["pointer"], "/puzzle/goal");
    // Every JSON body that is not a request names the field at fault and what is wrong.
    let wrong = [
        (
            r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0]},"bogus":1}"#,
            "/bogus",
            "unknown field `bogus`",
        ),
        (
            r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0]},"limits":{"max_nodes":-1}}"#,
            "/limits/max_nodes",
            "invalid value: integer `-1`",
        ),
        (
            r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0]},"include_boards":"yes"}"#,
            "/include_boards",
            "invalid type",
        ),
        (
            r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0]},"algorithm":"bfs","algorithm":"a-star"}"#,
            "/algorithm",
            "duplicate field `algorithm`",
        ),
        (
            r#"{"puzzle":{"type":"cube"}}"#,
            "/puzzle/type",
            "unknown puzzle type 'cube'",
        ),
        // Inside the puzzle too, the field at fault is named, not the puzzle.
        (
            r#"{"puzzle":{"type":"sliding","tiles":"1 2 3 0"}}"#,
            "/puzzle/tiles",
            "invalid type",
        ),
        (
            r#"{"puzzle":{"type":"sokoban"}}"#,
            "/puzzle/level",
            "a sokoban puzzle needs `level`",
        ),
        (
            r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0],"level":"x"}}"#,
            "/puzzle/level",
            "`level` is not a field of a sliding puzzle",
        ),
        (
            r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0],"goal":"blank-middle"}}"#,
            "/puzzle/goal",
            "unknown goal 'blank-middle'",
        ),
    ];
    for (body, pointer, detail) in wrong {
        let response = raw(body, "application/json").await.expect("send");
        assert_eq!(response.status().as_u16(), 422, "{body}");
        let problem: Value = response.json().await.expect("problem body");
        Contract::get().check(
            "post",
            "/v1/jobs",
            422,
            "application/problem+json",
            &problem,
        );
        assert_eq!(problem["pointer"], pointer, "{problem}");
        assert!(
            problem["detail"]
                .as_str()
                .is_some_and(|d| d.contains(detail)),
            "{problem}"
        );
    }
    // A request that cannot run is refused when it arrives, never accepted and failed.
    let mut six: Vec<u64> = (1..36).collect();
    six.extend([0]);
    six.swap(34, 35);
    let cannot_run = [
        (
            json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 0]}, "heuristic": "matching"}),
            "/heuristic",
            "does not apply to sliding",
        ),
        (
            json!({"puzzle": {"type": "sokoban", "level": "#####\n#@$.#\n#####"}, "heuristic": "manhattan"}),
            "/heuristic",
            "does not apply to sokoban",
        ),
        (
            json!({"puzzle": {"type": "sliding", "tiles": six}, "heuristic": "pattern-database"}),
            "/heuristic",
            "not available for a 6x6 board",
        ),
    ];
    for (body, pointer, detail) in cannot_run {
        for path in ["/v1/jobs", "/v1/solve"] {
            let (status, problem, _) = post(&server, path, body.clone()).await;
            assert_eq!(status, 422, "{path}: {problem}");
            assert_eq!(problem["pointer"], pointer, "{problem}");
            assert!(
                problem["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains(detail)),
                "{problem}"
            );
        }
    }
    let (_, list) = get(&server, "/v1/jobs").await;
    assert!(
        list["jobs"]
            .as_array()
            .is_some_and(|jobs| jobs.iter().all(|j| j["status"] != "failed")),
        "{list}"
    );
    // Every answer names its request: the client's id when it sent one, else a new one,
    // in the header and in any problem, so the logs can be searched for it.
    let response = http
        .get(server.url("/v1/jobs/no-such-job"))
        .header("x-request-id", "trace-me-42")
        .send()
        .await
        .expect("send");
    assert_eq!(response.headers()["x-request-id"], "trace-me-42");
    let problem: Value = response.json().await.expect("problem body");
    assert_eq!(problem["request_id"], "trace-me-42", "{problem}");
    let response = raw("{", "application/json").await.expect("send");
    let id = response.headers()["x-request-id"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert_eq!(id.len(), 36, "a fresh UUID: {id}");
    let problem: Value = response.json().await.expect("problem body");
    assert_eq!(problem["request_id"], id.as_str(), "{problem}");
    // A path that is not UTF-8 is a problem too, not plain text.
    let response = http
        .get(server.url("/v1/jobs/%FF%FE"))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    // A level may carry its name on a `;` comment line, as collections do.
    let (status, job, _) = post(
        &server,
        "/v1/solve",
        json!({"puzzle": {"type": "sokoban", "level": "; level 1\n#####\n#@$.#\n#####"}}),
    )
    .await;
    assert_eq!(
        (status, job["status"].as_str()),
        (200, Some("solved")),
        "{job}"
    );
}

async fn a_running_job_is_cancelled_within_a_second_and_frees_its_worker(db: Db) {
    let server = Server::start(db, "cancel").await;
    let (id, mut stream, mut seen) = start_running_job(&server, None).await;
    let started = std::time::Instant::now();
    let (status, cancelled, _) = post(&server, &format!("/v1/jobs/{id}/cancel"), json!({})).await;
    assert_eq!(status, 202);
    assert_eq!(
        cancelled["status"], "cancelled",
        "the cancel answer waits up to a second for the stop"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        cancelled["result"]["nodes_expanded"]
            .as_u64()
            .is_some_and(|n| n > 0)
    );
    // The stream ends with the final event.
    while let Some(chunk) = stream.chunk().await.expect("chunk") {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("event: finished"), "{seen}");
    // Cancelling again changes nothing, and says so.
    let response = client()
        .post(server.url(&format!("/v1/jobs/{id}/cancel")))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["x-cancel-outcome"], "already-finished");
    // The worker is free again.
    let (status, quick, _) = post(
        &server,
        "/v1/solve",
        json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 7, 0, 8]}}),
    )
    .await;
    assert_eq!((status, quick["status"].as_str()), (200, Some("solved")));
}

async fn limits_end_jobs_exhausted(db: Db) {
    let server = Server::start(db, "limits").await;
    let mut body = hard_job();
    body["limits"] = json!({"max_nodes": 10000});
    let (_, job, _) = post(&server, "/v1/solve", body).await;
    assert_eq!(
        (job["status"].as_str(), job["reason"].as_str()),
        (Some("exhausted"), Some("node_limit"))
    );
    assert_eq!(job["result"]["nodes_expanded"], 10000);
    let mut body = hard_job();
    body["limits"] = json!({"timeout_ms": 200});
    let (_, job, _) = post(&server, "/v1/solve", body).await;
    assert_eq!(
        (job["status"].as_str(), job["reason"].as_str()),
        (Some("exhausted"), Some("timeout"))
    );
}

async fn idempotent_retries_make_one_job(db: Db) {
    let server = Server::start(db, "idempotency").await;
    let body = json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 7, 0, 8]}});
    let send = |body: Value| {
        client()
            .post(server.url("/v1/jobs"))
            .header("idempotency-key", "retry-1")
            .json(&body)
            .send()
    };
    let first: Value = send(body.clone())
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    let second: Value = send(body.clone())
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(first["id"], second["id"]);
    // The same request written another way (keys in another order, defaults spelled
    // out, the goal named) is the same job.
    let respelled: Value = send(json!({
        "limits": {"timeout_ms": 30_000},
        "algorithm": "auto",
        "heuristic": "auto",
        "objective": "optimal",
        "puzzle": {"goal": "blank-last", "tiles": [1, 2, 3, 4, 5, 6, 7, 0, 8], "type": "sliding"}
    }))
    .await
    .expect("send")
    .json()
    .await
    .expect("json");
    assert_eq!(first["id"], respelled["id"], "{respelled}");
    let conflict =
        send(json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 0, 7, 8]}}))
            .await
            .expect("send");
    assert_eq!(conflict.status().as_u16(), 422);
    let (_, list) = get(&server, "/v1/jobs").await;
    assert_eq!(list["jobs"].as_array().map(Vec::len), Some(1));
}

async fn a_hundred_concurrent_submissions_all_finish_and_list_pages_through_them(db: Db) {
    let server = Server::start(db, "concurrent").await;
    let submissions = (0..100).map(|i| {
        let tiles = if i % 2 == 0 {
            json!([1, 2, 3, 4, 5, 6, 7, 0, 8])
        } else {
            json!([4, 1, 3, 7, 2, 6, 0, 5, 8])
        };
        let url = server.url("/v1/jobs");
        async move {
            client()
                .post(url)
                .json(&json!({"puzzle": {"type": "sliding", "tiles": tiles}}))
                .send()
                .await
                .expect("send")
                .status()
                .as_u16()
        }
    });
    let statuses = futures_util::future::join_all(submissions).await;
    assert!(statuses.iter().all(|&s| s == 202), "{statuses:?}");
    let mut ids = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/jobs?limit=30&cursor={c}"),
            None => "/v1/jobs?limit=30".to_string(),
        };
        let (_, page) = get(&server, &path).await;
        for job in page["jobs"].as_array().expect("jobs") {
            let id = job["id"].as_str().expect("id").to_string();
            let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
            assert_eq!(done["status"], "solved", "{done}");
            assert!(ids.insert(id), "a job listed twice");
        }
        cursor = page["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(ids.len(), 100);
    let (_, solved) = get(&server, "/v1/jobs?status=solved&limit=100").await;
    assert_eq!(solved["jobs"].as_array().map(Vec::len), Some(100));
}

async fn finished_jobs_can_be_deleted(db: Db) {
    let server = Server::start(db, "delete").await;
    let (_, job, _) = post(
        &server,
        "/v1/solve",
        json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 7, 0, 8]}}),
    )
    .await;
    let path = format!("/v1/jobs/{}", job["id"].as_str().expect("id"));
    let deleted = client()
        .delete(server.url(&path))
        .send()
        .await
        .expect("send");
    assert_eq!(deleted.status().as_u16(), 204);
    assert_eq!(get(&server, &path).await.0, 404);
}

async fn service_routes_describe_themselves(db: Db) {
    let server = Server::start(db, "meta").await;
    assert_eq!(
        client()
            .get(server.url("/healthz"))
            .send()
            .await
            .expect("send")
            .status()
            .as_u16(),
        200
    );
    let (status, ready) = get(&server, "/readyz").await;
    assert_eq!((status, ready["status"].as_str()), (200, Some("ready")));
    assert_eq!(ready["workers"], 2);
    // Tables are not warmed in tests: none is ready, and both say so alike.
    assert_eq!(ready["ready_tables"]["4x4 blank-last"], json!([]));
    let (_, caps) = get(&server, "/v1/capabilities").await;
    assert!(
        caps["puzzles"]["sliding"]["algorithms"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("ida-star")))
    );
    assert_eq!(caps["limits"]["max_wait_seconds"], 60);
    assert_eq!(
        caps["puzzles"]["sliding"]["ready_tables"],
        ready["ready_tables"]
    );
    let spec = client()
        .get(server.url("/openapi.yaml"))
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("text");
    // The served contract is the one the tests hold the service to.
    assert_eq!(
        spec,
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
            .expect("openapi.yaml")
    );
}

async fn a_job_running_when_the_server_is_killed_finishes_after_restart(db: Db) {
    let store = db.fresh("restart").await;
    let mut server = Server::launch(&store, &["--lease-ms", "1000"]);
    // Long enough to be running when killed, short enough to finish after restart.
    let (id, _, _) = start_running_job(&server, Some(20_000_000)).await;
    server.child.kill().expect("SIGKILL");
    server.child.wait().expect("reaped");
    let restarted = Server::launch(&store, &[]);
    std::mem::forget(server);
    let (_, done) = get(&restarted, &format!("/v1/jobs/{id}?wait=60")).await;
    assert_eq!(
        (done["status"].as_str(), done["reason"].as_str()),
        (Some("exhausted"), Some("node_limit")),
        "{done}"
    );
    assert_eq!(done["attempts"], 2);
    let exposition = metrics_text(&restarted).await;
    assert_eq!(
        series(
            &exposition,
            r#"puzzled_jobs_recovered_total{outcome="requeued"}"#
        ),
        1.0
    );
}

async fn a_full_queue_answers_503_with_retry_after_and_loses_nothing_accepted(db: Db) {
    let server = Server::launch(&db.fresh("full").await, &["--max-queued", "1"]);
    // Long enough (a second or so) to keep both workers busy while the queue fills.
    let mut bounded = hard_job();
    bounded["limits"] = json!({"max_nodes": 2_000_000});
    let mut accepted = Vec::new();
    // Two workers and one queue place: the fourth submission at the latest is refused.
    let refusal = loop {
        assert!(accepted.len() < 4, "the queue never filled");
        let response = client()
            .post(server.url("/v1/jobs"))
            .json(&bounded)
            .send()
            .await
            .expect("send");
        if response.status().as_u16() == 503 {
            break response;
        }
        assert_eq!(response.status().as_u16(), 202);
        let job: Value = response.json().await.expect("json");
        accepted.push(job["id"].as_str().expect("id").to_string());
    };
    assert_eq!(refusal.headers()["retry-after"], "5");
    let problem: Value = refusal.json().await.expect("problem");
    assert!(
        problem["type"]
            .as_str()
            .is_some_and(|t| t.ends_with("queue-full"))
    );
    for id in &accepted {
        let (status, job) = get(&server, &format!("/v1/jobs/{id}")).await;
        assert_eq!(status, 200);
        assert!(
            matches!(job["status"].as_str(), Some("queued" | "running")),
            "{job}"
        );
    }
    // Every accepted job runs to its end; the refused one never became a job.
    for id in &accepted {
        let (_, job) = get(&server, &format!("/v1/jobs/{id}?wait=60")).await;
        assert_eq!(
            (job["status"].as_str(), job["reason"].as_str()),
            (Some("exhausted"), Some("node_limit")),
            "{job}"
        );
    }
    let (_, list) = get(&server, "/v1/jobs").await;
    assert_eq!(list["jobs"].as_array().map(Vec::len), Some(accepted.len()));
    // With the queue drained, the service takes jobs again.
    let (status, _, _) = post(&server, "/v1/jobs", bounded).await;
    assert_eq!(status, 202);
}

async fn sigterm_puts_running_jobs_back_in_the_queue_without_using_an_attempt(db: Db) {
    let store = db.fresh("sigterm").await;
    let mut server = Server::launch(&store, &["--shutdown-grace-ms", "100"]);
    // The job's event stream stays open: shutdown must close it, not wait on it.
    let (id, mut stream, _) = start_running_job(&server, Some(20_000_000)).await;
    let term = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(term.success());
    let ended = loop {
        match stream.chunk().await {
            Ok(Some(_)) => continue,
            other => break other,
        }
    };
    assert!(
        matches!(ended, Ok(None)),
        "the server closed the stream: {ended:?}"
    );
    let exit = server.child.wait().expect("server exits");
    assert!(exit.success(), "a clean stop: {exit:?}");
    let restarted = Server::launch(&store, &[]);
    std::mem::forget(server);
    let (_, done) = get(&restarted, &format!("/v1/jobs/{id}?wait=60")).await;
    assert_eq!(
        (done["status"].as_str(), done["reason"].as_str()),
        (Some("exhausted"), Some("node_limit")),
        "{done}"
    );
    assert_eq!(done["attempts"], 1, "a drained job keeps its attempt");
}

async fn sokoban_levels_are_solved_validated_and_described(db: Db) {
    let server = Server::start(db, "sokoban").await;
    let level = "####\n# .#\n#  ###\n#*@  #\n#  $ #\n#  ###\n####";
    let body = json!({"puzzle": {"type": "sokoban", "level": level}, "objective": "optimal", "include_boards": true});
    let (status, job, _) = post(&server, "/v1/jobs", body).await;
    assert_eq!(status, 202);
    let id = job["id"].as_str().expect("id");
    let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
    assert_eq!(done["status"], "solved");
    let result = &done["result"];
    assert_eq!(
        (result["pushes"].as_u64(), result["optimal"].as_bool()),
        (Some(8), Some(true))
    );
    assert_eq!(result["moves"], result["length"]);
    assert_eq!(result["boards"].as_array().map(Vec::len), Some(8));
    assert!(
        result["boards"][7]
            .as_str()
            .is_some_and(|b| !b.contains('$'))
    );
    assert_eq!(done["request"]["puzzle"]["type"], "sokoban");

    // Any solution by default, shortened with the time left: here to the proved
    // optimum. The plan replays through /v1/validate.
    let (status, solved, _) = post(
        &server,
        "/v1/solve",
        json!({"puzzle": {"type": "sokoban", "level": level}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            solved["result"]["pushes"].as_u64(),
            solved["result"]["optimal"].as_bool()
        ),
        (Some(8), Some(true))
    );
    // Solved on the request's path, stored, and read back the same.
    let (_, stored) = get(
        &server,
        &format!("/v1/jobs/{}", solved["id"].as_str().expect("id")),
    )
    .await;
    assert_eq!(stored, solved);
    let plan = solved["result"]["plan"].clone();
    let (_, check, _) = post(
        &server,
        "/v1/validate",
        json!({"puzzle": {"type": "sokoban", "level": level}, "plan": plan}),
    )
    .await;
    assert_eq!(
        (check["legal"].as_bool(), check["solved"].as_bool()),
        (Some(true), Some(true))
    );
    assert_eq!(check["pushes"], solved["result"]["pushes"]);
    let (_, bad, _) = post(&server, "/v1/validate", json!({"puzzle": {"type": "sokoban", "level": level}, "plan": "dU", "include_boards": true})).await;
    assert_eq!(
        (bad["legal"].as_bool(), bad["error"]["step"].as_u64()),
        (Some(false), Some(2))
    );
    assert!(
        bad["error"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no box"))
    );
    assert_eq!(bad["boards"].as_array().map(Vec::len), Some(1));

    let (status, problem, _) = post(
        &server,
        "/v1/jobs",
        json!({"puzzle": {"type": "sokoban", "level": "#####\n#@$ #\n#####"}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(problem["pointer"], "/puzzle/level");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("1 boxes but 0 goals"))
    );

    let (_, caps) = get(&server, "/v1/capabilities").await;
    assert_eq!(caps["puzzles"]["sokoban"]["defaults"]["objective"], "any");
    assert_eq!(caps["puzzles"]["sokoban"]["level"]["max_boxes"], 500);
}

/// The tables status, as `/v1/capabilities` shows it.
async fn tables_status(server: &Server) -> Value {
    let (status, caps) = get(server, "/v1/capabilities").await;
    assert_eq!(status, 200);
    caps["puzzles"]["sliding"]["tables"].clone()
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The server's resident size, from /proc (Linux).
fn resident_mib(server: &Server) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

async fn a_large_table_is_never_built_for_a_request(db: Db) {
    let server = Server::start(db, "largetable").await;
    // A 4x4 board one move from a goal that puts the blank on cell 5: no table of this
    // layout exists, and the 7-8 one would take half an hour and 5 GB to build.
    let goal: Vec<u64> = vec![1, 2, 3, 4, 5, 0, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    let tiles: Vec<u64> = vec![1, 2, 3, 4, 5, 6, 0, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    let request = |heuristic: &str, partition: Option<&str>| {
        let mut body = json!({"puzzle": {"type": "sliding", "tiles": tiles, "goal": goal},
            "heuristic": heuristic, "limits": {"timeout_ms": 5000}});
        if let Some(partition) = partition {
            body["partition"] = json!(partition);
        }
        body
    };
    let started = std::time::Instant::now();
    let (status, problem, _) = post(
        &server,
        "/v1/jobs",
        request("pattern-database", Some("7-8")),
    )
    .await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["pointer"], "/partition");
    assert!(
        problem["detail"]
            .as_str()
            .is_some_and(|d| d.contains("4x4:7-8:blank=5")),
        "{problem}"
    );
    // Through /v1/solve alike, and no job was made either way.
    let (status, problem, _) = post(
        &server,
        "/v1/solve",
        request("pattern-database", Some("7-8")),
    )
    .await;
    assert_eq!(
        (status, problem["pointer"].as_str()),
        (422, Some("/partition"))
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "refused at once"
    );
    let (_, list) = get(&server, "/v1/jobs").await;
    assert_eq!(list["jobs"], json!([]));
    // `auto` is accepted and solved on linear conflict, with a note saying why.
    let (status, job, _) = post(&server, "/v1/jobs", request("auto", None)).await;
    assert_eq!(status, 202);
    let id = job["id"].as_str().expect("id");
    let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
    assert_eq!(done["status"], "solved", "{done}");
    assert_eq!(done["result"]["length"], 1);
    assert_eq!(done["result"]["heuristic"], "linear-conflict");
    assert!(
        done["result"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("linear-conflict")),
        "{done}"
    );
    // The 7-8 layout was refused, never queued nor built; only the cheap 6-6-3 may be.
    let tables = tables_status(&server).await;
    let seven_eight = "4x4:7-8:blank=5";
    assert!(
        tables["refused"]
            .as_array()
            .is_some_and(|r| r.contains(&json!({"layout": seven_eight, "reason": "not-allowed"}))),
        "{tables}"
    );
    for list in ["built", "building", "queued"] {
        assert!(
            !names(&tables[list]).iter().any(|n| n.contains("7-8")),
            "{tables}"
        );
    }
    assert!(
        resident_mib(&server) < 1024,
        "{} MiB",
        resident_mib(&server)
    );
    // Readiness says the same.
    let (_, ready) = get(&server, "/readyz").await;
    assert_eq!(ready["tables"]["refused"], tables["refused"]);
}

async fn a_cheap_table_is_built_in_the_background_on_first_use(db: Db) {
    let server = Server::start(db, "cheaptable").await;
    // A 2x4 board and a goal of its own: its exact table (8! entries) is cheap.
    let goal: Vec<u64> = vec![0, 1, 2, 3, 4, 5, 6, 7];
    let job = json!({"puzzle": {"type": "sliding", "tiles": [4, 1, 2, 3, 0, 5, 6, 7], "cols": 4, "goal": goal},
        "algorithm": "ida-star"});
    let (status, first, _) = post(&server, "/v1/jobs", job.clone()).await;
    assert_eq!(status, 202);
    let id = first["id"].as_str().expect("id");
    let (_, first) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
    assert_eq!(first["status"], "solved");
    // The build takes milliseconds: the first job either runs on linear conflict while
    // it is under way, and says so, or finds it finished and uses it.
    let used = first["result"]["heuristic"].as_str();
    let note = first["result"]["note"].as_str();
    assert!(
        (used == Some("linear-conflict") && note.is_some_and(|n| n.contains("being built")))
            || (used == Some("pattern-database") && note.is_none()),
        "{first}"
    );
    let layout = "2x4:exact:0.1.2.3.4.5.6.7";
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let tables = tables_status(&server).await;
        if names(&tables["built"]).contains(&layout.to_string()) {
            assert!(names(&tables["building"]).is_empty() && names(&tables["queued"]).is_empty());
            break;
        }
        let pending = [&tables["building"], &tables["queued"]];
        assert!(
            pending
                .iter()
                .any(|l| names(l).contains(&layout.to_string())),
            "neither built nor under way: {tables}"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "never built: {tables}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, later, _) = post(&server, "/v1/solve", job).await;
    assert_eq!(status, 200);
    assert_eq!(later["result"]["heuristic"], "pattern-database");
    assert_eq!(later["result"]["length"], 1);
    assert!(later["result"].get("note").is_none(), "{later}");
    // An explicit pattern-database on a goal whose table is missing is refused at once,
    // and the table is queued so that a retry finds it.
    let other = json!({"puzzle": {"type": "sliding", "tiles": [1, 0, 2, 3, 4, 5, 7, 6], "cols": 4, "goal": [0, 1, 2, 3, 4, 5, 7, 6]},
        "heuristic": "pattern-database"});
    let response = client()
        .post(server.url("/v1/jobs"))
        .json(&other)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 422);
    assert!(response.headers().contains_key("retry-after"));
    let problem: Value = response.json().await.expect("problem");
    assert_eq!(problem["pointer"], "/heuristic");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, retried, _) = post(&server, "/v1/jobs", other.clone()).await;
        if status == 202 {
            let id = retried["id"].as_str().expect("id");
            let (_, done) = get(&server, &format!("/v1/jobs/{id}?wait=30")).await;
            assert_eq!(done["result"]["heuristic"], "pattern-database");
            break;
        }
        assert_eq!(status, 422);
        assert!(std::time::Instant::now() < deadline, "never admitted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

// Every API test runs on both job stores, each on a database of its own.
common::on_both_stores!(
    a_submitted_job_is_solved_optimally_and_its_plan_replays,
    solve_answers_synchronously_and_validate_explains_bad_plans,
    small_sync_solves_skip_the_queue_and_big_ones_go_through_it,
    errors_are_problem_json_with_the_right_status,
    a_running_job_is_cancelled_within_a_second_and_frees_its_worker,
    limits_end_jobs_exhausted,
    idempotent_retries_make_one_job,
    a_hundred_concurrent_submissions_all_finish_and_list_pages_through_them,
    finished_jobs_can_be_deleted,
    service_routes_describe_themselves,
    a_job_running_when_the_server_is_killed_finishes_after_restart,
    a_full_queue_answers_503_with_retry_after_and_loses_nothing_accepted,
    sigterm_puts_running_jobs_back_in_the_queue_without_using_an_attempt,
    sokoban_levels_are_solved_validated_and_described,
    a_large_table_is_never_built_for_a_request,
    a_cheap_table_is_built_in_the_background_on_first_use,
);
