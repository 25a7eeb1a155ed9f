//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, nothing fetched)
//! per document, for attaching to a ticket. `page.rs` is the skeleton, `svg.rs` the charts, and
//! one file per document kind formats it; `render_json_html` renders a saved JSON document.

mod check;
mod compare;
mod fio;
mod kube;
mod page;
mod preflight;
mod svg;

pub(crate) use check::render_check_html;
pub(crate) use compare::render_compare_html;
pub(crate) use fio::render_fio_html;
pub(crate) use kube::render_kube_html;
pub(crate) use preflight::render_preflight_html;

use super::document::{CheckDocument, DocumentKind, KubeDocument, PreflightDocument};
use serde::Deserialize;
use serde_json::Value;

/// The page of a saved document, or why it cannot be rendered.
pub(crate) fn render_json_html(v: &Value) -> Result<String, String> {
    let kind = DocumentKind::sniff(v).ok_or(
        "not a document iogauge knows: expected a check document (schema_version, profiles, \
         dir), a kube check document (targets, run_id), a preflight document (collectors, \
         outcomes), fio's JSON output (\"fio version\", jobs) or a compare document (a, b, \
         method, metrics)",
    )?;
    if let Some(p) = kind.problem(v) {
        return Err(format!("looks like {} but {p}", kind.what()));
    }
    let bad = |e: serde_json::Error| format!("looks like {} but does not parse: {e}", kind.what());
    Ok(match kind {
        DocumentKind::Check => render_check_html(&CheckDocument::deserialize(v).map_err(bad)?),
        DocumentKind::Kube => render_kube_html(&KubeDocument::deserialize(v).map_err(bad)?),
        DocumentKind::Preflight => {
            render_preflight_html(&PreflightDocument::deserialize(v).map_err(bad)?)
        }
        DocumentKind::Fio => render_fio_html(v),
        DocumentKind::Compare => {
            render_compare_html(&super::comparison::CompareDocument::deserialize(v).map_err(bad)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents_are_told_apart_by_their_keys() {
        assert_eq!(
            DocumentKind::sniff(&json!({"schema_version": 1, "profiles": [], "dir": "/d"})),
            Some(DocumentKind::Check)
        );
        assert_eq!(
            DocumentKind::sniff(
                &json!({"schema_version": 1, "profiles": [], "targets": [], "run_id": "x"})
            ),
            Some(DocumentKind::Kube)
        );
        assert_eq!(
            DocumentKind::sniff(&json!({"collectors": [], "outcomes": []})),
            Some(DocumentKind::Preflight)
        );
        assert_eq!(
            DocumentKind::sniff(&json!({"fio version": "fio-3.33", "jobs": []})),
            Some(DocumentKind::Fio)
        );
        assert_eq!(DocumentKind::sniff(&json!({"jobs": []})), None);
        // Without `dir` no check document (compare once took it for one).
        assert_eq!(
            DocumentKind::sniff(&json!({"schema_version": 1, "profiles": []})),
            None
        );
        assert!(render_json_html(&json!([1]))
            .unwrap_err()
            .starts_with("not a document iogauge knows"));
        assert!(
            render_json_html(&json!({"schema_version": 1, "profiles": 3, "dir": "/d"}))
                .unwrap_err()
                .starts_with("looks like a check document but does not parse: ")
        );
    }
}
