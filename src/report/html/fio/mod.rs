//! fio's JSON document (what `iogauge fio --output-format=json` prints, and each check
//! profile's `report`) as charts: per job, the latency percentile curve, fio's latency buckets,
//! IOPS and bandwidth over time, percentiles over time, and the job's options.

use super::page::{
    command_block, esc, facts, fmt_kib_s, fmt_ns, fmt_plain, fmt_s, notes, page, sig3, table, td,
    td_num, utc_date,
};
use serde_json::Value;
use std::fmt::Write;

mod charts;
use charts::table_rate;
pub(crate) use charts::{job_charts, percentile_chart, percentiles};

/// What a check adds to a job's charts: its thresholds drawn where they apply.
#[derive(Default)]
pub(crate) struct Judged {
    /// A latency threshold (ns) on a section (`sync`, `read`, `write`), with its label.
    pub latency: Option<(String, f64, String)>,
    /// IOPS thresholds per direction, with their labels.
    pub iops: Vec<(String, f64, String)>,
}

const DIRS: [&str; 3] = ["read", "write", "trim"];

/// Jobs drawn with their charts (and options); a run without group_reporting lists each of
/// numjobs' copies (up to fio's 4096), whose charts would make a page of hundreds of MB.
const MAX_CHARTED_JOBS: usize = crate::report::bounded::CHARTED_JOBS;

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
                    format!("{} IOPS", sig3(table_rate(s, true))),
                    fmt_kib_s(table_rate(s, false)),
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
    let body = format!("<h1>fio run</h1>\n{}", fio_sections(v, 2));
    page(&format!("fio run — {version}"), &body)
}

/// What a fio page shows below its title (facts, notes, each job with its numbers and
/// charts), with the jobs' headings at `level` (2 on its own page, deeper inside another one,
/// such as a `kube fio` page's target).
pub(crate) fn fio_sections(v: &Value, level: usize) -> String {
    let version = v.get("fio version").and_then(Value::as_str).unwrap_or("");
    let sub = level + 1;
    let mut body = String::new();
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
    let jobs = v.get("jobs").and_then(Value::as_array);
    let count = jobs.map_or(0, Vec::len);
    if count > MAX_CHARTED_JOBS {
        let _ = writeln!(
            body,
            "<p class=\"muted\">{count} jobs: the first {MAX_CHARTED_JOBS} with their charts, \
             the others with their numbers only, so that the page stays readable.</p>"
        );
    }
    for (i, job) in jobs.into_iter().flatten().enumerate() {
        let name = job.get("jobname").and_then(Value::as_str).unwrap_or("job");
        let _ = writeln!(body, "<h{level}>Job {}</h{level}>", esc(name));
        let err = f(job, "error");
        if err != 0.0 {
            let _ = writeln!(body, "<p><strong>error {}</strong></p>", sig3(err));
        }
        body.push_str(&job_numbers(job));
        if i >= MAX_CHARTED_JOBS {
            continue;
        }
        body.push_str(&job_charts(job, &Judged::default()));
        let _ = writeln!(
            body,
            "<h{sub}>Run it again</h{sub}>\n<p class=\"muted\">The job as fio options, for \
             fio or <code>iogauge fio</code>:</p>"
        );
        body.push_str(&command_block("fio", &options(global, job)));
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use charts::{buckets, nines, nines_label};
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
