//! 2048 through the REST service: a position's best move and every move's value, the
//! anytime job that streams its answer and keeps it when cancelled, the playout job
//! whose record `/v1/validate` replays, and the bad requests each refused with its
//! field named.

mod common;

use std::collections::BTreeMap;

use common::{Db, Server, finished, post};
use serde_json::{Value, json};

/// A mid-game 4×4 position with every move legal.
const BOARD: [u64; 16] = [2, 4, 8, 16, 0, 2, 0, 4, 0, 0, 2, 0, 0, 0, 0, 2];

fn position(cells: &[u64], rest: Value) -> Value {
    let mut request = json!({"puzzle": {"type": "2048", "cells": cells}});
    for (key, value) in rest.as_object().expect("fields") {
        request[key] = value.clone();
    }
    request
}

/// The answer's move is the best of its move values, and its value is that move's.
fn assert_consistent(result: &Value) {
    let values: BTreeMap<String, f64> =
        serde_json::from_value(result["move_values"].clone()).expect("move values");
    let best = result["move"].as_str().expect("a move");
    let top = values.values().copied().fold(f64::MIN, f64::max);
    assert_eq!(values[best], top, "{result}");
    assert_eq!(result["value"].as_f64(), Some(top), "{result}");
}

async fn a_position_gets_its_best_move_and_every_moves_value(db: Db) {
    let server = Server::start(db, "twenty48_move").await;
    for algorithm in ["expectimax", "best-first", "greedy"] {
        let request = position(
            &BOARD,
            json!({"algorithm": algorithm, "limits": {"max_nodes": 5000}}),
        );
        let (status, job, _) = post(&server, "/v1/solve", request).await;
        assert_eq!(status, 200, "{job}");
        assert_eq!(job["status"], "solved", "{job}");
        let result = &job["result"];
        assert_eq!(result["algorithm"], algorithm);
        assert_eq!(result["exact"], false);
        assert_eq!(result["optimal"], false);
        assert_eq!(
            result["move_values"].as_object().expect("values").len(),
            4,
            "{result}"
        );
        assert_consistent(result);
        assert!(result["nodes_expanded"].as_u64() > Some(0));
    }

    // A 2×2 board solved exactly: the chance of reaching 16 is proved, in [0, 1].
    let small = json!({"puzzle": {"type": "2048", "rows": 2, "cols": 2, "cells": [2, 0, 4, 2]},
        "algorithm": "exact", "objective": {"reach": 16}});
    let (_, job, _) = post(&server, "/v1/solve", small.clone()).await;
    assert_eq!(job["status"], "solved", "{job}");
    assert_eq!(job["result"]["exact"], true);
    assert_eq!(job["result"]["optimal"], true);
    let chance = job["result"]["value"].as_f64().expect("a value");
    assert!((0.0..=1.0).contains(&chance) && chance > 0.0, "{job}");
    assert_consistent(&job["result"]);
    assert_eq!(job["request"]["objective"], json!({"reach": 16}));
    // The seed's best-first search, grown to the game's ends, proves the same value.
    let mut deep = small;
    deep["algorithm"] = json!("best-first");
    let (_, again, _) = post(&server, "/v1/solve", deep).await;
    assert_eq!(again["result"]["exact"], true, "{again}");
    let other = again["result"]["value"].as_f64().expect("a value");
    assert!((other - chance).abs() <= 1e-9 * chance, "{other} {chance}");

    // Exact solving cannot finish a 4×4 game: it stops, saying why, with an answer.
    let (_, job, _) = post(
        &server,
        "/v1/solve",
        position(&BOARD, json!({"algorithm": "exact"})),
    )
    .await;
    assert_eq!(
        (job["status"].as_str(), job["reason"].as_str()),
        (Some("exhausted"), Some("memory_limit")),
        "{job}"
    );
    assert_eq!(job["result"]["exact"], false);
    assert_consistent(&job["result"]);

    // A full board without merges: the game is over, and there is no move.
    let over = json!({"puzzle": {"type": "2048", "rows": 2, "cols": 2, "cells": [2, 4, 4, 2]}});
    let (_, job, _) = post(&server, "/v1/solve", over).await;
    assert_eq!(job["status"], "solved", "{job}");
    assert_eq!(job["result"]["move"], Value::Null);
    assert_eq!(job["result"]["move_values"], json!({}));
}

async fn an_anytime_job_streams_its_answer_and_keeps_it_when_cancelled(db: Db) {
    let server = Server::start(db, "twenty48_cancel").await;
    let request = position(
        &BOARD,
        json!({"algorithm": "best-first", "limits": {"timeout_ms": 60000}}),
    );
    let (status, job, _) = post(&server, "/v1/jobs", request).await;
    assert_eq!(status, 202, "{job}");
    let id = job["id"].as_str().expect("id").to_string();
    let (_stream, seen) = common::stream_until(&server, &id, "\"move_values\"").await;
    assert!(seen.contains("\"move\""), "{seen}");
    let done = common::cancel_promptly(&server, &id).await;
    assert_eq!(done["status"], "cancelled");
    assert_consistent(&done["result"]);
    assert_eq!(done["result"]["exact"], false);
}

async fn a_playout_plays_a_whole_game_that_validate_replays(db: Db) {
    let server = Server::start(db, "twenty48_playout").await;
    let request = json!({"puzzle": {"type": "2048"}, "algorithm": "greedy",
        "playout": {"seed": 11, "nodes_per_move": 10}});
    let (status, job, _) = post(&server, "/v1/jobs", request.clone()).await;
    assert_eq!(status, 202, "{job}");
    let done = finished(&server, job["id"].as_str().expect("id")).await;
    assert_eq!(done["status"], "solved", "{done}");
    assert_eq!(done["request"]["playout"]["seed"], 11);
    let game = &done["result"]["playout"];
    let moves = game["moves"].as_u64().expect("moves");
    assert!(moves > 50, "{game}");
    assert_eq!(
        game["record"]["moves"].as_str().map(str::len),
        Some(moves as usize)
    );
    assert_eq!(
        game["record"]["spawns"].as_str().map(str::len),
        Some(2 * moves as usize)
    );
    let record = game["record"].clone();
    let (status, check, _) = post(
        &server,
        "/v1/validate",
        json!({"game": record, "score": game["score"]}),
    )
    .await;
    assert_eq!(status, 200, "{check}");
    assert_eq!(check["legal"], true, "{check}");
    assert_eq!(check["over"], true);
    assert_eq!(check["score_matches"], true);
    assert_eq!(check["moves"], game["moves"]);
    assert_eq!(check["max_tile"], game["max_tile"]);

    // The same seed and budget play the same game.
    let (_, again, _) = post(&server, "/v1/solve", request).await;
    assert_eq!(again["result"]["playout"]["record"], record);

    // A claimed score that is not the replayed one is told apart.
    let (_, check, _) = post(
        &server,
        "/v1/validate",
        json!({"game": record, "score": game["score"].as_u64().map(|s| s + 4)}),
    )
    .await;
    assert_eq!(check["legal"], true);
    assert_eq!(check["score_matches"], false);

    // A move that changes nothing, and a spawn on a full cell, end the replay there.
    let start = json!([2, 0, 0, 2]);
    for (moves, spawns, step, reason) in [
        ("ll", "1422", 2, "changes nothing"),
        ("l", "02", 1, "not empty"),
        ("lu", "1452", 2, "not on the board"),
    ] {
        let (status, check, _) = post(
            &server,
            "/v1/validate",
            json!({"game": {"rows": 2, "cols": 2, "start": start, "moves": moves, "spawns": spawns}}),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(check["legal"], false, "{check}");
        assert_eq!(check["error"]["step"], step, "{check}");
        assert_eq!(check["moves"], step - 1, "{check}");
        let why = check["error"]["reason"].as_str().expect("a reason");
        assert!(why.contains(reason), "{why}");
    }
}

async fn bad_2048_requests_are_refused_naming_the_field(db: Db) {
    let server = Server::start(db, "twenty48_bad").await;
    let sliding = json!({"type": "sliding", "tiles": [1, 2, 3, 4, 5, 6, 7, 8, 0]});
    let jobs = [
        (position(&[2, 4], json!({})), "/puzzle/cells"),
        (
            json!({"puzzle": {"type": "2048", "rows": 2, "cols": 2, "cells": [2, 3, 0, 0]}}),
            "/puzzle/cells/1",
        ),
        (
            json!({"puzzle": {"type": "2048", "rows": 5, "cols": 4, "cells": vec![0; 20]}}),
            "/puzzle/rows",
        ),
        (json!({"puzzle": {"type": "2048"}}), "/puzzle/cells"),
        (
            json!({"puzzle": {"type": "2048", "tiles": [1], "cells": BOARD}}),
            "/puzzle/tiles",
        ),
        (
            position(&BOARD, json!({"algorithm": "ida-star"})),
            "/algorithm",
        ),
        (
            json!({"puzzle": sliding, "algorithm": "expectimax"}),
            "/algorithm",
        ),
        (
            position(&BOARD, json!({"heuristic": "manhattan"})),
            "/heuristic",
        ),
        (
            position(&BOARD, json!({"objective": "optimal"})),
            "/objective",
        ),
        (
            position(&BOARD, json!({"objective": {"reach": 3}})),
            "/objective/reach",
        ),
        (
            json!({"puzzle": sliding, "objective": {"reach": 2048}}),
            "/objective",
        ),
        (position(&BOARD, json!({"weight": 2})), "/weight"),
        (
            position(&BOARD, json!({"playout": {"seed": 1}})),
            "/playout",
        ),
        (
            json!({"puzzle": sliding, "playout": {"seed": 1, "nodes_per_move": 5}}),
            "/playout",
        ),
        (
            position(&BOARD, json!({"playout": {"ms_per_move": 999_999_999}})),
            "/playout/ms_per_move",
        ),
        (
            position(
                &BOARD,
                json!({"playout": {"seed": -1, "nodes_per_move": 5}}),
            ),
            "/playout/seed",
        ),
    ];
    for (body, pointer) in jobs {
        let (status, problem, _) = post(&server, "/v1/jobs", body.clone()).await;
        assert_eq!(status, 422, "{body}: {problem}");
        assert_eq!(problem["pointer"], pointer, "{body}: {problem}");
    }
    let record = |moves: &str, spawns: &str| json!({"rows": 2, "cols": 2, "start": [2, 0, 0, 2], "moves": moves, "spawns": spawns});
    let short = json!({"rows": 2, "cols": 2, "start": [2, 0, 0], "moves": "", "spawns": ""});
    let checks = [
        (json!({"game": record("x", "22")}), "/game/moves"),
        (json!({"game": record("u", "28")}), "/game/spawns"),
        (json!({"game": record("u", "z2")}), "/game/spawns"),
        (json!({"game": record("uu", "22")}), "/game/spawns"),
        (json!({"game": short}), "/game/start"),
        (json!({"game": record("u", "22"), "plan": "u"}), ""),
        (
            json!({"puzzle": {"type": "2048", "cells": BOARD}, "plan": "u"}),
            "/plan",
        ),
    ];
    for (body, pointer) in checks {
        let (status, problem, _) = post(&server, "/v1/validate", body.clone()).await;
        assert_eq!(status, 422, "{body}: {problem}");
        assert_eq!(problem["pointer"], pointer, "{body}: {problem}");
    }
}

common::on_both_stores!(
    a_position_gets_its_best_move_and_every_moves_value,
    an_anytime_job_streams_its_answer_and_keeps_it_when_cancelled,
    a_playout_plays_a_whole_game_that_validate_replays,
    bad_2048_requests_are_refused_naming_the_field,
);
