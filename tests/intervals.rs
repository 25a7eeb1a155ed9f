//! Per-interval latency histograms (`iogauge.lat_intervals`) on real runs: the counts add up to
//! each section's total, the grid follows the measured period, the merged histograms give the
//! section's percentiles, and `check` documents carry them.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;

/// `iogauge fio ARGS --output-format=json --json-intervals` in `cwd`; the first job of the
/// document.
fn fio_job(args: &[&str], cwd: &Path) -> Value {
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .arg("fio")
        .args(args)
        .args(["--output-format=json", "--json-intervals"])
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["jobs"][0].clone()
}

/// Whether io_uring can be used here (a container may block it).
fn io_uring_works(cwd: &Path) -> bool {
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["fio", "--name=probe", "--ioengine=io_uring", "--size=64k"])
        .current_dir(cwd)
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!("io_uring unavailable, skipped: {}", text(&o.stderr));
    }
    o.status.success()
}

/// Checks one section's `lat_intervals` against the section itself: the counts add up to
/// `total_ios`, ends increase on the grid, the last ends within one interval of `runtime_ms`,
/// and the percentiles of all intervals merged match `percentiles` (the section's table) within
/// the histogram's error. Returns (interval_ms, number of intervals).
fn check_intervals(
    sec: &Value,
    latency: &str,
    percentiles: &Value,
    runtime_ms: u64,
) -> (u64, usize) {
    let li = &sec["iogauge"]["lat_intervals"];
    assert_eq!(li["latency"], latency, "{li}");
    let ms = li["interval_ms"].as_u64().unwrap();
    assert!(ms >= 100 && (ms / 100).is_power_of_two(), "{ms}");
    let ivs = li["intervals"].as_array().unwrap();
    let mut all: Vec<(u64, u64)> = Vec::new();
    let mut prev_end = 0;
    for (k, iv) in ivs.iter().enumerate() {
        let end = iv[0].as_u64().unwrap();
        assert!(
            end > prev_end,
            "interval {k} ends at {end} after {prev_end}"
        );
        if k + 1 < ivs.len() {
            assert_eq!(end, (k as u64 + 1) * ms, "interval {k} is not on the grid");
        } else {
            assert!(end > k as u64 * ms && end <= (k as u64 + 1) * ms);
        }
        prev_end = end;
        let bins = iv[1].as_array().unwrap();
        let mut prev_v = 0;
        for b in bins {
            let (v, c) = (b[0].as_u64().unwrap(), b[1].as_u64().unwrap());
            assert!(c > 0 && (v > prev_v || prev_v == 0), "{iv}");
            prev_v = v;
            all.push((v, c));
        }
    }
    assert!(
        prev_end <= runtime_ms + ms,
        "last end {prev_end}, runtime {runtime_ms}"
    );
    let n: u64 = all.iter().map(|b| b.1).sum();
    assert_eq!(n, sec["total_ios"].as_u64().unwrap(), "counts ≠ total_ios");
    all.sort_unstable();
    for (p, want) in percentiles.as_object().unwrap() {
        let rank = iogauge::report::fio_rank(p.parse().unwrap(), n);
        let mut cum = 0;
        let got = all
            .iter()
            .find(|b| {
                cum += b.1;
                cum >= rank
            })
            .unwrap()
            .0;
        let want = want.as_u64().unwrap();
        let err = (got as f64 - want as f64).abs() / want.max(1) as f64;
        assert!(err <= 0.005, "p{p}: intervals {got}, section {want}");
    }
    (ms, ivs.len())
}

fn runtime(sec: &Value) -> u64 {
    sec["runtime"].as_u64().unwrap()
}

#[test]
fn sync_engine_writes_and_fdatasyncs() {
    let d = scratch();
    let j = fio_job(
        &[
            "--name=w",
            "--rw=write",
            "--ioengine=sync",
            "--fdatasync=1",
            "--size=4m",
            "--bs=4k",
            "--time_based",
            "--runtime=500ms",
        ],
        d.path(),
    );
    let w = &j["write"];
    let (_, n) = check_intervals(w, "clat", &w["clat_ns"]["percentile"], runtime(w));
    assert!(n >= 5, "{n} intervals");
    let s = &j["sync"];
    assert_eq!(s["total_ios"], w["total_ios"]);
    let run = j["job_runtime"].as_u64().unwrap();
    check_intervals(s, "lat", &s["lat_ns"]["percentile"], run);
    // No reads: no read intervals.
    assert!(j["read"]["iogauge"].get("lat_intervals").is_none());
    assert_empty(d.path());
}

#[test]
fn psync_reads_and_a_time_based_run_has_one_interval_per_100_ms() {
    let d = scratch();
    let j = fio_job(
        &[
            "--name=r",
            "--rw=randread",
            "--ioengine=psync",
            "--size=4m",
            "--time_based",
            "--runtime=3s",
        ],
        d.path(),
    );
    let r = &j["read"];
    let (ms, n) = check_intervals(r, "clat", &r["clat_ns"]["percentile"], runtime(r));
    assert_eq!(ms, 100);
    // 30 full intervals, and the one holding the I/O that crossed the runtime limit.
    assert!((30..=31).contains(&n), "{n} intervals");
    assert!(j["write"]["iogauge"].get("lat_intervals").is_none());
    assert!(j["sync"].get("iogauge").is_none());
}

#[test]
fn io_uring_reads_writes_and_syncs() {
    let d = scratch();
    if !io_uring_works(d.path()) {
        return;
    }
    let j = fio_job(
        &[
            "--name=r",
            "--rw=randread",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--size=8m",
            "--time_based",
            "--runtime=500ms",
        ],
        d.path(),
    );
    let r = &j["read"];
    let (_, n) = check_intervals(r, "clat", &r["clat_ns"]["percentile"], runtime(r));
    assert!(n >= 5, "{n} intervals");

    let j = fio_job(
        &[
            "--name=w",
            "--rw=write",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--fdatasync=1",
            "--size=4m",
            "--bs=4k",
            "--time_based",
            "--runtime=300ms",
        ],
        d.path(),
    );
    let w = &j["write"];
    let (_, n) = check_intervals(w, "clat", &w["clat_ns"]["percentile"], runtime(w));
    assert!(n >= 3, "{n} intervals");
    let s = &j["sync"];
    assert_eq!(s["total_ios"], w["total_ios"]);
    let run = j["job_runtime"].as_u64().unwrap();
    check_intervals(s, "lat", &s["lat_ns"]["percentile"], run);

    // Only lat percentiles printed: the intervals count lat, the queue's prepared → completed.
    let j = fio_job(
        &[
            "--name=l",
            "--rw=randread",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--size=4m",
            "--clat_percentiles=0",
            "--lat_percentiles=1",
        ],
        d.path(),
    );
    let r = &j["read"];
    assert!(r["clat_ns"].get("percentile").is_none());
    check_intervals(r, "lat", &r["lat_ns"]["percentile"], runtime(r));
    assert_empty(d.path());
}

#[test]
fn group_reporting_adds_the_instances_intervals() {
    let d = scratch();
    let j = fio_job(
        &[
            "--name=g",
            "--rw=randrw",
            "--ioengine=psync",
            "--size=2m",
            "--numjobs=3",
            "--group_reporting",
        ],
        d.path(),
    );
    for dir in ["read", "write"] {
        let s = &j[dir];
        check_intervals(s, "clat", &s["clat_ns"]["percentile"], runtime(s));
    }
}

#[test]
fn no_latency_no_intervals() {
    let d = scratch();
    let j = fio_job(
        &["--name=n", "--rw=read", "--size=1m", "--gtod_reduce=1"],
        d.path(),
    );
    assert_eq!(j["read"]["total_ios"], 256);
    assert!(j["read"]["iogauge"].get("lat_intervals").is_none());
}

#[test]
fn ramp_time_starts_the_grid_after_the_ramp() {
    let d = scratch();
    let j = fio_job(
        &[
            "--name=r",
            "--ioengine=null",
            "--size=1g",
            "--time_based",
            "--ramp_time=300ms",
            "--runtime=1s",
            "--rate_iops=2000",
        ],
        d.path(),
    );
    let r = &j["read"];
    let (_, n) = check_intervals(r, "clat", &r["clat_ns"]["percentile"], runtime(r));
    assert!((10..=11).contains(&n), "{n} intervals");
}

#[test]
fn check_documents_carry_the_intervals() {
    let d = scratch();
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["check", "etcd", "--dir"])
        .arg(d.path())
        .args(["--scale", "0.05", "--format", "json"])
        .current_dir(d.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let j = &v["profiles"][0]["report"]["jobs"][0];
    let s = &j["sync"];
    let run = j["job_runtime"].as_u64().unwrap();
    check_intervals(s, "lat", &s["lat_ns"]["percentile"], run);
    let w = &j["write"];
    check_intervals(w, "clat", &w["clat_ns"]["percentile"], runtime(w));
}
