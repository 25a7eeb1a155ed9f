//! `iogauge compare`'s text, Markdown and CSV outputs, from the comparison document alone: one
//! table row per metric (A, B, B/A, its interval, the verdict), then what the numbers cover.

use super::comparison::{CompareDocument, MetricComparison, RunRef};
use crate::untrusted::term;
use std::fmt::Write;

/// A value in its unit, short: latencies in µs/ms/s, rates as integers.
pub(crate) fn value_text(v: f64, unit: &str) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if unit == "ns" {
        return if v >= 1e9 {
            format!("{:.2} s", v / 1e9)
        } else if v >= 1e6 {
            format!("{:.2} ms", v / 1e6)
        } else if v >= 1e3 {
            format!("{:.1} µs", v / 1e3)
        } else {
            format!("{v:.0} ns")
        };
    }
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

fn ratio_text(m: &MetricComparison) -> (String, String) {
    let r = if m.ratio.is_finite() {
        format!("{:.3}", m.ratio)
    } else {
        "-".into()
    };
    let ci =
        m.ci.map(|[l, h]| format!("[{l:.3}, {h:.3}]"))
            .unwrap_or_else(|| "-".into());
    (r, ci)
}

/// One side's runs in words; names and paths come from the documents, so control characters
/// are shown (here, in `rows` and in `notes`), never obeyed.
fn side(r: &[RunRef]) -> String {
    let first = &r[0];
    let mut s = format!("{} {}", first.kind, first.source);
    if r.len() > 1 {
        s = format!("{} runs of {} ({} …)", r.len(), first.kind, first.source);
    }
    if let Some(t) = &first.target {
        s.push_str(&format!(" in {t}"));
    }
    if let Some(h) = &first.host {
        s.push_str(&format!(" on {h}"));
    }
    term(&s).into_owned()
}

fn rows(doc: &CompareDocument) -> Vec<[String; 6]> {
    doc.metrics
        .iter()
        .map(|m| {
            let (r, ci) = ratio_text(m);
            [
                term(&m.label).into_owned(),
                value_text(m.a, &m.unit),
                value_text(m.b, &m.unit),
                r,
                ci,
                m.verdict.sign().to_string(),
            ]
        })
        .collect()
}

const HEAD: [&str; 6] = ["METRIC", "A", "B", "B/A", "95% CI", ""];

/// The text table.
pub(crate) fn render_compare_text(doc: &CompareDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {}", side(&doc.a));
    let _ = writeln!(out, "B: {}", side(&doc.b));
    out.push('\n');
    let rows = rows(doc);
    let mut w = HEAD.map(|h| h.chars().count());
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            // Numbers right-aligned, words left-aligned.
            if (1..=3).contains(&i) {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
            l.push_str("  ");
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(&HEAD.map(String::from)));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    let notes = notes(doc);
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            let _ = writeln!(out, "{n}");
        }
    }
    out
}

/// The notes under the table: the method's limits, per-metric notes, unmatched metrics.
fn notes(doc: &CompareDocument) -> Vec<String> {
    let mut v: Vec<String> = doc.notes.iter().map(|n| format!("note: {n}")).collect();
    for m in &doc.metrics {
        if let Some(n) = &m.note {
            v.push(format!("{}: {n}", m.label));
        }
    }
    if !doc.unmatched.is_empty() {
        v.push(format!("not compared: {}", doc.unmatched.join(", ")));
    }
    let mut under = Vec::new();
    for (latency, kind) in [(true, "latencies"), (false, "rates")] {
        if let Some(m) = doc.metrics.iter().find(|m| (m.unit == "ns") == latency) {
            under.push(format!("{:.0} % for {kind}", m.noise * 100.0));
        }
    }
    for n in &mut v {
        *n = term(n).into_owned();
    }
    v.push(format!(
        "~ = no difference beyond noise (a change under {}, or not significant at 95 %); ? = the data cannot tell",
        under.join(" and ")
    ));
    v
}

/// A GitHub-flavoured Markdown table, for tickets.
pub(crate) fn render_compare_markdown(doc: &CompareDocument) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "**A:** {}  \n**B:** {}\n",
        esc(&side(&doc.a)),
        esc(&side(&doc.b))
    );
    let _ = writeln!(out, "| metric | A | B | B/A | 95% CI | |");
    let _ = writeln!(out, "|---|---:|---:|---:|---|---|");
    for r in rows(doc) {
        let cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
    for n in notes(doc) {
        let _ = writeln!(out, "- {}", esc(&n));
    }
    out
}

/// CSV with one row per metric and raw numbers (RFC 4180 quoting).
pub(crate) fn render_compare_csv(doc: &CompareDocument) -> String {
    use crate::untrusted::csv_text as q;
    let num = |x: f64| {
        if x.is_finite() {
            x.to_string()
        } else {
            String::new()
        }
    };
    let mut out =
        String::from("key,label,unit,better,a,b,ratio,ci_low,ci_high,p_value,verdict,noise,note\n");
    for m in &doc.metrics {
        let (lo, hi) = m.ci.map(|[l, h]| (num(l), num(h))).unwrap_or_default();
        let verdict = serde_json::to_value(m.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{lo},{hi},{},{verdict},{},{}",
            q(&m.key),
            q(&m.label),
            q(&m.unit),
            q(&m.better),
            num(m.a),
            num(m.b),
            num(m.ratio),
            m.p_value.map(num).unwrap_or_default(),
            num(m.noise),
            q(m.note.as_deref().unwrap_or(""))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_in_their_units() {
        assert_eq!(value_text(270_000.0, "ns"), "270.0 µs");
        assert_eq!(value_text(2_410_000.0, "ns"), "2.41 ms");
        assert_eq!(value_text(4573.2, "IOPS"), "4573 IOPS");
        assert_eq!(value_text(f64::NAN, "IOPS"), "-");
    }
}
