//! `iogauge check`'s text output, rendered from the check document alone: one block per profile
//! (verdict, each metric against its threshold with its source and rank, guidance, warnings,
//! what to do next), then the summary line.

use super::document::{CheckDocument, CheckVerdict, ProfileOutcome, RunReport};
use crate::untrusted::term as t;
use std::fmt::Write;

/// The text output; `color` adds ANSI colours to the verdict words.
pub(crate) fn render_check_text(doc: &CheckDocument, color: bool) -> String {
    let mut out = String::new();
    for o in &doc.profiles {
        profile(&mut out, o, color);
        out.push('\n');
    }
    out.push_str(&doc.summary.line());
    out.push('\n');
    out
}

pub(crate) fn word(v: CheckVerdict, color: bool) -> String {
    if !color {
        return v.word().to_string();
    }
    let code = match v {
        CheckVerdict::Pass => "32",
        CheckVerdict::Warn => "33",
        CheckVerdict::Fail | CheckVerdict::Error => "31",
        CheckVerdict::Interrupted | CheckVerdict::Skipped => "2",
    };
    format!("\x1b[1;{code}m{}\x1b[0m", v.word())
}

/// What a run that an error ended had done until then, from its fio report:
/// `partial (not judged): 1234 writes (4.82 MiB) in 612 ms before the error`.
fn partial_line(o: &ProfileOutcome) -> Option<String> {
    let Some(RunReport::Fio(v)) = o.report.as_ref().filter(|_| o.partial) else {
        return None;
    };
    let mut done = Vec::new();
    let mut ms = 0;
    for (key, word) in [("read", "reads"), ("write", "writes"), ("trim", "trims")] {
        let (mut ios, mut bytes) = (0, 0);
        for j in v["jobs"].as_array().into_iter().flatten() {
            ios += j[key]["total_ios"].as_u64().unwrap_or(0);
            bytes += j[key]["io_bytes"].as_u64().unwrap_or(0);
            ms = ms.max(j[key]["runtime"].as_u64().unwrap_or(0));
        }
        if ios > 0 {
            done.push(format!("{ios} {word} ({})", super::units::size_str(bytes)));
        }
    }
    let done = match (done.is_empty(), ms) {
        (true, _) => "no I/O completed".to_string(),
        // Before the end of a ramp_time nothing was measured.
        (false, 0) => done.join(", "),
        (false, ms) => format!("{} in {ms} ms", done.join(", ")),
    };
    Some(format!("partial (not judged): {done} before the error"))
}

fn profile(out: &mut String, o: &ProfileOutcome, color: bool) {
    // Every string here may come from a user's profile file or a document read back, so each
    // goes through `t` (control characters shown, never obeyed by the terminal).
    // Writing into a String cannot fail.
    let _ = writeln!(
        out,
        "{} {}: {}",
        word(o.verdict, color),
        t(&o.profile),
        t(&o.title)
    );
    if let Some(line) = o.how_reached() {
        let _ = writeln!(out, "  {}", t(&line));
    }
    for m in &o.metrics {
        let label = m
            .verdict_label
            .as_ref()
            .map(|l| format!(": {}", t(l)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}  {} {} (threshold {}){label}",
            m.verdict.word(),
            t(&m.label),
            t(&m.value_text),
            t(&m.threshold_text)
        );
        let _ = writeln!(out, "        source: {}", t(&m.source));
        if let Some(r) = &m.rank {
            let _ = writeln!(out, "        rank: {}", t(r));
        }
    }
    for i in &o.info {
        let g: Vec<String> = i
            .guidance
            .iter()
            .map(|g| {
                let met = if g.met { "met" } else { "NOT met" };
                format!("{} {} {met}", t(&g.label), g.value)
            })
            .collect();
        let g = if g.is_empty() {
            String::new()
        } else {
            format!(" ({})", g.join("; "))
        };
        let _ = writeln!(out, "        {}: {}{g}", t(&i.label), t(&i.value_text));
    }
    if let Some(n) = &o.not_disk {
        let _ = writeln!(out, "  WARN  not a disk measurement: {}", t(n));
    }
    if let Some(r) = &o.reason {
        let _ = writeln!(out, "  {}", t(r));
    }
    if let Some(line) = partial_line(o) {
        let _ = writeln!(out, "  {line}");
    }
    for w in &o.warnings {
        let _ = writeln!(out, "  warning: {}", t(w));
    }
    for a in &o.advice {
        let _ = writeln!(out, "  next: {}", t(a));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile outcome as a check document holds it, with `report` and `partial` given.
    fn outcome(report: serde_json::Value, partial: bool) -> ProfileOutcome {
        serde_json::from_value(serde_json::json!({
            "profile": "etcd", "title": "etcd WAL", "verdict": "error", "metric": null,
            "value": null, "unit": null, "threshold": null, "source": null, "references": null,
            "metrics": [], "info": [], "shortened": false, "not_disk": null, "warnings": [],
            "reason": "fdatasync error on 'd/f' at offset 9: Input/output error (errno 5)",
            "advice": [], "job": null, "report": report, "partial": partial, "io_error": null,
        }))
        .unwrap()
    }

    #[test]
    fn a_partial_run_says_what_was_done_before_the_error() {
        let jobs = |ios: u64, ms: u64| {
            serde_json::json!({"fio version": "iogauge-0.1.0", "jobs": [{"jobname": "etcd",
                "read": {"total_ios": 0, "io_bytes": 0, "runtime": 0},
                "write": {"total_ios": ios, "io_bytes": ios * 2300, "runtime": ms},
                "trim": {"total_ios": 0, "io_bytes": 0, "runtime": 0},
            }]})
        };
        let mut out = String::new();
        profile(&mut out, &outcome(jobs(404, 1069), true), false);
        assert_eq!(
            out,
            "ERROR etcd: etcd WAL\n  fdatasync error on 'd/f' at offset 9: Input/output error \
             (errno 5)\n  partial (not judged): 404 writes (907KiB) in 1069 ms before the error\n"
        );
        // Nothing measured yet (the error came in the ramp), or no I/O at all.
        assert_eq!(
            partial_line(&outcome(jobs(3, 0), true)).unwrap(),
            "partial (not judged): 3 writes (6900B) before the error"
        );
        assert_eq!(
            partial_line(&outcome(jobs(0, 0), true)).unwrap(),
            "partial (not judged): no I/O completed before the error"
        );
        // A complete run has no such line.
        assert_eq!(partial_line(&outcome(jobs(404, 1069), false)), None);
    }
}
