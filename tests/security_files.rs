//! A local user who can write the test directory attacks root's iogauge: forged run markers,
//! FIFOs and symlinks where markers are looked for, a symlink swapped in for the test file in
//! the middle of a run. Root's cleanup must remove only what iogauge made, and its I/O must
//! never go anywhere else (docs/SECURITY.md). The attacker runs as nobody through `setpriv`;
//! these tests need root (CI runs as root) and say so when they skip.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

const VICTIM: &str = "root only, never to be written or removed by iogauge\n";

fn can_attack() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let setpriv = Path::new("/usr/bin/setpriv").exists() || Path::new("/bin/setpriv").exists();
    if !root || !setpriv {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs these as root with setpriv (util-linux)"
        );
        eprintln!("skipped: needs root and setpriv to act as an unprivileged attacker");
        return false;
    }
    true
}

/// A scratch tree: `share` (0777, no sticky bit, as a shared scratch directory) and `secret`
/// (0700, root's) holding `victim`.
struct Arena {
    _root: tempfile::TempDir,
    share: PathBuf,
    victim: PathBuf,
}

fn arena() -> Arena {
    let root = scratch();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let share = root.path().join("share");
    std::fs::create_dir(&share).unwrap();
    std::fs::set_permissions(&share, std::fs::Permissions::from_mode(0o777)).unwrap();
    let secret = root.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = secret.join("victim");
    std::fs::write(&victim, VICTIM).unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    Arena {
        _root: root,
        share,
        victim,
    }
}

impl Arena {
    fn victim_intact(&self) {
        assert_eq!(std::fs::read_to_string(&self.victim).unwrap(), VICTIM);
    }
}

/// `script` run by sh as nobody (uid and gid 65534, no groups), in `dir`.
fn attacker(script: &str, dir: &Path) -> std::process::Command {
    let mut c = cmd("setpriv");
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "sh",
        "-c",
        script,
    ])
    .current_dir(dir);
    c
}

fn attack(script: &str, dir: &Path) {
    let o = attacker(script, dir).output().unwrap();
    assert!(o.status.success(), "attacker: {}", text(&o.stderr));
}

/// Waits for `child` for at most `limit`; kills it and fails if it takes longer.
fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            child.kill().unwrap();
            panic!("{what} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn marker_of(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .as_bytes()
                .starts_with(b".iogauge-run.")
        })
}

#[test]
fn forged_markers_of_another_user_never_steer_roots_cleanup_or_check() {
    if !can_attack() {
        return;
    }
    let a = arena();
    // A root file in the shared directory, and the attacker's own directory named like
    // iogauge's.
    let rootfile = a.share.join("iogauge-root.db");
    std::fs::write(&rootfile, "root's").unwrap();
    let st = std::fs::metadata(&rootfile).unwrap();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let head = |v: u32| {
        format!(
            "iogauge run marker v{v}\\nhost {}\\nboot {}\\npid 4000001\\nstart 1\\n",
            host.trim(),
            boot.trim()
        )
    };
    let victim = a.victim.display().to_string();
    // Every forgery of the issue: absolute and ../ paths, time 0, a directory, an exact
    // identity of a root file (the attacker can stat it), and the old format.
    let script = format!(
        "mkdir iogauge-dir && \
         printf '{v1}time 0\\nfile {victim}\\nfile ../secret/victim\\nfile iogauge-dir\\n' > .iogauge-run.4000001.1 && \
         printf '{v2}file iogauge-root.db f {maj}:{min} {ino} 0 - -\\nfile ..%%2Fsecret%%2Fvictim f 0:0 1 0 - -\\n' > .iogauge-run.4000001.2 && \
         printf '{v2}file iogauge-root.db f {maj}:{min} {ino} 0 - -\\n' > .iogauge-run.4000001.3 && \
         chmod 0644 .iogauge-run.*",
        v1 = head(1),
        v2 = head(2),
        maj = libc::major(st.dev()),
        min = libc::minor(st.dev()),
        ino = st.ino(),
    );
    attack(&script, &a.share);

    let o = iogauge(&["cleanup", a.share.to_str().unwrap()], &a.share);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_eq!(text(&o.stdout), "", "nothing removed");
    assert_eq!(
        err.matches("the marker belongs to uid 65534, not to you (uid 0)")
            .count(),
        3,
        "{err}"
    );
    assert!(err.ends_with("0 file(s) removed\n"), "{err}");
    a.victim_intact();
    assert_eq!(std::fs::read_to_string(&rootfile).unwrap(), "root's");
    assert!(a.share.join("iogauge-dir").is_dir());

    // check --dir reaps the directory first: the same refusals, nothing removed.
    let o = iogauge(
        &[
            "check",
            "etcd",
            "--scale",
            "0.05",
            "--dir",
            a.share.to_str().unwrap(),
        ],
        &a.share,
    );
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stderr).contains("the marker belongs to uid 65534"),
        "{}",
        text(&o.stderr)
    );
    a.victim_intact();
    assert_eq!(std::fs::read_to_string(&rootfile).unwrap(), "root's");
    assert!(a.share.join("iogauge-dir").is_dir());
    // The forged markers stay (they are the attacker's), and so does everything else.
    let mut left = files_in(&a.share);
    left.sort();
    assert_eq!(
        left,
        [
            ".iogauge-run.4000001.1",
            ".iogauge-run.4000001.2",
            ".iogauge-run.4000001.3",
            "iogauge-dir",
            "iogauge-root.db"
        ]
    );
}

#[test]
fn a_fifo_or_a_symlink_to_dev_zero_named_like_a_marker_neither_hangs_nor_fills_memory() {
    if !can_attack() {
        return;
    }
    let a = arena();
    attack(
        "mkfifo .iogauge-run.1.1 && ln -s /dev/zero .iogauge-run.1.2",
        &a.share,
    );
    let run = |args: &[&str]| {
        let child = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(args)
            .current_dir(&a.share)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        finish_within(child, Duration::from_secs(20), args[0])
    };
    let o = run(&["cleanup", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("left './.iogauge-run.1.1' in place: not a regular file"),
        "{err}"
    );
    assert!(
        err.contains("left './.iogauge-run.1.2' in place: a symlink, not a marker iogauge wrote"),
        "{err}"
    );
    let o = run(&[
        "fio",
        "--name=f",
        "--size=1m",
        "--rw=write",
        "--output-format=terse",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let mut left = files_in(&a.share);
    left.sort();
    assert_eq!(left, [".iogauge-run.1.1", ".iogauge-run.1.2"]);
}

/// Root runs `args` in the shared directory while the attacker waits for `name` (a shell
/// pattern) to appear, renames it to `moved` and puts a symlink to the victim in its place.
fn swap_during(a: &Arena, name: &str, args: &[&str]) -> Output {
    let script = format!(
        "while :; do for f in {name}; do if [ -f \"$f\" ]; then mv \"$f\" moved && ln -s {} \"$f\" && exit 0; fi; done; done",
        a.victim.display()
    );
    let mut thief = attacker(&script, &a.share).spawn().unwrap();
    let o = iogauge(args, &a.share);
    let t = Instant::now();
    while thief.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = thief.kill();
    let swapped = thief.wait().unwrap().success();
    assert!(swapped, "the attacker never saw the file");
    o
}

#[test]
fn a_symlink_swapped_in_for_the_test_file_mid_run_is_never_written_through() {
    if !can_attack() {
        return;
    }
    let a = arena();
    // A read-write job: its 512 MiB layout gives the attacker the moment between creating the
    // file and opening it for I/O.
    let o = swap_during(
        &a,
        "data.bin",
        &[
            "fio",
            "--name=swap",
            "--filename=data.bin",
            "--rw=randrw",
            "--size=512m",
            "--io_size=4m",
            "--output-format=terse",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "'data.bin' was replaced while iogauge ran (a symlink or special file is there now)"
        ),
        "{err}"
    );
    a.victim_intact();
    assert_eq!(
        std::fs::metadata(&a.victim).unwrap().len(),
        VICTIM.len() as u64
    );
    // iogauge's own file was found under the name it was moved to and removed; the
    // attacker's symlink stays, and no marker.
    assert!(
        err.contains("iogauge's file had been renamed to 'moved' and was removed there"),
        "{err}"
    );
    assert_eq!(files_in(&a.share), ["data.bin"]);
    assert!(std::fs::symlink_metadata(a.share.join("data.bin"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn check_gitlab_refuses_a_swapped_test_file_and_leaves_the_victim_alone() {
    if !can_attack() {
        return;
    }
    let a = arena();
    let o = swap_during(
        &a,
        "iogauge-gitlab.*",
        &[
            "check",
            "gitlab",
            "--size",
            "512m",
            "--duration",
            "2s",
            "--dir",
            ".",
        ],
    );
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains("was replaced while iogauge ran"),
        "{out}\n{err}"
    );
    assert!(!out.contains("PASS"), "{out}");
    a.victim_intact();
    let left = files_in(&a.share);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with("iogauge-gitlab."), "{left:?}");
}

/// Root's `iogauge fio` writing `iogauge-data.bin` in `dir`, killed once the marker has
/// recorded the file.
fn killed_run(dir: &Path) {
    let child = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=k",
            "--filename=iogauge-data.bin",
            "--size=16m",
            "--rw=randwrite",
            "--time_based",
            "--runtime=30",
            "--output-format=terse",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        let recorded = marker_of(dir)
            .and_then(|m| std::fs::read_to_string(m).ok())
            .is_some_and(|s| s.contains("\nfile iogauge-data.bin f "));
        if recorded {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no marker record");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut child = child;
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_killed_runs_file_that_the_user_replaced_or_rewrote_is_not_removed() {
    let d = scratch();
    let data = d.path().join("iogauge-data.bin");
    let cleanup = || iogauge(&["cleanup", "."], d.path());

    // Replaced by a new file of the same name: another inode.
    killed_run(d.path());
    std::fs::remove_file(&data).unwrap();
    std::fs::write(&data, "mine").unwrap();
    let o = cleanup();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("left './iogauge-data.bin' in place: it is another file now"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&data).unwrap(), "mine");
    assert_eq!(files_in(d.path()), ["iogauge-data.bin"]);
    std::fs::remove_file(&data).unwrap();

    // Rewritten in place (the same inode, truncated and written): its size gives it away.
    killed_run(d.path());
    std::fs::write(&data, "mine").unwrap();
    let o = cleanup();
    assert!(
        text(&o.stderr).contains(
            "left './iogauge-data.bin' in place: its size (4 bytes) is not what the run gave \
             it (16777216 bytes): someone wrote it since"
        ),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&data).unwrap(), "mine");
    std::fs::remove_file(&data).unwrap();

    // Untouched: removed, and the marker with it.
    killed_run(d.path());
    let o = cleanup();
    assert!(
        text(&o.stdout).starts_with("removed './iogauge-data.bin' (left by iogauge pid "),
        "{}",
        text(&o.stdout)
    );
    assert_empty(d.path());
}

#[test]
fn markers_survive_any_byte_in_the_directory_path() {
    let d = scratch();
    let odd = d
        .path()
        .join(OsStr::from_bytes(b"odd\nname \x1b[2J\xff dir"));
    std::fs::create_dir(&odd).unwrap();
    killed_run(&odd);
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .arg("cleanup")
        .arg(&odd)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stderr).ends_with("1 file(s) removed\n"));
    // Printed with the control characters escaped.
    assert!(!o.stdout.contains(&0x1b), "{:?}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("odd\\nname \\x1b[2J"),
        "{}",
        text(&o.stdout)
    );
    assert_empty(&odd);
}

#[test]
fn logs_and_exec_output_are_never_written_through_a_planted_symlink() {
    if !can_attack() {
        return;
    }
    let a = arena();
    let v = a.victim.display().to_string();
    attack(
        &format!("ln -s {v} lg_bw.1.log && ln -s {v} lg.iolog && ln -s {v} pre.prerun.txt"),
        &a.share,
    );
    for (args, says) in [
        (
            vec!["--name=lg", "--write_bw_log=lg"],
            "cannot create log file 'lg_bw.1.log'",
        ),
        (
            vec!["--name=lg", "--write_iolog=lg.iolog"],
            "cannot open write_iolog file 'lg.iolog'",
        ),
        (
            vec!["--name=pre", "--exec_prerun=echo pwned"],
            "exec_prerun cannot write its output to 'pre.prerun.txt'",
        ),
    ] {
        let mut all = vec!["fio", "--size=1m", "--rw=write", "--output-format=terse"];
        all.extend(args);
        let o = iogauge(&all, &a.share);
        assert!(
            text(&o.stderr).contains(says),
            "{all:?}: {}",
            text(&o.stderr)
        );
        a.victim_intact();
    }
}

#[test]
fn a_missing_directory_or_a_dangling_symlink_in_the_way_is_bad_input() {
    let d = scratch();
    std::os::unix::fs::symlink("/nonexistent/target", d.path().join("dang")).unwrap();
    for (file, says) in [
        (
            "/nonexistent/dir/f",
            "iogauge fio: directory '/nonexistent/dir' does not exist; create it first or \
             choose another --directory/--filename\n",
        ),
        (
            "dang",
            "iogauge fio: 'dang' is a symlink to something that does not exist; iogauge \
             creates its files only where nothing is (never through a symlink): remove it or \
             choose another --directory/--filename\n",
        ),
    ] {
        let o = iogauge(
            &[
                "fio",
                "--name=a",
                &format!("--filename={file}"),
                "--size=1m",
                "--rw=write",
            ],
            d.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert_eq!(text(&o.stderr), says);
    }
    assert_eq!(files_in(d.path()), ["dang"]);
}
