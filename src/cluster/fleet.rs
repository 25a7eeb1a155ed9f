//! The fleet view: which targets measured far from their peers. Node targets are compared with
//! node targets, storage classes with storage classes (claims are one-offs, not a fleet), per
//! profile and metric, each target's value against the median of the group.
//!
//! The rule is a ratio to the median, not a MAD score: fleets are small (3 to a few dozen
//! targets) and disks of one kind often measure alike, so the MAD is frequently 0 and would flag
//! a 1 % difference as infinitely far; a ratio reads as what it means ("6.1× the median") and
//! does not depend on the spread of the others. The median (not the mean) keeps one bad disk
//! from moving the yardstick. Both directions count: a third of the peers' IOPS is as telling as
//! three times their latency.

use crate::report::document::{Outlier, TargetOutcome, TargetStatus, TargetType};
use std::collections::BTreeMap;

/// A value this many times the median, or at most its inverse, is an outlier.
pub(crate) const FAR: f64 = 2.0;

/// Fewer peers than this and nothing is flagged: with two, neither is "the odd one".
pub(crate) const MIN_PEERS: usize = 3;

/// One target's value of a metric: (target name, metric label, value).
type Peer = (String, String, f64);

/// The outliers among `targets`, grouped by profile and metric, in target order within each.
pub(crate) fn outliers(targets: &[TargetOutcome]) -> Vec<Outlier> {
    let mut out = Vec::new();
    for (kind, noun) in [
        (TargetType::Node, "nodes"),
        (TargetType::StorageClass, "storage classes"),
    ] {
        let mut groups: BTreeMap<(String, String), Vec<Peer>> = BTreeMap::new();
        for t in targets
            .iter()
            .filter(|t| t.kind == kind && t.status == TargetStatus::Completed)
        {
            let name = match kind {
                TargetType::Node => t.node.clone(),
                _ => t.storage_class.clone(),
            }
            .unwrap_or_else(|| t.target.clone());
            for p in t.check.iter().flat_map(|d| &d.profiles) {
                for m in &p.metrics {
                    if m.value.is_finite() {
                        groups
                            .entry((p.profile.clone(), m.metric.clone()))
                            .or_default()
                            .push((name.clone(), m.label.clone(), m.value));
                    }
                }
            }
        }
        for ((profile, metric), values) in groups {
            flag(&profile, &metric, &values, noun, &mut out);
        }
    }
    out
}

/// Adds the outliers of one group (one profile's metric over peers of one kind).
fn flag(profile: &str, metric: &str, values: &[Peer], noun: &str, out: &mut Vec<Outlier>) {
    if values.len() < MIN_PEERS {
        return;
    }
    let Some(med) = median(values.iter().map(|v| v.2).collect()) else {
        return;
    };
    // A zero median (nothing measured) has no ratio.
    if med <= 0.0 {
        return;
    }
    for (name, label, value) in values {
        let ratio = value / med;
        if ratio >= FAR || ratio <= 1.0 / FAR {
            out.push(Outlier {
                target: name.clone(),
                profile: profile.to_string(),
                metric: metric.to_string(),
                value: *value,
                median: med,
                ratio,
                peers: values.len(),
                message: format!(
                    "{name}: {profile} {label} {}× the median of {} {noun}",
                    ratio_text(ratio),
                    values.len()
                ),
            });
        }
    }
}

/// `6.1`, `0.25`: two significant digits at most, enough to read a ratio.
fn ratio_text(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else if r >= 1.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

/// The median (the mean of the middle two for an even count); None for no values.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::report::document::KubeDocument;
    use serde_json::json;

    /// Node (or class) targets with one etcd sync_p99 value each, as documents carry them.
    fn targets(kind: &str, values: &[f64]) -> Vec<TargetOutcome> {
        let targets: Vec<serde_json::Value> = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let name = format!("cp-{}", i + 1);
                json!({"target": format!("{kind} {name}"), "kind": kind.replace(' ', "_"),
                    "storage_class": (kind == "storage class").then(|| name.clone()),
                    "provisioner": null, "volume_binding_mode": null, "claim": null,
                    "claim_size": null, "node": (kind == "node").then(|| name.clone()),
                    "host_path": null, "job": format!("j{i}"), "status": "completed",
                    "reason": null, "check": check(*v)})
            })
            .collect();
        let doc: KubeDocument = serde_json::from_value(json!({
            "schema_version": 1, "iogauge": "0", "run_id": "r", "cluster": "c", "namespace": "n",
            "profiles": ["etcd"], "targets": targets,
            "summary": {"passed": 0, "warned": 0, "failed": 0, "errors": 0, "interrupted": 0,
                "skipped": 0}}))
        .unwrap();
        doc.targets
    }

    fn messages(t: &[TargetOutcome]) -> Vec<String> {
        outliers(t).into_iter().map(|o| o.message).collect()
    }

    #[test]
    fn two_peers_are_never_outliers() {
        assert!(outliers(&targets("node", &[1.0, 100.0])).is_empty());
        assert!(outliers(&targets("node", &[])).is_empty());
    }

    #[test]
    fn three_peers_flag_the_far_one_with_its_ratio() {
        let o = outliers(&targets("node", &[1.0, 1.2, 6.1]));
        assert_eq!(o.len(), 1, "{o:?}");
        assert_eq!(o[0].target, "cp-3");
        assert_eq!((o[0].median, o[0].peers), (1.2, 3));
        assert_eq!(
            o[0].message,
            format!("cp-3: etcd {} 5.1× the median of 3 nodes", LABEL)
        );
        // Low is as far as high; classes are compared among classes.
        assert_eq!(
            messages(&targets("storage class", &[4.0, 4.0, 1.0])),
            vec![format!(
                "cp-3: etcd {} 0.25× the median of 3 storage classes",
                LABEL
            )]
        );
    }

    #[test]
    fn the_boundary_is_twice_or_half_the_median() {
        // Exactly 2× and exactly ½ are flagged; just inside is not.
        assert_eq!(messages(&targets("node", &[1.0, 1.0, 2.0])).len(), 1);
        assert_eq!(messages(&targets("node", &[2.0, 2.0, 1.0])).len(), 1);
        assert!(messages(&targets("node", &[1.0, 1.0, 1.99])).is_empty());
        assert!(messages(&targets("node", &[2.0, 2.0, 1.01])).is_empty());
    }

    #[test]
    fn ties_and_zero_medians_flag_nothing() {
        assert!(outliers(&targets("node", &[3.0, 3.0, 3.0, 3.0])).is_empty());
        assert!(outliers(&targets("node", &[0.0, 0.0, 5.0])).is_empty());
        // An even count: the median is the mean of the middle two (1 and 1), 5 is 5×.
        assert_eq!(
            messages(&targets("node", &[1.0, 1.0, 1.0, 5.0])),
            vec![format!("cp-4: etcd {} 5.0× the median of 4 nodes", LABEL)]
        );
    }

    #[test]
    fn failed_targets_and_other_kinds_are_not_peers() {
        let mut t = targets("node", &[1.0, 1.0, 9.0]);
        t[0].status = TargetStatus::Failed;
        assert!(outliers(&t).is_empty());
        let mut t = targets("node", &[1.0, 1.0, 9.0]);
        t[1].kind = TargetType::Claim;
        assert!(outliers(&t).is_empty());
    }

    const LABEL: &str = "p99 fdatasync latency";

    /// A pod's check document with one etcd metric.
    fn check(v: f64) -> serde_json::Value {
        json!({"schema_version": 1, "iogauge": "0", "dir": "/data",
            "context": {"iogauge": "0", "hostname": "h", "kernel": "k"},
            "profiles": [{"profile": "etcd", "title": "etcd", "verdict": "pass", "info": [],
                "shortened": false, "warnings": [], "advice": [],
                "metrics": [{"metric": "sync_p99", "label": LABEL, "verdict": "pass",
                    "value": v, "unit": "ns", "threshold": 10.0, "better": "lower",
                    "source": "s", "references": [], "value_text": "x",
                    "threshold_text": "y"}]}],
            "summary": {"passed": 1, "warned": 0, "failed": 0, "errors": 0, "interrupted": 0,
                "skipped": 0}})
    }
}
