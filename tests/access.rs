//! Who may call and how often: API keys (401 without one, each key sees only its own
//! jobs: 404 for anyone else's), request rates and queued-job quotas per client (429
//! with Retry-After), operations on a listener of their own, and the security headers.

mod common;

use std::time::{Duration, Instant};

use common::{Db, Server, TestStore, client, conforming, metrics_text};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const KEY_A: &str = "alpha-7f3c9e1d2b4a6c8e0f1a3b5c";
/// Given to the server only as its SHA-256, in the keys file's `sha256:` form.
const KEY_B: &str = "bravo-0d2e4f6a8c1b3d5e7f9a2c4e";
const WRONG_KEY: &str = "wrong-5a7c9e1f3b5d7f9a1c3e5a7c";

/// Korf #88 with IDA* and Manhattan distance: a job that runs for many seconds.
fn hard_job() -> Value {
    json!({"puzzle": {"type": "sliding", "tiles": [15, 2, 12, 11, 14, 13, 9, 5, 1, 3, 8, 7, 0, 10, 6, 4], "goal": "blank-first"}, "algorithm": "ida-star", "heuristic": "manhattan"})
}

fn small_job() -> Value {
    json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 0, 7, 8]}})
}

/// A keys file in the test's folder: key A as is, key B by its digest, and a comment.
fn keys_file(store: &TestStore) -> String {
    let digest: String = Sha256::digest(KEY_B.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = store.dir.join("keys");
    std::fs::write(
        &path,
        format!("# puzzled's clients\n{KEY_A}\n\nsha256:{digest}\n"),
    )
    .expect("write the keys file");
    path.display().to_string()
}

/// A server on a fresh store that takes keys A and B, with `extra` flags.
async fn keyed_server(db: Db, name: &str, extra: &[&str]) -> Server {
    let store = db.fresh(name).await;
    let keys = keys_file(&store);
    let mut args = vec!["--api-keys-file", keys.as_str()];
    args.extend_from_slice(extra);
    Server::launch(&store, &args)
}

/// Calls `method path` with `key` (if any) and `body` (if any); the answer is held to
/// the contract. Returns the status, the JSON body (Null if none) and the headers.
async fn call(
    server: &Server,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value, HeaderMap) {
    let method_name =
        reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
    let mut request = client().request(method_name, server.url(path));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.expect("request");
    let headers = response.headers().clone();
    let (status, body) = conforming(method, path, response).await;
    (status, body, headers)
}

/// Every operation under /v1, with a body where it takes one.
fn v1_operations(id: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        ("post", "/v1/jobs".into(), Some(small_job())),
        ("get", "/v1/jobs".into(), None),
        ("get", format!("/v1/jobs/{id}"), None),
        ("delete", format!("/v1/jobs/{id}"), None),
        ("post", format!("/v1/jobs/{id}/cancel"), None),
        ("get", format!("/v1/jobs/{id}/events"), None),
        ("post", "/v1/solve".into(), Some(small_job())),
        (
            "post",
            "/v1/validate".into(),
            Some(json!({"puzzle": small_job()["puzzle"], "plan": "rr"})),
        ),
        ("get", "/v1/capabilities".into(), None),
    ]
}

fn problem_type(problem: &Value) -> &str {
    problem["type"]
        .as_str()
        .and_then(|t| t.rsplit('/').next())
        .unwrap_or_default()
}

async fn every_v1_route_needs_a_known_key_and_the_rest_stays_open(db: Db) {
    let server = keyed_server(db, "access_keys", &[]).await;
    let (status, job, _) = call(&server, "post", "/v1/jobs", Some(KEY_A), Some(&small_job())).await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().expect("id");
    for (method, path, body) in v1_operations(id) {
        for (key, challenge) in [
            (None, r#"Bearer realm="puzzled""#),
            (
                Some(WRONG_KEY),
                r#"Bearer realm="puzzled", error="invalid_token""#,
            ),
        ] {
            let (status, problem, headers) = call(&server, method, &path, key, body.as_ref()).await;
            assert_eq!(status, 401, "{method} {path} with {key:?}: {problem}");
            assert_eq!(problem_type(&problem), "unauthorized", "{problem}");
            assert_eq!(headers["www-authenticate"], challenge, "{method} {path}");
            assert_eq!(headers["cache-control"], "no-store");
        }
    }
    // The hashed form of the keys file lets key B in.
    let (status, _, _) = call(&server, "get", "/v1/capabilities", Some(KEY_B), None).await;
    assert_eq!(status, 200);
    // The page, the widget, the contract and the operations routes need no key.
    for path in [
        "/",
        "/embed.js",
        "/assets/app.js",
        "/openapi.yaml",
        "/healthz",
        "/metrics",
    ] {
        let response = client()
            .get(server.url(path))
            .send()
            .await
            .expect("open route");
        assert_eq!(response.status(), 200, "{path}");
    }
}

/// Key B learns nothing of key A's jobs: each route answers exactly as for a job that
/// does not exist, and B's list, cancels, deletes and idempotency keys never reach them.
async fn a_job_is_seen_and_touched_only_with_the_key_that_made_it(db: Db) {
    let server = keyed_server(db, "access_owner", &["--workers", "1"]).await;
    let submit = async |key: &str, idempotency_key: &str, body: Value| -> String {
        let response = client()
            .post(server.url("/v1/jobs"))
            .bearer_auth(key)
            .header("idempotency-key", idempotency_key)
            .json(&body)
            .send()
            .await
            .expect("send");
        let (status, job) = conforming("post", "/v1/jobs", response).await;
        assert_eq!(status, 202, "{job}");
        job["id"].as_str().expect("id").to_string()
    };
    // A's hard job holds the one worker; its small one waits.
    let a_id = submit(KEY_A, "order-1", hard_job()).await;
    let a_waiting = submit(KEY_A, "order-2", small_job()).await;
    // An inline solve is stored as A's too.
    let (status, solved, _) = call(
        &server,
        "post",
        "/v1/solve",
        Some(KEY_A),
        Some(&small_job()),
    )
    .await;
    assert_eq!((status, solved["status"].as_str()), (200, Some("solved")));
    let solved_id = solved["id"].as_str().expect("id").to_string();

    // Each answer names its own request; apart from that id, another key's job looks
    // exactly like one that does not exist.
    let without_id = |mut problem: Value| {
        problem.as_object_mut().map(|p| p.remove("request_id"));
        problem
    };
    let (_, absent, _) = call(&server, "get", "/v1/jobs/no-such-job", Some(KEY_B), None).await;
    let absent = without_id(absent);
    for id in [&a_id, &solved_id] {
        for (method, path) in [
            ("get", format!("/v1/jobs/{id}")),
            ("get", format!("/v1/jobs/{id}?wait=1")),
            ("post", format!("/v1/jobs/{id}/cancel")),
            ("delete", format!("/v1/jobs/{id}")),
            ("get", format!("/v1/jobs/{id}/events")),
        ] {
            let (status, problem, _) = call(&server, method, &path, Some(KEY_B), None).await;
            assert_eq!(status, 404, "{method} {path}: {problem}");
            assert_eq!(without_id(problem), absent, "{method} {path}");
        }
    }
    // A's Idempotency-Keys are A's: with the same body B gets a job of its own, not A's;
    // with another body no 422 says that A used the key.
    let b_same = submit(KEY_B, "order-1", hard_job()).await;
    let b_other = submit(KEY_B, "order-2", hard_job()).await;
    for b_id in [&b_same, &b_other] {
        assert!(![&a_id, &a_waiting].contains(&b_id));
    }
    assert_ne!(b_same, b_other);
    assert_eq!(
        submit(KEY_A, "order-1", hard_job()).await,
        a_id,
        "A's retry finds A's job"
    );

    let ids = |list: Value| -> Vec<String> {
        list["jobs"]
            .as_array()
            .expect("jobs")
            .iter()
            .map(|job| job["id"].as_str().expect("id").to_string())
            .collect()
    };
    let listed = async |key: &str| {
        let (_, list, _) = call(&server, "get", "/v1/jobs?limit=100", Some(key), None).await;
        let mut ids = ids(list);
        ids.sort();
        ids
    };
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    assert_eq!(listed(KEY_B).await, sorted(vec![b_same, b_other]));
    assert_eq!(
        listed(KEY_A).await,
        sorted(vec![a_id.clone(), a_waiting, solved_id.clone()])
    );

    // B's cancel and delete left A's job as it was; A may do both.
    let (status, job, _) = call(
        &server,
        "get",
        &format!("/v1/jobs/{a_id}"),
        Some(KEY_A),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        matches!(job["status"].as_str(), Some("queued" | "running")),
        "{job}"
    );
    let (status, job, _) = call(
        &server,
        "post",
        &format!("/v1/jobs/{a_id}/cancel"),
        Some(KEY_A),
        None,
    )
    .await;
    assert_eq!(status, 202, "{job}");
    let (status, _, _) = call(
        &server,
        "delete",
        &format!("/v1/jobs/{solved_id}"),
        Some(KEY_A),
        None,
    )
    .await;
    assert_eq!(status, 204);
}

/// A key's queued jobs count against that key alone.
async fn the_queued_jobs_quota_is_per_key(db: Db) {
    let server = keyed_server(
        db,
        "access_quota",
        &["--workers", "1", "--max-queued-per-client", "1"],
    )
    .await;
    // A's first job runs on the one worker (or waits), its second may wait: the third
    // is refused at the latest.
    let mut accepted = 0;
    loop {
        assert!(accepted < 3, "A's queue never filled");
        let (status, body, headers) =
            call(&server, "post", "/v1/jobs", Some(KEY_A), Some(&hard_job())).await;
        if status == 429 {
            assert_eq!(problem_type(&body), "too-many-queued", "{body}");
            assert_eq!(headers["retry-after"], "5");
            break;
        }
        assert_eq!(status, 202, "{body}");
        accepted += 1;
    }
    // B's jobs wait behind A's running one, but B has a quota of its own.
    let (status, body, _) = call(&server, "post", "/v1/jobs", Some(KEY_B), Some(&hard_job())).await;
    assert_eq!(status, 202, "{body}");
    let (status, body, _) = call(&server, "post", "/v1/jobs", Some(KEY_B), Some(&hard_job())).await;
    assert_eq!(
        (status, problem_type(&body)),
        (429, "too-many-queued"),
        "{body}"
    );
}

#[tokio::test]
async fn a_client_over_its_rate_gets_429_with_retry_after_then_is_served_again() {
    let server = Server::launch(
        &Db::Sqlite.fresh("access_rate").await,
        &["--rate-limit", "1", "--rate-burst", "3"],
    );
    // A burst of 3, one more a second: a tight loop runs out at once.
    let mut served = 0;
    let (problem, headers) = loop {
        assert!(served < 10, "never limited");
        let (status, body, headers) = call(&server, "get", "/v1/capabilities", None, None).await;
        if status == 429 {
            break (body, headers);
        }
        assert_eq!(status, 200);
        served += 1;
    };
    assert!(served >= 3, "the burst is served: {served}");
    assert_eq!(problem_type(&problem), "rate-limited", "{problem}");
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(headers["content-type"], "application/problem+json");
    // Every /v1 route is limited; the page and operations are not.
    let (status, _, _) = call(&server, "post", "/v1/solve", None, Some(&small_job())).await;
    assert_eq!(status, 429);
    for path in ["/", "/healthz", "/metrics"] {
        let response = client()
            .get(server.url(path))
            .send()
            .await
            .expect("open route");
        assert_eq!(response.status(), 200, "{path}");
    }
    // Waiting as long as Retry-After says is enough.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (status, _, _) = call(&server, "get", "/v1/capabilities", None, None).await;
    assert_eq!(status, 200, "a token came back after Retry-After");
}

#[tokio::test]
async fn with_keys_each_key_has_a_rate_of_its_own() {
    // One request in 1000 s after a burst of 2: nothing refills during the test.
    let server = keyed_server(
        Db::Sqlite,
        "access_rate_keys",
        &["--rate-limit", "0.001", "--rate-burst", "2"],
    )
    .await;
    for _ in 0..2 {
        let (status, _, _) = call(&server, "get", "/v1/capabilities", Some(KEY_A), None).await;
        assert_eq!(status, 200);
    }
    let (status, problem, headers) =
        call(&server, "get", "/v1/capabilities", Some(KEY_A), None).await;
    assert_eq!((status, problem_type(&problem)), (429, "rate-limited"));
    let wait: u64 = headers["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((999..=1000).contains(&wait), "{wait}");
    let (status, _, _) = call(&server, "get", "/v1/capabilities", Some(KEY_B), None).await;
    assert_eq!(status, 200, "B is not held back by A");
    // Refused requests count against their address: guessing keys is limited too.
    for (key, expected) in [(None, 401), (Some(WRONG_KEY), 401), (Some(WRONG_KEY), 429)] {
        let (status, _, _) = call(&server, "get", "/v1/capabilities", key, None).await;
        assert_eq!(status, expected, "{key:?}");
    }
    let (status, _, _) = call(&server, "get", "/v1/capabilities", Some(KEY_B), None).await;
    assert_eq!(
        status, 200,
        "a key is not held back by its address's guesses"
    );
    let text = metrics_text(&server).await;
    assert!(
        text.contains(r#"puzzled_requests_refused_total{reason="rate_limited"} 2"#),
        "{text}"
    );
    assert!(text.contains("puzzled_rate_limited_callers 3"), "{text}");
}

#[tokio::test]
async fn ops_bind_moves_health_readiness_and_metrics_off_the_api_listener() {
    let server = Server::launch(
        &Db::Sqlite.fresh("access_ops").await,
        &["--ops-bind", "127.0.0.1:0"],
    );
    let ops = server.ops_base.clone().expect("ops_address in the log");
    assert_ne!(ops, server.base);
    let http = client();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = http
            .get(format!("{ops}/readyz"))
            .send()
            .await
            .expect("readyz");
        if ready.status() == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "/readyz never ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for path in ["/healthz", "/metrics"] {
        let response = http.get(format!("{ops}{path}")).send().await.expect("ops");
        assert_eq!(response.status(), 200, "{path}");
    }
    for path in ["/healthz", "/readyz", "/metrics"] {
        let response = http.get(server.url(path)).send().await.expect("api");
        assert_eq!(response.status(), 404, "{path} on the API listener");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
    }
    // And the operations listener serves nothing else.
    for path in ["/v1/capabilities", "/", "/openapi.yaml"] {
        let response = http.get(format!("{ops}{path}")).send().await.expect("ops");
        assert_eq!(response.status(), 404, "{path} on the ops listener");
    }
    let (status, _, _) = call(&server, "get", "/v1/capabilities", None, None).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_page_denies_framing_and_every_answer_declares_its_type() {
    let server = keyed_server(Db::Sqlite, "access_headers", &[]).await;
    let http = client();
    let page = http.get(server.url("/")).send().await.expect("page");
    let headers = page.headers();
    let policy = headers["content-security-policy"].to_str().expect("ascii");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let embed = http
        .get(server.url("/embed.js"))
        .send()
        .await
        .expect("embed");
    assert_eq!(embed.headers()["x-content-type-options"], "nosniff");
    // Job data is the caller's alone: no cache keeps it.
    for (key, path, status) in [
        (Some(KEY_A), "/v1/jobs", 200),
        (Some(KEY_A), "/v1/capabilities", 200),
        (Some(KEY_A), "/v1/jobs/no-such-job", 404),
        (None, "/v1/jobs", 401),
    ] {
        let (got, _, headers) = call(&server, "get", path, key, None).await;
        assert_eq!(got, status, "{path}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(headers["cache-control"], "no-store", "{path}");
    }
    for path in ["/healthz", "/openapi.yaml", "/no-such-route"] {
        let response = http.get(server.url(path)).send().await.expect("open");
        assert_eq!(
            response.headers()["x-content-type-options"],
            "nosniff",
            "{path}"
        );
    }
}

/// Each test here that depends on the store, once on SQLite and once on PostgreSQL.
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(super::Db::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(super::Db::Postgres).await
                }
            )*
        }
    };
}

on_both_stores!(
    every_v1_route_needs_a_known_key_and_the_rest_stays_open,
    a_job_is_seen_and_touched_only_with_the_key_that_made_it,
    the_queued_jobs_quota_is_per_key,
);
