//! `iogauge kube preflight`'s pod side, for real on this machine: `iogauge preflight SPEC
//! --format kube-frames` as the pod runs it prints only the preflight document as frames on
//! stdout, exits 0 whatever the verdicts (the controller judges every node's results), and the
//! controller's reader gives the document back.

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
fn a_pods_preflight_prints_only_frames_and_exits_0_on_a_failed_outcome() {
    let d = scratch();
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("etcd"), "p99 >= 0"),
    )
    .unwrap();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "preflight",
            "s.yaml",
            "--format",
            "kube-frames",
            "--output",
            "out",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    // Exit 0: the failed outcome travels in the document, so the Job is Complete.
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.lines().all(|l| l.starts_with("iogauge-frame 1 ")),
        "{out}"
    );
    let doc = parse_preflight_log(&format!("{}{out}", text(&o.stderr))).unwrap();
    assert_eq!(doc.name, "etcd");
    assert_eq!(doc.collectors.len(), 1);
    let c = &doc.collectors[0];
    assert_eq!(c.name, "etcd-perf");
    let r = c.results.as_ref().unwrap();
    assert_eq!(r.len(), 20);
    assert!(r["Min"] <= r["P99"] && r["P99"] <= r["Max"], "{r:?}");
    assert_eq!(doc.outcomes.len(), 1);
    assert_eq!(
        serde_json::to_value(doc.outcomes[0].verdict).unwrap(),
        "fail"
    );
}
