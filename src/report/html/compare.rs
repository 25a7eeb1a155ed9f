//! `iogauge compare`'s page: the verdict (anything worse?), what was compared (with the runs'
//! dates) and how, one sentence per metric, the table of metrics (with which direction is worse),
//! and the ratios with their intervals as a forest plot.

use super::page::{esc, facts, notes, page, table, td, td_num, verdict_box};
use super::svg::Forest;
use crate::report::compare_text::{sentence, value_text};
use crate::report::comparison::{ChangeVerdict, CompareDocument, RunRef};
use crate::report::document::CheckVerdict;

fn side(r: &[RunRef]) -> String {
    let mut s: Vec<String> = r
        .iter()
        .map(|x| {
            let mut t = format!("{} {}", x.kind, x.source);
            if let Some(h) = &x.host {
                t.push_str(&format!(" on {h}"));
            }
            if let Some(d) = &x.started {
                t.push_str(&format!(", {d}"));
            }
            if let Some(why) = &x.interrupted {
                t.push_str(&format!(" ({why})"));
            }
            t
        })
        .collect();
    if s.len() > 4 {
        let n = s.len();
        s.truncate(3);
        s.push(format!("… {n} runs in all"));
    }
    s.join("; ")
}

/// The page of a comparison.
pub(crate) fn render_compare_html(doc: &CompareDocument) -> String {
    let count = |v: ChangeVerdict| doc.metrics.iter().filter(|m| m.verdict == v).count();
    let worse = count(ChangeVerdict::Worse);
    let head = if worse > 0 {
        CheckVerdict::Fail
    } else if count(ChangeVerdict::Unknown) > 0 {
        CheckVerdict::Warn
    } else {
        CheckVerdict::Pass
    };
    let about = format!(
        "{worse} worse, {} better, {} no difference beyond noise, {} cannot tell",
        count(ChangeVerdict::Better),
        count(ChangeVerdict::Same),
        count(ChangeVerdict::Unknown)
    );
    let mut body = String::from("<h1>iogauge compare</h1>\n");
    body.push_str(&verdict_box(head, &esc(&about)));
    body.push_str(&facts(&[
        ("A (baseline)", side(&doc.a)),
        ("B", side(&doc.b)),
        ("method", doc.method.clone()),
        ("iogauge", doc.iogauge.clone()),
    ]));
    if !doc.needs.is_empty() {
        body.push_str(&format!("<p>{}</p>\n", esc(&doc.needs)));
    }
    body.push_str("<ul>\n");
    for m in &doc.metrics {
        body.push_str(&format!(
            "<li>{}</li>\n",
            esc(&sentence(m, doc.a.len(), doc.b.len()))
        ));
    }
    body.push_str("</ul>\n");
    body.push_str(
        "<p>Each row: A and B, the ratio B/A with its 95 % confidence interval, and the verdict: \
         <b>better</b> or <b>worse</b> when the interval excludes no change (or, with several runs \
         per side, Mann–Whitney's p &lt; 0.05) and the change exceeds the noise threshold; \
         <b>~</b> for no difference beyond noise; <b>?</b> when the data cannot tell. \
         \"worse if\" says which direction of change is worse for the metric. With several runs \
         per side, A and B are medians and B/A their ratio; the interval surrounds the \
         Hodges–Lehmann estimate (the median of all pairwise ratios) shown under it.</p>\n",
    );
    let rows: Vec<Vec<String>> = doc
        .metrics
        .iter()
        .map(|m| {
            vec![
                td(&m.label),
                td_num(&value_text(m.a, &m.unit)),
                td_num(&value_text(m.b, &m.unit)),
                td(if m.better == "lower" {
                    "higher"
                } else {
                    "lower"
                }),
                td_num(&match m.estimate {
                    Some(e) => format!("{:.3} (estimate {e:.3})", m.ratio),
                    None => format!("{:.3}", m.ratio),
                }),
                td_num(
                    &m.ci
                        .map(|[l, h]| format!("{l:.3} – {h:.3}"))
                        .unwrap_or_else(|| "-".into()),
                ),
                td_num(&m.p_value.map(|p| format!("{p:.3}")).unwrap_or_default()),
                td(m.verdict.sign()),
                td(m.note.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    body.push_str(&table(
        &[
            "metric",
            "A",
            "B",
            "worse if",
            "B/A",
            "95% interval",
            "p",
            "verdict",
            "note",
        ],
        &rows,
    ));
    let chart = Forest {
        title: "B/A per metric".into(),
        caption: "Each dot is the ratio B/A; the line is its 95 % interval (none when it could \
                  not be estimated); the dashed line is no change."
            .into(),
        rows: doc
            .metrics
            .iter()
            .map(|m| {
                (
                    m.label.clone(),
                    m.estimate.unwrap_or(m.ratio),
                    m.ci.map(|[l, h]| (l, h)),
                )
            })
            .collect(),
    };
    body.push_str("<div class=\"charts\">\n");
    body.push_str(&chart.render());
    body.push_str("</div>\n<h2>What the numbers cover</h2>\n");
    let mut n = doc.notes.clone();
    if !doc.unmatched.is_empty() {
        n.push(format!("not compared: {}", doc.unmatched.join(", ")));
    }
    body.push_str(&notes(&n));
    page("iogauge compare", &body)
}
