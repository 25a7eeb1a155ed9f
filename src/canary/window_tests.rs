//! The window's verdicts on scripted probes, at every boundary.

use super::*;
use crate::input::profiles;
use crate::stats::histogram::bucket_value;

fn at(s: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + s)
}

/// A probe whose syncs all sit at `lat_ns`, except `slow` of them at `slow_ns`.
fn syncs(end: u64, n: u64, lat_ns: u64, slow: u64, slow_ns: u64) -> ProbeSample {
    let mut sync = vec![(bucket_value(bucket_index(lat_ns)), n - slow)];
    if slow > 0 {
        sync.push((bucket_value(bucket_index(slow_ns)), slow));
    }
    ProbeSample {
        at: at(end),
        sync,
        clat: [Vec::new(), Vec::new()],
        ios: [0, n],
        seconds: 1.0,
    }
}

fn rate(end: u64, iops: u64) -> ProbeSample {
    ProbeSample {
        at: at(end),
        sync: Vec::new(),
        clat: [Vec::new(), Vec::new()],
        ios: [0, iops * 3],
        seconds: 3.0,
    }
}

const HOUR: Duration = Duration::from_secs(3600);

#[test]
fn no_probe_is_an_error_and_one_small_probe_is_undecided() {
    let etcd = profiles::get("etcd").unwrap();
    let mut w = Window::default();
    assert_eq!(w.judge(&etcd).0, CanaryVerdict::Error);
    // 300 syncs at 1 ms: P(no exceedance | p99 = 9 ms) = 0.99^300 = 0.05, not below 0.0005.
    w.push(syncs(0, 300, 1_000_000, 0, 0), HOUR, at(0));
    let (v, m) = w.judge(&etcd);
    assert_eq!(v, CanaryVerdict::Undecided);
    assert_eq!(m[0].samples, 300);
    assert!(m[0].bound.is_none());
    let value = m[0].value.unwrap();
    assert!((value - 0.001).abs() < 0.00002, "{value}");
}

#[test]
fn enough_fast_syncs_pass_with_an_upper_bound_below_the_threshold() {
    let etcd = profiles::get("etcd").unwrap();
    let mut w = Window::default();
    // 1,500 syncs, 3 of them slow: P(Binomial(1500, 1 %) <= 3) = 0.0002, below the 0.0005 a
    // side may spend (with 6 slow it is 0.008: undecided, rightly).
    for i in 0..3 {
        w.push(
            syncs(i * 300, 500, 1_000_000, 1, 50_000_000),
            HOUR,
            at(i * 300),
        );
    }
    let (v, m) = w.judge(&etcd);
    assert_eq!(v, CanaryVerdict::Pass);
    let bound = m[0].bound.unwrap();
    assert!(bound < 0.009 && bound >= m[0].value.unwrap(), "{bound}");
    assert_eq!((m[0].pass, m[0].unit.as_str()), (0.01, "seconds"));
}

#[test]
fn a_slow_tail_fails_and_near_the_threshold_stays_undecided() {
    let etcd = profiles::get("etcd").unwrap();
    let mut w = Window::default();
    // 5 % of syncs at 30 ms: p99 is far above 10 ms.
    for i in 0..2 {
        w.push(syncs(i, 1000, 1_000_000, 50, 30_000_000), HOUR, at(i));
    }
    let (v, m) = w.judge(&etcd);
    assert_eq!(v, CanaryVerdict::Fail);
    assert!(m[0].bound.unwrap() > 0.011);
    // p99 at 10 ms itself: within the margin, never decided however many samples.
    let mut w = Window::default();
    for i in 0..20 {
        w.push(syncs(i, 1000, 1_000_000, 20, 10_000_000), HOUR, at(i));
    }
    assert_eq!(w.judge(&etcd).0, CanaryVerdict::Undecided);
}

#[test]
fn old_probes_leave_the_window() {
    let etcd = profiles::get("etcd").unwrap();
    let mut w = Window::default();
    for i in 0..3 {
        w.push(syncs(i, 1000, 1_000_000, 50, 30_000_000), HOUR, at(i));
    }
    assert_eq!(w.judge(&etcd).0, CanaryVerdict::Fail);
    // An hour later the slow probes are gone and fast ones decide.
    for i in 0..3 {
        w.push(syncs(4000 + i, 1000, 1_000_000, 0, 0), HOUR, at(4000 + i));
    }
    assert_eq!(w.len(), 3);
    assert_eq!(w.judge(&etcd).0, CanaryVerdict::Pass);
}

#[test]
fn rates_need_three_probes_and_use_pass_and_warn() {
    let sync = profiles::get("sync-iops").unwrap();
    let judge = |rates: &[u64]| {
        let mut w = Window::default();
        for (i, r) in rates.iter().enumerate() {
            w.push(rate(i as u64, *r), HOUR, at(i as u64));
        }
        w.judge(&sync)
    };
    assert_eq!(judge(&[5000, 5000]).0, CanaryVerdict::Undecided);
    let (v, m) = judge(&[5000, 5100, 4900]);
    assert_eq!(v, CanaryVerdict::Pass);
    assert!(m[0].bound.unwrap() > 1100.0 && m[0].bound.unwrap() < 5000.0);
    assert!((m[0].value.unwrap() - 5000.0).abs() < 1e-6);
    assert_eq!(m[0].warn, Some(750.0));
    assert_eq!(judge(&[860, 864, 856, 860]).0, CanaryVerdict::Warn);
    // Between the thresholds but within 10 % of the pass one: undecided.
    assert_eq!(judge(&[870, 880, 860, 870]).0, CanaryVerdict::Undecided);
    assert_eq!(judge(&[300, 310, 290]).0, CanaryVerdict::Fail);
    // Right at the pass threshold: undecided.
    assert_eq!(judge(&[1000, 1010, 990, 1000]).0, CanaryVerdict::Undecided);
    // Spread too wide to tell.
    assert_eq!(judge(&[200, 5000, 2600]).0, CanaryVerdict::Undecided);
}

#[test]
fn the_worst_metric_decides() {
    use CanaryVerdict::*;
    assert_eq!(worst([Pass, Warn].into_iter()), Warn);
    assert_eq!(worst([Warn, Undecided].into_iter()), Undecided);
    assert_eq!(worst([Undecided, Fail, Pass].into_iter()), Fail);
}
