//! `iogauge kube check`'s page: the targets by profile table, then per target where it ran and
//! each profile's section as on a check page.

use super::check::{check_date, context_facts, overall, profile_section, LEGEND};
use super::fio::{fio_date, fio_sections};
use super::page::{badge, esc, facts, page, table, td, td_html, verdict_box};
use crate::report::document::{
    CheckVerdict, KubeDocument, TargetOutcome, TargetStatus, TargetType,
};
use crate::report::kube_fio_text::table as side_by_side;
use std::fmt::Write;

/// A table cell: the profile's verdict and first value, or the target's status.
fn cell(t: &TargetOutcome, profile: &str) -> String {
    let Some(doc) = &t.check else {
        let v = match t.status {
            TargetStatus::Interrupted => CheckVerdict::Interrupted,
            TargetStatus::Skipped => CheckVerdict::Skipped,
            _ => CheckVerdict::Error,
        };
        return td_html(&badge(v));
    };
    match doc.profiles.iter().find(|p| p.profile == profile) {
        Some(p) => {
            let value = p
                .metrics
                .first()
                .map(|m| format!(" {}", esc(&m.value_text)))
                .unwrap_or_default();
            td_html(&format!("{}{value}", badge(p.verdict)))
        }
        None => td("-"),
    }
}

fn status(s: TargetStatus) -> &'static str {
    match s {
        TargetStatus::Completed => "completed",
        TargetStatus::Failed => "failed",
        TargetStatus::TimedOut => "timed out",
        TargetStatus::Interrupted => "interrupted",
        TargetStatus::Skipped => "skipped",
    }
}

fn target(t: &TargetOutcome) -> String {
    let mut s = format!(
        "<h2 id=\"target-{}\">{}</h2>\n",
        esc(&t.job),
        esc(&t.target)
    );
    let opt = |o: &Option<String>| o.clone().unwrap_or_default();
    let mut f = vec![("Status", status(t.status).to_string())];
    if t.kind != TargetType::StorageClass {
        f.push(("Storage class", opt(&t.storage_class)));
    }
    f.extend([
        ("Provisioner", opt(&t.provisioner)),
        ("Volume binding", opt(&t.volume_binding_mode)),
        ("Claim", opt(&t.claim)),
        ("Claim size", opt(&t.claim_size)),
        ("Bound capacity", opt(&t.bound_capacity)),
        ("Node", opt(&t.node)),
        ("Zone", opt(&t.zone)),
        ("Region", opt(&t.region)),
        ("Instance type", opt(&t.instance_type)),
        ("Node directory", opt(&t.host_path)),
        ("Job", t.job.clone()),
    ]);
    if let Some(doc) = &t.check {
        f.extend(context_facts(&doc.context, &doc.dir, doc.device));
    }
    s.push_str(&facts(&f));
    for w in &t.warnings {
        let _ = writeln!(s, "<p>{} {}</p>", badge(CheckVerdict::Warn), esc(w));
    }
    if let Some(fio) = &t.fio {
        // What `iogauge fio --report` shows for a host, the jobs one level down.
        s.push_str(&fio_sections(fio, 3));
        return s;
    }
    match &t.check {
        None => {
            let _ = writeln!(
                s,
                "<p>{} {}</p>",
                badge(CheckVerdict::Error),
                esc(t.reason.as_deref().unwrap_or("no result"))
            );
        }
        Some(doc) => {
            for p in &doc.profiles {
                s.push_str(&profile_section(p, 3));
            }
        }
    }
    s
}

/// A `kube fio` page's overview: each target's status, then the jobs side by side, as
/// `--format text` prints them.
fn fio_overview(doc: &KubeDocument) -> String {
    let rows: Vec<Vec<String>> = doc
        .targets
        .iter()
        .map(|t| {
            vec![
                td_html(&format!(
                    "<a href=\"#target-{}\">{}</a>",
                    esc(&t.job),
                    esc(&t.target)
                )),
                td(t.node.as_deref().unwrap_or("-")),
                td(status(t.status)),
                td(t.reason.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    let mut s = String::from("<h2>Targets</h2>\n");
    s.push_str(&table(&["target", "node", "status", "reason"], &rows));
    let _ = writeln!(
        s,
        "<h2>Jobs side by side</h2>\n<pre>{}</pre>",
        esc(&side_by_side(&doc.targets))
    );
    s
}

/// The page of a Kubernetes document.
pub(crate) fn render_kube_html(doc: &KubeDocument) -> String {
    let v = overall(&doc.summary);
    // A `kube fio` document runs a job, not profiles.
    let fio = doc.profiles.is_empty();
    let command = if fio { "fio" } else { "check" };
    let mut body = format!("<h1>iogauge kube {command}</h1>\n");
    body.push_str(&verdict_box(v, &esc(&doc.summary.line())));
    let date = doc
        .targets
        .iter()
        .find_map(|t| match (&t.check, &t.fio) {
            (Some(c), _) => check_date(c),
            (None, Some(f)) => fio_date(f),
            (None, None) => None,
        })
        .unwrap_or_default();
    let mut about = vec![
        ("Cluster", doc.cluster.clone()),
        ("Namespace", doc.namespace.clone()),
        ("Run id", doc.run_id.clone()),
    ];
    if !fio {
        about.push(("Profiles", doc.profiles.join(", ")));
    }
    about.extend([("iogauge", doc.iogauge.clone()), ("Date", date)]);
    body.push_str(&facts(&about));
    if fio {
        body.push_str(&fio_overview(doc));
        for t in &doc.targets {
            body.push_str(&target(t));
        }
        return page(&format!("iogauge kube fio — {}", doc.cluster), &body);
    }
    body.push_str(LEGEND);
    body.push_str("<h2>Targets by profile</h2>\n");
    let zones = doc.targets.iter().any(|t| t.zone.is_some());
    let mut head = vec!["target", "node"];
    if zones {
        head.push("zone");
    }
    head.extend(doc.profiles.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = doc
        .targets
        .iter()
        .map(|t| {
            let mut r = vec![
                td_html(&format!(
                    "<a href=\"#target-{}\">{}</a>",
                    esc(&t.job),
                    esc(&t.target)
                )),
                td(t.node.as_deref().unwrap_or("-")),
            ];
            if zones {
                r.push(td(t.zone.as_deref().unwrap_or("-")));
            }
            r.extend(doc.profiles.iter().map(|p| cell(t, p)));
            r
        })
        .collect();
    body.push_str(&table(&head, &rows));
    if !doc.outliers.is_empty() {
        body.push_str("<h2>Outliers</h2>\n<p>Targets far from the median of their peers (at least twice or at most half of it).</p>\n<ul>\n");
        for o in &doc.outliers {
            let _ = writeln!(body, "<li>{}</li>", esc(&o.message));
        }
        body.push_str("</ul>\n");
    }
    for t in &doc.targets {
        body.push_str(&target(t));
    }
    page(
        &format!("iogauge kube check {} — {}", v.word(), doc.cluster),
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kube fio page: each target's fio jobs under its heading, one level down, the jobs
    /// side by side, and why a target did not run; no profile table.
    #[test]
    fn a_kube_fio_page_shows_each_target_s_fio_document() {
        let doc: KubeDocument = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "iogauge": "x", "run_id": "r", "cluster": "c", "namespace": "n",
            "profiles": [], "summary": {"passed": 0, "warned": 0, "failed": 0, "errors": 1,
                "interrupted": 0, "skipped": 0},
            "targets": [
                {"target": "storage class fast", "kind": "storage_class", "job": "j1",
                 "node": "w1", "status": "completed", "reason": null, "check": null,
                 "fio": {"fio version": "iogauge-0.1.0", "jobs": [{"jobname": "seq",
                    "write": {"total_ios": 4321, "iops": 894.2, "bw": 3580}}]}},
                {"target": "storage class slow", "kind": "storage_class", "job": "j2",
                 "status": "failed", "reason": "the pod could not <start>", "check": null}
            ]
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let html = render_kube_html(&doc);
        for want in [
            "<h1>iogauge kube fio</h1>",
            "<h2>Jobs side by side</h2>",
            "<h2 id=\"target-j1\">storage class fast</h2>",
            "<h3>Job seq</h3>",
            "<td class=\"num\">4321</td>",
            "<h4>Run it again</h4>",
            "the pod could not &lt;start&gt;",
        ] {
            assert!(html.contains(want), "{want}\n{html}");
        }
        assert!(!html.contains("Targets by profile"), "{html}");
    }

    #[test]
    fn the_page_shows_zones_capacity_warnings_and_outliers() {
        let html = render_kube_html(&crate::report::kube_text::tests::fleet_doc());
        for want in [
            "<th>zone</th>",
            "<td>eu-west-1a</td>",
            "<dt>Bound capacity</dt><dd>10Gi</dd>",
            "<dt>Instance type</dt><dd>m6i.large</dd>",
            "a 1Gi gp2 claim measures a small disk</p>",
            "<h2>Outliers</h2>",
            "<li>cp-3: etcd p99 fdatasync latency 6.1× the median of 5 nodes</li>",
        ] {
            assert!(html.contains(want), "{want}");
        }
    }
}
