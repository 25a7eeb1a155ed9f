//! Users' own workloads in the pod (issue 26 §1): profile files shipped in the run's ConfigMap,
//! mounted read-only at /config, against the fake API server (tests/common/fake_kube/) whose
//! pods really run this build's binary.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::kube_flow::{
    assert_nothing_left, assert_rbac_allows, cluster, document, run, spawn, wait_running,
};
use common::fake_kube::Scenario;
use iogauge::report::document::TargetStatus;
use std::path::Path;
use std::time::Instant;

/// A user's profile: etcd's workload under a name of its own, small enough for a test.
const PROFILE: &str = "\
name: my-wal
title: my WAL
workload:
  - rw=write
  - ioengine=sync
  - fdatasync=1
  - bs=4k
  - size=256k
metrics:
  - key: sync_p99
    label: p99 fdatasync latency
    better: lower
    pass: 1s
    source: a test
";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_profile_file_runs_in_each_pod_from_the_run_s_configmap() {
    let started = Instant::now();
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::ImagePull)]);
    let profile = write(dir.path(), "my wal.yaml", PROFILE);
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            &profile,
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--pending-timeout",
            "5s",
            "--format",
            "json",
        ],
    );
    let doc = document(&out);
    assert_eq!(code, 1, "{err}");
    // The broken target fails on its own, and the run moves on to the next one.
    assert_eq!(doc.targets[0].status, TargetStatus::Failed, "{err}");
    let t = &doc.targets[1];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
    let check = t.check.as_ref().unwrap();
    assert_eq!(check.profiles[0].profile, "my-wal");
    assert!(check.profiles[0].value.unwrap() > 0.0);
    assert_eq!(doc.profiles, ["/config/my-wal.yaml"]);
    // One ConfigMap for the run, created before the Jobs, holding the file as it is.
    let cms = fake.created("ConfigMap");
    assert_eq!(cms.len(), 1);
    let cm = &cms[0];
    let name = cm["metadata"]["name"].as_str().unwrap();
    assert_eq!(name, format!("iogauge-{}-files", doc.run_id));
    assert_eq!(cm["data"]["my-wal.yaml"], PROFILE);
    assert_eq!(cm["immutable"], true);
    assert_eq!(cm["metadata"]["labels"]["iogauge.dev/run"], doc.run_id);
    assert!(fake.happened_before(&format!("created ConfigMap/{name}"), "created Job/"));
    for job in fake.created("Job") {
        let pod = &job["spec"]["template"]["spec"];
        let c = &pod["containers"][0];
        assert_eq!(c["args"][1], "/config/my-wal.yaml");
        let m = c["volumeMounts"].as_array().unwrap();
        assert!(m
            .iter()
            .any(|m| m["mountPath"] == "/config" && m["readOnly"] == true));
        assert!(pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["configMap"]["name"] == name));
    }
    assert!(
        err.contains(&format!(
            "iogauge kube: configmap {name} created (1 file(s), {} bytes, at /config in each pod)\n",
            "my-wal.yaml".len() + PROFILE.len()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("iogauge kube: configmap {name} deleted\n")),
        "{err}"
    );
    assert_eq!(fake.deleted("ConfigMap"), [name]);
    assert_nothing_left(&fake);
    assert_rbac_allows(&fake.requests());
    eprintln!("took {:?}", started.elapsed());
}

#[test]
fn a_bad_profile_file_is_bad_input_and_creates_nothing() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let bad = write(dir.path(), "bad.yaml", &PROFILE.replace("bs=4k", "bs=4q"));
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &["check", &bad, "--storage-class", "standard"],
    );
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    // The same words as `iogauge check` on that file.
    let local = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["check", &bad, "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let said = common::text(&local.stderr);
    let why = said
        .trim_end()
        .rsplit_once(&format!("profile '{bad}'"))
        .unwrap()
        .1;
    assert_eq!(err, format!("iogauge kube check: profile '{bad}'{why}\n"));
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn files_larger_than_a_config_map_are_refused_before_anything_is_created() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    // Each is a valid profile under 1 MiB; together they are more than a ConfigMap holds.
    let pad = format!("# {}\n", "x".repeat(600 << 10));
    let a = write(dir.path(), "a.yaml", &format!("{PROFILE}{pad}"));
    let b_text = format!("{}{pad}", PROFILE.replace("my-wal", "my-wal-2"));
    let b = write(dir.path(), "b.yaml", &b_text);
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &["check", &a, &b, "--storage-class", "standard", "--dry-run"],
    );
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    let total = "a.yaml".len() + PROFILE.len() + pad.len() + "b.yaml".len() + b_text.len();
    assert_eq!(
        err,
        format!(
            "iogauge kube check: '{b}': the files for the pod would take {total} bytes, more \
             than one ConfigMap holds (1048576 bytes, 1 MiB); make the file smaller or ship \
             fewer files\n"
        )
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn cleanup_removes_the_configmap_of_a_killed_run() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::Hang)]);
    let profile = write(dir.path(), "mine.yaml", PROFILE);
    let mut child = spawn(
        &fake,
        dir.path(),
        &["check", &profile, "--storage-class", "fast"],
    );
    wait_running(&fake);
    child.kill().unwrap();
    child.wait().unwrap();
    let cms = fake.objects("ConfigMap");
    assert_eq!(cms.len(), 1, "SIGKILL leaves the ConfigMap behind");
    let run_id = cms[0]["metadata"]["labels"]["iogauge.dev/run"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, out, err) = run(&fake, dir.path(), &["cleanup", "--run", &run_id]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!("deleted configmap/iogauge-{run_id}-files\n")),
        "{out}"
    );
    assert_nothing_left(&fake);
    assert_rbac_allows(&fake.requests());
}
