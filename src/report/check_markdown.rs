//! `iogauge check --format markdown`: the verdicts as a GitHub-flavoured Markdown table for a
//! ticket or a change review, with where it ran, the reasons to doubt, and what to do next.

use super::document::CheckDocument;
use std::fmt::Write;

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown output.
pub(crate) fn render_check_markdown(doc: &CheckDocument) -> String {
    let mut out = String::new();
    let c = &doc.context;
    let mut at = vec![format!("`{}` on {}", esc(&doc.dir), esc(&c.hostname))];
    if let Some(fs) = &c.filesystem {
        at.push(format!("{} from {}", esc(&fs.fs_type), esc(&fs.source)));
    }
    if let Some(d) = &c.device {
        let model = d.model.as_deref().map(|m| format!(" ({})", esc(m.trim())));
        at.push(format!(
            "device {}{}",
            esc(&d.name),
            model.unwrap_or_default()
        ));
    }
    at.push(format!(
        "kernel {}, iogauge {}",
        esc(&c.kernel),
        esc(&doc.iogauge)
    ));
    let _ = writeln!(out, "**iogauge check**: {}\n", at.join(", "));
    let _ = writeln!(
        out,
        "| profile | verdict | metric | value | needs | source |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---|---|");
    for p in &doc.profiles {
        if p.metrics.is_empty() {
            let _ = writeln!(
                out,
                "| {} | **{}** | | | | {} |",
                esc(&p.profile),
                p.verdict.word(),
                esc(p.reason.as_deref().unwrap_or(""))
            );
        }
        for m in &p.metrics {
            let _ = writeln!(
                out,
                "| {} | **{}** | {} | {} | {} | {} |",
                esc(&p.profile),
                m.verdict.word(),
                esc(&m.label),
                esc(&m.value_text),
                esc(&m.threshold_text),
                esc(&m.source)
            );
        }
    }
    out.push('\n');
    for p in &doc.profiles {
        if let Some(line) = p.how_reached() {
            let _ = writeln!(out, "- {}: {}", esc(&p.profile), esc(&line));
        }
        for w in &p.warnings {
            let _ = writeln!(out, "- {}: warning: {}", esc(&p.profile), esc(w));
        }
        for a in &p.advice {
            let _ = writeln!(out, "- {}: next: {}", esc(&p.profile), esc(a));
        }
    }
    let _ = writeln!(out, "\n{}", doc.summary.line());
    out
}
