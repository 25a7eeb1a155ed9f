//! Every command ends quietly when the reader of its stdout went away (`… | head`): the exit
//! code it would have had, no panic, no "Broken pipe" on stderr, and no file left behind. The
//! closed reader is made deterministic: the pipe's read end is closed before iogauge starts.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn iogauge() -> Command {
    cmd(env!("CARGO_BIN_EXE_iogauge"))
}

/// Runs `c` with stdout a pipe nobody reads (its read end closed before the start).
fn closed_stdout(c: &mut Command) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    c.stdout(Stdio::from(writer)).stderr(Stdio::piped());
    c.output().unwrap()
}

fn open_stdout(c: &mut Command) -> Output {
    c.output().unwrap()
}

/// A quiet end: no panic (exit 101), no complaint about the pipe.
fn assert_quiet(what: &str, o: &Output) {
    let err = text(&o.stderr);
    assert_ne!(o.status.code(), Some(101), "{what} panicked: {err}");
    assert!(o.status.code().is_some(), "{what} died of a signal: {err}");
    for word in ["panicked", "Broken pipe", "broken pipe", "EPIPE"] {
        assert!(!err.contains(word), "{what}: stderr says {word:?}: {err}");
    }
}

/// The same command, once read and once not: the same exit code, and quiet when not read.
fn same_code(what: &str, mut make: impl FnMut() -> Command) {
    let read = open_stdout(&mut make());
    assert!(
        !read.stdout.is_empty(),
        "{what} prints nothing, so this tests nothing: {}",
        text(&read.stderr)
    );
    let unread = closed_stdout(&mut make());
    assert_quiet(what, &unread);
    assert_eq!(
        unread.status.code(),
        read.status.code(),
        "{what}: exit code with a closed stdout: {}",
        text(&unread.stderr)
    );
}

fn fio_null(db: &Path, name: &str) -> Command {
    let mut c = iogauge();
    c.env_remove("IOGAUGE_NO_HISTORY").args([
        "fio",
        "--ioengine=null",
        "--size=1m",
        "--rw=randwrite",
        "--output-format=json",
        "--history-db",
    ]);
    c.arg(db).arg(format!("--name={name}"));
    c
}

#[test]
fn fio_history_compare_report_and_completions_end_quietly() {
    let d = scratch();
    let db = d.path().join("runs.db");
    // A run whose stdout is closed still runs, saves and exits 0.
    for _ in 0..4 {
        let o = closed_stdout(fio_null(&db, "j").current_dir(d.path()));
        assert_quiet("iogauge fio", &o);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let listed = open_stdout(
        iogauge()
            .args(["history", "--format", "json", "--history-db"])
            .arg(&db),
    );
    let rows: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        rows.as_array().unwrap().len(),
        4,
        "the unread runs were saved"
    );

    let db_ = db.clone();
    let history = move |args: &[&str]| {
        let mut c = iogauge();
        c.arg("history").args(args).arg("--history-db").arg(&db_);
        c
    };
    same_code("history", || history(&[]));
    same_code("history show", || history(&["show", "1"]));
    same_code("history show --format json", || {
        history(&["show", "1", "--format", "json"])
    });
    same_code("compare", || {
        let mut c = iogauge();
        c.args(["compare", "--a", "1", "2", "--b", "3", "4", "--history-db"])
            .arg(&db);
        c
    });
    same_code("fio --version", || {
        let mut c = iogauge();
        c.args(["fio", "--version"]);
        c
    });
    same_code("fio --help", || {
        let mut c = iogauge();
        c.args(["fio", "--help"]);
        c
    });
    let doc = d.path().join("run.json");
    let shown = open_stdout(history(&["show", "1", "--format", "json"]).current_dir(d.path()));
    std::fs::write(&doc, &shown.stdout).unwrap();
    same_code("report", || {
        let mut c = iogauge();
        c.arg("report").arg(&doc);
        c
    });
    same_code("completions", || {
        let mut c = iogauge();
        c.args(["completions", "bash"]);
        c
    });
    same_code("--help", || {
        let mut c = iogauge();
        c.arg("--help");
        c
    });
}

#[test]
fn check_and_preflight_end_quietly_and_remove_their_files() {
    let d = scratch();
    same_code("check --list", || {
        let mut c = iogauge();
        c.args(["check", "--list"]);
        c
    });
    let bench = d.path().join("bench");
    std::fs::create_dir(&bench).unwrap();
    for format in ["text", "json", "csv"] {
        let o = closed_stdout(
            iogauge()
                .args([
                    "check",
                    "sync-iops",
                    "--duration",
                    "1s",
                    "--format",
                    format,
                    "--dir",
                ])
                .arg(&bench),
        );
        assert_quiet("check", &o);
        // Whatever the disk earned: passed, failed or warned, never "could not run".
        assert!(
            matches!(o.status.code(), Some(0 | 3 | 4)),
            "check --format {format}: {:?} {}",
            o.status.code(),
            text(&o.stderr)
        );
        assert_empty(&bench);
    }
    let spec = d.path().join("s.yaml");
    std::fs::write(
        &spec,
        format!(
            "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: p\nspec:\n  \
             hostCollectors:\n    - filesystemPerformance:\n        collectorName: perf\n        \
             directory: {}\n        fileSize: 1Mi\n        operationSize: 4096\n        datasync: true\n  \
             hostAnalyzers:\n    - filesystemPerformance:\n        collectorName: perf\n        outcomes:\n          \
             - pass: {{when: \"p99 < 100s\", message: fine}}\n          - fail: {{when: \"p99 >= 100s\", message: slow}}\n",
            bench.display()
        ),
    )
    .unwrap();
    for format in ["human", "json", "yaml"] {
        let o = closed_stdout(
            iogauge()
                .args(["preflight", "--format", format])
                .arg(&spec)
                .current_dir(d.path()),
        );
        assert_quiet("preflight", &o);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(!bench.exists() || common::files_in(&bench).is_empty());
    }
}

#[test]
fn kube_dry_run_ends_quietly() {
    same_code("kube check --dry-run", || {
        let mut c = iogauge();
        c.args([
            "kube",
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--image",
            "registry.example/iogauge:0.1",
            "--dry-run",
        ]);
        c
    });
}

/// A `--status-interval` stream nobody reads any more stops its run at the next dump, as
/// Ctrl-C would, and removes its files: it does not run on for its whole runtime.
#[test]
fn an_unread_status_stream_stops_the_run_and_cleans_up() {
    let d = scratch();
    let t0 = Instant::now();
    let o = closed_stdout(
        iogauge()
            .args([
                "fio",
                "--name=s",
                "--rw=randwrite",
                "--size=4m",
                "--time_based",
                "--runtime=60",
                "--status-interval=1",
                "--output-format=json",
            ])
            .current_dir(d.path()),
    );
    assert_quiet("fio --status-interval", &o);
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "ran on for {:?}",
        t0.elapsed()
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr)
            .contains("interrupted by a closed stdout; removed the files iogauge created"),
        "{}",
        text(&o.stderr)
    );
    assert_empty(d.path());
}

/// A leftover of a killed run, removed by `cleanup` while nobody reads its list.
#[test]
fn cleanup_ends_quietly_and_still_removes() {
    let d = scratch();
    let mut child = iogauge()
        .args([
            "fio",
            "--name=k",
            "--rw=write",
            "--size=1m",
            "--time_based",
            "--runtime=60",
        ])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_file(&d.path().join("k.0.0"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!common::files_in(d.path()).is_empty());
    let o = closed_stdout(iogauge().arg("cleanup").arg(d.path()));
    assert_quiet("cleanup", &o);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_empty(d.path());
}

/// Any other write error is not the reader's choice: said once, and the exit code is 1.
#[test]
fn a_full_stdout_is_said_and_exits_1() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = iogauge()
        .args(["check", "--list"])
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "iogauge: cannot write the output to stdout: No space left on device (os error 28)\n"
    );
}
