//! Why a target's pod is not running yet, in one line, from what the cluster says about it: the
//! Job's events (admission refused the pod), the pod's conditions, container states and events
//! (unschedulable, image pull), and the claim's events (provisioning). A pure function of those
//! objects, so each case is tested on the API server's own wording. Every message from the
//! cluster that ends up in a line or a reason goes through [`capped`].

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, PersistentVolumeClaim, Pod};

pub(crate) use super::pending::{capped, imposed_limits};

/// What the objects say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Diagnosis {
    /// On its way (pulling, creating, a claim waiting for its first consumer).
    Waiting(String),
    /// Not progressing, but it might still (a node may be added, a provisioner may retry): said
    /// at once, and given up after the pending timeout.
    Stuck(String),
    /// It will not start: give up now.
    Fatal(String),
}

/// What is known about one target while it has not started.
pub(crate) struct Observed<'a> {
    pub job: Option<&'a Job>,
    pub job_events: &'a [Event],
    pub pod: Option<&'a Pod>,
    pub pod_events: &'a [Event],
    pub claim: Option<&'a PersistentVolumeClaim>,
    pub claim_events: &'a [Event],
    pub image: &'a str,
    /// `image` is the default (no `--image`): a pull failure says how to make it.
    pub image_is_default: bool,
    /// The nodes' `kubernetes.io/arch` labels, when the scheduler's refusal may be about the
    /// architecture and the nodes could be listed ([`wants_node_arches`]).
    pub node_arches: Option<&'a [String]>,
    /// Whether a pod of the target was seen on a node (it may have gone since).
    pub pod_seen: bool,
}

/// Whether the pod is unschedulable for its node selector, which may be its architecture: then
/// the caller lists the nodes' architectures for [`Observed::node_arches`].
pub(crate) fn wants_node_arches(pod: Option<&Pod>) -> bool {
    pod.and_then(|p| p.status.as_ref()?.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| {
            c.type_ == "PodScheduled"
                && c.status == "False"
                && c.message
                    .as_deref()
                    .is_some_and(|m| m.contains("node affinity/selector"))
        })
}

/// The distinct `kubernetes.io/arch` labels of `nodes`, sorted.
pub(crate) fn node_arches(nodes: &[k8s_openapi::api::core::v1::Node]) -> Vec<String> {
    let set: std::collections::BTreeSet<String> = nodes
        .iter()
        .filter_map(|n| {
            n.metadata
                .labels
                .as_ref()?
                .get("kubernetes.io/arch")
                .cloned()
        })
        .collect();
    set.into_iter().collect()
}

fn latest<'e>(events: &'e [Event], reason: &str) -> Option<&'e Event> {
    events.iter().rfind(|e| e.reason.as_deref() == Some(reason))
}

fn message(e: &Event) -> String {
    capped(e.message.as_deref().unwrap_or_default())
}

/// The diagnosis of a target whose pod has not started running.
pub(crate) fn diagnose(o: &Observed) -> Diagnosis {
    let Some(pod) = o.pod else {
        return no_pod(o);
    };
    let status = pod.status.as_ref();
    let waiting = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .and_then(|c| c.state.as_ref()?.waiting.as_ref());
    if let Some(w) = waiting {
        let reason = w.reason.as_deref().unwrap_or("");
        // The kubelet follows its "Failed to pull image …" event with a bare "Error:
        // ErrImagePull" one, also reason Failed: the first says why.
        let detail = || {
            o.pod_events
                .iter()
                .rfind(|e| {
                    e.reason.as_deref() == Some("Failed")
                        && !e.message.as_deref().unwrap_or("").starts_with("Error: ")
                })
                .or_else(|| latest(o.pod_events, "Failed"))
                .map(message)
                .or_else(|| w.message.as_deref().map(capped))
                .unwrap_or_else(|| reason.to_string())
        };
        let pull_failed = matches!(
            reason,
            "ImagePullBackOff" | "ErrImagePull" | "ErrImageNeverPull"
        );
        if pull_failed && o.image_is_default {
            // Nobody publishes this tag: retrying cannot help, the user must make the image.
            return Diagnosis::Fatal(format!(
                "cannot pull the default image '{}' ({reason}): {}; put it in a registry the \
                 cluster pulls from with `iogauge kube image push REGISTRY/REPO:TAG` and run \
                 with --image REGISTRY/REPO:TAG, or write it with `iogauge kube image export`, \
                 carry the archive to the nodes and load it into their container runtime",
                o.image,
                detail()
            ));
        }
        match reason {
            "ImagePullBackOff" | "InvalidImageName" | "ErrImageNeverPull" => {
                return Diagnosis::Fatal(format!(
                    "cannot pull the image '{}' ({reason}): {}; check --image, and \
                     --image-pull-secret for a private registry",
                    o.image,
                    detail()
                ))
            }
            "ErrImagePull" => {
                return Diagnosis::Waiting(format!(
                    "pulling the image failed, the kubelet retries: {}",
                    detail()
                ))
            }
            "CreateContainerConfigError" | "CreateContainerError" | "RunContainerError" => {
                return Diagnosis::Fatal(format!(
                    "the container cannot start ({reason}): {}",
                    w.message.as_deref().map(capped).unwrap_or_else(detail)
                ))
            }
            _ => {}
        }
    }
    // The kubelet mounts volumes before it pulls the image: only a pod still being created (or
    // not yet reporting its container) can be held up by its volume.
    let creating = waiting.is_none_or(|w| w.reason.as_deref() == Some("ContainerCreating"));
    if creating {
        if let Some(why) = super::pending::volume(pod, o.pod_events, o.claim) {
            return Diagnosis::Stuck(why);
        }
    }
    if let Some(e) = latest(o.claim_events, "ProvisioningFailed") {
        let claim = o
            .claim
            .and_then(|c| c.metadata.name.clone())
            .unwrap_or_default();
        let bound = o
            .claim
            .and_then(|c| c.status.as_ref()?.phase.clone())
            .is_some_and(|p| p == "Bound");
        if !bound {
            return Diagnosis::Stuck(format!(
                "the claim {claim} is not provisioned: {}",
                message(e)
            ));
        }
    }
    let unscheduled = status.and_then(|s| s.conditions.as_ref()).and_then(|c| {
        c.iter()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
    });
    if let Some(c) = unscheduled {
        let raw = c.message.as_deref().unwrap_or_default();
        let msg = capped(raw);
        if c.reason.as_deref() == Some("Unschedulable") {
            // The claim is created right after the Job, so the scheduler may see the pod first.
            if raw.contains("persistentvolumeclaim") && raw.contains("not found") {
                return Diagnosis::Waiting("waiting for the claim to be created".into());
            }
            if let Some(why) = other_arch(raw, o.node_arches) {
                return Diagnosis::Stuck(format!("no node can run the pod: {why}: {msg}"));
            }
            return Diagnosis::Stuck(format!("no node can run the pod: {msg}{}", hint(raw)));
        }
        return Diagnosis::Waiting(format!("being scheduled: {msg}"));
    }
    if latest(o.claim_events, "WaitForFirstConsumer").is_some() && waiting.is_none() {
        return Diagnosis::Waiting(
            "the claim binds when the pod is scheduled (WaitForFirstConsumer)".into(),
        );
    }
    match waiting.and_then(|w| w.reason.clone()) {
        Some(r) => Diagnosis::Waiting(format!("starting ({r})")),
        None => Diagnosis::Waiting("pending".into()),
    }
}

/// The pod selects nodes of this build's architecture and none has it: said first, since no
/// other flag helps. Given up after the pending timeout like any unschedulable pod (a cluster
/// autoscaler may still add such a node).
fn other_arch(msg: &str, arches: Option<&[String]>) -> Option<String> {
    let arches = arches.filter(|a| !a.is_empty())?;
    let ours = super::request::node_arch();
    if !msg.contains("node affinity/selector") || arches.iter().any(|a| a == ours) {
        return None;
    }
    Some(format!(
        "the image is {ours} and no node is (the nodes are {}): run on a cluster with {ours} \
         nodes, or pass --image with an image built for {} and --node-selector \
         kubernetes.io/arch={}",
        arches.join(", "),
        arches.join(" or "),
        arches[0]
    ))
}

/// A target without a usable pod: admission refused it, the Job has ended (then no pod will
/// come, whatever the Job's earlier events said), it is suspended, or it has yet to make one.
fn no_pod(o: &Observed) -> Diagnosis {
    if let Some(e) = latest(o.job_events, "FailedCreate") {
        // Parsed whole, then each part capped: a long SCC list names the useful provider last.
        return Diagnosis::Fatal(refused(e.message.as_deref().unwrap_or_default().trim()));
    }
    let condition = |t: &str| {
        o.job
            .and_then(|j| j.status.as_ref()?.conditions.as_ref())
            .and_then(|c| c.iter().find(|c| c.type_ == t && c.status == "True"))
    };
    if let Some(c) = condition("Failed") {
        let why = capped(
            c.message
                .as_deref()
                .or(c.reason.as_deref())
                .unwrap_or("no reason given"),
        );
        // A pod that ran and went away is not one that never started.
        return Diagnosis::Fatal(if o.pod_seen {
            format!("the Job failed after its pod went away: {why}")
        } else {
            format!("the Job failed before its pod started: {why}")
        });
    }
    if condition("Complete").is_some() {
        // A stopped pod that exits 0 counts as a success: the Job makes no other.
        return Diagnosis::Fatal(
            "the Job completed, but its pod went away without a result: the pod exited 0 when \
             it was stopped, so the Job started no other; run the image of this iogauge version \
             (--image), whose pod exits 1 when stopped"
                .into(),
        );
    }
    if let Some(why) = super::pending::suspended(o.job, o.job_events) {
        return Diagnosis::Stuck(why);
    }
    Diagnosis::Waiting("waiting for the Job to create its pod".into())
}

/// The scheduler's words, with what to change on iogauge's command line.
fn hint(msg: &str) -> &'static str {
    if msg.contains("untolerated taint") {
        if msg.contains("node-role.kubernetes.io/control-plane")
            || msg.contains("node-role.kubernetes.io/master")
        {
            " (add --tolerate-control-plane to run on control-plane nodes)"
        } else {
            " (add --toleration KEY=VALUE:EFFECT for the taint named)"
        }
    } else if msg.contains("node affinity/selector") {
        " (check --node-selector and --nodes)"
    } else if msg.contains("Insufficient cpu") || msg.contains("Insufficient memory") {
        " (lower --cpu-request or --memory-request)"
    } else {
        ""
    }
}

/// A Job's FailedCreate message, naming what refused the pod.
fn refused(msg: &str) -> String {
    let detail = |after: &str| {
        capped(
            msg.split_once(after)
                .map_or(msg, |(_, d)| d.trim().trim_start_matches(':').trim()),
        )
    };
    if let Some(i) = msg.find("violates PodSecurity \"") {
        let rest = &msg[i + "violates PodSecurity \"".len()..];
        let level = rest.split('"').next().unwrap_or("");
        return format!(
            "Pod Security admission ({level}) refused the pod: {}",
            detail(&format!("violates PodSecurity \"{level}\""))
        );
    }
    if let Some(i) = msg.find("admission webhook \"") {
        let rest = &msg[i + "admission webhook \"".len()..];
        let hook = rest.split('"').next().unwrap_or("");
        return format!(
            "the admission webhook {hook} refused the pod: {}",
            detail("denied the request")
        );
    }
    if let Some((_, list)) =
        msg.split_once("unable to validate against any security context constraint")
    {
        return scc_refused(list);
    }
    if msg.contains("exceeded quota") {
        return format!("a ResourceQuota refused the pod: {}", detail("forbidden"));
    }
    format!("the Job could not create its pod: {}", capped(msg))
}

/// OpenShift's SCC admission lists every provider it tried; those "not usable by user or
/// serviceaccount" say nothing about the pod, the others say what they refused.
fn scc_refused(list: &str) -> String {
    let list = list.trim().trim_start_matches(':').trim();
    let list = list.strip_prefix('[').unwrap_or(list);
    let list = list.strip_suffix(']').unwrap_or(list);
    let why: Vec<&str> = list
        .split(", provider ")
        .map(|p| p.trim().trim_start_matches("provider ").trim())
        .filter(|p| !p.contains("not usable by user or serviceaccount"))
        .collect();
    let detail = capped(&if why.is_empty() {
        list.to_string()
    } else {
        why.join("; ")
    });
    let fix = if detail.contains("hostPath") || detail.contains("host path") {
        "node targets need an SCC that allows hostPath volumes, e.g. oc adm policy \
         add-scc-to-user hostmount-anyuid -z <service account>, with --service-account"
    } else {
        "use --security-context platform, so that the SCC assigns the uid, gid and fsGroup"
    };
    format!("OpenShift's security context constraints refused the pod ({detail}): {fix}")
}

#[cfg(test)]
mod tests;
