//! The service's names are defined once, in the code's enums; the contract
//! (`openapi.yaml`) and the store's SQL must spell them the same way.

use std::path::Path;

use puzzled::games::twenty48::Dir;
use puzzled::http::wire::SCORE_OBJECTIVE;
use puzzled::jobs::tables::Refusal;
use puzzled::jobs::{AlgorithmChoice, ExhaustedReason, Heuristic, Objective, PuzzleKind, Status};
use puzzled::puzzles::sliding::GoalName;
use puzzled::puzzles::sliding::pdb::PartitionKind;
use puzzled::puzzles::sokoban::generate::Method;
use puzzled::puzzles::sokoban::generate::rating::{Label, SeedClass};
use serde_norway::Value;

fn openapi() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.yaml"))
        .expect("openapi.yaml");
    serde_norway::from_str(&text).expect("openapi.yaml parses")
}

fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(value, |v, key| {
        v.get(*key)
            .unwrap_or_else(|| panic!("openapi.yaml has no {}", path.join(".")))
    })
}

/// An enum's names in openapi.yaml, without the `null` a nullable field adds.
fn names(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .expect("an enum list")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn assert_same(what: &str, contract: Vec<String>, code: &[&str]) {
    assert_eq!(
        contract, code,
        "openapi.yaml's {what} names differ from the code's"
    );
}

#[test]
fn openapi_enums_are_the_codes_names() {
    let api = openapi();
    let schemas = at(&api, &["components", "schemas"]);
    let request = at(schemas, &["JobRequest", "properties"]);
    assert_same(
        "algorithm",
        names(at(request, &["algorithm", "enum"])),
        AlgorithmChoice::NAMES,
    );
    assert_same(
        "heuristic",
        names(at(request, &["heuristic", "enum"])),
        Heuristic::NAMES,
    );
    assert_same(
        "partition",
        names(at(request, &["partition", "enum"])),
        PartitionKind::NAMES,
    );
    let objectives = at(request, &["objective", "oneOf"])
        .as_sequence()
        .expect("objective is oneOf");
    assert_same(
        "objective",
        names(at(&objectives[0], &["enum"])),
        Objective::NAMES,
    );
    assert_same(
        "2048 objective",
        names(at(&objectives[1], &["enum"])),
        &[SCORE_OBJECTIVE],
    );
    assert_same(
        "2048 move value",
        names(at(schemas, &["MoveValues", "propertyNames", "enum"])),
        Dir::NAMES,
    );
    assert_same(
        "status",
        names(at(schemas, &["Status", "enum"])),
        Status::NAMES,
    );
    assert_same(
        "reason",
        names(at(schemas, &["Job", "properties", "reason", "enum"])),
        ExhaustedReason::NAMES,
    );
    let generate = at(schemas, &["GenerateRequest", "properties"]);
    assert_same(
        "generate method",
        names(at(generate, &["method", "enum"])),
        Method::NAMES,
    );
    assert_same(
        "generate difficulty",
        names(at(generate, &["difficulty", "enum"])),
        Label::NAMES,
    );
    let level = at(schemas, &["GeneratedLevel", "properties"]);
    assert_same("label", names(at(level, &["label", "enum"])), Label::NAMES);
    assert_same(
        "seed class",
        names(at(level, &["seed_class", "enum"])),
        SeedClass::NAMES,
    );
    let puzzles = at(schemas, &["Puzzle", "oneOf"])
        .as_sequence()
        .expect("Puzzle is oneOf");
    let kinds: Vec<String> = puzzles
        .iter()
        .map(|p| {
            at(p, &["properties", "type", "const"])
                .as_str()
                .expect("a puzzle type is a string")
                .to_string()
        })
        .collect();
    assert_same("puzzle type", kinds, PuzzleKind::NAMES);
    let goals = at(&puzzles[0], &["properties", "goal", "oneOf"])
        .as_sequence()
        .expect("goal is oneOf");
    assert_same("goal", names(at(&goals[0], &["enum"])), GoalName::NAMES);
    let refused = at(
        schemas,
        &["Tables", "properties", "refused", "items", "properties"],
    );
    assert_same(
        "table refusal",
        names(at(refused, &["reason", "enum"])),
        Refusal::NAMES,
    );
}

/// Every source file of the job store, split or not.
fn store_sources() -> Vec<(String, String)> {
    let jobs = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/jobs");
    let mut files = vec![jobs.join("store.rs")];
    if let Ok(dir) = std::fs::read_dir(jobs.join("store")) {
        files.extend(dir.map(|e| e.expect("a directory entry").path()));
    }
    files
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .filter_map(|f| Some((f.display().to_string(), std::fs::read_to_string(&f).ok()?)))
        .collect()
}

/// The names a SQL condition on `status` quotes: `= 'queued'` or
/// `NOT IN ('queued', 'running')`; none for a bound parameter.
fn quoted(condition: &str) -> Vec<&str> {
    let list = if let Some(value) = condition.strip_prefix("= '") {
        &condition[..3 + value.find('\'').unwrap_or(0) + 1]
    } else if condition.starts_with("IN (") || condition.starts_with("NOT IN (") {
        &condition[..condition.find(')').unwrap_or(condition.len())]
    } else {
        ""
    };
    list.split('\'').skip(1).step_by(2).collect()
}

#[test]
fn the_stores_sql_names_only_statuses_the_code_defines() {
    let sources = store_sources();
    assert!(
        !sources.is_empty(),
        "the store's sources are where expected"
    );
    let mut seen = 0;
    for (file, text) in &sources {
        for (at, _) in text.match_indices("status ") {
            for name in quoted(&text[at + "status ".len()..]) {
                seen += 1;
                assert!(
                    Status::parse(name).is_some(),
                    "{file}: SQL names status '{name}', which is not one of {:?}",
                    Status::NAMES
                );
            }
        }
    }
    assert!(seen >= 10, "found the store's status literals ({seen})");
}
