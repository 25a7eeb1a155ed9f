//! `iogauge check` end to end with real I/O at reduced scale: every profile, the JSON document,
//! a real failing verdict on a throttled disk (blkio cgroup), refusals, and cleanup.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;
use std::process::Output;

fn check(args: &[&str], cwd: &Path) -> Output {
    common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .arg("check")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge")
}

/// The verdict word and summary line that a single-profile check's exit code stands for.
fn verdict_of(o: &Output) -> (&'static str, &'static str) {
    match o.status.code() {
        Some(0) => ("PASS", "\n1 passed, 0 warned, 0 failed\n"),
        Some(4) => ("WARN", "\n0 passed, 1 warned, 0 failed\n"),
        Some(3) => ("FAIL", "\n0 passed, 0 warned, 1 failed\n"),
        c => panic!("exit {c:?}: {}{}", text(&o.stdout), text(&o.stderr)),
    }
}

/// Verdicts of a JSON document agree with the exit code (no --strict).
fn assert_exit_matches(o: &Output, v: &Value) {
    let worst = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| match p["verdict"].as_str().unwrap() {
            "pass" => 0,
            "warn" => 1,
            "fail" => 2,
            other => panic!("unexpected verdict {other}"),
        })
        .max()
        .unwrap();
    assert_eq!(o.status.code(), Some([0, 4, 3][worst]), "{v}");
}

#[test]
fn every_profile_runs_at_reduced_scale_and_leaves_nothing() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    for p in ["etcd", "etcd-large", "sync-iops", "gitlab", "small-files"] {
        let o = check(
            &[p, "--dir", dir, "--scale", "0.05", "--duration", "2s"],
            d.path(),
        );
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        // Whatever this disk does (it is shared with other work), the verdict, the exit code
        // and the summary line agree.
        let (word, summary) = verdict_of(&o);
        assert!(out.starts_with(&format!("{word} {p}: ")), "{p}: {out}{err}");
        assert!(out.contains(&format!("\n  {word}  ")), "{p}: {out}");
        assert!(out.contains("\n        source: "), "{p}: {out}");
        assert!(out.contains("warning: shortened run"), "{p}: {out}");
        assert!(out.ends_with(summary), "{p}: {out}");
        // etcd and small-files are not time-based: a note first says --duration does not
        // apply to them.
        let timed = !matches!(p, "etcd" | "small-files");
        let plan = match err.split_once('\n') {
            Some((first, rest)) if !timed => {
                assert!(
                    first.starts_with(&format!(
                        "iogauge check: note: --duration does not apply to {p} ("
                    )),
                    "{p}: {err}"
                );
                rest
            }
            _ => err.as_str(),
        };
        assert!(
            plan.starts_with(&format!("iogauge check: {p}: ")),
            "{p}: {err}"
        );
        if p == "small-files" {
            assert!(
                out.contains("\n        p99 per-file create (open, write, close): "),
                "{out}"
            );
            assert!(
                err.contains(": 50 files of 5 bytes, created then read back"),
                "{err}"
            );
            assert!(
                out.contains(&format!(
                    "  {word}  create 50 small files and read them back "
                )),
                "{out}"
            );
        } else if out.contains("\n  decided after ") {
            // Published figures come from the full recipe: a run that stopped early is not
            // ranked among them.
            assert!(!out.contains("\n        rank: "), "{p}: {out}");
        } else if p != "etcd-large" {
            assert!(out.contains("\n        rank: "), "{p}: {out}");
        }
        assert_empty(d.path());
    }
}

#[test]
fn the_default_suite_runs_all_four_profiles() {
    let d = scratch();
    let o = check(
        &[
            "--dir",
            d.path().to_str().unwrap(),
            "--scale",
            "0.02",
            "--duration",
            "1s",
            "--format",
            "json",
        ],
        d.path(),
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_exit_matches(&o, &v);
    let names: Vec<&str> = v["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["profile"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["etcd", "sync-iops", "small-files", "gitlab"]);
    let sf = &v["profiles"][2];
    assert_eq!(sf["metric"], "small_files_total");
    assert_eq!(sf["report"]["files"], 20);
    assert_eq!(
        sf["value"].as_f64().unwrap(),
        sf["report"]["total_ns"].as_f64().unwrap()
    );
    assert_empty(d.path());
}

#[test]
fn json_document_shape() {
    let d = scratch();
    let o = check(
        &[
            "etcd",
            "--dir",
            d.path().to_str().unwrap(),
            "--scale",
            "0.1",
            "--format",
            "json",
        ],
        d.path(),
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_exit_matches(&o, &v);
    let p = &v["profiles"][0];
    assert_eq!(p["profile"], "etcd");
    assert_eq!(p["metric"], "sync_p99");
    assert_eq!(p["unit"], "ns");
    assert_eq!(p["threshold"], 10_000_000.0);
    assert!(p["source"].as_str().unwrap().starts_with("etcd FAQ"));
    assert_eq!(p["references"].as_array().unwrap().len(), 7);
    assert_eq!(p["shortened"], true);
    // The value is the run's p99 sync latency, from the full report alongside.
    let p99 = &p["report"]["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"];
    assert_eq!(p["value"].as_f64().unwrap(), p99.as_f64().unwrap());
    assert_eq!(p["report"]["jobs"][0]["jobname"], "etcd");
}

#[test]
fn unwritable_or_missing_directories_and_unknown_profiles_exit_2() {
    let d = scratch();
    let o = check(&["etcd", "--dir", "/proc"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge check: '/proc' is on proc, a pseudo filesystem the kernel generates, not storage; choose a directory on the disk you mean with --dir\n"
    );
    let ro = scratch();
    let o = check(&["etcd", "--dir", "/nonexistent"], d.path());
    assert_eq!(
        text(&o.stderr),
        "iogauge check: directory '/nonexistent' does not exist; create it or choose another with --dir\n"
    );
    let file = ro.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let o = check(&["etcd", "--dir", file.to_str().unwrap()], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge check: '{}' is not a directory; --dir takes the directory to test in (the test files are created there)\n",
            file.display()
        )
    );
    let o = check(&["etdc"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge check: unknown profile 'etdc'; did you mean 'etcd'?\n"
    );
    assert_eq!(text(&o.stdout), "");
    // fio's flags are pointed at `iogauge fio`.
    let o = check(&["--rw=write"], d.path());
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("error: unexpected argument '--rw' found"),
        "{err}"
    );
    assert!(
        err.ends_with("note: check takes --dir, --scale, --duration, --size, --format, --strict, --keep-files, --report and --list; fio's options (--rw, --bs, --ioengine, ...) go to 'iogauge fio'\n"),
        "{err}"
    );
}

/// tmpfs measures RAM: never a plain PASS (WARN, exit 4; exit 3 with --strict), no rank.
#[test]
fn memory_backed_directories_are_not_a_pass() {
    let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("skipping: no /dev/shm");
        return;
    };
    let dir = d.path().to_str().unwrap();
    let o = check(&["etcd", "--dir", dir, "--scale", "0.05"], d.path());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(4), "{out}{}", text(&o.stderr));
    assert!(out.starts_with("WARN etcd: "), "{out}");
    assert!(
        out.contains("\n  WARN  not a disk measurement: the directory is on tmpfs (memory), so this measured RAM"),
        "{out}"
    );
    assert!(!out.contains("rank:"), "{out}");
    assert!(
        out.contains("\n  next: run the check in a directory on the disk"),
        "{out}"
    );
    assert!(out.ends_with("\n0 passed, 1 warned, 0 failed\n"), "{out}");
    let o = check(
        &[
            "etcd", "--dir", dir, "--scale", "0.05", "--strict", "--format", "json",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["profiles"][0]["verdict"], "warn");
    assert!(v["profiles"][0]["not_disk"]
        .as_str()
        .unwrap()
        .contains("tmpfs"));
    assert_eq!(v["summary"]["warned"], 1);
    assert_empty(d.path());
}

/// --strict: a shortened run is at best a warning (exit 3), whatever the disk did.
#[test]
fn strict_makes_a_shortened_run_a_warning() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    let o = check(
        &["small-files", "--dir", dir, "--scale", "0.05", "--strict"],
        d.path(),
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.starts_with("WARN small-files: "), "{out}");
    assert!(
        out.contains("\n  next: run without --scale, --duration and --size"),
        "{out}"
    );
    assert_empty(d.path());
}

/// A profile that cannot run is in the result (verdict error, with the reason); the others run.
#[test]
fn a_profile_that_cannot_run_is_listed_as_an_error() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    // Not enough space for a 1 EiB file: etcd cannot run, small-files can.
    let o = check(
        &[
            "etcd",
            "small-files",
            "--dir",
            dir,
            "--size",
            "1000000g",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ps = v["profiles"].as_array().unwrap();
    assert_eq!(ps.len(), 2);
    assert_eq!(ps[0]["profile"], "etcd");
    assert_eq!(ps[0]["verdict"], "error");
    let why = ps[0]["reason"].as_str().unwrap();
    assert!(
        why.starts_with(&format!(
            "not enough free space in '{dir}': the test file needs "
        )),
        "{why}"
    );
    assert!(
        why.ends_with("or choose a --dir on a filesystem with more free space"),
        "{why}"
    );
    assert_eq!(ps[1]["verdict"], "pass");
    assert_eq!(v["summary"]["errors"], 1);
    // In text too, with the summary.
    let o = check(
        &[
            "etcd",
            "small-files",
            "--dir",
            dir,
            "--size",
            "1000000g",
            "--scale",
            "0.05",
        ],
        d.path(),
    );
    let out = text(&o.stdout);
    assert!(
        out.starts_with("ERROR etcd: etcd WAL (IBM recipe)\n  not enough free space"),
        "{out}"
    );
    assert!(out.contains("\nPASS small-files: "), "{out}");
    assert!(
        out.ends_with("\n1 passed, 0 warned, 0 failed, 1 could not run\n"),
        "{out}"
    );
    assert_empty(d.path());
}

/// Files named like another run's (fio's `etcd.0.0`, or a concurrent check's) are no obstacle:
/// each check run uses names no other run uses; a killed run's leftovers are pointed out.
#[test]
fn runs_never_collide_and_leftovers_are_named() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    std::fs::write(d.path().join("etcd.0.0"), b"fio's").unwrap();
    let dead = d.path().join("iogauge-etcd.4194305.0000abcd");
    std::fs::write(&dead, b"killed run").unwrap();
    let args = [
        "etcd",
        "small-files",
        "--dir",
        dir,
        "--scale",
        "0.05",
        "--format",
        "json",
    ];
    let spawn = || {
        common::cmd(env!("CARGO_BIN_EXE_iogauge"))
            .arg("check")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for o in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_exit_matches(&o, &v);
        let s = &v["summary"];
        let judged = ["passed", "warned", "failed"].map(|k| s[k].as_u64().unwrap());
        assert_eq!(judged.iter().sum::<u64>(), 2, "{v}");
        assert!(
            text(&o.stderr).contains(&format!(
                "note: 1 file(s) in '{dir}' are named like an earlier iogauge check's test files \
                 (e.g. '{}'), but no marker of yours lists them, so they are not removed",
                dead.display()
            )),
            "{}",
            text(&o.stderr)
        );
    }
    let mut left = files_in(d.path());
    left.sort();
    assert_eq!(left, ["etcd.0.0", "iogauge-etcd.4194305.0000abcd"]);
}

#[test]
fn list_and_help() {
    let d = scratch();
    let o = check(&["--list"], d.path());
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    for p in ["etcd", "etcd-large", "sync-iops", "small-files", "gitlab"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{p} "))),
            "{p}: {out}"
        );
    }
    let o = check(&["--help"], d.path());
    let out = text(&o.stdout);
    assert!(out.contains("small-files"), "{out}");
    assert!(out.contains("--list"), "{out}");
    assert!(out.contains("64m = 64 MiB"), "{out}");
}

/// A user's own profile in the built-in format runs; a broken one is refused with the reason.
#[test]
fn a_users_own_profile_file() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    let spec = scratch();
    let good = spec.path().join("vendor.yaml");
    std::fs::write(
        &good,
        "name: vendor-db\ntitle: VendorDB log disk\nworkload: [rw=write, ioengine=sync, fdatasync=1, bs=4k, size=4m]\n\
         metrics:\n  - {key: sync_p99, label: p99 fdatasync, better: lower, pass: 10s, source: VendorDB sizing guide}\n\
         advice: [\"Use the vendor's certified disks\"]\n",
    )
    .unwrap();
    let o = check(&[good.to_str().unwrap(), "--dir", dir], d.path());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    // The line saying how the verdict was reached comes first, then the metric.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "PASS vendor-db: VendorDB log disk", "{out}");
    assert!(lines[1].contains(" at 99.9 % confidence"), "{out}");
    assert!(lines[2].starts_with("  PASS  p99 fdatasync "), "{out}");
    assert!(
        out.contains("        source: VendorDB sizing guide\n"),
        "{out}"
    );
    assert_empty(d.path());

    let bad = spec.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "name: bad\ntitle: t\nworkload: [rw=read, bs=4k, size=4m]\n\
         metrics:\n  - {key: sync_p99, label: p99, better: lower, pass: 10ms, source: s}\n",
    )
    .unwrap();
    let o = check(&[bad.to_str().unwrap(), "--dir", dir], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge check: profile '{}': metric 'sync_p99' (p99) is not measured by this workload (sync_p99 needs fsync= or fdatasync=; read_iops a read, write_iops a write)\n",
            bad.display()
        )
    );
    std::fs::write(&bad, "name: bad\ntitle: t\nworkloads: []\n").unwrap();
    let o = check(&[bad.to_str().unwrap(), "--dir", dir], d.path());
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("unknown field `workloads`"), "{err}");
    assert!(err.contains("docs/PROFILES.md"), "{err}");
}

/// A real slow disk: a blkio cgroup limits this disk to 100 write IOPS for the iogauge process.
/// sync-iops must then fail. Needs root and cgroup v1 blkio; CI has both.
#[test]
fn a_throttled_disk_fails_sync_iops_for_real() {
    // A cgroup of the host's, made and removed here.
    serial();
    let d = scratch();
    let Some(t) = common::throttle::Throttle::new(d.path(), "write_iops_device", 100) else {
        return;
    };
    let o = t.sh(&format!(
        "exec {} check sync-iops --dir {} --duration 3s --scale 0.05",
        env!("CARGO_BIN_EXE_iogauge"),
        d.path().display()
    ));
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{out}{}", text(&o.stderr));
    assert!(out.starts_with("FAIL sync-iops: "), "{out}");
    assert!(
        out.contains(": under Manetu's 750 baseline, not recommended for production"),
        "{out}"
    );
    assert_empty(d.path());
}

#[test]
fn tuning_errors_and_what_counts_as_shortened() {
    let d = scratch();
    let dir = d.path().to_str().unwrap();
    let o = check(&["sync-iops", "--dir", dir, "--size", "1k"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge check: --size 1024: smaller than one 4096-byte block of profile 'sync-iops'; use at least 4096 bytes (e.g. 64m)\n"
    );
    // etcd is size-bound: --duration does not change it, so it is not marked as shortened.
    let o = check(
        &["etcd", "--dir", dir, "--duration", "1s", "--format", "json"],
        d.path(),
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_exit_matches(&o, &v);
    assert_eq!(v["profiles"][0]["shortened"], false);
    assert_empty(d.path());
}

/// RFC 4180 fields of one CSV line (quotes, doubled quotes, commas inside quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[test]
fn markdown_and_csv_exports_carry_every_metric() {
    let d = scratch();
    let o = check(
        &["etcd", "small-files", "--scale", "0.05", "--format", "csv"],
        d.path(),
    );
    assert!(
        [0, 3, 4].contains(&o.status.code().unwrap()),
        "{}",
        text(&o.stderr)
    );
    let out = text(&o.stdout);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("profile,verdict,metric,label,value,unit,threshold,warn_threshold,better,source,shortened,warnings,reason,host,dir")
    );
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert_eq!(rows.len(), 2, "{out}");
    for (r, (profile, metric)) in rows
        .iter()
        .zip([("etcd", "sync_p99"), ("small-files", "small_files_total")])
    {
        assert_eq!(r.len(), 15, "{r:?}");
        assert_eq!(
            (r[0].as_str(), r[2].as_str(), r[5].as_str()),
            (profile, metric, "ns")
        );
        assert!(["pass", "warn", "fail"].contains(&r[1].as_str()), "{r:?}");
        assert!(r[4].parse::<f64>().unwrap() > 0.0);
        assert_eq!(r[10], "true", "--scale marks it shortened");
        assert!(
            r[9].contains(','),
            "the source has commas and stays one field: {r:?}"
        );
    }
    let o = check(
        &["etcd", "--scale", "0.05", "--format", "markdown"],
        d.path(),
    );
    let md = text(&o.stdout);
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines[0].starts_with("**iogauge check**: `"), "{md}");
    assert_eq!(
        lines[2],
        "| profile | verdict | metric | value | needs | source |"
    );
    assert_eq!(lines[3], "|---|---|---|---:|---|---|");
    assert!(lines[4].starts_with("| etcd | **"), "{md}");
    assert!(lines[4].contains(" | p99 fdatasync latency | "), "{md}");
    assert!(md.trim_end().ends_with(" failed"), "{md}");
    assert_empty(d.path());
}

// --- a profile's unlink_each_loop over check's own file names ---

/// `check` names each profile's file itself (`filename=iogauge-NAME.TOKEN`); the rule that
/// refuses unlink_each_loop with a user's `filename=` must not refuse that name.
#[test]
fn a_profile_with_unlink_each_loop_runs_on_checks_own_file_names() {
    let d = scratch();
    let profile = "name: p\ntitle: t\nworkload:\n  - rw=write\n  - size=1m\n  - loops=2\n  - unlink_each_loop=1\n\
                   metrics:\n  - key: write_iops\n    label: l\n    better: higher\n    pass: 1 IOPS\n    source: s\n";
    std::fs::write(d.path().join("p.yaml"), profile).unwrap();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["check", "./p.yaml", "--dir"])
        .arg(&dir)
        .current_dir(d.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "exit {:?}: {err}",
        o.status.code()
    );
    assert!(!err.contains("unlink_each_loop"), "{err}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "files left in {}",
        dir.display()
    );
}
