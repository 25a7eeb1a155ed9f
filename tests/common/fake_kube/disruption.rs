//! Disruptions as real clusters make them, for [`Scenario::Evict`], [`Scenario::Preempt`] and
//! [`Scenario::Drain`]:
//! the kubelet's node-pressure eviction (pod Failed, reason `Evicted`, the eviction manager's
//! message, a `DisruptionTarget` condition with reason `TerminationByKubelet`, the container
//! terminated with 137 `ContainerStatusUnknown`, a Warning `Evicted` event; the pod stays until
//! the pod GC), and the scheduler's preemption (`DisruptionTarget` `PreemptionByScheduler`, a
//! `Preempted` event, then a graceful delete: the pod is Failed and terminating for
//! [`GRACE`], then gone), and a drain (`DisruptionTarget` `EvictionByEvictionAPI`, no event
//! from the API server, the same graceful delete). And the job controller's side: a Job's `podFailurePolicy` (`Ignore`
//! does not count the pod and a replacement is made; `FailJob` fails the Job at once with
//! reason `PodFailurePolicy`), with the messages of pkg/controller/job/pod_failure_policy.go.

use super::{
    conditions, container_status, delete_object, json, name_of, now_rfc3339, str_at, uid_of,
    Instant, Propagation, Scenario, Stage, State, Value,
};
use std::collections::HashMap;
use std::time::Duration;

/// How long a doomed pod runs before it is disrupted.
const AFTER: Duration = Duration::from_millis(1500);
/// How long a preempted pod stays terminating (30 s on a real cluster).
const GRACE: Duration = Duration::from_millis(2500);

/// The eviction manager's message (pkg/kubelet/eviction/helpers.go: nodeLowMessageFmt,
/// thresholdMetMessageFmt, containerMessageFmt).
pub const EVICTION_MESSAGE: &str = "The node was low on resource: ephemeral-storage. Threshold \
    quantity: 2Gi, available: 1523448Ki. Container iogauge was using 84Ki, request is 0, has \
    larger consumption of ephemeral-storage. ";

/// Pods held for a disruption, and how many each Job has had.
#[derive(Default)]
pub(super) struct Disruptions {
    /// (pod uid, since, scenario, terminating): terminating pods are removed after GRACE.
    held: Vec<(String, Instant, Scenario, bool)>,
    per_job: HashMap<String, usize>,
}

fn owner(pod: &Value) -> String {
    str_at(pod, "/metadata/ownerReferences/0/uid").to_string()
}

/// Whether the pod that just started is one to disrupt (its Job has had fewer than the
/// scenario's count): it then runs nothing until [`tick`] disrupts it.
pub(super) fn hold(st: &mut State, pod: &Value, scenario: &Scenario) -> bool {
    let n = match scenario {
        Scenario::Evict(n) | Scenario::Preempt(n) | Scenario::Drain(n) => *n,
        _ => return false,
    };
    let count = st.disruptions.per_job.entry(owner(pod)).or_default();
    if *count >= n {
        return false;
    }
    *count += 1;
    st.disruptions.held.push((
        uid_of(pod).to_string(),
        Instant::now(),
        scenario.clone(),
        false,
    ));
    true
}

/// Disrupts the held pods whose time has come; removes preempted pods after their grace.
pub(super) fn tick(st: &mut State) {
    let held = std::mem::take(&mut st.disruptions.held);
    let mut keep = Vec::new();
    for (uid, since, how, terminating) in held {
        let Some(idx) = st.find_uid(&uid) else {
            continue;
        };
        if terminating {
            if since.elapsed() >= GRACE {
                delete_object(st, idx, Propagation::Background);
            } else {
                keep.push((uid, since, how, true));
            }
            continue;
        }
        if since.elapsed() < AFTER {
            keep.push((uid, since, how, false));
            continue;
        }
        match how {
            Scenario::Preempt(_) | Scenario::Drain(_) => {
                preempt(st, idx, matches!(how, Scenario::Preempt(_)));
                keep.push((uid, Instant::now(), how, true));
            }
            _ => evict(st, idx),
        }
    }
    st.disruptions.held.extend(keep);
}

fn disruption_condition(now: &str, reason: &str, message: &str) -> Value {
    json!({"type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
        "lastTransitionTime": now, "reason": reason, "message": message})
}

fn evict(st: &mut State, idx: usize) {
    let pod = st.objects[idx].clone();
    let name = name_of(&pod).to_string();
    let now = now_rfc3339();
    let cs = container_status(
        &pod,
        json!({"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown",
            "message": "The container could not be located when the pod was terminated",
            "startedAt": null, "finishedAt": null}}),
        false,
    );
    let mut conds = conditions(&now, false, Some("PodFailed"));
    if let Some(c) = conds.as_array_mut() {
        c.push(disruption_condition(
            &now,
            "TerminationByKubelet",
            EVICTION_MESSAGE,
        ));
    }
    st.update(idx, |o| {
        o["status"]["phase"] = json!("Failed");
        o["status"]["reason"] = json!("Evicted");
        o["status"]["message"] = json!(EVICTION_MESSAGE);
        o["status"]["conditions"] = conds;
        o["status"]["containerStatuses"] = json!([cs]);
    });
    st.event(idx, "Warning", "Evicted", EVICTION_MESSAGE, "kubelet");
    st.event(
        idx,
        "Normal",
        "Killing",
        "Stopping container iogauge",
        "kubelet",
    );
    st.history.push(format!("evicted Pod/{name}"));
    if let Some(rt) = st.pods.get_mut(uid_of(&pod)) {
        rt.stage = Stage::Done;
    }
}

/// The scheduler's preemption (`by_scheduler`) or an Eviction API call: a condition, then a
/// graceful delete.
fn preempt(st: &mut State, idx: usize, by_scheduler: bool) {
    let pod = st.objects[idx].clone();
    let name = name_of(&pod).to_string();
    let node = str_at(&pod, "/spec/nodeName").to_string();
    let now = now_rfc3339();
    let preemptor = st.uid();
    let cs = container_status(
        &pod,
        json!({"terminated": {"exitCode": 143, "reason": "Error",
            "startedAt": null, "finishedAt": now}}),
        false,
    );
    let mut conds = conditions(&now, false, Some("PodFailed"));
    if let Some(c) = conds.as_array_mut() {
        c.push(if by_scheduler {
            disruption_condition(
                &now,
                "PreemptionByScheduler",
                "default-scheduler: preempting to accommodate a higher priority pod",
            )
        } else {
            disruption_condition(&now, "EvictionByEvictionAPI", "Eviction API: evicting")
        });
    }
    st.update(idx, |o| {
        o["metadata"]["deletionTimestamp"] = json!(now);
        o["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        o["status"]["phase"] = json!("Failed");
        o["status"]["conditions"] = conds;
        o["status"]["containerStatuses"] = json!([cs]);
    });
    if by_scheduler {
        st.event(
            idx,
            "Normal",
            "Preempted",
            &format!("Preempted by pod {preemptor} on node {node}"),
            "default-scheduler",
        );
    }
    st.event(
        idx,
        "Normal",
        "Killing",
        "Stopping container iogauge",
        "kubelet",
    );
    let what = if by_scheduler { "preempted" } else { "drained" };
    st.history.push(format!("{what} Pod/{name}"));
    if let Some(rt) = st.pods.get_mut(uid_of(&pod)) {
        rt.stage = Stage::Done;
    }
}

/// What a Job's podFailurePolicy says about one of its Failed pods.
pub(super) enum Judged {
    /// Not counted toward the backoff limit; a replacement is made.
    Ignore,
    /// The Job fails at once, with this message.
    FailJob(String),
    /// No rule matched (or no policy): counted as usual.
    Count,
}

/// The job controller's reading of `job`'s podFailurePolicy for a Failed `pod`: the first
/// matching rule wins.
pub(super) fn judge(job: &Value, pod: &Value) -> Judged {
    let Some(rules) = job["spec"]["podFailurePolicy"]["rules"].as_array() else {
        return Judged::Count;
    };
    let ns = str_at(pod, "/metadata/namespace");
    let name = name_of(pod);
    for (i, rule) in rules.iter().enumerate() {
        let action = rule["action"].as_str().unwrap_or("");
        let matched = if let Some(pats) = rule["onPodConditions"].as_array() {
            pats.iter().find_map(|p| {
                let t = p["type"].as_str().unwrap_or("");
                let want = p["status"].as_str().unwrap_or("True");
                pod["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == t && c["status"] == want)
                    .then(|| {
                        format!(
                            "Pod {ns}/{name} has condition {t} matching {action} rule at index {i}"
                        )
                    })
            })
        } else if let Some(req) = rule["onExitCodes"].as_object() {
            let values: Vec<i64> = req["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_i64)
                .collect();
            let within = req["operator"] == "In";
            pod["status"]["containerStatuses"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| req.get("containerName").is_none_or(|n| c["name"] == *n))
                .find_map(|c| {
                    let code = c["state"]["terminated"]["exitCode"].as_i64()?;
                    (code != 0 && values.contains(&code) == within).then(|| {
                        format!(
                            "Container {} for pod {ns}/{name} failed with exit code {code} matching {action} rule at index {i}",
                            str_at(c, "/name")
                        )
                    })
                })
        } else {
            None
        };
        if let Some(msg) = matched {
            return match action {
                "Ignore" => Judged::Ignore,
                "FailJob" => Judged::FailJob(msg),
                _ => Judged::Count,
            };
        }
    }
    Judged::Count
}
