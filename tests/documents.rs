//! The typed result documents: the committed JSON Schemas match the types, and a real run's
//! document validates against its schema and survives a round trip through the types unchanged
//! (the HTML report, the history and the Kubernetes mode read documents back).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use iogauge::report::document::{
    CanaryDocument, CheckDocument, KubeDocument, PreflightDocument, SCHEMA_VERSION,
};
use serde_json::Value;
use std::path::Path;

fn schema_path(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schema/{name}.schema.json"))
}

fn committed(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(schema_path(name)).unwrap()).unwrap()
}

/// Set UPDATE_SCHEMA=1 to rewrite the committed schemas after changing the types.
#[test]
fn committed_schemas_match_the_types() {
    for (name, schema) in [
        ("check", schemars::schema_for!(CheckDocument)),
        ("preflight", schemars::schema_for!(PreflightDocument)),
        ("kube", schemars::schema_for!(KubeDocument)),
        ("canary", schemars::schema_for!(CanaryDocument)),
        (
            "compare",
            schemars::schema_for!(iogauge::report::comparison::CompareDocument),
        ),
    ] {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(schema_path(name), &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(schema_path(name)).unwrap_or_default();
        assert!(
            on_disk == text,
            "docs/schema/{name}.schema.json differs from the types; run \
             UPDATE_SCHEMA=1 cargo test --test tests documents:: and commit the result"
        );
    }
}

#[test]
fn a_real_check_document_validates_and_round_trips() {
    let d = scratch();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "check",
            "etcd",
            "small-files",
            "--scale",
            "0.05",
            "--format",
            "json",
        ])
        .arg("--dir")
        .arg(d.path())
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    let validator = jsonschema::validator_for(&committed("check")).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&printed)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let doc: CheckDocument = serde_json::from_value(printed.clone()).unwrap();
    assert_eq!(doc.schema_version, SCHEMA_VERSION);
    assert_eq!(doc.profiles.len(), 2);
    for p in &doc.profiles {
        use iogauge::report::document::CheckVerdict::*;
        assert!(matches!(p.verdict, Pass | Warn | Fail), "{p:?}");
        assert!(p.value.unwrap() > 0.0, "{p:?}");
    }
    assert_eq!(serde_json::to_value(&doc).unwrap(), printed);
    let again: CheckDocument = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
    assert_eq!(again, doc);
    // It says where it was measured.
    let c = &doc.context;
    assert!(!c.hostname.is_empty() && !c.kernel.is_empty());
    assert_eq!(
        c.directory.as_deref(),
        Some(d.path().canonicalize().unwrap().to_str().unwrap())
    );
    assert!(c.filesystem.is_some());
    // And how to run each fio job again.
    let job = doc.profiles[0].job.as_ref().unwrap();
    assert_eq!(job[0], "--name=etcd");
    assert!(job.contains(&"--fdatasync=1".to_string()), "{job:?}");
    assert!(doc.profiles[1].job.is_none());
    assert_empty(d.path());
}

#[test]
fn a_real_preflight_document_validates_and_round_trips() {
    let d = scratch();
    let spec = format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: etcd\nspec:\n  \
         hostCollectors:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        \
         directory: {}\n        fileSize: 1Mi\n        operationSize: 2300\n        datasync: true\n  \
         hostAnalyzers:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        outcomes:\n          \
         - pass: {{when: \"p99 < 10s\", message: \"fine\"}}\n          - fail: {{message: slow}}\n",
        d.path().join("bench").display()
    );
    std::fs::write(d.path().join("s.yaml"), spec).unwrap();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["preflight", "--output", "out", "s.yaml"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        text(&o.stderr)
    );
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("out/preflight.iogauge.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&committed("preflight")).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&written)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let doc: PreflightDocument = serde_json::from_value(written.clone()).unwrap();
    assert_eq!(serde_json::to_value(&doc).unwrap(), written);
    assert_eq!(doc.name, "etcd");
    assert_eq!(doc.collectors.len(), 1);
    let c = &doc.collectors[0];
    assert!(c.results.as_ref().unwrap()["P99"] > 0);
    assert_eq!(doc.outcomes.len(), 1);
    assert!(c.context.filesystem.is_some());
}

/// `iogauge fio`'s JSON stays fio's layout; where it ran goes under the `iogauge` key.
#[test]
fn fio_json_says_where_it_ran() {
    let d = scratch();
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["fio", "--name=ctx", "--size=1m", "--output-format=json"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c: iogauge::report::document::Context =
        serde_json::from_value(v["iogauge"]["context"].clone()).unwrap();
    assert_eq!(
        c.directory.as_deref(),
        Some(d.path().canonicalize().unwrap().to_str().unwrap())
    );
    assert!(c.filesystem.is_some() && !c.kernel.is_empty());
    assert_empty(d.path());
}
