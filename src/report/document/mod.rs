//! The typed result documents: what `check --format json` prints and what `preflight` writes
//! beside troubleshoot's files. The HTML report, the history and the Kubernetes mode read them
//! back, so they derive `Deserialize`, carry a schema version, and say where they were measured.
//! A JSON Schema generated from these types is committed under `docs/schema/`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The check document lives in its own file; it is read and written as this module's.
mod check;
pub use check::{
    CheckDocument, CheckVerdict, FioReport, GuidanceMet, InfoOutcome, IoErrorDetail, LatencyStats,
    MetricOutcome, ProfileOutcome, ReferenceValue, RunReport, SmallFilesResult, Summary,
};
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
