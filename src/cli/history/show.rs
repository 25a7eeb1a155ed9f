//! `iogauge history show ID`: a saved run printed again as its command printed it.

use super::args::Format;
use super::unknown;
use crate::cli::{stdout, Ended, Error, Outcome};
use crate::history::{History, RunKind};
use crate::report::check_text::render_check_text;
use crate::report::document::{CheckDocument, KubeDocument, PreflightDocument};
use crate::report::kube_text::render_kube_text;
use crate::report::preflight_text::render_human;
use crate::untrusted::term;
use std::path::Path;

pub(super) fn show(h: Option<&History>, path: &Path, id: i64, format: Format) -> Ended {
    let Some(run) = h
        .map(|h| h.get(id))
        .transpose()
        .map_err(Error::run)?
        .flatten()
    else {
        return Err(unknown(id, path));
    };
    eprintln!(
        "iogauge history: run {} ({}, {} on {}): {}",
        run.id,
        run.kind,
        term(&run.started),
        term(&run.host),
        term(&run.command.join(" "))
    );
    let pretty = || serde_json::to_string_pretty(&run.document).unwrap_or_default();
    if format == Format::Json {
        stdout::println(&pretty());
        return Ok(Outcome::Pass);
    }
    let color = crate::cli::color();
    let doc = run.document.clone();
    let text = match run.kind {
        RunKind::Check | RunKind::Canary => serde_json::from_value::<CheckDocument>(doc)
            .map(|d| render_check_text(&d, color))
            .map_err(|e| e.to_string()),
        RunKind::Kube => serde_json::from_value::<KubeDocument>(doc)
            .map(|d| render_kube_text(&d, color))
            .map_err(|e| e.to_string()),
        RunKind::Preflight => serde_json::from_value::<PreflightDocument>(doc)
            .map(|d| preflight_text(&d))
            .map_err(|e| e.to_string()),
        RunKind::Fio => {
            // fio's text output comes from the run's in-memory report, which is not stored.
            eprintln!(
                "iogauge history: a fio run is stored as its JSON output (--output-format=json); here it is"
            );
            Ok(format!("{}\n", pretty()))
        }
    };
    match text {
        Ok(t) => {
            stdout::print(&t);
            Ok(Outcome::Pass)
        }
        // Refused, not guessed at: `--format json` prints it as stored.
        Err(e) => Err(Error::bad_input(format!(
            "run {id}'s document does not read as this iogauge's {} document ({e}); 'iogauge history show {id} --format json' prints it as stored",
            run.kind
        ))),
    }
}

/// troubleshoot's human output; a run that only collected has no outcomes, so its collectors.
fn preflight_text(d: &PreflightDocument) -> String {
    if !d.outcomes.is_empty() {
        return render_human(&d.name, &d.outcomes);
    }
    let mut out = String::new();
    for c in &d.collectors {
        let status = serde_json::to_value(c.status)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let reason = c
            .reason
            .as_ref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        out.push_str(&format!("{}: {status}{reason}\n", c.name));
    }
    out
}
