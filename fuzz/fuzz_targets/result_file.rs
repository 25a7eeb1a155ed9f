//! libFuzzer target `result-file`: see iogauge::fuzz::TARGETS and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| iogauge::fuzz::run("result-file", data));
