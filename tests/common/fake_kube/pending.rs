//! The fake cluster's scenarios for what holds a pod back after scheduling, or changes it on the
//! way in, worded as the real components word them:
//! - the kubelet cannot mount a volume (FailedMount, `MountVolume.SetUp failed for volume ...`),
//!   including a hostPath of type Directory whose directory the node lacks (its type check);
//! - the attach/detach controller cannot attach it (FailedAttachVolume, `AttachVolume.Attach
//!   failed ...`, or `Multi-Attach error ...` for a ReadWriteOnce volume in use on another node);
//! - Kueue's webhook creates the Job suspended and its ClusterQueue never admits it;
//! - the LimitRanger admission plugin gives a pod the namespace's default CPU limit.
//!
//! In each volume case the pod stays Pending with its container waiting in ContainerCreating (the
//! kubelet's stage before the image), the events repeat as the kubelet retries (recorded once
//! here), and the log endpoint answers as for any container that has not started.

use super::{conditions, container_status, now_rfc3339, str_at, Scenario, State};
use serde_json::{json, Value};

/// The name the kubelet gives the pod's first volume in its messages: a claim's PersistentVolume,
/// else the volume's own name.
fn volume_name(st: &State, pod: &Value) -> String {
    let ns = str_at(pod, "/metadata/namespace");
    let Some(v) = pod["spec"]["volumes"].as_array().and_then(|v| v.first()) else {
        return String::new();
    };
    if let Some(c) = v
        .pointer("/persistentVolumeClaim/claimName")
        .and_then(Value::as_str)
    {
        if let Some(i) = st.find("PersistentVolumeClaim", Some(ns), c) {
            return str_at(&st.objects[i], "/spec/volumeName").to_string();
        }
    }
    str_at(v, "/name").to_string()
}

/// The kubelet's and the attach/detach controller's part for a scheduled pod whose volume cannot
/// be made ready: true when `scenario` is such a case (the pod then stays in ContainerCreating).
pub(super) fn stuck_creating(st: &mut State, idx: usize, scenario: &Scenario) -> bool {
    let pod = st.objects[idx].clone();
    let volume = volume_name(st, &pod);
    let (reason, component, message) = match scenario {
        Scenario::MountFailed(m) => (
            "FailedMount",
            "kubelet",
            format!("MountVolume.SetUp failed for volume \"{volume}\" : {m}"),
        ),
        Scenario::AttachFailed(m) => (
            "FailedAttachVolume",
            "attachdetach-controller",
            format!("AttachVolume.Attach failed for volume \"{volume}\" : {m}"),
        ),
        Scenario::MultiAttach(users) => {
            let why = if users.is_empty() {
                "Volume is already exclusively attached to one node and can't be attached to another".to_string()
            } else {
                format!("Volume is already used by pod(s) {users}")
            };
            (
                "FailedAttachVolume",
                "attachdetach-controller",
                format!("Multi-Attach error for volume \"{volume}\" {why}"),
            )
        }
        Scenario::HostPathMissing => {
            let host = pod["spec"]["volumes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|v| str_at(v, "/hostPath/type") == "Directory");
            let Some(v) = host else {
                return false;
            };
            let path = str_at(v, "/hostPath/path");
            (
                "FailedMount",
                "kubelet",
                format!(
                    "MountVolume.SetUp failed for volume \"{}\" : hostPath type check failed: {path} is not a directory",
                    str_at(v, "/name")
                ),
            )
        }
        _ => return false,
    };
    let now = now_rfc3339();
    let cs = container_status(
        &pod,
        json!({"waiting": {"reason": "ContainerCreating"}}),
        false,
    );
    st.update(idx, |o| {
        o["status"]["conditions"] = conditions(&now, false, Some("ContainersNotReady"));
        o["status"]["hostIP"] = json!("10.0.0.10");
        if o["status"]["startTime"].is_null() {
            o["status"]["startTime"] = json!(now);
        }
        o["status"]["containerStatuses"] = json!([cs]);
    });
    st.event(idx, "Warning", reason, &message, component);
    true
}

/// Kueue's part for a Job of a [`Scenario::QueueSuspended`] target: its webhook suspends the Job,
/// its job controller creates a Workload (and says so on the Job), its ClusterQueue never admits
/// it; the job controller then creates no pod and marks the Job Suspended. True: the Job is held.
pub(super) fn held(st: &mut State, job_idx: usize, scenario: &Scenario) -> bool {
    if *scenario != Scenario::QueueSuspended {
        return false;
    }
    let job = st.objects[job_idx].clone();
    let ns = str_at(&job, "/metadata/namespace").to_string();
    let name = str_at(&job, "/metadata/name").to_string();
    let now = now_rfc3339();
    let workload = format!("job-{name}-{}", &super::uid_of(&job)[..5]);
    st.update(job_idx, |o| {
        o["spec"]["suspend"] = json!(true);
        o["status"]["conditions"] = json!([{"type": "Suspended", "status": "True",
            "lastProbeTime": now, "lastTransitionTime": now,
            "reason": "JobSuspended", "message": "Job suspended"}]);
    });
    st.event(
        job_idx,
        "Normal",
        "CreatedWorkload",
        &format!("Created Workload: {ns}/{workload}"),
        "batch/job-kueue-controller",
    );
    st.event(
        job_idx,
        "Normal",
        "Suspended",
        "Job suspended",
        "job-controller",
    );
    true
}

/// The LimitRanger admission plugin for a pod being created under [`Scenario::LimitRangeCpu`]:
/// the namespace's default CPU limit on a container that sets none, and its annotation.
pub(super) fn limit_range(scenario: &Scenario, spec: &mut Value, meta: &mut Value) {
    let Scenario::LimitRangeCpu(cpu) = scenario else {
        return;
    };
    let Some(c) = spec["containers"].get_mut(0) else {
        return;
    };
    if !c["resources"]["limits"]["cpu"].is_null() {
        return;
    }
    if c["resources"].is_null() {
        c["resources"] = json!({});
    }
    if c["resources"]["limits"].is_null() {
        c["resources"]["limits"] = json!({});
    }
    c["resources"]["limits"]["cpu"] = json!(cpu);
    let container = str_at(c, "/name").to_string();
    if meta["annotations"].is_null() {
        meta["annotations"] = json!({});
    }
    meta["annotations"]["kubernetes.io/limit-ranger"] = json!(format!(
        "LimitRanger plugin set: cpu limit for container {container}"
    ));
}
