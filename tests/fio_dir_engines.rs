//! fio 3.37's directory engines (dircreate, dirstat, dirdelete), which fio 3.33 does not have,
//! so there is no fio to compare with: the tests assert what the engines are for. One timed
//! mkdir, stat or rmdir per directory and pass (clat samples = nrfiles × loops), the fake I/Os
//! counted as for the file engines, iogauge's directories removed after the run and the user's
//! never touched.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

/// iogauge fio with `args` in `d` and JSON output: exit code, the document (Null if none), stderr.
fn run(args: &[&str], d: &Path) -> (i32, Value, String) {
    let out = cmd(IOGAUGE)
        .arg("fio")
        .args(args)
        .arg(format!("--directory={}", d.display()))
        .arg("--output-format=json")
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let json = stdout
        .find('{')
        .map(|i| serde_json::from_str(&stdout[i..]).unwrap())
        .unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), json, text(&out.stderr))
}

/// The job's completion latencies (the read direction: the jobs use fio's default rw=read):
/// count, and p50 ≤ p99 ≤ max checked.
fn timed_ops(v: &Value) -> u64 {
    let c = &v["jobs"][0]["read"]["clat_ns"];
    let n = c["N"].as_u64().unwrap();
    let p = |k: &str| c["percentile"][k].as_u64().unwrap();
    let max = c["max"].as_u64().unwrap();
    assert!(n > 0 && c["min"].as_u64().unwrap() > 0, "{c}");
    assert!(
        p("50.000000") <= p("99.000000") && p("99.000000") <= max,
        "{c}"
    );
    n
}

fn dirs_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn dircreate_makes_one_directory_per_file_and_the_run_removes_them() {
    let d = scratch();
    let base = [
        "--name=dc",
        "--ioengine=dircreate",
        "--filesize=4k",
        "--nrfiles=6",
    ];
    let (code, v, err) = run(&base, d.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(timed_ops(&v), 6);
    // One fake I/O of bs=4k per 4 KiB "file", as fio's file engines count them.
    assert_eq!(u(&v, &["jobs", "0", "read", "total_ios"]), 6);
    assert_empty(d.path());
    // Kept, they are directories (0700) named as fio names files.
    let mut keep = vec!["--keep-files"];
    keep.extend(base);
    let (code, _, err) = run(&keep, d.path());
    assert_eq!(code, 0, "{err}");
    let made = dirs_in(d.path());
    assert_eq!(
        made,
        (0..6).map(|i| format!("dc.0.{i}")).collect::<Vec<_>>()
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(d.path().join("dc.0.0"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn dirstat_stats_each_directory_per_loop_and_leaves_the_users_alone() {
    let d = scratch();
    // The user's directory, with something in it, named as the job's first "file".
    let user = d.path().join("mine");
    std::fs::create_dir(&user).unwrap();
    std::fs::write(user.join("keep"), b"x").unwrap();
    let (code, v, err) = run(
        &[
            "--name=ds",
            "--ioengine=dirstat",
            "--filesize=4k",
            "--filename=mine:ds-a:ds-b:ds-c",
            "--loops=3",
            "--stat_type=statx",
        ],
        d.path(),
    );
    assert_eq!(code, 0, "{err}");
    // 4 directories × 3 loops.
    assert_eq!(timed_ops(&v), 12);
    // The three it made are gone; the user's is there with its content.
    assert_eq!(dirs_in(d.path()), vec!["mine".to_string()]);
    assert_eq!(std::fs::read(user.join("keep")).unwrap(), b"x");
}

#[test]
fn dirdelete_removes_the_directories_it_made_and_refuses_the_users() {
    let d = scratch();
    let (code, v, err) = run(
        &[
            "--name=dd",
            "--ioengine=dirdelete",
            "--filesize=4k",
            "--nrfiles=5",
        ],
        d.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(timed_ops(&v), 5);
    assert_empty(d.path());
    // An existing directory is the user's: not removed without --allow-overwrite.
    std::fs::create_dir(d.path().join("dd.0.0")).unwrap();
    let (code, _, err) = run(
        &[
            "--name=dd",
            "--ioengine=dirdelete",
            "--filesize=4k",
            "--nrfiles=2",
        ],
        d.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ioengine=dirdelete would remove it, and iogauge did not create it"),
        "{err}"
    );
    assert_eq!(dirs_in(d.path()), vec!["dd.0.0".to_string()]);
}

#[test]
fn dircreate_refuses_an_existing_path_and_a_second_loop_fails_as_fio() {
    let d = scratch();
    std::fs::create_dir(d.path().join("dc.0.1")).unwrap();
    let (code, _, err) = run(
        &[
            "--name=dc",
            "--ioengine=dircreate",
            "--filesize=4k",
            "--nrfiles=2",
        ],
        d.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("ioengine=dircreate makes new directories"),
        "{err}"
    );
    assert_eq!(dirs_in(d.path()), vec!["dc.0.1".to_string()]);
    std::fs::remove_dir(d.path().join("dc.0.1")).unwrap();
    // fio 3.37 makes the directories again on the second loop, and mkdir fails with EEXIST.
    let (code, v, err) = run(
        &[
            "--name=dc",
            "--ioengine=dircreate",
            "--filesize=4k",
            "--nrfiles=2",
            "--loops=2",
        ],
        d.path(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mkdir error on"), "{err}");
    assert_eq!(u(&v, &["jobs", "0", "error"]), 17);
    assert_empty(d.path());
}

#[test]
fn a_killed_runs_directories_are_removed_by_iogauge_cleanup() {
    let d = scratch();
    std::fs::create_dir(d.path().join("users")).unwrap();
    // dirstat makes its directories before the job's start delay: kill it while it waits.
    let mut child = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=k",
            "--ioengine=dirstat",
            "--filesize=4k",
            "--nrfiles=3",
            "--startdelay=30s",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&d.path().join("k.0.2"));
    // (The tag that proves a directory is the run's follows its mkdir at once.)
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(dirs_in(d.path()).len(), 4, "{:?}", dirs_in(d.path()));
    let out = cmd(IOGAUGE).arg("cleanup").arg(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Its three directories are gone (with its marker); the user's stays.
    assert_eq!(files_in(d.path()), vec!["users".to_string()]);
}
