//! fio's JSON document (what `iogauge fio --output-format=json` prints, and each check
//! profile's `report`) as charts: per job, the latency percentile curve, fio's latency buckets,
//! IOPS and bandwidth over time, percentiles over time, and the job's options.

use super::page::{
    command_block, esc, facts, fmt_kib_s, fmt_ns, fmt_plain, fmt_s, notes, page, sig3, table, td,
    td_num, utc_date,
};
use super::svg::{Histogram, LineChart, RefLine, Series};
use crate::report::intervals::{percentile, read_lat_intervals};
use serde_json::Value;
use std::fmt::Write;

/// What a check adds to a job's charts: its thresholds drawn where they apply.
#[derive(Default)]
pub(crate) struct Judged {
    /// A latency threshold (ns) on a section (`sync`, `read`, `write`), with its label.
    pub latency: Option<(String, f64, String)>,
    /// IOPS thresholds per direction, with their labels.
    pub iops: Vec<(String, f64, String)>,
}

const DIRS: [&str; 3] = ["read", "write", "trim"];

/// The run's date from fio's `timestamp` (Unix seconds).
pub(crate) fn fio_date(v: &Value) -> Option<String> {
    utc_date(v.get("timestamp")?.as_i64()?)
}

fn f(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

/// A section's latency object with percentiles: completion latency, else total latency.
fn lat_object(sec: &Value) -> Option<(&Value, &'static str)> {
    for (k, what) in [("clat_ns", "clat"), ("lat_ns", "lat")] {
        if let Some(o) = sec.get(k) {
            if o.get("percentile").and_then(Value::as_object).is_some() && f(o, "N") > 0.0 {
                return Some((o, what));
            }
        }
    }
    None
}

/// The sections of a job that did something: directions with I/Os, then syncs.
fn sections(job: &Value) -> Vec<(&'static str, &Value)> {
    let mut out: Vec<(&'static str, &Value)> = DIRS
        .iter()
        .filter_map(|d| Some((*d, job.get(*d)?)))
        .filter(|(_, s)| f(s, "total_ios") > 0.0)
        .collect();
    if let Some(s) = job.get("sync").filter(|s| f(s, "total_ios") > 0.0) {
        out.push(("sync", s));
    }
    out
}

/// A percentile on the "nines" axis: p50 → 0.3, p90 → 1, p99 → 2, p99.9 → 3.
fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).max(1e-6).log10()
}

fn nines_label(x: f64) -> String {
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
fn buckets(job: &Value) -> Vec<(String, f64)> {
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
fn intervals_chart(name: &str, sec: &Value, threshold: Option<&(f64, String)>) -> Option<String> {
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
                "p50 and p99 of each {} ms interval (its end on the x axis); a rising p99 with a \
                 flat p50 means occasional stalls, both rising means the device slowed down.",
                sig3(every)
            ),
            x_label: "time since the measured period started (s)".into(),
            y_label: "latency (log scale)".into(),
            x_fmt: fmt_s,
            y_fmt: fmt_ns,
            x_ticks: None,
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

/// IOPS or bandwidth over time for every direction with a series.
fn series_chart(job: &Value, iops: bool, judged: &Judged) -> Option<String> {
    let (key, mean, min, max) = if iops {
        ("iops_series", "iops_mean", "iops_min", "iops_max")
    } else {
        ("bw_series", "bw_mean", "bw_min", "bw_max")
    };
    let points = |sec: &Value| -> Vec<(f64, f64)> {
        sec.get("iogauge")
            .and_then(|i| i.get(key))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|p| Some((p.get(0)?.as_f64()? / 1000.0, p.get(1)?.as_f64()?)))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Bandwidth is in KiB/s; shown in MiB/s when that is the scale, so that the axis ticks
    // are round in the unit they are written in.
    let peak = DIRS
        .iter()
        .filter_map(|d| job.get(*d))
        .flat_map(|s| points(s).into_iter().map(|p| p.1))
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
    for d in DIRS {
        let Some(sec) = job.get(d) else { continue };
        let pts: Vec<(f64, f64)> = points(sec).into_iter().map(|(t, v)| (t, v / div)).collect();
        if pts.is_empty() {
            continue;
        }
        series.push(Series {
            name: d.to_string(),
            points: pts,
        });
        let m = f(sec, mean) / div;
        lines.push(RefLine {
            value: m,
            label: format!("{d} mean {}", fmt(m)),
            kind: "mean",
        });
        spread.push(format!(
            "{d}: mean {}, samples from {} to {}",
            fmt(m),
            fmt(f(sec, min) / div),
            fmt(f(sec, max) / div)
        ));
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
    Some(
        LineChart {
            title: title.into(),
            caption: format!(
                "One point per sampling interval (its end on the x axis). {}. A steady line is a \
                 steady device; dips are stalls.",
                spread.join("; ")
            ),
            x_label: "time since the measured period started (s)".into(),
            y_label: y.into(),
            x_fmt: fmt_s,
            y_fmt: fmt,
            x_ticks: None,
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
        charts.extend(intervals_chart(name, s, t.as_ref()));
    }
    if charts.is_empty() {
        return "<p class=\"muted\">No latency or time series in this run (gtod_reduce=1 \
                switches latency collection off).</p>\n"
            .into();
    }
    format!("<div class=\"charts\">\n{}</div>\n", charts.concat())
}

/// A table of each section's headline numbers.
pub(crate) fn job_numbers(job: &Value) -> String {
    let rows: Vec<Vec<String>> = sections(job)
        .iter()
        .map(|(name, s)| {
            let lat = lat_object(s);
            let p = |q: f64| {
                lat.map(|(o, _)| percentiles(o))
                    .and_then(|v| v.iter().find(|(k, _)| *k == q).map(|x| fmt_ns(x.1)))
                    .unwrap_or_else(|| "-".into())
            };
            let mean = lat.map_or("-".into(), |(o, _)| fmt_ns(f(o, "mean")));
            let (iops, bw) = if *name == "sync" {
                ("-".to_string(), "-".to_string())
            } else {
                (
                    format!("{} IOPS", sig3(f(s, "iops"))),
                    fmt_kib_s(f(s, "bw")),
                )
            };
            vec![
                td(name),
                td_num(&fmt_plain(f(s, "total_ios"))),
                td_num(&iops),
                td_num(&bw),
                td_num(&mean),
                td_num(&p(50.0)),
                td_num(&p(99.0)),
                td_num(&lat.map_or("-".into(), |(o, _)| fmt_ns(f(o, "max")))),
            ]
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let unmeasured = sections(job).iter().any(|(_, s)| lat_object(s).is_none());
    let note = if unmeasured {
        "<p class=\"muted\">A dash: latency was not measured for that section (the job sets \
         gtod_reduce=1, as GitLab's recipe does, to measure IOPS only).</p>\n"
    } else {
        ""
    };
    table(
        &[
            "section",
            "I/Os",
            "IOPS",
            "bandwidth",
            "mean latency",
            "p50",
            "p99",
            "max",
        ],
        &rows,
    ) + note
}

/// fio's `job options` (and the global ones) as `--key=value`, the name first.
fn options(global: Option<&Value>, job: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let name = job.get("jobname").and_then(Value::as_str).unwrap_or("job");
    let mut add = |o: Option<&Value>| {
        for (k, v) in o.and_then(Value::as_object).into_iter().flatten() {
            if k == "name" {
                continue;
            }
            match v.as_str() {
                Some("") | None => out.push(format!("--{k}")),
                Some(v) => out.push(format!("--{k}={v}")),
            }
        }
    };
    add(global);
    let mut all = vec![format!("--name={name}")];
    add(job.get("job options"));
    all.extend(out);
    all
}

/// The page of a fio JSON document.
pub(crate) fn render_fio_html(v: &Value) -> String {
    let version = v.get("fio version").and_then(Value::as_str).unwrap_or("");
    let mut body = String::new();
    let _ = writeln!(body, "<h1>fio run</h1>");
    let ctx = v.get("iogauge").and_then(|i| i.get("context"));
    let s = |o: Option<&Value>, k: &str| {
        o.and_then(|o| o.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let fs = ctx.and_then(|c| c.get("filesystem"));
    let fs_text = if fs.is_some() {
        format!(
            "{} from {} at {} ({})",
            s(fs, "fs_type"),
            s(fs, "source"),
            s(fs, "mount_point"),
            s(fs, "options")
        )
    } else {
        String::new()
    };
    body.push_str(&facts(&[
        ("Host", s(ctx, "hostname")),
        ("Kernel", s(ctx, "kernel")),
        ("Directory", s(ctx, "directory")),
        ("Filesystem", fs_text),
        ("Device", s(ctx.and_then(|c| c.get("device")), "name")),
        ("Measured by", version.to_string()),
        ("Date", fio_date(v).unwrap_or_default()),
    ]));
    let note_list: Vec<String> = v
        .get("iogauge")
        .and_then(|i| i.get("notes"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    body.push_str(&notes(&note_list));
    let global = v.get("global options");
    for job in v
        .get("jobs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = job.get("jobname").and_then(Value::as_str).unwrap_or("job");
        let _ = writeln!(body, "<h2>Job {}</h2>", esc(name));
        let err = f(job, "error");
        if err != 0.0 {
            let _ = writeln!(body, "<p><strong>error {}</strong></p>", sig3(err));
        }
        body.push_str(&job_numbers(job));
        body.push_str(&job_charts(job, &Judged::default()));
        let _ = writeln!(
            body,
            "<h3>Run it again</h3>\n<p class=\"muted\">The job as fio options, for fio or \
             <code>iogauge fio</code>:</p>"
        );
        body.push_str(&command_block("fio", &options(global, job)));
    }
    page(&format!("fio run — {version}"), &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(with_intervals: bool) -> Value {
        let mut write = json!({
            "total_ios": 10, "iops": 250.0, "bw": 1000.0, "iops_mean": 250.0, "iops_min": 200, "iops_max": 300,
            "bw_mean": 1000.0, "bw_min": 800, "bw_max": 1200,
            "clat_ns": {"N": 10, "mean": 2e4, "max": 9e4, "percentile": {"50.000000": 20000, "99.000000": 90000}},
            "iogauge": {"bw_series": [[500, 900.0], [1000, 1100.0]], "iops_series": [[500, 225.0], [1000, 275.0]]}
        });
        if with_intervals {
            write["iogauge"]["lat_intervals"] = json!({
                "interval_ms": 100, "latency": "clat",
                "intervals": [[100, [[1000, 50], [2000, 49], [90000, 1]]], [200, []], [300, [[5000, 1]]]]
            });
        }
        json!({"jobname": "j<1>", "job options": {"name": "j<1>", "rw": "write", "direct": ""},
               "write": write, "read": {"total_ios": 0},
               "latency_us": {"2": 0.0, "4": 60.0, "10": 0.0, "20": 40.0, "50": 0.0},
               "latency_ms": {"2": 0.0, ">=2000": 0.0}})
    }

    #[test]
    fn percentiles_over_time_only_when_the_document_has_them() {
        let without = job_charts(&job(false), &Judged::default());
        assert!(!without.contains("over time</title>") || !without.contains("p50 and p99"));
        assert_eq!(without.matches("<svg").count(), 4);
        let with = job_charts(&job(true), &Judged::default());
        assert_eq!(with.matches("<svg").count(), 5);
        assert!(with.contains("<title>write clat latency p50 and p99 over time</title>"));
        // The empty interval at 200 ms is left out; 300 ms has one I/O of 5 µs.
        assert!(with.contains(
            "<td class=\"num\">0.1 s</td><td class=\"num\">1 µs</td><td class=\"num\">2 µs</td>"
        ));
        assert!(with.contains(
            "<td class=\"num\">0.3 s</td><td class=\"num\">5 µs</td><td class=\"num\">5 µs</td>"
        ));
        assert!(!with.contains("0.2 s</td><td"));
    }

    #[test]
    fn a_judged_sync_latency_shows_its_threshold_over_time() {
        let mut j = job(false);
        j["sync"] = json!({
            "total_ios": 3,
            "lat_ns": {"N": 3, "mean": 2e6, "max": 4e6, "percentile": {"50.000000": 2000000, "99.000000": 4000000}},
            "iogauge": {"lat_intervals": {"interval_ms": 100, "latency": "lat",
                        "intervals": [[100, [[2000000, 2], [4000000, 1]]]]}}
        });
        let judged = Judged {
            latency: Some(("sync".into(), 1e7, "threshold < 10 ms".into())),
            iops: vec![("write".into(), 300.0, "threshold ≥ 300 IOPS".into())],
        };
        let html = job_charts(&j, &judged);
        assert!(html.contains("<title>sync latency p50 and p99 over time</title>"));
        // On the percentile curve, the sync-over-time chart and the IOPS chart.
        assert_eq!(html.matches("class=\"ref threshold\"").count(), 3);
        assert!(html.contains(">threshold ≥ 300 IOPS<"));
        assert!(html.contains(
            "<td class=\"num\">0.1 s</td><td class=\"num\">2 ms</td><td class=\"num\">4 ms</td>"
        ));
    }

    #[test]
    fn buckets_are_trimmed_and_labelled() {
        let b = buckets(&job(false));
        assert_eq!(
            b,
            vec![
                ("≤ 4 µs".to_string(), 60.0),
                ("≤ 10 µs".to_string(), 0.0),
                ("≤ 20 µs".to_string(), 40.0)
            ]
        );
    }

    #[test]
    fn the_nines_axis() {
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines_label(2.0), "p99");
        assert_eq!(nines_label(4.0), "p99.99");
    }

    #[test]
    fn a_fio_page_escapes_job_names_and_shows_the_options() {
        let v = json!({"fio version": "iogauge-0.1.0", "timestamp": 0, "jobs": [job(false)]});
        let html = render_fio_html(&v);
        assert!(html.contains("<h2>Job j&lt;1&gt;</h2>"));
        assert!(
            html.contains("fio \\\n  &#39;--name=j&lt;1&gt;&#39; \\\n  --rw=write \\\n  --direct")
        );
        assert!(html.contains("1970-01-01 00:00:00 UTC"));
    }
}
