//! iogauge: a storage benchmark with verdicts. See docs/ARCHITECTURE.md for the data flow:
//! input → spec → run → stats → Report → renderers / verdicts.

pub mod cli;
pub mod engine;
pub mod report;
pub mod run;
pub mod spec;
pub mod stats;
pub mod verdict;
pub mod workload;
