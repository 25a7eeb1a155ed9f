//! libFuzzer target `fio-run`: see iogauge::fuzz::TARGETS and docs/FUZZING.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| iogauge::fuzz::run("fio-run", data));
