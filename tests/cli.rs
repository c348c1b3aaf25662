//! The `puzzled` binary as a user runs it: flags, JSON in and out, exit codes, and
//! one-line errors for bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn puzzled(args: &[&str], stdin: Option<&str>) -> Output {
    let data_dir = std::env::temp_dir().join(format!("puzzled-cli-test-{}", std::process::id()));
    let mut child = Command::new(env!("CARGO_BIN_EXE_puzzled"))
        .args(args)
        .env("PUZZLED_DATA_DIR", &data_dir)
        .env("PUZZLED_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("puzzled starts");
    let mut input = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).expect("write stdin");
    }
    drop(input);
    child.wait_with_output().expect("puzzled finishes")
}

fn json(output: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn solve_by_flags_prints_an_optimal_plan() {
    let output = puzzled(&["solve", "--tiles", "8 6 7 2 5 4 3 0 1", "--json"], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let v = json(&output);
    assert_eq!(v["status"], "solved");
    assert_eq!(v["result"]["length"], 31);
    assert_eq!(v["result"]["optimal"], true);
    assert_eq!(v["result"]["plan"].as_str().map(str::len), Some(31));
    assert_eq!(v["result"]["algorithm"], "ida-star");
    assert_eq!(v["result"]["heuristic"], "pattern-database");
    assert!(
        v["result"]["unique_states"].is_null(),
        "IDA* does not track states"
    );
    assert!(
        v["result"].get("boards").is_none(),
        "boards only when asked"
    );
}

#[test]
fn solve_reads_a_json_request_from_stdin() {
    let request = r#"{"puzzle":{"type":"sliding","tiles":[1,0,2,3,4,5],"cols":3,"goal":[0,1,2,3,4,5]},
        "algorithm":"a-star","heuristic":"manhattan","objective":"optimal",
        "limits":{"max_nodes":1000000,"timeout_ms":30000},"include_boards":true}"#;
    let output = puzzled(&["solve", "--json", "-"], Some(request));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let v = json(&output);
    assert_eq!(v["status"], "solved");
    assert_eq!(v["result"]["plan"], "l");
    assert_eq!(
        v["result"]["boards"],
        serde_json::json!([[0, 1, 2, 3, 4, 5]])
    );
    assert_eq!(
        v["result"]["unique_states"].as_u64().map(|n| n >= 2),
        Some(true)
    );
}

#[test]
fn human_output_lists_boards_and_statistics() {
    let output = puzzled(
        &[
            "solve",
            "--tiles",
            "1 2 3 4 5 6 7 0 8",
            "--boards",
            "--heuristic",
            "manhattan",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("solved: 1 moves (optimal)"), "{text}");
    assert!(text.contains("plan: r"), "{text}");
    assert!(
        text.contains("step 1:  1  2  3 |  4  5  6 |  7  8  0"),
        "{text}"
    );
}

#[test]
fn outcomes_without_a_plan_exit_1_and_say_why() {
    let unsolvable = puzzled(&["solve", "--tiles", "1 2 3 4 5 6 8 7 0", "--json"], None);
    assert_eq!(unsolvable.status.code(), Some(1));
    assert_eq!(json(&unsolvable)["status"], "unsolvable");

    let korf88 = "15 2 12 11 14 13 9 5 1 3 8 7 0 10 6 4";
    let limited = puzzled(
        &[
            "solve",
            "--tiles",
            korf88,
            "--goal",
            "blank-first",
            "--heuristic",
            "manhattan",
            "--max-nodes",
            "5000",
            "--json",
        ],
        None,
    );
    assert_eq!(limited.status.code(), Some(1));
    let v = json(&limited);
    assert_eq!(
        (v["status"].as_str(), v["reason"].as_str()),
        (Some("exhausted"), Some("node_limit"))
    );
    assert_eq!(v["result"]["nodes_expanded"], 5000);
    assert!(v["result"]["plan"].is_null());
}

#[test]
fn bad_input_gets_one_line_naming_the_problem_and_exit_2() {
    let cases: &[(&[&str], Option<&str>, &str)] = &[
        (
            &["solve", "--tiles", "1 2 3 4 5 6 7 8"],
            None,
            "8 tiles do not form a square board",
        ),
        (
            &["solve", "--tiles", "1 2 3 4 5 0", "--cols", "4"],
            None,
            "6 tiles do not fill whole rows of 4 columns",
        ),
        (
            &["solve", "--tiles", "1 2 3 4 4 6 7 8 0"],
            None,
            "tile 4 appears more than once",
        ),
        (
            &["solve", "--tiles", "1 2 3 4 5 6 7 8 9"],
            None,
            "tile 9 is out of range",
        ),
        (
            &["solve", "--tiles", "1 2 x 4 5 6 7 8 0"],
            None,
            "'x' (item 3) is not a whole number",
        ),
        (
            &["solve", "--tiles", "1 2 3 4 5 6 7 8 0", "--goal", "0 1 2 3"],
            None,
            "goal: has 4 tiles, but the board needs 9",
        ),
        (
            &[
                "solve",
                "--tiles",
                "1 2 3 4 5 6 7 8 0",
                "--goal",
                "0 1 1 2 3 4 5 6 7",
            ],
            None,
            "goal: tile 1 appears more than once",
        ),
        (
            &[
                "solve",
                "--tiles",
                "1 2 3 4 5 6 7 8 0",
                "--algorithm",
                "dfs",
            ],
            None,
            "unknown algorithm 'dfs'",
        ),
        (
            &[
                "solve",
                "--tiles",
                "1 2 3 4 5 6 7 8 0",
                "--heuristic",
                "magic",
            ],
            None,
            "unknown heuristic 'magic'",
        ),
        (
            &["solve", "--tiles", "1 2 3 4 5 6 7 8 0", "--weight", "0.5"],
            None,
            "weight must be a number of at least 1",
        ),
        (
            &[
                "solve",
                "--tiles",
                "1 2 3 4 5 6 7 0 8",
                "--heuristic",
                "pattern-database",
                "--cols",
                "3",
                "--partition",
                "6-6-3",
            ],
            None,
            "6-6-3 is defined for 4x4 boards",
        ),
        (
            &[
                "solve",
                "--tiles",
                "1 2 3 4 5 6 7 8 9 10 11 0",
                "--cols",
                "4",
                "--heuristic",
                "pattern-database",
            ],
            None,
            "pattern databases are laid out for",
        ),
        (&["solve"], None, "give a puzzle"),
        (
            &["solve", "-"],
            Some("{\"puzzle\": "),
            "invalid JSON request",
        ),
        (
            &["solve", "-"],
            Some(r#"{"puzzle":{"type":"sliding","tiles":[1,2,3,0]},"colour":"red"}"#),
            "unknown field `colour`",
        ),
        (
            &["solve", "-"],
            Some(r#"{"puzzle":{"type":"chess","tiles":[1,2,3,0]}}"#),
            "unknown puzzle type 'chess'",
        ),
        (
            &["solve", "-"],
            Some(r#"{"puzzle":{"type":"sliding","tiles":[1,2,-3,0]}}"#),
            "invalid JSON request",
        ),
        (
            &["bench", "--suite", "/nonexistent/suite.txt"],
            None,
            "cannot read /nonexistent/suite.txt",
        ),
    ];
    for (args, stdin, message) in cases {
        let output = puzzled(args, *stdin);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(message),
            "{args:?}: got '{err}', want '{message}'"
        );
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{args:?}: one line, got '{err}'"
        );
        assert!(!err.contains("panicked"), "{args:?}");
    }
}

fn write_suite(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("puzzled-{name}-{}.txt", std::process::id()));
    std::fs::write(&path, text).expect("write suite");
    path
}

#[test]
fn bench_reports_each_instance_and_a_summary() {
    let suite = write_suite(
        "suite",
        "# two 8-puzzles\n1 8 6 7 2 5 4 3 0 1 31\n2 1 2 3 4 5 6 0 7 8 2\n",
    );
    let output = puzzled(
        &["bench", "--suite", suite.to_str().expect("path"), "--json"],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["id"], "1");
    assert_eq!(
        (lines[0]["length"].as_u64(), lines[0]["expected"].as_u64()),
        (Some(31), Some(31))
    );
    assert_eq!(lines[1]["plan"], "rr");
    let summary = &lines[2]["summary"];
    assert_eq!(
        (summary["solved"].as_u64(), summary["total"].as_u64()),
        (Some(2), Some(2))
    );
    assert!(summary["median_ms"].is_number() && summary["total_ms"].is_number());
}

/// `puzzled bench ... | head -1`: once the reader is gone the command ends, without a
/// panic. The reader is closed before the command starts, so its first write finds it
/// gone.
#[test]
fn bench_ends_quietly_when_its_reader_goes_away() {
    let suite = write_suite("closed-pipe", "1 1 2 3 4 5 6 0 7 8 2\n");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_puzzled"))
        .args(["bench", "--suite", suite.to_str().expect("path"), "--json"])
        .env("PUZZLED_LOG", "warn")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("puzzled runs");
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
    assert!(!output.status.success());
}

#[test]
fn bench_fails_when_an_optimal_claim_contradicts_the_suite() {
    let suite = write_suite("wrong", "1 1 2 3 4 5 6 0 7 8 3\n");
    let output = puzzled(&["bench", "--suite", suite.to_str().expect("path")], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("1 claimed-optimal solution(s) differ"),
        "{}",
        stderr(&output)
    );
    let output = puzzled(
        &[
            "bench",
            "--suite",
            suite.to_str().expect("path"),
            "--algorithm",
            "greedy-best-first",
        ],
        None,
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "greedy makes no optimality claim"
    );
}

#[test]
fn bench_rejects_a_malformed_suite_line_with_its_line_number() {
    let suite = write_suite("malformed", "# header\n1 1 2 3 4 5 6 0 7 8 2\n2 1 2 3 x\n");
    let output = puzzled(&["bench", "--suite", suite.to_str().expect("path")], None);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(":3: 'x' is not a whole number"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bench_matrix_compares_every_algorithm_and_heuristic() {
    let suite = write_suite("matrix", "1 1 2 3 4 5 6 0 7 8 2\n2 4 1 3 0 2 6 7 5 8 5\n");
    let output = puzzled(
        &[
            "bench",
            "--suite",
            suite.to_str().expect("path"),
            "--matrix",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    // Four heuristics for five algorithms (FESS too), one row for breadth-first search.
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("| ") && l.contains("2/2"))
            .count(),
        21,
        "{text}"
    );
}

fn write_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("puzzled-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write file");
    path
}

const TWO_LEVELS: &str = "; Microban 1\n####\n# .#\n#  ###\n#*@  #\n#  $ #\n#  ###\n####\n\n\
                          ; Line\nTitle: A line\n#######\n#@ $ .#\n#######\n";

#[test]
fn solve_level_from_a_collection_prints_lurd_with_moves_and_pushes() {
    let file = write_file("two.xsb", TWO_LEVELS);
    let path = file.to_str().expect("path");
    let output = puzzled(
        &[
            "solve",
            "--level",
            path,
            "--index",
            "2",
            "--objective",
            "optimal",
            "--json",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let v = json(&output);
    assert_eq!(v["status"], "solved");
    assert_eq!(v["result"]["plan"], "rRR");
    assert_eq!(v["result"]["optimal"], true);
    assert_eq!(
        (
            v["result"]["moves"].as_u64(),
            v["result"]["pushes"].as_u64()
        ),
        (Some(3), Some(2))
    );
    assert_eq!(v["result"]["length"], 3);

    // Level 1, any objective by default, boards after each push, human output. The
    // found plan is shortened with the time left: on so small a level, to its optimum.
    let output = puzzled(&["solve", "--level", path, "--boards"], None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("8 pushes (push-optimal)"), "{text}");
    assert!(text.contains("push 1:\n####"), "{text}");

    let missing = puzzled(&["solve", "--level", path, "--index", "3"], None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("has 2 level(s); there is no level 3"));
}

#[test]
fn solve_reads_a_sokoban_json_request_and_rejects_bad_levels() {
    let request = r##"{"puzzle":{"type":"sokoban","level":"5#|#@$.#|5#"},"objective":"optimal"}"##;
    let output = puzzled(&["solve", "--json", "-"], Some(request));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json(&output)["result"]["plan"], "R");

    let bad = r##"{"puzzle":{"type":"sokoban","level":"6#|#@$$.#|6#"}}"##;
    let output = puzzled(&["solve", "--json", "-"], Some(bad));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("puzzle: level: 2 boxes but 1 goals"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn sokoban_bench_prints_a_line_per_level_and_checks_optima() {
    let file = write_file("bench.xsb", TWO_LEVELS);
    let optima = write_file("bench.optima", "1 8\n2 2\n");
    let path = file.to_str().expect("path");
    let args = [
        "bench",
        "--suite",
        path,
        "--optima",
        optima.to_str().expect("path"),
        "--objective",
        "optimal",
        "--jobs",
        "2",
        "--json",
    ];
    let output = puzzled(&args, None);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        (lines[0]["id"].as_u64(), lines[0]["title"].as_str()),
        (Some(1), Some("Microban 1"))
    );
    assert_eq!(
        (lines[0]["pushes"].as_u64(), lines[0]["optimal"].as_bool()),
        (Some(8), Some(true))
    );
    assert_eq!(
        (lines[1]["id"].as_u64(), lines[1]["title"].as_str()),
        (Some(2), Some("A line"))
    );
    assert_eq!(lines[1]["plan"], "rRR");
    for key in [
        "status",
        "length",
        "moves",
        "nodes_expanded",
        "nodes_generated",
        "elapsed_ms",
    ] {
        assert!(!lines[0][key].is_null(), "{key}");
    }
    assert_eq!(lines[2]["summary"]["solved"], 2);
    assert_eq!(lines[2]["summary"]["optimal"], 2);
    // Linux tells the load average; the run's start and end are reported.
    let load = &lines[2]["summary"]["load_average"];
    assert!(
        load.as_array().is_some_and(|l| l.len() == 2 && l.iter().all(|x| x.as_f64().is_some_and(|x| x >= 0.0))),
        "{load}"
    );

    let wrong = write_file("wrong.optima", "2 3\n");
    let output = puzzled(
        &[
            "bench",
            "--suite",
            path,
            "--optima",
            wrong.to_str().expect("path"),
            "--objective",
            "optimal",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("1 claimed-optimal solution(s) differ"));
}

#[test]
fn play_2048_plays_a_seeded_game_whose_record_replays() {
    let args = [
        "play",
        "2048",
        "--seed",
        "4",
        "--nodes-per-move",
        "30",
        "--json",
    ];
    let first = puzzled(&args, None);
    assert!(first.status.success(), "{}", stderr(&first));
    let game = json(&first);
    let moves = game["moves"].as_u64().expect("moves") as usize;
    assert!(moves > 100, "{game}");
    assert_eq!(game["seed"], 4);
    let record = &game["record"];
    assert_eq!(record["moves"].as_str().map(str::len), Some(moves));
    assert_eq!(record["spawns"].as_str().map(str::len), Some(2 * moves));
    // The record replays to the score it claims, and the same seed plays it again.
    let shape = puzzled::games::twenty48::Shape::new(4, 4).expect("4x4");
    let view: puzzled::http::wire::GameRecordView =
        serde_json::from_value(record.clone()).expect("a record");
    let record_in = view.into_record().expect("a game");
    let played = puzzled::games::twenty48::replay(shape, record_in.start, &record_in.steps)
        .expect("replays");
    assert_eq!(Some(played.score), game["score"].as_u64());
    assert!(played.over);
    assert_eq!(json(&puzzled(&args, None))["record"], game["record"]);

    let human = puzzled(
        &["play", "2048", "--seed", "4", "--nodes-per-move", "30"],
        None,
    );
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains(&format!("score {}", played.score)), "{text}");
    for (bad, says) in [
        (
            vec!["play", "2048", "--algorithm", "a-star"],
            "unknown game algorithm",
        ),
        (vec!["play", "2048", "--rows", "5"], "outside 2x2 to 4x4"),
    ] {
        let out = puzzled(&bad, None);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
    }
}
