//! Every input the fuzzers (`fuzz/`, nightly) found a crash with, and their kept corpus,
//! replayed on stable through the same checks (`tests/fuzz_checks`). A regression case
//! `tests/fuzz_regressions/<target>/<name>` may pin its outcome in `<name>.expected`
//! (the outcome must contain that text).

mod fuzz_checks;

use std::path::Path;

/// A target's check: the outcome of one input.
type Check = fn(&[u8]) -> String;

fn replay_folder(target: &str, folder: &Path, check: Check) -> usize {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return 0;
    };
    let mut n_cases = 0;
    for entry in entries {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "expected") {
            continue;
        }
        let data = std::fs::read(&path).expect("read case");
        let outcome = std::panic::catch_unwind(|| check(&data))
            .unwrap_or_else(|_| panic!("{target}: {} panics", path.display()));
        if let Ok(expected) = std::fs::read_to_string(path.with_extension("expected")) {
            assert!(
                outcome.contains(expected.trim()),
                "{target}: {} gave {outcome:?}, expected {expected:?}",
                path.display()
            );
        }
        n_cases += 1;
    }
    n_cases
}

#[test]
fn fuzz_crashes_and_corpus_replay_cleanly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let targets: [(&str, Check); 4] = [
        ("level", fuzz_checks::level),
        ("tiles", fuzz_checks::tiles),
        ("lurd", fuzz_checks::lurd),
        ("job_request", fuzz_checks::job_request),
    ];
    for (target, check) in targets {
        let crashes = replay_folder(
            target,
            &root.join("tests/fuzz_regressions").join(target),
            check,
        );
        let corpus = replay_folder(target, &root.join("fuzz/corpus").join(target), check);
        assert!(crashes + corpus > 0, "{target}: no cases kept");
    }
}
