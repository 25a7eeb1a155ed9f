//! iogauge: a storage benchmark with verdicts. See docs/ARCHITECTURE.md for the data flow:
//! input → model → run → stats → Report → verdicts → documents → renderers; `app` runs a
//! command's whole pipeline and `cli` parses, prints and exits.

pub mod app;
pub mod cli;
pub mod engine;
pub mod input;
pub mod model;
pub mod report;
pub mod run;
pub mod stats;
pub mod verdict;
pub mod workload;
