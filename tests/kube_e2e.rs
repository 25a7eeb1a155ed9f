//! `iogauge kube check` against a real cluster. Runs only when IOGAUGE_KUBE_E2E names a
//! kubeconfig (kind, k3s, a cloud cluster) and IOGAUGE_IMAGE an image the cluster can pull
//! (scripts/build-image, then push or `kind load docker-image`); the storage class is
//! IOGAUGE_KUBE_E2E_CLASS, or every class. No cluster can run where this project is built, so
//! CI skips it (README, docs/KUBERNETES.md).
#![allow(clippy::unwrap_used)]

use crate::common;

use iogauge::report::document::{KubeDocument, TargetStatus};

#[test]
fn a_real_cluster_runs_the_check_and_keeps_nothing() {
    let Some(kubeconfig) = std::env::var_os("IOGAUGE_KUBE_E2E") else {
        eprintln!("skipping: set IOGAUGE_KUBE_E2E to a kubeconfig (and IOGAUGE_IMAGE) to run it");
        return;
    };
    assert!(
        std::env::var_os("IOGAUGE_IMAGE").is_some(),
        "IOGAUGE_IMAGE must name the image the cluster pulls"
    );
    let mut args = vec![
        "kube", "check", "etcd", "--scale", "0.1", "--format", "json",
    ];
    let class = std::env::var("IOGAUGE_KUBE_E2E_CLASS").ok();
    match &class {
        Some(c) => args.extend(["--storage-class", c.as_str()]),
        None => args.push("--all-storage-classes"),
    }
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(&args)
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .unwrap();
    let err = common::text(&out.stderr);
    let code = out.status.code().unwrap();
    assert!([0, 3, 4].contains(&code), "exit {code}:\n{err}");
    let doc: KubeDocument = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!doc.targets.is_empty());
    for t in &doc.targets {
        assert_eq!(
            t.status,
            TargetStatus::Completed,
            "{}: {:?}",
            t.target,
            t.reason
        );
        let check = t.check.as_ref().unwrap();
        assert_eq!(check.context.directory.as_deref(), Some("/data"));
        assert!(t.node.is_some());
        let etcd = &check.profiles[0];
        assert!(etcd.value.unwrap() > 0.0);
    }
    // Everything the run created was deleted: cleanup finds no Job and no claim of it.
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "cleanup", "--run", &doc.run_id])
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .unwrap();
    let listed = common::text(&out.stdout);
    assert!(
        !listed.contains("job/") && !listed.contains("persistentvolumeclaim/"),
        "left behind:\n{listed}"
    );
}
