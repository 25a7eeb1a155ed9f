//! One probe: a profile in its low-duty form, run through `app::check` (so that directory
//! checks, free space, file identity and cleanup are check's own), reduced to what the window
//! and the cumulative series need, or to why it failed in one of a few words.

use super::CanaryRequest;
use crate::app::check::{check, CheckRequest, Checked, Observer, ProfileSource};
use crate::input::profiles::{Profile, Tuning};
use crate::model::{DDIR_READ, DDIR_WRITE};
use crate::report::document::{CheckDocument, CheckVerdict};
use crate::report::Report;
use crate::run::monitor::ProgressSink;
use crate::run::stop::Stop;
use std::time::{Duration, Instant, SystemTime};

/// The canary's normal probe as a share of the published recipe: etcd writes 1.1 MiB (about
/// 500 fdatasyncs), sync-iops and gitlab run 3 s and 1.5 s. An hour's window then holds
/// thousands of syncs, enough for a p99 decided at 99.9 %.
pub(crate) const BASE_SCALE: f64 = 0.05;

/// What a probe that ran to its end measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProbeSample {
    /// When it ended.
    pub at: SystemTime,
    /// The fsync/fdatasync latency histogram: (bucket value ns, count), ascending.
    pub sync: Vec<(u64, u64)>,
    /// Completion latency histograms of reads and writes, same form.
    pub clat: [Vec<(u64, u64)>; 2],
    /// I/Os per direction (read, write) in the measured period.
    pub ios: [u64; 2],
    /// The measured period, seconds.
    pub seconds: f64,
}

/// Why a probe failed, as the `reason` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum FailReason {
    NoSpace,
    ReadOnly,
    MissingDirectory,
    IoError,
    Other,
}

impl FailReason {
    pub(crate) const ALL: [FailReason; 5] = [
        FailReason::NoSpace,
        FailReason::ReadOnly,
        FailReason::MissingDirectory,
        FailReason::IoError,
        FailReason::Other,
    ];

    pub(crate) fn word(self) -> &'static str {
        match self {
            FailReason::NoSpace => "no_space",
            FailReason::ReadOnly => "read_only",
            FailReason::MissingDirectory => "missing_directory",
            FailReason::IoError => "io_error",
            FailReason::Other => "other",
        }
    }
}

/// A probe's end.
#[derive(Debug, Clone)]
pub(crate) enum Probed {
    Sample(Box<ProbeSample>),
    Failed(FailReason, String),
    /// A signal stopped it: not counted, the canary is ending.
    Interrupted,
}

/// One profile's probe with its wall time; `doc` is check's document when it ran at all (for
/// the history).
pub(crate) struct Probe {
    pub probed: Probed,
    pub wall: Duration,
    pub doc: Option<CheckDocument>,
}

/// Check's notes go nowhere: a canary must not repeat its plan lines every few minutes. What
/// matters (a failure) comes back in the document and is said once per change.
struct Quiet;

impl crate::observer::Observer for Quiet {
    fn note(&mut self, _line: &str) {}
}

impl Observer for Quiet {
    fn progress(&mut self, _job: &str) -> Option<ProgressSink> {
        None
    }
    fn done(&mut self) {}
}

/// Runs `profile` once at `scale` (of [`BASE_SCALE`]).
pub(crate) fn probe(req: &CanaryRequest, profile: &Profile, scale: f64, stop: &Stop) -> Probe {
    let started = Instant::now();
    let creq = CheckRequest {
        profiles: vec![ProfileSource::Resolved(Box::new(profile.clone()))],
        dir: req.dir.clone(),
        device: req.device,
        allow_overwrite: req.allow_overwrite,
        tuning: Tuning {
            scale: BASE_SCALE * scale,
            ..Tuning::default()
        },
        strict: false,
        sequential: false,
        keep_files: false,
        notes: Vec::new(),
        diag: req.diag.clone(),
    };
    let result = check(&creq, stop, &mut Quiet);
    let wall = started.elapsed();
    if stop.is_set() {
        return Probe {
            probed: Probed::Interrupted,
            wall,
            doc: None,
        };
    }
    match result {
        Ok(Checked { doc, reports, .. }) => {
            let probed = match (doc.profiles.first(), reports.into_iter().next().flatten()) {
                (Some(o), Some(r)) if !matches!(o.verdict, CheckVerdict::Error) => {
                    Probed::Sample(Box::new(sample(&r)))
                }
                (Some(o), _) => {
                    let why = o.reason.clone().unwrap_or_else(|| "no result".into());
                    let errno = o.io_error.as_ref().map(|e| e.errno);
                    Probed::Failed(classify(errno, &why, req), why)
                }
                (None, _) => Probed::Failed(FailReason::Other, "no result".into()),
            };
            Probe {
                probed,
                wall,
                doc: Some(doc),
            }
        }
        Err(e) => {
            let why = e.line("iogauge canary").unwrap_or_default();
            let why = why
                .strip_prefix("iogauge canary: ")
                .unwrap_or(&why)
                .to_string();
            Probe {
                probed: Probed::Failed(classify(None, &why, req), why),
                wall,
                doc: None,
            }
        }
    }
}

/// A run's report in the window's terms.
fn sample(r: &Report) -> ProbeSample {
    let mut s = ProbeSample {
        at: SystemTime::now(),
        sync: Vec::new(),
        clat: [Vec::new(), Vec::new()],
        ios: [0, 0],
        seconds: 0.0,
    };
    if let Some(j) = r.jobs.first() {
        s.sync = j.sync.lat.bins.clone();
        for (i, d) in [DDIR_READ, DDIR_WRITE].into_iter().enumerate() {
            s.clat[i] = j.dirs[d].clat.bins.clone();
            s.ios[i] = j.dirs[d].total_ios;
        }
        s.seconds = j.job_runtime_ms as f64 / 1000.0;
    }
    s
}

/// The reason label of a failure: the errno when the run had one, else what the directory and
/// the message say.
fn classify(errno: Option<i32>, why: &str, req: &CanaryRequest) -> FailReason {
    match errno {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => return FailReason::NoSpace,
        Some(libc::EROFS) => return FailReason::ReadOnly,
        Some(libc::ENOENT) => return FailReason::MissingDirectory,
        Some(libc::EIO) => return FailReason::IoError,
        Some(_) => return FailReason::Other,
        None => {}
    }
    let lower = why.to_ascii_lowercase();
    if !req.device && !req.dir.exists() {
        FailReason::MissingDirectory
    } else if lower.contains("read-only") {
        FailReason::ReadOnly
    } else if lower.contains("free space") || lower.contains("no space") {
        FailReason::NoSpace
    } else if lower.contains("input/output error") {
        FailReason::IoError
    } else {
        FailReason::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn failures_are_labelled_by_errno_then_by_what_the_directory_says() {
        let d = tempfile::tempdir().unwrap();
        let mut req = CanaryRequest {
            profiles: Vec::new(),
            dir: d.path().to_path_buf(),
            device: false,
            allow_overwrite: false,
            every: Duration::from_secs(1),
            window: Duration::from_secs(3),
            max_busy: 0.01,
            node: String::new(),
            diag: crate::diag::Diag::default(),
        };
        let c = |errno, why: &str, req: &CanaryRequest| classify(errno, why, req);
        assert_eq!(c(Some(libc::ENOSPC), "", &req), FailReason::NoSpace);
        assert_eq!(c(Some(libc::EDQUOT), "", &req), FailReason::NoSpace);
        assert_eq!(c(Some(libc::EROFS), "", &req), FailReason::ReadOnly);
        assert_eq!(
            c(Some(libc::ENOENT), "", &req),
            FailReason::MissingDirectory
        );
        assert_eq!(c(Some(libc::EIO), "", &req), FailReason::IoError);
        assert_eq!(c(Some(libc::EACCES), "", &req), FailReason::Other);
        let free = "not enough free space in '/d': the test file needs 1 MiB";
        assert_eq!(c(None, free, &req), FailReason::NoSpace);
        assert_eq!(
            c(None, "open: Read-only file system", &req),
            FailReason::ReadOnly
        );
        assert_eq!(c(None, "something else", &req), FailReason::Other);
        req.dir = d.path().join("gone");
        assert_eq!(
            c(None, "something else", &req),
            FailReason::MissingDirectory
        );
    }
}
