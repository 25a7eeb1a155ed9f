//! Tests of the sequential watch: scripted counters and snapshots, no I/O.

use super::*;
use crate::model::sequential::Watched;
use crate::run::shared::WorkerState;
use crate::stats::histogram::Histogram;
use crate::stats::{CpuTimes, LatRecorder};
use std::time::Duration;

const S: u64 = 1_000_000_000;

fn job(metric: WatchedMetric, thresholds: Vec<f64>, time_based: bool) -> JobSpec {
    let mut j = JobSpec {
        time_based,
        runtime: time_based.then_some(Duration::from_secs(60)),
        size: Some(SizeSpec::Bytes(10_000 * 4096)),
        ..JobSpec::default()
    };
    j.timing.sequential = Some(SequentialSpec {
        watch: vec![Watched {
            key: "k".into(),
            metric,
            thresholds,
        }],
        confidence: 0.999,
        margin: 0.1,
    });
    j
}

fn measuring(start: u64) -> Arc<Published> {
    let p = Arc::new(Published::default());
    p.meas_start_ns.store(start, Ordering::Relaxed);
    p.phase.store(PHASE_MEASURING, Ordering::Relaxed);
    p
}

/// Feeds writes at `rate(t)` per second, polling every 100 ms; the second it decided at.
fn feed_rate(w: &mut Watch, p: &Published, rate: impl Fn(u64) -> u64, secs: u64) -> Option<f64> {
    let mut ios = 0;
    w.poll(S);
    for k in 1..=secs * 10 {
        let t = S + k * SLICE_NS;
        ios += rate(k) / 10;
        p.ios[1].store(ios, Ordering::Relaxed);
        p.bytes[1].store(ios * 4096, Ordering::Relaxed);
        if w.poll(t) {
            return Some((k as f64) / 10.0);
        }
    }
    None
}

#[test]
fn a_clear_rate_is_decided_after_the_floor_and_a_close_one_runs_on() {
    let j = job(WatchedMetric::Iops(1), vec![1000.0, 750.0], true);
    let p = measuring(S);
    let mut w = Watch::new(&j, p.clone(), None).unwrap();
    // 5,000 IOPS with a wobble: above both thresholds, once a second has been measured.
    let at = feed_rate(&mut w, &p, |k| 5000 + (k % 3) * 100, 60).unwrap();
    assert!((1.0..=5.0).contains(&at), "{at}");
    let r = w.report();
    assert!(r.stopped_early);
    assert_eq!(r.full_seconds, Some(60.0));
    for d in &r.decisions {
        assert_eq!(d.side, ReportSide::Above);
        let b = d.bound.unwrap();
        assert!(b >= d.threshold * 1.1 && b <= 5200.0, "{b}");
    }
    // 1,020 IOPS: inside the margin of 1,000, so the run goes on to the end.
    let p = measuring(S);
    let mut w = Watch::new(&j, p.clone(), None).unwrap();
    assert_eq!(feed_rate(&mut w, &p, |k| 1000 + (k % 5) * 10, 60), None);
    p.phase.store(PHASE_DONE, Ordering::Relaxed);
    p.end_ns.store(61 * S, Ordering::Relaxed);
    assert!(!w.poll(61 * S));
    let r = w.report();
    assert!(!r.stopped_early);
    assert_eq!(r.decisions[0].side, ReportSide::Undecided);
    assert_eq!(r.seconds, 60.0);
}

#[test]
fn a_slow_rate_is_decided_below_and_nothing_before_measurement() {
    let j = job(WatchedMetric::Iops(1), vec![1000.0], true);
    let p = Arc::new(Published::default());
    let mut w = Watch::new(&j, p.clone(), None).unwrap();
    // Still ramping: no slices, no decision.
    assert!(!w.poll(5 * S));
    assert_eq!(w.next_wake(), u64::MAX);
    p.meas_start_ns.store(5 * S, Ordering::Relaxed);
    p.phase.store(PHASE_MEASURING, Ordering::Relaxed);
    assert!(feed_rate(&mut w, &p, |_| 300, 60).is_some());
    let r = w.report();
    assert_eq!(r.decisions[0].side, ReportSide::Below);
    assert!(r.decisions[0].bound.unwrap() <= 900.0);
}

/// Publishes `sync` as the worker's 100 ms snapshot.
fn publish(status: &StatusLat, sync: &LatRecorder) {
    let empty = LatRecorder::new(0);
    let cpu = CpuTimes::default();
    let state = WorkerState {
        cpu_start: &cpu,
        depth: None,
    };
    status.publish(&[&empty, &empty, &empty, sync], false, false, state);
}

/// Feeds 100 syncs per 100 ms slice, each `ns(i)` long (i counts from 100), up to `slices`
/// slices, polling after each; the syncs done when the watch decided.
fn feed_syncs(
    w: &mut Watch,
    p: &Published,
    status: &StatusLat,
    slices: u64,
    ns: impl Fn(u64) -> u64,
) -> Option<u64> {
    let mut sync = LatRecorder::new(0);
    w.poll(S);
    for k in 1..=slices {
        for i in 0..100u64 {
            sync.record(ns(k * 100 + i));
        }
        publish(status, &sync);
        p.ios[1].store(k * 100, Ordering::Relaxed);
        p.bytes[1].store(k * 100 * 4096, Ordering::Relaxed);
        if w.poll(S + k * SLICE_NS) {
            return Some(k * 100);
        }
    }
    None
}

#[test]
fn a_percentile_is_decided_from_the_snapshot_and_its_recent_third() {
    let j = job(WatchedMetric::SyncQuantile(0.99), vec![10e6], false);
    let p = measuring(S);
    let status = Arc::new(StatusLat::new());
    let mut w = Watch::new(&j, p.clone(), Some(status.clone())).unwrap();
    // 1,000 syncs a second of 0.3 ms, one in 500 at 20 ms: p99 far below 10 ms.
    let n = feed_syncs(&mut w, &p, &status, 300, |n| {
        if n % 500 == 0 {
            20_000_000
        } else {
            300_000
        }
    })
    .expect("decided");
    // Not before the floor (a second) nor the recent-third check; well before the recipe.
    assert!((1_000..=6_000).contains(&n), "{n}");
    let r = w.report();
    assert_eq!(r.ios, n);
    assert_eq!(r.full_ios, Some(10_000));
    assert_eq!(r.decisions[0].side, ReportSide::Below);
    let b = r.decisions[0].bound.unwrap();
    assert!((300_000.0..9e6).contains(&b), "{b}");
}

/// A disk slow from before the floor is never passed, whatever its fast start. (The
/// exceedance count alone keeps it from Below here; the recent-third check is tested on
/// its own above, as the binomial test rarely leaves it anything to veto.)
#[test]
fn a_disk_slow_from_before_the_floor_is_not_passed_on_its_fast_start() {
    let j = job(WatchedMetric::SyncQuantile(0.99), vec![10e6], false);
    let p = measuring(S);
    let status = Arc::new(StatusLat::new());
    let mut w = Watch::new(&j, p.clone(), Some(status.clone())).unwrap();
    // 0.3 ms for the first 0.8 s (800 syncs, before the floor), then every 20th sync
    // takes 30 ms.
    feed_syncs(&mut w, &p, &status, 80, |n| {
        if n >= 800 && n % 20 == 0 {
            30_000_000
        } else {
            300_000
        }
    });
    // Five in a hundred above 10 ms from the start of the slowdown: never PASS.
    let d = &w.report().decisions[0];
    assert_ne!(d.side, ReportSide::Below);
}

#[test]
fn a_decision_stands_only_if_the_recent_third_agrees() {
    // 2,000 samples at an earlier look, 3,000 now: the recent third is the last 1,000.
    let seen = [(1000, 0, 0), (2000, 0, 0)];
    // The recent 1,000 had 5 above the low edge (0.5 % <= 1 %): below stands.
    assert!(steady(&seen, (3000, 5, 0), 0.01, Side::Below));
    // They had 30 above it (3 %): the disk slowed down, no decision.
    assert!(!steady(&seen, (3000, 30, 20), 0.01, Side::Below));
    // Above needs the recent share above the high edge to reach 1 %.
    assert!(steady(&seen, (3000, 40, 30), 0.01, Side::Above));
    assert!(!steady(&seen, (3000, 40, 5), 0.01, Side::Above));
    // Without an earlier look at two thirds of the samples, nothing is decided.
    assert!(!steady(&[], (3000, 0, 0), 0.01, Side::Below));
    assert!(steady(&[], (3000, 0, 0), 0.01, Side::Undecided));
}

#[test]
fn bounds_come_from_the_bucket_holding_the_rank() {
    let mut h = Histogram::new();
    for v in 1..=1000u64 {
        h.record(v * 1000);
    }
    let counts = h.counts();
    let up = quantile_bound(counts, 1000, 0.5, 0.05, Side::Below).unwrap();
    let down = quantile_bound(counts, 1000, 0.5, 0.05, Side::Above).unwrap();
    // The median is 500 µs; its 95 % bounds lie around it, the upper above the lower.
    assert!(down < 500_000.0 && up > 500_000.0, "{down} {up}");
    assert!(down > 400_000.0 && up < 600_000.0, "{down} {up}");
    assert_eq!(
        quantile_bound(counts, 1000, 0.5, 0.05, Side::Undecided),
        None
    );
    assert_eq!(above(counts, bucket_index(999_000) + 1), 1);
}

/// A collector without sync or datasync is judged by its write latency: the watch reads the
/// write recorder, not the (here slow) sync one.
#[test]
fn a_write_percentile_is_read_from_the_write_recorder() {
    let j = job(WatchedMetric::WriteQuantile(0.99), vec![10e6], false);
    let p = measuring(S);
    let status = Arc::new(StatusLat::new());
    let mut w = Watch::new(&j, p.clone(), Some(status.clone())).unwrap();
    let (mut write, mut sync) = (LatRecorder::new(0), LatRecorder::new(0));
    let (empty, cpu) = (LatRecorder::new(0), CpuTimes::default());
    w.poll(S);
    let mut decided = None;
    for k in 1..=300u64 {
        for _ in 0..100 {
            write.record(200_000);
            sync.record(30_000_000);
        }
        let state = WorkerState {
            cpu_start: &cpu,
            depth: None,
        };
        status.publish(&[&empty, &write, &empty, &sync], false, false, state);
        p.ios[1].store(k * 100, Ordering::Relaxed);
        p.bytes[1].store(k * 100 * 4096, Ordering::Relaxed);
        if w.poll(S + k * SLICE_NS) {
            decided = Some(k * 100);
            break;
        }
    }
    assert!(decided.is_some_and(|n| n < 10_000), "{decided:?}");
    assert_eq!(w.report().decisions[0].side, ReportSide::Below);
}
