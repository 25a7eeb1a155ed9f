//! `iogauge check --format csv`: one row per profile and metric with raw numbers (RFC 4180), for
//! spreadsheets and scripts. A profile without a measured metric gets one row with its verdict
//! and reason.

use super::document::CheckDocument;
use crate::untrusted::csv_text as q;
use std::fmt::Write;

/// The CSV output, with a header row.
pub(crate) fn render_check_csv(doc: &CheckDocument) -> String {
    let mut out = String::from(
        "profile,verdict,metric,label,value,unit,threshold,warn_threshold,better,source,shortened,warnings,reason,host,dir\n",
    );
    let host = q(&doc.context.hostname);
    let dir = q(&doc.dir);
    for p in &doc.profiles {
        let verdict = |v: crate::report::document::CheckVerdict| v.word().to_ascii_lowercase();
        let warnings = q(&p.warnings.join("; "));
        let reason = q(p.reason.as_deref().unwrap_or(""));
        if p.metrics.is_empty() {
            let _ = writeln!(
                out,
                "{},{},,,,,,,,,{},{warnings},{reason},{host},{dir}",
                q(&p.profile),
                verdict(p.verdict),
                p.shortened
            );
        }
        for m in &p.metrics {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{warnings},{reason},{host},{dir}",
                q(&p.profile),
                verdict(m.verdict),
                q(&m.metric),
                q(&m.label),
                m.value,
                q(&m.unit),
                m.threshold,
                m.warn_threshold.map(|w| w.to_string()).unwrap_or_default(),
                q(&m.better),
                q(&m.source),
                p.shortened
            );
        }
    }
    out
}
