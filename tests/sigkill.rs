//! After a SIGKILL nothing cleans up in the process, so the files stay; the marker the run wrote
//! before creating them lets `iogauge cleanup DIR` and the next run in the directory remove them,
//! and nothing else: a user's file, a file the marker lists without proof, a live run's files.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Stdio};

fn spawn(args: &[&str], cwd: &Path) -> Child {
    cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn kill9(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

fn names(d: &Path) -> Vec<String> {
    let mut v = files_in(d);
    v.sort();
    v
}

/// A fio job killed in its I/O phase: its data file and its marker are left.
fn killed_fio_job(d: &Path) {
    let child = spawn(
        &[
            "fio",
            "--name=k",
            "--size=64m",
            "--rw=randwrite",
            "--time_based",
            "--runtime=30",
            "--output-format=terse",
            &format!("--directory={}", d.display()),
        ],
        d,
    );
    wait_for_file(&d.join("k.0.0"));
    // Past the layout: the file is complete, the I/O running.
    std::thread::sleep(std::time::Duration::from_millis(300));
    kill9(child);
    let left = names(d);
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left[0].starts_with(".iogauge-run."), "{left:?}");
    assert_eq!(left[1], "k.0.0");
}

#[test]
fn cleanup_removes_what_a_killed_run_left_and_nothing_else() {
    common::serial();
    let d = scratch();
    killed_fio_job(d.path());
    std::fs::write(d.path().join("notes.txt"), "mine").unwrap();
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["cleanup"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with(&format!(
            "removed '{}/k.0.0' (left by iogauge pid ",
            d.path().display()
        )),
        "{out}"
    );
    assert!(text(&o.stderr).ends_with("1 file(s) removed\n"));
    assert_eq!(names(d.path()), vec!["notes.txt"]);

    // Nothing left to do: a second cleanup removes nothing and says so.
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["cleanup"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(names(d.path()), vec!["notes.txt"]);
}

#[test]
fn the_next_run_in_the_directory_removes_a_killed_runs_files_first() {
    common::serial();
    let d = scratch();
    killed_fio_job(d.path());
    // The same job again: without the marker it would refuse k.0.0 as a killed run's leftover.
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=k",
            "--size=1m",
            "--rw=write",
            "--output-format=terse",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "iogauge: removed '{}/k.0.0', left by iogauge (pid ",
            d.path().display()
        )),
        "{err}"
    );
    assert!(names(d.path()).is_empty(), "{:?}", names(d.path()));
}

#[test]
fn a_listed_file_without_proof_and_a_live_runs_marker_are_left_alone() {
    common::serial();
    let d = scratch();
    let user = d.path().join("data.db");
    std::fs::write(&user, "precious").unwrap();
    // A marker of a dead run (pid above pid_max) that lists the user's file with another
    // identity (as if the run had made a file of that name that the user replaced): it stays.
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let marker = d.path().join(".iogauge-run.4194305.1");
    let uid = std::fs::metadata(d.path()).unwrap().uid();
    std::fs::write(
        &marker,
        format!(
            "iogauge run marker v2\nhost {}\nboot {}\npid 4194305\nstart 1\nintend data.db\n\
             file data.db f 0:0 1 {uid} - -\n",
            host.trim(),
            boot.trim(),
        ),
    )
    .unwrap();
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["cleanup"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&user).unwrap(), "precious");
    assert!(
        text(&o.stderr).contains(&format!(
            "left '{}' in place: it is another file now",
            user.display()
        )),
        "{}",
        text(&o.stderr)
    );
    assert!(!marker.exists(), "the dead run's marker is removed");

    // A running iogauge's files are its own.
    let child = spawn(
        &[
            "fio",
            "--name=live",
            "--size=16m",
            "--rw=write",
            "--time_based",
            "--runtime=30",
            "--output-format=terse",
            &format!("--directory={}", d.path().display()),
        ],
        d.path(),
    );
    wait_for_file(&d.path().join("live.0.0"));
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["cleanup"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(d.path().join("live.0.0").exists());
    assert!(
        text(&o.stderr).contains("is still running there"),
        "{}",
        text(&o.stderr)
    );
    kill9(child);
    // Now it is dead: its file goes.
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["cleanup"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(names(d.path()), vec!["data.db"]);
}

#[test]
fn cleanup_of_something_that_is_not_a_directory_is_bad_input() {
    common::serial();
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["cleanup", "/nonexistent-dir"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge cleanup: '/nonexistent-dir' is not a directory; give the directory a killed \
         run used\n"
    );
}
