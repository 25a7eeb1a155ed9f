//! The outcome of one `iogauge check` profile: each metric against its thresholds, the rank
//! against reference systems, trust warnings, and what to do next. A profile that could not run,
//! was interrupted, or never started still has an outcome, so every requested profile appears
//! in the result.

use super::criteria::Better;
use super::criteria::OutcomeKind;
use super::criteria::{Amount, Metric, MetricKey, Profile, Tuning};
use super::profile::{judge, metric_value, rank, rank_line, show, threshold_text, Measured};
use super::trust::{self, Place};
use crate::model::JobSpec;
use crate::report::document::{
    CheckVerdict, GuidanceMet, InfoOutcome, IoErrorDetail, MetricOutcome, ProfileOutcome,
    ReferenceValue, RunReport, Summary,
};
use crate::report::json::json_value;
use crate::report::Report;

/// How a profile's run is judged beyond its thresholds.
#[derive(Debug, Clone, Default)]
pub(crate) struct Judging {
    pub shortened: bool,
    /// A shortened run is at most WARN (`--strict`).
    pub strict: bool,
    pub place: Place,
}

fn verdict_of(k: OutcomeKind) -> CheckVerdict {
    match k {
        OutcomeKind::Pass => CheckVerdict::Pass,
        OutcomeKind::Warn => CheckVerdict::Warn,
        OutcomeKind::Fail => CheckVerdict::Fail,
    }
}

fn empty(p: &Profile, verdict: CheckVerdict, reason: String) -> ProfileOutcome {
    ProfileOutcome {
        profile: p.name.clone(),
        title: p.title.clone(),
        verdict,
        metric: None,
        value: None,
        unit: None,
        threshold: None,
        source: None,
        references: None,
        metrics: Vec::new(),
        info: Vec::new(),
        shortened: false,
        not_disk: None,
        warnings: Vec::new(),
        reason: Some(reason),
        advice: Vec::new(),
        job: None,
        report: None,
        partial: false,
        io_error: None,
        sequential: None,
    }
}

/// A profile without a measured verdict: it could not run, was interrupted, or was skipped.
pub(crate) fn not_measured(p: &Profile, verdict: CheckVerdict, reason: String) -> ProfileOutcome {
    empty(p, verdict, reason)
}

/// A profile whose run an error ended before its end: verdict `error` with `reason`, and the
/// numbers measured until then kept in `report`, marked partial and not judged.
pub(crate) fn partial(
    p: &Profile,
    job: Option<&JobSpec>,
    report: &Report,
    io_error: IoErrorDetail,
    reason: String,
) -> ProfileOutcome {
    let mut out = empty(p, CheckVerdict::Error, reason);
    out.partial = true;
    out.io_error = Some(io_error);
    out.job = job.map(|j| p.fio_options(j));
    out.report = Some(RunReport::Fio(json_value(report, false).into()));
    out
}

/// Judges a profile's run.
pub(crate) fn evaluate(
    p: &Profile,
    tuning: &Tuning,
    job: Option<&JobSpec>,
    measured: &Measured,
    how: &Judging,
) -> ProfileOutcome {
    let trust = trust::assess(job, measured, &how.place);
    let mut out = empty(p, CheckVerdict::Pass, String::new());
    out.reason = None;
    out.sequential = match measured {
        Measured::Fio(r) => r.jobs.first().and_then(|j| j.sequential.clone()),
        Measured::SmallFiles(_) => None,
    };
    let stopped_early = out.sequential.as_ref().is_some_and(|s| s.stopped_early);
    for m in &p.metrics {
        let scaled = per_file_threshold(p, m, tuning);
        let m = scaled.as_ref().unwrap_or(m);
        let label = p.label(&m.label, tuning);
        let Some(v) = metric_value(measured, m.key) else {
            out.verdict = out.verdict.max(CheckVerdict::Error);
            out.reason = Some(format!("{label}: not measured"));
            continue;
        };
        let k = judge(m, v);
        let (refs, _) = rank(p, m.key, m.better, v);
        out.verdict = out.verdict.max(verdict_of(k));
        out.metrics.push(MetricOutcome {
            metric: m.key.name().to_string(),
            label,
            verdict: verdict_of(k),
            value: v,
            unit: m.key.unit().to_string(),
            threshold: m.pass.value().unwrap_or(f64::NAN),
            warn_threshold: m.warn.as_ref().and_then(|w| w.value().ok()),
            better: if m.better == Better::Lower {
                "lower"
            } else {
                "higher"
            }
            .to_string(),
            source: m.source.clone(),
            references: refs
                .into_iter()
                .map(|r| ReferenceValue {
                    system: r.system,
                    value: r.value,
                })
                .collect(),
            // A rank of RAM against disks means nothing; published figures come from the full
            // recipe, so a run that stopped early is not ranked among them.
            rank: if trust.not_disk.is_none() && !stopped_early {
                rank_line(p, m, v)
            } else {
                None
            },
            value_text: show(m.key, v),
            threshold_text: threshold_text(m),
            verdict_label: match k {
                OutcomeKind::Pass => m.pass_label.clone(),
                OutcomeKind::Warn => m.warn_label.clone(),
                OutcomeKind::Fail => m.fail_label.clone(),
            },
        });
    }
    for i in &p.info {
        if let Some(v) = metric_value(measured, i.key) {
            out.info.push(InfoOutcome {
                metric: i.key.name().to_string(),
                label: p.label(&i.label, tuning),
                value: v,
                unit: i.key.unit().to_string(),
                guidance: i
                    .guidance
                    .iter()
                    .map(|g| GuidanceMet {
                        label: g.label.clone(),
                        value: g.value,
                        met: v >= g.value,
                    })
                    .collect(),
                value_text: show(i.key, v),
            });
        }
    }
    if let Some(first) = out.metrics.first() {
        out.metric = Some(first.metric.clone());
        out.value = Some(first.value);
        out.unit = Some(first.unit.clone());
        out.threshold = Some(first.threshold);
        out.source = Some(first.source.clone());
        out.references = Some(first.references.clone());
    }
    out.warnings = trust.warnings;
    if trust.not_disk.is_some() {
        out.verdict = out.verdict.max(CheckVerdict::Warn);
        out.not_disk = trust.not_disk;
    }
    out.shortened = how.shortened;
    if how.shortened {
        out.warnings.insert(
            0,
            "shortened run (--scale, --duration, --size, --max-size, or a device smaller than the test file): a quick look, not the published recipe"
                .into(),
        );
        if how.strict {
            out.verdict = out.verdict.max(CheckVerdict::Warn);
        }
    }
    if matches!(out.verdict, CheckVerdict::Warn | CheckVerdict::Fail) {
        out.advice = advice(p, &out, how);
    }
    out.job = job.map(|j| p.fio_options(j));
    out.report = Some(match measured {
        // fio's layout is the fio renderer's; re-read here so the document holds it as data.
        Measured::Fio(r) => RunReport::Fio(json_value(r, false).into()),
        Measured::SmallFiles(s) => RunReport::SmallFiles(s.result()),
    });
    out
}

/// The small-files test's total time is judged per file: with fewer files than published
/// (`--scale`), the time limit shrinks in proportion (GitLab's 10 s for 1,000 files is 1 s for
/// 100), or a shortened run would pass a disk ten times too slow. None: nothing to scale.
fn per_file_threshold(p: &Profile, m: &Metric, tuning: &Tuning) -> Option<Metric> {
    if m.key != MetricKey::SmallFilesTotal {
        return None;
    }
    let (published, used) = (p.small_files?.files, p.small_files(tuning)?.files);
    if published == used || published == 0 {
        return None;
    }
    let factor = used as f64 / published as f64;
    let scale = |a: &Amount| a.value().ok().map(|v| Amount::Number(v * factor));
    Some(Metric {
        pass: scale(&m.pass)?,
        warn: match &m.warn {
            Some(w) => Some(scale(w)?),
            None => None,
        },
        ..m.clone()
    })
}

/// What to do next: the reason for a WARN that is not about the disk comes first, then the
/// profile's own advice when a metric itself fell short.
fn advice(p: &Profile, o: &ProfileOutcome, how: &Judging) -> Vec<String> {
    let mut a = Vec::new();
    if o.not_disk.is_some() {
        a.push("run the check in a directory on the disk the workload will use (--dir)".into());
    }
    if how.shortened && how.strict {
        a.push("run without --scale, --duration and --size for a result to rely on".into());
    }
    if o.metrics.iter().any(|m| m.verdict != CheckVerdict::Pass) {
        a.extend(p.advice.iter().cloned());
    }
    a
}

/// The check's overall result, which decides the exit code: an interrupt ends everything; a
/// FAIL is a definite answer about the disk and wins over a profile that could not run; that
/// in turn wins over WARN and PASS, which would claim a complete check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overall {
    Pass,
    Warn,
    Error,
    Fail,
    Interrupted,
}

pub(crate) fn overall(outcomes: &[ProfileOutcome], strict: bool) -> Overall {
    overall_of(&Summary::of(outcomes), strict)
}

/// [`overall`] from the counts alone (a Kubernetes run adds up its targets' summaries).
pub(crate) fn overall_of(s: &Summary, strict: bool) -> Overall {
    if s.interrupted > 0 || s.skipped > 0 {
        Overall::Interrupted
    } else if s.failed > 0 || (strict && s.warned > 0) {
        Overall::Fail
    } else if s.errors > 0 {
        Overall::Error
    } else if s.warned > 0 {
        Overall::Warn
    } else {
        Overall::Pass
    }
}

/// Under `--strict`, why each warned profile counts as a failure, one phrase per profile: its
/// metrics that warned, a result that is not a disk measurement, a shortened run. (The summary
/// says "0 failed", so the exit code 3 needs its reason.)
pub(crate) fn strict_reasons(outcomes: &[ProfileOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter(|o| o.verdict == CheckVerdict::Warn)
        .map(|o| {
            let mut why: Vec<String> = o
                .metrics
                .iter()
                .filter(|m| m.verdict == CheckVerdict::Warn)
                .map(|m| format!("{} {} ({})", m.label, m.value_text, m.threshold_text))
                .collect();
            if o.not_disk.is_some() {
                why.push("not a disk measurement".into());
            }
            if o.shortened {
                why.push("a shortened run".into());
            }
            if why.is_empty() {
                why.push("a warning".into());
            }
            format!("{} warned: {}", o.profile, why.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::profiles::get;
    use crate::report::small_files::SmallFilesReport;
    use crate::report::LatSummary;

    fn small_files(total_ns: u64) -> Measured {
        Measured::SmallFiles(SmallFilesReport {
            files: 100,
            file_size: 5,
            create_ns: total_ns / 2,
            read_ns: total_ns - total_ns / 2,
            create: LatSummary::default(),
            read: LatSummary::default(),
        })
    }

    fn tuning(scale: f64) -> Tuning {
        Tuning {
            scale,
            ..Tuning::default()
        }
    }

    #[test]
    fn a_partial_run_is_an_unjudged_error_with_its_numbers_and_the_typed_error() {
        let p = get("etcd").unwrap();
        let report = crate::report::fixtures::run1();
        let e = IoErrorDetail {
            operation: "fdatasync".into(),
            file: "d/iogauge-etcd.1.2".into(),
            offset: 926900,
            length: 0,
            errno: 5,
            message: "Input/output error".into(),
        };
        let o = partial(&p, None, &report, e.clone(), "why".into());
        assert_eq!(o.verdict, CheckVerdict::Error);
        assert!(o.partial && o.metrics.is_empty() && o.info.is_empty());
        assert_eq!((o.io_error, o.reason.as_deref()), (Some(e), Some("why")));
        let Some(RunReport::Fio(v)) = &o.report else {
            panic!("no fio report");
        };
        assert_eq!(v["jobs"][0]["jobname"], report.jobs[0].name.as_str());
        // An outcome without them (an older document) reads as not partial.
        let mut j =
            serde_json::to_value(not_measured(&p, CheckVerdict::Error, "x".into())).unwrap();
        let m = j.as_object_mut().unwrap();
        m.remove("partial");
        m.remove("io_error");
        let back: ProfileOutcome = serde_json::from_value(j).unwrap();
        assert!(!back.partial && back.io_error.is_none());
    }

    #[test]
    fn boundaries_not_disk_and_strict_shortened() {
        let p = get("small-files").unwrap();
        let t = tuning(0.1);
        let plain = Judging::default();
        // 100 of the published 1,000 files: GitLab's 10 s becomes 1 s.
        let o = evaluate(&p, &t, None, &small_files(999_999_999), &plain);
        assert_eq!(o.verdict, CheckVerdict::Pass);
        assert!(o.advice.is_empty());
        assert_eq!(
            o.metrics[0].label,
            "create 100 small files and read them back"
        );
        assert_eq!(o.metrics[0].threshold, 1e9);
        assert_eq!(o.metrics[0].threshold_text, "< 1 s");
        let o = evaluate(&p, &t, None, &small_files(1_000_000_000), &plain);
        assert_eq!(o.verdict, CheckVerdict::Fail);
        assert_eq!(o.advice, p.advice);
        // As published: 10 s.
        let full = tuning(1.0);
        let o = evaluate(&p, &full, None, &small_files(9_999_999_999), &plain);
        assert_eq!(
            (o.verdict, o.metrics[0].threshold),
            (CheckVerdict::Pass, 1e10)
        );
        let o = evaluate(&p, &full, None, &small_files(10_000_000_000), &plain);
        assert_eq!(o.verdict, CheckVerdict::Fail);
        // A passing number on memory is a WARN with the reason, and no rank.
        let tmpfs = Judging {
            place: Place {
                memory: Some("tmpfs (memory)".into()),
                ..Place::default()
            },
            ..Judging::default()
        };
        let o = evaluate(&p, &t, None, &small_files(1000), &tmpfs);
        assert_eq!(o.verdict, CheckVerdict::Warn);
        assert!(o.not_disk.as_deref().unwrap().contains("tmpfs (memory)"));
        assert_eq!(
            o.advice,
            ["run the check in a directory on the disk the workload will use (--dir)"]
        );
        assert!(o.metrics.iter().all(|m| m.rank.is_none()));
        // Shortened: a warning line; WARN only under --strict.
        let short = Judging {
            shortened: true,
            ..Judging::default()
        };
        let o = evaluate(&p, &t, None, &small_files(1000), &short);
        assert_eq!(o.verdict, CheckVerdict::Pass);
        assert!(o.warnings[0].starts_with("shortened run"));
        let strict = Judging {
            shortened: true,
            strict: true,
            ..Judging::default()
        };
        let o = evaluate(&p, &t, None, &small_files(1000), &strict);
        assert_eq!(o.verdict, CheckVerdict::Warn);
        // What --strict's exit 3 names, since the summary says "0 failed".
        assert_eq!(
            strict_reasons(&[o, evaluate(&p, &t, None, &small_files(1000), &tmpfs)]),
            [
                "small-files warned: a shortened run",
                "small-files warned: not a disk measurement"
            ]
        );
        let s = get("sync-iops").unwrap();
        let mut o = not_measured(&s, CheckVerdict::Warn, String::new());
        o.metrics.push(MetricOutcome {
            metric: "write_iops".into(),
            label: "synchronous write IOPS".into(),
            verdict: CheckVerdict::Warn,
            value: 900.0,
            unit: "IOPS".into(),
            threshold: 1000.0,
            warn_threshold: Some(750.0),
            better: "higher".into(),
            source: String::new(),
            references: Vec::new(),
            rank: None,
            value_text: "900 IOPS".into(),
            threshold_text: threshold_text(&s.metrics[0]),
            verdict_label: None,
        });
        assert_eq!(
            strict_reasons(&[o]),
            ["sync-iops warned: synchronous write IOPS 900 IOPS (≥ 1000 IOPS to pass, ≥ 750 IOPS to avoid failing)"]
        );
    }

    #[test]
    fn overall_result_and_summary() {
        let p = get("etcd").unwrap();
        let with = |v: &[CheckVerdict]| -> Vec<ProfileOutcome> {
            v.iter()
                .map(|&v| not_measured(&p, v, String::new()))
                .collect()
        };
        use CheckVerdict::*;
        assert_eq!(overall(&with(&[Pass, Pass]), false), Overall::Pass);
        assert_eq!(overall(&with(&[Pass, Warn]), false), Overall::Warn);
        assert_eq!(overall(&with(&[Pass, Warn]), true), Overall::Fail);
        assert_eq!(overall(&with(&[Warn, Error]), false), Overall::Error);
        assert_eq!(overall(&with(&[Fail, Error]), false), Overall::Fail);
        assert_eq!(
            overall(&with(&[Fail, Interrupted, Skipped]), false),
            Overall::Interrupted
        );
        assert_eq!(overall(&with(&[]), false), Overall::Pass);
        let s = Summary::of(&with(&[Pass, Warn, Fail, Interrupted, Skipped, Skipped]));
        assert_eq!(
            s.line(),
            "1 passed, 1 warned, 1 failed, 1 interrupted, 2 not run"
        );
    }
}
