//! The statistics behind `iogauge compare`, as plain functions of numbers: the moving-block
//! bootstrap for one run per side, and Mann–Whitney U with the Hodges–Lehmann ratio and its
//! distribution-free (Moses) confidence interval for several runs per side. docs/COMPARE.md says
//! what each number means and where it stops holding.

use crate::workload::rng::Rng;

/// Two-sided confidence level of every interval (95 %).
pub(crate) const ALPHA: f64 = 0.05;

/// Resamples per bootstrap: enough that the 2.5th and 97.5th percentiles of the ratio move by
/// well under 1 % between seeds.
pub(crate) const RESAMPLES: usize = 2000;

/// Fixed, so that the same two results always give the same report.
pub(crate) const SEED: u64 = 0x10_6a_09_e6;

/// The block length for `k` intervals: k^(1/3), the usual order for variance and interval
/// estimates with the moving-block bootstrap (Hall, Horowitz & Jing 1995), at least 1.
pub(crate) fn block_len(k: usize) -> usize {
    ((k as f64).cbrt().round() as usize).max(1)
}

/// One bootstrap resample: indices of `k` intervals drawn as ceil(k/L) circular blocks of
/// length L from random starts, cut to k.
pub(crate) fn resample_blocks(k: usize, l: usize, rng: &mut Rng, out: &mut Vec<usize>) {
    out.clear();
    while out.len() < k {
        let start = rng.below(k as u64) as usize;
        for j in 0..l {
            if out.len() == k {
                break;
            }
            out.push((start + j) % k);
        }
    }
}

/// Bootstrap draws of a statistic over `k` intervals: `stat` gets the resampled indices.
pub(crate) fn bootstrap(
    k: usize,
    rng: &mut Rng,
    mut stat: impl FnMut(&[usize]) -> f64,
) -> Vec<f64> {
    let l = block_len(k);
    let mut idx = Vec::with_capacity(k);
    (0..RESAMPLES)
        .map(|_| {
            resample_blocks(k, l, rng, &mut idx);
            stat(&idx)
        })
        .collect()
}

/// The `q`-quantile (0..=1) of `v` by linear interpolation between order statistics.
///
/// Not a latency percentile (those are fio's rank, `stats::latency::fio_rank`, everywhere a
/// percentile of measured I/Os is reported, judged or compared): this summarizes bootstrap
/// draws and differences of a statistic, continuous quantities whose interval ends and medians
/// are estimates, where interpolating between neighbours is the usual, less biased choice.
pub(crate) fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// The percentile bootstrap interval of B/A from independent draws of each side.
pub(crate) fn ratio_interval(a: &[f64], b: &[f64]) -> (f64, f64) {
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| y / x).collect();
    (quantile(&r, ALPHA / 2.0), quantile(&r, 1.0 - ALPHA / 2.0))
}

/// How many of the C(n+m, n) orderings give each value of U (A's count of pairs where B is
/// larger), for U = 0..=n·m: the exact null distribution without ties.
fn u_counts(n: usize, m: usize) -> Vec<f64> {
    // f[i][j][u]: ways with i from A and j from B; built up one element at a time.
    let mut f = vec![vec![vec![0.0f64; n * m + 1]; m + 1]; n + 1];
    for row in f.iter_mut() {
        row[0][0] = 1.0;
    }
    for cell in f[0].iter_mut() {
        cell[0] = 1.0;
    }
    for i in 1..=n {
        for j in 1..=m {
            for u in 0..=i * j {
                // The largest element is B's (it beats all i of A's: U grows by i) or A's.
                let from_b = if u >= i { f[i][j - 1][u - i] } else { 0.0 };
                let from_a = f[i - 1][j][u];
                f[i][j][u] = from_a + from_b;
            }
        }
    }
    f[n][m].clone()
}

/// Mann–Whitney U of samples `a` and `b`: the number of pairs with b > a (ties count ½) and the
/// two-sided p-value: exact when there are no ties, else the normal approximation with the tie
/// correction and a continuity correction.
pub(crate) fn mann_whitney(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (n, m) = (a.len(), b.len());
    let mut u = 0.0f64;
    let mut ties = false;
    for x in a {
        for y in b {
            if y > x {
                u += 1.0;
            } else if y == x {
                u += 0.5;
                ties = true;
            }
        }
    }
    let nm = (n * m) as f64;
    if !ties && n * m <= 2500 {
        let counts = u_counts(n, m);
        let total: f64 = counts.iter().sum();
        let k = u.round() as usize;
        let lower: f64 = counts[..=k].iter().sum::<f64>() / total;
        let upper: f64 = counts[k..].iter().sum::<f64>() / total;
        return (u, (2.0f64 * lower.min(upper)).min(1.0));
    }
    // Normal approximation with the tie correction.
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    let big_n = (n + m) as f64;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1] == all[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    let var = nm / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
    if var <= 0.0 {
        return (u, 1.0);
    }
    let z = ((u - nm / 2.0).abs() - 0.5).max(0.0) / var.sqrt();
    (u, (2.0 * (1.0 - normal_cdf(z))).min(1.0))
}

/// The smallest two-sided p-value Mann–Whitney can give with n and m runs: 2 / C(n+m, n).
pub(crate) fn smallest_p(n: usize, m: usize) -> f64 {
    let mut c = 1.0f64;
    for i in 0..n {
        c = c * (m + n - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Hodges–Lehmann estimate of the ratio B/A (the median of all pairwise ratios, computed on
/// logarithms) and its Moses confidence interval at 1 − ALPHA, from the exact distribution of U.
/// None for the interval when the sample sizes cannot reach that confidence.
pub(crate) fn hodges_lehmann_ratio(a: &[f64], b: &[f64]) -> (f64, Option<(f64, f64)>) {
    let mut d: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| y.ln() - x.ln()))
        .collect();
    d.sort_by(f64::total_cmp);
    let est = quantile(&d, 0.5).exp();
    let (n, m) = (a.len(), b.len());
    let counts = u_counts(n, m);
    let total: f64 = counts.iter().sum();
    // The largest c with P(U ≤ c − 1) ≤ α/2: the c-th smallest and c-th largest differences.
    let mut cum = 0.0;
    let mut c = 0;
    for (u, w) in counts.iter().enumerate() {
        if (cum + w) / total > ALPHA / 2.0 {
            c = u;
            break;
        }
        cum += w;
    }
    if c == 0 {
        return (est, None);
    }
    let lo = d[c - 1].exp();
    let hi = d[d.len() - c].exp();
    (est, Some((lo, hi)))
}

/// Φ(z), the standard normal distribution function (Abramowitz & Stegun 7.1.26 through erf,
/// |error| < 1.5e-7).
pub(crate) fn normal_cdf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    let erf = if x >= 0.0 { y } else { -y };
    0.5 * (1.0 + erf)
}

/// The median of `v` (NaN when empty).
pub(crate) fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn mann_whitney_matches_published_values() {
        // Every B above every A with 4 and 4 runs: U = 16, exact p = 2/70.
        let a = [1.0, 2.0, 3.0, 4.0];
        let b = [5.0, 6.0, 7.0, 8.0];
        let (u, p) = mann_whitney(&a, &b);
        assert_eq!(u, 16.0);
        assert!((p - 2.0 / 70.0).abs() < 1e-12, "{p}");
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        // 3 against 3 can never reach 0.05: 2/20 = 0.1.
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        // scipy.stats.mannwhitneyu([1,3,5,7,9],[2,4,6,8,10], method="exact"): U1 = 10, p = 0.690476.
        let (u, p) = mann_whitney(&[2.0, 4.0, 6.0, 8.0, 10.0], &[1.0, 3.0, 5.0, 7.0, 9.0]);
        assert_eq!(u, 10.0);
        assert!((p - 0.690_476_190_476).abs() < 1e-9, "{p}");
        // Identical samples: no evidence at all.
        let (_, p) = mann_whitney(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
        assert_eq!(p, 1.0);
    }

    #[test]
    fn the_null_distribution_sums_to_the_orderings() {
        let c = u_counts(5, 7);
        assert_eq!(c.iter().sum::<f64>(), 792.0); // C(12, 5)
        assert_eq!(c.len(), 36);
        // Symmetric around n·m/2.
        for u in 0..c.len() {
            assert_eq!(c[u], c[c.len() - 1 - u]);
        }
    }

    #[test]
    fn hodges_lehmann_ratio_and_its_interval() {
        // B is A doubled: every pairwise log-difference centres on ln 2.
        let a = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let (est, ci) = hodges_lehmann_ratio(&a, &b);
        assert!((est - 2.0).abs() < 1e-9, "{est}");
        let (lo, hi) = ci.unwrap();
        assert!(lo > 1.0 && lo <= 2.0 && hi >= 2.0, "{lo} {hi}");
        // Too few runs for a 95 % interval.
        assert!(hodges_lehmann_ratio(&[1.0, 2.0], &[3.0, 4.0]).1.is_none());
    }

    #[test]
    fn block_bootstrap_resamples_whole_blocks_and_is_repeatable() {
        assert_eq!(block_len(1), 1);
        assert_eq!(block_len(27), 3);
        assert_eq!(block_len(1000), 10);
        let mut rng = Rng::new(SEED);
        let mut idx = Vec::new();
        resample_blocks(10, 3, &mut rng, &mut idx);
        assert_eq!(idx.len(), 10);
        // Consecutive within a block (circularly).
        assert_eq!((idx[0] + 1) % 10, idx[1]);
        assert_eq!((idx[1] + 1) % 10, idx[2]);
        let draw = |seed| {
            let mut r = Rng::new(seed);
            bootstrap(20, &mut r, |ix| ix.iter().map(|i| *i as f64).sum())
        };
        assert_eq!(draw(SEED), draw(SEED));
        assert_eq!(draw(SEED).len(), RESAMPLES);
    }

    #[test]
    fn quantiles_and_the_normal_cdf() {
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.5), 2.0);
        assert_eq!(quantile(&[1.0, 2.0], 0.5), 1.5);
        assert!(quantile(&[], 0.5).is_nan());
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-9);
    }
}
