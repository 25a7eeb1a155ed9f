//! A synchronous engine's worker has a descriptor table of its own (as a fio job, a forked
//! process, has), unless it closes descriptors itself (logs, unlink_each_loop). Checked with
//! kcmp(2) on the running process: 0 means the two threads share one table.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::path::Path;
use std::time::{Duration, Instant};

const KCMP_FILES: libc::c_long = 2;

/// kcmp(KCMP_FILES) of the process's main thread and its worker named `worker`, polled while
/// the job runs: Some(true) when they share the table, None when kcmp is not available.
fn shares_table(extra: &[&str], worker: &str) -> Option<bool> {
    let d = scratch();
    let mut child = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=p",
            "--ioengine=psync",
            "--rw=randread",
            "--size=1m",
            "--time_based",
            "--runtime=2",
            "--rate_iops=200",
            "--output-format=terse",
        ])
        .args(extra)
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::c_long;
    let task_dir = Path::new("/proc").join(pid.to_string()).join("task");
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut answer = None;
    let mut seen = false;
    while Instant::now() < deadline && !seen {
        for t in std::fs::read_dir(&task_dir).into_iter().flatten().flatten() {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            if comm.trim() != worker {
                continue;
            }
            seen = true;
            let tid: libc::c_long = t.file_name().to_string_lossy().parse().unwrap();
            // SAFETY: kcmp compares two tasks' kernel objects and touches no memory of ours.
            let r = unsafe { libc::syscall(libc::SYS_kcmp, pid, tid, KCMP_FILES, 0, 0) };
            if r < 0 {
                eprintln!("kcmp: {}; skipped", std::io::Error::last_os_error());
            } else {
                answer = Some(r == 0);
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "the job ran");
    assert!(seen, "worker thread {worker} seen while the job ran");
    assert_empty(d.path());
    answer
}

#[test]
fn a_psync_worker_has_its_own_descriptor_table() {
    if let Some(shared) = shares_table(&[], "p.0") {
        assert!(!shared, "the worker's table is its own");
    }
}

#[test]
fn a_worker_that_writes_logs_keeps_the_shared_table() {
    // The worker flushes and closes its log files: with a private table they would stay open
    // in the process's.
    let d = scratch();
    for log in [
        format!("--write_lat_log={}/lat", d.path().display()),
        format!("--write_iolog={}/io.log", d.path().display()),
    ] {
        if let Some(shared) = shares_table(&[&log], "p.0") {
            assert!(
                shared,
                "{log}: a worker closing its logs shares the process's table"
            );
        }
    }
}
