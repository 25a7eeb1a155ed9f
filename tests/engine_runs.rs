//! Real small jobs through the orchestrator (library level): counts, time limits, ramp, rate,
//! mixes, groups and cleanup. Each test runs in its own temporary directory.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use iogauge::model::{
    Distribution, IoEngine, JobSpec, RunSpec, RwKind, RwMode, SizeSpec, DDIR_READ, DDIR_WRITE,
};
use iogauge::run::{run, RunOptions};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn job(name: &str, dir: &Path, kind: RwKind, random: bool) -> JobSpec {
    JobSpec {
        name: name.into(),
        directory: Some(dir.to_path_buf()),
        size: Some(SizeSpec::Bytes(4 << 20)),
        rw: RwMode { kind, random },
        ..JobSpec::default()
    }
}

fn go(jobs: Vec<JobSpec>) -> iogauge::report::Report {
    let spec = RunSpec {
        jobs,
        ..RunSpec::default()
    };
    run(&spec, &RunOptions::default(), &AtomicBool::new(false)).expect("run succeeds")
}

#[test]
fn sequential_read_counts_are_size_over_bs() {
    let d = scratch();
    let r = go(vec![job("seqr", d.path(), RwKind::Read, false)]);
    let rd = &r.jobs[0].dirs[DDIR_READ];
    assert_eq!(rd.total_ios, 1024);
    assert_eq!(rd.io_bytes, 4 << 20);
    assert_eq!(r.jobs[0].dirs[DDIR_WRITE].total_ios, 0);
    assert_lat_sane(&rd.clat);
    assert_eq!(r.jobs[0].laid_out, Some((1, 4 << 20)));
    assert_empty(d.path());
}

#[test]
fn random_write_psync_and_sync_engine_counts() {
    for engine in [IoEngine::Psync, IoEngine::Sync] {
        let d = scratch();
        let mut j = job("randw", d.path(), RwKind::Write, true);
        j.ioengine = engine;
        j.bs = [8192; 3];
        let r = go(vec![j]);
        let w = &r.jobs[0].dirs[DDIR_WRITE];
        assert_eq!(w.total_ios, 512, "{engine:?}");
        assert_eq!(w.io_bytes, 4 << 20);
        assert_lat_sane(&w.clat);
        assert_empty(d.path());
    }
}

#[test]
fn fsync_every_n_writes_is_counted_as_sync() {
    let d = scratch();
    let mut j = job("fs", d.path(), RwKind::Write, false);
    j.size = Some(SizeSpec::Bytes(1 << 20));
    j.fsync = 4;
    let r = go(vec![j]);
    assert_eq!(r.jobs[0].dirs[DDIR_WRITE].total_ios, 256);
    assert_eq!(r.jobs[0].sync.total_ios, 64);
    assert_lat_sane(&r.jobs[0].sync.lat);
}

#[test]
fn rw_mix_respects_rwmixread() {
    let d = scratch();
    let mut j = job("mix", d.path(), RwKind::ReadWrite, true);
    j.size = Some(SizeSpec::Bytes(80 << 20));
    j.rwmixread = 75;
    j.ioengine = IoEngine::Null;
    let r = go(vec![j]);
    let (rd, wr) = (r.jobs[0].dirs[0].total_ios, r.jobs[0].dirs[1].total_ios);
    assert_eq!(rd + wr, 20480);
    let share = rd as f64 / (rd + wr) as f64;
    assert!((0.72..0.78).contains(&share), "read share {share}");
}

#[test]
fn time_based_runs_for_runtime_and_ramp_is_excluded() {
    let d = scratch();
    let mut j = job("tb", d.path(), RwKind::Read, false);
    j.ioengine = IoEngine::Null;
    j.time_based = true;
    j.runtime = Some(Duration::from_millis(600));
    j.ramp_time = Duration::from_millis(400);
    let t0 = std::time::Instant::now();
    let r = go(vec![j]);
    let wall = t0.elapsed();
    let jr = &r.jobs[0];
    // Measured period is the runtime only; the whole run also spent the ramp.
    assert!(
        (600..700).contains(&jr.dirs[0].runtime_ms),
        "{}",
        jr.dirs[0].runtime_ms
    );
    assert!(wall >= Duration::from_millis(1000), "{wall:?}");
    // null I/O is fast: far more than size/bs I/Os prove time_based looped.
    assert!(jr.dirs[0].total_ios > 1024 * 10);
}

#[test]
fn rate_iops_is_held_within_ten_percent() {
    let d = scratch();
    let mut j = job("rate", d.path(), RwKind::Read, false);
    j.ioengine = IoEngine::Null;
    j.time_based = true;
    j.runtime = Some(Duration::from_secs(2));
    j.rate_iops = [Some(500), Some(500), None];
    let r = go(vec![j]);
    let iops = r.jobs[0].dirs[0].iops;
    assert!((450.0..=550.0).contains(&iops), "iops {iops}");
}

#[test]
fn numjobs_with_group_reporting_fold_into_one_entry() {
    let d = scratch();
    let mut j = job("g", d.path(), RwKind::Write, false);
    j.size = Some(SizeSpec::Bytes(1 << 20));
    j.numjobs = 3;
    j.group_reporting = true;
    let r = go(vec![j.clone()]);
    assert_eq!(r.jobs.len(), 1);
    assert_eq!(r.jobs[0].njobs, 3);
    assert_eq!(r.jobs[0].dirs[1].total_ios, 3 * 256);
    assert_eq!(r.groups[0].dirs[1].io_bytes, 3 << 20);
    j.group_reporting = false;
    let r = go(vec![j]);
    assert_eq!(r.jobs.len(), 3);
    assert!(r.jobs.iter().all(|x| x.dirs[1].total_ios == 256));
    assert_empty(d.path());
}

#[test]
fn stonewall_makes_groups_run_in_order() {
    let d = scratch();
    let mut a = job("a", d.path(), RwKind::Write, false);
    a.size = Some(SizeSpec::Bytes(1 << 20));
    let mut b = job("b", d.path(), RwKind::Read, true);
    b.size = Some(SizeSpec::Bytes(1 << 20));
    b.stonewall = true;
    let r = go(vec![a, b]);
    assert_eq!(r.jobs[0].groupid, 0);
    assert_eq!(r.jobs[1].groupid, 1);
    assert_eq!(r.groups.len(), 2);
    let (fa, fb) = (
        r.jobs[0].finished_at.unwrap(),
        r.jobs[1].finished_at.unwrap(),
    );
    assert!(fa <= fb);
}

#[test]
fn zipf_and_pareto_run_their_count() {
    for dist in [Distribution::Zipf(1.2), Distribution::Pareto(0.3)] {
        let d = scratch();
        let mut j = job("skew", d.path(), RwKind::Read, true);
        j.random_distribution = dist;
        j.size = Some(SizeSpec::Bytes(1 << 20));
        let r = go(vec![j]);
        assert_eq!(r.jobs[0].dirs[0].total_ios, 256);
    }
}

#[test]
fn io_error_names_errno_file_and_offset() {
    // /dev/full fails every write with ENOSPC: a real I/O error without root.
    let mut j = job("full", Path::new("/tmp"), RwKind::Write, false);
    j.directory = None;
    j.filename = Some("/dev/full".into());
    j.size = Some(SizeSpec::Bytes(1 << 20));
    let spec = RunSpec {
        jobs: vec![j],
        allow_overwrite: true,
        ..RunSpec::default()
    };
    let e = run(&spec, &RunOptions::default(), &AtomicBool::new(false)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("write error on '/dev/full' at offset 0, length "),
        "{msg}"
    );
    assert!(msg.ends_with("(errno 28)"), "{msg}");
}

#[test]
fn existing_file_is_not_overwritten_and_stays() {
    let d = scratch();
    let victim = d.path().join("w.0.0");
    std::fs::write(&victim, b"precious").unwrap();
    let spec = RunSpec {
        jobs: vec![job("w", d.path(), RwKind::Write, false)],
        ..RunSpec::default()
    };
    let e = run(&spec, &RunOptions::default(), &AtomicBool::new(false)).unwrap_err();
    assert!(e.to_string().contains("--allow-overwrite"), "{e}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn stop_flag_interrupts_and_cleans_up() {
    let d = scratch();
    let mut j = job("int", d.path(), RwKind::Write, false);
    j.time_based = true;
    j.runtime = Some(Duration::from_secs(30));
    let spec = RunSpec {
        jobs: vec![j],
        ..RunSpec::default()
    };
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        s2.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let t0 = std::time::Instant::now();
    // Stopped during the I/O: the report holds what was done until then, as fio prints it.
    let r = run(&spec, &RunOptions::default(), &stop).unwrap();
    t.join().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5));
    let w = &r.jobs[0].dirs[iogauge::model::DDIR_WRITE];
    assert!(w.total_ios > 0 && w.runtime_ms < 5_000, "{w:?}");
    assert_empty(d.path());
    // Stopped before anything ran: an error, and nothing left.
    let e = run(&spec, &RunOptions::default(), &AtomicBool::new(true)).unwrap_err();
    assert_eq!(e.to_string(), "stopped before any job ran");
    assert_empty(d.path());
}

#[test]
fn a_deadline_stops_the_run_in_any_stage_and_cleans_up() {
    let d = scratch();
    // During the I/O: a 30 s job, a 300 ms deadline.
    let mut j = job("dl", d.path(), RwKind::Write, false);
    j.time_based = true;
    j.runtime = Some(Duration::from_secs(30));
    let spec = RunSpec {
        jobs: vec![j],
        ..RunSpec::default()
    };
    let opts = RunOptions {
        deadline: Some(std::time::Instant::now() + Duration::from_millis(300)),
        ..RunOptions::default()
    };
    let t0 = std::time::Instant::now();
    let e = run(&spec, &opts, &AtomicBool::new(false)).unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(e.to_string(), "did not finish before its deadline");
    assert_empty(d.path());
    // During layout: a deadline already passed.
    let mut r = job("dlr", d.path(), RwKind::Read, false);
    r.size = Some(iogauge::model::SizeSpec::Bytes(256 << 20));
    let spec = RunSpec {
        jobs: vec![r],
        ..RunSpec::default()
    };
    let opts = RunOptions {
        deadline: Some(std::time::Instant::now()),
        ..RunOptions::default()
    };
    assert!(matches!(
        run(&spec, &opts, &AtomicBool::new(false)),
        Err(iogauge::run::RunError::TimedOut)
    ));
    assert_empty(d.path());
}

#[test]
fn ramp_io_is_not_counted() {
    // 1000 IOPS for a 0.5 s ramp and a 1 s run: only the run's ~1000 I/Os are reported.
    let d = scratch();
    let mut j = job("ramp", d.path(), RwKind::Read, false);
    j.ioengine = IoEngine::Null;
    j.time_based = true;
    j.runtime = Some(Duration::from_secs(1));
    j.ramp_time = Duration::from_millis(500);
    j.rate_iops = [Some(1000), None, None];
    let r = go(vec![j]);
    let ios = r.jobs[0].dirs[0].total_ios;
    assert!(
        (900..=1100).contains(&ios),
        "{ios} I/Os: ramp leaked into the stats"
    );
    assert_eq!(r.jobs[0].dirs[0].clat.n, ios);
}

#[test]
fn direct_io_with_aligned_blocks_works() {
    let d = scratch();
    let mut j = job("direct", d.path(), RwKind::Write, true);
    j.direct = true;
    j.size = Some(SizeSpec::Bytes(1 << 20));
    let r = go(vec![j]);
    assert_eq!(r.jobs[0].dirs[1].total_ios, 256);
    assert_empty(d.path());
}

#[test]
fn periodic_samples_follow_the_interval_and_disk_stats_are_reported() {
    let d = scratch();
    let mut j = job("per", d.path(), RwKind::Write, false);
    j.time_based = true;
    j.runtime = Some(Duration::from_millis(2100));
    j.bwavgtime_ms = 250;
    j.iopsavgtime_ms = 500;
    // Buffered writes may never reach the disk before the file is removed; end_fsync makes
    // sure the device's counters move.
    j.end_fsync = true;
    // A modest rate keeps the final fsync short, so it cannot stretch the measured period.
    j.rate_iops = [None, Some(2000), None];
    let r = go(vec![j]);
    let w = &r.jobs[0].dirs[DDIR_WRITE];
    // 2.1 s: 8 complete 250 ms intervals and 4 of 500 ms; the partial tail is not sampled.
    assert_eq!(w.bw_samples.samples, 8, "{:?}", w.bw_samples);
    assert_eq!(w.iops_samples.samples, 4, "{:?}", w.iops_samples);
    assert_eq!(w.bw_series.len(), 8);
    assert!(
        w.bw_samples.min as f64 <= w.bw_samples.mean
            && w.bw_samples.mean <= w.bw_samples.max as f64
    );
    assert!((w.bw_agg_pct - 100.0).abs() < 10.0, "per={}", w.bw_agg_pct);
    // The files live on a real disk here, so its counters are reported.
    assert!(!r.disks.is_empty(), "no disk stats");
    assert!(r.disks[0].write_ios > 0);
    assert!(
        r.jobs[0]
            .lat_buckets
            .us
            .iter()
            .chain(r.jobs[0].lat_buckets.ns.iter())
            .chain(r.jobs[0].lat_buckets.ms.iter())
            .sum::<f64>()
            > 99.0
    );
}
