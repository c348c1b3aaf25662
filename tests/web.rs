//! The web page, `embed.js` and CORS: their HTTP on the real server, then the page and the
//! widget in a real browser (`tests/browser/`, Debian's Chromium driven by playwright-core).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Contract, Db, Server, client, post};
use serde_json::json;

/// The modules `source` imports, as paths on the server (`from './assets/x.js'`).
fn imports(source: &str, served_at: &str) -> Vec<String> {
    let folder = served_at.rsplit_once('/').map_or("", |(folder, _)| folder);
    source
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .filter_map(|line| line.split(" from '").nth(1)?.split('\'').next())
        .map(|relative| {
            let mut parts: Vec<&str> = folder.split('/').collect();
            for part in relative.split('/') {
                match part {
                    "." => {}
                    ".." => {
                        parts.pop();
                    }
                    part => parts.push(part),
                }
            }
            parts.join("/")
        })
        .collect()
}

#[tokio::test]
async fn the_page_and_its_modules_are_served_with_types_validators_and_security_headers() {
    let server = Server::start(Db::Sqlite, "web-assets").await;
    let http = client();
    let page = http.get(server.url("/")).send().await.expect("page");
    assert_eq!(page.status(), 200);
    let headers = page.headers().clone();
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(headers["cache-control"], "no-cache");
    let policy = headers["content-security-policy"].to_str().expect("ascii");
    assert!(policy.starts_with("default-src 'self';"), "{policy}");
    assert!(!policy.contains("unsafe"), "{policy}");
    let html = page.text().await.expect("html");
    assert!(html.contains(r#"<script type="module" src="/assets/app.js">"#));
    // Nothing from another host: every script and style sheet is ours.
    assert!(!html.contains("http://") && !html.contains("https://"));

    // A current copy is answered 304, a stale one gets the file.
    let etag = headers["etag"].clone();
    let again = http
        .get(server.url("/"))
        .header("if-none-match", etag.clone())
        .send()
        .await
        .expect("revalidate");
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"], etag);
    let stale = http
        .get(server.url("/"))
        .header("if-none-match", "\"stale\"")
        .send()
        .await
        .expect("stale");
    assert_eq!(stale.status(), 200);
    for (status, path) in [(200, "/"), (304, "/")] {
        Contract::get().check("get", path, status, "text/html", &json!(null));
    }

    // Every module the page and embed.js import is served, as JavaScript.
    let mut pending = vec!["/assets/app.js".to_string(), "/embed.js".to_string()];
    let mut seen = Vec::new();
    while let Some(path) = pending.pop() {
        if seen.contains(&path) {
            continue;
        }
        let response = http.get(server.url(&path)).send().await.expect("module");
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(
            response.headers()["content-type"],
            "text/javascript; charset=utf-8",
            "{path}"
        );
        assert!(response.headers().contains_key("etag"), "{path}");
        Contract::get().check("get", &path, 200, "text/javascript", &json!(null));
        pending.extend(imports(&response.text().await.expect("source"), &path));
        seen.push(path);
    }
    assert!(seen.len() >= 8, "{seen:?}");
    for (path, content_type) in [
        ("/assets/player.css", "text/css; charset=utf-8"),
        ("/assets/style.css", "text/css; charset=utf-8"),
        ("/assets/icon.svg", "image/svg+xml"),
    ] {
        let response = http.get(server.url(path)).send().await.expect("asset");
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], content_type, "{path}");
    }
    let (status, problem) = common::get(&server, "/assets/nothing.js").await;
    assert_eq!((status, problem["status"].as_u64()), (404, Some(404)));
}

#[tokio::test]
async fn cors_lets_the_listed_origin_call_the_api_and_no_other() {
    const SITE: &str = "https://app.example";
    let store = Db::Sqlite.fresh("web-cors").await;
    let server = Server::launch(&store, &["--cors-origin", SITE]);
    let http = client();
    let preflight = |origin: &'static str| {
        http.request(reqwest::Method::OPTIONS, server.url("/v1/jobs"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type,idempotency-key",
            )
            .send()
    };
    let allowed = preflight(SITE).await.expect("preflight");
    assert_eq!(allowed.status(), 200);
    let headers = allowed.headers();
    assert_eq!(headers["access-control-allow-origin"], SITE);
    let allowed_headers = headers["access-control-allow-headers"]
        .to_str()
        .expect("ascii");
    assert!(
        allowed_headers.contains("idempotency-key"),
        "{allowed_headers}"
    );
    assert!(
        headers["access-control-allow-methods"]
            .to_str()
            .expect("ascii")
            .contains("POST")
    );
    let other = preflight("https://elsewhere.example")
        .await
        .expect("preflight");
    assert!(!other.headers().contains_key("access-control-allow-origin"));

    // The module, the job and its event stream all carry the header for the site.
    let (_, job, _) = post(
        &server,
        "/v1/jobs",
        json!({"puzzle": {"type": "sliding", "tiles": [1, 2, 3, 0]}}),
    )
    .await;
    let id = job["id"].as_str().expect("id");
    for path in [
        "/embed.js".to_string(),
        "/assets/client.js".to_string(),
        format!("/v1/jobs/{id}"),
        format!("/v1/jobs/{id}/events"),
    ] {
        let response = http
            .get(server.url(&path))
            .header("origin", SITE)
            .send()
            .await
            .expect("get");
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(
            response.headers()["access-control-allow-origin"],
            SITE,
            "{path}"
        );
    }
}

#[tokio::test]
async fn by_default_only_the_same_origin_may_call_and_a_bad_origin_stops_the_start() {
    let server = Server::start(Db::Sqlite, "web-same-origin").await;
    let response = client()
        .get(server.url("/v1/capabilities"))
        .header("origin", "https://app.example")
        .send()
        .await
        .expect("get");
    assert!(
        !response
            .headers()
            .contains_key("access-control-allow-origin")
    );

    let store = Db::Sqlite.fresh("web-bad-origin").await;
    let output = Command::new(env!("CARGO_BIN_EXE_puzzled"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &store.url,
        ])
        .args(["--cors-origin", "https://app.example/"])
        .output()
        .expect("run");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not an origin"), "{stderr}");
}

/// Where the browser tests' screenshots go: `target/browser-artifacts/`.
fn artifacts() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("browser-artifacts")
}

#[test]
fn the_page_and_the_widget_work_in_a_real_browser() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let chromium = std::env::var("PUZZLED_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let missing: Vec<String> = [
        (
            Path::new(&chromium).exists(),
            format!("{chromium} (Debian's chromium: apt-get install -y chromium)"),
        ),
        (
            folder.join("node_modules/playwright-core").exists(),
            "tests/browser/node_modules (run `npm ci` in tests/browser)".to_string(),
        ),
        (
            Command::new("node").arg("--version").output().is_ok(),
            "node (Node.js 20 or later)".to_string(),
        ),
    ]
    .into_iter()
    .filter(|(present, _)| !present)
    .map(|(_, what)| what)
    .collect();
    assert!(
        missing.is_empty(),
        "the browser tests need {}; .ci/run installs them",
        missing.join(", ")
    );
    let started = std::time::Instant::now();
    let output = Command::new("node")
        .args(["--test", "--test-reporter=spec", "browser.test.mjs"])
        .current_dir(&folder)
        .env("PUZZLED_BIN", env!("CARGO_BIN_EXE_puzzled"))
        .env("PUZZLED_ARTIFACTS", artifacts())
        .env("PUZZLED_CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success(),
        "the browser tests failed:\n{report}"
    );
    println!(
        "browser tests passed in {:.1} s; screenshots in {}\n{report}",
        started.elapsed().as_secs_f64(),
        artifacts().display()
    );
}
