//! `iogauge preflight`'s result document: each collector's status, where it ran, its result
//! table and (with `--sequential`) how its run reached the verdict, and the analyzers'
//! outcomes. Re-exported by `report::document` (its parent), where the other documents are.

use super::{known_schema_version, CheckVerdict, Context};
use crate::report::sequential::SequentialRun;
use crate::report::troubleshoot::KEYS;
// For the doc links only.
#[cfg(doc)]
use super::SCHEMA_VERSION;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `iogauge preflight`'s result, written beside troubleshoot's files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreflightDocument {
    /// Layout version of this document ([`SCHEMA_VERSION`]).
    #[serde(deserialize_with = "known_schema_version")]
    pub schema_version: u32,
    /// The iogauge version.
    pub iogauge: String,
    /// The spec's `metadata.name`.
    pub name: String,
    /// One entry per collector that was run (or skipped by `exclude`).
    pub collectors: Vec<CollectorOutcome>,
    /// The analyzers' outcomes, in the order troubleshoot prints them.
    pub outcomes: Vec<AnalyzerOutcome>,
}

/// What became of one `filesystemPerformance` collector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CollectorOutcome {
    /// `collectorName`.
    pub name: String,
    /// collected, timed_out or failed.
    pub status: CollectorStatus,
    /// Why it did not collect.
    pub reason: Option<String>,
    /// Where it was measured (its `directory`).
    pub context: Context,
    /// troubleshoot's result table (ns), as written to `<collectorName>.json`.
    pub results: Option<BTreeMap<String, u64>>,
    /// `--sequential`: how the collector's run reached its verdict (it stopped early, or ran
    /// its whole recipe undecided); absent when it ran whole without being watched. A run that
    /// stopped early wrote the numbers of that shorter run.
    #[serde(default)]
    pub sequential: Option<SequentialRun>,
    /// `--sequential`: why this collector ran whole without being watched (an analyzer reads
    /// the average, background IOPS, …); absent without `--sequential`.
    #[serde(default)]
    pub ran_whole: Option<String>,
}

impl CollectorOutcome {
    /// With `--sequential`, how the collector's result was reached, in one line (as `check`
    /// says it for a profile); None for a run without `--sequential`.
    pub(crate) fn how_reached(&self) -> Option<String> {
        if let Some(s) = &self.sequential {
            return Some(s.line(&metric_label));
        }
        let why = self.ran_whole.as_ref()?;
        Some(format!("ran the whole collector, not watched: {why}"))
    }
}

/// A watched collector metric's key in words: `fdatasync_p999` is "p99.9 fdatasync latency",
/// `write_iops` "write IOPS" (the keys `verdict::sequential::spec_of_conditions` makes).
pub(crate) fn metric_label(key: &str) -> String {
    if key == "write_iops" {
        return "write IOPS".into();
    }
    let Some((what, p)) = key.rsplit_once('_') else {
        return key.to_string();
    };
    match KEYS.iter().find(|(name, _)| name.eq_ignore_ascii_case(p)) {
        Some((_, pct)) => format!("p{pct} {what} latency"),
        None => key.to_string(),
    }
}

/// How a troubleshoot collector ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CollectorStatus {
    /// It ran and produced its results.
    Collected,
    /// It did not finish within its timeout.
    TimedOut,
    /// It could not run or failed while running.
    Failed,
}

/// One analyzer outcome, as troubleshoot prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AnalyzerOutcome {
    /// The check's title (`checkName`, with ` - Node <name>` for per-node results).
    pub title: String,
    /// pass, warn or fail.
    pub verdict: CheckVerdict,
    /// The outcome's message with its placeholders filled in.
    pub message: String,
    /// The outcome's link, if any.
    pub uri: Option<String>,
    /// The analyzer is `strict`.
    pub strict: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watched_metrics_are_named_in_words() {
        assert_eq!(metric_label("fdatasync_p99"), "p99 fdatasync latency");
        assert_eq!(metric_label("fsync_p999"), "p99.9 fsync latency");
        assert_eq!(metric_label("write_p50"), "p50 write latency");
        assert_eq!(metric_label("write_iops"), "write IOPS");
        assert_eq!(metric_label("odd"), "odd");
    }
}
