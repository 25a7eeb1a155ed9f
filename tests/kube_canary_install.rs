//! What `iogauge kube canary install` checks of the cluster before applying anything (an
//! object of the same name it did not make, a StatefulSet's claim template that would change,
//! its own labels asked for as monitor labels), what a second install removes (the monitors
//! after `--prometheus-operator never`), and uninstall where the operator's API is incomplete
//! (no PodMonitor). Against the fake API server
//! (tests/common/fake_kube/canary.rs).
#![allow(clippy::unwrap_used)]

use crate::common;
use common::fake_kube::{BindingMode, FakeKube, NodeSeed, StorageClassSeed};
use common::kube::{assert_rbac_allows, run};
use serde_json::json;
use std::path::Path;

fn cluster(dir: &Path) -> common::fake_kube::Builder {
    FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::Immediate,
        ))
        .node(NodeSeed::new("worker-1"))
}

const INSTALL: [&str; 4] = ["canary", "install", "--storage-class", "standard"];

/// "applied Kind/name (update)" lines of the fake's history.
fn updates(fake: &FakeKube) -> usize {
    fake.history()
        .iter()
        .filter(|h| h.starts_with("applied") && h.ends_with("(update)"))
        .count()
}

#[test]
fn a_changed_claim_template_is_refused_before_anything_is_applied() {
    let dir = common::scratch();
    let fake = cluster(dir.path()).start();
    let (code, _, err) = run(&fake, dir.path(), &INSTALL);
    assert_eq!(code, 0, "{err}");
    for change in [
        &["--claim-size", "2Gi"][..],
        &["--access-mode", "ReadWriteOncePod"][..],
    ] {
        let (code, out, err) = run(&fake, dir.path(), &[&INSTALL[..], change].concat());
        assert_eq!(code, 2, "{change:?}: {out}{err}");
        assert!(
            err.contains("statefulset/iogauge-canary-default-standard-")
                && err.contains(
                    ": its claims are 1Gi ReadWriteOnce of class standard, and a StatefulSet's \
                     claim template cannot change; uninstall first (claims are kept without \
                     --delete-claims), or keep --claim-size 1Gi --access-mode ReadWriteOnce"
                ),
            "{err}"
        );
        assert_eq!(updates(&fake), 0, "{:?}", fake.history());
    }
    // The same template again is an update, as before.
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[&INSTALL[..], &["--every", "1m"]].concat(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("statefulset/iogauge-canary-default-standard-") && out.contains(" updated"),
        "{out}"
    );
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
    assert_rbac_allows(&fake.requests());
}

#[test]
fn another_owners_object_and_the_canarys_own_labels_are_refused() {
    let dir = common::scratch();
    let fake = cluster(dir.path()).start();
    fake.put(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "iogauge-canary-default", "labels": {"app": "theirs"}},
        "spec": {"ports": [{"port": 80}]}}));
    let (code, out, err) = run(&fake, dir.path(), &INSTALL);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains(
            "service/iogauge-canary-default exists in namespace iogauge-test and is not canary \
             default's (it lacks the labels app.kubernetes.io/managed-by=iogauge and \
             iogauge.dev/canary=default): install does not take it over"
        ),
        "{err}"
    );
    assert!(fake.objects("StatefulSet").is_empty());
    let svc = fake.object("Service", "iogauge-canary-default").unwrap();
    assert_eq!(svc["metadata"]["labels"], json!({"app": "theirs"}));
    // Another name makes objects of other names: no conflict.
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &[&INSTALL[..], &["--name", "b"]].concat(),
    );
    assert_eq!(code, 0, "{err}");

    let requests = fake.requests().len();
    for (label, words) in [
        (
            "iogauge.dev/canary=x",
            "--monitor-label iogauge.dev/canary=x: iogauge.dev/canary is the canary's own label",
        ),
        (
            "app.kubernetes.io/managed-by=helm",
            "app.kubernetes.io/managed-by is the canary's own label",
        ),
        (
            "bad key=x",
            "--monitor-label 'bad key': expected a label key",
        ),
        (
            "release=a/b",
            "--monitor-label release='a/b': expected a label value",
        ),
    ] {
        let args = [&INSTALL[..], &["--name", "b", "--monitor-label", label]].concat();
        let (code, _, err) = run(&fake, dir.path(), &args);
        assert_eq!(code, 2, "{label}: {err}");
        assert!(err.contains(words), "{label}: {err}");
    }
    assert_eq!(
        fake.requests().len(),
        requests,
        "bad input asked the cluster"
    );
}

#[test]
fn prometheus_operator_never_after_auto_removes_the_monitors() {
    let dir = common::scratch();
    let fake = cluster(dir.path()).prometheus_operator().start();
    let (code, _, err) = run(&fake, dir.path(), &INSTALL);
    assert_eq!(code, 0, "{err}");
    assert_eq!(fake.objects("ServiceMonitor").len(), 1);
    let never = [&INSTALL[..], &["--prometheus-operator", "never"]].concat();
    let (code, out, err) = run(&fake, dir.path(), &never);
    assert_eq!(code, 0, "{err}");
    for what in [
        "servicemonitor/iogauge-canary-default deleted (no longer asked for)",
        "prometheusrule/iogauge-canary-default deleted (no longer asked for)",
    ] {
        assert!(out.contains(what), "{what}: {out}");
    }
    assert!(fake.objects("ServiceMonitor").is_empty() && fake.objects("PrometheusRule").is_empty());
    assert_eq!(fake.objects("StatefulSet").len(), 1);
    assert_rbac_allows(&fake.requests());
}

#[test]
fn uninstall_without_pod_monitors_removes_the_rest() {
    let dir = common::scratch();
    let fake = cluster(dir.path())
        .prometheus_operator_without_pod_monitors()
        .start();
    let (code, _, err) = run(&fake, dir.path(), &INSTALL);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&fake, dir.path(), &["canary", "uninstall"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("deleted servicemonitor/iogauge-canary-default"),
        "{out}"
    );
    assert!(fake.objects("StatefulSet").is_empty());
}
