//! What a `check` profile judges and how: the metrics, thresholds (`Amount`: a Go duration or a
//! number), which way is better, guidance values and reference systems. Read from profile files
//! by `input::profiles`, applied by `verdict::profile` and `verdict::check`.

use crate::model::units::parse_go_duration;
use crate::model::{JobSpec, SizeSpec};
use serde::Deserialize;

/// The numbers a profile can judge, read from a run's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MetricKey {
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
    pub(crate) fn name(&self) -> &'static str {
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
    pub(crate) fn unit(&self) -> &'static str {
        match self {
            MetricKey::FilesPerSec => "files/s",
            k if k.is_latency() => "ns",
            _ => "IOPS",
        }
    }

    pub(crate) fn is_latency(&self) -> bool {
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
pub(crate) enum Better {
    Lower,
    Higher,
}

/// A threshold as written: a Go duration for latencies (`10ms`), a number for rates.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Amount {
    Number(f64),
    Text(String),
}

/// The units a latency threshold takes (Go's duration units).
pub(crate) const DURATION_UNITS: &str = "ns, us or µs, ms, s, m, h";

impl Amount {
    /// The value in the metric's unit (ns or IOPS). Lenient: [`Amount::value_for`] is the check
    /// that a profile's amount has the unit its metric takes, done when the profile is loaded.
    pub(crate) fn value(&self) -> Result<f64, String> {
        match self {
            Amount::Number(n) => Ok(*n),
            Amount::Text(t) => match rate_text(t) {
                Some((n, _)) => Ok(n),
                None => parse_go_duration(t).map(|d| d.as_nanos() as f64),
            },
        }
    }

    /// The value for metric `key`, refused unless written in the unit `key` takes: a latency
    /// needs a duration with its unit (a bare `5` would be read as 5 ns); a rate needs its
    /// unit too (`1000 IOPS`, `50 files/s`), never a duration. `field` names the key in
    /// messages (`pass`, `warn`, `sync_p99`).
    pub(crate) fn value_for(&self, key: MetricKey, field: &str) -> Result<f64, String> {
        let latency = key.is_latency();
        match self {
            Amount::Number(n) if latency => Err(format!(
                "{field}: {n} has no unit; a latency takes a duration with its unit \
                 ({DURATION_UNITS}), e.g. {field}: {n}ms"
            )),
            Amount::Number(n) => Err(format!(
                "{field}: {n} has no unit; {} is a rate in {unit}, e.g. {field}: {n} {unit}",
                key.name(),
                unit = key.unit()
            )),
            Amount::Text(t) if latency => {
                if rate_text(t).is_some() {
                    return Err(format!(
                        "{field}: '{}' has no time unit; a latency takes a duration with its \
                         unit ({DURATION_UNITS}), e.g. {field}: 10ms",
                        crate::untrusted::shorten(t)
                    ));
                }
                parse_go_duration(t)
                    .map(|d| d.as_nanos() as f64)
                    .map_err(|e| format!("{field}: {e}; units: {DURATION_UNITS}"))
            }
            Amount::Text(t) => {
                let shown = crate::untrusted::shorten(t);
                let unit = key.unit();
                match rate_text(t) {
                    Some((v, Some(u))) if u.eq_ignore_ascii_case(unit) => Ok(v),
                    Some((v, Some(u))) => Err(format!(
                        "{field}: '{shown}': {} is a rate in {unit}, not {u}, e.g. {field}: {v} \
                         {unit}",
                        key.name()
                    )),
                    Some((v, None)) => Err(format!(
                        "{field}: '{shown}' has no unit; {} is a rate in {unit}, e.g. {field}: {v} \
                         {unit}",
                        key.name()
                    )),
                    None if parse_go_duration(t).is_ok() => Err(format!(
                        "{field}: '{shown}': {} is a rate in {unit}, so write a number with its \
                         unit such as 1000 {unit}, not a duration",
                        key.name()
                    )),
                    None => Err(format!(
                        "{field}: '{shown}': expected a rate in {unit}, e.g. {field}: 1000 {unit}"
                    )),
                }
            }
        }
    }
}

/// A rate written as text: `1000 IOPS`, `1000iops`, `50 files/s`, or `1000` (no unit: None).
fn rate_text(t: &str) -> Option<(f64, Option<&'static str>)> {
    let t = t.trim();
    let lower = t.to_ascii_lowercase();
    let (num, unit) = [("iops", "IOPS"), ("files/s", "files/s")]
        .iter()
        .find_map(|(u, shown)| lower.strip_suffix(u).map(|n| (n, Some(*shown))))
        .unwrap_or((&lower, None));
    let n = num
        .trim_end()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())?;
    Some((n, unit))
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Metric {
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
pub(crate) struct Guidance {
    pub value: f64,
    pub label: String,
}

/// A number reported next to guidance values, without a verdict.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Info {
    pub key: MetricKey,
    pub label: String,
    pub guidance: Vec<Guidance>,
}

/// A published result of the same workload on a real system.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Reference {
    pub system: String,
    pub sync_p99: Option<Amount>,
    pub write_iops: Option<f64>,
    pub read_iops: Option<f64>,
}

impl Reference {
    pub(crate) fn get(&self, k: MetricKey) -> Option<f64> {
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
pub(crate) enum OutcomeKind {
    Pass,
    Warn,
    Fail,
}

/// troubleshoot's percentile keys (`P99` …) and the percentiles they stand for.
pub(crate) use crate::report::troubleshoot::KEYS as PERCENTILES;

/// A statistic of the collector's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stat {
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
    pub(crate) fn from_keyword(k: &str) -> Option<Stat> {
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

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Profile {
    pub name: String,
    pub title: String,
    /// fio options (`key=value` or a flag), applied in order.
    #[serde(default)]
    pub workload: Vec<String>,
    /// Instead of a fio workload: GitLab's small-files test.
    pub small_files: Option<SmallFiles>,
    /// Which of size, runtime, ramp_time `--scale` shrinks.
    #[serde(default)]
    pub scale: Vec<String>,
    pub metrics: Vec<Metric>,
    #[serde(default)]
    pub info: Vec<Info>,
    #[serde(default)]
    pub references: Vec<Reference>,
    /// What to do next when the verdict is WARN or FAIL, most useful first.
    #[serde(default)]
    pub advice: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SmallFiles {
    pub files: u32,
    pub size: usize,
}

/// How to adapt a profile's workload for one run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tuning {
    /// Shrink sizes and times by this factor (0 < scale ≤ 1); 1 = as published.
    pub scale: f64,
    /// Replace the runtime of time-based profiles.
    pub duration: Option<std::time::Duration>,
    /// Replace the size.
    pub size: Option<u64>,
    /// Cap every test file at this many bytes (what fits in a Kubernetes claim).
    pub max_size: Option<u64>,
}

impl Profile {
    /// The small-files test as tuned: `--scale` shrinks the number of files (at least 10).
    pub(crate) fn small_files(&self, t: &Tuning) -> Option<SmallFiles> {
        let mut s = self.small_files?;
        if t.scale < 1.0 && self.scale.iter().any(|x| x == "files") {
            s.files = ((s.files as f64 * t.scale) as u32).max(10);
        }
        Some(s)
    }

    /// A metric's label with `{files}` replaced by the number of files actually used.
    pub(crate) fn label(&self, label: &str, t: &Tuning) -> String {
        match self.small_files(t) {
            Some(s) if label.contains("{files}") => label.replace(
                "{files}",
                &crate::report::units::thousands(u64::from(s.files)),
            ),
            _ => label.to_string(),
        }
    }

    /// `job` (built by [`Profile::job`]) as fio's command-line options, so that the run can be
    /// repeated with fio or `iogauge fio`: the workload as written, with the size and times that
    /// the tuning changed.
    pub(crate) fn fio_options(&self, job: &JobSpec) -> Vec<String> {
        let mut out = vec![format!("--name={}", job.name)];
        if let Some(d) = &job.directory {
            out.push(format!("--directory={}", d.display()));
        }
        if let Some(f) = &job.filename {
            out.push(format!("--filename={f}"));
        }
        let ms = |d: std::time::Duration| format!("{}ms", d.as_millis());
        for w in &self.workload {
            let key = w.split_once('=').map_or(w.as_str(), |(k, _)| k);
            out.push(match (key, job.size) {
                ("size", Some(SizeSpec::Bytes(b))) => format!("--size={b}"),
                ("runtime", _) if job.runtime.is_some() => {
                    format!("--runtime={}", ms(job.runtime.unwrap_or_default()))
                }
                ("ramp_time", _) => format!("--ramp_time={}", ms(job.ramp_time)),
                _ => format!("--{w}"),
            });
        }
        out
    }
}

/// A comparison in a troubleshoot analyzer's `when`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

/// When a troubleshoot analyzer outcome applies.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Condition {
    /// Empty `when`: always matches.
    Always,
    /// `fileNotCollected`: the collector produced no result.
    FileNotCollected,
    /// `<stat> <op> <value>`; value in ns (durations) or operations per second (iops).
    Compare { stat: Stat, op: Op, value: f64 },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    pub kind: OutcomeKind,
    pub when: Condition,
    pub message: Template,
    pub uri: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FsPerfAnalyzer {
    pub check_name: String,
    pub collector_name: String,
    pub exclude: bool,
    pub strict: bool,
    pub outcomes: Vec<Outcome>,
}

/// A troubleshoot outcome message: text and `{{ .Field }}` placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Stat(Stat),
    /// The whole result table.
    String,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Text(String),
    Field(Field),
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Template {
    pub parts: Vec<Part>,
}
