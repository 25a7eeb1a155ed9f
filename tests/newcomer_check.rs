//! What a newcomer tripped over in `iogauge check`, profiles and `cleanup` (issue 22), each
//! reproduced for real: a threshold without a unit, a profile named like a built-in one, a file
//! kept with --keep-files later called a killed run's, --duration/--size silently unused,
//! --strict's exit 3 without a reason, the free-space error in raw bytes, completions without
//! the profile names, `cleanup --dry-run`, and the default suite on a device.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::path::Path;
use std::process::Output;

fn err(o: &Output) -> String {
    text(&o.stderr)
}

fn names(d: &Path) -> Vec<String> {
    let mut v = files_in(d);
    v.sort();
    v
}

/// A user profile whose metric line is `metric`, written to `dir/p.yaml`.
fn profile(dir: &Path, name: &str, metric: &str) -> String {
    let f = dir.join("p.yaml");
    std::fs::write(
        &f,
        format!(
            "name: {name}\ntitle: t\nworkload: [rw=write, ioengine=sync, fdatasync=1, bs=4k, size=1m]\n\
             metrics:\n  - {{{metric}, source: s}}\n"
        ),
    )
    .unwrap();
    f.to_str().unwrap().to_string()
}

#[test]
fn a_latency_threshold_without_a_unit_is_refused_with_the_units_it_takes() {
    let d = scratch();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let f = profile(
        d.path(),
        "mine",
        "key: sync_p99, label: p99, better: lower, pass: 5",
    );
    let o = iogauge(&["check", &f, "--dir", data.to_str().unwrap()], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!(
            "iogauge check: profile '{f}': metric 'sync_p99': pass: 5 has no unit; a latency \
             takes a duration with its unit (ns, us or µs, ms, s, m, h), e.g. pass: 5ms\n"
        )
    );
    assert!(o.stdout.is_empty());
    assert_empty(&data);
    // A rate given as a duration is refused too, naming the unit a rate takes.
    let f = profile(
        d.path(),
        "mine",
        "key: write_iops, label: iops, better: higher, pass: 2ms",
    );
    let o = iogauge(&["check", &f, "--dir", data.to_str().unwrap()], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!(
            "iogauge check: profile '{f}': metric 'write_iops': pass: '2ms': write_iops is a rate \
             in IOPS, so write a number with its unit such as 1000 IOPS, not a duration\n"
        )
    );
    assert_empty(&data);
}

#[test]
fn a_profile_file_may_not_take_a_built_in_name() {
    let d = scratch();
    let f = profile(
        d.path(),
        "etcd",
        "key: sync_p99, label: p99, better: lower, pass: 5ms",
    );
    let o = iogauge(&["check", &f, "--dir", "."], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!(
            "iogauge check: profile '{f}': name 'etcd' is a built-in profile's; give your profile \
             a name of its own (e.g. name: etcd-custom), so that history and compare never mix \
             the two\n"
        )
    );
    assert_eq!(names(d.path()), ["p.yaml"]);
}

/// Kept files are named when kept, called kept (never a killed run's) by later runs, left by
/// a plain `cleanup`, and removed by `cleanup --kept` (after a `--dry-run` that removes
/// nothing) with the same proof as a killed run's files.
#[test]
fn kept_files_are_named_and_cleanup_removes_them_when_asked() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    // Two runs in one process, each keeping its files: one marker each.
    let o = iogauge(
        &[
            "check",
            "etcd",
            "small-files",
            "--dir",
            dir,
            "--scale",
            "0.01",
            "--keep-files",
            "--format",
            "json",
        ],
        d.path(),
    );
    let e = err(&o);
    // The verdict is the disk's business; the run itself must have worked.
    assert!(matches!(o.status.code(), Some(0 | 3 | 4)), "{e}");
    let all = names(d.path());
    let markers: Vec<&String> = all
        .iter()
        .filter(|n| n.starts_with(".iogauge-run."))
        .collect();
    assert_eq!(markers.len(), 2, "{all:?}");
    let etcd: Vec<&String> = all
        .iter()
        .filter(|n| n.starts_with("iogauge-etcd."))
        .collect();
    let small: Vec<&String> = all
        .iter()
        .filter(|n| n.starts_with("iogauge-small-files."))
        .collect();
    assert_eq!((etcd.len(), small.len()), (1, 10), "{all:?}");
    let how = format!("remove it later with `iogauge cleanup --kept '{dir}'`");
    for f in etcd.iter().chain(&small) {
        let line = format!("iogauge: kept '{dir}/{f}' as asked (--keep-files); {how}\n");
        assert!(e.contains(&line), "{line}\nnot in\n{e}");
    }

    // The next check in the directory calls them kept, never a killed run's, and keeps them.
    let o = iogauge(
        &[
            "check", "etcd", "--dir", dir, "--scale", "0.01", "--format", "json",
        ],
        d.path(),
    );
    let e = err(&o);
    assert!(!e.contains("killed"), "{e}");
    assert!(!e.contains("named like"), "{e}");
    let pid_of = |e: &str, what: &str| -> String {
        let at = e.find(what).unwrap_or_else(|| panic!("{what} not in {e}"));
        let rest = &e[at..];
        let p = rest.find("(pid ").unwrap() + 5;
        rest[p..].split(',').next().unwrap().to_string()
    };
    // One line per earlier run (one process here): its files counted, one named.
    let pid = pid_of(&e, "kept on purpose by an earlier iogauge run");
    assert!(
        e.contains(&format!(
            "iogauge check: note: 11 files (e.g. '{dir}/{}') kept on purpose by an earlier \
             iogauge run (pid {pid}, --keep-files); `iogauge cleanup --kept '{dir}'` removes them\n",
            etcd[0]
        )),
        "{e}"
    );
    assert_eq!(names(d.path()), all);

    // A plain cleanup leaves them and says how to remove them.
    let o = iogauge(&["cleanup", dir], d.path());
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
    let e = err(&o);
    assert!(
        e.contains(&format!(
            "iogauge cleanup: kept '{dir}/{}' in place: iogauge pid {pid} kept it on purpose \
             (--keep-files); add --kept to remove it\n",
            etcd[0]
        )),
        "{e}"
    );
    assert!(e.ends_with("iogauge cleanup: 0 file(s) removed\n"), "{e}");
    assert_eq!(names(d.path()), all);

    // --dry-run lists them and removes nothing.
    let o = iogauge(&["cleanup", "--kept", "--dry-run", dir], d.path());
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 11, "{out}");
    assert!(
        out.contains(&format!(
            "would remove '{dir}/{}' (kept by iogauge pid {pid} with --keep-files)\n",
            etcd[0]
        )),
        "{out}"
    );
    assert_eq!(
        err(&o),
        "iogauge cleanup: dry run: 11 file(s) would be removed; nothing was removed\n"
    );
    assert_eq!(names(d.path()), all);

    // --kept removes them, and their markers.
    let o = iogauge(&["cleanup", "--kept", dir], d.path());
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!(
            "removed '{dir}/{}' (kept by iogauge pid {pid} with --keep-files)\n",
            small[0]
        )),
        "{out}"
    );
    assert_eq!(err(&o), "iogauge cleanup: 11 file(s) removed\n");
    assert_empty(d.path());
}

/// A file kept and then changed by the user is not removed even with --kept.
#[test]
fn a_kept_file_written_since_is_not_removed() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    let o = iogauge(
        &[
            "check",
            "etcd",
            "--dir",
            dir,
            "--scale",
            "0.01",
            "--keep-files",
        ],
        d.path(),
    );
    assert!(matches!(o.status.code(), Some(0 | 3 | 4)), "{}", err(&o));
    let kept = names(d.path())
        .into_iter()
        .find(|n| n.starts_with("iogauge-etcd."))
        .unwrap();
    let path = d.path().join(&kept);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut f, b"mine now").unwrap();
    let o = iogauge(&["cleanup", "--kept", dir], d.path());
    assert!(path.exists());
    assert!(
        err(&o).contains(&format!("left '{}' in place: its size (", path.display())),
        "{}",
        err(&o)
    );
}

/// A killed run's files: `--dry-run` names them on stdout, removes nothing; then they go.
#[test]
fn cleanup_dry_run_lists_a_killed_runs_files_and_removes_nothing() {
    let d = scratch();
    let mut child = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=k",
            "--size=8m",
            "--rw=randwrite",
            "--time_based",
            "--runtime=30",
            "--output-format=terse",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_file(&d.path().join("k.0.0"));
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = names(d.path());
    assert_eq!(before.len(), 2, "{before:?}");
    let o = iogauge(&["cleanup", "--dry-run", "."], d.path());
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o.stdout),
        format!("would remove './k.0.0' (left by iogauge pid {pid}, killed)\n")
    );
    assert_eq!(
        err(&o),
        "iogauge cleanup: dry run: 1 file(s) would be removed; nothing was removed\n"
    );
    assert_eq!(names(d.path()), before);
    let o = iogauge(&["cleanup", "."], d.path());
    assert_eq!(
        text(&o.stdout),
        format!("removed './k.0.0' (left by iogauge pid {pid}, killed)\n")
    );
    assert_empty(d.path());
}

#[test]
fn duration_and_size_that_a_profile_does_not_use_are_said_in_one_line() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    let o = iogauge(
        &[
            "check",
            "etcd",
            "small-files",
            "--dir",
            dir,
            "--scale",
            "0.01",
            "--duration",
            "1",
            "--size",
            "1m",
            "--format",
            "json",
        ],
        d.path(),
    );
    let e = err(&o);
    assert!(
        e.contains(
            "iogauge check: note: --duration does not apply to etcd (it writes a fixed size: \
             --size changes that), small-files (it makes a fixed number of files: --scale changes \
             that); they run without it\n"
        ),
        "{e}"
    );
    assert!(
        e.contains(
            "iogauge check: note: --size does not apply to small-files (it makes a fixed number \
             of files: --scale changes that); it runs without it\n"
        ),
        "{e}"
    );
    // A time-based profile takes both: nothing said.
    let o = iogauge(
        &[
            "check",
            "sync-iops",
            "--dir",
            dir,
            "--scale",
            "0.01",
            "--duration",
            "1",
            "--size",
            "1m",
            "--format",
            "json",
        ],
        d.path(),
    );
    assert!(!err(&o).contains("does not apply"), "{}", err(&o));
    assert_empty(d.path());
}

#[test]
fn strict_names_the_warnings_that_made_it_fail() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    let o = iogauge(
        &[
            "check",
            "small-files",
            "--dir",
            dir,
            "--scale",
            "0.01",
            "--strict",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(3), "{}", err(&o));
    assert!(text(&o.stdout).ends_with("0 passed, 1 warned, 0 failed\n"));
    assert!(
        err(&o).ends_with(
            "iogauge check: --strict counts warnings as failures (exit 3): small-files warned: a \
             shortened run\n"
        ),
        "{}",
        err(&o)
    );
}

/// The free-space error in human units, with a --max-size that fits; following it works.
#[test]
fn the_free_space_error_is_in_human_units_and_its_fix_works() {
    if !loopfs::can_loop() {
        return;
    }
    let fs = loopfs::LoopFs::new("48M", &[]);
    let dir = fs.mnt.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["check", "sync-iops", "--dir", dir, "--duration", "1"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--format", "json"]);
        iogauge(&a, fs.dir.path())
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let why = v["profiles"][0]["reason"].as_str().unwrap().to_string();
    let head = format!("not enough free space in '{dir}': the test file needs 1.0 GiB, only ");
    assert!(why.starts_with(&head), "{why}");
    assert!(
        why.contains(" MiB is free; cap the test file with --max-size "),
        "{why}"
    );
    assert!(
        why.ends_with(
            "m (the run is then marked as shortened), or choose a --dir on a filesystem with more \
             free space"
        ),
        "{why}"
    );
    let cap = why
        .split("--max-size ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let o = run(&["--max-size", cap]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(v["profiles"][0]["verdict"], "error", "{}", err(&o));
    assert!(v["profiles"][0]["shortened"].as_bool().unwrap());
}

#[test]
fn completions_offer_the_built_in_profile_names() {
    let d = scratch();
    // (clap_complete's fish script completes no positional argument at all.)
    for shell in ["bash", "zsh"] {
        let o = iogauge(&["completions", shell], d.path());
        assert_eq!(o.status.code(), Some(0));
        let script = text(&o.stdout);
        for name in ["etcd", "etcd-large", "sync-iops", "small-files", "gitlab"] {
            assert!(script.contains(name), "{shell}: no {name}");
        }
    }
    // The names complete; any other profile argument is still read as a file (or refused as an
    // unknown name by check itself, with a suggestion), never by the parser.
    let o = iogauge(&["check", "etdc", "--dir", "."], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        "iogauge check: unknown profile 'etdc'; did you mean 'etcd'?\n"
    );
}

/// On a block device, the default suite leaves small-files out (it can only be an error
/// there) and says so in one line.
#[test]
fn on_a_device_the_default_suite_leaves_small_files_out() {
    if !loopfs::can_loop() {
        return;
    }
    let d = scratch();
    let img = d.path().join("disk.img");
    loopfs::sh("truncate", &["-s", "64M", img.to_str().unwrap()]);
    let dev = loopfs::sh("losetup", &["-f", "--show", img.to_str().unwrap()]);
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = cmd("losetup").args(["-d", &self.0]).output();
        }
    }
    let _detach = Detach(dev.clone());
    let o = iogauge(
        &[
            "check",
            "--device",
            &dev,
            "--allow-overwrite",
            "--scale",
            "0.01",
            "--duration",
            "1",
            "--format",
            "json",
        ],
        d.path(),
    );
    let e = err(&o);
    assert!(
        e.contains(
            "iogauge check: small-files is left out of the default suite on a device (it creates \
             files, so it needs a filesystem: run it with --dir)\n"
        ),
        "{e}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ran: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["profile"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["etcd", "sync-iops", "gitlab"]);
    assert_eq!(v["summary"]["errors"], 0, "{v}");
}
