//! Cross-checks against fio 3.33 for the files group: openfiles below the number of files,
//! create_fsync, create_serialize, overwrite, file_append, offset_align, fill_device/fill_fs,
//! opendir. Each job file in tests/fixtures/fio/files-*.fio runs under both tools at a small
//! size; counts are compared, iogauge's JSON must hold every key fio prints, and the
//! behaviour each option exists for is asserted.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

/// The total_ios of job `j` in direction `d`.
fn ios(v: &Value, j: usize, d: &str) -> u64 {
    u(v, &["jobs", &j.to_string(), d, "total_ios"])
}

/// iogauge fio with `args` and `--directory=d`: exit code and stderr.
fn iogauge(args: &[&str], d: &Path) -> (i32, String) {
    let out = cmd(IOGAUGE)
        .arg("fio")
        .args(args)
        .arg(format!("--directory={}", d.display()))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stderr).trim().to_string(),
    )
}

#[test]
fn openfiles_below_the_number_of_files_counts_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("files-openfiles.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    // Every file's region is covered once per loop, two files at a time.
    assert_eq!(ios(&g.json, 0, "write"), 64);
    assert_eq!(ios(&g.json, 1, "read"), 64);
    assert_eq!(ios(&g.json, 2, "write"), 128);
    assert_eq!(ios(&g.json, 4, "read"), 30);
}

/// Data files under `dir` that process `pid` holds open now.
fn open_data_files(pid: u32, dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|r| {
            r.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|t| t.starts_with(dir) && !t.to_string_lossy().contains(".iogauge"))
                .map(|t| t.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn openfiles_limit_holds_while_files_rotate() {
    // nrfiles=6 openfiles=2, paced: never more than 2 of the job's files open at once, and
    // every file was open at some point (they rotate through the two slots).
    let d = scratch();
    let mut child = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=t",
            "--rw=write",
            "--bs=4k",
            "--size=384k",
            "--nrfiles=6",
            "--openfiles=2",
            "--rate_iops=400",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut most, mut samples) = (0, 0);
    let mut ever = BTreeSet::new();
    while child.try_wait().unwrap().is_none() {
        let open = open_data_files(child.id(), d.path());
        if !open.is_empty() {
            samples += 1;
        }
        most = most.max(open.len());
        ever.extend(open);
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ios(&v, 0, "write"), 96);
    assert!(
        samples > 10,
        "the job's files were seen open only {samples} times"
    );
    assert_eq!(most, 2, "data files open at once");
    assert_eq!(ever.len(), 6, "files seen open: {ever:?}");
    assert_empty(d.path());
}

#[test]
fn openfiles_combinations_not_covered_are_refused() {
    let d = scratch();
    for (extra, what) in [
        ("--ioengine=io_uring", "with ioengine=io_uring"),
        ("--end_fsync=1", "together with end_fsync"),
        ("--verify=crc32c", "together with verify"),
        (
            "--file_service_type=zipf:1.1",
            "together with file_service_type=zipf/pareto/normal",
        ),
    ] {
        let (code, err) = iogauge(
            &[
                "--name=t",
                "--rw=write",
                "--size=64k",
                "--nrfiles=4",
                "--openfiles=2",
                extra,
            ],
            d.path(),
        );
        assert_eq!(code, 2, "{extra}: {err}");
        assert!(
            err.contains(&format!("openfiles=2 below the job's 4 files {what}")),
            "{extra}: {err}"
        );
        assert_empty(d.path());
    }
}
