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

use super::document::{CheckDocument, KubeDocument, PreflightDocument};
use serde::Deserialize;
use serde_json::Value;

/// Which document a JSON value is, by the keys only that kind has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DocKind {
    Check,
    Kube,
    Preflight,
    Fio,
    Compare,
}

impl DocKind {
    fn what(self) -> &'static str {
        match self {
            DocKind::Check => "a check document",
            DocKind::Kube => "a kube check document",
            DocKind::Preflight => "a preflight document",
            DocKind::Fio => "fio's JSON output",
            DocKind::Compare => "a compare document",
        }
    }
}

/// The kind of `v`: kube first, since it also has `schema_version` and `profiles`.
pub(crate) fn detect(v: &Value) -> Option<DocKind> {
    let has = |k: &str| v.get(k).is_some();
    if has("targets") && has("run_id") {
        Some(DocKind::Kube)
    } else if has("schema_version") && has("profiles") && has("dir") {
        Some(DocKind::Check)
    } else if has("collectors") && has("outcomes") {
        Some(DocKind::Preflight)
    } else if has("fio version") && has("jobs") {
        Some(DocKind::Fio)
    } else if has("method") && has("metrics") && has("a") && has("b") {
        Some(DocKind::Compare)
    } else {
        None
    }
}

/// The page of a saved document, or why it cannot be rendered.
pub(crate) fn render_json_html(v: &Value) -> Result<String, String> {
    let kind = detect(v).ok_or(
        "not a document iogauge knows: expected a check document (schema_version, profiles, \
         dir), a kube check document (targets, run_id), a preflight document (collectors, \
         outcomes), fio's JSON output (\"fio version\", jobs) or a compare document (a, b, \
         method, metrics)",
    )?;
    let problem = match kind {
        DocKind::Fio => super::document::fio_document_problem(v),
        _ => super::document::schema_version_problem(v.get("schema_version")),
    };
    if let Some(p) = problem {
        return Err(format!("looks like {} but {p}", kind.what()));
    }
    let bad = |e: serde_json::Error| format!("looks like {} but does not parse: {e}", kind.what());
    Ok(match kind {
        DocKind::Check => render_check_html(&CheckDocument::deserialize(v).map_err(bad)?),
        DocKind::Kube => render_kube_html(&KubeDocument::deserialize(v).map_err(bad)?),
        DocKind::Preflight => {
            render_preflight_html(&PreflightDocument::deserialize(v).map_err(bad)?)
        }
        DocKind::Fio => render_fio_html(v),
        DocKind::Compare => {
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
            detect(&json!({"schema_version": 1, "profiles": [], "dir": "/d"})),
            Some(DocKind::Check)
        );
        assert_eq!(
            detect(&json!({"schema_version": 1, "profiles": [], "targets": [], "run_id": "x"})),
            Some(DocKind::Kube)
        );
        assert_eq!(
            detect(&json!({"collectors": [], "outcomes": []})),
            Some(DocKind::Preflight)
        );
        assert_eq!(
            detect(&json!({"fio version": "fio-3.33", "jobs": []})),
            Some(DocKind::Fio)
        );
        assert_eq!(detect(&json!({"jobs": []})), None);
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
