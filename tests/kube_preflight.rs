//! `iogauge kube preflight`'s pod side, for real on this machine: `iogauge preflight SPEC
//! --format kube-frames [--directory-map NODE_DIR=MOUNT]` as a pod would run it prints only the
//! preflight document as frames on stdout, writes no file, exits 0 whenever it printed one (the
//! controller judges every node's results), and the controller's reader gives it back.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use iogauge::cluster::preflight::parse_preflight_log;
use std::path::Path;

fn spec(dir: &Path, when: &str) -> String {
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
