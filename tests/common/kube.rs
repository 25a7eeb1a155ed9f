//! Helpers shared by the `iogauge kube` tests against the fake API server (fake_kube/): the
//! usual cluster (two classes, a tainted control plane and a worker), the `iogauge kube` command
//! run against it, and what every such test asserts at its end (nothing labelled left, every
//! request one deploy/rbac.yaml allows).
#![allow(clippy::unwrap_used)]

use super::fake_kube::{
    BindingMode, Builder, FakeKube, NodeSeed, Request, Scenario, StorageClassSeed,
};
use iogauge::report::document::KubeDocument;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The image the kube tests name (IOGAUGE_IMAGE): the fake runs this build's binary whatever it is.
pub const IMAGE: &str = "registry.example/iogauge:test";

/// A fake with classes `fast` (EBS, Immediate) and `standard` (local-path, WaitForFirstConsumer,
/// the default), still to be given nodes and scenarios.
pub fn two_classes(dir: &Path) -> Builder {
    FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .storage_class(StorageClassSeed::new(
            "fast",
            "ebs.csi.aws.com",
            BindingMode::Immediate,
        ))
        .storage_class(
            StorageClassSeed::new(
                "standard",
                "rancher.io/local-path",
                BindingMode::WaitForFirstConsumer,
            )
            .default_class(),
        )
}

/// Classes `fast` (Immediate) and `standard` (WaitForFirstConsumer, the default) on a tainted
/// control plane `cp-1` and `worker-1`, each target in its scenario (the rest: Run).
pub fn cluster(dir: &Path, scenarios: &[(&str, Scenario)]) -> FakeKube {
    let mut b = two_classes(dir)
        .node(
            NodeSeed::new("cp-1")
                .label("node-role.kubernetes.io/control-plane", "")
                .taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
        )
        .node(NodeSeed::new("worker-1"));
    for (target, s) in scenarios {
        b = b.scenario_for(target, s.clone());
    }
    b.start()
}

/// `iogauge kube ARGS` against `fake`, with [`IMAGE`].
pub fn command(fake: &FakeKube, dir: &Path, args: &[&str]) -> Command {
    let mut c = super::cmd(env!("CARGO_BIN_EXE_iogauge"));
    c.arg("kube")
        .args(args)
        .env("KUBECONFIG", fake.write_kubeconfig(dir))
        .env("IOGAUGE_IMAGE", IMAGE);
    c
}

/// [`command`] run to its end: (exit code, stdout, stderr).
pub fn run(fake: &FakeKube, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out: Output = command(fake, dir, args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        super::text(&out.stdout),
        super::text(&out.stderr),
    )
}

/// `iogauge kube ARGS --format json` run to its end: (exit code, document, stderr).
pub fn run_json(fake: &FakeKube, dir: &Path, args: &[&str]) -> (i32, KubeDocument, String) {
    let out: Output = command(fake, dir, args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let (stdout, stderr) = (super::text(&out.stdout), super::text(&out.stderr));
    let doc = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), doc, stderr)
}

/// The kube document on stdout.
pub fn document(stdout: &str) -> KubeDocument {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// The DELETE requests sent, as `kind/name` from their paths.
pub fn deletes(fake: &FakeKube) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.method == "DELETE")
        .map(|r| {
            let mut p = r.path.rsplit('/');
            let name = p.next().unwrap();
            format!("{}/{name}", p.next().unwrap())
        })
        .collect()
}

/// Nothing iogauge created is left: no Job, claim, pod or ConfigMap with its label, and the
/// fake saw no request it does not serve.
pub fn assert_nothing_left(fake: &FakeKube) {
    for kind in ["Job", "PersistentVolumeClaim", "Pod", "ConfigMap"] {
        let left: Vec<Value> = fake
            .objects(kind)
            .into_iter()
            .filter(|o| o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "iogauge")
            .collect();
        assert!(left.is_empty(), "{kind} left: {left:?}");
    }
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
}

/// deploy/rbac.yaml's rules as (apiGroup, resource, verb).
pub fn granted() -> Vec<(String, String, String)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/rbac.yaml"))
            .unwrap();
    let mut out = Vec::new();
    for doc in text.split("\n---\n") {
        let v: Value = yaml_serde::from_str(doc).unwrap_or(Value::Null);
        if !matches!(v["kind"].as_str(), Some("Role" | "ClusterRole")) {
            continue;
        }
        for rule in v["rules"].as_array().unwrap() {
            for g in rule["apiGroups"].as_array().unwrap() {
                for r in rule["resources"].as_array().unwrap() {
                    for verb in rule["verbs"].as_array().unwrap() {
                        out.push((
                            g.as_str().unwrap().to_string(),
                            r.as_str().unwrap().to_string(),
                            verb.as_str().unwrap().to_string(),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// Every request iogauge made is one deploy/rbac.yaml allows.
pub fn assert_rbac_allows(requests: &[Request]) {
    let rules = granted();
    for r in requests {
        // GET /version (connect's probe) is granted to everyone (system:public-info-viewer).
        if r.path == "/version" {
            continue;
        }
        // Discovery (GET /apis/GROUP/VERSION, kube canary's for the prometheus-operator) is
        // granted to every user (system:discovery).
        if r.method == "GET" && r.path.starts_with("/apis/") && r.path.split('/').count() == 4 {
            continue;
        }
        let parts: Vec<&str> = r.path.trim_start_matches('/').split('/').collect();
        let (group, rest) = match parts.as_slice() {
            ["api", "v1", rest @ ..] => ("", rest),
            ["apis", g, _, rest @ ..] => (*g, rest),
            _ => panic!("unexpected path {}", r.path),
        };
        let rest = match rest {
            ["namespaces", _, rest @ ..] => rest,
            rest => rest,
        };
        let (resource, named) = match rest {
            [res] => (res.to_string(), false),
            [res, _] => (res.to_string(), true),
            [res, _, sub] => (format!("{res}/{sub}"), true),
            _ => panic!("unexpected path {}", r.path),
        };
        let verb = match (r.method.as_str(), named) {
            ("GET", true) => "get",
            ("GET", false) => "list",
            ("POST", _) => "create",
            ("DELETE", _) => "delete",
            // A merge patch of a Retain volume, to be deleted with its claim (reclaim.rs).
            ("PATCH", true) => "patch",
            (m, _) => panic!("unexpected method {m}"),
        };
        assert!(
            rules.contains(&(group.into(), resource.clone(), verb.into())),
            "deploy/rbac.yaml does not allow {verb} {group}/{resource} ({} {})",
            r.method,
            r.path
        );
    }
}

/// Until a pod's container has started (20 s at most).
pub fn wait_running(fake: &FakeKube) {
    assert!(
        fake.wait_until(Duration::from_secs(20), |f| f
            .history()
            .iter()
            .any(|l| l.starts_with("started Pod/"))),
        "{:#?}",
        fake.history()
    );
}

/// [`command`] started with its output piped, for a test that signals it.
pub fn spawn(fake: &FakeKube, dir: &Path, args: &[&str]) -> Child {
    command(fake, dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}
