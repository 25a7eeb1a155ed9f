//! `iogauge kube check --dry-run`: the manifests for each option, compared with committed
//! snapshots (UPDATE_SNAPSHOTS=1 rewrites them), validated offline against Kubernetes 1.33's
//! OpenAPI schema with the `kubernetes-validate` Python package, and checked against every rule
//! of the Pod Security "restricted" profile.
#![allow(clippy::unwrap_used)]

use crate::common;

use serde_json::Value;
use std::path::PathBuf;

fn iogauge(args: &[&str]) -> (i32, String, String) {
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .env_remove("IOGAUGE_IMAGE")
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

/// The YAML with the run's random id replaced, so that snapshots compare.
fn normalized(yaml: &str) -> String {
    let id = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("iogauge.dev/run: "))
        .expect("a run label")
        .to_string();
    yaml.replace(&id, "RUNID")
}

pub(crate) fn documents(yaml: &str) -> Vec<Value> {
    yaml.split("\n---\n")
        .chain([""])
        .filter_map(|d| {
            let d = d.trim_start_matches("---\n");
            let body: String = d
                .lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n");
            (!body.trim().is_empty()).then(|| yaml_serde::from_str::<Value>(&body).unwrap())
        })
        .collect()
}

fn snapshot(name: &str, yaml: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/kube")
        .join(format!("{name}.yaml"));
    let got = normalized(yaml);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing: run with UPDATE_SNAPSHOTS=1", path.display()));
    assert_eq!(
        got, want,
        "{name}: the manifests changed; if on purpose, UPDATE_SNAPSHOTS=1"
    );
}

/// kubernetes-validate, strict, against 1.33 (k8s-openapi's `earliest`). Without it, the test
/// skips this step outside CI and fails under CI (.ci/run installs it).
pub(crate) fn validate(name: &str, yaml: &str) {
    let ok = common::cmd("kubernetes-validate").arg("--version").output();
    if ok.is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "kubernetes-validate is not installed (pip install kubernetes-validate)"
        );
        eprintln!("skipping schema validation: pip install kubernetes-validate to run it");
        return;
    }
    let dir = common::scratch();
    let f = dir.path().join(format!("{name}.yaml"));
    std::fs::write(&f, yaml).unwrap();
    let out = common::cmd("kubernetes-validate")
        .args(["--strict", "-k", "1.33.0"])
        .arg(&f)
        .output()
        .unwrap();
    let text = common::text(&out.stdout) + &common::text(&out.stderr);
    assert!(
        out.status.success(),
        "{name}: schema validation failed:\n{text}"
    );
    let passed = text.matches(" passed for resource ").count();
    assert_eq!(passed, documents(yaml).len(), "{text}");
}

/// Every rule of Pod Security "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards),
/// as violations in words; empty when the pod spec meets the profile.
pub(crate) fn restricted_violations(pod: &Value) -> Vec<String> {
    let mut v = Vec::new();
    const VOLUMES: [&str; 8] = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    for vol in pod["volumes"].as_array().into_iter().flatten() {
        for k in vol.as_object().unwrap().keys() {
            if k != "name" && !VOLUMES.contains(&k.as_str()) {
                v.push(format!("volume type {k}"));
            }
        }
    }
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        if pod[host] == Value::Bool(true) {
            v.push(host.into());
        }
    }
    let psc = &pod["securityContext"];
    for c in pod["containers"].as_array().unwrap() {
        let sc = &c["securityContext"];
        if sc["privileged"] == Value::Bool(true) {
            v.push("privileged".into());
        }
        if sc["allowPrivilegeEscalation"] != Value::Bool(false) {
            v.push("allowPrivilegeEscalation is not false".into());
        }
        let non_root = sc["runAsNonRoot"]
            .as_bool()
            .or(psc["runAsNonRoot"].as_bool());
        if non_root != Some(true) {
            v.push("runAsNonRoot is not true".into());
        }
        let uid = sc["runAsUser"].as_i64().or(psc["runAsUser"].as_i64());
        if uid == Some(0) {
            v.push("runAsUser 0".into());
        }
        let seccomp = sc["seccompProfile"]["type"]
            .as_str()
            .or(psc["seccompProfile"]["type"].as_str());
        if !matches!(seccomp, Some("RuntimeDefault" | "Localhost")) {
            v.push("seccompProfile is not RuntimeDefault or Localhost".into());
        }
        let drop = &sc["capabilities"]["drop"];
        if !drop
            .as_array()
            .is_some_and(|d| d.iter().any(|x| x == "ALL"))
        {
            v.push("capabilities do not drop ALL".into());
        }
        for add in sc["capabilities"]["add"].as_array().into_iter().flatten() {
            if add != "NET_BIND_SERVICE" {
                v.push(format!("adds capability {add}"));
            }
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

pub(crate) fn jobs(yaml: &str) -> Vec<Value> {
    documents(yaml)
        .into_iter()
        .filter(|d| d["kind"] == "Job")
        .collect()
}

pub(crate) fn case(name: &str, args: &[&str]) -> String {
    let mut all = vec!["kube", "check"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--image", "registry.example/iogauge:0.1", "--dry-run"]);
    let (rc, out, err) = iogauge(&all);
    assert_eq!(rc, 0, "{name}: {err}");
    assert!(
        err.contains("nothing created"),
        "{name}: the dry run must say so: {err}"
    );
    snapshot(name, &out);
    validate(name, &out);
    normalized(&out)
}

#[test]
fn storage_class_manifests_meet_the_schema_and_restricted_by_default() {
    let out = case("storage-class", &["etcd", "--storage-class", "fast"]);
    let docs = documents(&out);
    assert_eq!(docs.len(), 2);
    let job = &docs[0];
    let claim = &docs[1];
    assert_eq!(job["kind"], "Job");
    assert_eq!(claim["kind"], "PersistentVolumeClaim");
    let spec = &job["spec"];
    assert_eq!(spec["backoffLimit"], 0);
    assert_eq!(spec["activeDeadlineSeconds"], 1800);
    assert!(spec["ttlSecondsAfterFinished"].as_i64().unwrap() > 0);
    let pod = &spec["template"]["spec"];
    assert_eq!(restricted_violations(pod), Vec::<String>::new());
    // Never pinned with nodeName: WaitForFirstConsumer needs the scheduler to choose.
    assert!(pod.get("nodeName").is_none());
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["securityContext"]["fsGroup"], 65532);
    // The claim the pod mounts is the claim created, in the class asked for, with room.
    assert_eq!(
        pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        claim["metadata"]["name"]
    );
    assert_eq!(claim["spec"]["storageClassName"], "fast");
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "1Gi");
    let args: Vec<&str> = pod["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        ["check", "etcd", "--dir", "/data", "--format", "kube-frames"]
    );
    for d in &docs {
        assert_eq!(
            d["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "iogauge"
        );
        assert_eq!(d["metadata"]["labels"]["iogauge.dev/run"], "RUNID");
    }
}

#[test]
fn every_pod_option_lands_in_the_manifest() {
    let out = case(
        "all-options",
        &[
            "etcd",
            "sync-iops",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard.hdd",
            "--claim-size",
            "20Gi",
            "--toleration",
            "dedicated=storage:NoSchedule",
            "--tolerate-control-plane",
            "--node-selector",
            "disk=ssd",
            "--image-pull-secret",
            "regcred",
            "--image-pull-policy",
            "Always",
            "--cpu-request",
            "250m",
            "--memory-limit",
            "1Gi",
            "--cpu-limit",
            "2",
            "--service-account",
            "bench",
            "--namespace",
            "perf",
            "--timeout",
            "10m",
            "--duration",
            "10s",
            "--scale",
            "0.5",
            "--strict",
            "--access-mode",
            "ReadWriteOncePod",
        ],
    );
    let jobs = jobs(&out);
    assert_eq!(jobs.len(), 2);
    // A readable tail and a hash of the kind and full name.
    let name = jobs[1]["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("iogauge-RUNID-standard-hdd-"), "{name}");
    assert_eq!(
        name.len(),
        "iogauge-RUNID-standard-hdd-".len() + 5,
        "{name}"
    );
    for j in &jobs {
        assert_eq!(j["metadata"]["namespace"], "perf");
        assert_eq!(j["spec"]["activeDeadlineSeconds"], 600);
        let pod = &j["spec"]["template"]["spec"];
        assert_eq!(restricted_violations(pod), Vec::<String>::new());
        assert_eq!(pod["nodeSelector"]["disk"], "ssd");
        assert_eq!(pod["serviceAccountName"], "bench");
        assert_eq!(pod["imagePullSecrets"][0]["name"], "regcred");
        let tol = pod["tolerations"].as_array().unwrap();
        assert_eq!(tol.len(), 3);
        assert_eq!(tol[0]["key"], "dedicated");
        assert_eq!(tol[0]["operator"], "Equal");
        assert_eq!(tol[1]["key"], "node-role.kubernetes.io/control-plane");
        let c = &pod["containers"][0];
        assert_eq!(c["imagePullPolicy"], "Always");
        assert_eq!(c["resources"]["requests"]["cpu"], "250m");
        assert_eq!(c["resources"]["limits"]["memory"], "1Gi");
        assert_eq!(c["resources"]["limits"]["cpu"], "2");
        let args = c["args"].to_string();
        for a in ["--scale=0.5", "--duration=10000ms", "--strict"] {
            assert!(args.contains(a), "{a} missing from {args}");
        }
        // 20Gi holds the 1 GiB files of sync-iops: no cap.
        assert!(!args.contains("--max-size"), "{args}");
    }
}

#[test]
fn a_claim_too_small_for_the_profile_caps_the_test_file() {
    let out = case(
        "small-claim",
        &[
            "sync-iops",
            "--storage-class",
            "fast",
            "--claim-size",
            "512Mi",
        ],
    );
    let job = &jobs(&out)[0];
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    // 80% of 512 MiB, in whole MiB: the file fits with room for the filesystem.
    assert!(
        args.contains(&format!("\"--max-size={}\"", 409u64 << 20)),
        "{args}"
    );
    let claim = &documents(&out)[1];
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "512Mi");
    // The default claim for sync-iops' 1 GiB file is 2Gi (1 GiB + 25%, in whole Gi).
    let (_, out, _) = iogauge(&[
        "kube",
        "check",
        "sync-iops",
        "--storage-class",
        "fast",
        "--image",
        "i",
        "--dry-run",
    ]);
    assert!(out.contains("storage: 2Gi"), "{out}");
    assert!(!out.contains("--max-size"));
}

#[test]
fn resources_can_be_dropped_and_bad_input_says_what_to_do() {
    let out = case(
        "no-resources",
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--memory-limit",
            "none",
            "--memory-request",
            "none",
            "--cpu-request",
            "none",
        ],
    );
    assert!(jobs(&out)[0]["spec"]["template"]["spec"]["containers"][0]
        .get("resources")
        .is_some_and(|r| r.as_object().unwrap().is_empty()));
    let bad: [(&[&str], &str); 8] = [
        (
            &["kube", "check", "etcd", "--image", "i"],
            "iogauge kube check: no target: name --storage-class NAME, --all-storage-classes, --claim NAME, or --nodes SELECTOR (or --node NAME) with --host-path DIR\n",
        ),
        (
            &["kube", "check", "etcd", "--storage-class", "x"],
            "iogauge kube check: no image: build one with scripts/build-image TAG, push it to a registry the cluster can pull from, and pass --image TAG (or set IOGAUGE_IMAGE)\n",
        ),
        (
            &["kube", "check", "etdc", "--storage-class", "x", "--image", "i"],
            "iogauge kube check: unknown profile 'etdc'; did you mean 'etcd'?\n",
        ),
        (
            &["kube", "check", "my.yaml", "--storage-class", "x", "--image", "i"],
            "iogauge kube check: cannot read profile 'my.yaml': No such file or directory (os error 2)\n",
        ),
        (
            &["kube", "check", "--storage-class", "x", "--image", "i", "--claim-size", "20GB"],
            "'20GB' is not a Kubernetes quantity",
        ),
        (
            &["kube", "check", "--storage-class", "x", "--image", "i", "--toleration", "a=b:Never"],
            "the effect 'Never' is not one of NoSchedule, PreferNoSchedule, NoExecute",
        ),
        (
            &["kube", "check", "--nodes", "a=b", "--host-path", "var/lib", "--image", "i"],
            "iogauge kube check: --host-path 'var/lib': expected an absolute path on the node, e.g. /var/lib/etcd\n",
        ),
        (
            &["kube", "check", "--nodes", "a=b", "--image", "i"],
            "the following required arguments were not provided:\n  --host-path <DIR>",
        ),
    ];
    for (args, want) in bad {
        let (rc, out, err) = iogauge(args);
        assert_eq!(rc, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(err.contains(want), "{args:?}:\n{err}\nwanted: {want}");
    }
}

#[test]
fn a_dry_run_that_must_find_targets_says_it_needs_a_cluster() {
    let (rc, out, err) = iogauge(&[
        "kube",
        "check",
        "--all-storage-classes",
        "--image",
        "i",
        "--dry-run",
    ]);
    // A kubeconfig that is not there is the user's input: exit 2.
    assert_eq!(rc, 2, "{err}");
    assert!(out.is_empty());
    assert_eq!(
        err,
        "iogauge kube: --dry-run with --all-storage-classes finds the targets in the cluster: \
         KUBECONFIG names /nonexistent, which does not exist; expected a kubeconfig file such as \
         kubectl uses; point KUBECONFIG at yours or pass --kubeconfig FILE; to review the \
         manifests offline, name the targets with --storage-class NAME or --node NAME\n"
    );
}

#[test]
fn the_rbac_file_meets_the_schema() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/rbac.yaml");
    validate("rbac", &std::fs::read_to_string(path).unwrap());
}

/// Node targets need the cluster to find the nodes: a dry run against the fake API server.
#[test]
fn node_targets_differ_from_restricted_only_where_a_host_directory_forces_it() {
    use common::fake_kube::{FakeKube, NodeSeed};
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .node(
            NodeSeed::new("cp-1")
                .label("node-role.kubernetes.io/control-plane", "")
                .taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
        )
        .node(NodeSeed::new("worker-1"))
        .start();
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "kube",
            "check",
            "etcd",
            "--nodes",
            "node-role.kubernetes.io/control-plane",
            "--host-path",
            "/var/lib/etcd",
            "--tolerate-control-plane",
            "--image",
            "registry.example/iogauge:0.1",
            "--dry-run",
        ])
        .env("KUBECONFIG", fake.write_kubeconfig(dir.path()))
        .output()
        .unwrap();
    let yaml = common::text(&out.stdout);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    snapshot("node", &yaml);
    validate("node", &yaml);
    let docs = documents(&yaml);
    assert_eq!(docs.len(), 1, "a Job and no claim");
    let pod = &docs[0]["spec"]["template"]["spec"];
    assert_eq!(
        restricted_violations(pod),
        [
            "volume type hostPath",
            "runAsNonRoot is not true",
            "runAsUser 0"
        ]
    );
    assert_eq!(pod["nodeSelector"]["kubernetes.io/hostname"], "cp-1");
    assert_eq!(pod["volumes"][0]["hostPath"]["type"], "Directory");
    assert!(pod["securityContext"].get("fsGroup").is_none());
    assert!(fake.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn block_claims_give_the_pod_the_device_and_run_as_root_for_it() {
    let out = case(
        "block",
        &["--storage-class", "fast", "--volume-mode", "Block"],
    );
    let docs = documents(&out);
    let pod = &docs[0]["spec"]["template"]["spec"];
    assert_eq!(docs[1]["spec"]["volumeMode"], "Block");
    let c = &pod["containers"][0];
    assert!(c.get("volumeMounts").is_none());
    assert_eq!(c["volumeDevices"][0]["devicePath"], "/dev/iogauge");
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    // The default suite without small-files, on the device iogauge created.
    assert_eq!(
        args,
        [
            "check",
            "etcd",
            "sync-iops",
            "gitlab",
            "--device",
            "/dev/iogauge",
            "--allow-overwrite",
            "--format",
            "kube-frames"
        ]
    );
    assert_eq!(
        restricted_violations(pod),
        ["runAsNonRoot is not true", "runAsUser 0"]
    );
    assert!(pod["securityContext"].get("fsGroup").is_none());
    for (args, want) in [
        (
            &["kube", "check", "--claim", "c", "--volume-mode", "Block", "--image", "i"][..],
            "iogauge kube check: --volume-mode Block applies to fresh claims: name --storage-class or --all-storage-classes\n",
        ),
        (
            &["kube", "check", "small-files", "--storage-class", "c", "--volume-mode", "Block", "--image", "i"][..],
            "iogauge kube check: small-files needs a filesystem, and --volume-mode Block gives the pod a raw device; leave it out or use --volume-mode Filesystem\n",
        ),
    ] {
        let (rc, out, err) = iogauge(args);
        assert_eq!((rc, out.as_str(), err.as_str()), (2, "", want));
    }
}
