//! `iogauge compare`'s text, Markdown and CSV outputs, from the comparison document alone: what a
//! verdict needs, one plain sentence per metric ("p99 fdatasync rose about 16× (5.97 → 95.96 ms):
//! worse, 4 runs each"), the table (A, B, B/A, its interval, the verdict), then what the numbers
//! cover.

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

/// How B moved from A, in words: "rose about 16×", "fell 23 %", "did not change".
fn change_words(a: f64, b: f64) -> String {
    let r = b / a;
    // 1/r too: a ratio near zero must not read "fell about inf×".
    if !r.is_finite() || r <= 0.0 || !(1.0 / r).is_finite() {
        return "could not be compared".into();
    }
    // Large changes read best as a factor, small ones as a percentage.
    let factor = |f: f64| {
        if f >= 10.0 {
            format!("about {f:.0}×")
        } else {
            format!("about {f:.1}×")
        }
    };
    let pct = |p: f64| {
        if p >= 1.0 {
            format!("{p:.0} %")
        } else {
            format!("{p:.1} %")
        }
    };
    if (r - 1.0).abs() < 0.0005 {
        "did not change".into()
    } else if r >= 1.5 {
        format!("rose {}", factor(r))
    } else if r > 1.0 {
        format!("rose {}", pct((r - 1.0) * 100.0))
    } else if r <= 1.0 / 1.5 {
        format!("fell {}", factor(1.0 / r))
    } else {
        format!("fell {}", pct((1.0 - r) * 100.0))
    }
}

/// "4 runs each", "1 run each", "3 runs against 5".
fn runs_words(na: usize, nb: usize) -> String {
    match (na, nb) {
        (1, 1) => "1 run each".into(),
        (x, y) if x == y => format!("{x} runs each"),
        (x, y) => format!("{x} run{} against {y}", if x == 1 { "" } else { "s" }),
    }
}

/// The sentence that leads a metric: "etcd: p99 fdatasync rose about 16× (5.97 → 95.96 ms):
/// worse, 4 runs each". Its numbers are the A and B shown, and the change is theirs.
pub(crate) fn sentence(m: &MetricComparison, na: usize, nb: usize) -> String {
    term(&format!(
        "{} {} ({} → {}): {}, {}",
        m.label,
        change_words(m.a, m.b),
        value_text(m.a, &m.unit),
        value_text(m.b, &m.unit),
        m.verdict.words(),
        runs_words(na, nb)
    ))
    .into_owned()
}

/// One sentence per metric, in the document's order.
fn sentences(doc: &CompareDocument) -> Vec<String> {
    doc.metrics
        .iter()
        .map(|m| sentence(m, doc.a.len(), doc.b.len()))
        .collect()
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
    let dates: Vec<&str> = r.iter().filter_map(|x| x.started.as_deref()).collect();
    match dates.as_slice() {
        [] => {}
        [one] => s.push_str(&format!(", {one}")),
        [first, .., last] => s.push_str(&format!(", {first} to {last}")),
    }
    let cut = r.iter().filter(|x| x.interrupted.is_some()).count();
    if cut > 0 {
        s.push_str(&format!(" ({cut} interrupted)"));
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

const HEAD: [&str; 6] = ["METRIC", "A", "B", "B/A", "95% CI", "VERDICT"];

/// The text table.
pub(crate) fn render_compare_text(doc: &CompareDocument) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {}", side(&doc.a));
    let _ = writeln!(out, "B: {}", side(&doc.b));
    out.push('\n');
    if !doc.needs.is_empty() {
        let _ = writeln!(out, "{}\n", term(&doc.needs));
    }
    for l in sentences(doc) {
        let _ = writeln!(out, "{l}");
    }
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
    if doc.metrics.iter().any(|m| m.estimate.is_some()) {
        v.push(
            "note: A and B are the medians of each side's runs and B/A their ratio; the 95 % \
             interval surrounds the Hodges–Lehmann estimate (the median of all pairwise ratios, \
             `estimate` in JSON and CSV), which the verdict judges"
                .into(),
        );
    }
    // The same note on several metrics (too few runs) is said once, naming them all.
    let mut by_note: Vec<(&str, Vec<&str>)> = Vec::new();
    for m in &doc.metrics {
        if let Some(n) = &m.note {
            match by_note.iter_mut().find(|(t, _)| t == n) {
                Some((_, labels)) => labels.push(&m.label),
                None => by_note.push((n, vec![&m.label])),
            }
        }
    }
    for (n, labels) in by_note {
        v.push(format!("{}: {n}", labels.join("; ")));
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
    if !doc.needs.is_empty() {
        let _ = writeln!(out, "{}\n", esc(&term(&doc.needs)));
    }
    for l in sentences(doc) {
        let _ = writeln!(out, "- {}", esc(&l));
    }
    out.push('\n');
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
    // `estimate` came later: it is last, so readers by position keep working.
    let mut out = String::from(
        "key,label,unit,better,a,b,ratio,ci_low,ci_high,p_value,verdict,noise,note,estimate\n",
    );
    for m in &doc.metrics {
        let (lo, hi) = m.ci.map(|[l, h]| (num(l), num(h))).unwrap_or_default();
        let verdict = serde_json::to_value(m.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{lo},{hi},{},{verdict},{},{},{}",
            q(&m.key),
            q(&m.label),
            q(&m.unit),
            q(&m.better),
            num(m.a),
            num(m.b),
            num(m.ratio),
            m.p_value.map(num).unwrap_or_default(),
            num(m.noise),
            q(m.note.as_deref().unwrap_or("")),
            m.estimate.map(num).unwrap_or_default()
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

    #[test]
    fn changes_read_as_factors_or_percentages() {
        assert_eq!(change_words(5.97, 95.96), "rose about 16×");
        assert_eq!(change_words(3.98, 8.68), "rose about 2.2×");
        assert_eq!(change_words(100.0, 112.0), "rose 12 %");
        assert_eq!(change_words(100.0, 100.4), "rose 0.4 %");
        assert_eq!(change_words(4573.0, 1090.0), "fell about 4.2×");
        assert_eq!(change_words(100.0, 77.0), "fell 23 %");
        assert_eq!(change_words(100.0, 100.0), "did not change");
        assert_eq!(change_words(0.0, 1.0), "could not be compared");
        assert_eq!(change_words(1.0, 5e-324), "could not be compared");
        assert_eq!(runs_words(4, 4), "4 runs each");
        assert_eq!(runs_words(1, 1), "1 run each");
        assert_eq!(runs_words(3, 5), "3 runs against 5");
    }
}
