//! The typed result documents: what `check --format json` prints and what `preflight` writes
//! beside troubleshoot's files. The HTML report, the history and the Kubernetes mode read them
//! back, so they derive `Deserialize`, carry a schema version, and say where they were measured.
//! A JSON Schema generated from these types is committed under `docs/schema/`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

// The kube documents live in their own file; they are read and written as this module's.
mod kube;
pub use kube::{KubeDocument, Outlier, TargetOutcome, TargetStatus, TargetType};
mod canary;
pub use canary::{
    CanaryBudget, CanaryDocument, CanaryErrorCount, CanaryHistogram, CanaryMetric, CanaryProfile,
    CanaryVerdict, CANARY_KIND,
};

/// Raised when a field changes meaning or goes away (adding a field does not raise it).
pub const SCHEMA_VERSION: u32 = 1;

/// Why a document's `schema_version` is not one this iogauge reads, or None when it is. Every
/// reader (report, compare, history, the kube controller) refuses the others: a document laid
/// out differently would otherwise render as wrong numbers or an empty page.
pub(crate) fn schema_version_problem(found: Option<&serde_json::Value>) -> Option<String> {
    let expected = format!(
        "this iogauge ({}) reads schema_version {SCHEMA_VERSION}; read it with the iogauge \
         version that wrote it (its \"iogauge\" field)",
        env!("CARGO_PKG_VERSION")
    );
    match found {
        None => Some(format!("schema_version is missing; {expected}")),
        Some(v) if v.as_u64() == Some(u64::from(SCHEMA_VERSION)) => None,
        Some(v) => {
            let mut shown = v.to_string();
            if shown.len() > 40 {
                // A huge value would make a huge message; the start says what it is.
                let cut = (0..=40)
                    .rev()
                    .find(|i| shown.is_char_boundary(*i))
                    .unwrap_or(0);
                shown.truncate(cut);
                shown.push('…');
            }
            Some(format!("schema_version is {shown}; {expected}"))
        }
    }
}

/// `schema_version` read by serde: only [`SCHEMA_VERSION`] (see [`schema_version_problem`]).
pub(crate) fn known_schema_version<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<u32, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    match schema_version_problem(Some(&v)) {
        None => Ok(SCHEMA_VERSION),
        Some(e) => Err(serde::de::Error::custom(e)),
    }
}

/// Which document a JSON value is. Decided here only, by [`DocumentKind::sniff`]: the HTML
/// report, `compare`, and the kube controller reading a pod's log all ask this one rule (they
/// once had three, which disagreed on a check document without `dir`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// `check --format json` ([`CheckDocument`]).
    Check,
    /// `kube check --format json` ([`KubeDocument`]).
    Kube,
    /// What `preflight` writes ([`PreflightDocument`]).
    Preflight,
    /// fio's JSON output, fio's or `iogauge fio`'s.
    Fio,
    /// `compare --format json` ([`super::comparison::CompareDocument`]).
    Compare,
}

impl DocumentKind {
    /// The kind of `v`, by the keys only that kind has, or None. Kube first: it also has
    /// `schema_version` and `profiles`; a check document has `dir` (every version wrote it), so
    /// a value without it is no check document.
    pub fn sniff(v: &serde_json::Value) -> Option<DocumentKind> {
        let has = |k: &str| v.get(k).is_some();
        if has("targets") && has("run_id") {
            Some(DocumentKind::Kube)
        } else if has("schema_version") && has("profiles") && has("dir") {
            Some(DocumentKind::Check)
        } else if has("collectors") && has("outcomes") {
            Some(DocumentKind::Preflight)
        } else if has("fio version") && has("jobs") {
            Some(DocumentKind::Fio)
        } else if has("method") && has("metrics") && has("a") && has("b") {
            Some(DocumentKind::Compare)
        } else {
            None
        }
    }

    /// The kind in words: "a check document".
    pub(crate) fn what(self) -> &'static str {
        match self {
            DocumentKind::Check => "a check document",
            DocumentKind::Kube => "a kube check document",
            DocumentKind::Preflight => "a preflight document",
            DocumentKind::Fio => "fio's JSON output",
            DocumentKind::Compare => "a compare document",
        }
    }

    /// Why `v`, of this kind, is not one this iogauge reads, or None: its `schema_version`
    /// ([`schema_version_problem`]), or for fio's JSON, which has none, its shape
    /// ([`fio_document_problem`]).
    pub(crate) fn problem(self, v: &serde_json::Value) -> Option<String> {
        match self {
            DocumentKind::Fio => fio_document_problem(v),
            _ => schema_version_problem(v.get("schema_version")),
        }
    }
}

/// Why a JSON value that looks like fio's output (`"fio version"` and `jobs`) is not, or None:
/// fio's JSON has no schema version, so its shape is what is checked: `"fio version"` is fio's
/// (`fio-3.33`) or iogauge's (`iogauge-0.1.0`) version string and `jobs` a list of objects with
/// a `jobname`.
pub(crate) fn fio_document_problem(v: &serde_json::Value) -> Option<String> {
    let version = v.get("fio version");
    let ok_version = version
        .and_then(serde_json::Value::as_str)
        .is_some_and(|s| s.starts_with("fio-") || s.starts_with("iogauge-"));
    if !ok_version {
        let shown = version.map_or("missing".to_string(), |x| {
            let mut t = x.to_string();
            t.truncate((0..=40).rev().find(|i| t.is_char_boundary(*i)).unwrap_or(0));
            t
        });
        return Some(format!(
            "\"fio version\" is {shown}; expected fio's version string such as \"fio-3.33\" \
             (or iogauge's, \"iogauge-0.1.0\"), as fio --output-format=json writes it"
        ));
    }
    let Some(jobs) = v.get("jobs").and_then(serde_json::Value::as_array) else {
        return Some(
            "\"jobs\" is not a list; expected fio's list of jobs, as fio \
             --output-format=json writes it"
                .into(),
        );
    };
    for (i, j) in jobs.iter().enumerate() {
        if j.get("jobname")
            .and_then(serde_json::Value::as_str)
            .is_none()
        {
            return Some(format!(
                "jobs[{i}] has no \"jobname\" string; expected a job as fio \
                 --output-format=json writes it"
            ));
        }
    }
    None
}

/// Where a result was measured: enough to tell later whether two results are comparable.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Context {
    /// The iogauge version that measured it.
    pub iogauge: String,
    /// The host's name (uname nodename).
    pub hostname: String,
    /// The kernel release (uname release), e.g. `6.1.0-18-amd64`.
    pub kernel: String,
    /// The directory the test files were in, as an absolute path.
    pub directory: Option<String>,
    /// The filesystem holding that directory.
    pub filesystem: Option<FilesystemInfo>,
    /// The block device behind the filesystem (with `check --device`, that device, or the whole
    /// disk of a partition); absent for tmpfs, NFS and other device-less ones.
    pub device: Option<DeviceInfo>,
}

/// The filesystem holding the run's directory.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct FilesystemInfo {
    /// The filesystem type as the kernel names it (`ext4`, `xfs`, `tmpfs`, `nfs4`, `overlay`).
    pub fs_type: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// What is mounted: a device (`/dev/vda1`), a server export (`host:/export`), or a name.
    pub source: String,
    /// Mount options (per mount, then per superblock), e.g. `rw,relatime`.
    pub options: String,
}

/// The block device behind a filesystem.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct DeviceInfo {
    /// Kernel name of the whole disk (`nvme0n1`, `sda`, `dm-0`).
    pub name: String,
    /// The model string from /sys (`device/model`), when the driver reports one.
    pub model: Option<String>,
    /// Whether the kernel treats it as a spinning disk (`queue/rotational`).
    pub rotational: Option<bool>,
    /// The active I/O scheduler (`queue/scheduler`'s bracketed entry), e.g. `mq-deadline`.
    pub scheduler: Option<String>,
    /// For device-mapper and md devices, the disks underneath.
    pub slaves: Vec<String>,
}

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
    pub sequential: Option<super::sequential::SequentialRun>,
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

// The preflight documents live in their own file, read and written as this module's.
mod preflight;
pub(crate) use preflight::metric_label;
pub use preflight::{AnalyzerOutcome, CollectorOutcome, CollectorStatus, PreflightDocument};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A profile's fio report is read back only when it has what iogauge reads of it (the
    /// version string and named jobs), and kept as written, key order included.
    #[test]
    fn a_fio_report_is_checked_when_read() {
        let ok =
            json!({"fio version": "iogauge-0.1.0", "jobs": [{"jobname": "etcd", "z": 1, "a": 2}]});
        let r: RunReport = serde_json::from_value(ok.clone()).unwrap();
        let RunReport::Fio(f) = &r else {
            panic!("not a fio report: {r:?}")
        };
        assert_eq!(f.value(), &ok);
        assert_eq!(serde_json::to_string(&r).unwrap(), ok.to_string());
        let e = serde_json::from_value::<FioReport>(json!({"fio version": "x", "jobs": []}))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("\"fio version\" is \"x\"; expected fio's version string"),
            "{e}"
        );
        assert!(
            serde_json::from_value::<FioReport>(json!({"fio version": "fio-3.33",
            "jobs": [{"name": "no jobname"}]}))
            .is_err()
        );
    }

    /// Which document a value is, by the keys only that kind has; kube before check, since a
    /// kube document has `schema_version` and `profiles` too.
    #[test]
    fn the_kind_is_sniffed_once() {
        let kind = |v| DocumentKind::sniff(&v);
        assert_eq!(
            kind(
                json!({"schema_version": 1, "profiles": [], "dir": "/d", "targets": [], "run_id": "r"})
            ),
            Some(DocumentKind::Kube)
        );
        assert_eq!(
            kind(json!({"targets": [], "run_id": "r"})),
            Some(DocumentKind::Kube)
        );
        assert_eq!(kind(json!({"run_id": "r"})), None);
        assert_eq!(
            kind(json!({"method": 1, "metrics": 1, "a": 1, "b": 1})),
            Some(DocumentKind::Compare)
        );
        assert_eq!(kind(json!([])), None);
        assert_eq!(
            DocumentKind::Fio.problem(&json!({"fio version": "fio-3.33", "jobs": []})),
            None
        );
        assert_eq!(
            DocumentKind::Check.problem(&json!({"schema_version": 1})),
            None
        );
        assert!(DocumentKind::Check
            .problem(&json!({"schema_version": "1"}))
            .unwrap()
            .starts_with("schema_version is \"1\"; this iogauge"));
    }
}
