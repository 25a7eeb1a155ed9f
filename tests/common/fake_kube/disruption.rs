//! Disruptions as real clusters make them, for [`Scenario::Evict`], [`Scenario::EvictLegacy`],
//! [`Scenario::Preempt`] and [`Scenario::Drain`]:
//! the kubelet's node-pressure eviction (pod Failed, reason `Evicted`, the eviction manager's
//! message, a `DisruptionTarget` condition with reason `TerminationByKubelet` from 1.26 on, the
//! container terminated with 137 `ContainerStatusUnknown`, a Warning `Evicted` event; the pod
//! stays until the pod GC), and the scheduler's preemption (`DisruptionTarget`
//! `PreemptionByScheduler`, a `Preempted` event, then a graceful delete: the running container
//! gets SIGTERM and ends by itself, its exit code making the pod Succeeded or Failed, SIGKILL
//! after [`GRACE`]; the pod is gone once its container has ended), and a drain
//! (`DisruptionTarget` `EvictionByEvictionAPI`, no event from the API server, the same graceful
//! delete). And the job controller's side: a Job's `podFailurePolicy` (`Ignore`
//! does not count the pod and a replacement is made; `FailJob` fails the Job at once with
//! reason `PodFailurePolicy`), with the messages of pkg/controller/job/pod_failure_policy.go.

use super::{
    conditions, container_status, delete_object, json, name_of, now_rfc3339, str_at, uid_of,
    Instant, Propagation, Scenario, Stage, State, Value,
};
use std::collections::HashMap;
use std::time::Duration;

/// How long a doomed pod waits before it is evicted (or, running, preempted: a controller
/// polling every second or so has seen it running by then).
const AFTER: Duration = Duration::from_millis(1500);
/// How long a preempted pod may take to stop before SIGKILL (30 s on a real cluster).
const GRACE: Duration = Duration::from_millis(5000);
/// How long a pod whose container ended stays, terminating, before the kubelet's final delete
/// (the job controller sees its phase first, as its finalizer makes sure on a real cluster, and
/// so may a client polling every second).
const LINGER: Duration = Duration::from_millis(1500);

/// Where a disrupted pod is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// Waiting for its disruption.
    Doomed,
    /// Deleted gracefully: its container was sent SIGTERM.
    Terminating,
    /// Its container has ended; the pod goes after [`LINGER`].
    Ended,
}

/// The eviction manager's message (pkg/kubelet/eviction/helpers.go: nodeLowMessageFmt,
/// thresholdMetMessageFmt, containerMessageFmt).
pub const EVICTION_MESSAGE: &str = "The node was low on resource: ephemeral-storage. Threshold \
    quantity: 2Gi, available: 1523448Ki. Container iogauge was using 84Ki, request is 0, has \
    larger consumption of ephemeral-storage. ";

/// Pods held for a disruption, and how many each Job has had.
#[derive(Default)]
pub(super) struct Disruptions {
    /// (pod uid, since, scenario, where): terminating pods are removed once their container
    /// has ended.
    held: Vec<(String, Instant, Scenario, Held)>,
    per_job: HashMap<String, usize>,
}

fn owner(pod: &Value) -> String {
    str_at(pod, "/metadata/ownerReferences/0/uid").to_string()
}

/// Whether the pod that just started is one to evict (its Job has had fewer than the
/// scenario's count): it then runs nothing until [`tick`] evicts it. A pod to preempt or drain
/// is noted and runs (false): its container is stopped by a signal.
pub(super) fn hold(st: &mut State, pod: &Value, scenario: &Scenario) -> bool {
    let (n, runs) = match scenario {
        Scenario::Evict(n) | Scenario::EvictLegacy(n) => (*n, false),
        Scenario::Preempt(n) | Scenario::Drain(n) => (*n, true),
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
        Held::Doomed,
    ));
    !runs
}

/// Sends SIGTERM to a container process, as the kubelet does at a graceful delete.
pub(super) fn terminate(child: &std::process::Child) {
    let Ok(pid) = i32::try_from(child.id()) else {
        return;
    };
    // SAFETY: kill(2) on a child this thread owns and has not reaped.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
}

/// Keeps `pod`'s DisruptionTarget condition in the conditions of its terminal state.
pub(super) fn keep_condition(pod: &Value, conds: &mut Value) {
    let kept = pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "DisruptionTarget")
        .cloned();
    if let Some(c) = conds.as_array_mut() {
        c.extend(kept);
    }
}

/// Disrupts the held pods whose time has come; deletes gracefully deleted pods once their
/// container has ended (SIGKILL after GRACE).
pub(super) fn tick(st: &mut State) {
    let held = std::mem::take(&mut st.disruptions.held);
    let mut keep = Vec::new();
    for (uid, since, how, at) in held {
        let Some(idx) = st.find_uid(&uid) else {
            continue;
        };
        let ended = st.pods.get(&uid).is_none_or(|rt| rt.stage == Stage::Done);
        // A running pod is preempted once its check has said something (it is under way, with
        // its signal handlers in place, as a pod minutes into its run would be) and AFTER.
        let started = st
            .pods
            .get(&uid)
            .is_some_and(|rt| !super::lock(&rt.log).is_empty());
        let runs = matches!(how, Scenario::Preempt(_) | Scenario::Drain(_));
        match at {
            Held::Ended if since.elapsed() >= LINGER => {
                delete_object(st, idx, Propagation::Background);
            }
            Held::Terminating if ended => keep.push((uid, Instant::now(), how, Held::Ended)),
            Held::Terminating => {
                if since.elapsed() >= GRACE {
                    if let Some(rt) = st.pods.get(&uid) {
                        rt.kill.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                keep.push((uid, since, how, at));
            }
            Held::Ended => keep.push((uid, since, how, at)),
            // A container that ended before its disruption: nothing left to take away.
            Held::Doomed if runs && ended => {}
            Held::Doomed if (runs && !started) || since.elapsed() < AFTER => {
                keep.push((uid, since, how, at));
            }
            Held::Doomed if runs => {
                preempt(st, idx, matches!(how, Scenario::Preempt(_)));
                keep.push((uid, Instant::now(), how, Held::Terminating));
            }
            Held::Doomed => evict(st, idx, !matches!(how, Scenario::EvictLegacy(_))),
        }
    }
    st.disruptions.held.extend(keep);
}

fn disruption_condition(now: &str, reason: &str, message: &str) -> Value {
    json!({"type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
        "lastTransitionTime": now, "reason": reason, "message": message})
}

/// The kubelet's eviction; `condition`: the cluster sets DisruptionTarget (1.26+).
fn evict(st: &mut State, idx: usize, condition: bool) {
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
    if let Some(c) = conds.as_array_mut().filter(|_| condition) {
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
    let mut conds = pod["status"]["conditions"].clone();
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
    // The condition, then the delete: the pod stays Running until its container has ended.
    st.update(idx, |o| {
        o["metadata"]["deletionTimestamp"] = json!(now);
        o["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        o["status"]["conditions"] = conds;
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
    if let Some(rt) = st.pods.get(uid_of(&pod)) {
        rt.term.store(true, std::sync::atomic::Ordering::SeqCst);
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
