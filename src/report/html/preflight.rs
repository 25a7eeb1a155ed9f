//! `iogauge preflight`'s page: the analyzers' outcomes, then each collector with its result
//! table and percentile curve.

use super::check::context_facts;
use super::fio::percentile_chart;
use super::page::{badge, esc, facts, fmt_ns, page, table, td, td_html, td_num, verdict_box};
use crate::report::document::{CheckVerdict, CollectorStatus, PreflightDocument};
use std::fmt::Write;

/// troubleshoot's percentile keys: `P1` → 1, `P99` → 99, `P995` → 99.5, `P9999` → 99.99.
fn percentile_of(key: &str) -> Option<f64> {
    let d = key.strip_prefix('P')?;
    // Digits only: the slicing below is by byte (a saved document's key can be any text; fuzzing).
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if d.len() <= 2 {
        d.parse().ok()
    } else {
        format!("{}.{}", &d[..2], &d[2..]).parse().ok()
    }
}

fn status(s: CollectorStatus) -> &'static str {
    match s {
        CollectorStatus::Collected => "collected",
        CollectorStatus::TimedOut => "timed out",
        CollectorStatus::Failed => "failed",
    }
}

/// The page of a preflight document.
pub(crate) fn render_preflight_html(doc: &PreflightDocument) -> String {
    let worst = doc.outcomes.iter().map(|o| o.verdict).max();
    let mut body = format!("<h1>iogauge preflight: {}</h1>\n", esc(&doc.name));
    let about = format!(
        "{} analyzer outcome(s), {} collector(s)",
        doc.outcomes.len(),
        doc.collectors.len()
    );
    body.push_str(&verdict_box(
        worst.unwrap_or(CheckVerdict::Pass),
        &esc(&about),
    ));
    body.push_str(&facts(&[
        ("Spec", doc.name.clone()),
        ("iogauge", doc.iogauge.clone()),
    ]));
    body.push_str(
        "<p class=\"muted\">troubleshoot's filesystemPerformance: each collector measures \
         fdatasync latency in a directory; each analyzer compares a statistic with its \
         conditions, first match wins.</p>\n",
    );
    body.push_str("<h2>Analyzer outcomes</h2>\n");
    if doc.outcomes.is_empty() {
        body.push_str("<p>No analyzers were evaluated (collectors only).</p>\n");
    } else {
        let rows: Vec<Vec<String>> = doc
            .outcomes
            .iter()
            .map(|o| {
                vec![
                    td_html(&badge(o.verdict)),
                    td(&o.title),
                    td(&o.message),
                    // A link would be an external reference: the address is shown as text.
                    td(o.uri.as_deref().unwrap_or("")),
                    td(if o.strict { "yes" } else { "" }),
                ]
            })
            .collect();
        body.push_str(&table(
            &["verdict", "check", "message", "link", "strict"],
            &rows,
        ));
    }
    body.push_str("<h2>Collectors</h2>\n");
    let rows: Vec<Vec<String>> = doc
        .collectors
        .iter()
        .map(|c| {
            vec![
                td(&c.name),
                td(status(c.status)),
                td(c.context.directory.as_deref().unwrap_or("")),
                td(c.reason.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    body.push_str(&table(
        &["collector", "status", "directory", "reason"],
        &rows,
    ));
    for c in &doc.collectors {
        let _ = writeln!(body, "<h3>{}</h3>", esc(&c.name));
        body.push_str(&facts(&context_facts(
            &c.context,
            c.context.directory.as_deref().unwrap_or(""),
            false,
        )));
        if let Some(how) = c.how_reached() {
            let _ = writeln!(body, "<p class=\"muted\">{}</p>", esc(&how));
        }
        let Some(r) = &c.results else { continue };
        // Min, the percentiles in order, Max, then the rest (troubleshoot's keys sort as text).
        let mut ordered: Vec<(&String, &u64)> = r.iter().collect();
        let rank = |k: &str| match (k, percentile_of(k)) {
            ("Min", _) => -1.0,
            (_, Some(p)) => p,
            ("Max", _) => 101.0,
            _ => 102.0,
        };
        ordered.sort_by(|a, b| rank(a.0).total_cmp(&rank(b.0)));
        let rows: Vec<Vec<String>> = ordered
            .iter()
            .map(|(k, v)| vec![td(k), td_num(&v.to_string()), td_num(&fmt_ns(**v as f64))])
            .collect();
        let mut curve: Vec<(f64, f64)> = r
            .iter()
            .filter_map(|(k, v)| Some((percentile_of(k)?, *v as f64)))
            .collect();
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(chart) = percentile_chart(
            &format!("{}: fdatasync latency percentiles", c.name),
            "troubleshoot's result table as a curve: p50 is the typical sync, p99 the slowest \
             one in a hundred; each step right is one more nine.",
            vec![("fdatasync latency".into(), curve)],
            None,
        ) {
            let _ = writeln!(body, "<div class=\"charts\">\n{chart}</div>");
        }
        body.push_str(&table(&["statistic", "ns", "as time"], &rows));
    }
    page(&format!("iogauge preflight — {}", doc.name), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn troubleshoot_percentile_keys() {
        assert_eq!(percentile_of("P1"), Some(1.0));
        assert_eq!(percentile_of("P99"), Some(99.0));
        assert_eq!(percentile_of("P995"), Some(99.5));
        assert_eq!(percentile_of("P9999"), Some(99.99));
        assert_eq!(percentile_of("Average"), None);
    }
}
