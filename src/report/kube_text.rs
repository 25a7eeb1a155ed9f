//! `iogauge kube check`'s text output, from the Kubernetes document alone: a table of targets
//! by profile (each cell the verdict and the first metric's value), then per target where it ran
//! (node, storage class, provisioner, the filesystem the pod saw) and each metric against its
//! threshold, or why the target could not run; then the summary line.

use super::check_text::word;
use super::document::{CheckVerdict, KubeDocument, TargetOutcome, TargetStatus, TargetType};
use crate::untrusted::term;
use std::fmt::Write;

/// The text output; `color` adds ANSI colours to the verdict words.
pub(crate) fn render_kube_text(doc: &KubeDocument, color: bool) -> String {
    let mut rows: Vec<Vec<(String, Option<CheckVerdict>)>> = Vec::new();
    let mut head: Vec<(String, Option<CheckVerdict>)> =
        vec![("TARGET".into(), None), ("NODE".into(), None)];
    // The zone column only when the cluster has zones (clouds do, bare metal seldom).
    let zones = doc.targets.iter().any(|t| t.zone.is_some());
    if zones {
        head.push(("ZONE".into(), None));
    }
    // Names come from the cluster and the pods' documents: control characters are shown.
    head.extend(doc.profiles.iter().map(|p| (term(p).into_owned(), None)));
    rows.push(head);
    for t in &doc.targets {
        let mut row = vec![
            (term(&t.target).into_owned(), None),
            (term(t.node.as_deref().unwrap_or("-")).into_owned(), None),
        ];
        if zones {
            row.push((term(t.zone.as_deref().unwrap_or("-")).into_owned(), None));
        }
        for p in &doc.profiles {
            row.push(cell(t, p));
        }
        rows.push(row);
    }
    let cols = rows[0].len();
    let width: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| cell_width(&r[c])).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (c, (text, verdict)) in r.iter().enumerate() {
            let shown = match verdict {
                Some(v) => {
                    let rest = text.strip_prefix(v.word()).unwrap_or("");
                    format!("{}{rest}", word(*v, color))
                }
                None => text.clone(),
            };
            line.push_str(&shown);
            if c + 1 < cols {
                line.push_str(&" ".repeat(width[c] - cell_width(&r[c]) + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for t in &doc.targets {
        out.push('\n');
        target(&mut out, t, color);
    }
    if !doc.outliers.is_empty() {
        out.push_str("\nOutliers (far from the median of their peers):\n");
        for o in &doc.outliers {
            let _ = writeln!(out, "  {}", term(&o.message));
        }
    }
    let _ = writeln!(out, "\n{}", doc.summary.line());
    out
}

fn cell_width(c: &(String, Option<CheckVerdict>)) -> usize {
    c.0.chars().count()
}

/// A table cell: `PASS 0.27 ms`, or the target's status when it has no result.
fn cell(t: &TargetOutcome, profile: &str) -> (String, Option<CheckVerdict>) {
    let Some(doc) = &t.check else {
        let v = match t.status {
            TargetStatus::Interrupted => CheckVerdict::Interrupted,
            TargetStatus::Skipped => CheckVerdict::Skipped,
            _ => CheckVerdict::Error,
        };
        return (v.word().into(), Some(v));
    };
    match doc.profiles.iter().find(|p| p.profile == profile) {
        Some(p) => {
            let value = p
                .metrics
                .first()
                .map(|m| format!(" {}", term(&m.value_text)))
                .unwrap_or_default();
            (format!("{}{value}", p.verdict.word()), Some(p.verdict))
        }
        None => ("-".into(), None),
    }
}

/// Where a target ran and what each metric measured, or why it could not run.
fn target(out: &mut String, t: &TargetOutcome, color: bool) {
    let mut about = Vec::new();
    if t.kind != TargetType::StorageClass {
        if let Some(sc) = &t.storage_class {
            about.push(format!("storage class {sc}"));
        }
    }
    if let Some(p) = &t.provisioner {
        about.push(p.clone());
    }
    if let Some(m) = &t.volume_binding_mode {
        about.push(m.clone());
    }
    if let Some(c) = &t.claim {
        about.push(match (&t.claim_size, &t.bound_capacity) {
            (Some(s), Some(b)) if s != b => format!("claim {c} ({s}, bound {b})"),
            (Some(s), _) => format!("claim {c} ({s})"),
            (None, Some(b)) => format!("claim {c} (bound {b})"),
            (None, None) => format!("claim {c}"),
        });
    }
    if let Some(h) = &t.host_path {
        about.push(format!("directory {h}"));
    }
    if let Some(n) = &t.node {
        about.push(format!("node {n}"));
    }
    let place: Vec<String> = [
        ("zone", &t.zone),
        ("region", &t.region),
        ("", &t.instance_type),
    ]
    .iter()
    .filter_map(|(k, v)| {
        let v = v.as_ref()?;
        Some(if k.is_empty() {
            v.clone()
        } else {
            format!("{k} {v}")
        })
    })
    .collect();
    if !place.is_empty() {
        about.push(place.join(", "));
    }
    if let Some(fs) = t.check.as_ref().and_then(|d| d.context.filesystem.as_ref()) {
        let device = t
            .check
            .as_ref()
            .and_then(|d| d.context.device.as_ref())
            .and_then(|d| Some(format!(", {} ({})", d.name, d.model.as_ref()?.trim())))
            .unwrap_or_default();
        about.push(format!("{} from {}{device}", fs.fs_type, fs.source));
    }
    let _ = writeln!(out, "{}: {}", term(&t.target), term(&about.join(", ")));
    for w in &t.warnings {
        let _ = writeln!(out, "  warning: {}", term(w));
    }
    match &t.check {
        None => {
            let _ = writeln!(
                out,
                "  {}",
                term(t.reason.as_deref().unwrap_or("no result"))
            );
        }
        Some(doc) => {
            for p in &doc.profiles {
                if p.metrics.is_empty() {
                    let _ = writeln!(
                        out,
                        "  {} {}: {}",
                        word(p.verdict, color),
                        term(&p.profile),
                        term(p.reason.as_deref().unwrap_or(""))
                    );
                }
                for m in &p.metrics {
                    let _ = writeln!(
                        out,
                        "  {} {}: {} {} (needs {}; {})",
                        word(m.verdict, color),
                        term(&p.profile),
                        term(&m.label),
                        term(&m.value_text),
                        term(&m.threshold_text),
                        term(&m.source)
                    );
                }
                for w in &p.warnings {
                    let _ = writeln!(out, "    warning: {}", term(w));
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Two node targets with their place in the fleet, one with a bound claim and a warning,
    /// and an outlier: what the fleet view adds to the text.
    pub(crate) fn fleet_doc() -> KubeDocument {
        let target = |name: &str, zone: &str| {
            serde_json::json!({"target": format!("node {name}"), "kind": "node",
                "storage_class": null, "provisioner": null, "volume_binding_mode": null,
                "claim": null, "claim_size": null, "node": name, "host_path": "/var/lib/etcd",
                "zone": zone, "region": "eu-west-1", "instance_type": "m6i.large",
                "job": format!("j-{name}"), "status": "failed", "reason": "r", "check": null})
        };
        let mut sc = target("cp-2", "eu-west-1b");
        sc["kind"] = "storage_class".into();
        sc["target"] = "storage class gp2".into();
        sc["storage_class"] = "gp2".into();
        sc["claim"] = "c".into();
        sc["claim_size"] = "1Gi".into();
        sc["bound_capacity"] = "10Gi".into();
        sc["warnings"] = serde_json::json!(["a 1Gi gp2 claim measures a small disk"]);
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "iogauge": "0.1.0", "run_id": "r", "cluster": "c",
            "namespace": "n", "profiles": ["etcd"],
            "targets": [target("cp-1", "eu-west-1a"), sc],
            "outliers": [{"target": "cp-3", "profile": "etcd", "metric": "sync_p99",
                "value": 6.1, "median": 1.0, "ratio": 6.1, "peers": 5,
                "message": "cp-3: etcd p99 fdatasync latency 6.1× the median of 5 nodes"}],
            "summary": {"passed": 0, "warned": 0, "failed": 0, "errors": 2, "interrupted": 0,
                        "skipped": 0}}))
        .unwrap()
    }

    #[test]
    fn the_fleet_view_shows_zones_capacity_warnings_and_outliers() {
        let out = render_kube_text(&fleet_doc(), false);
        let mut lines = out.lines();
        assert_eq!(
            lines.next(),
            Some("TARGET             NODE  ZONE        etcd")
        );
        assert_eq!(
            lines.next(),
            Some("node cp-1          cp-1  eu-west-1a  ERROR")
        );
        assert!(out.contains(
            "node cp-1: directory /var/lib/etcd, node cp-1, zone eu-west-1a, region eu-west-1, m6i.large\n"
        ), "{out}");
        assert!(out.contains(
            "storage class gp2: claim c (1Gi, bound 10Gi), directory /var/lib/etcd, node cp-2, \
             zone eu-west-1b, region eu-west-1, m6i.large\n  warning: a 1Gi gp2 claim measures a small disk\n"
        ), "{out}");
        assert!(out.contains(
            "\nOutliers (far from the median of their peers):\n  cp-3: etcd p99 fdatasync latency 6.1× the median of 5 nodes\n"
        ), "{out}");
    }

    #[test]
    fn older_documents_read_without_the_fleet_fields() {
        // The document of the test below has none of them: it reads, and shows no zone column.
        let doc: KubeDocument = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "iogauge": "0.1.0", "run_id": "r", "cluster": "c",
            "namespace": "n", "profiles": [], "targets": [{"target": "node a", "kind": "node",
                "storage_class": null, "provisioner": null, "volume_binding_mode": null,
                "claim": null, "claim_size": null, "node": "a", "host_path": "/x",
                "job": "j", "status": "failed", "reason": "r", "check": null}],
            "summary": {"passed": 0, "warned": 0, "failed": 0, "errors": 1, "interrupted": 0,
                        "skipped": 0}}))
        .unwrap();
        assert!(doc.outliers.is_empty() && doc.targets[0].warnings.is_empty());
        assert_eq!(doc.targets[0].zone, None);
        assert!(render_kube_text(&doc, false).starts_with("TARGET  NODE\n"));
    }

    #[test]
    fn names_from_the_cluster_are_shown_not_obeyed() {
        let doc: KubeDocument = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "iogauge": "0.1.0", "run_id": "r", "cluster": "c",
            "namespace": "n", "profiles": ["etcd\u{1b}[2J"],
            "targets": [{"target": "node a\u{1b}]0;pwned\u{7}", "kind": "node",
                "storage_class": null, "provisioner": "p\u{9b}1m", "volume_binding_mode": null,
                "claim": null, "claim_size": null, "node": "a\u{1b}[31m", "host_path": "/x",
                "job": "j", "status": "failed", "reason": "no\u{1b}[2Kpe", "check": null}],
            "summary": {"passed": 0, "warned": 0, "failed": 0, "errors": 1, "interrupted": 0,
                        "skipped": 0}}))
        .unwrap();
        let out = render_kube_text(&doc, false);
        assert!(!out.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{out}");
        assert!(out.starts_with("TARGET"), "{out}");
        assert!(out.contains("etcd\\x1b[2J"), "{out}");
        assert!(out.contains("node a\\x1b]0;pwned\\x07: p\\u{9b}1m, directory /x, node a\\x1b[31m\n  no\\x1b[2Kpe\n"), "{out}");
    }
}
