//! Who `iogauge kube`'s pods run as, against the fake API server with real permissions: the
//! fake runs each container under `setpriv` as its runAsUser/runAsGroup/fsGroup (so it needs
//! root; skipped otherwise, failed under CI), a volume seeded with an owner stands in for an
//! NFS export that ignores fsGroup or another user's node directory; and OpenShift's SCC
//! admission refusing a fixed uid. And the manifests of each mode: the schema, and the Pod Security
//! level the docs promise.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::kube_manifests::{case, jobs, restricted_violations, validate};
use common::kube::{assert_nothing_left, run_json, IMAGE};

use common::fake_kube::{BindingMode, FakeKube, NodeSeed, Scenario, StorageClassSeed};
use iogauge::report::document::{KubeDocument, TargetStatus};
use serde_json::Value;
use std::path::Path;

/// The export's owner: not the pod's default uid 65532, not root.
const OWNER: u32 = 1000;

/// Whether the fake can run pods as other users; else says why the test is skipped.
fn can_switch_users() -> bool {
    if common::fake_kube::identity_honoured() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the identity tests need root (the fake runs pods under setpriv as their uid)"
    );
    eprintln!("skipping: the identity tests need root, to run pods as other users with setpriv");
    false
}

/// An NFS class whose volumes belong to [`OWNER`], a local-path class that honours fsGroup,
/// a worker whose directory belongs to [`OWNER`] and one whose directory is root's.
fn cluster(dir: &Path, scenarios: &[(&str, Scenario)]) -> FakeKube {
    let mut b = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .storage_class(StorageClassSeed::new(
            "nfs",
            "nfs.csi.k8s.io",
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
        .node(NodeSeed::new("worker-1").label("role", "etcd"))
        .node(NodeSeed::new("worker-2").label("role", "etcd"))
        .volume_owner("nfs", OWNER)
        .volume_owner("worker-1", OWNER);
    for (target, s) in scenarios {
        b = b.scenario_for(target, s.clone());
    }
    b.start()
}

fn run(fake: &FakeKube, dir: &Path, args: &[&str]) -> (i32, KubeDocument, String) {
    run_json(fake, dir, &[args, &["--pending-timeout", "20s"]].concat())
}

/// The reason a target gets when its pod's check may not write its volume: the pod's own line
/// (the fake's host directory standing in for `/data`), then the cause and the flag.
fn denied(fake: &FakeKube, hint: &str) -> String {
    let pods = fake.created("Pod");
    let pod = pods[0]["metadata"]["name"].as_str().unwrap();
    format!(
        "the pod ended (Error, exit code 2) without a result: no result in the pod's log; it \
         ends with: iogauge check: directory '{}' is not writable (Permission denied (os error \
         13)) ({hint})",
        fake.volume_dir(pod, "data").display()
    )
}

#[test]
fn an_nfs_volume_that_ignores_fs_group_names_the_owner_flag_and_the_run_moves_on() {
    if !can_switch_users() {
        return;
    }
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--scale",
            "0.02",
            "--storage-class",
            "nfs",
            "--storage-class",
            "standard",
        ],
    );
    // 1: a target could not run; 3 if the one that ran measured a FAIL on this disk.
    assert!(matches!(code, 1 | 3), "{code}: {err}");
    let want = denied(
        &fake,
        "nfs.csi.k8s.io volumes usually ignore fsGroup, so the export's owner stays and uid \
         65532 may not write it: use --run-as-user <owner uid> or --supplemental-group <owner \
         gid> of the export, or --security-context root",
    );
    assert_eq!(doc.targets[0].status, TargetStatus::Failed);
    assert_eq!(doc.targets[0].reason.as_deref(), Some(want.as_str()));
    assert!(
        err.lines()
            .any(|l| l == format!("iogauge kube: storage class nfs: failed: {want}")),
        "{err}"
    );
    // The next target, whose provisioner honours fsGroup, runs as uid 65532 and passes.
    assert_eq!(
        doc.targets[1].status,
        TargetStatus::Completed,
        "{:?}\n{err}",
        doc.targets[1].reason
    );
    assert_nothing_left(&fake);
}

#[test]
fn running_as_the_exports_owner_writes_it() {
    if !can_switch_users() {
        return;
    }
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--scale",
            "0.02",
            "--storage-class",
            "nfs",
            "--run-as-user",
            "1000",
        ],
    );
    assert_ne!(code, 1, "{err}");
    assert_eq!(
        doc.targets[0].status,
        TargetStatus::Completed,
        "{:?}\n{err}",
        doc.targets[0].reason
    );
    let job = &fake.created("Job")[0];
    let psc = &job["spec"]["template"]["spec"]["securityContext"];
    assert_eq!(
        (psc["runAsUser"].as_i64(), psc["fsGroup"].as_i64()),
        (Some(1000), Some(1000))
    );
    assert_nothing_left(&fake);
}

#[test]
fn a_node_directory_of_another_user_needs_run_as_user_of_its_owner() {
    if !can_switch_users() {
        return;
    }
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let mut args = vec![
        "check",
        "etcd",
        "--scale",
        "0.02",
        "--host-path",
        "/var/lib/etcd",
        "--nodes",
    ];
    args.push("role=etcd");
    let (code, doc, err) = run(&fake, dir.path(), &args);
    // 1: a target could not run; 3 if the one that ran measured a FAIL on this disk.
    assert!(matches!(code, 1 | 3), "{code}: {err}");
    let want = denied(
        &fake,
        "/var/lib/etcd on the node belongs to another user, and uid 0 without capabilities may \
         not write it: run as its owner with --run-as-user <owner uid> (ls -ln /var/lib/etcd on \
         the node shows it)",
    );
    assert_eq!(doc.targets[0].reason.as_deref(), Some(want.as_str()));
    assert!(
        err.lines()
            .any(|l| l == format!("iogauge kube: node worker-1: failed: {want}")),
        "{err}"
    );
    // worker-2's directory is root's: the run moves on and measures it.
    assert_eq!(
        doc.targets[1].status,
        TargetStatus::Completed,
        "{:?}\n{err}",
        doc.targets[1].reason
    );
    assert_nothing_left(&fake);
    args.pop();
    args.extend(["kubernetes.io/hostname=worker-1", "--run-as-user", "1000"]);
    let (_, doc, err) = run(&fake, dir.path(), &args);
    assert_eq!(doc.targets.len(), 1);
    assert_eq!(
        doc.targets[0].status,
        TargetStatus::Completed,
        "{:?}\n{err}",
        doc.targets[0].reason
    );
    assert_nothing_left(&fake);
}

#[test]
fn an_scc_refusal_says_to_let_the_platform_choose_the_ids() {
    let dir = common::scratch();
    // OpenShift's wording (4.11+): the SCCs this account may not use, then restricted-v2's refusal.
    let scc = "unable to validate against any security context constraint: [provider \"anyuid\": \
               Forbidden: not usable by user or serviceaccount, provider restricted-v2: \
               .spec.securityContext.fsGroup: Invalid value: []int64{65532}: 65532 is not an \
               allowed group, spec.containers[0].securityContext.runAsUser: Invalid value: 65532: \
               must be in the ranges: [1000680000, 1000689999], provider \"restricted\": Forbidden: \
               not usable by user or serviceaccount, provider \"privileged\": Forbidden: not usable \
               by user or serviceaccount]";
    let fake = cluster(dir.path(), &[("nfs", Scenario::Forbidden(scc.into()))]);
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--scale",
            "0.02",
            "--storage-class",
            "nfs",
            "--storage-class",
            "standard",
        ],
    );
    // 1: a target could not run; 3 if the one that ran measured a FAIL on this disk.
    assert!(matches!(code, 1 | 3), "{code}: {err}");
    let want = "OpenShift's security context constraints refused the pod (restricted-v2: \
                .spec.securityContext.fsGroup: Invalid value: []int64{65532}: 65532 is not an \
                allowed group, spec.containers[0].securityContext.runAsUser: Invalid value: 65532: \
                must be in the ranges: [1000680000, 1000689999]): use --security-context platform, \
                so that the SCC assigns the uid, gid and fsGroup";
    assert_eq!(doc.targets[0].reason.as_deref(), Some(want));
    assert!(
        err.lines()
            .any(|l| l.contains("storage class nfs") && l.ends_with(want)),
        "{err}"
    );
    assert_eq!(
        doc.targets[1].status,
        TargetStatus::Completed,
        "{:?}\n{err}",
        doc.targets[1].reason
    );
    assert_nothing_left(&fake);
}

#[test]
fn contradicting_identity_flags_are_refused_with_the_fix() {
    let bad: [(&[&str], &str); 4] = [
        (
            &["--security-context", "platform", "--run-as-user", "1000"],
            "iogauge kube check: --security-context platform leaves the uid and gid to the platform (OpenShift assigns them from the namespace's range): drop --run-as-user/--run-as-group, or use --security-context restricted to set them\n",
        ),
        (
            &["--security-context", "root", "--run-as-group", "5"],
            "iogauge kube check: --security-context root runs as uid 0 and gid 0: drop --run-as-user/--run-as-group, or use --security-context restricted with them\n",
        ),
        (
            &["--run-as-user", "0"],
            "iogauge kube check: --run-as-user 0: for uid 0 use --security-context root (the namespace then needs Pod Security baseline)\n",
        ),
        (
            &["--size", "20Gi"],
            "'20Gi' is a Kubernetes quantity, but --size is the test file's size (as in iogauge check, e.g. 512m or 1g); for the claim's size use --claim-size 20Gi",
        ),
    ];
    for (extra, want) in bad {
        let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args([
                "kube",
                "check",
                "etcd",
                "--storage-class",
                "fast",
                "--image",
                IMAGE,
                "--dry-run",
            ])
            .args(extra)
            .env("KUBECONFIG", "/nonexistent")
            .output()
            .unwrap();
        let err = common::text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(out.stdout.is_empty());
        assert!(err.contains(want), "{extra:?}:\n{err}\nwanted: {want}");
    }
}

// Manifests (dry run): the schema and the Pod Security level of each mode.

/// Pod Security "baseline" (the same page): what restricted allows plus root and more
/// capabilities; hostPath, host namespaces, privileged, host ports still refused.
fn baseline_violations(pod: &Value) -> Vec<String> {
    const CAPS: [&str; 13] = [
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    ];
    let mut v = Vec::new();
    for vol in pod["volumes"].as_array().into_iter().flatten() {
        if vol.get("hostPath").is_some() {
            v.push("volume type hostPath".to_string());
        }
    }
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        if pod[host] == Value::Bool(true) {
            v.push(host.into());
        }
    }
    let psc = &pod["securityContext"];
    if psc["seccompProfile"]["type"] == "Unconfined" {
        v.push("seccomp Unconfined".into());
    }
    for c in pod["containers"].as_array().unwrap() {
        let sc = &c["securityContext"];
        if sc["privileged"] == Value::Bool(true) {
            v.push("privileged".into());
        }
        for add in sc["capabilities"]["add"].as_array().into_iter().flatten() {
            if !CAPS.contains(&add.as_str().unwrap_or("")) {
                v.push(format!("adds capability {add}"));
            }
        }
        if sc["seccompProfile"]["type"] == "Unconfined" {
            v.push("seccomp Unconfined".into());
        }
        for p in c["ports"].as_array().into_iter().flatten() {
            if p["hostPort"].as_i64().unwrap_or(0) != 0 {
                v.push("hostPort".into());
            }
        }
        if sc["procMount"].as_str().is_some_and(|m| m != "Default") {
            v.push("procMount".into());
        }
    }
    v
}

/// Each `--security-context` mode, dry run: the schema, and the Pod Security level its docs
/// promise (restricted and platform: restricted; root: baseline).
#[test]
fn every_identity_mode_meets_the_schema_and_its_pod_security_level() {
    let pod_of = |out: &str| jobs(out)[0]["spec"]["template"]["spec"].clone();
    let ids = |pod: &Value| {
        let psc = &pod["securityContext"];
        let sc = &pod["containers"][0]["securityContext"];
        [
            psc["runAsUser"].as_i64(),
            psc["runAsGroup"].as_i64(),
            psc["fsGroup"].as_i64(),
            sc["runAsUser"].as_i64(),
            sc["runAsGroup"].as_i64(),
        ]
    };

    // Platform: no ids at all, so OpenShift's restricted-v2 assigns them; still restricted.
    let out = case(
        "identity-platform",
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--security-context",
            "platform",
        ],
    );
    let pod = pod_of(&out);
    assert_eq!(restricted_violations(&pod), Vec::<String>::new());
    assert_eq!(ids(&pod), [None; 5]);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert!(pod["securityContext"].get("fsGroupChangePolicy").is_none());

    // Root: uid 0 with every capability still dropped; baseline, not restricted.
    let out = case(
        "identity-root",
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--security-context",
            "root",
        ],
    );
    let pod = pod_of(&out);
    assert_eq!(
        restricted_violations(&pod),
        ["runAsNonRoot is not true", "runAsUser 0"]
    );
    assert_eq!(baseline_violations(&pod), Vec::<String>::new());
    assert_eq!(ids(&pod), [Some(0), Some(0), None, Some(0), Some(0)]);

    // Restricted with the export owner's ids and a supplemental group: still restricted.
    let out = case(
        "identity-owner",
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--run-as-user",
            "1000",
            "--run-as-group",
            "1001",
            "--supplemental-group",
            "5000",
            "--supplemental-group",
            "5001",
        ],
    );
    let pod = pod_of(&out);
    assert_eq!(restricted_violations(&pod), Vec::<String>::new());
    assert_eq!(
        ids(&pod),
        [Some(1000), Some(1001), Some(1001), Some(1000), Some(1001)]
    );
    assert_eq!(
        pod["securityContext"]["supplementalGroups"],
        serde_json::json!([5000, 5001])
    );

    // The default stays as it was.
    let pod = pod_of(&case("storage-class", &["etcd", "--storage-class", "fast"]));
    assert_eq!(
        ids(&pod),
        [
            Some(65532),
            Some(65532),
            Some(65532),
            Some(65532),
            Some(65532)
        ]
    );
}

/// A node target as the owner of its directory (an etcd data dir owned by `etcd`): non-root,
/// so only hostPath keeps it from restricted (privileged is needed for hostPath anyway).
#[test]
fn a_node_target_can_run_as_the_owner_of_its_directory() {
    use common::fake_kube::{FakeKube, NodeSeed};
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .node(NodeSeed::new("cp-1"))
        .start();
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "kube",
            "check",
            "etcd",
            "--nodes",
            "kubernetes.io/hostname=cp-1",
            "--host-path",
            "/var/lib/etcd",
            "--run-as-user",
            "998",
            "--image",
            "registry.example/iogauge:0.1",
            "--dry-run",
        ])
        .env("KUBECONFIG", fake.write_kubeconfig(dir.path()))
        .output()
        .unwrap();
    let yaml = common::text(&out.stdout);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    validate("node-owner", &yaml);
    let pod = &jobs(&yaml)[0]["spec"]["template"]["spec"];
    assert_eq!(restricted_violations(pod), ["volume type hostPath"]);
    assert_eq!(pod["securityContext"]["runAsUser"], 998);
    assert_eq!(pod["securityContext"]["runAsGroup"], 998);
    assert!(pod["securityContext"].get("fsGroup").is_none());
}
