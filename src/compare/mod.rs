//! `iogauge compare`: two results (or two groups of repeated results) of the same checks,
//! metric by metric, with a ratio, its 95 % confidence interval and a verdict in the style of
//! Go's benchstat.

pub(crate) mod samples;
pub(crate) mod stats;

use crate::report::comparison::{ChangeVerdict, CompareDocument, MetricComparison, RunRef};
use crate::report::document::{DocumentKind, SCHEMA_VERSION};
use crate::workload::rng::Rng;
use samples::{samples, Direction, Sample, Within};
use serde_json::Value;
use std::time::Duration;

/// The fewest runs per side with which Mann–Whitney can reach p < 0.05 (2/70 with 4 and 4;
/// 3 and 3 can give no less than 0.1).
pub(crate) const MIN_RUNS: usize = 4;

/// Intervals needed on each side for a within-run interval: fewer cannot show how a run varies.
pub(crate) const MIN_INTERVALS: usize = 5;

/// The relative change below which a difference is noise, per kind of metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Noise {
    /// Latencies and times (ns).
    pub latency: f64,
    /// Rates: IOPS, bandwidth, files per second.
    pub rate: f64,
}

impl Default for Noise {
    fn default() -> Self {
        // Repeated runs on one disk move p99 latencies by several percent and rates by a few;
        // smaller changes are not worth a "worse" (docs/COMPARE.md).
        Noise {
            latency: 0.10,
            rate: 0.05,
        }
    }
}

impl std::str::FromStr for Noise {
    type Err = String;

    /// `latency=10%,rate=5%` (either part; percentages or fractions).
    fn from_str(v: &str) -> Result<Noise, String> {
        let mut n = Noise::default();
        for part in v.split(',') {
            let (k, val) = part.split_once('=').ok_or_else(|| {
                format!("'{part}': expected latency=PCT or rate=PCT, e.g. latency=10%,rate=5%")
            })?;
            let slot = match k {
                "latency" => &mut n.latency,
                "rate" => &mut n.rate,
                _ => {
                    return Err(format!(
                        "'{k}': the metric kinds are latency and rate, e.g. latency=10%"
                    ))
                }
            };
            *slot = match val.strip_suffix('%') {
                Some(p) => p.parse::<f64>().map(|p| p / 100.0),
                None => val.parse::<f64>(),
            }
            .ok()
            .filter(|x| (0.0..1.0).contains(x))
            .ok_or_else(|| {
                format!(
                    "'{val}': expected a percentage from 0% to 99% (or a fraction below 1), \
                     e.g. {k}=5%"
                )
            })?;
        }
        Ok(n)
    }
}

/// One side's runs: where each came from, and its document.
pub(crate) type Runs = [(String, Value)];

/// Why a run stopped before its end, when its document says it did: fio's `iogauge.interrupted`
/// (or, in runs saved before that field, the note the history added), a check's or kube run's
/// interrupted profile or target.
pub(crate) fn interrupted(doc: &Value) -> Option<String> {
    let s = |v: &Value| v.as_str().map(str::to_string);
    if let Some(why) = s(&doc["iogauge"]["interrupted"]) {
        return Some(why);
    }
    let listed = |list: &Value, field: &str, name: &str| {
        list.as_array()?
            .iter()
            .find(|x| x[field] == "interrupted")
            .map(|x| format!("interrupted during {}", s(&x[name]).unwrap_or_default()))
    };
    match DocumentKind::sniff(doc) {
        Some(DocumentKind::Check) => return listed(&doc["profiles"], "verdict", "profile"),
        Some(DocumentKind::Kube) => return listed(&doc["targets"], "status", "target"),
        _ => {}
    }
    doc["iogauge"]["notes"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|n| n.starts_with("interrupted by "))
        .map(|n| n.split(';').next().unwrap_or(n).to_string())
}

fn run_ref(source: &str, doc: &Value) -> RunRef {
    let s = |v: &Value| v.as_str().map(str::to_string);
    let interrupted = interrupted(doc);
    let kind = DocumentKind::sniff(doc);
    if kind == Some(DocumentKind::Kube) {
        let targets: Vec<String> = doc["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| s(&t["target"]))
            .collect();
        RunRef {
            source: source.into(),
            kind: "kube".into(),
            host: s(&doc["cluster"]),
            target: Some(targets.join(", ")),
            started: None,
            interrupted,
        }
    } else if kind == Some(DocumentKind::Check) {
        // Older documents hold the directory as typed ("."): the context's is absolute.
        let dir = s(&doc["dir"]);
        let target = match (dir, s(&doc["context"]["directory"])) {
            (Some(d), Some(abs)) if !d.starts_with('/') && doc["device"] != true => Some(abs),
            (d, _) => d,
        };
        RunRef {
            source: source.into(),
            kind: "check".into(),
            host: s(&doc["context"]["hostname"]),
            target,
            started: None,
            interrupted,
        }
    } else {
        let jobs: Vec<String> = doc["jobs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|j| s(&j["jobname"]))
            .collect();
        RunRef {
            source: source.into(),
            kind: "fio".into(),
            host: s(&doc["iogauge"]["context"]["hostname"]),
            target: Some(jobs.join(", ")),
            // fio stamps the document when the last job ended.
            started: doc["timestamp"]
                .as_u64()
                .map(|t| crate::history::rfc3339(std::time::UNIX_EPOCH + Duration::from_secs(t))),
            interrupted,
        }
    }
}

/// Compares B's runs with A's. Err: a document that cannot be compared, nothing in common, or
/// an interrupted run without `include_interrupted`.
pub(crate) fn compare(
    a: &Runs,
    b: &Runs,
    noise: &Noise,
    include_interrupted: bool,
) -> Result<CompareDocument, String> {
    if a.is_empty() || b.is_empty() {
        return Err("compare needs at least one run on each side".into());
    }
    let cut_short: Vec<(String, String)> = a
        .iter()
        .chain(b)
        .filter_map(|(src, doc)| Some((src.clone(), interrupted(doc)?)))
        .collect();
    match cut_short.as_slice() {
        _ if include_interrupted => {}
        [] => {}
        [(src, why)] => {
            return Err(format!(
                "{src} was {why}, so its numbers cover only part of the run: compare complete \
                 runs, or add --include-interrupted to compare it anyway (it is then marked)"
            ))
        }
        many => {
            let list: Vec<String> = many.iter().map(|(s, w)| format!("{s} ({w})")).collect();
            return Err(format!(
                "{} were interrupted, so their numbers cover only part of each run: compare \
                 complete runs, or add --include-interrupted to compare them anyway (they are \
                 then marked)",
                list.join(", ")
            ));
        }
    }
    same_length(a, b)?;
    let load = |runs: &Runs| -> Result<Vec<Vec<Sample>>, String> {
        runs.iter()
            .map(|(src, doc)| samples(doc).map_err(|e| format!("{src}: {e}")))
            .collect()
    };
    let (sa, sb) = (load(a)?, load(b)?);
    let single = a.len() == 1 && b.len() == 1;
    let mut metrics = Vec::new();
    let mut unmatched = Vec::new();
    let find = |runs: &[Vec<Sample>], key: &str| -> Option<Vec<Sample>> {
        runs.iter()
            .map(|r| r.iter().find(|s| s.key == key).cloned())
            .collect()
    };
    let mut rng = Rng::new(stats::SEED);
    for first in &sa[0] {
        match (find(&sa, &first.key), find(&sb, &first.key)) {
            (Some(xa), Some(xb)) => metrics.push(if single {
                one_each(&xa[0], &xb[0], noise, &mut rng)
            } else {
                groups(&xa, &xb, noise)
            }),
            _ => unmatched.push(format!("{} (not in every run)", first.key)),
        }
    }
    for s in &sb[0] {
        if !sa[0].iter().any(|x| x.key == s.key) {
            unmatched.push(format!("{} (only in B)", s.key));
        }
    }
    if metrics.is_empty() {
        return Err(format!(
            "A and B have no metric in common (A: {}; B: {}): compare runs of the same profiles or jobs",
            keys(&sa[0]),
            keys(&sb[0])
        ));
    }
    let (ra, rb): (Vec<RunRef>, Vec<RunRef>) = (
        a.iter().map(|(s, d)| run_ref(s, d)).collect(),
        b.iter().map(|(s, d)| run_ref(s, d)).collect(),
    );
    let mut notes = Vec::new();
    for r in ra
        .iter()
        .map(|r| ("A", r))
        .chain(rb.iter().map(|r| ("B", r)))
    {
        if let (
            side,
            RunRef {
                source,
                interrupted: Some(why),
                ..
            },
        ) = r
        {
            notes.push(format!(
                "{side}'s {source} was {why}: its numbers cover only part of the run \
                 (--include-interrupted)"
            ));
        }
    }
    let floor = stats::smallest_p(a.len(), b.len());
    let needs = if single {
        format!(
            "One run per side: a verdict rests on how each run varied within itself (at least \
             {MIN_INTERVALS} intervals each); whether a repeat would differ is not assessed: for \
             that, repeat each side at least {MIN_RUNS} times and pass them with --a and --b."
        )
    } else if floor >= stats::ALPHA {
        format!(
            "No verdict is possible with {} run{} against {}: a difference needs at least \
             {MIN_RUNS} runs per side to reach 95 % confidence; run each side again.",
            a.len(),
            if a.len() == 1 { "" } else { "s" },
            b.len()
        )
    } else {
        format!(
            "A verdict needs at least {MIN_RUNS} runs per side; here {} against {}.",
            a.len(),
            b.len()
        )
    };
    let method = if single {
        let ms = metrics
            .iter()
            .zip(&sa[0])
            .filter_map(|(_, s)| match &s.within {
                Within::Percentile { interval_ms, .. } | Within::Mean { interval_ms, .. } => {
                    Some(*interval_ms)
                }
                Within::None => None,
            })
            .max();
        notes.push(format!(
            "one run per side: each interval reflects how the numbers varied within each run \
             (moving-block bootstrap over {} intervals, {} resamples, fixed seed); run-to-run \
             variance was not assessed: repeat each side and pass the runs with --a and --b",
            ms.map(|m| format!("{m} ms"))
                .unwrap_or_else(|| "time".into()),
            stats::RESAMPLES
        ));
        "within-run block bootstrap".to_string()
    } else {
        notes.push(format!(
            "{} run(s) against {}: each run is one sample; Mann-Whitney U for the p-value, the \
             Hodges-Lehmann ratio with its distribution-free 95 % interval",
            a.len(),
            b.len()
        ));
        "Mann-Whitney U".to_string()
    };
    let hosts = |r: &[RunRef]| r.iter().filter_map(|x| x.host.clone()).collect::<Vec<_>>();
    let (ha, hb) = (hosts(&ra), hosts(&rb));
    if !ha.is_empty() && !hb.is_empty() && ha[0] != hb[0] {
        notes.push(format!("A ran on {} and B on {}", ha[0], hb[0]));
    }
    Ok(CompareDocument {
        schema_version: SCHEMA_VERSION,
        iogauge: env!("CARGO_PKG_VERSION").to_string(),
        a: ra,
        b: rb,
        method,
        needs,
        notes,
        metrics,
        unmatched,
    })
}

/// Each profile of a check document (or of each target of a kube document), and whether it
/// stopped once its verdict was decided (`iogauge check` without `--full`).
fn profile_lengths(doc: &Value) -> Vec<(String, bool)> {
    let of = |prefix: &str, check: &Value| -> Vec<(String, bool)> {
        check["profiles"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let early = p["sequential"]["stopped_early"].as_bool() == Some(true);
                Some((format!("{prefix}{}", p["profile"].as_str()?), early))
            })
            .collect()
    };
    match doc["targets"].as_array() {
        Some(targets) => targets
            .iter()
            .flat_map(|t| {
                of(
                    &format!("{}: ", t["target"].as_str().unwrap_or("?")),
                    &t["check"],
                )
            })
            .collect(),
        None => of("", doc),
    }
}

/// A profile that stopped early and the same profile run at full length are kept apart: their
/// numbers rest on different amounts of data, and only the full recipe's compare with published
/// figures.
fn same_length(a: &Runs, b: &Runs) -> Result<(), String> {
    let all: Vec<(&str, Vec<(String, bool)>)> = a
        .iter()
        .chain(b)
        .map(|(src, doc)| (src.as_str(), profile_lengths(doc)))
        .collect();
    for (i, (src, profiles)) in all.iter().enumerate() {
        for (key, early) in profiles {
            let other = all[i + 1..]
                .iter()
                .find_map(|(o, ps)| ps.iter().find(|(k, e)| k == key && e != early).map(|_| *o));
            if let Some(other) = other {
                let (e, f) = if *early { (*src, other) } else { (other, *src) };
                return Err(format!(
                    "{key}: {e} stopped once its verdict was decided (sequential check) and {f} \
                     ran the full recipe: their numbers rest on different amounts of data; \
                     compare runs of one kind (run both with `iogauge check --full`, or both \
                     without)"
                ));
            }
        }
    }
    Ok(())
}

fn keys(s: &[Sample]) -> String {
    if s.is_empty() {
        return "none".into();
    }
    s.iter()
        .map(|x| x.key.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn threshold(s: &Sample, noise: &Noise) -> f64 {
    if s.unit == "ns" {
        noise.latency
    } else {
        noise.rate
    }
}

/// better/worse when the evidence says B differs and by more than the noise threshold.
fn verdict(ratio: f64, differs: bool, direction: Direction, noise: f64) -> ChangeVerdict {
    if !differs || (ratio - 1.0).abs() < noise {
        return ChangeVerdict::Same;
    }
    match (direction, ratio > 1.0) {
        (Direction::LowerIsBetter, true) | (Direction::HigherIsBetter, false) => {
            ChangeVerdict::Worse
        }
        _ => ChangeVerdict::Better,
    }
}

fn base(a: &Sample, noise: f64) -> MetricComparison {
    MetricComparison {
        key: a.key.clone(),
        label: a.label.clone(),
        unit: a.unit.clone(),
        better: match a.direction {
            Direction::LowerIsBetter => "lower".into(),
            Direction::HigherIsBetter => "higher".into(),
        },
        a: a.value,
        b: f64::NAN,
        a_values: vec![a.value],
        b_values: Vec::new(),
        ratio: f64::NAN,
        estimate: None,
        ci: None,
        p_value: None,
        verdict: ChangeVerdict::Unknown,
        noise,
        note: None,
    }
}

/// One run per side: the ratio of the two values, and its interval from independent
/// moving-block bootstraps of each run's intervals.
fn one_each(a: &Sample, b: &Sample, noise: &Noise, rng: &mut Rng) -> MetricComparison {
    let mut m = base(a, threshold(a, noise));
    m.b = b.value;
    m.b_values = vec![b.value];
    m.ratio = b.value / a.value;
    let (ka, kb) = (a.within.intervals(), b.within.intervals());
    if ka < MIN_INTERVALS || kb < MIN_INTERVALS {
        m.note = Some(if ka == 0 || kb == 0 {
            "no within-run samples for this metric: repeat each side (--a/--b) to judge it".into()
        } else {
            format!(
                "too few intervals to judge ({ka} and {kb}; at least {MIN_INTERVALS} each): run \
                 longer, or repeat each side (--a/--b)"
            )
        });
        return m;
    }
    let mut scratch = Vec::new();
    let da = stats::bootstrap(ka, rng, |ix| a.within.statistic(ix, &mut scratch));
    let db = stats::bootstrap(kb, rng, |ix| b.within.statistic(ix, &mut scratch));
    // Scale the draws so that each side's full data gives exactly its reported value (the
    // interval histograms' ≤0.4 % bucket error must not shift the ratio).
    let full = |w: &Within, s: &mut Vec<u64>| {
        let all: Vec<usize> = (0..w.intervals()).collect();
        w.statistic(&all, s)
    };
    let (fa, fb) = (full(&a.within, &mut scratch), full(&b.within, &mut scratch));
    let sa: Vec<f64> = da.iter().map(|x| x * a.value / fa).collect();
    let sb: Vec<f64> = db.iter().map(|x| x * b.value / fb).collect();
    let (lo, hi) = stats::ratio_interval(&sa, &sb);
    if lo.is_finite() && hi.is_finite() {
        m.ci = Some([lo, hi]);
        m.verdict = verdict(m.ratio, lo > 1.0 || hi < 1.0, a.direction, m.noise);
    }
    m
}

/// Several runs per side: each run one sample.
fn groups(a: &[Sample], b: &[Sample], noise: &Noise) -> MetricComparison {
    let va: Vec<f64> = a.iter().map(|s| s.value).collect();
    let vb: Vec<f64> = b.iter().map(|s| s.value).collect();
    let mut m = base(&a[0], threshold(&a[0], noise));
    m.a = stats::median(&va);
    m.b = stats::median(&vb);
    m.a_values = va.clone();
    m.b_values = vb.clone();
    let (_, p) = stats::mann_whitney(&va, &vb);
    m.p_value = Some(p);
    let (est, ci) = stats::hodges_lehmann_ratio(&va, &vb);
    // The ratio shown beside A and B is theirs; the estimate the interval and the verdict use
    // is kept apart, so that "3.98 → 8.68 ms" never reads as 1.509.
    m.ratio = m.b / m.a;
    m.estimate = Some(est);
    m.ci = ci.map(|(l, h)| [l, h]);
    let floor = stats::smallest_p(va.len(), vb.len());
    if floor >= stats::ALPHA {
        m.note = Some(format!(
            "too few runs to detect a difference: with {} and {} runs the smallest possible \
             p-value is {floor:.3}; 4 runs per side can reach 0.05",
            va.len(),
            vb.len()
        ));
        return m;
    }
    m.verdict = verdict(est, p < stats::ALPHA, a[0].direction, m.noise);
    m
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// A fio JSON document with one write job: `iops` and its series, and clat percentiles
    /// with per-interval histograms whose latencies are `lat` plus noise.
    fn fio_doc(iops: f64, lat: f64, intervals: usize, seed: u64) -> Value {
        let mut rng = Rng::new(seed);
        let mut series = Vec::new();
        let mut hist = Vec::new();
        for i in 0..intervals {
            let jitter = 1.0 + (rng.unit_f64() - 0.5) * 0.1;
            series.push(json!([(i + 1) * 500, iops * jitter]));
            let h: Vec<Value> = (0..20)
                .map(|j| json!([(lat * (0.5 + j as f64 / 10.0) * jitter).round(), 5]))
                .collect();
            hist.push(json!([(i + 1) * 100, h]));
        }
        json!({"fio version": "iogauge-0.1.0", "jobs": [{"jobname": "w", "write": {
            "total_ios": 1000, "iops": iops,
            "clat_ns": {"percentile": {"50.000000": lat, "99.000000": lat * 2.4}},
            "iogauge": {"iops_series": series,
                "lat_intervals": {"interval_ms": 100, "latency": "clat", "intervals": hist}}}}]})
    }

    #[test]
    fn one_run_each_same_disk_is_same_and_a_slower_disk_is_worse() {
        let n = Noise::default();
        let a = [("a.json".to_string(), fio_doc(1000.0, 100_000.0, 40, 1))];
        let same = [("b.json".to_string(), fio_doc(1000.0, 100_000.0, 40, 2))];
        let d = compare(&a, &same, &n, false).unwrap();
        assert_eq!(d.method, "within-run block bootstrap");
        assert!(d.notes[0].contains("run-to-run variance was not assessed"));
        for m in &d.metrics {
            assert_eq!(m.verdict, ChangeVerdict::Same, "{m:?}");
            let [lo, hi] = m.ci.unwrap();
            assert!(lo <= m.ratio && m.ratio <= hi, "{m:?}");
        }
        let slow = [("c.json".to_string(), fio_doc(500.0, 300_000.0, 40, 3))];
        let d = compare(&a, &slow, &n, false).unwrap();
        let by = |k: &str| d.metrics.iter().find(|m| m.key == k).unwrap();
        let iops = by("w/write/iops");
        assert_eq!(iops.verdict, ChangeVerdict::Worse);
        assert!((iops.ratio - 0.5).abs() < 1e-9);
        assert!(iops.ci.unwrap()[1] < 1.0);
        let p99 = by("w/write/clat_p99");
        assert_eq!(p99.verdict, ChangeVerdict::Worse);
        assert!(p99.ci.unwrap()[0] > 1.0);
        // Faster is better, and the same seed gives the same report.
        let d2 = compare(&slow, &a, &n, false).unwrap();
        assert_eq!(d2.metrics[0].verdict, ChangeVerdict::Better);
        assert_eq!(compare(&a, &slow, &n, false).unwrap(), d);
    }

    #[test]
    fn groups_use_ranks_and_say_when_there_are_too_few() {
        let n = Noise::default();
        let side = |iops: f64, seeds: std::ops::Range<u64>| -> Vec<(String, Value)> {
            seeds
                .map(|s| {
                    (
                        format!("r{s}"),
                        fio_doc(iops * (1.0 + s as f64 / 100.0), 1e5, 3, s),
                    )
                })
                .collect()
        };
        let d = compare(&side(1000.0, 0..5), &side(700.0, 10..15), &n, false).unwrap();
        let iops = &d.metrics[0];
        assert_eq!(d.method, "Mann-Whitney U");
        assert_eq!(iops.verdict, ChangeVerdict::Worse);
        assert!(iops.p_value.unwrap() < 0.05);
        let [lo, hi] = iops.ci.unwrap();
        let est = iops.estimate.unwrap();
        assert!(lo < est && est < hi && hi < 1.0, "{iops:?}");
        // The ratio shown is that of the medians shown.
        assert_eq!(iops.ratio, iops.b / iops.a);
        assert_eq!(
            d.needs,
            "A verdict needs at least 4 runs per side; here 5 against 5."
        );
        let d = compare(&side(1000.0, 0..3), &side(700.0, 10..13), &n, false).unwrap();
        assert_eq!(d.metrics[0].verdict, ChangeVerdict::Unknown);
        assert_eq!(
            d.needs,
            "No verdict is possible with 3 runs against 3: a difference needs at least 4 runs \
             per side to reach 95 % confidence; run each side again."
        );
        assert!(d.metrics[0]
            .note
            .as_deref()
            .unwrap()
            .starts_with("too few runs to detect a difference: with 3 and 3 runs"));
    }

    #[test]
    fn runs_that_stopped_early_are_not_compared_with_full_ones() {
        let check = |etcd: Value, sync: Value| {
            json!({"profiles": [
                {"profile": "etcd", "sequential": etcd},
                {"profile": "sync-iops", "sequential": sync}
            ]})
        };
        let early = json!({"stopped_early": true});
        let ran_on = json!({"stopped_early": false});
        let a = check(early.clone(), early.clone());
        let b = check(Value::Null, early.clone());
        let runs = |v: &[(&str, &Value)]| -> Vec<(String, Value)> {
            v.iter()
                .map(|(s, d)| (s.to_string(), (*d).clone()))
                .collect()
        };
        // etcd stopped early in A and ran whole in B: refused, though sync-iops matches.
        assert_eq!(
            same_length(&runs(&[("a.json", &a)]), &runs(&[("b.json", &b)])),
            Err(
                "etcd: a.json stopped once its verdict was decided (sequential check) and b.json \
                 ran the full recipe: their numbers rest on different amounts of data; compare \
                 runs of one kind (run both with `iogauge check --full`, or both without)"
                    .into()
            )
        );
        // A sequential run that went the whole way is a full-length run.
        let c = check(ran_on.clone(), early.clone());
        assert!(same_length(&runs(&[("b", &b)]), &runs(&[("c", &c)])).is_ok());
        // In a kube document each target's profiles count on their own.
        let kube =
            |doc: &Value| json!({"targets": [{"target": "storage class fast", "check": doc}]});
        let (ka, kb) = (kube(&a), kube(&b));
        let err = same_length(&runs(&[("ka", &ka)]), &runs(&[("kb", &kb)])).unwrap_err();
        assert!(
            err.starts_with("storage class fast: etcd: ka stopped once"),
            "{err}"
        );
        assert!(same_length(&runs(&[("ka", &ka)]), &runs(&[("a", &a)])).is_ok());
    }

    #[test]
    fn interrupted_runs_are_found_in_every_kind_of_document() {
        let mut fio = fio_doc(1000.0, 1e5, 10, 1);
        assert_eq!(interrupted(&fio), None);
        // Saved by an older iogauge: only the history's note says so.
        fio["iogauge"] = json!({"notes": ["interrupted by SIGTERM; results so far"]});
        assert_eq!(interrupted(&fio).as_deref(), Some("interrupted by SIGTERM"));
        fio["iogauge"]["interrupted"] = json!("interrupted by SIGINT");
        assert_eq!(interrupted(&fio).as_deref(), Some("interrupted by SIGINT"));
        let check = json!({"schema_version": 1, "dir": ".", "context": {"hostname": "h",
            "directory": "/srv/data"},
            "profiles": [{"profile": "etcd", "verdict": "pass"},
                         {"profile": "sync-iops", "verdict": "interrupted"}]});
        assert_eq!(
            interrupted(&check).as_deref(),
            Some("interrupted during sync-iops")
        );
        // A document that says "." is shown with its absolute directory.
        assert_eq!(
            run_ref("r.json", &check).target.as_deref(),
            Some("/srv/data")
        );
        let a = [("a".to_string(), fio_doc(1000.0, 1e5, 10, 1))];
        let b = [("b".to_string(), fio)];
        assert_eq!(
            compare(&a, &b, &Noise::default(), false).unwrap_err(),
            "b was interrupted by SIGINT, so its numbers cover only part of the run: compare \
             complete runs, or add --include-interrupted to compare it anyway (it is then marked)"
        );
        let d = compare(&a, &b, &Noise::default(), true).unwrap();
        assert_eq!(d.b[0].interrupted.as_deref(), Some("interrupted by SIGINT"));
    }

    #[test]
    fn too_few_intervals_and_noise_thresholds() {
        let a = [("a".to_string(), fio_doc(1000.0, 1e5, 3, 1))];
        let b = [("b".to_string(), fio_doc(1020.0, 1e5, 3, 2))];
        let d = compare(&a, &b, &Noise::default(), false).unwrap();
        assert_eq!(d.metrics[0].verdict, ChangeVerdict::Unknown);
        assert_eq!(
            d.metrics[0].note.as_deref(),
            Some("too few intervals to judge (3 and 3; at least 5 each): run longer, or repeat each side (--a/--b)")
        );
        assert_eq!(
            "latency=20%,rate=1%".parse::<Noise>().unwrap(),
            Noise {
                latency: 0.2,
                rate: 0.01
            }
        );
        assert!("iops=5%"
            .parse::<Noise>()
            .unwrap_err()
            .contains("latency and rate"));
        assert!("rate=150%".parse::<Noise>().is_err());
        // A clear 3 % change in a rate is still "~" under the 5 % threshold.
        assert_eq!(
            verdict(0.97, true, Direction::HigherIsBetter, 0.05),
            ChangeVerdict::Same
        );
        assert_eq!(
            verdict(0.90, true, Direction::HigherIsBetter, 0.05),
            ChangeVerdict::Worse
        );
    }
}
