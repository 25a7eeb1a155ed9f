//! The percentile rule driven over synthetic latency streams the way the run drives it (a look
//! every 100 samples, standing in for 100 ms), and the order-statistic ranks.

use super::super::test_rng::{Latency, Rng};
use super::*;

/// p99 against 10 (ms), margin 10 %, alpha 0.001: an etcd-like recipe of 9,800 fdatasyncs with a
/// floor of 500 and looks 1.5x apart (9 looks, 1.1e-4 each).
const THRESHOLD: f64 = 10.0;
const FULL: u64 = 9_800;
const STEP: u64 = 100;

fn risk() -> Risk {
    Risk {
        alpha: 0.001,
        margin: 0.10,
        full: FULL,
        floor: 500,
        growth: 1.5,
    }
}

struct Outcome {
    side: Side,
    /// Samples at the deciding look.
    at: Option<u64>,
}

/// Feeds `draw(i)` for samples 1..=FULL, looking every STEP samples; checks at every look that
/// nothing is decided before the floor, decisions are sticky, and looks stay within max_looks.
fn drive(mut draw: impl FnMut(u64) -> f64) -> Outcome {
    let mut rule = QuantileRule::new(0.99, THRESHOLD, risk());
    let (low, high) = rule.edges();
    let (mut above_low, mut above_high, mut at) = (0, 0, None);
    let mut side = Side::Undecided;
    for i in 1..=FULL {
        let x = draw(i);
        above_low += u64::from(x > low);
        above_high += u64::from(x > high);
        if i % STEP == 0 || i == FULL {
            let now = rule.look(i, i, above_low, above_high);
            assert!(
                now == side || side == Side::Undecided,
                "a decision changed at {i}"
            );
            if now != Side::Undecided && at.is_none() {
                assert!(i >= risk().floor, "decided at {i}, before the floor");
                at = Some(i);
            }
            side = now;
            assert!(rule.looks() <= risk().max_looks());
        }
    }
    Outcome { side, at }
}

fn lognormal(p99_over_threshold: f64, seed: u64) -> Outcome {
    let dist = Latency::LogNormal {
        p99: p99_over_threshold * THRESHOLD,
        sigma: 1.0,
    };
    let mut rng = Rng::new(seed);
    drive(|_| dist.sample(&mut rng))
}

#[test]
fn clearly_below_decides_below_at_the_third_look() {
    // p99 at 0.1x: no sample above 9 ms; 0.99^800 = 3.2e-4 is not yet below 1.1e-4 at the
    // second look (800 samples), 0.99^1200 = 5.8e-6 is: Below after 1,200 of 9,800 samples.
    for seed in 0..20 {
        let out = lognormal(0.1, seed);
        assert_eq!(out.side, Side::Below);
        assert_eq!(out.at, Some(1200), "seed {seed}");
    }
}

#[test]
fn clearly_above_decides_above_at_the_floor() {
    // p99 at 10x: ~45 % of samples exceed 11 ms, so the first look (500 samples) decides.
    for seed in 0..20 {
        let out = lognormal(10.0, seed);
        assert_eq!(out.side, Side::Above);
        assert_eq!(out.at, Some(500), "seed {seed}");
    }
}

/// A Pareto stream (shape 2) with p99 at `ratio`·threshold, drawn by inverse transform: a
/// sample exceeds x exactly when u < P(X > x), so only the two tail probabilities are needed
/// (cheap enough for 300 seeds of 9,800 samples in a debug build).
fn pareto_at(ratio: f64, seed: u64) -> Outcome {
    let tail = |x: f64| (0.01 * (ratio * THRESHOLD / x).powi(2)).min(1.0);
    let (p_low, p_high) = (tail(THRESHOLD * 0.9), tail(THRESHOLD * 1.1));
    let mut rng = Rng::new(seed);
    drive(|_| {
        let u = rng.uniform();
        if u < p_high {
            2.0 * THRESHOLD
        } else if u < p_low {
            THRESHOLD
        } else {
            0.0
        }
    })
}

#[test]
fn within_the_margin_is_never_decided() {
    // 300 seeds each at 0.95x, 1.0x and 1.05x: measured 0 decisions of either side (both are
    // wrong inside the margin), i.e. 900/900 ran to full length Undecided.
    for ratio in [0.95, 1.0, 1.05] {
        let decided = (0..300).filter(|&seed| pareto_at(ratio, seed).side != Side::Undecided);
        assert_eq!(decided.count(), 0, "p99 at {ratio}x");
    }
}

#[test]
fn heavy_tails_below_the_threshold_still_decide_below() {
    // Pareto shape 1.1 (infinite variance) with p99 at 0.5x: the largest of 9,800 samples is
    // 10x to 600x the threshold (measured over these seeds), yet P(X > 9 ms) = 0.52 % < 1 %.
    // Measured over 20 seeds: all Below; looks fall at 500, 800, 1200, 1800, 2700, 4100, 6200,
    // 9300 samples; median decision at 4,100 samples, earliest 1,200, latest 9,300.
    let dist = Latency::Pareto {
        p99: 0.5 * THRESHOLD,
        shape: 1.1,
    };
    for seed in 0..20 {
        let mut rng = Rng::new(seed);
        let mut max: f64 = 0.0;
        let out = drive(|_| {
            let x = dist.sample(&mut rng);
            max = max.max(x);
            x
        });
        assert_eq!(out.side, Side::Below, "seed {seed}");
        assert!(max > 5.0 * THRESHOLD, "seed {seed}: max {max}");
    }
    // Lognormal with sigma 2 (p99 0.5x) likewise: all Below, median at 4,100, latest 9,300.
    let dist = Latency::LogNormal {
        p99: 0.5 * THRESHOLD,
        sigma: 2.0,
    };
    for seed in 0..20 {
        let mut rng = Rng::new(seed);
        assert_eq!(
            drive(|_| dist.sample(&mut rng)).side,
            Side::Below,
            "seed {seed}"
        );
    }
}

#[test]
fn a_slowdown_midway_is_never_decided_fast() {
    // p99 at 0.7x until sample 700 (undecided then: ~2 samples above 9 ms of 700), then 5x
    // slower (p99 at 3.5x). Over 100 seeds: never Below; Above soon after the switch.
    let fast = Latency::LogNormal {
        p99: 0.7 * THRESHOLD,
        sigma: 0.5,
    };
    let slow = fast.scaled(5.0);
    for seed in 0..100 {
        let mut rng = Rng::new(seed);
        let out = drive(|i| {
            if i <= 700 {
                fast.sample(&mut rng)
            } else {
                slow.sample(&mut rng)
            }
        });
        assert_eq!(out.side, Side::Above, "seed {seed}");
        assert!(out.at.is_some_and(|at| at > 700), "seed {seed}");
    }
}

#[test]
fn nothing_counts_before_the_floor() {
    let mut rule = QuantileRule::new(0.99, THRESHOLD, risk());
    // Overwhelming evidence either way, but progress below the floor.
    assert_eq!(rule.look(499, 100_000, 0, 0), Side::Undecided);
    assert_eq!(rule.looks(), 0);
    assert_eq!(rule.look(500, 100_000, 0, 0), Side::Below);
    assert_eq!(
        rule.look(9_800, 100_000, 100_000, 100_000),
        Side::Below,
        "sticky"
    );
    assert_eq!(rule.looks(), 1);
}

#[test]
fn a_look_at_n_of_ten_to_the_eight_is_cheap() {
    // Two tails near the decision boundary at n = 10^8; well under a millisecond each even in
    // a debug build (measured 94 us in debug; quantile_upper_rank(10^8, 0.99, 0.001) 29 us,
    // clopper_pearson_upper at n = 10^8 22 us).
    let risk = Risk {
        alpha: 0.001,
        margin: 0.1,
        full: 200_000_000,
        floor: 1,
        growth: 1.5,
    };
    let mut rule = QuantileRule::new(0.99, THRESHOLD, risk);
    let start = std::time::Instant::now();
    let side = rule.look(1, 100_000_000, 1_000_000, 990_000);
    assert_eq!(side, Side::Undecided);
    assert!(start.elapsed().as_millis() < 50, "{:?}", start.elapsed());
}

#[test]
fn ranks_at_the_edges() {
    assert_eq!(quantile_upper_rank(100, 0.99, 0.001), None);
    assert_eq!(quantile_upper_rank(0, 0.5, 0.05), None);
    // q^n <= alpha: the maximum is the only choice.
    assert_eq!(quantile_upper_rank(300, 0.99, 0.05), Some(300));
    // Median of 20 at 95 %: P(Bin(20, .5) >= 15) = 0.0207, >= 14: 0.0577, so rank 15; the
    // lower rank is 6 by symmetry (P(Bin <= 5) = 0.0207).
    assert_eq!(quantile_upper_rank(20, 0.5, 0.05), Some(15));
    assert_eq!(quantile_lower_rank(20, 0.5, 0.05), Some(6));
    assert_eq!(quantile_lower_rank(3, 0.5, 0.05), None);
    // n = 10^8 answers quickly and lands within a few sd of n·q.
    let r = quantile_upper_rank(100_000_000, 0.99, 0.001).unwrap();
    assert!(r > 99_000_000 && r < 99_004_000, "{r}");
    let l = quantile_lower_rank(100_000_000, 0.99, 0.001).unwrap();
    assert!(l < 99_000_000 && l > 98_996_000, "{l}");
}

#[test]
fn ranks_cover_the_true_quantile_monte_carlo() {
    // 2,000 samples of 1,000 uniforms (the true 0.99-quantile is 0.99; ranks are
    // distribution-free). Ranks 996 and 985; measured coverage: upper 96.6 %, lower 95.5 %
    // (exact: 97.1 % and 95.2 %).
    let (n, q, alpha, reps) = (1_000u64, 0.99, 0.05, 2_000);
    let upper = quantile_upper_rank(n, q, alpha).unwrap() as usize;
    let lower = quantile_lower_rank(n, q, alpha).unwrap() as usize;
    let mut rng = Rng::new(42);
    let mut samples = vec![0.0; n as usize];
    let (mut up_ok, mut low_ok) = (0, 0);
    for _ in 0..reps {
        samples.iter_mut().for_each(|x| *x = rng.uniform());
        let (_, up, _) = samples.select_nth_unstable_by(upper - 1, f64::total_cmp);
        up_ok += usize::from(*up >= q);
        let (_, low, _) = samples.select_nth_unstable_by(lower - 1, f64::total_cmp);
        low_ok += usize::from(*low <= q);
    }
    // Three Monte Carlo standard deviations below 1 - alpha (0.0146 at 2,000 reps).
    let floor = (1.0 - alpha) - 3.0 * (alpha * (1.0 - alpha) / reps as f64).sqrt();
    let (up_cov, low_cov) = (up_ok as f64 / reps as f64, low_ok as f64 / reps as f64);
    assert!(
        up_cov >= floor && low_cov >= floor,
        "upper {up_cov}, lower {low_cov}"
    );
}
