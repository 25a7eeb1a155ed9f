//! `iogauge kube` at its edges (issue 25): API refusals of a create (ResourceQuota, LimitRange,
//! RBAC) told apart and rolled back, a missing kubeconfig and an unreachable server in one line,
//! an offline dry run (the kubeconfig's namespace, `--node NAME`, JSON), and `kube cleanup`
//! leaving young runs alone. Against the fake API server (tests/common/fake_kube/).
#![allow(clippy::unwrap_used)]

use crate::common;
use common::kube::{assert_nothing_left, document, two_classes, IMAGE};

use common::fake_kube::{
    BindingMode, FakeKube, NodeSeed, Refusal, Refuse, Scenario, StorageClassSeed,
};
use iogauge::report::document::{KubeDocument, TargetStatus};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

fn builder(dir: &Path) -> common::fake_kube::Builder {
    two_classes(dir)
        .node(NodeSeed::new("worker-1"))
        .node(NodeSeed::new("worker-2"))
}

/// `iogauge kube ARGS` with `KUBECONFIG` (None: unset) and `HOME` in `dir`.
fn kube(kubeconfig: Option<&Path>, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut c = common::cmd(env!("CARGO_BIN_EXE_iogauge"));
    c.arg("kube")
        .args(args)
        .env("IOGAUGE_IMAGE", IMAGE)
        .env("HOME", dir)
        .env_remove("KUBERNETES_SERVICE_HOST");
    match kubeconfig {
        Some(k) => c.env("KUBECONFIG", k),
        None => c.env_remove("KUBECONFIG"),
    };
    let out: Output = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

fn run(fake: &FakeKube, dir: &Path, args: &[&str]) -> (i32, String, String) {
    kube(Some(&fake.write_kubeconfig(dir)), dir, args)
}

/// The Job created for storage class `class` (its claim has the same name).
fn job_of(fake: &FakeKube, class: &str) -> String {
    fake.created("Job")
        .iter()
        .map(|j| j["metadata"]["name"].as_str().unwrap().to_string())
        .find(|n| n.contains(class))
        .unwrap_or_else(|| panic!("no Job for {class}: {:?}", fake.history()))
}

/// Two classes, the first one's claim refused by `why`: what the user sees about it, and the
/// second target's outcome.
fn refused_claim(why: Refusal) -> (FakeKube, tempfile::TempDir, String, KubeDocument, String) {
    let dir = common::scratch();
    let fake = builder(dir.path())
        .refuse(
            Refuse::creates_of("PersistentVolumeClaim", why).when("/spec/storageClassName", "fast"),
        )
        .start();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
            "--format",
            "json",
        ],
    );
    // The refused target is an error (1), unless a profile's verdict on this disk is worse (3).
    assert!([1, 3].contains(&code), "{code}: {err}");
    let doc = document(&out);
    let job = job_of(&fake, "fast");
    // Deleted at once, before the next target's Job was created.
    let second = job_of(&fake, "standard");
    assert!(
        fake.happened_before(
            &format!("deleted Job/{job}"),
            &format!("created Job/{second}")
        ),
        "{:?}",
        fake.history()
    );
    assert_eq!(doc.targets[1].status, TargetStatus::Completed, "{err}");
    assert_nothing_left(&fake);
    (fake, dir, err, doc, job)
}

#[test]
fn a_quota_refusal_deletes_the_job_at_once_names_the_flag_and_the_run_moves_on() {
    let (_fake, _dir, err, doc, job) = refused_claim(Refusal::Quota {
        quota: "storage".into(),
        resource: "requests.storage".into(),
        requested: "1Gi".into(),
        used: "9Gi".into(),
        limited: "10Gi".into(),
    });
    let reason = format!(
        "creating claim {job}: refused by a ResourceQuota of the namespace: \
         persistentvolumeclaims \"{job}\" is forbidden: exceeded quota: storage, requested: \
         requests.storage=1Gi, used: requests.storage=9Gi, limited: requests.storage=10Gi; ask \
         for less (a smaller --claim-size), let other work in the namespace end, or \
         ask an administrator to raise the quota (kubectl describe resourcequota) (job {job} \
         deleted)"
    );
    let t = &doc.targets[0];
    assert_eq!(t.status, TargetStatus::Failed);
    assert_eq!(t.reason.as_deref(), Some(reason.as_str()));
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class fast: could not start: {reason}\n"
        )),
        "{err}"
    );
    assert!(!err.contains("rbac.yaml"), "{err}");
}

#[test]
fn a_limit_range_refusal_names_the_claim_size_flag() {
    let (_fake, _dir, err, doc, job) = refused_claim(Refusal::LimitRange(
        "minimum storage usage per PersistentVolumeClaim is 5Gi, but request is 1Gi".into(),
    ));
    let reason = format!(
        "creating claim {job}: refused by a LimitRange of the namespace: persistentvolumeclaims \
         \"{job}\" is forbidden: minimum storage usage per PersistentVolumeClaim is 5Gi, but \
         request is 1Gi; set --claim-size within the range (kubectl describe limitrange shows the \
         allowed range) (job {job} deleted)"
    );
    assert_eq!(doc.targets[0].reason.as_deref(), Some(reason.as_str()));
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class fast: could not start: {reason}\n"
        )),
        "{err}"
    );
    assert!(!err.contains("rbac.yaml"), "{err}");
}

#[test]
fn only_a_real_rbac_refusal_points_at_rbac_yaml() {
    let dir = common::scratch();
    let fake = builder(dir.path())
        .refuse(Refuse::creates_of(
            "Job",
            Refusal::Rbac {
                user: "system:serviceaccount:ci:runner".into(),
            },
        ))
        .start();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let doc = document(&out);
    let ns = fake.namespace();
    for (t, class) in doc.targets.iter().zip(["fast", "standard"]) {
        let reason = format!(
            "creating job {}: forbidden: jobs.batch is forbidden: User \
             \"system:serviceaccount:ci:runner\" cannot create resource \"jobs\" in API group \
             \"batch\" in the namespace \"{ns}\"; the permissions iogauge needs are in \
             deploy/rbac.yaml",
            t.job
        );
        assert_eq!(t.status, TargetStatus::Failed);
        assert_eq!(t.reason.as_deref(), Some(reason.as_str()));
        assert!(
            err.contains(&format!(
                "iogauge kube: storage class {class}: could not start: {reason}\n"
            )),
            "{err}"
        );
    }
    assert!(fake.created("PersistentVolumeClaim").is_empty());
    assert_nothing_left(&fake);
}

/// A kubeconfig whose context `edge` (namespace team-a) points at `server`.
fn kubeconfig_at(dir: &Path, server: &str) -> PathBuf {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n\
         users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: edge\n  context:\n    \
         cluster: c\n    user: u\n    namespace: team-a\ncurrent-context: edge\n"
    );
    let path = dir.join("edge-kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

/// `http://127.0.0.1:PORT` where nothing listens (bound, then closed).
fn closed_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

#[test]
fn a_missing_kubeconfig_is_bad_input_in_one_line() {
    let dir = common::scratch();
    let missing = dir.path().join("nope/config");
    let m = missing.display();
    let args = ["check", "etcd", "--storage-class", "fast"];
    let (code, out, err) = kube(
        None,
        dir.path(),
        &[&args[..], &["--kubeconfig", &m.to_string()]].concat(),
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        format!(
            "iogauge kube: --kubeconfig {m}: no such file; expected a kubeconfig file such as \
             kubectl uses; pass an existing one, or leave out --kubeconfig to use $KUBECONFIG or \
             ~/.kube/config\n"
        )
    );
    let (code, _, err) = kube(Some(&missing), dir.path(), &args);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!(
            "iogauge kube: KUBECONFIG names {m}, which does not exist; expected a kubeconfig file \
             such as kubectl uses; point KUBECONFIG at yours or pass --kubeconfig FILE\n"
        )
    );
    let (code, _, err) = kube(None, dir.path(), &args);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!(
            "iogauge kube: no kubeconfig: KUBECONFIG is not set and {}/.kube/config does not \
             exist, and this is not a pod with a service account; pass --kubeconfig FILE or set \
             KUBECONFIG to the file kubectl uses\n",
            dir.path().display()
        )
    );
    let (code, _, err) = kube(
        None,
        dir.path(),
        &["cleanup", "--kubeconfig", &m.to_string()],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("iogauge kube: --kubeconfig "), "{err}");
}

#[test]
fn an_unreachable_server_is_named_with_its_cause_and_the_fix() {
    let dir = common::scratch();
    let url = closed_port();
    let k = kubeconfig_at(dir.path(), &url);
    let kd = k.display();
    let (code, out, err) = kube(
        Some(&k),
        dir.path(),
        &["check", "etcd", "--storage-class", "fast"],
    );
    assert_eq!((code, out.as_str()), (1, ""));
    let said = format!(
        "cannot reach the API server at {url}/ (context edge of {kd}): connection refused \
         (nothing listens at that address); check that the cluster is up and that the \
         kubeconfig points at it: kubectl cluster-info --kubeconfig {kd} --context edge"
    );
    assert_eq!(err, format!("iogauge kube: {said}\n"));
    // A dry run that must find its targets says it needs the cluster.
    let (code, out, err) = kube(
        Some(&k),
        dir.path(),
        &[
            "check",
            "etcd",
            "--nodes",
            "disk=ssd",
            "--host-path",
            "/var/lib/etcd",
            "--dry-run",
        ],
    );
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        format!(
            "iogauge kube: --dry-run with --nodes finds the targets in the cluster: {said}; to \
             review the manifests offline, name the targets with --storage-class NAME or --node \
             NAME\n"
        )
    );
}

/// The objects of a YAML stream or a JSON List, the run id replaced by RUN.
fn objects(text: &str, run: &str) -> Vec<Value> {
    let text = text.replace(run, "RUN");
    if text.trim_start().starts_with('{') {
        let list: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (&list["apiVersion"], &list["kind"]),
            (&"v1".into(), &"List".into())
        );
        return list["items"].as_array().unwrap().clone();
    }
    text.split("\n---\n")
        .filter_map(|d| yaml_serde::from_str::<Value>(d).ok())
        .filter(|v| v.is_object())
        .collect()
}

fn run_id(text: &str) -> String {
    let at = text.find("iogauge.dev/run").unwrap() + "iogauge.dev/run".len();
    text[at..]
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

#[test]
fn an_offline_dry_run_uses_the_contexts_namespace_named_nodes_and_prints_json() {
    let dir = common::scratch();
    let k = kubeconfig_at(dir.path(), &closed_port());
    let args = [
        "check",
        "etcd",
        "--node",
        "worker-1",
        "--node",
        "worker-2",
        "--host-path",
        "/var/lib/etcd",
        "--storage-class",
        "fast",
        "--dry-run",
    ];
    let (code, yaml, err) = kube(Some(&k), dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "iogauge kube: dry run: 3 target(s) in namespace team-a, nothing created. A real run \
         also gives each fresh claim an ownerReference to its Job (the Job's uid exists only \
         once it is created), so that deleting the Job deletes the claim\n"
    );
    assert!(yaml.contains("  namespace: team-a\n"), "{yaml}");
    assert!(!yaml.contains("namespace: default"), "{yaml}");
    let (code, json, err) = kube(
        Some(&k),
        dir.path(),
        &[&args[..], &["--format", "json"]].concat(),
    );
    assert_eq!(code, 0, "{err}");
    let from_yaml = objects(&yaml, &run_id(&yaml));
    let from_json = objects(&json, &run_id(&json));
    assert_eq!(
        from_yaml.len(),
        4,
        "two node Jobs, a class Job and its claim"
    );
    assert_eq!(from_json, from_yaml);
    let hosts: Vec<&Value> = from_json
        .iter()
        .filter(|o| o["kind"] == "Job")
        .map(|j| &j["spec"]["template"]["spec"]["nodeSelector"]["kubernetes.io/hostname"])
        .filter(|h| !h.is_null())
        .collect();
    assert_eq!(hosts, [&Value::from("worker-1"), &Value::from("worker-2")]);
    assert!(from_json
        .iter()
        .all(|o| o["metadata"]["namespace"] == "team-a"));
}

#[test]
fn node_names_are_checked_in_a_real_run_and_a_named_node_runs() {
    let dir = common::scratch();
    let fake = builder(dir.path()).start();
    let host = common::scratch();
    let host_path = host.path().to_str().unwrap();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--node",
            "worker-1",
            "--node",
            "worker-9",
            "--host-path",
            host_path,
        ],
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "iogauge kube: --node worker-9: no such node; the cluster has: worker-1, worker-2 \
         (kubectl get nodes)\n"
    );
    assert!(fake.created("Job").is_empty());
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--node",
            "worker-2",
            "--host-path",
            host_path,
            "--scale",
            "0.02",
            "--format",
            "json",
        ],
    );
    assert!([0, 3, 4].contains(&code), "{err}");
    let t = &document(&out).targets[0];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}", t.reason);
    assert_eq!(t.node.as_deref(), Some("worker-2"));
    assert_nothing_left(&fake);
}

#[test]
fn cleanup_leaves_young_runs_alone_unless_named_or_all() {
    let dir = common::scratch();
    let fake = builder(dir.path()).scenario(Scenario::Hang).start();
    fake.seed_run("old1xx", Duration::from_secs(7200));
    fake.seed_run("new1xx", Duration::from_secs(240));
    let (code, out, err) = run(&fake, dir.path(), &["cleanup"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("deleted job/iogauge-old1xx-standard\n"),
        "{out}"
    );
    assert!(!out.contains("new1xx"), "{out}");
    assert!(
        err.contains(
            "iogauge kube cleanup: run new1xx: started 4 min ago, left alone (younger than \
             --older-than 1 h); remove it with --run new1xx, or a shorter --older-than\n"
        ),
        "{err}"
    );
    assert!(err.ends_with(", 1 run(s) left alone\n"), "{err}");
    assert!(fake.object("Job", "iogauge-new1xx-standard").is_some());
    assert!(fake.object("Job", "iogauge-old1xx-standard").is_none());
    let (code, _, err) = run(&fake, dir.path(), &["cleanup", "--run", "new1xx", "--all"]);
    assert_eq!(code, 2, "{err}");
    let (code, out, err) = run(&fake, dir.path(), &["cleanup", "--older-than", "2m"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("deleted job/iogauge-new1xx-standard\n"),
        "{out}"
    );
    assert_nothing_left(&fake);
}

#[test]
fn cleanup_flags_are_checked_before_any_cluster_is_asked() {
    let dir = common::scratch();
    for (args, want) in [
        (
            &["cleanup", "--older-than", "soon"][..],
            "error: invalid value 'soon' for '--older-than <AGE>': 'soon': expected an age such \
             as 30d, 12h, 2w or 1d12h\n",
        ),
        (
            &["cleanup", "--all", "--run", "k3v9q2"][..],
            "error: the argument '--all' cannot be used with '--run <ID>'\n",
        ),
        (
            &["check", "--node", "Worker_1", "--host-path", "/d"][..],
            "iogauge kube check: --node 'Worker_1': expected a Kubernetes object name",
        ),
    ] {
        let (code, out, err) = kube(None, dir.path(), args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.starts_with(want), "{args:?}:\n{err}\nwanted: {want}");
    }
}

// --- review fixes ---

/// `kube cleanup` of a run left behind whose claim is of a Retain class: the volume made for
/// the claim is set to go with it first (as the controller does at a target's end) and said,
/// never left Released with its disk.
#[test]
fn cleanup_sets_a_left_claims_retain_volume_to_go_with_it_and_says_so() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(
            StorageClassSeed::new("keep", "ebs.csi.aws.com", BindingMode::Immediate)
                .reclaim_policy("Retain"),
        )
        .scenario(Scenario::Hang)
        .start();
    fake.seed_run_with_class("old1xx", Duration::from_secs(7200), Some("keep"));
    let claim = "iogauge-old1xx-standard";
    let t0 = std::time::Instant::now();
    let volume = loop {
        let c = fake.object("PersistentVolumeClaim", claim).unwrap();
        if let Some(v) = c["spec"]["volumeName"].as_str() {
            if fake.object("PersistentVolume", v).is_some() {
                break v.to_string();
            }
        }
        assert!(t0.elapsed().as_secs() < 10, "never bound: {c}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let (code, out, err) = run(&fake, dir.path(), &["cleanup"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("deleted persistentvolumeclaim/{claim}\n")),
        "{out}"
    );
    assert!(
        err.contains(&format!(
            "iogauge kube cleanup: persistentvolume/{volume}: reclaimPolicy Retain set to \
             Delete, so that it and its disk go with claim {claim}\n"
        )),
        "{err}"
    );
    assert!(
        fake.happened_before(
            &format!("patched PersistentVolume/{volume}"),
            &format!("deleted PersistentVolumeClaim/{claim}")
        ),
        "{:?}",
        fake.history()
    );
    assert!(fake.object("PersistentVolume", &volume).is_none());
    assert_nothing_left(&fake);
}
