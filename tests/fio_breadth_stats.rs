//! What a job records (`disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement`,
//! `stats`) and the time column of the logs (`log_unix_epoch`, `log_alternate_epoch`,
//! `log_alternate_epoch_clock_id`, `log_entries`): the same job files under fio 3.33 and
//! iogauge give the same zeroed JSON sections, the same text lines and the same log files.
//! fio must be installed for the cross-checks (with CI=true a missing fio fails them).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A fixture run by `program` in a fresh directory with `format`; stdout, and the log files
/// left in the directory (name → lines).
fn run(program: &str, fixture: &str, format: &str) -> (String, BTreeMap<String, Vec<String>>) {
    let (dir, data, job) = job_with_data_dir(fixture);
    let mut c = cmd(program);
    if program != "fio" {
        c.arg("fio");
    }
    let out = c
        .arg(&job)
        .arg(format!("--output-format={format}"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{program}: {}", text_of(&out.stderr));
    if program != "fio" {
        assert_empty(&data);
    }
    let mut logs = BTreeMap::new();
    for name in files_in(dir.path()) {
        if name.ends_with(".log") {
            let t = std::fs::read_to_string(dir.path().join(&name)).unwrap();
            logs.insert(name, t.lines().map(str::to_string).collect());
        }
    }
    (text_of(&out.stdout), logs)
}

fn text_of(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn iogauge() -> &'static str {
    env!("CARGO_BIN_EXE_iogauge")
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap()
}

/// The kinds of latency lines each job's text block has (`slat`, `clat`, `lat`,
/// `clat percentiles`, `buckets`, `bw`, `iops`, `sync`), by job name.
fn line_kinds(text: &str) -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut out: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    let mut cur: Option<String> = None;
    for l in text.lines() {
        if l.contains(": (groupid=") {
            cur = Some(l.split(':').next().unwrap().to_string());
            out.entry(cur.clone().unwrap()).or_default();
            continue;
        }
        if l.starts_with("Run status") {
            cur = None;
        }
        let Some(name) = &cur else { continue };
        let t = l.trim_start();
        let kind = if t.starts_with("slat (") {
            "slat"
        } else if t.starts_with("clat percentiles") {
            "clat percentiles"
        } else if t.starts_with("clat (") {
            "clat"
        } else if t.starts_with("lat (") && t.contains("min=") {
            "lat"
        } else if t.starts_with("lat (") && t.contains('%') {
            "buckets"
        } else if t.starts_with("bw (") {
            "bw"
        } else if t.starts_with("iops ") {
            "iops"
        } else if t.starts_with("sync (") {
            "sync"
        } else {
            continue;
        };
        out.get_mut(name).unwrap().insert(kind);
    }
    out
}

#[test]
fn disabled_latencies_and_stats_0_read_as_fio_3_33s() {
    if !have_fio() {
        return;
    }
    let f = &json(&run("fio", "stats-disable.fio", "json").0);
    let g = &json(&run(iogauge(), "stats-disable.fio", "json").0);
    assert_keys_superset(f, g);
    assert_counts_equal(f, g);
    for doc in [f, g] {
        let n = |j: &str, k: &str| u(job(doc, j), &["write", k, "N"]);
        // Each switched-off latency is zeroed, the others are recorded.
        assert_eq!((n("nolat", "lat_ns"), n("nolat", "clat_ns")), (0, 64));
        assert_eq!((n("noclat", "clat_ns"), n("noclat", "lat_ns")), (0, 64));
        assert_eq!((n("noslat", "slat_ns"), n("noslat", "clat_ns")), (0, 64));
        assert_eq!(n("nobw", "slat_ns"), 64);
        // No clat percentiles and no latency buckets without clat; nor sync latency.
        let nc = job(doc, "noclat");
        assert!(nc["write"]["clat_ns"].get("percentile").is_none());
        for b in ["latency_ns", "latency_us", "latency_ms"] {
            let all = nc[b].as_object().unwrap().values();
            assert!(all.clone().all(|v| v.as_f64() == Some(0.0)), "{b}");
        }
        assert!(job(doc, "nolat")["write"]["clat_ns"]
            .get("percentile")
            .is_some());
        let sn = job(doc, "syncnoclat");
        assert_eq!(u(sn, &["sync", "lat_ns", "N"]), 0);
        assert_eq!(u(sn, &["write", "lat_ns", "N"]), 64);
        // disable_bw with a per-I/O bandwidth log: no bandwidth samples; IOPS samples stay.
        let nb = job(doc, "nobw");
        assert_eq!(u(nb, &["write", "bw_samples"]), 0);
        assert_eq!(u(nb, &["write", "iops_samples"]), 64);
        // stats=0: one empty entry at the end, no name, group -1, nothing counted.
        let jobs = doc["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 6);
        let q = jobs.last().unwrap();
        assert!(q.get("jobname").is_none() && q.get("job options").is_none());
        assert_eq!(u(q, &["groupid"]), u32::MAX as u64);
        assert_eq!(u(q, &["write", "total_ios"]) + u(q, &["job_runtime"]), 0);
    }
    assert!(g["jobs"][5].get("latency_depth").is_none());
    // The syncs happened (fio 3.33 counts none of them here, with or without disable_clat).
    assert_eq!(u(job(g, "syncnoclat"), &["sync", "total_ios"]), 16);
}

#[test]
fn disabled_latencies_leave_out_fio_3_33s_text_lines_and_log_files() {
    if !have_fio() {
        return;
    }
    let (ft, flogs) = run("fio", "stats-disable.fio", "normal");
    let (gt, glogs) = run(iogauge(), "stats-disable.fio", "normal");
    let (fk, gk) = (line_kinds(&ft), line_kinds(&gt));
    assert_eq!(fk, gk, "fio:\n{ft}\niogauge:\n{gt}");
    // The stats=0 job has no block; its I/O is not in the group line either.
    assert!(!fk.contains_key("quiet"));
    let group = |t: &str| {
        let l = t.lines().find(|l| l.contains("WRITE: bw=")).unwrap();
        l.split("io=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(group(&ft), "1280KiB");
    assert_eq!(group(&gt), "1280KiB");
    assert!(!gk["nolat"].contains("lat") && gk["nolat"].contains("clat percentiles"));
    assert!(!gk["noclat"].contains("clat") && !gk["noclat"].contains("buckets"));
    assert!(!gk["noslat"].contains("slat"));
    // The same files, each empty or with one line per I/O as fio's.
    let shape = |logs: &BTreeMap<String, Vec<String>>| -> BTreeMap<String, usize> {
        logs.iter().map(|(k, v)| (k.clone(), v.len())).collect()
    };
    assert_eq!(shape(&flogs), shape(&glogs));
    assert_eq!(glogs["nobw_bw.4.log"].len(), 0);
    assert_eq!(glogs["noclat_clat_hist.2.log"].len(), 0);
    assert_eq!(glogs["quiet_bw.6.log"].len(), 0);
    assert_eq!(glogs["nolat_clat.1.log"].len(), 64);
    assert!(!glogs.contains_key("nolat_lat.1.log"));
}

/// The first column of every line of a log.
fn times(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .map(|l| l.split(", ").next().unwrap().parse().unwrap())
        .collect()
}

fn clock_ms(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    assert_eq!(unsafe { libc::clock_gettime(id, &mut ts) }, 0);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

#[test]
fn log_epochs_shift_the_time_column_as_fio_3_33s() {
    if !have_fio() {
        return;
    }
    for program in ["fio", iogauge()] {
        let (unix0, mono0) = (
            clock_ms(libc::CLOCK_REALTIME),
            clock_ms(libc::CLOCK_MONOTONIC),
        );
        let (out, logs) = run(program, "stats-log-epoch.fio", "json");
        let (unix1, mono1) = (
            clock_ms(libc::CLOCK_REALTIME),
            clock_ms(libc::CLOCK_MONOTONIC),
        );
        let doc = json(&out);
        assert_eq!(doc["jobs"].as_array().unwrap().len(), 3, "{program}");
        let names: Vec<&String> = logs.keys().collect();
        assert_eq!(
            names,
            [
                "mono_clat.3.log",
                "mono_clat_hist.3.log",
                "mono_lat.3.log",
                "mono_slat.3.log",
                "plain_clat.1.log",
                "plain_lat.1.log",
                "plain_slat.1.log",
                "unix_bw.2.log",
                "unix_clat.2.log",
                "unix_lat.2.log",
                "unix_slat.2.log",
            ],
            "{program}"
        );
        // Plain: ms since the job started, so within the run's length.
        let plain = times(&logs["plain_lat.1.log"]);
        assert_eq!(plain.len(), 32, "{program}");
        assert!(plain.iter().all(|&t| t <= unix1 - unix0), "{program}");
        // log_unix_epoch: Unix time in ms, inside the run.
        for f in ["unix_lat.2.log", "unix_clat.2.log", "unix_bw.2.log"] {
            let t = times(&logs[f]);
            assert!(!t.is_empty(), "{program} {f}");
            assert!(
                t.iter().all(|&t| (unix0..=unix1).contains(&t)),
                "{program} {f}: {t:?}"
            );
        }
        // CLOCK_MONOTONIC's epoch (boot): ms since boot, inside the run. (The histogram log
        // of so short a job may have no line in fio; its times go through the same shift.)
        for f in ["mono_lat.3.log", "mono_clat.3.log"] {
            let t = times(&logs[f]);
            assert!(!t.is_empty(), "{program} {f}");
            assert!(
                t.iter().all(|&t| (mono0..=mono1).contains(&t)),
                "{program} {f}: {t:?}"
            );
        }
    }
}

#[test]
fn bad_log_values_exit_2_naming_the_option() {
    let dir = scratch();
    for (arg, want) in [
        (
            "--log_alternate_epoch_clock_id=12345",
            "clock 12345 cannot be read",
        ),
        (
            "--log_alternate_epoch_clock_id=x",
            "expected a clock_gettime clock id",
        ),
        ("--log_entries=10", "log_entries"),
        ("--gtod_cpu=1", "cannot work in iogauge"),
        ("--trim_backlog=4", "trim_backlog aborts on an assertion"),
        ("--profile=tiobench", "tiobench's four jobs"),
        ("--ttl=4", "network engines"),
        ("--busy_poll=1", "storage cluster"),
        ("--stream_id=1", "passthrough"),
        (
            "--log_compression_cpus=99999",
            "log_compression_cpus=99999: CPU 99999 does not exist",
        ),
    ] {
        let out = cmd(iogauge())
            .args(["fio", "--name=x", "--size=4k", arg])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = text_of(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(want), "{arg}: {err}");
        assert!(out.stdout.is_empty(), "{arg}");
        assert_empty(dir.path());
    }
}
