//! Why a target's pod was taken away (evicted, preempted, drained), from what the cluster wrote
//! on it: the pod's `DisruptionTarget` condition (Kubernetes 1.26+), its `status.reason` and
//! `message` (`Evicted`, "The node was low on resource: …"), or, for a pod already gone, the
//! scheduler's or kubelet's event about it. The Job's podFailurePolicy ignores such a pod and
//! starts another; the controller counts them against a small retry budget. Pure functions.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};

/// How many disruptions a target survives: the third one fails it.
pub(crate) const RETRIES: usize = 2;

/// The longest cluster message kept in a line or a `reason`.
const CAP: usize = 500;

/// `s`, at most [`CAP`] characters (cut at a character boundary, marked with `…`).
pub(crate) fn cap(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(CAP) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn node_of(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_else(|| "(unknown)".into())
}

/// What happened to `pod`, when it was disrupted: "evicted from node worker-1 (The node was
/// low on resource: ephemeral-storage. …)". None: it was not.
pub(crate) fn disruption(pod: &Pod) -> Option<String> {
    let status = pod.status.as_ref()?;
    let node = node_of(pod);
    let said = |m: Option<&String>| {
        m.map(|m| cap(m))
            .filter(|m| !m.is_empty())
            .map(|m| format!(" ({m})"))
            .unwrap_or_default()
    };
    let evicted = status.reason.as_deref() == Some("Evicted");
    let condition = status.conditions.as_ref().and_then(|c| {
        c.iter()
            .find(|c| c.type_ == "DisruptionTarget" && c.status == "True")
    });
    let Some(c) = condition else {
        // Clusters before 1.26 (or with PodDisruptionConditions off) only set the reason.
        return evicted
            .then(|| format!("evicted from node {node}{}", said(status.message.as_ref())));
    };
    Some(match c.reason.as_deref().unwrap_or("") {
        "PreemptionByScheduler" => {
            format!("preempted on node {node} by a higher-priority pod")
        }
        "TerminationByKubelet" if evicted => {
            format!("evicted from node {node}{}", said(status.message.as_ref()))
        }
        "TerminationByKubelet" => format!(
            "stopped by the kubelet on node {node}{}",
            said(status.message.as_ref().or(c.message.as_ref()))
        ),
        "EvictionByEvictionAPI" => {
            format!("evicted from node {node} through the Eviction API (a drain, or a descheduler)")
        }
        "DeletionByTaintManager" => format!(
            "deleted from node {node} for a NoExecute taint{}",
            said(c.message.as_ref())
        ),
        "DeletionByPodGC" => format!(
            "deleted by the pod garbage collector{}",
            said(c.message.as_ref())
        ),
        other => format!(
            "disrupted on node {node} ({other}{})",
            c.message
                .as_deref()
                .map(|m| format!(": {}", cap(m)))
                .unwrap_or_default()
        ),
    })
}

/// Why a pod that was seen on `node` vanished, from the events about it (by its uid): the
/// scheduler's `Preempted`, the kubelet's `Evicted`. None: no event says.
pub(crate) fn vanished(node: &str, events: &[Event]) -> Option<String> {
    let last = |reason: &str| events.iter().rfind(|e| e.reason.as_deref() == Some(reason));
    if last("Preempted").is_some() {
        return Some(format!("preempted on node {node} by a higher-priority pod"));
    }
    last("Evicted").map(|e| {
        let m = cap(e.message.as_deref().unwrap_or(""));
        if m.is_empty() {
            format!("evicted from node {node}")
        } else {
            format!("evicted from node {node} ({m})")
        }
    })
}

/// Whether `pod` carries a `DisruptionTarget` condition, which the Job's `Ignore` rule needs to
/// retry it.
pub(crate) fn has_condition(pod: &Pod) -> bool {
    let conds = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conds.is_some_and(|c| {
        c.iter()
            .any(|c| c.type_ == "DisruptionTarget" && c.status == "True")
    })
}

/// The last disruption counted for a target: its words, and whether its pod was seen with a
/// `DisruptionTarget` condition (None: the pod went before its last state was seen).
pub(crate) type Counted = (String, Option<bool>);

/// The target's reason when `job` failed through its podFailurePolicy after the disruption
/// `last`: a pod without a `DisruptionTarget` condition does not match the `Ignore` rule, so
/// `FailJob` ends the Job instead of a retry. None: the Job did not fail that way.
pub(crate) fn unretried(job: &Job, last: Option<&Counted>) -> Option<String> {
    let (what, condition) = last?;
    let conds = job.status.as_ref()?.conditions.as_ref()?;
    conds.iter().find(|c| {
        c.type_ == "Failed" && c.status == "True" && c.reason.as_deref() == Some("PodFailurePolicy")
    })?;
    match condition {
        Some(true) => None,
        Some(false) => Some(format!(
            "{what}; the cluster has no DisruptionTarget condition (Kubernetes before 1.26), so \
             the Job cannot retry it"
        )),
        None => Some(format!(
            "{what}; its pod had no DisruptionTarget condition (deleted directly, or Kubernetes \
             before 1.26), so the Job cannot retry it"
        )),
    }
}

/// The line for the `n`th disruption of a target (1-based): retried while the budget lasts.
/// Ok: the Job goes on with another pod; Err: the target fails with this reason.
pub(crate) fn verdict(what: &str, n: usize) -> Result<String, String> {
    if n <= RETRIES {
        Ok(format!(
            "{what}; the Job starts another pod ({n} of {RETRIES} retries)"
        ))
    } else {
        Err(format!(
            "{what}; disrupted {n} times, more than the {RETRIES} retries allowed (run it again \
             when the node is calmer, or on another node)"
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn pod(status: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"},
            "spec": {"nodeName": "worker-1", "containers": []}, "status": status}))
        .unwrap()
    }

    #[test]
    fn a_kubelet_eviction_names_the_node_and_the_resource() {
        let msg = "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. ";
        let p = pod(
            json!({"phase": "Failed", "reason": "Evicted", "message": msg,
            "conditions": [{"type": "DisruptionTarget", "status": "True",
                "reason": "TerminationByKubelet", "message": msg}]}),
        );
        assert_eq!(
            disruption(&p).unwrap(),
            "evicted from node worker-1 (The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi.)"
        );
        // Before 1.26: no condition, the reason alone.
        let p = pod(json!({"phase": "Failed", "reason": "Evicted", "message": msg}));
        assert!(disruption(&p)
            .unwrap()
            .starts_with("evicted from node worker-1 (The node"));
    }

    #[test]
    fn preemption_drain_and_ordinary_pods() {
        let p = pod(
            json!({"phase": "Running", "conditions": [{"type": "DisruptionTarget",
            "status": "True", "reason": "PreemptionByScheduler",
            "message": "default-scheduler: preempting to accommodate a higher priority pod"}]}),
        );
        assert_eq!(
            disruption(&p).unwrap(),
            "preempted on node worker-1 by a higher-priority pod"
        );
        let p = pod(
            json!({"phase": "Running", "conditions": [{"type": "DisruptionTarget",
            "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}]}),
        );
        assert_eq!(
            disruption(&p).unwrap(),
            "evicted from node worker-1 through the Eviction API (a drain, or a descheduler)"
        );
        let p =
            pod(json!({"phase": "Failed", "conditions": [{"type": "Ready", "status": "False"}]}));
        assert_eq!(disruption(&p), None);
    }

    #[test]
    fn a_pod_gone_before_it_was_seen_disrupted_is_explained_by_its_events() {
        let ev = |reason: &str, msg: &str| -> Event {
            serde_json::from_value(json!({"metadata": {"name": "e"}, "involvedObject": {},
                "reason": reason, "message": msg}))
            .unwrap()
        };
        let preempted = [
            ev("Started", "Started container iogauge"),
            ev("Preempted", "Preempted by pod 5d1c… on node worker-1"),
        ];
        assert_eq!(
            vanished("worker-1", &preempted).unwrap(),
            "preempted on node worker-1 by a higher-priority pod"
        );
        let evicted = [ev("Evicted", "The node was low on resource: memory. ")];
        assert_eq!(
            vanished("worker-1", &evicted).unwrap(),
            "evicted from node worker-1 (The node was low on resource: memory.)"
        );
        assert_eq!(
            vanished("worker-1", &[ev("Killing", "Stopping container")]),
            None
        );
    }

    #[test]
    fn the_budget_allows_two_retries_and_cluster_words_are_capped() {
        assert_eq!(
            verdict("evicted from node a", 2).unwrap(),
            "evicted from node a; the Job starts another pod (2 of 2 retries)"
        );
        assert!(verdict("evicted from node a", 3)
            .unwrap_err()
            .contains("disrupted 3 times, more than the 2 retries allowed"));
        // Without a DisruptionTarget condition the Job's FailJob rule ends the Job.
        let failed: Job = serde_json::from_value(json!({"metadata": {"name": "j"},
            "status": {"conditions": [{"type": "Failed", "status": "True",
                "reason": "PodFailurePolicy", "message": "Container iogauge for pod ns/p failed \
                with exit code 137 matching FailJob rule at index 1"}]}}))
        .unwrap();
        let legacy = pod(json!({"phase": "Failed", "reason": "Evicted", "message": "m"}));
        assert!(!has_condition(&legacy));
        let counted = (disruption(&legacy).unwrap(), Some(false));
        assert_eq!(
            unretried(&failed, Some(&counted)).unwrap(),
            "evicted from node worker-1 (m); the cluster has no DisruptionTarget condition \
             (Kubernetes before 1.26), so the Job cannot retry it"
        );
        assert_eq!(unretried(&failed, Some(&("x".into(), Some(true)))), None);
        assert_eq!(unretried(&failed, None), None);
        let long = "x".repeat(2000);
        assert_eq!(cap(&long).chars().count(), CAP + 1);
    }
}
