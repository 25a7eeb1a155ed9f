//! What holds a target back after scheduling, or changes it on the way in, in one line each from
//! the cluster's own objects: a volume the attach/detach controller or the kubelet cannot give
//! the pod (a pod stuck in ContainerCreating), a queue (Kueue) that keeps the Job suspended, and
//! a CPU limit the namespace's LimitRange put on a pod that asked for none. Pure functions, used
//! by [`super::diagnose`], tested on the kubelet's, the controllers' and Kueue's wording. Also the
//! cap on every cluster message that ends up in a line or a reason.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, PersistentVolumeClaim, Pod};
use std::collections::BTreeMap;

/// The most characters of a cluster's message kept in a line or a reason: a runaway message (a
/// cut log line, a webhook's dump) must not fill stderr, the JSON and the HTML.
pub(crate) const MESSAGE_CAP: usize = 500;

/// A message from the cluster as one line (a mount's output spans several) of at most
/// [`MESSAGE_CAP`] characters, saying how much was left out.
pub(crate) fn capped(msg: &str) -> String {
    let one = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let n = one.chars().count();
    if n <= MESSAGE_CAP {
        return one;
    }
    let kept: String = one.chars().take(MESSAGE_CAP).collect();
    format!("{kept}... ({} more characters)", n - MESSAGE_CAP)
}

fn message(e: &Event) -> String {
    capped(e.message.as_deref().unwrap_or_default())
}

/// The LimitRanger admission plugin's record of what it set on a pod.
const LIMIT_RANGER: &str = "kubernetes.io/limit-ranger";
/// The label naming a Job's Kueue LocalQueue.
const KUEUE_QUEUE: &str = "kueue.x-k8s.io/queue-name";
/// The kubelet's periodic summary, which says less than the failure it follows.
const MOUNT_TIMEOUT: &str = "Unable to attach or mount volumes";

/// Why the pod's volume is not ready on its node, from the pod's FailedAttachVolume (the
/// attach/detach controller) and FailedMount (the kubelet) events; None: no such trouble.
pub(super) fn volume(
    pod: &Pod,
    events: &[Event],
    claim: Option<&PersistentVolumeClaim>,
) -> Option<String> {
    let node = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("(not known)");
    let last = |reason: &str| {
        events
            .iter()
            .rposition(|e| e.reason.as_deref() == Some(reason))
    };
    // An attach that failed and then succeeded is over.
    let attached = last("SuccessfulAttachVolume");
    if let Some(i) = last("FailedAttachVolume").filter(|i| attached.is_none_or(|a| a < *i)) {
        return Some(attach_failed(&message(&events[i]), node, claim));
    }
    let mounts: Vec<String> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("FailedMount"))
        .map(message)
        .collect();
    let msg = mounts
        .iter()
        .rfind(|m| !m.starts_with(MOUNT_TIMEOUT))
        .or(mounts.last())?;
    if let Some((_, what)) = msg.split_once("hostPath type check failed: ") {
        let path = what.split(" is not a ").next().unwrap_or(what);
        // A `kube preflight` pod's directories are the spec's collectors'.
        let preflight = pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.first()?.args.as_ref()?.first().cloned())
            .is_some_and(|a| a == "preflight");
        let fix = if preflight {
            "change the collector's directory in the spec"
        } else {
            "fix --host-path"
        };
        return Some(format!(
            "the directory {path} is missing on node {node} (the kubelet: hostPath type check \
             failed: {what}); create it there, or {fix}"
        ));
    }
    Some(format!(
        "cannot mount the volume on node {node}: {msg} (the storage driver's words; its logs on \
         that node say more)"
    ))
}

fn attach_failed(msg: &str, node: &str, claim: Option<&PersistentVolumeClaim>) -> String {
    let claim = claim
        .and_then(|c| c.metadata.name.as_deref())
        .map_or_else(|| "the claim".to_string(), |c| format!("the claim {c}"));
    if msg.starts_with("Multi-Attach error") {
        if let Some((_, users)) = msg.split_once("Volume is already used by ") {
            return format!(
                "{claim} is in use by {users} on another node, and its volume attaches to one \
                 node at a time ({msg}); stop them, or measure a claim of a ReadWriteMany class"
            );
        }
        return format!(
            "{claim}'s volume is still attached to another node ({msg}); stop what uses it and \
             let it detach, or measure a claim of a ReadWriteMany class"
        );
    }
    format!(
        "cannot attach the volume to node {node}: {msg} (the storage driver's words; its \
         controller's logs say more)"
    )
}

/// Why a Job has no pod because it is suspended: a queue (Kueue's webhook suspends every Job it
/// manages until its Workload is admitted) holds it. None: the Job is not suspended.
pub(super) fn suspended(job: Option<&Job>, events: &[Event]) -> Option<String> {
    let job = job?;
    if !job.spec.as_ref()?.suspend? {
        return None;
    }
    let queue = job
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(KUEUE_QUEUE))
        .map(|q| format!(" (queue {q})"))
        .unwrap_or_default();
    // Kueue names the Workload on the Job; why it is not admitted is on the Workload.
    if let Some(e) = events
        .iter()
        .rfind(|e| e.reason.as_deref() == Some("CreatedWorkload"))
    {
        // The name from the whole message: capping may cut it off its end.
        let raw = e.message.as_deref().unwrap_or_default().trim();
        let created = capped(raw);
        let workload = raw.rsplit(' ').next().unwrap_or_default();
        let (ns, name) = workload.split_once('/').unwrap_or(("", workload));
        return Some(format!(
            "the Job is suspended: Kueue{queue} holds it until its ClusterQueue admits it \
             ({created}); see why with: kubectl describe workload -n {ns} {name}; ask for quota \
             there, or run in a namespace Kueue does not manage"
        ));
    }
    let said = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| {
            c.iter()
                .find(|c| c.type_ == "Suspended" && c.status == "True")
        })
        .and_then(|c| c.message.as_deref())
        .unwrap_or("spec.suspend is true");
    let holder = match queue.is_empty() {
        true => "a queue (e.g. Kueue)".to_string(),
        false => format!("Kueue{queue}"),
    };
    Some(format!(
        "the Job is suspended ({}): {holder} holds it, and no pod starts until it resumes the \
         Job; ask its admin, or run in a namespace no queue manages",
        capped(said)
    ))
}

/// A note when the pod runs with a CPU limit iogauge did not ask for (`asked`: the limits it
/// set): the namespace's LimitRange (or another admission) added it, and CPU throttling shows up
/// as I/O latency. None: the pod's CPU limit is the one asked for, or there is none.
pub(crate) fn imposed_limits(pod: &Pod, asked: &BTreeMap<String, String>) -> Option<String> {
    if asked.contains_key("cpu") {
        return None;
    }
    let limit = pod
        .spec
        .as_ref()?
        .containers
        .first()?
        .resources
        .as_ref()?
        .limits
        .as_ref()?
        .get("cpu")?
        .0
        .clone();
    let ranger = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(LIMIT_RANGER))
        .filter(|a| a.contains("cpu limit"));
    let source = match ranger {
        Some(a) => format!("the namespace's LimitRange ({})", capped(a)),
        None => "an admission controller".to_string(),
    };
    Some(format!(
        "the pod runs with a CPU limit of {limit} it did not ask for, set by {source}; CPU \
         throttling shows up as I/O latency: run in a namespace without that default, or give \
         --cpu-limit the most CPUs the namespace allows"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::diagnose::{diagnose, Diagnosis, Observed};
    use super::*;
    use serde_json::json;

    fn event(reason: &str, message: &str) -> Event {
        serde_json::from_value(json!({
            "metadata": {"name": "e"}, "involvedObject": {},
            "reason": reason, "type": "Warning", "message": message
        }))
        .unwrap()
    }

    /// A pod on worker-1 whose container is being created.
    fn creating() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p"}, "spec": {"nodeName": "worker-1", "containers": []},
            "status": {"phase": "Pending", "containerStatuses": [
                {"name": "iogauge", "image": "x", "imageID": "", "ready": false,
                 "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}
            ]}
        }))
        .unwrap()
    }

    fn observed<'a>(
        job: Option<&'a Job>,
        job_events: &'a [Event],
        pod: Option<&'a Pod>,
        pod_events: &'a [Event],
        claim: Option<&'a PersistentVolumeClaim>,
    ) -> Observed<'a> {
        Observed {
            job,
            job_events,
            pod,
            pod_events,
            claim,
            claim_events: &[],
            image: "i",
            image_is_default: false,
            node_arches: None,
            pod_seen: false,
        }
    }

    fn on_pod(events: &[Event]) -> Diagnosis {
        let p = creating();
        let claim: PersistentVolumeClaim =
            serde_json::from_value(json!({"metadata": {"name": "etcd-data"}})).unwrap();
        diagnose(&observed(None, &[], Some(&p), events, Some(&claim)))
    }

    #[test]
    fn a_missing_host_directory_names_the_node_and_the_flag() {
        let ev = [event(
            "FailedMount",
            "MountVolume.SetUp failed for volume \"data\" : hostPath type check failed: /var/lib/etcd is not a directory",
        )];
        assert_eq!(
            on_pod(&ev),
            Diagnosis::Stuck(
                "the directory /var/lib/etcd is missing on node worker-1 (the kubelet: hostPath type check failed: /var/lib/etcd is not a directory); create it there, or fix --host-path".into()
            )
        );
    }

    #[test]
    fn mount_failures_keep_the_drivers_words_on_one_line() {
        // The in-tree NFS mounter's error spans lines; the kubelet's later timeout says less.
        let nfs = "MountVolume.SetUp failed for volume \"pvc-5d7c\" : mount failed: exit status 32\nMounting command: mount\nMounting arguments: -t nfs 10.0.0.5:/export /var/lib/kubelet/pods/u/volumes/kubernetes.io~nfs/pvc-5d7c\nOutput: mount.nfs: access denied by server while mounting 10.0.0.5:/export\n";
        let ev = [
            event("FailedMount", nfs),
            event("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: timed out waiting for the condition"),
        ];
        assert_eq!(
            on_pod(&ev),
            Diagnosis::Stuck(
                "cannot mount the volume on node worker-1: MountVolume.SetUp failed for volume \"pvc-5d7c\" : mount failed: exit status 32; Mounting command: mount; Mounting arguments: -t nfs 10.0.0.5:/export /var/lib/kubelet/pods/u/volumes/kubernetes.io~nfs/pvc-5d7c; Output: mount.nfs: access denied by server while mounting 10.0.0.5:/export (the storage driver's words; its logs on that node say more)".into()
            )
        );
    }

    #[test]
    fn attach_failures_and_multi_attach_say_what_to_do() {
        let ev = [event(
            "FailedAttachVolume",
            "AttachVolume.Attach failed for volume \"pvc-5d7c\" : rpc error: code = Internal desc = Could not attach volume \"vol-0a1\" to node \"i-0b2\": attachment of disk \"vol-0a1\" failed, expected device to be attached but was attaching",
        )];
        assert_eq!(
            on_pod(&ev),
            Diagnosis::Stuck(
                "cannot attach the volume to node worker-1: AttachVolume.Attach failed for volume \"pvc-5d7c\" : rpc error: code = Internal desc = Could not attach volume \"vol-0a1\" to node \"i-0b2\": attachment of disk \"vol-0a1\" failed, expected device to be attached but was attaching (the storage driver's words; its controller's logs say more)".into()
            )
        );
        let ev = [event(
            "FailedAttachVolume",
            "Multi-Attach error for volume \"pvc-5d7c\" Volume is already used by pod(s) etcd-0",
        )];
        assert_eq!(
            on_pod(&ev),
            Diagnosis::Stuck(
                "the claim etcd-data is in use by pod(s) etcd-0 on another node, and its volume attaches to one node at a time (Multi-Attach error for volume \"pvc-5d7c\" Volume is already used by pod(s) etcd-0); stop them, or measure a claim of a ReadWriteMany class".into()
            )
        );
        let ev = [event(
            "FailedAttachVolume",
            "Multi-Attach error for volume \"pvc-5d7c\" Volume is already exclusively attached to one node and can't be attached to another",
        )];
        assert_eq!(
            on_pod(&ev),
            Diagnosis::Stuck(
                "the claim etcd-data's volume is still attached to another node (Multi-Attach error for volume \"pvc-5d7c\" Volume is already exclusively attached to one node and can't be attached to another); stop what uses it and let it detach, or measure a claim of a ReadWriteMany class".into()
            )
        );
        // Attached in the end: only a later mount failure would count.
        let ev = [
            ev[0].clone(),
            event(
                "SuccessfulAttachVolume",
                "AttachVolume.Attach succeeded for volume \"pvc-5d7c\"",
            ),
        ];
        assert_eq!(
            on_pod(&ev),
            Diagnosis::Waiting("starting (ContainerCreating)".into())
        );
    }

    #[test]
    fn a_suspended_job_names_the_queue_and_where_to_look() {
        let job: Job = serde_json::from_value(json!({
            "metadata": {"name": "iogauge-x", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
            "spec": {"suspend": true, "template": {}},
            "status": {"conditions": [{"type": "Suspended", "status": "True",
                "reason": "JobSuspended", "message": "Job suspended"}]}
        }))
        .unwrap();
        let ev = [
            event("Suspended", "Job suspended"),
            event(
                "CreatedWorkload",
                "Created Workload: team-a/job-iogauge-x-3b7c1",
            ),
        ];
        assert_eq!(
            diagnose(&observed(Some(&job), &ev, None, &[], None)),
            Diagnosis::Stuck(
                "the Job is suspended: Kueue (queue user-queue) holds it until its ClusterQueue admits it (Created Workload: team-a/job-iogauge-x-3b7c1); see why with: kubectl describe workload -n team-a job-iogauge-x-3b7c1; ask for quota there, or run in a namespace Kueue does not manage".into()
            )
        );
        assert_eq!(
            diagnose(&observed(Some(&job), &ev[..1], None, &[], None)),
            Diagnosis::Stuck(
                "the Job is suspended (Job suspended): Kueue (queue user-queue) holds it, and no pod starts until it resumes the Job; ask its admin, or run in a namespace no queue manages".into()
            )
        );
        // A message longer than the cap: the Workload is still named whole.
        let long = [event(
            "CreatedWorkload",
            &format!(
                "{}Created Workload: team-a/job-iogauge-x-3b7c1",
                "x".repeat(600)
            ),
        )];
        let Diagnosis::Stuck(why) = diagnose(&observed(Some(&job), &long, None, &[], None)) else {
            panic!()
        };
        assert!(
            why.contains(
                "; see why with: kubectl describe workload -n team-a job-iogauge-x-3b7c1;"
            ),
            "{why}"
        );
    }

    #[test]
    fn an_imposed_cpu_limit_is_noted_and_an_asked_one_is_not() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "annotations": {
                "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu limit for container iogauge"}},
            "spec": {"containers": [{"name": "iogauge",
                "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}}}]}
        }))
        .unwrap();
        let asked = BTreeMap::from([("memory".to_string(), "512Mi".to_string())]);
        assert_eq!(
            imposed_limits(&pod, &asked).as_deref(),
            Some("the pod runs with a CPU limit of 500m it did not ask for, set by the namespace's LimitRange (LimitRanger plugin set: cpu limit for container iogauge); CPU throttling shows up as I/O latency: run in a namespace without that default, or give --cpu-limit the most CPUs the namespace allows")
        );
        let mut own = asked.clone();
        own.insert("cpu".into(), "500m".into());
        assert_eq!(imposed_limits(&pod, &own), None);
    }

    #[test]
    fn cluster_messages_are_capped_on_one_line() {
        let long = "x".repeat(82_265);
        let c = capped(&long);
        assert_eq!(
            c.chars().count(),
            MESSAGE_CAP + "... (81765 more characters)".len()
        );
        assert!(c.ends_with("... (81765 more characters)"));
        assert_eq!(capped("a\n\n  b\n"), "a; b");
        let ev = [event("FailedMount", &long)];
        let Diagnosis::Stuck(line) = on_pod(&ev) else {
            panic!()
        };
        assert!(line.len() < 700, "{}", line.len());
    }
}
