//! What can be compared in a result document: each judged metric (check, and each target of a
//! kube run) or each job's numbers (fio), with the within-run data its uncertainty comes from:
//! the per-interval latency histograms (`iogauge.lat_intervals`) for a percentile, the periodic
//! IOPS samples (`iogauge.iops_series`) for a rate.

use crate::report::document::{CheckDocument, KubeDocument, MetricOutcome};
use crate::report::intervals::{percentile, read_lat_intervals};
use serde_json::Value;

/// Whether a larger value is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    LowerIsBetter,
    HigherIsBetter,
}

/// The data within one run that a statistic can be recomputed from on resampled intervals.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Within {
    /// Nothing to resample (a small-files time, a one-shot number).
    None,
    /// One value per interval; the statistic is their mean, scaled so that the full data gives
    /// the metric's value.
    Mean {
        per_interval: Vec<f64>,
        interval_ms: u64,
    },
    /// A percentile of the latencies: per interval, (index into `values`, count).
    Percentile {
        p: f64,
        values: Vec<f64>,
        intervals: Vec<Vec<(usize, u64)>>,
        interval_ms: u64,
    },
}

impl Within {
    /// How many intervals there are to resample.
    pub(crate) fn intervals(&self) -> usize {
        match self {
            Within::None => 0,
            Within::Mean { per_interval, .. } => per_interval.len(),
            Within::Percentile { intervals, .. } => intervals.len(),
        }
    }

    /// The statistic on the intervals `idx` (with repeats): a mean or a percentile. `counts` is
    /// scratch space, reused across calls.
    pub(crate) fn statistic(&self, idx: &[usize], counts: &mut Vec<u64>) -> f64 {
        match self {
            Within::None => f64::NAN,
            Within::Mean { per_interval, .. } => {
                idx.iter().map(|i| per_interval[*i]).sum::<f64>() / idx.len().max(1) as f64
            }
            Within::Percentile {
                p,
                values,
                intervals,
                ..
            } => {
                counts.clear();
                counts.resize(values.len(), 0);
                let mut total = 0u64;
                for i in idx {
                    for (v, c) in &intervals[*i] {
                        counts[*v] += c;
                        total += c;
                    }
                }
                percentile(
                    values.iter().copied().zip(counts.iter().copied()),
                    total,
                    *p,
                )
                .unwrap_or(f64::NAN)
            }
        }
    }
}

/// One comparable number of one run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sample {
    /// What matches it across runs: `etcd/sync_p99`, `target/etcd/sync_p99`, `job/write/iops`.
    pub key: String,
    /// In words.
    pub label: String,
    /// `ns`, `IOPS`, `files/s`, `KiB/s`.
    pub unit: String,
    pub direction: Direction,
    pub value: f64,
    pub within: Within,
}

/// Every comparable number in a document (check, kube or fio's JSON), in document order.
pub(crate) fn samples(doc: &Value) -> Result<Vec<Sample>, String> {
    use crate::report::document::DocumentKind;
    let kind = DocumentKind::sniff(doc);
    // Only what a comparison reads is checked: a preflight document is refused as such below.
    let what = match kind {
        Some(DocumentKind::Kube) => "a kube document",
        Some(DocumentKind::Check) => "a check document",
        Some(DocumentKind::Fio) => "fio's JSON output",
        _ => "",
    };
    if let Some(p) = kind
        .filter(|_| !what.is_empty())
        .and_then(|k| k.problem(doc))
    {
        return Err(format!("{what}, but {p}"));
    }
    match kind {
        Some(DocumentKind::Kube) => {
            let k: KubeDocument = serde_json::from_value(doc.clone())
                .map_err(|e| format!("not a kube document: {e}"))?;
            let mut out = Vec::new();
            for t in &k.targets {
                if let Some(c) = &t.check {
                    for mut s in check_samples(c) {
                        s.key = format!("{}/{}", t.target, s.key);
                        s.label = format!("{}: {}", t.target, s.label);
                        out.push(s);
                    }
                }
            }
            Ok(out)
        }
        Some(DocumentKind::Check) => {
            let c: CheckDocument = serde_json::from_value(doc.clone())
                .map_err(|e| format!("not a check document: {e}"))?;
            Ok(check_samples(&c))
        }
        Some(DocumentKind::Fio) => Ok(fio_samples(doc)),
        Some(DocumentKind::Preflight | DocumentKind::Compare) | None => Err(
            "not a result iogauge can compare: expected a check, kube or fio JSON document".into(),
        ),
    }
}

fn check_samples(c: &CheckDocument) -> Vec<Sample> {
    let mut out = Vec::new();
    for p in &c.profiles {
        let report = match &p.report {
            Some(crate::report::document::RunReport::Fio(v)) => Some(v),
            _ => None,
        };
        for m in &p.metrics {
            out.push(Sample {
                key: format!("{}/{}", p.profile, m.metric),
                label: format!("{}: {}", p.profile, m.label),
                unit: m.unit.clone(),
                direction: direction(m),
                value: m.value,
                within: report
                    .and_then(|r| within_for(r, &m.metric, m.value))
                    .unwrap_or(Within::None),
            });
        }
    }
    out
}

fn direction(m: &MetricOutcome) -> Direction {
    if m.better == "higher" {
        Direction::HigherIsBetter
    } else {
        Direction::LowerIsBetter
    }
}

/// The within-run data of a check metric from its profile's fio report.
fn within_for(report: &Value, metric: &str, value: f64) -> Option<Within> {
    let job = report.get("jobs")?.get(0)?;
    match metric {
        "sync_p99" => percentile_within(job.get("sync")?, 99.0),
        "write_iops" => mean_within(job.get("write")?, value),
        "read_iops" => mean_within(job.get("read")?, value),
        _ => None,
    }
}

/// A percentile's within-run data from a section's `iogauge.lat_intervals`: the histograms
/// re-indexed onto the run's sorted distinct values, so a resample adds counts into one array.
fn percentile_within(section: &Value, p: f64) -> Option<Within> {
    let li = read_lat_intervals(section)?;
    let mut values: Vec<f64> = li
        .intervals
        .iter()
        .flat_map(|(_, h)| h.iter().map(|(v, _)| *v))
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let intervals = li
        .intervals
        .iter()
        .map(|(_, h)| {
            h.iter()
                .map(|(v, c)| (values.partition_point(|x| x < v), *c))
                .collect()
        })
        .collect();
    Some(Within::Percentile {
        p,
        values,
        intervals,
        interval_ms: li.interval_ms,
    })
}

/// A rate's within-run data from a section's `iogauge.iops_series`, scaled to `value`.
fn mean_within(section: &Value, value: f64) -> Option<Within> {
    let series = section.get("iogauge")?.get("iops_series")?.as_array()?;
    let v: Vec<f64> = series.iter().filter_map(|pt| pt.get(1)?.as_f64()).collect();
    if v.is_empty() {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let scale = if mean > 0.0 { value / mean } else { 1.0 };
    // The series' points are bwavgtime apart (500 ms by default).
    let interval_ms = match (series.first(), series.get(1)) {
        (Some(a), Some(b)) => b.get(0)?.as_u64()?.saturating_sub(a.get(0)?.as_u64()?),
        _ => 0,
    };
    Some(Within::Mean {
        per_interval: v.iter().map(|x| x * scale).collect(),
        interval_ms,
    })
}

/// fio's JSON: per job and direction with I/O, its IOPS and clat p50/p99.
fn fio_samples(doc: &Value) -> Vec<Sample> {
    let mut out = Vec::new();
    for job in doc["jobs"].as_array().into_iter().flatten() {
        let name = job["jobname"].as_str().unwrap_or("job");
        for dir in ["read", "write", "trim"] {
            let s = &job[dir];
            if s["total_ios"].as_u64().unwrap_or(0) == 0 {
                continue;
            }
            let iops = s["iops"].as_f64().unwrap_or(0.0);
            out.push(Sample {
                key: format!("{name}/{dir}/iops"),
                label: format!("{name}: {dir} IOPS"),
                unit: "IOPS".into(),
                direction: Direction::HigherIsBetter,
                value: iops,
                within: mean_within(s, iops).unwrap_or(Within::None),
            });
            for (p, pk) in [(50.0, "50.000000"), (99.0, "99.000000")] {
                let Some(v) = s["clat_ns"]["percentile"][pk].as_f64() else {
                    continue;
                };
                out.push(Sample {
                    key: format!("{name}/{dir}/clat_p{p}"),
                    label: format!("{name}: {dir} completion latency p{p}"),
                    unit: "ns".into(),
                    direction: Direction::LowerIsBetter,
                    value: v,
                    within: percentile_within(s, p).unwrap_or(Within::None),
                });
            }
        }
        let sync = &job["sync"];
        if sync["total_ios"].as_u64().unwrap_or(0) > 0 {
            if let Some(v) = sync["lat_ns"]["percentile"]["99.000000"].as_f64() {
                out.push(Sample {
                    key: format!("{name}/sync/lat_p99"),
                    label: format!("{name}: sync latency p99"),
                    unit: "ns".into(),
                    direction: Direction::LowerIsBetter,
                    value: v,
                    within: percentile_within(sync, 99.0).unwrap_or(Within::None),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// The kind is [`DocumentKind::sniff`]'s: a check document needs its `dir` (compare once
    /// took any `profiles` with a `schema_version` for one), a preflight document is no result
    /// to compare, and an unknown version is refused with what this iogauge reads and the fix.
    #[test]
    fn documents_are_the_kinds_the_sniffer_says() {
        let nothing =
            "not a result iogauge can compare: expected a check, kube or fio JSON document";
        assert_eq!(
            samples(&json!({"schema_version": 1, "profiles": []})).unwrap_err(),
            nothing
        );
        assert_eq!(
            samples(&json!({"schema_version": 1, "collectors": [], "outcomes": []})).unwrap_err(),
            nothing
        );
        assert_eq!(
            samples(&json!({"schema_version": 7, "profiles": [], "dir": "/d"})).unwrap_err(),
            format!(
                "a check document, but schema_version is 7; this iogauge ({}) reads \
                 schema_version 1; read it with the iogauge version that wrote it (its \
                 \"iogauge\" field)",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert_eq!(
            samples(&json!({"targets": [], "run_id": "r"})).unwrap_err(),
            format!(
                "a kube document, but schema_version is missing; this iogauge ({}) reads \
                 schema_version 1; read it with the iogauge version that wrote it (its \
                 \"iogauge\" field)",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(samples(&json!({"fio version": 3, "jobs": []}))
            .unwrap_err()
            .starts_with("fio's JSON output, but \"fio version\" is 3;"));
        assert_eq!(
            samples(&json!({"fio version": "fio-3.33", "jobs": []})).unwrap(),
            []
        );
    }

    #[test]
    fn percentiles_come_back_from_interval_histograms() {
        let s = json!({"iogauge": {"lat_intervals": {"interval_ms": 100, "latency": "lat",
            "intervals": [[100, [[1000, 98], [5000, 2]]], [200, [[1000, 99], [9000, 1]]]]}}});
        let w = percentile_within(&s, 99.0).unwrap();
        assert_eq!(w.intervals(), 2);
        let mut scratch = Vec::new();
        // 200 latencies, p99 = the 198th smallest: 197 of 1000 then 5000 (both intervals);
        // 198 of 1000 (the second twice); 196 of 1000 then 5000 (the first twice).
        assert_eq!(w.statistic(&[0, 1], &mut scratch), 5000.0);
        assert_eq!(w.statistic(&[1, 1], &mut scratch), 1000.0);
        assert_eq!(w.statistic(&[0, 0], &mut scratch), 5000.0);
        let s = json!({"iogauge": {"iops_series": [[500, 100.0], [1000, 300.0]]}});
        let w = mean_within(&s, 210.0).unwrap();
        assert_eq!(w.statistic(&[0, 1], &mut scratch), 210.0);
        assert_eq!(
            w,
            Within::Mean {
                per_interval: vec![105.0, 315.0],
                interval_ms: 500
            }
        );
    }

    #[test]
    fn other_documents_are_refused_by_name() {
        assert_eq!(
            samples(&json!({"name": "x"})).unwrap_err(),
            "not a result iogauge can compare: expected a check, kube or fio JSON document"
        );
    }
}
