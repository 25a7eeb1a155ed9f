//! Signals at many moments, sent the way `timeout` sends them (to the process, then again to it
//! as a member of the group: two signals in a row): nothing is ever left behind, results that
//! finished are printed, and an interrupted run exits 1 with a one-line reason.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::Duration;

/// Delays from 20 ms (before or during start-up and layout) to seconds (during the I/O).
const SWEEP_MS: [u64; 8] = [20, 45, 90, 180, 350, 700, 1400, 2800];

fn spawn(args: &[&str], cwd: &Path) -> Child {
    common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iogauge")
}

fn signal_twice(child: &Child, sig: i32) {
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, sig);
        libc::kill(child.id() as i32, sig);
    }
}

/// Sends `sig` twice after `ms`, and checks what must hold whenever it arrived.
fn interrupt_at(args: &[&str], dir: &Path, ms: u64, sig: i32) -> Output {
    let child = spawn(args, dir);
    std::thread::sleep(Duration::from_millis(ms));
    signal_twice(&child, sig);
    let o = child.wait_with_output().unwrap();
    assert_empty(dir);
    let err = text(&o.stderr);
    match o.status.code() {
        // It finished before the signal, with whatever verdict the disk earned.
        Some(0 | 3 | 4) => {}
        Some(1) => assert!(
            err.contains("interrupted by SIG"),
            "{args:?} at {ms} ms: {err}"
        ),
        // Killed before the handlers existed: that is before anything was created.
        None => {}
        c => panic!("{args:?} at {ms} ms: exit {c:?}: {err}"),
    }
    o
}

#[test]
fn check_interrupted_at_any_moment_leaves_nothing() {
    common::serial();
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    for (i, p) in ["small-files", "etcd", "sync-iops", "gitlab", "etcd-large"]
        .iter()
        .enumerate()
    {
        let files = if *p == "small-files" { "1" } else { "0.05" };
        for (j, ms) in SWEEP_MS.iter().enumerate() {
            let sig = if (i + j) % 2 == 0 {
                libc::SIGINT
            } else {
                libc::SIGTERM
            };
            let o = interrupt_at(
                &[
                    "check",
                    p,
                    "--dir",
                    dir,
                    "--scale",
                    files,
                    "--duration",
                    "2s",
                ],
                d.path(),
                *ms,
                sig,
            );
            let out = text(&o.stdout);
            if o.status.code() == Some(1) {
                // Interrupted while running, or before it started: said so, on stdout too.
                assert!(
                    out.starts_with(&format!("INTERRUPTED {p}: "))
                        || out.starts_with(&format!("SKIPPED {p}: ")),
                    "{p} at {ms} ms: {out}"
                );
            }
        }
    }
}

/// A full check interrupted in its second profile prints the first one's verdict and marks the
/// second as interrupted, in text and in JSON.
#[test]
fn check_keeps_finished_results_when_interrupted() {
    common::serial();
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    for json in [false, true] {
        let mut args = vec![
            "check",
            "small-files",
            "sync-iops",
            "gitlab",
            "--dir",
            dir,
            "--scale",
            "0.05",
            "--duration",
            "20s",
        ];
        if json {
            args.extend(["--format", "json"]);
        }
        let child = spawn(&args, d.path());
        // sync-iops's file appears once small-files has finished.
        let t0 = std::time::Instant::now();
        while !files_in(d.path())
            .iter()
            .any(|f| f.starts_with("iogauge-sync-iops."))
        {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "sync-iops never started"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(300));
        signal_twice(&child, libc::SIGINT);
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert_empty(d.path());
        assert_eq!(
            text(&o.stderr).lines().last().unwrap(),
            "iogauge check: interrupted by SIGINT during sync-iops; the files it created were removed"
        );
        if json {
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            let verdicts: Vec<&str> = v["profiles"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["verdict"].as_str().unwrap())
                .collect();
            assert_eq!(verdicts, ["pass", "interrupted", "skipped"]);
            assert!(v["profiles"][0]["value"].as_f64().unwrap() > 0.0);
            assert_eq!(v["profiles"][1]["value"], Value::Null);
            assert_eq!(v["summary"]["interrupted"], 1);
        } else {
            let out = text(&o.stdout);
            assert!(out.starts_with("PASS small-files: "), "{out}");
            assert!(
                out.contains("\nINTERRUPTED sync-iops: synchronous write IOPS (Manetu)\n  interrupted by SIGINT; its files were removed"),
                "{out}"
            );
            assert!(out.contains("\nSKIPPED gitlab: "), "{out}");
            assert!(
                out.ends_with("\n1 passed, 0 warned, 0 failed, 1 interrupted, 1 not run\n"),
                "{out}"
            );
        }
    }
}

/// `iogauge fio`, like fio, prints what it measured until the signal.
#[test]
fn fio_interrupted_at_any_moment_leaves_nothing_and_prints_results_so_far() {
    common::serial();
    let d = scratch();
    let dir = format!("--directory={}", d.path().display());
    let mut printed = 0;
    for (j, ms) in SWEEP_MS.iter().enumerate() {
        let sig = if j % 2 == 0 {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        let o = interrupt_at(
            &[
                "fio",
                "--name=sweep",
                &dir,
                "--rw=randrw",
                "--size=64m",
                "--bs=4k",
                "--time_based",
                "--runtime=30",
                "--output-format=json",
            ],
            d.path(),
            *ms,
            sig,
        );
        if o.status.code() == Some(1) && !o.stdout.is_empty() {
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            let job = &v["jobs"][0];
            assert_eq!(job["jobname"], "sweep");
            let ios = job["read"]["total_ios"].as_u64().unwrap()
                + job["write"]["total_ios"].as_u64().unwrap();
            assert!(ios > 0, "at {ms} ms: {job}");
            // Stopped long before its 30 s.
            assert!(job["job_runtime"].as_u64().unwrap() < 10_000);
            printed += 1;
        }
    }
    // The later signals all land during the I/O phase.
    assert!(printed >= 2, "results printed after only {printed} signals");
}
