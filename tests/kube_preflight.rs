//! `iogauge kube preflight`'s pod side, for real on this machine: `iogauge preflight SPEC
//! --format kube-frames [--directory-map NODE_DIR=MOUNT]` as a pod would run it prints only the
//! preflight document as frames on stdout, writes no file, exits 0 whenever it printed one (the
//! controller judges every node's results), and the controller's reader gives it back. Then
//! `iogauge kube preflight` against the fake API server (three nodes, one without the spec's
//! directory), with the pods' commands run for real.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use common::fake_kube::{FakeKube, NodeSeed, Scenario};
use iogauge::cluster::preflight::parse_preflight_log;
use iogauge::report::document::{KubeDocument, TargetStatus};
use serde_json::Value;
use std::path::Path;

pub(crate) fn spec(dir: &Path, when: &str) -> String {
    format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: etcd\nspec:\n  \
         hostCollectors:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        \
         directory: {}\n        fileSize: 256Ki\n        operationSize: 2300\n        datasync: true\n  \
         hostAnalyzers:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        outcomes:\n          \
         - fail: {{when: \"{when}\", message: \"too slow: {{{{ .P99 }}}}\"}}\n          \
         - pass: {{message: fine}}\n",
        dir.display()
    )
}

#[test]
fn a_pods_preflight_prints_only_frames_and_writes_no_files() {
    let d = scratch();
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("etcd"), "p99 >= 0"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        common::cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["preflight", "s.yaml", "--format", "kube-frames"])
            .args(args)
            .current_dir(d.path())
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.lines().all(|l| l.starts_with("iogauge-frame 1 ")),
        "{out}"
    );
    // The pod's stderr lands between the frames in its log.
    let doc = parse_preflight_log(&format!("{}{out}", text(&o.stderr))).unwrap();
    assert_eq!(doc.name, "etcd");
    assert_eq!(doc.collectors.len(), 1);
    let c = &doc.collectors[0];
    assert_eq!(c.name, "etcd-perf");
    let r = c.results.as_ref().unwrap();
    assert_eq!(r.len(), 20);
    assert!(r["Min"] <= r["P99"] && r["P99"] <= r["Max"], "{r:?}");
    // The controller judges all nodes' results: none here, and no file beside the spec.
    assert!(doc.outcomes.is_empty());
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["s.yaml"]);

    // A collector that cannot run still gives a document, and exit 0 (the Job is Complete).
    std::fs::write(
        d.path().join("s.yaml"),
        spec(Path::new("/proc/iogauge-node/etcd"), "p99 >= 0"),
    )
    .unwrap();
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc = parse_preflight_log(&text(&o.stdout)).unwrap();
    let c = &doc.collectors[0];
    assert_eq!(serde_json::to_value(c.status).unwrap(), "failed");
    let why = c.reason.as_deref().unwrap();
    assert!(
        why.starts_with("cannot create directory '/proc/iogauge-node/etcd': "),
        "{why}"
    );

    // Files are the host's outputs: refused before anything runs.
    let o = run(&["--output", "out"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim_end(),
        "iogauge preflight: --format kube-frames (what a kube pod prints) writes no files: \
         leave out --output"
    );
    assert!(o.stdout.is_empty());
}

/// The pod mounts the node's directory elsewhere and runs the spec unchanged:
/// `--directory-map NODE_DIR=MOUNT` moves the collector there, and says so on stderr.
#[test]
fn a_collector_runs_where_its_node_directory_is_mounted() {
    let d = scratch();
    let mount = d.path().join("host0");
    std::fs::create_dir(&mount).unwrap();
    // A directory this user cannot create: measured there, the run would fail.
    let node_dir = Path::new("/proc/iogauge-node/etcd");
    std::fs::write(d.path().join("s.yaml"), spec(node_dir, "p99 < 0")).unwrap();
    let map = format!("--directory-map=/proc/iogauge-node={}", mount.display());
    let run = |args: &[&str]| {
        common::cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["preflight", "s.yaml", "--format", "kube-frames"])
            .args(args)
            .current_dir(d.path())
            .output()
            .unwrap()
    };
    let o = run(&[&map]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_eq!(
        err.lines().next().unwrap(),
        format!(
            "iogauge preflight: collector 'etcd-perf': directory /proc/iogauge-node/etcd is \
             measured in {}/etcd (--directory-map)",
            mount.display()
        )
    );
    let doc = parse_preflight_log(&text(&o.stdout)).unwrap();
    assert!(doc.collectors[0].results.is_some(), "{err}");
    // The directory the collector made for its file is gone again; the mount stays.
    assert!(!mount.join("etcd").exists() && mount.is_dir());

    // A map that moves no collector is refused before anything runs (exit 2).
    let o = run(&["--directory-map", "/var/lib/etcd=/host/0"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim_end(),
        "iogauge preflight: --directory-map /var/lib/etcd=/host/0: no collector's directory is \
         /var/lib/etcd or below it; the spec's directories: /proc/iogauge-node/etcd"
    );
    assert!(o.stdout.is_empty());
    let o = run(&["--directory-map", "etcd=/host/0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains(
            "'etcd=/host/0': expected FROM=TO, two absolute paths without '..', e.g. \
             /var/lib/etcd=/host/0"
        ),
        "{}",
        text(&o.stderr)
    );
}

fn three_nodes(dir: &Path) -> FakeKube {
    FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .node(NodeSeed::new("node-a").label("disk", "ssd"))
        .node(NodeSeed::new("node-b").label("disk", "ssd"))
        .node(NodeSeed::new("node-c").label("disk", "ssd"))
        .scenario(Scenario::Run)
        .scenario_for("node-b", Scenario::HostPathMissing)
        .start()
}

#[test]
fn kube_preflight_runs_the_spec_on_every_node_and_analyzes_each() {
    let dir = scratch();
    let fake = three_nodes(dir.path());
    std::fs::write(
        dir.path().join("etcd.yaml"),
        spec(Path::new("/var/lib/etcd"), "p99 >= 1000s"),
    )
    .unwrap();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "preflight", "etcd.yaml", "--nodes", "disk=ssd"])
        .args([
            "--output",
            "out",
            "--pending-timeout",
            "2s",
            "--timeout",
            "60s",
        ])
        .env("KUBECONFIG", fake.write_kubeconfig(dir.path()))
        .env("IOGAUGE_IMAGE", "registry.example/iogauge:test")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    // A node that could not run: exit 1 (no outcome failed or warned).
    assert_eq!(o.status.code(), Some(1), "{err}");
    let reason = "the directory /var/lib/etcd is missing on node node-b (the kubelet: hostPath \
                  type check failed: /var/lib/etcd is not a directory); create it there, or change \
                  the collector's directory in the spec (gave up after 2 s; --pending-timeout sets how long to wait)";
    assert!(
        err.contains(&format!("iogauge kube: node node-b: failed: {reason}\n")),
        "{err}"
    );
    assert!(
        err.contains("iogauge kube: node node-a: done: etcd-perf collected\n"),
        "{err}"
    );
    assert!(
        err.contains("iogauge kube preflight: results in out\n"),
        "{err}"
    );
    // troubleshoot's output: one outcome per node that has a result.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "",
            "   --- PASS Filesystem Performance - Node node-a",
            "      --- fine",
            "   --- PASS Filesystem Performance - Node node-c",
            "      --- fine",
            "--- PASS   etcd",
            "PASS"
        ],
        "{out}"
    );
    // One result file per node that ran, in troubleshoot's layout.
    let res = dir.path().join("out/host-collectors/filesystemPerformance");
    let mut nodes: Vec<String> = std::fs::read_dir(&res)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["node-a", "node-c"]);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("node-a/etcd-perf.json")).unwrap())
            .unwrap();
    assert_eq!(v.as_object().unwrap().len(), 20);
    // The whole run beside them, each node's preflight document in it.
    let doc: KubeDocument = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/kube.iogauge.json")).unwrap(),
    )
    .unwrap();
    let by_node = |n: &str| {
        doc.targets
            .iter()
            .find(|t| t.node.as_deref() == Some(n))
            .unwrap()
    };
    assert_eq!(by_node("node-b").status, TargetStatus::Failed);
    assert_eq!(by_node("node-b").reason.as_deref(), Some(reason));
    assert!(by_node("node-c").preflight.is_some());
    // The pods mounted /var/lib/etcd by hostPath (type Directory) and ran the spec from the
    // ConfigMap unchanged, moved onto that mount.
    let job = &fake.created("Job")[0];
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(
        pod["volumes"][0],
        serde_json::json!({"name": "host-0", "hostPath": {"path": "/var/lib/etcd", "type": "Directory"}})
    );
    let args: Vec<&str> = pod["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "preflight",
            "/config/etcd.yaml",
            "--format",
            "kube-frames",
            "--directory-map=/var/lib/etcd=/host/0"
        ]
    );
    for kind in ["Job", "Pod", "ConfigMap"] {
        let left: Vec<Value> = fake
            .objects(kind)
            .into_iter()
            .filter(|o| o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "iogauge")
            .collect();
        assert!(left.is_empty(), "{kind} left: {left:?}");
    }
    assert_eq!(fake.created("ConfigMap").len(), 1);
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
}

#[test]
fn kube_preflight_refuses_a_spec_it_cannot_run_on_nodes_before_anything_exists() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("rel.yaml"),
        spec(Path::new("etcd"), "p99 >= 1s"),
    )
    .unwrap();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "preflight", "rel.yaml", "--node", "node-a"])
        // No cluster: nothing may be asked of one.
        .env("KUBECONFIG", dir.path().join("none"))
        .env("IOGAUGE_IMAGE", "registry.example/iogauge:test")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim_end(),
        "iogauge kube preflight: collector 'etcd-perf': directory 'etcd' cannot be a node's \
         hostPath: expected an absolute path below / without '.' or '..', e.g. /var/lib/etcd"
    );
    assert!(o.stdout.is_empty());
}

/// `--dry-run` needs no cluster for `--node`: the ConfigMap with the spec unchanged, and per
/// node a Job whose pod mounts each collector directory by hostPath and moves the spec onto it;
/// valid for the API server (kubernetes-validate --strict), restricted but where a node
/// directory forces it.
#[test]
fn kube_preflight_dry_run_manifests_meet_the_schema() {
    use crate::kube_manifests::{documents, restricted_violations, validate};
    let dir = scratch();
    let two = format!(
        "{}    - filesystemPerformance:\n        collectorName: wal\n        directory: /var/lib/etcd/wal\n  \
         hostAnalyzers: []\n",
        spec(Path::new("/var/lib/etcd"), "p99 >= 1s")
            .split("  hostAnalyzers:")
            .next()
            .unwrap()
    );
    std::fs::write(dir.path().join("etcd.yaml"), &two).unwrap();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "kube",
            "preflight",
            "etcd.yaml",
            "--node",
            "n1",
            "--node",
            "n2",
        ])
        .args(["--image", "registry.example/iogauge:0.1", "--dry-run"])
        .env("KUBECONFIG", dir.path().join("none"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let (yaml, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(
        err.trim_end(),
        "iogauge kube preflight: dry run: 2 node(s) in namespace default, nothing created"
    );
    validate("preflight", &yaml);
    let docs = documents(&yaml);
    assert_eq!(docs.len(), 3, "a ConfigMap and two Jobs");
    assert_eq!(docs[0]["kind"], "ConfigMap");
    assert_eq!(docs[0]["data"]["etcd.yaml"], two.as_str());
    let pod = &docs[1]["spec"]["template"]["spec"];
    assert_eq!(pod["nodeSelector"]["kubernetes.io/hostname"], "n1");
    // Each distinct directory once (wal is below /var/lib/etcd, but a directory of its own).
    let paths: Vec<&str> = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["hostPath"]["path"].as_str())
        .collect();
    assert_eq!(paths, ["/var/lib/etcd", "/var/lib/etcd/wal"]);
    assert_eq!(
        pod["containers"][0]["args"],
        serde_json::json!([
            "preflight",
            "/config/etcd.yaml",
            "--format",
            "kube-frames",
            "--directory-map=/var/lib/etcd=/host/0",
            "--directory-map=/var/lib/etcd/wal=/host/1"
        ])
    );
    assert_eq!(
        restricted_violations(pod),
        [
            "volume type hostPath",
            "volume type hostPath",
            "runAsNonRoot is not true",
            "runAsUser 0"
        ]
    );
}

// --- review fixes: the results directory ---

/// Results are analyzed from `--output`: one that already holds files is refused before the
/// cluster is asked anything, since an earlier run's results would pass as this one's.
#[test]
fn a_results_directory_with_files_in_it_is_refused_before_anything_is_asked() {
    let dir = scratch();
    std::fs::write(
        dir.path().join("etcd.yaml"),
        spec(Path::new("/var/lib/etcd"), "p99 >= 1s"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("out/host-collectors")).unwrap();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "kube",
            "preflight",
            "etcd.yaml",
            "--node",
            "node-a",
            "--output",
            "out",
        ])
        // No cluster: nothing may be asked of one.
        .env("KUBECONFIG", dir.path().join("none"))
        .env("IOGAUGE_IMAGE", "registry.example/iogauge:test")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr).trim_end(),
        "iogauge kube preflight: --output 'out': not empty; the analyzers read every node's \
         results in it, so an earlier run's would pass as this one's: name a new or empty \
         directory"
    );
    assert!(o.stdout.is_empty());
}
