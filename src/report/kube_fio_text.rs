//! `iogauge kube fio`'s text output, from the Kubernetes document alone: each target's fio text
//! block (the pod's own `iogauge fio` output) under a header naming the target, or why it could
//! not run; then the jobs side by side (per target and job: IOPS, bandwidth, and the p99 of the
//! sync latency when the job synced, else of the completion latency); then the summary line.

use super::document::{KubeDocument, TargetOutcome, TargetStatus};
use crate::untrusted::term;
use serde_json::Value;
use std::fmt::Write;

/// The text output.
pub(crate) fn render_kube_fio_text(doc: &KubeDocument) -> String {
    let mut out = String::new();
    for t in &doc.targets {
        let node = t
            .node
            .as_deref()
            .map(|n| format!(" on node {}", term(n)))
            .unwrap_or_default();
        let _ = writeln!(out, "=== {}{node} ===", term(&t.target));
        match (&t.fio_text, &t.reason) {
            // The pod's text, each line shown safely (it came from the cluster).
            (Some(text), _) => {
                for line in text.lines() {
                    let _ = writeln!(out, "{}", term(line));
                }
            }
            (None, Some(r)) => {
                let _ = writeln!(out, "{}: {}", status_word(t.status), term(r));
            }
            (None, None) => {
                let _ = writeln!(out, "{}", status_word(t.status));
            }
        }
        out.push('\n');
    }
    out.push_str(&table(&doc.targets));
    let ran = doc.targets.iter().filter(|t| t.fio.is_some()).count();
    let _ = writeln!(
        out,
        "\n{ran} of {} target(s) ran their jobs",
        doc.targets.len()
    );
    out
}

fn status_word(s: TargetStatus) -> &'static str {
    match s {
        TargetStatus::Completed => "completed",
        TargetStatus::Failed => "failed",
        TargetStatus::TimedOut => "timed out",
        TargetStatus::Interrupted => "interrupted",
        TargetStatus::Skipped => "skipped",
    }
}

/// The headline numbers of every job of every target, aligned in columns (also on the HTML
/// page, so that both show the same comparison).
pub(crate) fn table(targets: &[TargetOutcome]) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "TARGET".into(),
        "JOB".into(),
        "IOPS".into(),
        "BW".into(),
        "P99 LAT".into(),
    ]];
    for t in targets {
        let Some(doc) = &t.fio else {
            let why = status_word(t.status).to_string();
            rows.push([
                term(&t.target).into_owned(),
                "-".into(),
                why,
                "".into(),
                "".into(),
            ]);
            continue;
        };
        for j in doc["jobs"].as_array().into_iter().flatten() {
            rows.push([
                term(&t.target).into_owned(),
                term(j["jobname"].as_str().unwrap_or("?")).into_owned(),
                format!("{:.0}", sum(j, "iops")),
                bandwidth(sum(j, "bw")),
                p99(j),
            ]);
        }
    }
    let width: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            line.push_str(cell);
            line.push_str(&" ".repeat(width[c] - cell.chars().count() + 2));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Read, write and trim together (fio's JSON: `bw` in KiB/s).
fn sum(job: &Value, key: &str) -> f64 {
    ["read", "write", "trim"]
        .iter()
        .map(|d| job[d][key].as_f64().unwrap_or(0.0))
        .sum()
}

fn bandwidth(kib: f64) -> String {
    if kib >= 1024.0 * 1024.0 {
        format!("{:.1} GiB/s", kib / 1024.0 / 1024.0)
    } else if kib >= 1024.0 {
        format!("{:.1} MiB/s", kib / 1024.0)
    } else {
        format!("{kib:.0} KiB/s")
    }
}

/// The sync latency's p99 when the job synced, else the worst direction's completion p99;
/// "-" when the job did not record latencies (gtod_reduce).
fn p99(job: &Value) -> String {
    let at = |v: &Value| v["percentile"]["99.000000"].as_f64();
    let sync = at(&job["sync"]["lat_ns"]).filter(|_| job["sync"]["total_ios"].as_u64() > Some(0));
    let (ns, what) = match sync {
        Some(ns) => (Some(ns), " (sync)"),
        None => (
            ["read", "write", "trim"]
                .iter()
                .filter_map(|d| at(&job[d]["clat_ns"]))
                .reduce(f64::max),
            "",
        ),
    };
    match ns {
        Some(ns) if ns >= 1e6 => format!("{:.2} ms{what}", ns / 1e6),
        Some(ns) => format!("{:.0} µs{what}", ns / 1e3),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn each_target_s_block_then_the_jobs_side_by_side() {
        let doc: KubeDocument = serde_json::from_value(json!({
            "schema_version": 1, "iogauge": "x", "run_id": "r", "cluster": "c", "namespace": "n",
            "profiles": [], "summary": {"passed": 0, "warned": 0, "failed": 0, "errors": 1,
                "interrupted": 0, "skipped": 0},
            "targets": [
                {"target": "storage class fast", "kind": "storage_class", "job": "j1",
                 "node": "w1", "status": "completed", "reason": null, "check": null,
                 "fio_text": "seq: (groupid=0)\n  write: IOPS=894\n",
                 "fio": {"jobs": [{"jobname": "seq",
                    "write": {"iops": 894.2, "bw": 3580, "clat_ns": {"percentile": {"99.000000": 2.5e6}}},
                    "sync": {"total_ios": 10, "lat_ns": {"percentile": {"99.000000": 4.46e6}}}}]}},
                {"target": "storage class slow", "kind": "storage_class", "job": "j2",
                 "status": "failed", "reason": "the pod could not start\u{1b}[2K", "check": null}
            ]
        }))
        .unwrap();
        let text = render_kube_fio_text(&doc);
        assert_eq!(
            text,
            "=== storage class fast on node w1 ===\nseq: (groupid=0)\n  write: IOPS=894\n\n\
             === storage class slow ===\nfailed: the pod could not start\\x1b[2K\n\n\
             TARGET              JOB  IOPS    BW         P99 LAT\n\
             storage class fast  seq  894     3.5 MiB/s  4.46 ms (sync)\n\
             storage class slow  -    failed\n\
             \n1 of 2 target(s) ran their jobs\n"
        );
    }
}
