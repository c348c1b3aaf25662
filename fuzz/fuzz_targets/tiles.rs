//! `cargo +nightly fuzz run tiles -- -jobs=1 -workers=1`: see `tests/fuzz_checks`.
#![no_main]

// Each target uses one of the shared checks.
#[allow(dead_code)]
#[path = "../../tests/fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    fuzz_checks::tiles(data);
});
