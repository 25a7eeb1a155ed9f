//! The latency recorder's unit tests (`latency.rs`).

use super::*;

const PCTS: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// Small deterministic PRNG (xorshift64*), so tests need no extra crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Log-uniform-ish latency between 100 ns and ~100 ms.
    fn latency(&mut self) -> u64 {
        let e = 7 + self.next() % 20;
        let base = 1u64 << e;
        base + self.next() % base
    }
}

/// The sample at fio's rank (checked on its own in `ranks_are_fios_at_the_boundaries`).
fn brute(samples: &[u64], p: f64) -> u64 {
    let mut v = samples.to_vec();
    v.sort_unstable();
    v[(fio_rank(p, v.len() as u64) - 1) as usize]
}

fn brute_stats(samples: &[u64]) -> (f64, f64) {
    let n = samples.len() as f64;
    let mean = samples.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = samples
        .iter()
        .map(|&x| (x as f64 - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    (mean, var.sqrt())
}

#[test]
fn empty_is_all_zero() {
    let r = LatRecorder::new(10);
    assert_eq!(r.summary(&PCTS, true, true), LatSummary::default());
    assert!(r.is_exact());
    assert_eq!(r.count(), 0);
}

#[test]
fn sorting_in_place_keeps_every_number_and_a_later_record_is_still_counted() {
    let mut rng = Rng(7);
    let mut vals: Vec<u64> = (0..4_000).map(|_| rng.latency()).collect();
    let mut r = LatRecorder::new(5_000);
    vals.iter().for_each(|&x| r.record(x));
    let before = r.summary(&PCTS, true, true);
    r.sort_samples();
    assert_eq!(r.summary(&PCTS, true, true), before);
    // Unsorted again after a record: summary must sort a copy, not trust the order.
    r.record(1);
    vals.push(1);
    let after = r.summary(&PCTS, true, true);
    assert_eq!((after.n, after.min), (4_001, 1));
    for &(p, v) in &after.percentiles {
        assert_eq!(v, brute(&vals, p), "p{p}");
    }
}

#[test]
fn exact_percentiles_match_brute_force() {
    let mut rng = Rng(42);
    let samples: Vec<u64> = (0..10_001).map(|_| rng.latency()).collect();
    let mut r = LatRecorder::new(20_000);
    samples.iter().for_each(|&x| r.record(x));
    assert!(r.is_exact());
    let s = r.summary(&PCTS, true, false);
    assert_eq!(s.method, Some(PercentileMethod::Exact));
    for &(p, v) in &s.percentiles {
        assert_eq!(v, brute(&samples, p), "p{p}");
    }
    let (mean, sd) = brute_stats(&samples);
    assert_eq!(s.min, *samples.iter().min().unwrap());
    assert_eq!(s.max, *samples.iter().max().unwrap());
    assert!((s.mean - mean).abs() / mean < 1e-12);
    assert!((s.stddev - sd).abs() / sd < 1e-9);
    assert!(s.bins.is_empty());
}

#[test]
fn histogram_percentiles_within_bound_and_ordered() {
    let mut rng = Rng(7);
    let samples: Vec<u64> = (0..50_000).map(|_| rng.latency()).collect();
    let mut r = LatRecorder::new(1000);
    samples.iter().for_each(|&x| r.record(x));
    assert!(!r.is_exact());
    let s = r.summary(&PCTS, true, true);
    assert_eq!(s.method, Some(PercentileMethod::Histogram));
    let mut prev = 0;
    for &(p, v) in &s.percentiles {
        let truth = brute(&samples, p) as f64;
        assert!(
            (v as f64 - truth).abs() / truth <= 0.005,
            "p{p}: {v} vs {truth}"
        );
        assert!(v >= prev && v >= s.min && v <= s.max);
        prev = v;
    }
    assert_eq!(s.bins.iter().map(|b| b.1).sum::<u64>(), 50_000);
    assert!(s.bins.windows(2).all(|w| w[0].0 < w[1].0));
    // mean/stddev stay exact in histogram mode
    let (mean, sd) = brute_stats(&samples);
    assert!((s.mean - mean).abs() / mean < 1e-12);
    assert!((s.stddev - sd).abs() / sd < 1e-9);
}

#[test]
fn histogram_percentile_never_exceeds_max() {
    let mut r = LatRecorder::new(0);
    // 1,000,001 ns sits low in a 4096 ns-wide bucket: the midpoint is above the max.
    for _ in 0..10 {
        r.record(1_000_001);
    }
    let s = r.summary(&[50.0, 100.0], true, false);
    assert!(s.percentiles.iter().all(|&(_, v)| v == 1_000_001));
    // Values beyond the histogram range clamp into the last bucket but stay exact in max.
    let mut r = LatRecorder::new(0);
    r.record(2 * 3_600_000_000_000);
    let s = r.summary(&[99.0], true, false);
    assert_eq!(s.max, 7_200_000_000_000);
    assert_eq!(s.percentiles[0].1, 7_200_000_000_000);
}

#[test]
fn percentile_order_kept_as_given() {
    let mut r = LatRecorder::new(0);
    (1..=1000u64).for_each(|x| r.record(x * 1000));
    let s = r.summary(&[99.0, 1.0, 50.0], true, false);
    assert_eq!(s.percentiles.len(), 3);
    assert_eq!(s.percentiles[0].0, 99.0);
    assert!(s.percentiles[0].1 > s.percentiles[2].1 && s.percentiles[2].1 > s.percentiles[1].1);
    assert!(r.summary(&PCTS, false, false).percentiles.is_empty());
}

#[test]
fn merge_equals_recording_into_one() {
    let mut rng = Rng(99);
    let a: Vec<u64> = (0..3000).map(|_| rng.latency()).collect();
    let b: Vec<u64> = (0..5000).map(|_| rng.latency()).collect();
    for budget in [10_000usize, 4000, 100] {
        let mut ra = LatRecorder::new(budget);
        let mut rb = LatRecorder::new(budget);
        let mut all = LatRecorder::new(100_000);
        a.iter().for_each(|&x| {
            ra.record(x);
            all.record(x)
        });
        b.iter().for_each(|&x| {
            rb.record(x);
            all.record(x)
        });
        let both_exact = ra.is_exact() && rb.is_exact();
        ra.merge(&rb);
        assert_eq!(ra.is_exact(), both_exact, "budget {budget}");
        assert_eq!(ra.count(), 8000);
        let m = ra.summary(&PCTS, true, true);
        let o = all.summary(&PCTS, true, true);
        assert_eq!((m.n, m.min, m.max), (o.n, o.min, o.max));
        assert!((m.mean - o.mean).abs() < 1e-6 && (m.stddev - o.stddev).abs() < 1e-6);
        assert_eq!(m.bins, o.bins);
        assert_eq!(ra.lat_bucket_counts(), all.lat_bucket_counts());
        if both_exact {
            assert_eq!(m.percentiles, o.percentiles);
        } else {
            // non-exact merge: recording more must not make it exact again
            ra.record(5);
            assert!(!ra.is_exact());
        }
    }
}

#[test]
fn reset_forgets_everything_keeps_buffers() {
    let mut r = LatRecorder::new(100);
    (0..500u64).for_each(|x| r.record(x + 1));
    assert!(!r.is_exact());
    let cap = r.samples.capacity();
    r.reset();
    assert_eq!(r.count(), 0);
    assert!(r.is_exact());
    assert_eq!(r.summary(&PCTS, true, true), LatSummary::default());
    assert_eq!(r.samples.capacity(), cap);
    r.record(42);
    let s = r.summary(&[50.0], true, true);
    assert_eq!((s.n, s.min, s.max, s.percentiles[0].1), (1, 42, 42, 42));
    assert_eq!(s.method, Some(PercentileMethod::Exact));
    assert_eq!(s.bins, vec![(42, 1)]);
}

#[test]
fn stddev_is_exact_for_large_values() {
    // Large offsets with tiny spread: naive f64 Σx² − (Σx)²/n would cancel catastrophically.
    let mut r = LatRecorder::new(0);
    let base = 3_000_000_000_000u64;
    for x in [base, base + 1, base + 2, base + 3] {
        r.record(x);
    }
    let expected = (5.0f64 / 3.0).sqrt();
    assert!((r.stddev() - expected).abs() < 1e-9, "{}", r.stddev());
}

/// fio 3.33's own ranks: its comparison `sum >= (long double)p / 100.0 * nr` evaluated in C
/// (gcc, x86-64) for the default percentile list and p100, at the boundaries.
#[test]
fn ranks_are_fios_at_the_boundaries() {
    #[rustfmt::skip]
    let fio: [(u64, [u64; 18]); 12] = [
        (1, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
        (2, [1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]),
        (3, [1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]),
        (999, [10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 990, 995, 999, 999, 999, 999]),
        (1000, [10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 990, 995, 1000, 1000, 1000, 1000]),
        (1001, [11, 51, 101, 201, 301, 401, 501, 601, 701, 801, 901, 951, 991, 996, 1000, 1001, 1001, 1001]),
        (9999, [100, 500, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 9500, 9900, 9950, 9990, 9995, 9999, 9999]),
        (10000, [100, 500, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 9500, 9900, 9950, 9991, 9996, 9999, 10000]),
        (10001, [101, 501, 1001, 2001, 3001, 4001, 5001, 6001, 7001, 8001, 9001, 9501, 9901, 9951, 9991, 9996, 10000, 10001]),
        (100000, [1000, 5000, 10000, 20000, 30001, 40000, 50000, 60001, 70000, 80000, 90000, 95000, 99000, 99500, 99901, 99951, 99990, 100000]),
        (131072, [1311, 6554, 13108, 26215, 39322, 52429, 65536, 78644, 91751, 104858, 117965, 124519, 129762, 130417, 130941, 131007, 131059, 131072]),
        (1000001, [10001, 50001, 100001, 200001, 300001, 400001, 500001, 600001, 700001, 800001, 900001, 950001, 990001, 995001, 999001, 999501, 999901, 1000001]),
    ];
    for (n, ranks) in fio {
        for (&p, &want) in PCTS.iter().chain(&[100.0]).zip(&ranks) {
            assert_eq!(fio_rank(p, n), want, "p{p} of {n}");
        }
    }
    // The brief's boundaries spelled out: p50, p99, p99.9 and p100 of 1, 999, 1000, 1001.
    let at = |n| [50.0, 99.0, 99.9, 100.0].map(|p| fio_rank(p, n));
    assert_eq!(at(1), [1, 1, 1, 1]);
    assert_eq!(at(999), [500, 990, 999, 999]);
    assert_eq!(at(1000), [500, 990, 1000, 1000]);
    assert_eq!(at(1001), [501, 991, 1000, 1001]);
    // Outside the range, and nothing to rank.
    assert_eq!(fio_rank(0.0, 5), 1);
    assert_eq!(fio_rank(-1.0, 5), 1);
    assert_eq!(fio_rank(f64::NAN, 5), 1);
    assert_eq!(fio_rank(250.0, 5), 5);
    assert_eq!(fio_rank(f64::MIN_POSITIVE / 4.0, 5), 1);
    assert_eq!(fio_rank(1e-300, u64::MAX), 1);
    assert_eq!(fio_rank(99.99, u64::MAX), 18_444_899_399_302_179_716);
    assert_eq!(fio_rank(50.0, 0), 0);
}

/// The recorder's exact percentiles are the samples at fio's ranks: p99.9 of 1,000 is the
/// largest (the rule stats and report once disagreed on).
#[test]
fn the_recorder_reports_the_sample_at_fios_rank() {
    let mut r = LatRecorder::new(2000);
    (1..=1000u64).for_each(|x| r.record(x * 1000));
    let s = r.summary(&[50.0, 99.0, 99.9, 100.0], true, false);
    let v: Vec<u64> = s.percentiles.iter().map(|p| p.1).collect();
    assert_eq!(v, [500_000, 990_000, 1_000_000, 1_000_000]);
    r.record(1_001_000);
    let s = r.summary(&[99.9], true, false);
    assert_eq!(s.percentiles[0].1, 1_000_000);
}

#[test]
fn clone_keeps_capacity() {
    let mut r = LatRecorder::new(1000);
    r.record(1);
    let c = r.clone();
    assert!(c.samples.capacity() >= 1000);
    assert_eq!(c.summary(&PCTS, true, true), r.summary(&PCTS, true, true));
}

/// A standard normal draw (Box–Muller) from the test PRNG.
fn normal(rng: &mut Rng) -> f64 {
    let u1 = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    let u2 = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Real-looking latency distributions (ns): a page-cache read (log-normal around 2 µs), an
/// SSD read with a garbage-collection tail (bimodal: 80 µs and 2 ms), an fdatasync on a
/// disk (log-normal around 1.5 ms, wide), a queue at depth 16 (sum of exponentials).
fn distribution(kind: usize, rng: &mut Rng) -> u64 {
    match kind {
        0 => (2_000.0 * (0.3 * normal(rng)).exp()) as u64,
        1 => {
            if rng.next() % 100 < 3 {
                (2_000_000.0 * (0.5 * normal(rng)).exp()) as u64
            } else {
                (80_000.0 * (0.15 * normal(rng)).exp()) as u64
            }
        }
        2 => (1_500_000.0 * (0.8 * normal(rng)).exp()) as u64,
        _ => (0..16)
            .map(|_| {
                let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                -(1.0 - u).ln() * 20_000.0
            })
            .sum::<f64>() as u64,
    }
    .max(1)
}

#[test]
fn switches_to_histogram_at_the_budget_and_stays_within_half_a_percent() {
    const BUDGET: usize = 4096;
    for kind in 0..4 {
        let mut rng = Rng(1234 + kind as u64);
        let samples: Vec<u64> = (0..BUDGET * 8)
            .map(|_| distribution(kind, &mut rng))
            .collect();
        let mut r = LatRecorder::new(BUDGET);
        // Exact up to and including the budget-th sample…
        for &x in &samples[..BUDGET] {
            r.record(x);
        }
        assert!(r.is_exact(), "kind {kind}");
        let s = r.summary(&PCTS, true, false);
        assert_eq!(s.method, Some(PercentileMethod::Exact));
        for &(p, v) in &s.percentiles {
            assert_eq!(v, brute(&samples[..BUDGET], p), "kind {kind} p{p}");
        }
        // …the histogram from the next one on, and the buffer never grows past the budget.
        r.record(samples[BUDGET]);
        assert!(!r.is_exact(), "kind {kind}");
        for &x in &samples[BUDGET + 1..] {
            r.record(x);
        }
        assert_eq!(r.samples.len(), BUDGET);
        assert_eq!(r.samples.capacity(), BUDGET);
        let s = r.summary(&PCTS, true, false);
        assert_eq!(s.method, Some(PercentileMethod::Histogram));
        assert_eq!(s.n, samples.len() as u64);
        for &(p, v) in &s.percentiles {
            let truth = brute(&samples, p) as f64;
            let err = (v as f64 - truth).abs() / truth;
            assert!(
                err <= 0.005,
                "kind {kind} p{p}: {v} vs exact {truth} ({err})"
            );
        }
    }
}

#[test]
fn a_sample_beyond_u32_makes_the_recorder_inexact() {
    let mut r = LatRecorder::new(100);
    r.record(1_000);
    r.record(5_000_000_000); // 5 s does not fit the u32 samples
    r.record(2_000);
    assert!(!r.is_exact());
    let s = r.summary(&[50.0, 100.0], true, false);
    assert_eq!(s.method, Some(PercentileMethod::Histogram));
    assert_eq!(s.max, 5_000_000_000);
    assert_eq!(s.percentiles[1].1, 5_000_000_000);
    assert!((s.percentiles[0].1 as f64 - 2_000.0).abs() / 2_000.0 <= 0.005);
}

#[test]
fn default_budget_keeps_the_etcd_recipe_exact() {
    // etcd's recipe: 22 MiB of 2300-byte writes, each followed by an fdatasync.
    assert!(DEFAULT_SAMPLE_BUDGET as u64 >= (22 << 20) / 2300);
    // 512 KiB of samples per recorder.
    assert_eq!(
        DEFAULT_SAMPLE_BUDGET * std::mem::size_of::<u32>(),
        512 << 10
    );
}

#[test]
fn budget_split() {
    assert_eq!(sample_budget_for(1), DEFAULT_SAMPLE_BUDGET);
    assert_eq!(sample_budget_for(640), (64 << 20) / 4 / 640);
    assert_eq!(sample_budget_for(0), DEFAULT_SAMPLE_BUDGET);
}
