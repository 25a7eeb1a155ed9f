//! `iogauge canary`'s state as a document: what `/metrics` and the textfile render
//! (`report::openmetrics`), what a kube canary pod prints as frames after every probe, and what
//! `kube canary status` reads back. Re-exported by `report::document` (its parent).

use super::known_schema_version;
// For the doc links only.
#[cfg(doc)]
use super::SCHEMA_VERSION;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `kind` of a canary document, so that a reader never takes another kind for it.
pub const CANARY_KIND: &str = "canary";

/// The canary after its latest probe cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CanaryDocument {
    /// Layout version of this document ([`SCHEMA_VERSION`]).
    #[serde(deserialize_with = "known_schema_version")]
    pub schema_version: u32,
    /// Always `canary`.
    pub kind: String,
    /// The iogauge version of the canary.
    pub iogauge: String,
    /// The `node` label: `--node`, else the host name.
    pub node: String,
    /// The directory probed (absolute), or the block device.
    pub dir: String,
    /// The kernel name of the disk under `dir` (`vda`), when known.
    pub device: Option<String>,
    /// When the canary started (unix seconds).
    pub started_at: f64,
    /// When this document was made: the end of the latest probe cycle (unix seconds).
    pub at: f64,
    /// `--every`, seconds.
    pub every_s: f64,
    /// The interval in use, seconds: `--every`, stretched when the load budget needs it.
    pub interval_s: f64,
    /// `--window`, seconds: how far back verdicts look.
    pub window_s: f64,
    /// What the canary's probes cost the disk.
    pub budget: CanaryBudget,
    /// One entry per profile, in the order asked.
    pub profiles: Vec<CanaryProfile>,
}

/// The load budget and what the canary used of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CanaryBudget {
    /// `--max-busy` as a ratio (0.01 for 1 %).
    pub max_busy: f64,
    /// Device busy time during the window's probes over the window's wall time (a ratio).
    pub busy: f64,
    /// How busy time was measured: `device` (the disk's own io_ticks, which include other
    /// processes' I/O during a probe) or `wall` (no disk counters: a probe's whole wall time).
    pub measured_by: String,
    /// The probe's size factor in use (1 = the canary's normal probe; smaller when the budget
    /// shrank it).
    pub scale: f64,
}

/// One profile's verdict over the window, and its probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CanaryProfile {
    /// The profile's name (`etcd`).
    pub profile: String,
    /// Its title.
    pub title: String,
    /// The verdict over the window.
    pub verdict: CanaryVerdict,
    /// The confidence the verdict is stated at (0.999).
    pub confidence: f64,
    /// Every judged metric over the window.
    pub metrics: Vec<CanaryMetric>,
    /// Probes run since the canary started.
    pub probes: u64,
    /// Probes that failed since the canary started, by reason.
    pub errors: Vec<CanaryErrorCount>,
    /// The end of the last probe that succeeded (unix seconds).
    pub last_success: Option<f64>,
    /// Why the latest probe failed, when it did.
    pub last_error: Option<String>,
    /// The latest probe's wall time, seconds.
    pub last_duration_s: Option<f64>,
    /// Every latency the probes measured since the canary started, cumulative (the
    /// `iogauge_latency_seconds` histograms).
    pub latencies: Vec<CanaryHistogram>,
}

/// A verdict over the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CanaryVerdict {
    /// Every metric is decided on the good side of its pass threshold.
    Pass,
    /// A metric is decided between its warn and pass thresholds.
    Warn,
    /// A metric is decided on the bad side of its last threshold.
    Fail,
    /// The window's samples do not decide yet (too few, or too close to a threshold).
    Undecided,
    /// No probe in the window succeeded.
    Error,
}

impl CanaryVerdict {
    /// Every verdict, in the order `/metrics` lists them.
    pub const ALL: [CanaryVerdict; 5] = [
        CanaryVerdict::Pass,
        CanaryVerdict::Warn,
        CanaryVerdict::Fail,
        CanaryVerdict::Undecided,
        CanaryVerdict::Error,
    ];

    /// The lower-case word (the `verdict` label).
    pub fn word(self) -> &'static str {
        match self {
            CanaryVerdict::Pass => "pass",
            CanaryVerdict::Warn => "warn",
            CanaryVerdict::Fail => "fail",
            CanaryVerdict::Undecided => "undecided",
            CanaryVerdict::Error => "error",
        }
    }
}

/// One judged metric over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CanaryMetric {
    /// The metric's key (`sync_p99`, `write_iops`).
    pub key: String,
    /// Its label in words.
    pub label: String,
    /// `seconds` for latencies, `iops` for rates.
    pub unit: String,
    /// Lower or higher is better.
    pub better: String,
    /// The value over the window, in `unit`; None without samples.
    pub value: Option<f64>,
    /// The pass threshold, in `unit`.
    pub pass: f64,
    /// The warn threshold, in `unit`.
    pub warn: Option<f64>,
    /// Samples behind the value: latencies for a latency, I/Os for a rate.
    pub samples: u64,
    /// Probes behind the value.
    pub probes: u64,
    /// The metric's verdict at the document's confidence.
    pub verdict: CanaryVerdict,
    /// The bound that decided it, in `unit` (the side of the threshold it proves), when decided.
    pub bound: Option<f64>,
}

/// Probes that failed for one reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CanaryErrorCount {
    /// `no_space`, `read_only`, `missing_directory`, `io_error`, `other`.
    pub reason: String,
    /// How many.
    pub count: u64,
}

/// A cumulative latency histogram in Prometheus's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CanaryHistogram {
    /// `sync` (the fsync/fdatasync call), `write` or `read` (completion latency).
    pub kind: String,
    /// (upper bound in seconds, latencies at or below it), ascending, without +Inf.
    pub buckets: Vec<(f64, u64)>,
    /// Every latency counted (the +Inf bucket).
    pub count: u64,
    /// Their sum, seconds.
    pub sum: f64,
}
