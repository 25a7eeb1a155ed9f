//! What a `check` profile judges and how: the metrics, thresholds (`Amount`: a Go duration or a
//! number), which way is better, guidance values and reference systems. Read from profile files
//! by `input::profiles`, applied by `verdict::profile` and `verdict::check`.

use crate::model::units::parse_go_duration;
use serde::Deserialize;

/// The numbers a profile can judge, read from a run's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKey {
    /// p99 of the fsync/fdatasync latency, ns.
    SyncP99,
    WriteIops,
    ReadIops,
    /// Small-files test: create plus read-back time, ns.
    SmallFilesTotal,
    FilesPerSec,
    /// Small-files test: p99 per-file create / read, ns.
    CreateP99,
    ReadP99,
}

impl MetricKey {
    pub fn name(&self) -> &'static str {
        match self {
            MetricKey::SyncP99 => "sync_p99",
            MetricKey::WriteIops => "write_iops",
            MetricKey::ReadIops => "read_iops",
            MetricKey::SmallFilesTotal => "small_files_total",
            MetricKey::FilesPerSec => "files_per_sec",
            MetricKey::CreateP99 => "create_p99",
            MetricKey::ReadP99 => "read_p99",
        }
    }

    /// Unit of the value: ns for latencies, IOPS for rates.
    pub fn unit(&self) -> &'static str {
        match self {
            MetricKey::FilesPerSec => "files/s",
            k if k.is_latency() => "ns",
            _ => "IOPS",
        }
    }

    pub fn is_latency(&self) -> bool {
        matches!(
            self,
            MetricKey::SyncP99
                | MetricKey::SmallFilesTotal
                | MetricKey::CreateP99
                | MetricKey::ReadP99
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// A threshold as written: a Go duration for latencies (`10ms`), a number for rates.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Amount {
    Number(f64),
    Text(String),
}

impl Amount {
    /// The value in the metric's unit (ns or IOPS).
    pub fn value(&self) -> Result<f64, String> {
        match self {
            Amount::Number(n) => Ok(*n),
            Amount::Text(t) => parse_go_duration(t).map(|d| d.as_nanos() as f64),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metric {
    pub key: MetricKey,
    pub label: String,
    pub better: Better,
    /// Pass when strictly below (lower) or at least (higher) this.
    pub pass: Amount,
    /// Warn instead of fail when strictly below (lower) or at least (higher) this.
    pub warn: Option<Amount>,
    pub pass_label: Option<String>,
    pub warn_label: Option<String>,
    pub fail_label: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Guidance {
    pub value: f64,
    pub label: String,
}

/// A number reported next to guidance values, without a verdict.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Info {
    pub key: MetricKey,
    pub label: String,
    pub guidance: Vec<Guidance>,
}

/// A published result of the same workload on a real system.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub system: String,
    pub sync_p99: Option<Amount>,
    pub write_iops: Option<f64>,
    pub read_iops: Option<f64>,
}

impl Reference {
    pub fn get(&self, k: MetricKey) -> Option<f64> {
        match k {
            MetricKey::SyncP99 => self.sync_p99.as_ref().and_then(|a| a.value().ok()),
            MetricKey::WriteIops => self.write_iops,
            MetricKey::ReadIops => self.read_iops,
            _ => None,
        }
    }
}

/// An outcome's kind, ordered by severity: a profile metric's verdict, or a troubleshoot
/// analyzer outcome's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OutcomeKind {
    Pass,
    Warn,
    Fail,
}

/// troubleshoot's percentile keys (`P99` …) and the percentiles they stand for.
pub use crate::report::troubleshoot::KEYS as PERCENTILES;

/// A statistic of the collector's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    Min,
    Max,
    Average,
    /// Index into [`PERCENTILES`].
    P(usize),
    /// iogauge's extension: operations per second (a number, not a duration).
    Iops,
}

impl Stat {
    /// A `when` keyword, case-insensitive (`avg` is iogauge's alias of `average`).
    pub fn from_keyword(k: &str) -> Option<Stat> {
        let k = k.to_ascii_lowercase();
        Some(match k.as_str() {
            "min" => Stat::Min,
            "max" => Stat::Max,
            "average" | "avg" => Stat::Average,
            "iops" => Stat::Iops,
            _ => Stat::P(
                PERCENTILES
                    .iter()
                    .position(|(n, _)| n.eq_ignore_ascii_case(&k))?,
            ),
        })
    }
}
