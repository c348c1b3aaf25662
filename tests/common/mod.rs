//! Helpers shared by the integration tests that drive the real server: a fresh job
//! store per test (a SQLite file, or a PostgreSQL database of its own), the server
//! process on a random port, and HTTP calls whose answers are held to `openapi.yaml`.
// Each test binary uses its own part of these helpers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use sqlx::{Connection, Executor};

/// The job store a test runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// PostgreSQL for tests: `PUZZLED_TEST_POSTGRES`, else the machine's server (trust auth).
pub fn postgres_admin_url() -> String {
    std::env::var("PUZZLED_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// An empty job store and a scratch folder, both named after one test.
#[derive(Clone, Debug)]
pub struct TestStore {
    pub url: String,
    pub dir: PathBuf,
}

impl Db {
    pub async fn fresh(self, name: &str) -> TestStore {
        let label = match self {
            Db::Sqlite => "sqlite",
            Db::Postgres => "postgres",
        };
        let dir =
            std::env::temp_dir().join(format!("puzzled-{name}-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let url = match self {
            Db::Sqlite => format!("sqlite://{}", dir.join("jobs.db").display()),
            Db::Postgres => {
                let admin = postgres_admin_url();
                let database = format!("puzzled_{name}");
                let mut connection = sqlx::PgConnection::connect(&admin)
                    .await
                    .expect("PostgreSQL is up (.ci/run starts it)");
                connection
                    .execute(sqlx::AssertSqlSafe(format!(
                        "DROP DATABASE IF EXISTS {database} WITH (FORCE)"
                    )))
                    .await
                    .expect("drop the test database");
                connection
                    .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {database}")))
                    .await
                    .expect("create the test database");
                let (server, _) = admin.rsplit_once('/').expect("a database in the URL");
                format!("{server}/{database}")
            }
        };
        TestStore { url, dir }
    }
}

pub struct Server {
    pub child: Child,
    pub base: String,
    /// Where health, readiness and metrics are served when `--ops-bind` moved them.
    pub ops_base: Option<String>,
    pub store: TestStore,
}

impl Server {
    /// Starts `puzzled serve` on `store` with two search threads, plus `extra` flags.
    pub fn launch(store: &TestStore, extra: &[&str]) -> Server {
        let dir = &store.dir;
        let database = &store.url;
        let mut child = Command::new(env!("CARGO_BIN_EXE_puzzled"))
            .args(["serve", "--bind", "127.0.0.1:0", "--database-url", database])
            .args(extra)
            // Two search threads unless `extra` says otherwise.
            .env("PUZZLED_WORKERS", "2")
            .env("PUZZLED_DATA_DIR", dir.join("tables"))
            .env("PUZZLED_LOG", "info")
            // Building tables in the background would only slow the tests down.
            .env("PUZZLED_WARM_TABLES", "false")
            // Every test calls from 127.0.0.1, many of them faster than one client
            // would; the tests of the rate limit say `--rate-limit`, which wins.
            .env("PUZZLED_RATE_LIMIT", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        // The server logs its address once it listens.
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        // `address=HOST:PORT`, then `ops_address=HOST:PORT` with `--ops-bind`.
        let listening = |line: &str, field: &str| {
            line.split(field)
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map(|address| format!("http://{address}"))
        };
        let (base, ops_base) = loop {
            let line = lines
                .next()
                .expect("server exited before listening")
                .expect("log line");
            if let Some(base) = listening(&line, "address=") {
                break (base, listening(&line, "ops_address="));
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            base,
            ops_base,
            store: store.clone(),
        }
    }

    /// A server on a fresh store named `name`.
    pub async fn start(db: Db, name: &str) -> Server {
        Server::launch(&db.fresh(name).await, &[])
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `openapi.yaml`, read once: every JSON response the tests see is held to it.
pub struct Contract {
    pub spec: Value,
}

impl Contract {
    pub fn get() -> &'static Contract {
        static CONTRACT: std::sync::OnceLock<Contract> = std::sync::OnceLock::new();
        CONTRACT.get_or_init(|| {
            let text =
                std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
                    .expect("openapi.yaml");
            Contract {
                spec: serde_norway::from_str(&text).expect("openapi.yaml parses"),
            }
        })
    }

    /// The spec's path template matching `path` (its query string ignored).
    fn template(&self, path: &str) -> Option<&str> {
        let path = path.split('?').next().unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        self.spec["paths"]
            .as_object()?
            .keys()
            .map(String::as_str)
            .find(|template| {
                let parts: Vec<&str> = template.split('/').collect();
                parts.len() == segments.len()
                    && parts
                        .iter()
                        .zip(&segments)
                        .all(|(p, s)| p == s || (p.starts_with('{') && p.ends_with('}')))
            })
    }

    /// Follows a local `$ref` (`#/components/...`).
    fn resolve<'a>(&'a self, value: &'a Value) -> &'a Value {
        match value["$ref"].as_str() {
            Some(reference) => self
                .spec
                .pointer(reference.trim_start_matches('#'))
                .unwrap_or(&Value::Null),
            None => value,
        }
    }

    /// Panics unless the spec lists this status for this route and, for JSON, the body
    /// validates against the schema given for its media type.
    pub fn check(&self, method: &str, path: &str, status: u16, media_type: &str, body: &Value) {
        let template = self
            .template(path)
            .unwrap_or_else(|| panic!("openapi.yaml has no path for {path}"));
        let operation = &self.spec["paths"][template][method];
        assert!(
            operation.is_object(),
            "openapi.yaml lacks {method} {template}"
        );
        let response = self.resolve(&operation["responses"][status.to_string()]);
        assert!(
            response.is_object(),
            "openapi.yaml lists no {status} for {method} {template} (body {body})"
        );
        if !media_type.contains("json") {
            return;
        }
        let schema = &response["content"][media_type]["schema"];
        assert!(
            schema.is_object(),
            "openapi.yaml gives no {media_type} schema for {status} of {method} {template}"
        );
        // Local references resolve against the whole document.
        let mut rooted = schema.clone();
        rooted["components"] = self.spec["components"].clone();
        let validator = jsonschema::validator_for(&rooted).expect("schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{status} of {method} {path} breaks the contract: {errors:?}\nbody: {body}"
        );
    }
}

/// Reads a response's JSON body (Null when there is none) and checks it against the contract.
pub async fn conforming(method: &str, path: &str, response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let media_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or(v).trim().to_string())
        .unwrap_or_default();
    let body = response.json().await.unwrap_or(Value::Null);
    Contract::get().check(method, path, status, &media_type, &body);
    (status, body)
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(90))
        .build()
        .expect("client")
}

pub async fn post(
    server: &Server,
    path: &str,
    body: Value,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let response = client()
        .post(server.url(path))
        .json(&body)
        .send()
        .await
        .expect("request");
    let headers = response.headers().clone();
    let (status, body) = conforming("post", path, response).await;
    (status, body, headers)
}

/// What `server`'s `/metrics` shows now.
pub async fn metrics_text(server: &Server) -> String {
    let response = client()
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 200);
    response.text().await.expect("text")
}

pub async fn get(server: &Server, path: &str) -> (u16, Value) {
    let response = client()
        .get(server.url(path))
        .send()
        .await
        .expect("request");
    conforming("get", path, response).await
}

/// Opens job `id`'s event stream on `server` and reads it until a progress event: the
/// search is running. Returns the still-open stream and what it said so far.
pub async fn stream_until_progress(server: &Server, id: &str) -> (reqwest::Response, String) {
    stream_until(server, id, "event: progress").await
}

/// The finished job `id`, long-polled for up to a minute.
pub async fn finished(server: &Server, id: &str) -> Value {
    let (status, job) = get(server, &format!("/v1/jobs/{id}?wait=60")).await;
    assert_eq!(status, 200);
    assert!(
        !matches!(job["status"].as_str(), Some("queued" | "running")),
        "{job}"
    );
    job
}

/// Cancels running job `id` and waits for its end, which must come within two seconds
/// of the request; the job as it ended.
pub async fn cancel_promptly(server: &Server, id: &str) -> Value {
    let asked = std::time::Instant::now();
    let response = client()
        .post(server.url(&format!("/v1/jobs/{id}/cancel")))
        .send()
        .await
        .expect("cancel");
    assert!(response.status().is_success());
    let done = finished(server, id).await;
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    done
}

/// Opens job `id`'s event stream and reads it until it has said `needle`.
pub async fn stream_until(server: &Server, id: &str, needle: &str) -> (reqwest::Response, String) {
    let mut stream = client()
        .get(server.url(&format!("/v1/jobs/{id}/events")))
        .send()
        .await
        .expect("sse");
    let mut seen = String::new();
    while !seen.contains(needle) {
        let chunk = stream.chunk().await.expect("chunk").expect("stream open");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    (stream, seen)
}

/// Polls `/readyz` until it answers `status`; panics at `deadline`.
pub async fn until_readyz(server: &Server, status: u16, deadline: std::time::Instant) {
    let mut poll = tokio::time::interval(Duration::from_millis(200));
    loop {
        let ready = client()
            .get(server.url("/readyz"))
            .send()
            .await
            .expect("readyz");
        if ready.status().as_u16() == status {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/readyz never answered {status}"
        );
        poll.tick().await;
    }
}

/// Sends SIGTERM to `server` and waits for it to exit, polling every 20 ms; panics if it
/// still runs after `patience`. Returns its exit status and how long it took.
pub async fn sigterm_until_exit(
    server: &mut Server,
    patience: Duration,
) -> (std::process::ExitStatus, Duration) {
    let term = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(term.success());
    let signalled = std::time::Instant::now();
    let mut poll = tokio::time::interval(Duration::from_millis(20));
    loop {
        if let Some(exit) = server.child.try_wait().expect("wait") {
            return (exit, signalled.elapsed());
        }
        assert!(
            signalled.elapsed() < patience,
            "the server is still running {:?} after SIGTERM",
            signalled.elapsed()
        );
        poll.tick().await;
    }
}

/// Runs each named `async fn(Db)` as two tests, `sqlite::NAME` and `postgres::NAME`.
#[allow(unused_macros)]
macro_rules! on_both_stores {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test]
            async fn $test() {
                super::$test(super::Db::Sqlite).await
            })*
        }
        mod postgres {
            $(#[tokio::test]
            async fn $test() {
                super::$test(super::Db::Postgres).await
            })*
        }
    };
}
// Each test binary uses its own part of these helpers.
#[allow(unused_imports)]
pub(crate) use on_both_stores;
