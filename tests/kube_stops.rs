//! Three fixes of the last review, each against the fake API server (tests/common/fake_kube/)
//! with the pods' commands run for real: the run's ConfigMap goes after a first Ctrl-C; a `kube
//! fio` or `kube preflight` pod of another iogauge version fails its target in one line naming
//! both versions; an interrupted `kube preflight` exits 1 whatever the nodes that ended said.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::kube_preflight::spec;

use common::fake_kube::{BindingMode, FakeKube, NodeSeed, Scenario, StorageClassSeed};
use common::kube::{assert_nothing_left, document, run, spawn, IMAGE};
use iogauge::report::document::{KubeDocument, TargetOutcome, TargetStatus};
use std::path::Path;
use std::time::{Duration, Instant};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An image of iogauge 0.0.1: this build's binary behind a wrapper that re-frames its document
/// with that version (tests/common/reframe.py), as tests/kube_image_use.rs makes it.
fn old_image(dir: &Path) -> Scenario {
    let image = dir.join("old-image");
    std::fs::write(
        &image,
        format!(
            "#!/bin/sh\n'{}' \"$@\" | python3 '{}' 0.0.1\n",
            env!("CARGO_BIN_EXE_iogauge"),
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/common/reframe.py")
                .display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&image, std::fs::Permissions::from_mode(0o755)).unwrap();
    Scenario::Entrypoint(image.to_str().unwrap().into())
}

/// The line and `reason` of a target whose pod ran iogauge 0.0.1.
fn other_version() -> String {
    format!(
        "the pod ran iogauge 0.0.1 but this is iogauge {VERSION}: update the image with \
         `iogauge kube image push REGISTRY/REPO:{VERSION}` and pass --image \
         REGISTRY/REPO:{VERSION} (or --image of an iogauge:{VERSION} image the cluster has)"
    )
}

/// The target failed with `reason`, said in one line on stderr.
fn assert_failed(t: &TargetOutcome, err: &str, reason: &str) {
    assert_eq!(t.status, TargetStatus::Failed, "{err}");
    assert_eq!(t.reason.as_deref(), Some(reason), "{err}");
    let line = format!("iogauge kube: {}: failed: {reason}\n", t.target);
    assert!(err.contains(&line), "{line}\nnot in:\n{err}");
}

/// Sends SIGINT once to `child`, then waits for its end: (exit code, stdout, stderr).
fn interrupt(child: std::process::Child) -> (i32, String, String) {
    // SAFETY: kill(2) on our own child's pid, not yet reaped, with a valid signal number.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

#[test]
fn a_first_ctrl_c_deletes_the_run_s_configmap() {
    let dir = common::scratch();
    // The ConfigMap's create is answered 4 s late: Ctrl-C comes once it exists and before any
    // Job does, when the controller has nothing else of the run's to delete.
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(StorageClassSeed::new("fast", "p", BindingMode::Immediate))
        .storage_class(StorageClassSeed::new("slow", "p", BindingMode::Immediate))
        .answer_delay("POST", "configmaps", Duration::from_secs(4))
        .start();
    let profile = dir.path().join("my-wal.yaml");
    std::fs::write(
        &profile,
        "name: my-wal\ntitle: my WAL\nworkload:\n  - rw=write\n  - ioengine=sync\n  \
         - fdatasync=1\n  - bs=4k\n  - size=256k\nmetrics:\n  - key: sync_p99\n    \
         label: p99 fdatasync latency\n    better: lower\n    pass: 1s\n    source: a test\n",
    )
    .unwrap();
    let child = spawn(
        &fake,
        dir.path(),
        &[
            "check",
            profile.to_str().unwrap(),
            "--storage-class",
            "fast",
            "--storage-class",
            "slow",
            "--format",
            "json",
        ],
    );
    assert!(
        fake.wait_until(Duration::from_secs(20), |f| !f
            .created("ConfigMap")
            .is_empty()),
        "{:#?}",
        fake.history()
    );
    let (code, out, err) = interrupt(child);
    assert_eq!(code, 1, "{err}");
    let name = fake.created("ConfigMap")[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        err.contains(&format!("iogauge kube: configmap {name} deleted\n")),
        "{err}"
    );
    assert!(err.contains("iogauge kube: interrupted by SIGINT"), "{err}");
    let doc = document(&out);
    for t in &doc.targets {
        assert_eq!(t.status, TargetStatus::Skipped, "{:?}", t.reason);
        assert_eq!(t.reason.as_deref(), Some("not started: stopped by SIGINT"));
    }
    assert!(fake.created("Job").is_empty());
    assert_eq!(fake.deleted("ConfigMap"), [name]);
    assert_nothing_left(&fake);
}

#[test]
fn a_kube_fio_pod_of_another_version_fails_naming_both_and_the_next_runs() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(StorageClassSeed::new("old", "p", BindingMode::Immediate))
        .storage_class(StorageClassSeed::new("fast", "p", BindingMode::Immediate))
        .scenario_for("old", old_image(dir.path()))
        .start();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "fio",
            "--storage-class",
            "old",
            "--storage-class",
            "fast",
            "--pending-timeout",
            "5s",
            "--format",
            "json",
            "--",
            "--name=seq",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let doc = document(&out);
    assert_failed(&doc.targets[0], &err, &other_version());
    assert!(doc.targets[0].fio.is_none());
    let t = &doc.targets[1];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
    assert_eq!(t.fio.as_ref().unwrap()["jobs"][0]["jobname"], "seq");
    assert_nothing_left(&fake);
}

/// Nodes `node-a` and `node-b` (label disk=ssd), `node-a` in `scenario`, the other running.
fn two_nodes(dir: &Path, scenario: Scenario) -> FakeKube {
    FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .node(NodeSeed::new("node-a").label("disk", "ssd"))
        .node(NodeSeed::new("node-b").label("disk", "ssd"))
        .scenario_for("node-a", scenario)
        .start()
}

/// `iogauge kube preflight etcd.yaml --nodes disk=ssd --output out`, the spec's analyzer failing
/// when `when` holds.
fn preflight(fake: &FakeKube, dir: &Path, when: &str) -> std::process::Command {
    std::fs::write(
        dir.join("etcd.yaml"),
        spec(Path::new("/var/lib/etcd"), when),
    )
    .unwrap();
    let mut c = common::cmd(env!("CARGO_BIN_EXE_iogauge"));
    c.args(["kube", "preflight", "etcd.yaml", "--nodes", "disk=ssd"])
        .args(["--output", "out", "--pending-timeout", "5s"])
        .args(["--timeout", "60s"])
        .env("KUBECONFIG", fake.write_kubeconfig(dir))
        .env("IOGAUGE_IMAGE", IMAGE)
        .current_dir(dir);
    c
}

fn results(dir: &Path) -> KubeDocument {
    let text = std::fs::read_to_string(dir.join("out/kube.iogauge.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_kube_preflight_pod_of_another_version_fails_naming_both_and_the_next_runs() {
    let dir = common::scratch();
    let fake = two_nodes(dir.path(), old_image(dir.path()));
    let o = preflight(&fake, dir.path(), "p99 >= 1000s")
        .output()
        .unwrap();
    let err = common::text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let doc = results(dir.path());
    assert_failed(&doc.targets[0], &err, &other_version());
    assert!(doc.targets[0].preflight.is_none());
    let t = &doc.targets[1];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
    assert!(t.preflight.is_some());
    assert!(
        err.contains("iogauge kube: node node-b: done: etcd-perf collected\n"),
        "{err}"
    );
    assert_nothing_left(&fake);
}

#[test]
fn an_interrupted_kube_preflight_exits_1_even_after_a_node_failed_its_analyzer() {
    let dir = common::scratch();
    // node-b's results fail the analyzer (exit 3 on their own); node-a is still running.
    let fake = two_nodes(dir.path(), Scenario::Hang);
    let child = preflight(&fake, dir.path(), "p99 >= 0s")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        fake.wait_until(Duration::from_secs(30), |f| f.deleted("Job").len() == 1),
        "{:#?}",
        fake.history()
    );
    let (code, _, err) = interrupt(child);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("iogauge kube: interrupted by SIGINT"), "{err}");
    let doc = results(dir.path());
    let by_node = |n: &str| {
        doc.targets
            .iter()
            .find(|t| t.node.as_deref() == Some(n))
            .unwrap()
    };
    assert_eq!(by_node("node-a").status, TargetStatus::Interrupted);
    assert_eq!(
        by_node("node-a").reason.as_deref(),
        Some("stopped by SIGINT while it ran")
    );
    assert_eq!(by_node("node-b").status, TargetStatus::Completed);
    assert_nothing_left(&fake);
}
