//! Dependencies point one way: `http → jobs → puzzles → search`. The core layers
//! name none of the crates that belong to the edges.

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).expect("read"),
            ));
        }
    }
}

fn assert_layer_avoids(layer: &str, crates: &[&str]) {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(layer),
        &mut files,
    );
    assert!(!files.is_empty(), "no sources under src/{layer}");
    for (path, text) in &files {
        for name in crates {
            let used = text.lines().any(|line| {
                let line = line.trim_start();
                !line.starts_with("//")
                    && (line.contains(&format!("{name}::"))
                        || line.contains(&format!("use {name}")))
            });
            assert!(
                !used,
                "{path} uses {name}, which does not belong in src/{layer}"
            );
        }
    }
}

#[test]
fn the_engine_and_the_puzzles_do_no_io_and_speak_no_json() {
    for layer in ["search", "puzzles"] {
        assert_layer_avoids(
            layer,
            &[
                "tokio",
                "sqlx",
                "axum",
                "serde",
                "serde_json",
                "crate::jobs",
                "crate::http",
                "crate::cli",
            ],
        );
    }
}

#[test]
fn the_search_engine_knows_no_puzzle() {
    assert_layer_avoids("search", &["crate::puzzles"]);
}

#[test]
fn the_job_layer_knows_no_http() {
    assert_layer_avoids("jobs", &["axum", "crate::http", "crate::cli", "serde"]);
}

#[test]
fn the_edge_does_not_touch_the_database() {
    assert_layer_avoids("http", &["sqlx"]);
}
