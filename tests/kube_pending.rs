//! `iogauge kube` when a target's pod is held back after scheduling (a volume that cannot be
//! mounted or attached, a missing host directory, a busy ReadWriteOnce claim, a Kueue queue) or
//! changed on the way in (a LimitRange's CPU limit), against the fake API server
//! (tests/common/fake_kube/pending.rs) in the real components' wording. Each test has the broken
//! target first and one that really runs second, one at a time: the run must give up on the
//! first after --pending-timeout, say why, move on, and leave nothing behind.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::kube::{assert_nothing_left, run_json, two_classes};

use common::fake_kube::{FakeKube, NodeSeed, Scenario};
use iogauge::report::document::{KubeDocument, TargetOutcome, TargetStatus};
use std::path::Path;

const GAVE_UP: &str = " (gave up after 2 s; --pending-timeout sets how long to wait)";

fn cluster(dir: &Path, default: Scenario, scenarios: &[(&str, Scenario)]) -> FakeKube {
    let mut b = two_classes(dir)
        .node(NodeSeed::new("worker-1").label("disk", "ssd"))
        .node(NodeSeed::new("worker-2").label("disk", "ssd"))
        .scenario(default);
    for (target, s) in scenarios {
        b = b.scenario_for(target, s.clone());
    }
    b.start()
}

/// Runs `iogauge kube check etcd` on `targets`, one at a time, giving up after 2 s: (exit code,
/// document, stderr).
fn run(fake: &FakeKube, dir: &Path, targets: &[&str]) -> (i32, KubeDocument, String) {
    let flags = [
        "--parallel",
        "1",
        "--pending-timeout",
        "2s",
        "--scale",
        "0.02",
    ];
    // Bounds a regression that waits for ever to a minute instead of --timeout's 30.
    let timeout = ["--timeout", "60s"];
    run_json(
        fake,
        dir,
        &[&["check", "etcd"], targets, &flags, &timeout].concat(),
    )
}

/// The first target failed with `reason` (said so on stderr), the second ran to its end.
fn assert_gave_up_then_ran(code: i32, doc: &KubeDocument, err: &str, reason: &str) {
    // 1 for the failed target, or 3 when the one that ran failed its check on this disk.
    assert!([1, 3].contains(&code), "{code}: {err}");
    let (broken, fine) = (&doc.targets[0], &doc.targets[1]);
    assert_eq!(broken.status, TargetStatus::Failed, "{err}");
    assert_eq!(broken.reason.as_deref(), Some(reason));
    let line = format!("iogauge kube: {}: failed: {reason}\n", broken.target);
    assert!(err.contains(&line), "{line}\nnot in:\n{err}");
    assert_completed(fine, err);
}

fn assert_completed(t: &TargetOutcome, err: &str) {
    assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
    assert!(t.check.is_some());
}

/// The PersistentVolume name the fake binds claim `name` to.
fn volume_of(fake: &FakeKube, name: &str) -> String {
    let claim = fake
        .created("PersistentVolumeClaim")
        .into_iter()
        .find(|c| c["metadata"]["name"] == name)
        .unwrap();
    format!("pvc-{}", claim["metadata"]["uid"].as_str().unwrap())
}

#[test]
fn a_volume_that_cannot_be_mounted_is_given_up_on() {
    let dir = common::scratch();
    let csi = "rpc error: code = Internal desc = mount failed: exit status 32\nMounting command: mount\nOutput: mount.nfs: access denied by server while mounting 10.0.0.5:/export";
    let fake = cluster(
        dir.path(),
        Scenario::Run,
        &[("fast", Scenario::MountFailed(csi.into()))],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &["--storage-class", "fast", "--storage-class", "standard"],
    );
    let pv = volume_of(&fake, &doc.targets[0].job);
    let reason = format!(
        "cannot mount the volume on node worker-1: MountVolume.SetUp failed for volume \"{pv}\" : rpc error: code = Internal desc = mount failed: exit status 32; Mounting command: mount; Output: mount.nfs: access denied by server while mounting 10.0.0.5:/export (the storage driver's words; its logs on that node say more){GAVE_UP}"
    );
    assert_gave_up_then_ran(code, &doc, &err, &reason);
    assert_nothing_left(&fake);
}

#[test]
fn a_volume_that_cannot_be_attached_is_given_up_on() {
    let dir = common::scratch();
    let csi = "rpc error: code = Internal desc = Could not attach volume \"vol-0a1b\" to node \"i-0c2d\": attachment of disk \"vol-0a1b\" failed, expected device to be attached but was attaching";
    let fake = cluster(
        dir.path(),
        Scenario::Run,
        &[("fast", Scenario::AttachFailed(csi.into()))],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &["--storage-class", "fast", "--storage-class", "standard"],
    );
    let pv = volume_of(&fake, &doc.targets[0].job);
    let reason = format!(
        "cannot attach the volume to node worker-1: AttachVolume.Attach failed for volume \"{pv}\" : {csi} (the storage driver's words; its controller's logs say more){GAVE_UP}"
    );
    assert_gave_up_then_ran(code, &doc, &err, &reason);
    assert_nothing_left(&fake);
}

#[test]
fn a_missing_host_directory_names_the_node_and_the_flag() {
    let dir = common::scratch();
    let host = common::scratch();
    let path = host.path().to_str().unwrap();
    let fake = cluster(
        dir.path(),
        Scenario::Run,
        &[("worker-1", Scenario::HostPathMissing)],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &["--nodes", "disk=ssd", "--host-path", path],
    );
    let reason = format!(
        "the directory {path} is missing on node worker-1 (the kubelet: hostPath type check failed: {path} is not a directory); create it there, or fix --host-path{GAVE_UP}"
    );
    assert_gave_up_then_ran(code, &doc, &err, &reason);
    assert_eq!(doc.targets[1].node.as_deref(), Some("worker-2"));
    assert_nothing_left(&fake);
}

#[test]
fn a_claim_in_use_on_another_node_says_who_uses_it() {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    use kube::api::{Api, PostParams};
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        Scenario::Run,
        &[("fast", Scenario::MultiAttach("etcd-0".into()))],
    );
    let kubeconfig = fake.write_kubeconfig(dir.path());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            let api = Api::<PersistentVolumeClaim>::namespaced(
                kube::Client::try_from(config).unwrap(),
                &fake.namespace(),
            );
            for (name, class) in [("busy", "fast"), ("free", "standard")] {
                let claim: PersistentVolumeClaim = serde_json::from_value(serde_json::json!({
                    "metadata": {"name": name},
                    "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                             "resources": {"requests": {"storage": "10Gi"}}}
                }))
                .unwrap();
                api.create(&PostParams::default(), &claim).await.unwrap();
            }
        });
    let (code, doc, err) = run(&fake, dir.path(), &["--claim", "busy", "--claim", "free"]);
    let pv = volume_of(&fake, "busy");
    let reason = format!(
        "the claim busy is in use by pod(s) etcd-0 on another node, and its volume attaches to one node at a time (Multi-Attach error for volume \"{pv}\" Volume is already used by pod(s) etcd-0); stop them, or measure a claim of a ReadWriteMany class{GAVE_UP}"
    );
    assert_gave_up_then_ran(code, &doc, &err, &reason);
    // The user's claims stay; only what the run created goes.
    assert!(fake.object("PersistentVolumeClaim", "busy").is_some());
    assert!(fake.object("PersistentVolumeClaim", "free").is_some());
    assert_nothing_left(&fake);
}

#[test]
fn a_job_kueue_holds_suspended_is_given_up_on() {
    let dir = common::scratch();
    let host = common::scratch();
    let path = host.path().to_str().unwrap();
    let fake = cluster(
        dir.path(),
        Scenario::Run,
        &[("worker-1", Scenario::QueueSuspended)],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &["--nodes", "disk=ssd", "--host-path", path],
    );
    let job = fake
        .created("Job")
        .into_iter()
        .find(|j| j["metadata"]["name"] == doc.targets[0].job.as_str())
        .unwrap();
    let workload = format!(
        "job-{}-{}",
        doc.targets[0].job,
        &job["metadata"]["uid"].as_str().unwrap()[..5]
    );
    let ns = fake.namespace();
    let reason = format!(
        "the Job is suspended: Kueue holds it until its ClusterQueue admits it (Created Workload: {ns}/{workload}); see why with: kubectl describe workload -n {ns} {workload}; ask for quota there, or run in a namespace Kueue does not manage{GAVE_UP}"
    );
    assert_gave_up_then_ran(code, &doc, &err, &reason);
    // Held, it never had a pod.
    let pods = fake.created("Pod");
    assert_eq!(pods.len(), 1, "{pods:?}");
    assert_nothing_left(&fake);
}

#[test]
fn a_cpu_limit_from_a_limit_range_is_noted_once_per_target() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), Scenario::LimitRangeCpu("500m".into()), &[]);
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &["--storage-class", "fast", "--storage-class", "standard"],
    );
    assert!([0, 3, 4].contains(&code), "{err}");
    for t in &doc.targets {
        assert_completed(t, &err);
        let line = format!(
            "iogauge kube: {}: note: the pod runs with a CPU limit of 500m it did not ask for, set by the namespace's LimitRange (LimitRanger plugin set: cpu limit for container iogauge); CPU throttling shows up as I/O latency: run in a namespace without that default, or give --cpu-limit the most CPUs the namespace allows\n",
            t.target
        );
        assert_eq!(err.matches(&line).count(), 1, "{line}\nnot once in:\n{err}");
        // The document keeps it beside the numbers it may have distorted.
        assert!(
            t.warnings
                .iter()
                .any(|w| w.starts_with("the pod runs with a CPU limit of 500m it did not ask for")),
            "{:?}",
            t.warnings
        );
    }
    for p in fake.created("Pod") {
        assert_eq!(
            p["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            "500m"
        );
    }
    // Asked for, the limit is the user's own: no note.
    let (_, doc, err) = run(
        &fake,
        dir.path(),
        &["--storage-class", "standard", "--cpu-limit", "2"],
    );
    assert_completed(&doc.targets[0], &err);
    assert!(
        !err.contains("note: the pod runs with a CPU limit"),
        "{err}"
    );
    assert_nothing_left(&fake);
}
