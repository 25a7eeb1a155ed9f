//! Users' own workloads in the pod (issue 26 §1): profile files shipped in the run's ConfigMap,
//! mounted read-only at /config, against the fake API server (tests/common/fake_kube/) whose
//! pods really run this build's binary.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::fake_kube::Scenario;
use common::kube::{
    assert_nothing_left, assert_rbac_allows, cluster, document, run, spawn, wait_running,
};
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

/// The seed 001 job file (the Manetu guide's), unchanged.
fn seed() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/kube/seed-001.fio")
        .to_str()
        .unwrap()
        .to_string()
}

/// Every key path of a JSON value, arrays as `[]`.
fn key_paths(v: &serde_json::Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| key_paths(x, &format!("{at}[]"), out)),
        _ => {}
    }
}

#[test]
fn the_seed_job_runs_unchanged_in_the_pod_and_returns_fio_s_document() {
    let started = Instant::now();
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::ImagePull)]);
    let caps = ["--max-size", "1m", "--max-runtime", "1s"];
    let seed_path = seed();
    let mut args = vec!["fio", &seed_path[..]];
    args.extend(caps);
    args.extend([
        "--storage-class",
        "fast",
        "--storage-class",
        "standard",
        "--pending-timeout",
        "5s",
        "--format",
        "json",
    ]);
    let (code, out, err) = run(&fake, dir.path(), &args);
    let doc = document(&out);
    // The broken target fails on its own, and the run moves on to the one that runs.
    assert_eq!(code, 1, "{err}");
    assert_eq!(doc.targets[0].status, TargetStatus::Failed, "{err}");
    assert!(doc.targets[0].fio.is_none());
    let t = &doc.targets[1];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
    let fio = t.fio.as_ref().unwrap();
    assert_eq!(fio["jobs"][0]["jobname"], "sequential_write_iops");
    assert!(
        fio["jobs"][0]["write"]["iops"].as_f64().unwrap() > 0.0,
        "{fio}"
    );
    assert!(t
        .fio_text
        .as_ref()
        .unwrap()
        .contains("sequential_write_iops: (groupid=0"));
    // The same key paths as `iogauge fio` gives on this host for the same job and caps.
    let local = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            &seed_path,
            "--iogauge-max-size=1m",
            "--iogauge-max-runtime=1s",
        ])
        .args(["--output-format=json", "--no-history"])
        // As in the pod: the job's files in the working directory.
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(local.status.success(), "{}", common::text(&local.stderr));
    let local: serde_json::Value = serde_json::from_slice(&local.stdout).unwrap();
    let (mut want, mut got) = Default::default();
    key_paths(&local, "", &mut want);
    key_paths(fio, "", &mut got);
    let only = |a: &std::collections::BTreeSet<String>, b: &std::collections::BTreeSet<String>| {
        a.difference(b).cloned().collect::<Vec<_>>()
    };
    assert_eq!((only(&got, &want), only(&want, &got)), (vec![], vec![]));
    // The job file travelled unchanged in the run's ConfigMap; the pod ran it from there, in
    // the volume.
    let cm = &fake.created("ConfigMap")[0];
    let text = std::fs::read_to_string(&seed_path).unwrap();
    assert_eq!(cm["data"]["seed-001.fio"], text);
    let job = &fake.created("Job")[1];
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["workingDir"], "/data");
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "fio",
            "--iogauge-max-size=1048576",
            "--iogauge-max-runtime=1000ms",
            "/config/seed-001.fio",
            "--output-format=kube-frames",
            "--eta=never",
            "--no-history"
        ]
    );
    assert!(
        err.contains(
            "iogauge kube: storage class standard: done: 1 job(s): sequential_write_iops "
        ),
        "{err}"
    );
    assert_nothing_left(&fake);
    assert_rbac_allows(&fake.requests());
    eprintln!("took {:?}", started.elapsed());
}

#[test]
fn the_seed_job_s_manifests_meet_the_schema_and_restricted_with_a_claim_it_fits() {
    let seed_path = seed();
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "fio", &seed_path, "--storage-class", "standard"])
        .args(["--image", "registry.example/iogauge:0.1", "--dry-run"])
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .unwrap();
    let (yaml, err) = (common::text(&out.stdout), common::text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{err}");
    crate::kube_manifests::validate("seed-001", &yaml);
    let docs = crate::kube_manifests::documents(&yaml);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ConfigMap", "Job", "PersistentVolumeClaim"]);
    let text = std::fs::read_to_string(&seed_path).unwrap();
    assert_eq!(docs[0]["data"]["seed-001.fio"], text);
    let pod = &docs[1]["spec"]["template"]["spec"];
    assert_eq!(
        crate::kube_manifests::restricted_violations(pod),
        Vec::<String>::new()
    );
    // size=10G: 10 GiB of file in a claim of which 80% may be file, in whole Gi.
    assert_eq!(docs[2]["spec"]["resources"]["requests"]["storage"], "13Gi");
    // A --claim-size it does not fit in is refused before anything, with the size it needs.
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "fio", &seed_path, "--storage-class", "standard"])
        .args(["--image", "i", "--dry-run", "--claim-size", "10Gi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        common::text(&out.stderr),
        "iogauge kube fio: --claim-size 10Gi: the jobs' files take 10737418240 bytes, which \
         needs a claim of at least 13421772800 bytes (12800Mi with the filesystem's share); \
         leave --claim-size out to size the claim from the jobs, or give at least 13Gi\n"
    );
}

#[test]
fn jobs_that_would_miss_the_volume_are_bad_input_and_create_nothing() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let cases: [(&[&str], String); 3] = [
        (
            &[
                "--name=w",
                "--rw=write",
                "--size=1m",
                "--directory=/var/tmp",
            ],
            "iogauge kube fio: job 'w': directory=/var/tmp is an absolute path: in the pod it \
             would land in the read-only root filesystem or outside the volume; paths in kube \
             fio are relative to the volume (the pod's working directory, /data), e.g. \
             directory=fio\n"
                .into(),
        ),
        (
            &["--name=w", "--rw=write", "--size=1m", "--filename=/dev/sdb"],
            "iogauge kube fio: job 'w': filename=/dev/sdb is a raw device, and the pod has a \
             filesystem claim mounted at /data (--volume-mode Filesystem); use a file name \
             relative to the volume, e.g. filename=fio.data\n"
                .into(),
        ),
        (&["--name=w", "--rw=wirte"], {
            // The words `iogauge fio` says about the same job.
            let local = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
                .args(["fio", "--name=w", "--rw=wirte", "--parse-only"])
                .output()
                .unwrap();
            format!(
                "iogauge kube fio: {}",
                common::text(&local.stderr).trim_start_matches("iogauge fio: ")
            )
        }),
    ];
    for (job, want) in cases {
        let mut args = vec!["fio", "--storage-class", "standard", "--"];
        args.extend(job);
        let (code, out, err) = run(&fake, dir.path(), &args);
        assert_eq!((code, out.as_str(), err.as_str()), (2, "", want.as_str()));
    }
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn the_text_output_has_each_target_s_fio_block_and_the_jobs_side_by_side() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "fio",
            "--storage-class",
            "standard",
            "--",
            "--name=seq",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("=== storage class standard on node "),
        "{out}"
    );
    assert!(out.contains("\nseq: (groupid=0"), "{out}");
    let table = out
        .lines()
        .skip_while(|l| !l.starts_with("TARGET"))
        .collect::<Vec<_>>();
    assert_eq!(
        table[0].split_whitespace().collect::<Vec<_>>(),
        ["TARGET", "JOB", "IOPS", "BW", "P99", "LAT"]
    );
    assert!(
        table[1].starts_with("storage class standard  seq  "),
        "{out}"
    );
    assert!(
        out.ends_with("\n1 of 1 target(s) ran their jobs\n"),
        "{out}"
    );
    assert_nothing_left(&fake);
}

// --- review fixes: what a job can only mean on this machine, or outside the volume ---

#[test]
fn paths_out_of_the_volume_and_local_only_options_are_refused_before_anything_exists() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let job = |extra: &str| -> Vec<String> {
        ["--name=w", "--rw=write", "--size=1m", extra]
            .map(String::from)
            .to_vec()
    };
    let rel = "paths in kube fio are relative to the volume (the pod's working directory, /data)";
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            job("--write_bw_log=/dev/shm/bw"),
            format!(
                "job 'w': write_bw_log=/dev/shm/bw is an absolute path: in the pod it would land \
                 in the read-only root filesystem or outside the volume; {rel}, e.g. \
                 write_bw_log=fio"
            ),
        ),
        (
            job("--write_iolog=/tmp/io.log"),
            format!(
                "job 'w': write_iolog=/tmp/io.log is an absolute path: in the pod it would land \
                 in the read-only root filesystem or outside the volume; {rel}, e.g. \
                 write_iolog=fio"
            ),
        ),
        (
            job("--directory=../.."),
            format!("job 'w': directory=../.. climbs out of the volume ('..'); {rel}, e.g. directory=fio"),
        ),
        (
            job("--filename=../../tmp/x"),
            format!(
                "job 'w': filename=../../tmp/x climbs out of the volume ('..'); {rel}, e.g. \
                 filename=fio"
            ),
        ),
        (
            job("--exec_prerun=id"),
            "the command line: '--exec_prerun=id': exec_prerun is not supported by kube fio (the \
             pod's image has only iogauge, and paths are the volume's); name the files with \
             filename= or directory="
                .into(),
        ),
        (
            job("--size=${SZ}"),
            "the command line: '--size=${SZ}': ${SZ} is an environment variable, which fio \
             expands where it runs, and the pod has none of yours; write the value instead"
                .into(),
        ),
    ];
    for (opts, want) in cases {
        let mut args: Vec<String> = ["fio", "--storage-class", "standard", "--"]
            .map(String::from)
            .to_vec();
        args.extend(opts);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run(&fake, dir.path(), &args);
        let want = format!("iogauge kube fio: {want}\n");
        assert_eq!((code, out.as_str(), err.as_str()), (2, "", want.as_str()));
    }
    // In a job file: an include travels nowhere, a comment is only a comment.
    let file = dir.path().join("inc.fio");
    std::fs::write(
        &file,
        "# uses ${NOTHING}\n[w]\nrw=write\nsize=1m\ninclude other.fio\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &["fio", "--storage-class", "standard", f],
    );
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert_eq!(
        err,
        format!(
            "iogauge kube fio: job file '{f}': 'include other.fio': only the job files named on \
             the command line travel to the pod; name the included file as a job file of its \
             own, or paste it in\n"
        )
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}
