//! `iogauge check`'s document: the profiles' outcomes (metrics, verdicts, the fio report or
//! small-files result each ran) and their summary.

use super::{fio_document_problem, known_schema_version, Context};
// For the doc links only.
#[cfg(doc)]
use super::SCHEMA_VERSION;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `iogauge check`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckDocument {
    /// Layout version of this document ([`SCHEMA_VERSION`]).
    #[serde(deserialize_with = "known_schema_version")]
    pub schema_version: u32,
    /// The iogauge version (also in `context`; kept at the top for older readers).
    pub iogauge: String,
    /// Where it was measured.
    pub context: Context,
    /// The directory the profiles ran in, or with `--device` the block device they wrote
    /// over, as given on the command line made absolute (symlinks not resolved; older
    /// documents may hold a relative path, `context.directory` is always absolute).
    pub dir: String,
    /// `dir` is a block device (`check --device`), not a directory.
    #[serde(default)]
    pub device: bool,
    /// One entry per requested profile, in the order requested.
    pub profiles: Vec<ProfileOutcome>,
    /// How many profiles ended each way.
    pub summary: Summary,
}

/// A profile's verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CheckVerdict {
    /// Every metric met its threshold, and the result is a disk measurement.
    Pass,
    /// A metric reached only its second step, the result is not a disk measurement, or (with
    /// `--strict`) the run was shortened.
    Warn,
    /// A metric missed its threshold.
    Fail,
    /// The profile could not run, or an error ended its run (`reason` says why; `partial` then
    /// marks the numbers so far).
    Error,
    /// A signal stopped it while it ran; its partial numbers are not judged.
    Interrupted,
    /// Not started because the check was interrupted earlier.
    Skipped,
}

impl CheckVerdict {
    /// The word printed in the text output.
    pub(crate) fn word(self) -> &'static str {
        match self {
            CheckVerdict::Pass => "PASS",
            CheckVerdict::Warn => "WARN",
            CheckVerdict::Fail => "FAIL",
            CheckVerdict::Error => "ERROR",
            CheckVerdict::Interrupted => "INTERRUPTED",
            CheckVerdict::Skipped => "SKIPPED",
        }
    }
}

/// A published result of the same workload on a real system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReferenceValue {
    /// The system, as its source describes it.
    pub system: String,
    /// Its value, in the metric's unit.
    pub value: f64,
}

/// One metric against its thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricOutcome {
    /// The metric's name (`sync_p99`, `write_iops`, `read_iops`, `small_files_total`, ...).
    pub metric: String,
    /// What it is, in words ("p99 fdatasync latency").
    pub label: String,
    /// pass, warn or fail.
    pub verdict: CheckVerdict,
    /// The measured value, in `unit`.
    pub value: f64,
    /// `ns` for latencies and times, `IOPS` or `files/s` for rates.
    pub unit: String,
    /// The value needed to pass.
    pub threshold: f64,
    /// The value needed to avoid failing (a WARN between the two), if the profile has one.
    pub warn_threshold: Option<f64>,
    /// `lower` (pass strictly below the threshold) or `higher` (pass at or above it).
    pub better: String,
    /// Where the threshold comes from.
    pub source: String,
    /// The profile's reference systems that have this metric, best first.
    pub references: Vec<ReferenceValue>,
    /// The value placed among the references and against the threshold, in words; absent when
    /// there are no references or the result is not a disk measurement.
    pub rank: Option<String>,
    /// The value in words ("0.27 ms", "4573 IOPS").
    pub value_text: String,
    /// The threshold as a condition ("< 10 ms", "≥ 1000 IOPS to pass, ≥ 750 IOPS to avoid failing").
    pub threshold_text: String,
    /// The profile's words for this verdict ("at Manetu's recommended level (1000 or more)").
    pub verdict_label: Option<String>,
}

/// A number reported next to guidance values, without a verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InfoOutcome {
    /// The metric's name.
    pub metric: String,
    /// What it is, in words.
    pub label: String,
    /// The measured value, in `unit`.
    pub value: f64,
    /// The unit of `value`.
    pub unit: String,
    /// Published guidance values and whether the result meets each.
    pub guidance: Vec<GuidanceMet>,
    /// The value in words.
    pub value_text: String,
}

/// One published guidance value and whether the result meets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GuidanceMet {
    /// Whose guidance ("etcd hardware guide minimum").
    pub label: String,
    /// The guidance value, in the metric's unit.
    pub value: f64,
    /// The result is at or above it.
    pub met: bool,
}

/// Everything `check` says about one profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProfileOutcome {
    /// The profile's name (`etcd`, or the `name` of a user's profile file).
    pub profile: String,
    /// Its title.
    pub title: String,
    /// The profile's verdict: the worst of its metrics, raised by the trust rules.
    pub verdict: CheckVerdict,
    /// The first metric's name, repeated here for scripts that read one number per profile
    /// (null when nothing was measured); so are `value` to `references`.
    pub metric: Option<String>,
    /// The first metric's value.
    pub value: Option<f64>,
    /// The first metric's unit.
    pub unit: Option<String>,
    /// The first metric's pass threshold.
    pub threshold: Option<f64>,
    /// The first metric's source.
    pub source: Option<String>,
    /// The first metric's reference systems.
    pub references: Option<Vec<ReferenceValue>>,
    /// Every judged metric.
    pub metrics: Vec<MetricOutcome>,
    /// Numbers reported without a verdict.
    pub info: Vec<InfoOutcome>,
    /// `--scale`, `--duration` or `--size` changed the published run.
    pub shortened: bool,
    /// Why the numbers describe memory rather than a disk (the verdict is then at least WARN).
    pub not_disk: Option<String>,
    /// Reasons to doubt the numbers (few samples, variation, a container layer, shortened).
    pub warnings: Vec<String>,
    /// Why the profile has no measured verdict (error, interrupted, skipped).
    pub reason: Option<String>,
    /// What to do next, for WARN and FAIL.
    pub advice: Vec<String>,
    /// The job as fio options (`--rw=write` ...), so that anyone can run it again with fio or
    /// `iogauge fio`; absent for the small-files test, which is not a fio job.
    pub job: Option<Vec<String>>,
    /// The full run report.
    pub report: Option<RunReport>,
    /// An error ended the run before its end (verdict `error`): `report` holds what was done
    /// until then, and those numbers are not judged.
    #[serde(default)]
    pub partial: bool,
    /// The I/O error that ended the run, when one did.
    #[serde(default)]
    pub io_error: Option<IoErrorDetail>,
    /// How a sequential run reached the verdict; absent when the full recipe ran (`--full`).
    #[serde(default)]
    pub sequential: Option<crate::report::sequential::SequentialRun>,
}

impl ProfileOutcome {
    /// How a sequential run reached the verdict, in one line (None for a full-recipe run):
    /// the metrics named as the profile labels them.
    pub(crate) fn how_reached(&self) -> Option<String> {
        let s = self.sequential.as_ref()?;
        let label_of = |key: &str| {
            self.metrics
                .iter()
                .find(|m| m.metric == key)
                .map_or_else(|| key.to_string(), |m| m.label.clone())
        };
        Some(s.line(&label_of))
    }
}

/// An I/O error that ended a profile's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IoErrorDetail {
    /// The operation: `read`, `write`, `fsync`, `fdatasync`, `open`, `unlink`, ...
    pub operation: String,
    /// The file it was on.
    pub file: String,
    /// Offset of the I/O in bytes (for a sync, that of the write before it).
    pub offset: u64,
    /// Its length in bytes (0 for a sync or an operation that moves no data).
    pub length: u64,
    /// The error number (5 = EIO, 28 = ENOSPC).
    pub errno: i32,
    /// The error in words.
    pub message: String,
}

/// A profile's full report.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RunReport {
    /// GitLab's small-files test.
    SmallFiles(SmallFilesResult),
    /// A fio job: the document `iogauge fio --output-format=json` prints (fio's layout).
    Fio(FioReport),
}

/// fio's JSON output inside a typed document: the document `iogauge fio --output-format=json`
/// prints for the profile's job, with every interval.
///
/// A checked wrapper of a JSON value, not a type per field: the layout is fio's (hundreds of
/// keys; `percentile` maps keyed by formatted numbers such as `"99.000000"`; json+ `bins`),
/// produced by one renderer (`report/json.rs`) so that fio's jq paths work on it; a typed copy
/// would be a second definition of that layout to keep in step with the renderer, and it
/// would not round-trip fio's key order and number formats. What iogauge itself relies on is
/// checked when a document is read ([`fio_document_problem`]: `"fio version"` and a list of
/// named jobs) and stated in the JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct FioReport(serde_json::Value);

/// By the key only fio's layout has, so that a bad report says what is wrong with it (an
/// untagged enum would only say that no variant matched).
impl<'de> Deserialize<'de> for RunReport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        if v.get("fio version").is_some() {
            FioReport::deserialize(v)
                .map(RunReport::Fio)
                .map_err(D::Error::custom)
        } else {
            SmallFilesResult::deserialize(v)
                .map(RunReport::SmallFiles)
                .map_err(D::Error::custom)
        }
    }
}

impl FioReport {
    /// The document as a value.
    pub fn value(&self) -> &serde_json::Value {
        &self.0
    }
}

impl From<serde_json::Value> for FioReport {
    fn from(v: serde_json::Value) -> Self {
        FioReport(v)
    }
}

impl std::ops::Deref for FioReport {
    type Target = serde_json::Value;
    fn deref(&self) -> &serde_json::Value {
        &self.0
    }
}

impl<'de> Deserialize<'de> for FioReport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match fio_document_problem(&v) {
            None => Ok(FioReport(v)),
            Some(e) => Err(serde::de::Error::custom(e)),
        }
    }
}

impl JsonSchema for FioReport {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FioReport".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "fio's JSON output (fio --output-format=json layout, as iogauge fio \
                prints it with --json-intervals); only what iogauge reads is stated here.",
            "type": "object",
            "required": ["fio version", "jobs"],
            "properties": {
                "fio version": {
                    "description": "fio's or iogauge's version string: fio-3.33, iogauge-0.1.0.",
                    "type": "string",
                    "pattern": "^(fio-|iogauge-)"
                },
                "jobs": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["jobname"],
                        "properties": {"jobname": {"type": "string"}}
                    }
                }
            }
        })
    }
}

/// The small-files test: create N files, then read them back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmallFilesResult {
    /// Files created and read back.
    pub files: u32,
    /// Bytes per file.
    pub file_size: u64,
    /// Wall time of the create phase, ns.
    pub create_ns: u64,
    /// Wall time of the read-back phase, ns.
    pub read_ns: u64,
    /// Both phases, ns.
    pub total_ns: u64,
    /// Files created and read back per second over the whole test.
    pub files_per_sec: f64,
    /// Per-file open+write+close.
    pub create: LatencyStats,
    /// Per-file open+read+close.
    pub read: LatencyStats,
}

/// A latency distribution, in fio's JSON words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencyStats {
    /// Smallest latency, ns.
    pub min_ns: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
    /// Mean latency, ns.
    pub mean_ns: f64,
    /// How many values.
    #[serde(rename = "N")]
    pub n: u64,
    /// Percentile (as fio writes it, `"99.000000"`) → ns.
    pub percentile: BTreeMap<String, u64>,
}

/// How many profiles ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Profiles that passed.
    pub passed: usize,
    /// Profiles that passed with a warning.
    pub warned: usize,
    /// Profiles that failed their threshold.
    pub failed: usize,
    /// Profiles that could not run.
    pub errors: usize,
    /// Profiles stopped by an interrupt while running.
    pub interrupted: usize,
    /// Profiles not started because of an interrupt.
    pub skipped: usize,
}

impl Summary {
    pub(crate) fn of(outcomes: &[ProfileOutcome]) -> Summary {
        let mut s = Summary::default();
        for o in outcomes {
            *match o.verdict {
                CheckVerdict::Pass => &mut s.passed,
                CheckVerdict::Warn => &mut s.warned,
                CheckVerdict::Fail => &mut s.failed,
                CheckVerdict::Error => &mut s.errors,
                CheckVerdict::Interrupted => &mut s.interrupted,
                CheckVerdict::Skipped => &mut s.skipped,
            } += 1;
        }
        s
    }

    /// "3 passed, 1 warned, 0 failed" (and the others only when there are some).
    pub(crate) fn line(&self) -> String {
        let mut s = format!(
            "{} passed, {} warned, {} failed",
            self.passed, self.warned, self.failed
        );
        for (n, word) in [
            (self.errors, "could not run"),
            (self.interrupted, "interrupted"),
            (self.skipped, "not run"),
        ] {
            if n > 0 {
                s.push_str(&format!(", {n} {word}"));
            }
        }
        s
    }
}
