//! iogauge: a storage benchmark with verdicts. See docs/ARCHITECTURE.md for the data flow:
//! input → model → run → stats → Report → verdicts → documents → renderers; `app` runs a
//! command's whole pipeline and `cli` parses, prints and exits.

pub(crate) mod app;
pub(crate) mod canary;
pub mod cli;
pub mod cluster;
pub(crate) mod compare;
pub mod diag;
pub(crate) mod engine;
/// Only with the `fuzzing` feature (the fuzzers, tests/fuzz_short.rs): not part of iogauge.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;
pub(crate) mod history;
pub(crate) mod image;
pub(crate) mod input;
pub mod model;
pub(crate) mod mounts;
pub(crate) mod observer;
pub(crate) mod output_file;
pub mod report;
pub mod run;
pub(crate) mod stats;
pub(crate) mod untrusted;
pub(crate) mod verdict;
pub mod workload;
