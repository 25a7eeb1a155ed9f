//! Reading a check's result back from its pod's log. The pod runs `iogauge check … --format
//! json-line`, so the document is one line; the log also carries the check's stderr (plan
//! lines, notes), whose lines the container runtime may place between stdout's.

use crate::report::document::{CheckDocument, DocumentKind};
use serde::Deserialize;

/// The last document line in a pod's log, parsed. Err: what the log ends with instead, so a
/// pod that failed before printing says why (its own stderr) in the caller's error. The line is
/// found by its first key (json-line output begins with `schema_version`); what it is, and
/// whether this iogauge reads its version, is [`DocumentKind`]'s decision, as for every reader.
pub fn parse_check_log(log: &str) -> Result<CheckDocument, String> {
    let line = log
        .lines()
        .rev()
        .find(|l| l.starts_with("{\"schema_version\""))
        .ok_or_else(|| format!("no result in the pod's log; it ends with: {}", tail(log, 3)))?;
    let bad =
        |e: serde_json::Error| format!("the pod's result does not parse as a check document: {e}");
    let v: serde_json::Value = serde_json::from_str(line).map_err(bad)?;
    match DocumentKind::sniff(&v) {
        Some(DocumentKind::Check) => {}
        other => {
            return Err(format!(
                "the pod's result is not a check document but {}",
                other.map_or("a document iogauge does not know", DocumentKind::what)
            ))
        }
    }
    if let Some(p) = DocumentKind::Check.problem(&v) {
        return Err(format!(
            "the pod's result is a check document, but {p}; run the image of this iogauge \
             version (--image)"
        ));
    }
    CheckDocument::deserialize(&v).map_err(bad)
}

/// The last `n` non-empty lines, joined with " | " (or "(an empty log)").
pub(crate) fn tail(log: &str, n: usize) -> String {
    let mut lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return "(an empty log)".into();
    }
    lines.drain(..lines.len().saturating_sub(n));
    lines.join(" | ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_log_without_a_document_says_how_it_ends() {
        let e = parse_check_log("iogauge check: note\n\nerror: --dir '/data': not a directory\n")
            .unwrap_err();
        assert_eq!(
            e,
            "no result in the pod's log; it ends with: iogauge check: note | error: --dir '/data': not a directory"
        );
        assert_eq!(
            parse_check_log("").unwrap_err(),
            "no result in the pod's log; it ends with: (an empty log)"
        );
        assert_eq!(
            parse_check_log("{\"schema_version\": 1}\n").unwrap_err(),
            "the pod's result is not a check document but a document iogauge does not know"
        );
        assert!(
            parse_check_log("{\"schema_version\": 1, \"profiles\": [], \"dir\": \"/d\"}\n")
                .unwrap_err()
                .starts_with("the pod's result does not parse as a check document: missing field")
        );
        assert_eq!(
            parse_check_log("{\"schema_version\": 2, \"profiles\": [], \"dir\": \"/d\"}\n")
                .unwrap_err(),
            format!(
                "the pod's result is a check document, but schema_version is 2; this iogauge \
                 ({}) reads schema_version 1; read it with the iogauge version that wrote it \
                 (its \"iogauge\" field); run the image of this iogauge version (--image)",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}
