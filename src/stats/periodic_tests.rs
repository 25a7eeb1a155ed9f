//! The periodic sampler's unit tests (`periodic.rs`).

use super::*;

const MS: u64 = NS_PER_MS;

fn ended(end_ns: u64, runtime_ns: Option<u64>) -> MeasuredEnd {
    MeasuredEnd {
        end_ns,
        runtime_ns,
        after_ramp: false,
    }
}

/// What the monitor records for a counter growing by `per_ms` per millisecond: one reading
/// per deadline up to `upto_ms`, each taken `late_ns` after its deadline.
fn readings(interval_ms: u64, upto_ms: u64, late_ns: u64, per_ms: u64) -> Vec<Reading> {
    (1..)
        .map(|k| k * interval_ms)
        .take_while(|&t| t <= upto_ms)
        .map(|t| {
            let at_ns = t * MS + late_ns;
            Reading {
                t_ms: t,
                at_ns,
                value: at_ns * per_ms / MS,
            }
        })
        .collect()
}

#[test]
fn samples_on_absolute_deadlines_over_actual_intervals() {
    // Every reading 3 ms late; 1 KiB per ms. The labels stay on k·500 (no drift) and each
    // rate uses the times the counter was read, so every sample is exactly 1000 KiB/s.
    let r = readings(500, 5000, 3 * MS, 1024);
    let s = PeriodicSampler::from_trace(
        500,
        SampleUnit::KiBPerSec,
        r,
        ended(5200 * MS, None),
        5200 * 1024,
    );
    let ts: Vec<u64> = s.series().iter().map(|p| p.t_ms).collect();
    assert_eq!(ts, (1..=10).map(|k| k * 500).collect::<Vec<_>>());
    for p in s.series() {
        assert!((p.value - 1000.0).abs() < 1e-9, "{}", p.value);
    }
    let sum = s.summary();
    assert_eq!(sum.samples, 10);
    assert_eq!((sum.min, sum.max), (1000, 1000));
}

/// fio's counts for time-based runs (measured with fio 3.33, null engine): the deadline at
/// which the job's runtime ends is not a sample, even when the job stops a few ms late.
#[test]
fn counts_match_fio_for_time_based_runs() {
    for (runtime_ms, interval_ms, fio_samples) in [
        (1000, 500, 1),
        (3000, 500, 5),
        (10_000, 500, 19),
        (1200, 500, 2),
        (3000, 250, 11),
        (3000, 1000, 2),
        (2000, 250, 7),
        (1000, 1000, 0),
    ] {
        // The job notices its runtime 20 µs after the deadline, or 4 ms late when it was
        // not on a CPU then; the monitor read the counter at that deadline too.
        for overshoot_ns in [20_000, 4 * MS] {
            let end_ns = runtime_ms * MS + overshoot_ns;
            let r = readings(interval_ms, runtime_ms, 10_000, 7);
            let s = PeriodicSampler::from_trace(
                interval_ms,
                SampleUnit::PerSec,
                r,
                ended(end_ns, Some(runtime_ms * MS)),
                end_ns * 7 / MS,
            );
            let what = format!("{runtime_ms} ms at {interval_ms} ms, +{overshoot_ns} ns");
            assert_eq!(s.summary().samples, fio_samples, "{what}");
            assert_eq!(s.series().len() as u64, fio_samples, "{what}");
            // The rest of the run is the tail, labelled with the reported runtime.
            let tail = s.tail().expect("tail");
            assert_eq!(tail.t_ms, end_ns.div_ceil(MS), "{what}");
            assert!((tail.value / 7000.0 - 1.0).abs() < 1e-3, "{}", tail.value);
        }
    }
}

/// After a ramp, fio samples on the deadlines, so the runtime's last one usually counts
/// (1 s after a 300 ms ramp: 2 samples in 8 runs of 10). The job stops 20 µs after it, before
/// the monitor could read it: that interval is closed at the job's end.
#[test]
fn after_a_ramp_the_runtimes_last_deadline_counts() {
    for (runtime_ms, interval_ms, fio_usually) in [
        (1000, 500, 2),
        (3000, 500, 6),
        (3000, 250, 12),
        (3000, 1000, 3),
    ] {
        let end_ns = runtime_ms * MS + 20_000;
        let r = readings(interval_ms, runtime_ms - 1, 10_000, 7);
        let end = MeasuredEnd {
            end_ns,
            runtime_ns: Some(runtime_ms * MS),
            after_ramp: true,
        };
        let s =
            PeriodicSampler::from_trace(interval_ms, SampleUnit::PerSec, r, end, end_ns * 7 / MS);
        assert_eq!(
            s.summary().samples,
            fio_usually,
            "{runtime_ms} at {interval_ms}"
        );
        assert_eq!(s.series().last().map(|p| p.t_ms), Some(runtime_ms));
        assert_eq!(s.tail(), None);
    }
    // A size-based job that ends 0.5 ms before a deadline does not reach it.
    let r = readings(500, 2500, 0, 1);
    let end = MeasuredEnd {
        end_ns: 2_999_500_000,
        runtime_ns: None,
        after_ramp: true,
    };
    let s = PeriodicSampler::from_trace(500, SampleUnit::PerSec, r, end, 2999);
    assert_eq!(s.summary().samples, 5);
    assert!(s.tail().is_some());
}

#[test]
fn a_job_that_outlives_a_deadline_by_a_millisecond_is_sampled_there() {
    // A size-based job whose last I/O completes at 3004.5 ms: fio's helper thread, waking a
    // little after 3000 ms, still finds it running. At 3000.5 ms it would not.
    let r = readings(500, 3000, 50_000, 2);
    let s =
        PeriodicSampler::from_trace(500, SampleUnit::PerSec, r, ended(3_004_500_000, None), 6009);
    assert_eq!(s.summary().samples, 6);
    assert_eq!(s.tail().map(|t| t.t_ms), Some(3005));
    let r = readings(500, 3000, 50_000, 2);
    let s =
        PeriodicSampler::from_trace(500, SampleUnit::PerSec, r, ended(3_000_500_000, None), 6001);
    assert_eq!(s.summary().samples, 5);
}

#[test]
fn deadline_missed_by_the_monitor_closes_at_the_end() {
    // The monitor woke after the job had finished at 1700 ms: 1500 ms was outlived by
    // 200 ms, so it is a sample (fio's would be), over 1000 → 1700 ms; nothing is left over.
    let r = readings(500, 1000, 0, 1);
    let s = PeriodicSampler::from_trace(500, SampleUnit::PerSec, r, ended(1700 * MS, None), 1700);
    assert_eq!(s.summary().samples, 3);
    let last = s.series()[2];
    assert_eq!(last.t_ms, 1500);
    assert!((last.value - 1000.0).abs() < 1e-9);
    assert_eq!(s.tail(), None);
}

#[test]
fn reading_during_close_is_clamped_to_the_end() {
    // The job stopped at 1800.2 ms; the monitor, late, read the 1500 ms deadline at
    // 1800.5 ms while the job was still closing its files. The interval ends at the job's
    // end, and nothing is left for a tail.
    let mut r = readings(500, 1000, 0, 1);
    r.push(Reading {
        t_ms: 1500,
        at_ns: 1_800_500_000,
        value: 1800,
    });
    let s =
        PeriodicSampler::from_trace(500, SampleUnit::PerSec, r, ended(1_800_200_000, None), 1800);
    assert_eq!(s.summary().samples, 3);
    let v = s.series()[2].value;
    assert!((v - 800.0 / 0.8002).abs() < 1e-6, "{v}");
    assert_eq!(s.tail(), None);
}

#[test]
fn overslept_monitor_gives_one_long_sample() {
    let mut s = PeriodicSampler::new(500, SampleUnit::PerSec);
    s.observe(500, 500 * MS, 500);
    let p = s.observe(1500, 1730 * MS, 1730).unwrap(); // woke at 1730: missed 1000
    assert!((p.value - 1000.0).abs() < 1e-9);
    assert_eq!(s.next_deadline_ms(), 2000);
    assert!(s.observe(1500, 1999 * MS, 2000).is_none());
    assert!(s.observe(2000, 2000 * MS, 2000).is_some());
}

#[test]
fn zero_intervals_stay_in_series_not_in_summary() {
    let mut s = PeriodicSampler::new(100, SampleUnit::PerSec);
    s.observe(100, 100 * MS, 10); // 100 IOPS
    s.observe(200, 200 * MS, 10); // stall
    s.observe(300, 300 * MS, 30); // 200 IOPS
    assert_eq!(s.series().len(), 3);
    assert_eq!(s.series()[1].value, 0.0);
    let sum = s.summary();
    assert_eq!((sum.samples, sum.min, sum.max), (2, 100, 200));
    assert!((sum.mean - 150.0).abs() < 1e-9);
    assert!((sum.stddev - 70.710678118654).abs() < 1e-6);
}

/// The fio 3.33 numbers recorded in the module docs.
#[test]
fn group_sum_mirrors_fio() {
    let a = [18092192.0, 20890160.0, 21462248.0, 19995584.0, 21415144.0];
    let b = [20853843.0, 21630200.0, 21507416.0, 19488256.0, 20953904.0];
    let mut sa = SampleStats::default();
    let mut sb = SampleStats::default();
    a.iter().for_each(|&x| sa.add(x));
    b.iter().for_each(|&x| sb.add(x));
    let g = SampleStats::sum_fio(&[sa, SampleStats::default(), sb]).summary();
    assert_eq!(g.samples, 10);
    assert_eq!(g.min, 37580448);
    assert_eq!(g.max, 43092448);
    assert!((g.mean - 41257789.4).abs() < 1e-3);
    assert!((g.stddev - 1094623.792769).abs() < 1e-3);
}

#[test]
fn aggregate_by_deadline() {
    let a = [
        SeriesPoint {
            t_ms: 500,
            value: 1.0,
        },
        SeriesPoint {
            t_ms: 1001,
            value: 2.0,
        },
    ];
    let b = [SeriesPoint {
        t_ms: 502,
        value: 10.0,
    }];
    let g = aggregate_series(&[&a, &b], 500);
    assert_eq!(
        g,
        vec![
            SeriesPoint {
                t_ms: 500,
                value: 11.0
            },
            SeriesPoint {
                t_ms: 1000,
                value: 2.0
            }
        ]
    );
}
