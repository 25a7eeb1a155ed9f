//! The pod's image as `iogauge kube` uses it: the default `iogauge:<version>` when there is no
//! `--image` (in a dry run, and when the cluster cannot pull it), the pod's `kubernetes.io/os` and
//! `kubernetes.io/arch` node selector (nodes of another architecture, a binary for another CPU),
//! and the version check of the pod's document. Against the fake API server
//! (tests/common/fake_kube/mod.rs) in the real components' wording; each run has a broken target
//! first and one that really runs second, and must say why, move on and leave nothing behind.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::kube::assert_nothing_left;

use common::fake_kube::{BindingMode, FakeKube, NodeSeed, Scenario, StorageClassSeed};
use iogauge::report::document::{KubeDocument, TargetOutcome, TargetStatus};
use serde_json::Value;
use std::path::Path;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const GAVE_UP: &str = " (gave up after 2 s; --pending-timeout sets how long to wait)";

fn default_image() -> String {
    format!("iogauge:{VERSION}")
}

/// Two Immediate classes, `broken` with `scenario` and `fast` that runs, on `nodes`.
fn cluster(dir: &Path, scenario: Scenario, nodes: Vec<NodeSeed>) -> FakeKube {
    let mut b = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .storage_class(StorageClassSeed::new(
            "broken",
            "ebs.csi.aws.com",
            BindingMode::Immediate,
        ))
        .storage_class(StorageClassSeed::new(
            "fast",
            "ebs.csi.aws.com",
            BindingMode::Immediate,
        ))
        .scenario_for("broken", scenario);
    for n in nodes {
        b = b.node(n);
    }
    b.start()
}

/// `iogauge kube check etcd --storage-class broken --storage-class fast` one at a time, without
/// --image (nor IOGAUGE_IMAGE), plus `extra`: (exit code, document, stderr).
fn run(fake: &FakeKube, dir: &Path, extra: &[&str]) -> (i32, KubeDocument, String) {
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "check", "etcd", "--storage-class", "broken"])
        .args(["--storage-class", "fast", "--parallel", "1"])
        .args(["--pending-timeout", "2s", "--scale", "0.02"])
        .args(["--timeout", "60s", "--format", "json"])
        .args(extra)
        .env("KUBECONFIG", fake.write_kubeconfig(dir))
        .env_remove("IOGAUGE_IMAGE")
        .output()
        .unwrap();
    let stdout = common::text(&out.stdout);
    let stderr = common::text(&out.stderr);
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), doc, stderr)
}

/// The target failed with `reason`, said in one line on stderr.
fn assert_failed(t: &TargetOutcome, err: &str, reason: &str) {
    assert_eq!(t.status, TargetStatus::Failed, "{err}");
    assert_eq!(t.reason.as_deref(), Some(reason), "{err}");
    let line = format!("iogauge kube: {}: failed: {reason}\n", t.target);
    assert!(err.contains(&line), "{line}\nnot in:\n{err}");
}

/// The first target failed with `reason`, the second ran to its end.
fn assert_failed_then_ran(code: i32, doc: &KubeDocument, err: &str, reason: &str) {
    // 1 for the failed target, or 3 when the one that ran failed its check on this disk.
    assert!([1, 3].contains(&code), "{code}: {err}");
    assert_failed(&doc.targets[0], err, reason);
    let fine = &doc.targets[1];
    assert_eq!(
        fine.status,
        TargetStatus::Completed,
        "{:?}\n{err}",
        fine.reason
    );
    assert!(fine.check.is_some());
}

fn dry_run(format: &str) -> (String, String) {
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "kube",
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--dry-run",
        ])
        .args(["--format", format])
        .env_remove("IOGAUGE_IMAGE")
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .unwrap();
    let (stdout, stderr) = (common::text(&out.stdout), common::text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    (stdout, stderr)
}

fn note() -> String {
    format!(
        "image: {} is the default (no --image): it must exist in the cluster's registry; make it \
         with `iogauge kube image push REGISTRY/REPO:TAG` (then --image REGISTRY/REPO:TAG) or \
         `iogauge kube image export` and load it on the nodes",
        default_image()
    )
}

fn arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => panic!("add {other} here"),
    }
}

#[test]
fn a_dry_run_without_image_shows_the_default_and_says_it_must_exist() {
    // YAML: a comment line first, then manifests that validate.
    let (yaml, err) = dry_run("text");
    assert_eq!(
        yaml.lines().next().unwrap(),
        format!("# {}", note()),
        "{yaml}"
    );
    assert!(!err.contains("default (no --image)"), "{err}");
    crate::kube_manifests::validate("default-image", &yaml);
    let jobs = crate::kube_manifests::jobs(&yaml);
    let pod = &jobs[0]["spec"]["template"]["spec"];
    assert_eq!(pod["containers"][0]["image"], default_image().as_str());
    assert_eq!(
        pod["nodeSelector"],
        serde_json::json!({"kubernetes.io/os": "linux", "kubernetes.io/arch": arch()})
    );
    // JSON: no comment on stdout, the note on stderr.
    let (json, err) = dry_run("json");
    let list: Value = serde_json::from_str(&json).unwrap();
    let job = &list["items"][0];
    assert_eq!(job["kind"], "Job");
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["containers"][0]["image"], default_image().as_str());
    assert_eq!(pod["nodeSelector"]["kubernetes.io/arch"], arch());
    assert!(
        err.contains(&format!("iogauge kube: dry run: {}\n", note())),
        "{err}"
    );
}

#[test]
fn a_node_selector_for_another_architecture_wins() {
    // An image the user built for arm64 goes to arm64 nodes.
    let (yaml, _) = {
        let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args([
                "kube",
                "check",
                "etcd",
                "--storage-class",
                "fast",
                "--dry-run",
            ])
            .args(["--image", "registry.example/iogauge:arm"])
            .args(["--node-selector", "kubernetes.io/arch=arm64"])
            .env("KUBECONFIG", "/nonexistent")
            .output()
            .unwrap();
        (common::text(&out.stdout), common::text(&out.stderr))
    };
    assert!(!yaml.contains("default (no --image)"), "{yaml}");
    let pod = &crate::kube_manifests::jobs(&yaml)[0]["spec"]["template"]["spec"];
    assert_eq!(
        pod["nodeSelector"],
        serde_json::json!({"kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64"})
    );
}

#[test]
fn a_default_image_the_cluster_lacks_fails_at_once_with_how_to_make_it() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), Scenario::ImagePull, vec![NodeSeed::new("w-1")]);
    let (code, doc, err) = run(&fake, dir.path(), &[]);
    let image = default_image();
    // The first state seen: ErrImagePull, or already the back-off when the poll was slower.
    let state = if err.contains(&format!("'{image}' (ImagePullBackOff)")) {
        "ImagePullBackOff"
    } else {
        "ErrImagePull"
    };
    let reason = format!(
        "cannot pull the default image '{image}' ({state}): Failed to pull image \
         \"{image}\": rpc error: code = NotFound desc = failed to pull and unpack image \
         \"{image}\": not found; put it in a registry the cluster pulls from with `iogauge kube \
         image push REGISTRY/REPO:TAG` and run with --image REGISTRY/REPO:TAG, or write it with \
         `iogauge kube image export`, carry the archive to the nodes and load it into their \
         container runtime"
    );
    assert_failed_then_ran(code, &doc, &err, &reason);
    // Every pod asked for the default image.
    for job in fake.objects("Job") {
        assert_eq!(
            job["spec"]["template"]["spec"]["containers"][0]["image"],
            image.as_str()
        );
    }
    assert_nothing_left(&fake);
}

#[test]
fn nodes_of_another_architecture_are_named_then_given_up() {
    let dir = common::scratch();
    let arm = || NodeSeed::new("arm-1").label("kubernetes.io/arch", "arm64");
    let fake = cluster(dir.path(), Scenario::Run, vec![arm()]);
    let (code, doc, err) = run(&fake, dir.path(), &[]);
    assert_eq!(code, 1, "{err}");
    let ours = arch();
    let reason = format!(
        "no node can run the pod: the image is {ours} and no node is (the nodes are arm64): run \
         on a cluster with {ours} nodes, or pass --image with an image built for arm64 and \
         --node-selector kubernetes.io/arch=arm64: 0/1 nodes are available: 1 node(s) didn't \
         match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption \
         is not helpful for scheduling.{GAVE_UP}"
    );
    // Both targets: nothing here can change it.
    for t in &doc.targets {
        assert_failed(t, &err, &reason);
    }
    assert_nothing_left(&fake);
    // The fix it names: an arm64 image's selector (the fake runs this build's binary).
    let fake = cluster(dir.path(), Scenario::Run, vec![arm()]);
    let (_, doc, err) = run(
        &fake,
        dir.path(),
        &["--node-selector", "kubernetes.io/arch=arm64"],
    );
    for t in &doc.targets {
        assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
    }
    assert_nothing_left(&fake);
}

#[test]
fn a_binary_for_another_cpu_is_named() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        Scenario::ExecFormatError,
        vec![NodeSeed::new("w-1")],
    );
    let (code, doc, err) = run(&fake, dir.path(), &[]);
    let reason = "the pod ended (Error, exit code 255) without a result: the image's /iogauge \
                  is not built for this node's architecture (exec format error); use an image \
                  of the node's architecture (--image, with --node-selector \
                  kubernetes.io/arch=ARCH for the nodes it runs on); the log ends with: exec \
                  /iogauge: exec format error";
    assert_failed_then_ran(code, &doc, &err, reason);
    assert_nothing_left(&fake);
}

#[test]
fn a_pod_of_another_iogauge_version_fails_naming_both() {
    let dir = common::scratch();
    // An image of iogauge 0.0.1: this build's binary behind a wrapper that re-frames its
    // document with another version (the frames' checksums made anew, tests/common/reframe.py).
    let image = dir.path().join("old-image");
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
    let fake = cluster(
        dir.path(),
        Scenario::Entrypoint(image.to_str().unwrap().into()),
        vec![NodeSeed::new("w-1")],
    );
    let (code, doc, err) = run(&fake, dir.path(), &[]);
    let reason = format!(
        "the pod ran iogauge 0.0.1 but this is iogauge {VERSION}: update the image with \
         `iogauge kube image push REGISTRY/REPO:{VERSION}` and pass --image \
         REGISTRY/REPO:{VERSION} (or --image of an iogauge:{VERSION} image the cluster has)"
    );
    assert_failed_then_ran(code, &doc, &err, &reason);
    assert_nothing_left(&fake);
}
