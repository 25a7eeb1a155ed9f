//! A fio job's charts: the latency percentile curve on a "nines" axis, fio's latency buckets,
//! p50/p99 per `lat_intervals` interval, and IOPS and bandwidth over time.

use super::*;
use crate::report::html::svg::{Histogram, LineChart, RefLine, Series};
use crate::report::intervals::{percentile, read_lat_intervals};

/// A percentile on the "nines" axis: p50 → 0.3, p90 → 1, p99 → 2, p99.9 → 3.
pub(super) fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).max(1e-6).log10()
}

pub(super) fn nines_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    format!("p{}", sig_pct(p))
}

fn sig_pct(p: f64) -> String {
    let s = format!("{p:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The percentile curve of sections given as (name, [(percentile, ns)]).
pub(crate) fn percentile_chart(
    title: &str,
    caption: &str,
    curves: Vec<(String, Vec<(f64, f64)>)>,
    threshold: Option<(f64, String)>,
) -> Option<String> {
    let series: Vec<Series> = curves
        .into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(name, p)| Series {
            name,
            points: p.into_iter().map(|(p, v)| (nines(p), v)).collect(),
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(2.0, f64::max)
        .ceil();
    let mut ticks = vec![(0.0, "p0".to_string())];
    ticks.extend((0..=top as i32).skip(1).map(|i| {
        let x = f64::from(i);
        (x, nines_label(x))
    }));
    ticks.insert(1, (nines(50.0), "p50".into()));
    Some(
        LineChart {
            title: title.into(),
            caption: caption.into(),
            x_label: "percentile (each step to the right is one more nine)".into(),
            y_label: "latency (log scale)".into(),
            x_fmt: nines_label,
            y_fmt: fmt_ns,
            x_ticks: Some(ticks),
            x_end: None,
            x_name: "percentile".into(),
            x_table: nines_label,
            y_log: true,
            series,
            lines: threshold
                .map(|(value, label)| RefLine {
                    value,
                    label,
                    kind: "threshold",
                })
                .into_iter()
                .collect(),
        }
        .render(),
    )
}

/// fio's `percentile` map → (percentile, ns), in order.
pub(crate) fn percentiles(o: &Value) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = o
        .get("percentile")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn section_name(name: &str, what: &str) -> String {
    match (name, what) {
        ("sync", _) => "sync (fsync/fdatasync) latency".into(),
        (d, "clat") => format!("{d} completion latency"),
        (d, _) => format!("{d} total latency"),
    }
}

/// fio's `latency_ns`/`latency_us`/`latency_ms` shares as one bucket list, zero ends trimmed.
pub(super) fn buckets(job: &Value) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for (k, unit) in [
        ("latency_ns", "ns"),
        ("latency_us", "µs"),
        ("latency_ms", "ms"),
    ] {
        let Some(m) = job.get(k).and_then(Value::as_object) else {
            continue;
        };
        let mut b: Vec<(f64, String, f64)> = m
            .iter()
            .filter_map(|(k, v)| {
                let share = v.as_f64()?;
                match k.strip_prefix(">=") {
                    Some(n) => Some((f64::INFINITY, format!("> {n} {unit}"), share)),
                    None => Some((k.parse().ok()?, format!("≤ {k} {unit}"), share)),
                }
            })
            .collect();
        b.sort_by(|a, b| a.0.total_cmp(&b.0));
        out.extend(b.into_iter().map(|(_, l, s)| (l, s)));
    }
    let first = out.iter().position(|b| b.1 > 0.0);
    let last = out.iter().rposition(|b| b.1 > 0.0);
    match (first, last) {
        (Some(a), Some(z)) => out[a..=z].to_vec(),
        _ => Vec::new(),
    }
}

/// p50 and p99 per interval from `iogauge.lat_intervals`, None when the key is absent.
fn intervals_chart(
    name: &str,
    sec: &Value,
    threshold: Option<&(f64, String)>,
    runtime: Option<f64>,
) -> Option<String> {
    let li = read_lat_intervals(sec)?;
    let which = li.latency.as_str();
    let every = li.interval_ms as f64;
    let mut p50 = Vec::new();
    let mut p99 = Vec::new();
    for (end, hist) in &li.intervals {
        let total = hist.iter().map(|b| b.1).sum();
        let at = |p| percentile(hist.iter().copied(), total, p);
        if let (Some(a), Some(b)) = (at(50.0), at(99.0)) {
            p50.push((end / 1000.0, a));
            p99.push((end / 1000.0, b));
        }
    }
    if p50.is_empty() {
        return None;
    }
    let what = if name == "sync" {
        "sync".to_string()
    } else {
        format!("{name} {which}")
    };
    Some(
        LineChart {
            title: format!("{what} latency p50 and p99 over time"),
            caption: format!(
                "p50 and p99 of each {} ms interval (its end on the x axis; the last one, shorter, \
                 ends with the run); a rising p99 with a flat p50 means occasional stalls, both \
                 rising means the device slowed down.",
                sig3(every)
            ),
            x_label: "time since the measured period started (s)".into(),
            y_label: "latency (log scale)".into(),
            x_fmt: fmt_s,
            y_fmt: fmt_ns,
            x_ticks: None,
            x_end: runtime,
            x_name: "interval end".into(),
            x_table: fmt_s,
            y_log: true,
            series: vec![
                Series {
                    name: "p50".into(),
                    points: p50,
                },
                Series {
                    name: "p99".into(),
                    points: p99,
                },
            ],
            lines: threshold
                .map(|(v, l)| RefLine {
                    value: *v,
                    label: l.clone(),
                    kind: "threshold",
                })
                .into_iter()
                .collect(),
        }
        .render(),
    )
}

/// Where a job's time axis ends, in seconds: its measured period, the longest direction's
/// `runtime` (a group's is its longest member's; `job_runtime` is a group's sum), else
/// `job_runtime`. None when the document has neither.
fn runtime_s(job: &Value) -> Option<f64> {
    let longest = DIRS
        .iter()
        .filter_map(|d| job.get(*d))
        .map(|s| f(s, "runtime"))
        .fold(0.0, f64::max);
    let ms = if longest > 0.0 {
        longest
    } else {
        f(job, "job_runtime")
    };
    (ms > 0.0).then_some(ms / 1000.0)
}

/// A direction's points over time in its unit: the periodic series, then the trailing partial
/// interval (`bw_tail`/`iops_tail`: its I/Os over its real length, labelled with the runtime),
/// so that the line covers the whole measured period, as fio's logs do.
fn over_time(sec: &Value, series: &str, tail: &str) -> Vec<(f64, f64)> {
    let point = |p: &Value| Some((p.get(0)?.as_f64()? / 1000.0, p.get(1)?.as_f64()?));
    let ig = sec.get("iogauge");
    let mut pts: Vec<(f64, f64)> = ig
        .and_then(|i| i.get(series))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(point).collect())
        .unwrap_or_default();
    if let Some(t) = ig.and_then(|i| i.get(tail)).and_then(point) {
        if pts.last().is_none_or(|last| t.0 > last.0) {
            pts.push(t);
        }
    }
    pts
}

/// The rate a section's table shows and its over-time chart's mean line: all I/Os over the
/// runtime (fio's `iops`, and `bw` in KiB/s, from `bw_bytes` when present for the fraction).
pub(super) fn table_rate(sec: &Value, iops: bool) -> f64 {
    if iops {
        f(sec, "iops")
    } else {
        match sec.get("bw_bytes").and_then(Value::as_f64) {
            Some(b) => b / 1024.0,
            None => f(sec, "bw"),
        }
    }
}

/// IOPS or bandwidth over time for every direction with a series.
fn series_chart(job: &Value, iops: bool, judged: &Judged) -> Option<String> {
    let (key, tail, min, max) = if iops {
        ("iops_series", "iops_tail", "iops_min", "iops_max")
    } else {
        ("bw_series", "bw_tail", "bw_min", "bw_max")
    };
    // Bandwidth is in KiB/s; shown in MiB/s when that is the scale, so that the axis ticks
    // are round in the unit they are written in.
    let peak = DIRS
        .iter()
        .filter_map(|d| job.get(*d))
        .flat_map(|s| over_time(s, key, tail).into_iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let (div, fmt): (f64, fn(f64) -> String) = if iops {
        (1.0, |v| format!("{} IOPS", sig3(v)))
    } else if peak >= 1024.0 {
        (1024.0, |v| format!("{} MiB/s", sig3(v)))
    } else {
        (1.0, |v| format!("{} KiB/s", sig3(v)))
    };
    let mut series = Vec::new();
    let mut lines = Vec::new();
    let mut spread = Vec::new();
    let mut has_tail = false;
    for d in DIRS {
        let Some(sec) = job.get(d) else { continue };
        let raw = over_time(sec, key, tail);
        if raw.is_empty() {
            continue;
        }
        has_tail |= sec
            .get("iogauge")
            .and_then(|i| i.get(tail))
            .is_some_and(|t| !t.is_null());
        let pts: Vec<(f64, f64)> = raw.into_iter().map(|(t, v)| (t, v / div)).collect();
        series.push(Series {
            name: d.to_string(),
            points: pts,
        });
        // The table's number, so that chart and table agree (fio's iops_mean/bw_mean average
        // the periodic samples only, without the last partial interval).
        let m = table_rate(sec, iops) / div;
        lines.push(RefLine {
            value: m,
            label: format!("{d} mean {}", fmt(m)),
            kind: "mean",
        });
        let samples = if iops { "iops_samples" } else { "bw_samples" };
        spread.push(if f(sec, samples) > 0.0 {
            format!(
                "{d}: mean {} (all I/Os over the runtime, as in the table), periodic samples \
                 from {} to {}",
                fmt(m),
                fmt(f(sec, min) / div),
                fmt(f(sec, max) / div)
            )
        } else {
            format!(
                "{d}: mean {} (all I/Os over the runtime, as in the table)",
                fmt(m)
            )
        });
        if iops {
            for (dir, v, label) in &judged.iops {
                if dir == d {
                    lines.push(RefLine {
                        value: *v,
                        label: label.clone(),
                        kind: "threshold",
                    });
                }
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    let (title, y) = if iops {
        ("IOPS over time", "I/Os per second")
    } else {
        (
            "Bandwidth over time",
            if div > 1.0 {
                "bandwidth (MiB/s)"
            } else {
                "bandwidth (KiB/s)"
            },
        )
    };
    let last = if has_tail {
        " The last point is the partial interval after the last sample, its I/Os over its real \
         length (fio's sample statistics leave it out)."
    } else {
        ""
    };
    Some(
        LineChart {
            title: title.into(),
            caption: format!(
                "One point per sampling interval (its end on the x axis). {}.{last} A steady \
                 line is a steady device; dips are stalls.",
                spread.join("; ")
            ),
            x_label: "time since the measured period started (s)".into(),
            y_label: y.into(),
            x_fmt: fmt_s,
            y_fmt: fmt,
            x_ticks: None,
            x_end: runtime_s(job),
            x_name: "time".into(),
            x_table: fmt_s,
            y_log: false,
            series,
            lines,
        }
        .render(),
    )
}

/// Every chart of one fio job, in a grid.
pub(crate) fn job_charts(job: &Value, judged: &Judged) -> String {
    let mut charts = Vec::new();
    let secs = sections(job);
    let lat_threshold = |name: &str| {
        judged
            .latency
            .as_ref()
            .filter(|(s, _, _)| s == name)
            .map(|(_, v, l)| (*v, l.clone()))
    };
    let curves: Vec<(String, Vec<(f64, f64)>)> = secs
        .iter()
        .filter_map(|(name, s)| {
            let (o, what) = lat_object(s)?;
            Some((section_name(name, what), percentiles(o)))
        })
        .collect();
    let threshold = secs.iter().find_map(|(n, _)| lat_threshold(n));
    let caption = format!(
        "How long an I/O took at each percentile: p50 is the typical I/O, p99 the slowest one \
         in a hundred. The x axis spreads the tail: each step right is one more nine.{}",
        if threshold.is_some() {
            " The dashed red line is the threshold the judged latency must stay under at p99."
        } else {
            ""
        }
    );
    if let Some(c) = percentile_chart("Latency percentiles", &caption, curves, threshold) {
        charts.push(c);
    }
    let b = buckets(job);
    if !b.is_empty() {
        charts.push(
            Histogram {
                title: "Latency distribution (reads and writes)".into(),
                caption: "Share of reads and writes by completion latency, in fio's buckets \
                          (syncs are not in them). A second hump to the right is a slow path: \
                          cache misses, flushes, throttling."
                    .into(),
                x_label: "completion latency (bucket upper bound)".into(),
                y_label: "% of I/Os".into(),
                buckets: b,
                fmt: |v| format!("{}%", sig3(v)),
            }
            .render(),
        );
    }
    charts.extend(series_chart(job, true, judged));
    charts.extend(series_chart(job, false, judged));
    for (name, s) in &secs {
        let t = lat_threshold(name);
        charts.extend(intervals_chart(name, s, t.as_ref(), runtime_s(job)));
    }
    let note = if without_intervals(job) {
        "<p class=\"muted\">No charts over time: this document has no per-interval data \
         (fio's JSON has none; <code>iogauge fio</code> adds it to its JSON output with \
         <code>--json-intervals</code>, and its <code>--report</code> page and the history's \
         copy always have it).</p>\n"
    } else {
        ""
    };
    if charts.is_empty() {
        return format!(
            "{note}<p class=\"muted\">No latency or time series in this run (gtod_reduce=1 \
             switches latency collection off).</p>\n"
        );
    }
    format!("{note}<div class=\"charts\">\n{}</div>\n", charts.concat())
}

/// A job with I/O whose document carries none of iogauge's per-interval data (a lean
/// `iogauge fio` document, or fio's own): its over-time charts cannot be drawn.
fn without_intervals(job: &Value) -> bool {
    let busy: Vec<&Value> = DIRS
        .iter()
        .filter_map(|d| job.get(*d))
        .filter(|s| f(s, "total_ios") > 0.0)
        .collect();
    !busy.is_empty()
        && busy.iter().all(|s| {
            s.get("iogauge")
                .is_none_or(|i| i.get("iops_series").is_none() && i.get("lat_intervals").is_none())
        })
}
