//! `iogauge kube canary install|uninstall|status` against the fake API server
//! (tests/common/fake_kube/canary.rs): the objects and their labels and pod command line, a
//! second install updating in place, uninstall leaving nothing labelled (claims only with
//! --delete-claims), the prometheus-operator's objects only where its CRDs are served, and status
//! over pods whose logs are what this build's `iogauge canary --format kube-frames` printed.
//! The dry run's manifests are validated in kube_canary_manifests.rs.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::fake_kube::{BindingMode, FakeKube, NodeSeed, StorageClassSeed};
use common::kube::{assert_rbac_allows, run};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const LABEL: &str = "iogauge.dev/canary";

fn cluster(dir: &Path, operator: bool) -> common::fake_kube::Builder {
    let b = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::Immediate,
        ))
        .node(
            NodeSeed::new("cp-1")
                .label("node-role.kubernetes.io/control-plane", "")
                .taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
        )
        .node(NodeSeed::new("worker-1"));
    if operator {
        b.prometheus_operator()
    } else {
        b
    }
}

const INSTALL: [&str; 12] = [
    "canary",
    "install",
    "etcd",
    "--nodes",
    "node-role.kubernetes.io/control-plane",
    "--host-path",
    "/var/lib/etcd",
    "--storage-class",
    "standard",
    "--tolerate-control-plane",
    "--every",
    "1m",
];

/// The live objects labelled with canary `name`, as "Kind/name".
fn labelled(fake: &FakeKube, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for kind in [
        "DaemonSet",
        "StatefulSet",
        "Service",
        "ServiceMonitor",
        "PrometheusRule",
        "Pod",
        "PersistentVolumeClaim",
        "ConfigMap",
    ] {
        for o in fake.objects(kind) {
            if o["metadata"]["labels"][LABEL] == name {
                out.push(format!(
                    "{kind}/{}",
                    o["metadata"]["name"].as_str().unwrap()
                ));
            }
        }
    }
    out.sort();
    out
}

fn only(fake: &FakeKube, kind: &str) -> Value {
    let all = fake.objects(kind);
    assert_eq!(all.len(), 1, "{kind}: {all:?}");
    all[0].clone()
}

#[test]
fn install_makes_every_object_labelled_a_second_updates_and_uninstall_removes_them() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), true).start();
    let (code, out, err) = run(&fake, dir.path(), &INSTALL);
    assert_eq!(code, 0, "{err}");
    for what in [
        "service/iogauge-canary-default created",
        "daemonset/iogauge-canary-default-nodes created",
        "servicemonitor/iogauge-canary-default created",
        "prometheusrule/iogauge-canary-default created",
    ] {
        assert!(out.contains(what), "{what}: {out}");
    }
    let ds = only(&fake, "DaemonSet");
    let sts = only(&fake, "StatefulSet");
    for o in [
        &ds,
        &sts,
        &only(&fake, "Service"),
        &only(&fake, "ServiceMonitor"),
        &only(&fake, "PrometheusRule"),
    ] {
        let l = &o["metadata"]["labels"];
        assert_eq!(l["app.kubernetes.io/name"], "iogauge-canary", "{o}");
        assert_eq!(l["app.kubernetes.io/managed-by"], "iogauge", "{o}");
        assert_eq!(l[LABEL], "default", "{o}");
    }
    let c = &ds["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "canary",
            "etcd",
            "--dir",
            "/data",
            "--listen",
            "0.0.0.0:9465",
            "--node",
            "$(NODE_NAME)",
            "--every",
            "1m",
            "--window",
            "1h",
            "--max-busy",
            "1%",
            "--format",
            "kube-frames",
            "--no-history"
        ]
    );
    assert_eq!(
        c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
        "spec.nodeName"
    );
    assert_eq!(
        c["ports"][0],
        serde_json::json!({"name": "metrics", "containerPort": 9465, "protocol": "TCP"})
    );
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["livenessProbe"]["httpGet"]["port"], "metrics");
    // The DaemonSet's pods go only to the control-plane node; the StatefulSet's claim is made.
    assert!(fake.wait_until(Duration::from_secs(10), |f| {
        f.objects("Pod").len() == 2 && !f.objects("PersistentVolumeClaim").is_empty()
    }));
    let ds_pods: Vec<Value> = fake
        .objects("Pod")
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["iogauge.dev/target"] == "nodes")
        .collect();
    assert_eq!(ds_pods.len(), 1);
    assert_eq!(ds_pods[0]["spec"]["nodeName"], "cp-1");
    let uid = ds["metadata"]["uid"].clone();

    // Again, with another interval: the same objects, updated.
    let mut again = INSTALL.to_vec();
    *again.last_mut().unwrap() = "2m";
    let (code, out, err) = run(&fake, dir.path(), &again);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("daemonset/iogauge-canary-default-nodes updated"),
        "{out}"
    );
    assert!(!out.contains("created"), "{out}");
    let ds = only(&fake, "DaemonSet");
    assert_eq!(ds["metadata"]["uid"], uid);
    assert_eq!(ds["metadata"]["generation"], 2);
    assert!(ds.to_string().contains("\"2m\""));
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());

    // Without the class: its StatefulSet goes (its claim stays, as a StatefulSet's does).
    let (code, out, err) = run(&fake, dir.path(), &INSTALL[..7]);
    assert_eq!(code, 0, "{err}");
    let sts_name = sts["metadata"]["name"].as_str().unwrap();
    assert!(
        out.contains(&format!(
            "statefulset/{sts_name} deleted (no longer asked for)"
        )),
        "{out}"
    );
    assert!(fake.objects("StatefulSet").is_empty());

    // Uninstall: everything but the claim; then the claim with --delete-claims; then nothing.
    let (code, out, err) = run(&fake, dir.path(), &["canary", "uninstall"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("deleted daemonset/iogauge-canary-default-nodes"),
        "{out}"
    );
    assert!(
        out.contains("deleted prometheusrule/iogauge-canary-default"),
        "{out}"
    );
    let claim = format!("data-{}-0", sts["metadata"]["name"].as_str().unwrap());
    assert_eq!(
        labelled(&fake, "default"),
        [format!("PersistentVolumeClaim/{claim}")]
    );
    assert!(
        err.contains(&format!(
            "kept 1 claim(s) of the canary's StatefulSets: {claim}"
        )),
        "{err}"
    );
    assert!(
        err.contains("iogauge kube canary uninstall --name default --delete-claims"),
        "{err}"
    );
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &["canary", "uninstall", "--delete-claims"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), format!("deleted persistentvolumeclaim/{claim}"));
    assert!(labelled(&fake, "default").is_empty());
    let (code, out, err) = run(&fake, dir.path(), &["canary", "uninstall"]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains("nothing labelled iogauge.dev/canary=default in namespace"),
        "{err}"
    );
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
    assert_rbac_allows(&fake.requests());
}

#[test]
fn without_the_operators_crds_auto_makes_no_monitors_and_says_so() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), false).start();
    let args = [
        "canary",
        "install",
        "--storage-class",
        "standard",
        "--name",
        "b",
    ];
    let (code, out, err) = run(&fake, dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("the cluster does not serve monitoring.coreos.com/v1"),
        "{err}"
    );
    assert_eq!(
        labelled(&fake, "b")
            .iter()
            .filter(|o| !o.starts_with("P"))
            .count(),
        2,
        "{out}"
    );
    assert!(fake.objects("ServiceMonitor").is_empty() && fake.objects("PrometheusRule").is_empty());
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &[&args[..], &["--prometheus-operator", "always"]].concat(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--prometheus-operator always: the cluster does not serve"),
        "{err}"
    );
    // Bad input is said before anything is asked.
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &["canary", "install", "--storage-class", "nope"],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--storage-class nope: no such storage class; the cluster has: standard"),
        "{err}"
    );
    // What the pod's canary would refuse, install refuses in its words, before applying.
    let applies = fake.requests().len();
    for (extra, words) in [
        (
            &["small-files"][..],
            "small-files: cannot be a canary profile: ",
        ),
        (
            &["etcd", "gitlab", "etcd"][..],
            "profile 'etcd' is named twice; each profile is watched once",
        ),
        (
            &["--every", "5m", "--window", "14m"][..],
            "--window 14m: shorter than three intervals of --every 5m; a verdict needs at least 3",
        ),
        (
            &["--every", "1500ms"][..],
            "--every 1.5s: expected whole seconds, e.g. 30s, 5m or 1h",
        ),
        (
            &["--max-busy", "0.005%"][..],
            "'0.005%': expected a share from 0.01% to 100%, e.g. 1% or 0.01",
        ),
    ] {
        let args = [
            &["canary", "install", "--storage-class", "standard"][..],
            extra,
        ]
        .concat();
        let (code, _, err) = run(&fake, dir.path(), &args);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(err.contains(words), "{extra:?}: {err}");
    }
    assert_eq!(
        fake.requests().len(),
        applies,
        "bad input asked the cluster"
    );
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
    assert_rbac_allows(&fake.requests());
}

#[test]
fn cleanup_leaves_a_canary_alone_and_uninstall_still_removes_it() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), false).start();
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &["canary", "install", "--storage-class", "standard"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(fake.wait_until(Duration::from_secs(10), |f| {
        f.objects("Pod").len() == 1 && f.objects("PersistentVolumeClaim").len() == 1
    }));
    let before = labelled(&fake, "default");
    assert_eq!(before.len(), 4, "{before:?}");
    // Canary objects carry managed-by=iogauge but no run: even --all leaves them.
    let (code, out, err) = run(&fake, dir.path(), &["cleanup", "--all"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(labelled(&fake, "default"), before, "{out}{err}");
    assert!(!out.contains("deleted"), "{out}");
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &["canary", "uninstall", "--delete-claims"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        fake.wait_until(Duration::from_secs(10), |f| labelled(f, "default")
            .is_empty())
    );
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
}
