//! No Docker engine runs here, so the images are checked from the outside: every
//! command, flag and environment variable `docker/Dockerfile` and `docker/compose.yaml`
//! give `puzzled` must be ones the binary accepts.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).expect(path)
}

/// One way the images start `puzzled serve`: its arguments and environment.
struct Launch {
    name: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

/// The Dockerfile's `ENV` and `ENTRYPOINT`, then each compose service built from it,
/// whose `command` follows the entrypoint and whose `environment` adds to the image's.
fn launches() -> Vec<Launch> {
    let dockerfile = read("docker/Dockerfile");
    let instructions = dockerfile.replace("\\\n", " ");
    let mut image_env = BTreeMap::new();
    let mut entrypoint = Vec::new();
    for line in instructions.lines().map(str::trim) {
        if let Some(pairs) = line.strip_prefix("ENV ") {
            for pair in pairs.split_whitespace() {
                let (key, value) = pair.split_once('=').expect("ENV KEY=value");
                image_env.insert(key.to_string(), value.to_string());
            }
        }
        if let Some(exec) = line.strip_prefix("ENTRYPOINT ") {
            entrypoint = serde_json::from_str::<Vec<String>>(exec).expect("exec-form ENTRYPOINT");
        }
    }
    assert_eq!(entrypoint.first().map(String::as_str), Some("puzzled"));
    let entry_args = entrypoint[1..].to_vec();
    let mut found = vec![Launch {
        name: "image".into(),
        args: entry_args.clone(),
        env: image_env.clone(),
    }];
    let compose: Value = serde_norway::from_str(&read("docker/compose.yaml")).expect("compose");
    for (name, service) in compose["services"].as_object().expect("services") {
        if service["build"]["dockerfile"] != "docker/Dockerfile" {
            continue;
        }
        let mut args = entry_args.clone();
        args.extend(
            service["command"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| a.as_str().expect("string argument").to_string()),
        );
        let mut env = image_env.clone();
        for (key, value) in service["environment"].as_object().into_iter().flatten() {
            env.insert(
                key.clone(),
                value.as_str().expect("string value").to_string(),
            );
        }
        found.push(Launch {
            name: name.clone(),
            args,
            env,
        });
    }
    found
}

#[test]
fn the_images_start_puzzled_with_flags_and_variables_it_accepts() {
    let launches = launches();
    assert!(
        launches.iter().any(|l| l.name == "worker") && launches.iter().any(|l| l.name == "api"),
        "compose has an api and a worker service"
    );
    let help = Command::new(env!("CARGO_BIN_EXE_puzzled"))
        .args(["serve", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&help.stdout).to_string();
    for launch in &launches {
        for flag in launch.args.iter().filter(|a| a.starts_with("--")) {
            assert!(
                help.contains(&format!("{flag} ")),
                "{}: `puzzled serve` has no {flag}",
                launch.name
            );
        }
        for key in launch.env.keys() {
            assert!(
                help.contains(&format!("[env: {key}=")),
                "{}: `puzzled serve` reads no {key}",
                launch.name
            );
        }
        // The values parse too: with the database swapped for one it cannot open, the
        // binary gets past its arguments and stops at the store.
        let run = Command::new(env!("CARGO_BIN_EXE_puzzled"))
            .args(&launch.args)
            .env_clear()
            .envs(&launch.env)
            .env("DATABASE_URL", "unsupported://nowhere")
            .env("PUZZLED_BIND", "127.0.0.1:0")
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(
            stderr.contains("unsupported database URL"),
            "{}: {stderr}",
            launch.name
        );
    }
}
