//! The exit code of every command, decided in one place (`cli::exit_code`): 0 ok, 1 an error
//! while running or interrupted, 2 bad input or usage, 3 a failed outcome, 4 a warning. Per
//! command: ok, bad input, an error while running (a full filesystem, a failing device) and an
//! interrupt where they are cheap to cause. Outcomes 3 and 4 depend on the disk's speed; their
//! mapping is the unit test `cli::tests::exit_codes_follow_the_one_mapping`.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

fn run_in(args: &[&str], cwd: &Path) -> Output {
    common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("spawn iogauge")
}

/// The exit code, with stderr for the failure message.
fn code(o: &Output) -> (Option<i32>, String) {
    (o.status.code(), text(&o.stderr))
}

/// `args` started in `cwd`, SIGINT after `ms`: what it did.
fn interrupted(args: &[&str], cwd: &Path, ms: u64) -> Output {
    // Signal timing: alone on the machine, as the other interrupt tests.
    serial();
    let child = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().unwrap()
}

/// A small fio job writing in `dir`.
fn small_job(dir: &Path) -> Vec<String> {
    [
        "fio",
        "--name=j",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        &format!("--directory={}", dir.display()),
    ]
    .map(String::from)
    .to_vec()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn usage_completions_and_version() {
    let d = scratch();
    assert_eq!(run_in(&["nosuch"], d.path()).status.code(), Some(2));
    assert_eq!(run_in(&["--version"], d.path()).status.code(), Some(0));
    assert_eq!(run_in(&["--help"], d.path()).status.code(), Some(0));
    assert_eq!(
        run_in(&["completions", "bash"], d.path()).status.code(),
        Some(0)
    );
}

#[test]
fn check_ok_bad_input_and_interrupted() {
    let d = scratch();
    assert_eq!(
        run_in(&["check", "--list"], d.path()).status.code(),
        Some(0)
    );
    let o = run_in(
        &["check", "etcd", "--dir", "/nonexistent-iogauge"],
        d.path(),
    );
    assert_eq!(
        code(&o),
        (
            Some(2),
            "iogauge check: directory '/nonexistent-iogauge' does not exist; create it or choose \
             another with --dir\n"
                .into()
        )
    );
    let o = run_in(&["check", "nosuch-profile"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // A time-based profile cut short: exit 1, its files removed.
    let o = interrupted(
        &[
            "check",
            "sync-iops",
            "--dir",
            ".",
            "--duration",
            "30",
            "--max-size",
            "4m",
        ],
        d.path(),
        1500,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("iogauge check: interrupted by SIGINT"));
    assert_empty(d.path());
}

/// A user profile whose job needs more I/O buffer memory than the host has.
const HUGE_BUFFERS: &str = "name: big\ntitle: huge buffers\nworkload:\n  - rw=write\n  - \
    ioengine=libaio\n  - iodepth=4096\n  - bs=1g\n  - size=1g\nmetrics:\n  - key: write_iops\n    \
    label: write IOPS\n    better: higher\n    pass: 1000 IOPS\n    warn: 750 IOPS\n    source: test\n";

/// The same refusal (I/O buffers that cannot fit in memory) is bad input under `check` as
/// under `fio`: exit 2 for both (under check it was a profile ERROR, exit 1).
#[test]
fn a_job_refused_at_run_time_is_bad_input_under_check_and_fio() {
    let d = scratch();
    std::fs::write(d.path().join("big.yaml"), HUGE_BUFFERS).unwrap();
    let o = run_in(
        &["check", "./big.yaml", "--dir", ".", "--format", "json"],
        d.path(),
    );
    let (rc, err) = code(&o);
    assert_eq!(rc, Some(2), "{err}");
    let why = "job 'big': 4096 I/O in flight × 1073741824 bytes per block × numjobs=1 needs \
               4096GiB of I/O buffers";
    assert!(err.contains(&format!("iogauge check: big: {why}")), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["profiles"][0]["verdict"], "error");
    let o = run_in(
        &[
            "fio",
            "--name=big",
            "--rw=write",
            "--ioengine=libaio",
            "--iodepth=4096",
            "--bs=1g",
            "--size=1g",
            "--directory=.",
        ],
        d.path(),
    );
    let (rc, err) = code(&o);
    assert_eq!(rc, Some(2), "{err}");
    assert!(err.starts_with(&format!("iogauge fio: {why}")), "{err}");
    assert_eq!(files_in(d.path()), ["big.yaml"]);
}

#[test]
fn check_and_fio_on_a_full_filesystem_are_run_errors() {
    if !loopfs::can_loop() {
        return;
    }
    let fs = loopfs::LoopFs::new("16M", &[]);
    let dir = fs.mnt.to_str().unwrap();
    // Not enough free space for the test file: an error while running (1), not bad input.
    let o = run_in(
        &["check", "sync-iops", "--dir", dir, "--duration", "1"],
        fs.dir.path(),
    );
    let (rc, err) = code(&o);
    assert_eq!(rc, Some(1), "{err}");
    assert!(err.contains("not enough free space"), "{err}");
    let mut job = small_job(&fs.mnt);
    job[4] = "--size=64m".into();
    let o = run_in(&strs(&job), fs.dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(fs.left(&["lost+found"]), Vec::<String>::new());
}

#[test]
fn fio_ok_bad_input_io_error_and_interrupted() {
    let d = scratch();
    let job = small_job(d.path());
    let o = run_in(&strs(&job), d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&["fio", "--name=j", "--rw=bogus"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // Every write to /dev/full fails (ENOSPC): the job ends with an I/O error.
    let o = run_in(
        &[
            "fio",
            "--allow-overwrite",
            "--name=j",
            "--filename=/dev/full",
            "--rw=write",
            "--bs=4k",
            "--size=16k",
        ],
        d.path(),
    );
    let (rc, err) = code(&o);
    assert_eq!(rc, Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let mut long = small_job(d.path());
    long.extend(["--time_based".into(), "--runtime=30".into()]);
    let o = interrupted(&strs(&long), d.path(), 1000);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_empty(d.path());
}

/// A HostPreflight with one collector writing in `dir` and no analyzer (collect only).
fn collect_only(dir: &Path) -> String {
    format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\nspec:\n  \
         hostCollectors:\n    - filesystemPerformance:\n        collectorName: perf\n        \
         directory: {}\n        fileSize: 64Ki\n        operationSize: 4096\n        datasync: true\n",
        dir.display()
    )
}

#[test]
fn preflight_ok_bad_input_a_collector_that_cannot_run_and_interrupted() {
    let d = scratch();
    std::fs::write(d.path().join("ok.yaml"), collect_only(&d.path().join("b"))).unwrap();
    let o = run_in(&["preflight", "--output", "out", "ok.yaml"], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&["preflight", "missing.yaml"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // Its directory cannot be made (a file is in the way): that collector's error, exit 1.
    std::fs::write(d.path().join("file"), b"x").unwrap();
    let bad = d.path().join("file/b");
    std::fs::write(d.path().join("bad.yaml"), collect_only(&bad)).unwrap();
    let o = run_in(&["preflight", "--output", "out2", "bad.yaml"], d.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    // Interrupted while collecting (1 GiB in fdatasynced 4 KiB writes takes far longer).
    let long = collect_only(&d.path().join("c")).replace("fileSize: 64Ki", "fileSize: 1Gi");
    std::fs::write(d.path().join("long.yaml"), long).unwrap();
    let o = interrupted(
        &["preflight", "--output", "out3", "long.yaml"],
        d.path(),
        1500,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("iogauge preflight: interrupted"));
    assert!(!d.path().join("c").exists());
}

#[test]
fn report_ok_bad_input_and_a_full_disk() {
    let d = scratch();
    let mut job = small_job(d.path());
    job.extend(["--output-format=json".into(), "--output=r.json".into()]);
    let o = run_in(&strs(&job), d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&["report", "r.json", "-o", "r.html"], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&["report", "missing.json"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    // The page cannot be written (a symbolic link in the way): refused, bad input.
    std::os::unix::fs::symlink("r.html", d.path().join("l.html")).unwrap();
    let o = run_in(&["report", "r.json", "-o", "l.html"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    if !loopfs::can_loop() {
        return;
    }
    let fs = loopfs::LoopFs::new("8M", &[]);
    fs.fill("filler");
    let page = fs.mnt.join("r.html");
    let o = run_in(
        &["report", "r.json", "-o", page.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
}

#[test]
fn compare_bad_input() {
    let d = scratch();
    let o = run_in(&["compare", "a"], d.path());
    assert_eq!(
        code(&o),
        (
            Some(2),
            "iogauge compare: expected two runs (compare A B) or groups (--a RUN… --b RUN…)\n"
                .into()
        )
    );
    let o = run_in(
        &["compare", "/nonexistent1.json", "/nonexistent2.json"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn history_ok_and_bad_input() {
    let d = scratch();
    let db = d.path().join("h.db");
    let db = db.to_str().unwrap();
    let o = run_in(&["history", "--history-db", db], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&["history", "--history-db", db, "show", "7"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let o = run_in(&["history", "--history-db", db, "prune"], d.path());
    assert_eq!(
        code(&o),
        (
            Some(2),
            "iogauge history prune: say what to remove: --older-than AGE (e.g. 30d), --keep N, \
             or both (--all: every run)\n"
                .into()
        )
    );
}

#[test]
fn cleanup_ok_and_bad_input() {
    let d = scratch();
    let o = run_in(&["cleanup", "."], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&["cleanup", "missing"], d.path());
    assert_eq!(
        code(&o),
        (
            Some(2),
            "iogauge cleanup: 'missing' is not a directory; give the directory a killed run used\n"
                .into()
        )
    );
}

#[test]
fn kube_dry_run_ok_and_bad_input() {
    let d = scratch();
    let o = run_in(
        &[
            "kube",
            "check",
            "--storage-class",
            "std",
            "--image",
            "img",
            "--dry-run",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run_in(&["kube", "check", "--image", "img", "--dry-run"], d.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn check_device_bad_input() {
    let d = scratch();
    let o = run_in(
        &["check", "--device", "/dev/null", "--allow-overwrite"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}
