//! Dependencies point one way: `http → jobs → puzzles, games → search`. The core layers
//! name none of the crates that belong to the edges, and the command line (clap) is the
//! binary's alone.

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

/// Whether a line of `text` outside comments names `name` (a path into it, or a `use`).
fn names(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        !line.starts_with("//")
            && (line.contains(&format!("{name}::")) || line.contains(&format!("use {name}")))
    })
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
            assert!(
                !names(text, name),
                "{path} uses {name}, which does not belong in src/{layer}"
            );
        }
    }
}

#[test]
fn the_engine_and_the_puzzles_do_no_io_and_speak_no_json() {
    for layer in ["search", "puzzles", "games"] {
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
            ],
        );
    }
}

#[test]
fn the_search_engine_knows_no_puzzle() {
    assert_layer_avoids("search", &["crate::puzzles", "crate::games"]);
}

#[test]
fn the_job_layer_knows_no_http() {
    assert_layer_avoids("jobs", &["axum", "crate::http", "serde"]);
}

#[test]
fn the_edge_does_not_touch_the_database() {
    assert_layer_avoids("http", &["sqlx"]);
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn code_map() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

#[test]
fn the_map_names_every_top_level_entry_and_every_source_file() {
    let map = code_map();
    // Build output and hidden files (CI, git, docker's ignore list) aside.
    for entry in std::fs::read_dir(root()).expect("the repository") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        assert!(
            map.contains(&name),
            "ARCHITECTURE.md does not name the top-level {name}"
        );
    }
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    for (path, _) in files {
        let path = Path::new(&path);
        let file = path.file_name().expect("a file").to_string_lossy();
        // A directory module is named by its directory.
        let named = if file == "mod.rs" {
            let dir = path
                .parent()
                .and_then(Path::file_name)
                .expect("a directory");
            format!("{}/", dir.to_string_lossy())
        } else {
            file.into_owned()
        };
        assert!(
            map.contains(&named),
            "ARCHITECTURE.md's code map does not name {}",
            path.display()
        );
    }
}

/// The sibling modules of `dir` each file names (`super::x`, `crate::http::x`).
fn sibling_uses(dir: &str) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    sources(&root().join("src").join(dir), &mut files);
    let module = |path: &str| {
        let path = Path::new(path);
        let stem = path.file_stem().expect("a file").to_string_lossy();
        if stem == "mod" {
            path.parent()
                .and_then(Path::file_name)
                .expect("a dir")
                .to_string_lossy()
                .into_owned()
        } else {
            stem.into_owned()
        }
    };
    let names: Vec<String> = files.iter().map(|(path, _)| module(path)).collect();
    files
        .iter()
        .map(|(path, text)| {
            let code: String = text
                .lines()
                .take_while(|line| !line.starts_with("#[cfg(test)]"))
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let uses = names
                .iter()
                .filter(|name| **name != module(path) && **name != dir)
                .filter(|name| {
                    code.contains(&format!("super::{name}"))
                        || code.contains(&format!("crate::{dir}::{name}"))
                })
                .cloned()
                .collect();
            (module(path), uses)
        })
        .collect()
}

#[test]
fn the_edges_modules_depend_on_each_other_one_way() {
    let uses = sibling_uses("http");
    let depends = |from: &str, to: &str| {
        uses.iter()
            .any(|(module, used)| module == from && used.iter().any(|u| u == to))
    };
    for (module, used) in &uses {
        for other in used {
            assert!(
                !depends(other, module),
                "http/{module} and http/{other} use each other"
            );
        }
    }
    // Who may call is decided apart from how a refusal is answered.
    let access = std::fs::read_to_string(root().join("src/http/access.rs")).expect("access.rs");
    assert!(!access.contains("AppState") && !access.contains("problem::"));
}

#[test]
fn only_the_binary_speaks_clap() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let binary = [src.join("main.rs"), src.join("cli")];
    let library: Vec<_> = files
        .iter()
        .filter(|(path, _)| !binary.iter().any(|b| Path::new(path).starts_with(b)))
        .collect();
    assert!(library.len() < files.len() && !library.is_empty());
    for (path, text) in library {
        assert!(
            !names(text, "clap"),
            "{path} uses clap: the command line belongs in src/main.rs and src/cli/"
        );
    }
}

#[test]
fn no_merge_conflict_is_left_in_the_sources_or_the_docs() {
    let mut files = Vec::new();
    sources(&root().join("src"), &mut files);
    for doc in [
        "README.md",
        "ARCHITECTURE.md",
        "CHANGELOG.md",
        "openapi.yaml",
    ] {
        let path = root().join(doc);
        files.push((
            path.display().to_string(),
            std::fs::read_to_string(&path).expect("read"),
        ));
    }
    for entry in std::fs::read_dir(root().join("docs")).expect("docs/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).expect("read"),
            ));
        }
    }
    for (path, text) in files {
        let marker = text
            .lines()
            .any(|l| l.starts_with("<<<<<<< ") || l.starts_with(">>>>>>> "));
        assert!(!marker, "{path} holds a merge conflict");
    }
}
