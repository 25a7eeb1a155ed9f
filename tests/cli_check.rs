//! `iogauge check` end to end with real I/O at reduced scale: every profile, the JSON document,
//! a real failing verdict on a throttled disk (blkio cgroup), refusals, and cleanup.

mod common;
use common::*;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn check(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iogauge"))
        .arg("check")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge")
}

#[test]
fn every_profile_runs_at_reduced_scale_and_leaves_nothing() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = d.path().to_str().unwrap();
    for p in ["etcd", "etcd-large", "sync-iops", "gitlab", "small-files"] {
        let o = check(
            &[p, "--dir", dir, "--scale", "0.05", "--duration", "2s"],
            d.path(),
        );
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        // This machine's disk passes every profile.
        assert_eq!(o.status.code(), Some(0), "{p}: {out}{err}");
        assert!(out.starts_with(&format!("PASS {p}: ")), "{p}: {out}");
        assert!(out.contains("\n  PASS  "), "{p}: {out}");
        assert!(out.contains("\n        source: "), "{p}: {out}");
        assert!(out.contains("warning: shortened run"), "{p}: {out}");
        assert!(
            err.starts_with(&format!("iogauge check: {p}: ")),
            "{p}: {err}"
        );
        if p == "small-files" {
            assert!(
                out.contains("\n        p99 per-file create (open, write, close): "),
                "{out}"
            );
            assert!(err.contains(": 50 files of 5 bytes in "), "{err}");
        } else if p != "etcd-large" {
            assert!(out.contains("\n        rank: "), "{p}: {out}");
        }
        assert_empty(d.path());
    }
}

#[test]
fn the_default_suite_runs_all_four_profiles() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let o = check(
        &[
            "--dir",
            d.path().to_str().unwrap(),
            "--scale",
            "0.02",
            "--duration",
            "1s",
            "--format",
            "json",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["profile"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["etcd", "sync-iops", "small-files", "gitlab"]);
    let sf = &v["profiles"][2];
    assert_eq!(sf["metric"], "small_files_total");
    assert_eq!(sf["report"]["files"], 20);
    assert_eq!(
        sf["value"].as_f64().unwrap(),
        sf["report"]["total_ns"].as_f64().unwrap()
    );
    assert_empty(d.path());
}

#[test]
fn json_document_shape() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let o = check(
        &[
            "etcd",
            "--dir",
            d.path().to_str().unwrap(),
            "--scale",
            "0.1",
            "--format",
            "json",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let p = &v["profiles"][0];
    assert_eq!(p["profile"], "etcd");
    assert_eq!(p["verdict"], "pass");
    assert_eq!(p["metric"], "sync_p99");
    assert_eq!(p["unit"], "ns");
    assert_eq!(p["threshold"], 10_000_000.0);
    assert!(p["source"].as_str().unwrap().starts_with("etcd FAQ"));
    assert_eq!(p["references"].as_array().unwrap().len(), 7);
    assert_eq!(p["shortened"], true);
    // The value is the run's p99 sync latency, from the full report alongside.
    let p99 = &p["report"]["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"];
    assert_eq!(p["value"].as_f64().unwrap(), p99.as_f64().unwrap());
    assert_eq!(p["report"]["jobs"][0]["jobname"], "etcd");
}

#[test]
fn unwritable_or_missing_directories_and_unknown_profiles_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let o = check(&["etcd", "--dir", "/proc"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("iogauge check: directory '/proc' is not writable ("),
        "{}",
        text(&o.stderr)
    );
    let o = check(&["etcd", "--dir", "/nonexistent"], d.path());
    assert_eq!(
        text(&o.stderr),
        "iogauge check: directory '/nonexistent' does not exist; create it or choose another with --dir\n"
    );
    let o = check(&["etdc"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge check: unknown profile 'etdc'; did you mean 'etcd'?\n"
    );
    assert_eq!(text(&o.stdout), "");
}

#[test]
fn memory_backed_directories_are_flagged() {
    let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("skipping: no /dev/shm");
        return;
    };
    let o = check(
        &[
            "etcd",
            "--dir",
            d.path().to_str().unwrap(),
            "--scale",
            "0.05",
        ],
        d.path(),
    );
    assert!(
        text(&o.stdout).contains("warning: the directory is on tmpfs (memory), not on a disk"),
        "{}",
        text(&o.stdout)
    );
}

/// A real slow disk: a blkio cgroup limits this disk to 100 write IOPS for the iogauge process
/// (FACTS.md §10). sync-iops must then fail. Needs root and cgroup v1 blkio; CI has both.
#[test]
fn a_throttled_disk_fails_sync_iops_for_real() {
    let cg = Path::new("/sys/fs/cgroup/blkio");
    let must = std::env::var("CI").as_deref() == Ok("true");
    if !cg.is_dir() || unsafe { libc::geteuid() } != 0 {
        assert!(
            !must,
            "CI must run the throttled-disk test: needs root and /sys/fs/cgroup/blkio"
        );
        eprintln!("skipping: needs root and cgroup v1 blkio");
        return;
    }
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // The whole disk holding the directory (a partition resolves to its parent).
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(d.path()).unwrap().dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).unwrap();
    let disk = if sys.join("partition").exists() {
        sys.parent().unwrap().to_path_buf()
    } else {
        sys
    };
    let majmin = std::fs::read_to_string(disk.join("dev"))
        .unwrap()
        .trim()
        .to_string();
    let group = cg.join(format!("iogauge-test-{}", std::process::id()));
    std::fs::create_dir(&group).unwrap();
    struct Cleanup(std::path::PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _c = Cleanup(group.clone());
    std::fs::write(
        group.join("blkio.throttle.write_iops_device"),
        format!("{majmin} 100"),
    )
    .unwrap();
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} check sync-iops --dir {} --duration 3s --scale 0.05",
        group.display(),
        env!("CARGO_BIN_EXE_iogauge"),
        d.path().display()
    );
    let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}{}", text(&o.stderr));
    assert!(out.starts_with("FAIL sync-iops: "), "{out}");
    assert!(out.contains(": not recommended for production"), "{out}");
    assert_empty(d.path());
}

#[test]
fn tuning_errors_and_what_counts_as_shortened() {
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = d.path().to_str().unwrap();
    let o = check(&["sync-iops", "--dir", dir, "--size", "1Ki"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge check: --size 1024: smaller than one 4096-byte block of profile 'sync-iops'; use at least 4096 bytes (e.g. 64Mi)\n"
    );
    // etcd is size-bound: --duration does not change it, so it is not marked as shortened.
    let o = check(
        &["etcd", "--dir", dir, "--duration", "1s", "--format", "json"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["profiles"][0]["shortened"], false);
    assert_empty(d.path());
}
