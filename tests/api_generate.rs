//! Level generation and rating through the REST service: generate jobs on the worker
//! pool (progress, cancel, deadline, reproducible seeds, every plan replayed), the bad
//! requests each refused with its field named, and `/v1/rate`.

mod common;

use common::{Db, Server, finished, get, metrics_text, post};
use serde_json::{Value, json};

fn generate(fields: Value) -> Value {
    let mut generate = json!({"type": "sokoban"});
    for (key, value) in fields.as_object().expect("fields") {
        generate[key] = value.clone();
    }
    json!({ "generate": generate })
}

/// Every level's plan solves it, by `/v1/validate`, in the pushes and moves it claims.
async fn assert_levels_replay(server: &Server, levels: &[Value]) {
    for level in levels {
        let puzzle = json!({"type": "sokoban", "level": level["level"]});
        let (status, check, _) = post(
            server,
            "/v1/validate",
            json!({"puzzle": puzzle, "plan": level["plan"]}),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(check["solved"], true, "{level}");
        assert_eq!(check["pushes"], level["pushes"]);
        assert_eq!(check["length"], level["moves"]);
        assert_eq!(level["features"]["pushes"], level["pushes"]);
    }
}

async fn a_generate_job_makes_its_levels_and_the_same_seed_makes_them_again(db: Db) {
    let server = Server::start(db, "generate").await;
    let request = generate(json!({"width": 8, "height": 8, "boxes": 3, "count": 4, "seed": 7}));
    let (status, job, _) = post(&server, "/v1/jobs", request.clone()).await;
    assert_eq!(status, 202);
    assert_eq!(job["request"]["generate"]["method"], "reverse");
    let done = finished(&server, job["id"].as_str().expect("id")).await;
    assert_eq!(done["status"], "solved");
    let levels = done["result"]["levels"].as_array().expect("levels").clone();
    assert_eq!(levels.len(), 4);
    assert_eq!(done["result"]["generation"]["made"], 4);
    assert!(levels.iter().all(|l| l["optimal"] == true));
    assert_eq!(
        levels.iter().map(|l| l["id"].clone()).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    assert_levels_replay(&server, &levels).await;

    // The same request makes the same levels; a level's seed makes it first.
    let (status, again, _) = post(&server, "/v1/solve", request).await;
    assert_eq!(status, 200);
    assert_eq!(again["result"]["levels"], json!(levels));
    let third = &levels[2];
    let (_, alone, _) = post(
        &server,
        "/v1/solve",
        generate(json!({"count": 1, "seed": third["seed"]})),
    )
    .await;
    assert_eq!(alone["result"]["levels"][0]["level"], third["level"]);
    assert_eq!(alone["result"]["levels"][0]["seed"], third["seed"]);

    // No seed: a random one, echoed so the run can be repeated.
    let (_, random, _) = post(&server, "/v1/solve", generate(json!({}))).await;
    assert!(random["request"]["generate"]["seed"].is_u64(), "{random}");

    let metrics = metrics_text(&server).await;
    assert!(
        metrics.contains("puzzled_levels_generated_total{method=\"reverse\"}"),
        "{metrics}"
    );
}

async fn a_difficulty_filter_and_the_murase_method_keep_what_they_promise(db: Db) {
    let server = Server::start(db, "generate_kinds").await;
    let (_, job, _) = post(
        &server,
        "/v1/jobs",
        generate(json!({"count": 3, "seed": 3, "difficulty": "hard"})),
    )
    .await;
    let done = finished(&server, job["id"].as_str().expect("id")).await;
    assert_eq!(done["status"], "solved");
    let levels = done["result"]["levels"].as_array().expect("levels").clone();
    assert!(levels.iter().all(|l| l["label"] == "hard"), "{levels:?}");
    assert_levels_replay(&server, &levels).await;

    let (_, job, _) = post(
        &server,
        "/v1/jobs",
        generate(json!({"method": "murase", "count": 3, "seed": 1})),
    )
    .await;
    let done = finished(&server, job["id"].as_str().expect("id")).await;
    let levels = done["result"]["levels"].as_array().expect("levels").clone();
    assert!(levels.iter().all(|l| l["seed_class"] == "good"));
    assert_levels_replay(&server, &levels).await;
    let g = &done["result"]["generation"];
    let counted: u64 = ["dropped", "unsolvable", "easy", "good"]
        .iter()
        .map(|k| g[k].as_u64().expect("a murase count"))
        .sum();
    assert_eq!(Some(counted), g["tried"].as_u64(), "{g}");
    assert_eq!(g["good"], g["made"]);
}

async fn a_generate_job_streams_progress_and_is_cancelled_within_a_second(db: Db) {
    let server = Server::start(db, "generate_cancel").await;
    let request =
        generate(json!({"width": 10, "height": 10, "boxes": 4, "count": 1000, "seed": 5}));
    let (_, job, _) = post(&server, "/v1/jobs", request).await;
    let id = job["id"].as_str().expect("id").to_string();
    let (_stream, seen) = common::stream_until(&server, &id, "\"candidates_tried\"").await;
    assert!(seen.contains("\"levels_made\""), "{seen}");
    let done = common::cancel_promptly(&server, &id).await;
    assert_eq!(done["status"], "cancelled");
    // What was made before the cancel is kept, every plan replayed.
    let levels = done["result"]["levels"].as_array().expect("levels").clone();
    assert_eq!(done["result"]["generation"]["made"], levels.len());
    assert_levels_replay(&server, &levels).await;
}

async fn a_generate_job_ends_at_its_deadline_with_the_levels_made(db: Db) {
    let server = Server::start(db, "generate_deadline").await;
    let mut request =
        generate(json!({"width": 10, "height": 10, "boxes": 4, "count": 1000, "seed": 9}));
    request["limits"] = json!({"timeout_ms": 1500});
    let (_, job, _) = post(&server, "/v1/jobs", request).await;
    let done = finished(&server, job["id"].as_str().expect("id")).await;
    assert_eq!(
        (done["status"].as_str(), done["reason"].as_str()),
        (Some("exhausted"), Some("timeout"))
    );
    let ran = |field: &str| {
        chrono::DateTime::parse_from_rfc3339(done[field].as_str().expect("a time"))
            .expect("rfc 3339")
    };
    let took = ran("finished_at") - ran("started_at");
    assert!(took.num_milliseconds() < 2500, "{took}");
    let levels = done["result"]["levels"].as_array().expect("levels").clone();
    assert!(!levels.is_empty());
    assert_levels_replay(&server, &levels).await;
}

async fn bad_generate_requests_are_refused_naming_the_field(db: Db) {
    let server = Server::start(db, "generate_bad").await;
    let cases = [
        (generate(json!({"width": 40})), "/generate/width"),
        (generate(json!({"height": 2})), "/generate/height"),
        (generate(json!({"boxes": 0})), "/generate/boxes"),
        // More boxes than a 6x6 room holds.
        (
            generate(json!({"width": 6, "height": 6, "boxes": 5})),
            "/generate/boxes",
        ),
        (generate(json!({"count": 0})), "/generate/count"),
        (generate(json!({"count": 5000})), "/generate/count"),
        (generate(json!({"seed": 1u64 << 60})), "/generate/seed"),
        (generate(json!({"method": "magic"})), "/generate/method"),
        (
            generate(json!({"difficulty": "insane"})),
            "/generate/difficulty",
        ),
        (generate(json!({"width": "eight"})), "/generate/width"),
        (json!({"generate": {"type": "sliding"}}), "/generate/type"),
        (json!({"generate": {"type": "sokoban", "colour": 1}}), ""),
        (
            json!({"generate": {"type": "sokoban"}, "algorithm": "bfs"}),
            "/algorithm",
        ),
        (
            json!({"generate": {"type": "sokoban"}, "puzzle": {"type": "sokoban", "level": "#"}}),
            "/generate",
        ),
        (json!({}), ""),
    ];
    for (body, pointer) in cases {
        for path in ["/v1/jobs", "/v1/solve"] {
            let (status, problem, _) = post(&server, path, body.clone()).await;
            assert_eq!(status, 422, "{path} {body}: {problem}");
            if !pointer.is_empty() {
                assert_eq!(problem["pointer"], pointer, "{body}: {problem}");
            }
            assert!(problem["detail"].as_str().is_some_and(|d| !d.is_empty()));
        }
    }
    let (_, list) = get(&server, "/v1/jobs").await;
    assert_eq!(list["jobs"], json!([]), "nothing refused was queued");
}

async fn rate_scores_a_level_and_refuses_what_it_cannot_rate(db: Db) {
    let server = Server::start(db, "rate").await;
    // Made by the generator (seed 4): 14 pushes, proved optimal.
    let level = "########\n#@     #\n#####  #\n### #$ #\n#. $ $ #\n#      #\n###..###\n########\n";
    let (status, rating, _) = post(&server, "/v1/rate", json!({"level": level})).await;
    assert_eq!(status, 200, "{rating}");
    assert!(rating["score"].is_number());
    assert!(["easy", "medium", "hard"].contains(&rating["label"].as_str().expect("label")));
    let (_, check, _) = post(
        &server,
        "/v1/validate",
        json!({"puzzle": {"type": "sokoban", "level": level}, "plan": rating["plan"]}),
    )
    .await;
    assert_eq!(check["solved"], true);
    assert_eq!(check["pushes"], rating["pushes"]);
    assert_eq!(rating["optimal"], true);
    assert_eq!(rating["pushes"], 14);

    for (body, pointer) in [
        (json!({"level": "#####\n#@$ #\n#####"}), "/level"),
        // A box in a corner off its goal: no solution.
        (json!({"level": "######\n#@  $#\n#.   #\n######"}), "/level"),
        (json!({"level": 7}), "/level"),
        (json!({"plan": "R"}), ""),
    ] {
        let (status, problem, _) = post(&server, "/v1/rate", body.clone()).await;
        assert_eq!(status, 422, "{body}: {problem}");
        if !pointer.is_empty() {
            assert_eq!(problem["pointer"], pointer, "{body}: {problem}");
        }
    }
}

common::on_both_stores!(
    a_generate_job_makes_its_levels_and_the_same_seed_makes_them_again,
    a_difficulty_filter_and_the_murase_method_keep_what_they_promise,
    a_generate_job_streams_progress_and_is_cancelled_within_a_second,
    a_generate_job_ends_at_its_deadline_with_the_levels_made,
    bad_generate_requests_are_refused_naming_the_field,
    rate_scores_a_level_and_refuses_what_it_cannot_rate,
);
