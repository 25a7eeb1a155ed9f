//! diagnose.rs's unit tests: events and pod states in the API server's words.
#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn event(reason: &str, kind: &str, message: &str) -> Event {
    serde_json::from_value(json!({
        "metadata": {"name": "e"}, "involvedObject": {},
        "reason": reason, "type": kind, "message": message
    }))
    .unwrap()
}

fn pod(status: serde_json::Value) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": "p"}, "status": status})).unwrap()
}

fn observed<'a>(
    pod: Option<&'a Pod>,
    pod_events: &'a [Event],
    job_events: &'a [Event],
    claim: Option<&'a PersistentVolumeClaim>,
    claim_events: &'a [Event],
) -> Observed<'a> {
    Observed {
        job: None,
        job_events,
        pod,
        pod_events,
        claim,
        claim_events,
        image: "registry.example/iogauge:nope",
        image_is_default: false,
        node_arches: None,
        pod_seen: false,
    }
}

#[test]
fn a_job_that_ended_without_a_pod_is_fatal_and_says_whether_one_ran() {
    let job = |t: &str, reason: &str| -> Job {
        serde_json::from_value(json!({"metadata": {"name": "j"}, "status": {"conditions": [
            {"type": t, "status": "True", "reason": reason}]}}))
        .unwrap()
    };
    // A stopped pod that exited 0: the Job is Complete and makes no other pod.
    let complete = job("Complete", "CompletionsReached");
    let mut o = observed(None, &[], &[], None, &[]);
    o.job = Some(&complete);
    let Diagnosis::Fatal(why) = diagnose(&o) else {
        panic!()
    };
    assert!(why.starts_with("the Job completed, but its pod went away without a result"));
    // A Job that failed after its pod was seen did not fail "before its pod started".
    let failed = job("Failed", "BackoffLimitExceeded");
    o.job = Some(&failed);
    assert_eq!(
        diagnose(&o),
        Diagnosis::Fatal("the Job failed before its pod started: BackoffLimitExceeded".into())
    );
    o.pod_seen = true;
    assert_eq!(
        diagnose(&o),
        Diagnosis::Fatal("the Job failed after its pod went away: BackoffLimitExceeded".into())
    );
}

#[test]
fn admission_refusals_name_the_policy() {
    let ev = [event(
        "FailedCreate",
        "Warning",
        "Error creating: pods \"iogauge-x-abcde\" is forbidden: violates PodSecurity \"restricted:latest\": restricted volume types (volume \"data\" uses restricted volume type \"hostPath\")",
    )];
    assert_eq!(
        diagnose(&observed(None, &[], &ev, None, &[])),
        Diagnosis::Fatal(
            "Pod Security admission (restricted:latest) refused the pod: restricted volume types (volume \"data\" uses restricted volume type \"hostPath\")".into()
        )
    );
    let ev = [event(
        "FailedCreate",
        "Warning",
        "Error creating: admission webhook \"validate.kyverno.svc-fail\" denied the request: policy require-limits: cpu limit required",
    )];
    assert_eq!(
        diagnose(&observed(None, &[], &ev, None, &[])),
        Diagnosis::Fatal(
            "the admission webhook validate.kyverno.svc-fail refused the pod: policy require-limits: cpu limit required".into()
        )
    );
    assert_eq!(
        diagnose(&observed(None, &[], &[], None, &[])),
        Diagnosis::Waiting("waiting for the Job to create its pod".into())
    );
}

#[test]
fn scc_refusals_say_to_let_the_platform_choose() {
    // OpenShift 4.11+ wording (restricted-v2 with the namespace's ranges).
    let ev = [event(
        "FailedCreate",
        "Warning",
        "Error creating: pods \"iogauge-x-abcde\" is forbidden: unable to validate against any security context constraint: [provider \"anyuid\": Forbidden: not usable by user or serviceaccount, provider restricted-v2: .spec.securityContext.fsGroup: Invalid value: []int64{65532}: 65532 is not an allowed group, spec.containers[0].securityContext.runAsUser: Invalid value: 65532: must be in the ranges: [1000680000, 1000689999], provider \"restricted\": Forbidden: not usable by user or serviceaccount, provider \"privileged\": Forbidden: not usable by user or serviceaccount]",
    )];
    assert_eq!(
        diagnose(&observed(None, &[], &ev, None, &[])),
        Diagnosis::Fatal(
            "OpenShift's security context constraints refused the pod (restricted-v2: .spec.securityContext.fsGroup: Invalid value: []int64{65532}: 65532 is not an allowed group, spec.containers[0].securityContext.runAsUser: Invalid value: 65532: must be in the ranges: [1000680000, 1000689999]): use --security-context platform, so that the SCC assigns the uid, gid and fsGroup".into()
        )
    );
}

#[test]
fn a_long_scc_list_is_capped() {
    let many = (0..40)
        .map(|i| format!("provider p{i}: .spec.securityContext.runAsUser: Invalid value: 65532"))
        .collect::<Vec<_>>()
        .join(", ");
    let msg = format!("pods \"x\" is forbidden: unable to validate against any security context constraint: [{many}]");
    let said = refused(&msg);
    let detail = said
        .strip_prefix("OpenShift's security context constraints refused the pod (")
        .unwrap();
    let (detail, _) = detail.split_once("... (").unwrap();
    assert_eq!(detail.chars().count(), 500);
    assert!(said.ends_with("more characters)): use --security-context platform, so that the SCC assigns the uid, gid and fsGroup"), "{said}");
}

#[test]
fn unschedulable_pods_say_which_flag_helps() {
    let msg = "0/3 nodes are available: 3 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    let p = pod(json!({"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg}
    ]}));
    assert_eq!(
        diagnose(&observed(Some(&p), &[], &[], None, &[])),
        Diagnosis::Stuck(format!(
            "no node can run the pod: {msg} (add --tolerate-control-plane to run on control-plane nodes)"
        ))
    );
    let p = pod(json!({"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/1 nodes are available: persistentvolumeclaim \"c\" not found."}
    ]}));
    assert_eq!(
        diagnose(&observed(Some(&p), &[], &[], None, &[])),
        Diagnosis::Waiting("waiting for the claim to be created".into())
    );
}

#[test]
fn image_pull_failures_stop_at_the_back_off() {
    let ev = [event(
        "Failed",
        "Warning",
        "Failed to pull image \"registry.example/iogauge:nope\": not found",
    )];
    let first = pod(json!({"phase": "Pending", "containerStatuses": [
        {"name": "iogauge", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
         "state": {"waiting": {"reason": "ErrImagePull", "message": "rpc error"}}}
    ]}));
    assert_eq!(
        diagnose(&observed(Some(&first), &ev, &[], None, &[])),
        Diagnosis::Waiting(
            "pulling the image failed, the kubelet retries: Failed to pull image \"registry.example/iogauge:nope\": not found".into()
        )
    );
    let backoff = pod(json!({"phase": "Pending", "containerStatuses": [
        {"name": "iogauge", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
         "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}
    ]}));
    assert_eq!(
        diagnose(&observed(Some(&backoff), &ev, &[], None, &[])),
        Diagnosis::Fatal(
            "cannot pull the image 'registry.example/iogauge:nope' (ImagePullBackOff): Failed to pull image \"registry.example/iogauge:nope\": not found; check --image, and --image-pull-secret for a private registry".into()
        )
    );
}

#[test]
fn the_default_image_fails_at_the_first_pull_with_how_to_make_it() {
    let ev = [event(
        "Failed",
        "Warning",
        "Failed to pull image \"iogauge:1.0.0\": rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/iogauge:1.0.0\": failed to resolve reference \"docker.io/library/iogauge:1.0.0\": docker.io/library/iogauge:1.0.0: not found",
    )];
    let first = pod(json!({"phase": "Pending", "containerStatuses": [
        {"name": "iogauge", "image": "x", "imageID": "", "ready": false, "restartCount": 0,
         "state": {"waiting": {"reason": "ErrImagePull", "message": "rpc error"}}}
    ]}));
    let mut o = observed(Some(&first), &ev, &[], None, &[]);
    o.image = "iogauge:1.0.0";
    o.image_is_default = true;
    assert_eq!(
        diagnose(&o),
        Diagnosis::Fatal(format!(
            "cannot pull the default image 'iogauge:1.0.0' (ErrImagePull): {}; put it in a \
             registry the cluster pulls from with `iogauge kube image push \
             REGISTRY/REPO:TAG` and run with --image REGISTRY/REPO:TAG, or write it with \
             `iogauge kube image export`, carry the archive to the nodes and load it into \
             their container runtime",
            ev[0].message.as_deref().unwrap()
        ))
    );
}

#[test]
fn nodes_of_another_architecture_are_named() {
    let msg = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
    let p = pod(json!({"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg}
    ]}));
    assert!(wants_node_arches(Some(&p)));
    let arm = ["arm64".to_string()];
    let mut o = observed(Some(&p), &[], &[], None, &[]);
    o.node_arches = Some(&arm);
    let ours = crate::cluster::request::node_arch();
    assert_eq!(
        diagnose(&o),
        Diagnosis::Stuck(format!(
            "no node can run the pod: the image is {ours} and no node is (the nodes are \
             arm64): run on a cluster with {ours} nodes, or pass --image with an image built \
             for arm64 and --node-selector kubernetes.io/arch=arm64: {msg}"
        ))
    );
    // Nodes of this architecture exist: the selector is the user's.
    let same = [ours.to_string()];
    o.node_arches = Some(&same);
    assert_eq!(
        diagnose(&o),
        Diagnosis::Stuck(format!(
            "no node can run the pod: {msg} (check --node-selector and --nodes)"
        ))
    );
}

#[test]
fn claims_waiting_for_a_consumer_are_fine_and_failed_provisioning_is_not() {
    let claim: PersistentVolumeClaim = serde_json::from_value(
        json!({"metadata": {"name": "iogauge-a-fast"}, "status": {"phase": "Pending"}}),
    )
    .unwrap();
    let p = pod(json!({"phase": "Pending"}));
    let wffc = [event(
        "WaitForFirstConsumer",
        "Normal",
        "waiting for first consumer to be created before binding",
    )];
    assert_eq!(
        diagnose(&observed(Some(&p), &[], &[], Some(&claim), &wffc)),
        Diagnosis::Waiting(
            "the claim binds when the pod is scheduled (WaitForFirstConsumer)".into()
        )
    );
    let failed = [event(
        "ProvisioningFailed",
        "Warning",
        "storageclass.storage.k8s.io \"fast\" not found",
    )];
    assert_eq!(
        diagnose(&observed(Some(&p), &[], &[], Some(&claim), &failed)),
        Diagnosis::Stuck(
            "the claim iogauge-a-fast is not provisioned: storageclass.storage.k8s.io \"fast\" not found".into()
        )
    );
}
