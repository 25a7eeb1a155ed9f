//! Issue 21, files the user names for output (`--report`, `report -o`, `fio --output`): a full
//! disk leaves no truncated file and exits 1 (fio prints its results on stdout instead); a
//! symbolic link planted at the destination by another user is never written through; an
//! existing file is replaced whole by a rename, keeping its mode, never written through a hard
//! link.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::loopfs::LoopFs;
use common::*;

use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_iogauge");

fn iogauge(cwd: &Path) -> Command {
    let mut c = cmd(BIN);
    c.current_dir(cwd);
    c
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A fio JSON document from a null-engine run, saved in `dir/doc.json`.
fn document(dir: &Path) -> PathBuf {
    let o = iogauge(dir)
        .args(["fio", "--ioengine=null", "--size=64k", "--name=a"])
        .arg("--output-format=json")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let p = dir.join("doc.json");
    std::fs::write(&p, &o.stdout).unwrap();
    p
}

fn null_fio(cwd: &Path, extra: &[&str]) -> Output {
    iogauge(cwd)
        .args(["fio", "--ioengine=null", "--size=64k", "--name=a"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_full_disk_leaves_no_truncated_file_and_exits_1() {
    if !is_root() {
        eprintln!("skipping: a loop device needs root");
        return;
    }
    let work = scratch();
    let doc = document(work.path());
    let disk = LoopFs::new("32M", &[]);
    let mnt = &disk.mnt;
    // A page written before the disk filled: a failed rewrite must leave it whole.
    std::fs::write(mnt.join("old.html"), b"the old page").unwrap();
    disk.fill("filler");

    // `report -o`: exit 1, the errno, no file (not even an empty one), no temporary left.
    for name in ["page.html", "old.html"] {
        let dest = mnt.join(name);
        let o = iogauge(work.path())
            .arg("report")
            .arg(&doc)
            .arg("-o")
            .arg(&dest)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        assert_eq!(
            text(&o.stderr),
            format!(
                "iogauge report: cannot write {}: No space left on device\n",
                dest.display()
            )
        );
    }
    assert!(!mnt.join("page.html").exists());
    assert_eq!(
        std::fs::read(mnt.join("old.html")).unwrap(),
        b"the old page"
    );

    // `fio --output`: the results are printed on stdout instead, exit 1.
    let out = mnt.join("out.json");
    let o = null_fio(
        work.path(),
        &[
            "--output-format=json",
            &format!("--output={}", out.display()),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge fio: the results were not written: cannot write {}: No space left on \
             device; they follow on stdout\n",
            out.display()
        )
    );
    let printed: Value = serde_json::from_slice(&o.stdout).expect("the results on stdout");
    assert_eq!(printed["jobs"][0]["jobname"], "a");
    assert!(!out.exists());

    // `--report` after a run that passed: exit 1, one line, the run's output as usual.
    let page = mnt.join("r.html");
    let o = null_fio(
        work.path(),
        &[
            "--output-format=json",
            &format!("--report={}", page.display()),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge fio: the HTML report was not written: cannot write {}: No space left on \
             device\n",
            page.display()
        )
    );
    assert!(serde_json::from_slice::<Value>(&o.stdout).is_ok());
    assert!(!page.exists());

    let mut left = files_in(mnt);
    left.sort();
    assert_eq!(left, ["filler", "lost+found", "old.html"]);
}

#[test]
fn a_symlink_planted_by_another_user_is_never_written_through() {
    if !is_root() {
        eprintln!("skipping: the attacker is user nobody, which needs root to set up");
        return;
    }
    let top = scratch();
    std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Root's file, in a directory only root may enter.
    let private = top.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let secret = private.join("file");
    std::fs::write(&secret, b"root only\n").unwrap();
    // The shared directory, and the attacker's links in it.
    let shared = top.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    for name in ["report.html", "out.json", "page.html"] {
        let o = cmd("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "ln",
                "-s",
            ])
            .arg(&secret)
            .arg(shared.join(name))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let refused = |name: &str| {
        format!(
            "'shared/{name}' is a symbolic link (to {}); iogauge does not write through links: \
             name the file itself, or remove the link",
            secret.display()
        )
    };

    // Checked before the run: nothing runs, exit 2.
    let o = null_fio(top.path(), &["--report=shared/report.html"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge fio: --report=shared/report.html: {}\n",
            refused("report.html")
        )
    );
    let o = null_fio(top.path(), &["--output=shared/out.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge fio: --output=shared/out.json: {}\n",
            refused("out.json")
        )
    );
    let o = iogauge(top.path())
        .args([
            "check",
            "etcd",
            "--dir",
            "shared",
            "--report",
            "shared/report.html",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains(&refused("report.html")),
        "{}",
        text(&o.stderr)
    );

    // At the time of writing (`report -o` checks nothing before): exit 2 too.
    let doc = document(top.path());
    let o = iogauge(top.path())
        .arg("report")
        .arg(&doc)
        .args(["-o", "shared/page.html"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge report: {}\n", refused("page.html"))
    );

    assert_eq!(std::fs::read(&secret).unwrap(), b"root only\n");
    let mut left = files_in(&shared);
    left.sort();
    assert_eq!(
        left,
        ["out.json", "page.html", "report.html"],
        "only the links"
    );
}

#[test]
fn an_existing_file_is_replaced_whole_keeping_its_mode_and_not_through_a_hard_link() {
    let d = scratch();
    let doc = document(d.path());
    let page = d.path().join("page.html");
    std::fs::write(&page, b"old").unwrap();
    std::fs::set_permissions(&page, std::fs::Permissions::from_mode(0o640)).unwrap();
    let other = d.path().join("other-name");
    std::fs::hard_link(&page, &other).unwrap();
    let inode = std::fs::metadata(&page).unwrap().ino();

    let o = iogauge(d.path())
        .arg("report")
        .arg(&doc)
        .args(["-o", "page.html"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let m = std::fs::metadata(&page).unwrap();
    assert_ne!(m.ino(), inode, "a new file under the name");
    assert_eq!(m.permissions().mode() & 0o777, 0o640);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    assert_eq!(
        std::fs::read(&other).unwrap(),
        b"old",
        "the other name untouched"
    );

    // fio's --output replaces an existing file, as fio does; /dev/null is written in place.
    let out = d.path().join("out.json");
    std::fs::write(&out, b"old results").unwrap();
    let o = null_fio(d.path(), &["--output-format=json", "--output=out.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["jobname"], "a");
    let o = null_fio(d.path(), &["--output=/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");

    let mut left = files_in(d.path());
    left.sort();
    assert_eq!(
        left,
        ["doc.json", "other-name", "out.json", "page.html"],
        "no temporary file left"
    );
}
