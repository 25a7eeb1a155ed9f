//! `kube canary status` as a table: one row per canary pod (a node of the DaemonSet, or a
//! storage class's StatefulSet pod) with each profile's verdict over the window, the judged
//! value against its pass threshold, the last success's age and the load against its budget.
//! Pure. Every string from outside (the pod's document and log, the cluster's names and
//! events) goes through the caller's `clean` (cli/ gives `untrusted::term`, which cluster/ may
//! not use) and is capped, so that a pod cannot drive the reader's terminal.

use super::status::Row;
use crate::cluster::pod_document::cap;
use crate::report::document::{CanaryDocument, CanaryMetric};

/// What makes an outside string safe to print.
pub(crate) type Clean<'a> = &'a dyn Fn(&str) -> String;

/// A metric's value in its unit: latencies in ms (µs below 0.1 ms), rates in IOPS.
fn amount(unit: &str, v: f64) -> String {
    match unit {
        "seconds" if v < 0.0001 => format!("{:.0} µs", v * 1e6),
        "seconds" if v >= 1.0 => format!("{v:.2} s"),
        "seconds" => format!("{:.2} ms", v * 1e3),
        "iops" => format!("{v:.0} IOPS"),
        _ => format!("{v} {unit}"),
    }
}

/// "sync_p99 0.41 ms (pass ≤ 10.00 ms)".
fn metric(m: &CanaryMetric, clean: Clean) -> String {
    let op = if m.better == "higher" { "≥" } else { "≤" };
    let value = m
        .value
        .map_or("no samples".to_string(), |v| amount(&m.unit, v));
    format!(
        "{} {} (pass {op} {})",
        clean(&cap(&m.key)),
        clean(&cap(&value)),
        clean(&cap(&amount(&m.unit, m.pass)))
    )
}

/// "12s ago", "3m ago", "2h ago".
fn age(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s {
        0..=119 => format!("{s}s ago"),
        120..=7199 => format!("{}m ago", s / 60),
        _ => format!("{}h ago", s / 3600),
    }
}

fn percent(r: f64) -> String {
    let p = r * 100.0;
    if p < 10.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.0}%")
    }
}

/// The cells of a row with a document: verdicts, values, last success, busy.
fn cells(d: &CanaryDocument, now: f64, clean: Clean) -> [String; 4] {
    let verdicts = d
        .profiles
        .iter()
        .map(|p| {
            let name = clean(&cap(&p.profile));
            format!("{name} {}", p.verdict.word().to_uppercase())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let values = d
        .profiles
        .iter()
        .flat_map(|p| p.metrics.iter().map(|m| metric(m, clean)))
        .collect::<Vec<_>>()
        .join(", ");
    let last = d
        .profiles
        .iter()
        .filter_map(|p| p.last_success)
        .fold(None::<f64>, |a, t| Some(a.map_or(t, |a| a.max(t))));
    let last = last.map_or("never".to_string(), |t| age(now - t));
    let busy = format!(
        "{} of {}",
        percent(d.budget.busy),
        percent(d.budget.max_busy)
    );
    [verdicts, values, last, busy]
}

/// The table; `now` in unix seconds, for the ages.
pub(crate) fn render(rows: &[Row], now: f64, clean: Clean) -> String {
    let header = [
        "TARGET",
        "NODE",
        "VERDICT",
        "WINDOW (value vs threshold)",
        "LAST SUCCESS",
        "BUSY",
    ]
    .map(String::from);
    let mut table: Vec<[String; 6]> = vec![header];
    let mut notes = Vec::new();
    for r in rows {
        let node = r
            .node
            .clone()
            .or_else(|| r.document.as_ref().map(|d| d.node.clone()))
            .unwrap_or_else(|| "-".into());
        let node = clean(&cap(&node));
        let [v, w, l, b] = match &r.document {
            Some(d) if !r.current => {
                let [v, w, l, b] = cells(d, now, clean);
                [format!("STALE {v}"), w, l, b]
            }
            Some(d) => cells(d, now, clean),
            None => ["NO DOCUMENT".into(), "-".into(), "-".into(), "-".into()],
        };
        let target = clean(&cap(&r.target));
        if let Some(p) = &r.problem {
            let (pod, p) = (clean(&cap(&r.pod)), clean(&cap(p)));
            notes.push(format!("{target} ({node}, pod {pod}): {p}"));
        }
        table.push([target, node, v, w, l, b]);
    }
    let mut widths = [0usize; 6];
    for row in &table {
        for (i, c) in row.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in &table {
        let mut line = String::new();
        for (i, c) in row.iter().enumerate() {
            line.push_str(c);
            if i + 1 < row.len() {
                line.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for n in notes {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_and_ages_read_as_people_say_them() {
        assert_eq!(amount("seconds", 0.00041), "0.41 ms");
        assert_eq!(amount("seconds", 0.00004), "40 µs");
        assert_eq!(amount("seconds", 10.0), "10.00 s");
        assert_eq!(amount("iops", 812.4), "812 IOPS");
        assert_eq!(age(12.0), "12s ago");
        assert_eq!(age(600.0), "10m ago");
        assert_eq!(age(7300.0), "2h ago");
        assert_eq!(percent(0.0012), "0.12%");
        assert_eq!(percent(0.01), "1.00%");
    }

    #[test]
    fn outside_strings_go_through_clean_and_are_capped() {
        let row = Row {
            target: "storage class \x1b]0;x\x07".into(),
            pod: "p".into(),
            node: Some("n".repeat(600)),
            ready: false,
            document: None,
            current: false,
            problem: Some("log ends with \x1b[2J".into()),
        };
        let out = render(&[row], 0.0, &|s| s.replace('\x1b', "<ESC>"));
        assert!(!out.contains('\x1b'), "{out}");
        assert!(out.contains("storage class <ESC>]0;x"), "{out}");
        assert!(out.contains("log ends with <ESC>[2J"), "{out}");
        assert!(out.contains(&format!("{}…", "n".repeat(500))), "{out}");
        assert!(!out.contains(&"n".repeat(501)), "{out}");
    }
}
