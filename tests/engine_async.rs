//! The queueing engines (io_uring, libaio) on real files: exact counts, queue depth bounded by
//! iodepth, mixes, syncs, latency definitions, and direct I/O alignment errors.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use iogauge::model::{IoEngine, JobSpec, RunSpec, RwKind, RwMode, SizeSpec, DDIR_READ, DDIR_WRITE};
use iogauge::report::{JobReport, Report};
use iogauge::run::{run, RunError, RunOptions};
use iogauge::workload::layout::LayoutError;
use std::path::Path;
use std::sync::atomic::AtomicBool;

const ENGINES: [IoEngine; 2] = [IoEngine::IoUring, IoEngine::Libaio];

fn job(name: &str, dir: &Path, engine: IoEngine, kind: RwKind, random: bool) -> JobSpec {
    JobSpec {
        name: name.into(),
        directory: Some(dir.to_path_buf()),
        size: Some(SizeSpec::Bytes(8 << 20)),
        rw: RwMode { kind, random },
        ioengine: engine,
        iodepth: 8,
        ..JobSpec::default()
    }
}

fn try_go(jobs: Vec<JobSpec>) -> Result<Report, RunError> {
    let spec = RunSpec {
        jobs,
        ..RunSpec::default()
    };
    run(&spec, &RunOptions::default(), &AtomicBool::new(false))
}

fn go(jobs: Vec<JobSpec>) -> Report {
    try_go(jobs).expect("run succeeds")
}

/// Depth buckets 1, 2, 4, 8, 16, 32, >=64: nothing above the bucket holding `iodepth`.
fn assert_depth_bounded(j: &JobReport, iodepth: u32) {
    let bucket = match iodepth {
        1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    };
    let level = j.depths.level;
    assert!(
        level[bucket + 1..].iter().all(|&p| p == 0.0),
        "depth above {iodepth}: {level:?}"
    );
    let total: f64 = level.iter().sum();
    assert!(total > 99.0, "{level:?}");
}

#[test]
fn direct_random_writes_and_reads_count_exactly_and_stay_within_iodepth() {
    for engine in ENGINES {
        for (kind, d) in [(RwKind::Write, DDIR_WRITE), (RwKind::Read, DDIR_READ)] {
            let dir = scratch();
            let mut j = job("q", dir.path(), engine, kind, true);
            j.direct = true;
            let r = go(vec![j]);
            let jr = &r.jobs[0];
            let dr = &jr.dirs[d];
            assert_eq!(dr.total_ios, 2048, "{engine:?} {kind:?}");
            assert_eq!(dr.io_bytes, 8 << 20);
            assert_eq!(jr.dirs[1 - d].total_ios, 0);
            assert_lat_sane(&dr.clat);
            // lat percentiles are off by default (fio's lat_percentiles=0).
            assert_lat_stats(&dr.lat);
            assert_eq!(dr.slat.n, 2048);
            // lat = slat + clat for every I/O, so the means add up.
            let sum = dr.slat.mean + dr.clat.mean;
            assert!(
                (dr.lat.mean - sum).abs() <= 1.0 + sum * 1e-9,
                "{} vs {sum}",
                dr.lat.mean
            );
            assert_depth_bounded(jr, 8);
            // With a direct queue on a real disk the queue is full most of the time.
            assert!(
                jr.depths.level[3] > 50.0,
                "{engine:?}: {:?}",
                jr.depths.level
            );
            assert_empty(dir.path());
        }
    }
}

#[test]
fn mixes_land_within_three_percent_over_20k_ios() {
    for engine in ENGINES {
        let dir = scratch();
        let mut j = job("mix", dir.path(), engine, RwKind::ReadWrite, true);
        j.size = Some(SizeSpec::Bytes(80 << 20));
        j.rwmixread = 75;
        j.iodepth = 16;
        j.gtod_reduce = true;
        let r = go(vec![j]);
        let (rd, wr) = (
            r.jobs[0].dirs[DDIR_READ].total_ios,
            r.jobs[0].dirs[DDIR_WRITE].total_ios,
        );
        assert_eq!(rd + wr, 20480);
        let pct = rd as f64 * 100.0 / (rd + wr) as f64;
        assert!((72.0..=78.0).contains(&pct), "{engine:?}: {pct:.2}% reads");
        assert_depth_bounded(&r.jobs[0], 16);
        assert_empty(dir.path());
    }
}

#[test]
fn fdatasync_every_n_writes_is_counted_and_timed_as_sync() {
    for engine in ENGINES {
        let dir = scratch();
        let mut j = job("s", dir.path(), engine, RwKind::Write, false);
        j.size = Some(SizeSpec::Bytes(1 << 20));
        j.fdatasync = 4;
        let r = go(vec![j]);
        assert_eq!(r.jobs[0].dirs[DDIR_WRITE].total_ios, 256);
        assert_eq!(r.jobs[0].sync.total_ios, 64, "{engine:?}");
        assert_lat_sane(&r.jobs[0].sync.lat);
        assert_eq!(r.jobs[0].sync.lat.n, 64);
    }
}

#[test]
fn batch_options_shape_submit_and_complete_counts() {
    let dir = scratch();
    let mut j = job("b", dir.path(), IoEngine::IoUring, RwKind::Read, true);
    j.direct = true;
    j.iodepth = 16;
    j.iodepth_batch_submit = 8;
    j.iodepth_batch_complete_min = 8;
    j.iodepth_batch_complete_max = 16;
    let r = go(vec![j]);
    let jr = &r.jobs[0];
    assert_eq!(jr.dirs[DDIR_READ].total_ios, 2048);
    // Submits of 5–8 I/Os dominate; reaps take 8–16 (except the final drain).
    assert!(jr.depths.submit[2] > 90.0, "submit {:?}", jr.depths.submit);
    assert!(
        jr.depths.complete[2] + jr.depths.complete[3] > 90.0,
        "complete {:?}",
        jr.depths.complete
    );
    assert_depth_bounded(jr, 16);
}

#[test]
fn direct_io_with_an_unaligned_block_size_names_the_value() {
    for engine in ENGINES {
        let dir = scratch();
        let mut j = job("al", dir.path(), engine, RwKind::Write, false);
        j.direct = true;
        j.bs = [2300; 3];
        let e = try_go(vec![j]).expect_err("unaligned direct I/O must fail");
        let msg = e.to_string();
        assert!(
            matches!(
                e,
                RunError::Layout(LayoutError::DirectAlignment {
                    what: "bs",
                    value: 2300,
                    ..
                })
            ),
            "{msg}"
        );
        assert!(
            msg.starts_with("job 'al': direct=1 needs bs=2300 to be a multiple of "),
            "{msg}"
        );
        assert!(msg.ends_with(" or direct=0"), "{msg}");
        assert_empty(dir.path());
    }
}

#[test]
fn io_uring_options_run() {
    let dir = scratch();
    let mut j = job(
        "opts",
        dir.path(),
        IoEngine::IoUring,
        RwKind::ReadWrite,
        true,
    );
    j.direct = true;
    j.fixedbufs = true;
    j.registerfiles = true;
    j.sqthread_poll = true;
    let r = go(vec![j]);
    let jr = &r.jobs[0];
    assert_eq!(
        jr.dirs[DDIR_READ].total_ios + jr.dirs[DDIR_WRITE].total_ios,
        2048
    );
    assert_empty(dir.path());
}

#[test]
fn rate_ramp_and_time_based_work_with_a_queue() {
    for engine in ENGINES {
        // 1000 IOPS for a 0.5 s ramp and a 1 s run: only the run's ~1000 I/Os are reported,
        // and the schedule holds with 4 I/Os allowed in flight.
        let dir = scratch();
        let mut j = job("rr", dir.path(), engine, RwKind::Read, true);
        j.iodepth = 4;
        j.time_based = true;
        j.runtime = Some(std::time::Duration::from_secs(1));
        j.ramp_time = std::time::Duration::from_millis(500);
        j.rate_iops = [Some(1000), None, None];
        let r = go(vec![j]);
        let dr = &r.jobs[0].dirs[DDIR_READ];
        assert!(
            (900..=1100).contains(&dr.total_ios),
            "{engine:?}: {} I/Os",
            dr.total_ios
        );
        assert!(
            (1000..=1100).contains(&dr.runtime_ms),
            "{engine:?}: {} ms",
            dr.runtime_ms
        );
        assert_eq!(dr.clat.n, dr.total_ios);
        assert_empty(dir.path());
    }
}

#[test]
fn iodepth_low_lets_the_queue_drain_before_refilling() {
    for engine in ENGINES {
        let dir = scratch();
        let mut j = job("low", dir.path(), engine, RwKind::Read, true);
        j.direct = true;
        j.size = Some(SizeSpec::Bytes(32 << 20));
        j.iodepth = 32;
        j.iodepth_low = 8;
        let r = go(vec![j]);
        let jr = &r.jobs[0];
        assert_eq!(jr.dirs[DDIR_READ].total_ios, 8192, "{engine:?}");
        assert_depth_bounded(jr, 32);
        // Refills start from 8 in flight, so depths 8–31 carry most I/Os, not 32.
        let l = jr.depths.level;
        assert!(l[3] + l[4] > 80.0, "{engine:?}: {l:?}");
        assert!(l[5] < 20.0, "{engine:?}: {l:?}");
    }
}

#[test]
fn create_only_with_ramp_does_no_io_on_any_engine() {
    for engine in [
        IoEngine::Psync,
        IoEngine::Sync,
        IoEngine::IoUring,
        IoEngine::Libaio,
    ] {
        let dir = scratch();
        let mut j = job("co", dir.path(), engine, RwKind::Write, false);
        j.create_only = true;
        j.ramp_time = std::time::Duration::from_millis(300);
        let r = go(vec![j]);
        assert_eq!(r.jobs[0].dirs[DDIR_WRITE].total_ios, 0, "{engine:?}");
        assert_empty(dir.path());
    }
}
