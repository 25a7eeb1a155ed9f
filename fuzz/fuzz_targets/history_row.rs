//! libFuzzer target `history-row`: see iogauge::fuzz::TARGETS and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| iogauge::fuzz::run("history-row", data));
