//! Tail functions: log-gamma, the regularized incomplete beta and its inverse, and what they
//! give: binomial tails, Clopper-Pearson bounds, Student-t tails and quantiles.
//!
//! The incomplete beta is the continued fraction of Numerical Recipes (modified Lentz), which
//! takes O(sqrt(max(a, b))) steps in the worst case: about 10^4 cheap steps at n = 10^8, tens of
//! microseconds. Log-gamma is Lanczos (g = 7, 9 terms); at n = 10^8 its ~1e-16 relative error on
//! values near 2·10^9 leaves a relative error near 1e-7 in a tail probability: nothing next to
//! the alphas it is compared with. Inverses are safeguarded Newton steps inside a shrinking
//! bracket, started from a normal approximation, so they also stay well under a millisecond.

/// ln Γ(x) for x > 0 (Lanczos, g = 7).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series in its accurate range.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// ln of x^a (1-x)^b / B(a, b), the factor in front of the continued fraction.
fn ln_front(a: f64, b: f64, x: f64) -> f64 {
    a * x.ln() + b * (-x).ln_1p() - ln_beta(a, b)
}

/// The continued fraction for I_x(a, b) (Numerical Recipes `betacf`, modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let fix = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / fix(1.0 - qab * x / qap);
    let mut h = d;
    // Enough for max(a, b) up to ~10^12; each step is a handful of flops.
    let max_steps = 1000 + 10 * (a.max(b).sqrt() as u64);
    for m in 1..=max_steps {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / fix(1.0 + aa * d);
        c = fix(1.0 + aa / c);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / fix(1.0 + aa * d);
        c = fix(1.0 + aa / c);
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta I_x(a, b) = P(Beta(a, b) <= x), for a, b > 0.
pub(crate) fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    // The fraction converges fast on this side of the mean; use the symmetry on the other.
    if x < (a + 1.0) / (a + b + 2.0) {
        (ln_front(a, b, x).exp() * beta_cf(a, b, x) / a).clamp(0.0, 1.0)
    } else {
        (1.0 - ln_front(a, b, x).exp() * beta_cf(b, a, 1.0 - x) / b).clamp(0.0, 1.0)
    }
}

/// The Beta(a, b) density at x in (0, 1).
fn beta_pdf(a: f64, b: f64, x: f64) -> f64 {
    ((a - 1.0) * x.ln() + (b - 1.0) * (-x).ln_1p() - ln_beta(a, b)).exp()
}

/// The x with I_x(a, b) = y: Newton steps from `guess`, each kept inside a bracket that halves
/// whenever a step would leave it (so it always converges; typically in under 10 steps).
pub(crate) fn beta_inc_inv(a: f64, b: f64, y: f64, guess: f64) -> f64 {
    if y <= 0.0 {
        return 0.0;
    }
    if y >= 1.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    let mut x = if guess > 0.0 && guess < 1.0 {
        guess
    } else {
        0.5
    };
    for _ in 0..200 {
        let f = beta_inc(a, b, x) - y;
        if f == 0.0 {
            return x;
        }
        if f < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let pdf = beta_pdf(a, b, x);
        let newton = x - f / pdf;
        let next = if pdf > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - x).abs() <= 1e-15 * x.max(1e-300) || hi - lo <= 1e-15 * hi {
            return next;
        }
        x = next;
    }
    x
}

/// The standard normal quantile, to ~1e-9 (Acklam's rational approximation): a starting point
/// for the exact inverses, never a bound by itself.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

/// P(Binomial(n, p) <= k).
pub(crate) fn binom_cdf(k: u64, n: u64, p: f64) -> f64 {
    if k >= n || p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return 0.0;
    }
    beta_inc((n - k) as f64, k as f64 + 1.0, 1.0 - p)
}

/// P(Binomial(n, p) >= k), computed directly (no 1 - cdf cancellation in the upper tail).
pub(crate) fn binom_sf(k: u64, n: u64, p: f64) -> f64 {
    if k == 0 || p >= 1.0 {
        return if k <= n { 1.0 } else { 0.0 };
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    beta_inc(k as f64, (n - k + 1) as f64, p)
}

/// A normal-approximation start for a bound on p from k of n (z > 0 upward, < 0 downward).
#[cfg(test)]
fn cp_guess(k: u64, n: u64, z: f64) -> f64 {
    let (k, n) = (k as f64, n as f64);
    let p = (k + 0.5) / (n + 1.0);
    (p + z * (p * (1.0 - p) / n).sqrt()).clamp(1e-300, 1.0 - 1e-16)
}

/// Clopper-Pearson upper bound: the p_U with P(Binomial(n, p_U) <= k) = alpha, so the true
/// p is <= p_U with probability >= 1 - alpha (exact, one-sided). 1 when k >= n.
#[cfg(test)]
pub(crate) fn clopper_pearson_upper(k: u64, n: u64, alpha: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let z = -normal_quantile(alpha);
    beta_inc_inv(
        k as f64 + 1.0,
        (n - k) as f64,
        1.0 - alpha,
        cp_guess(k, n, z),
    )
}

/// Clopper-Pearson lower bound: the p_L with P(Binomial(n, p_L) >= k) = alpha. 0 when k = 0.
#[cfg(test)]
pub(crate) fn clopper_pearson_lower(k: u64, n: u64, alpha: f64) -> f64 {
    if k == 0 || n == 0 {
        return 0.0;
    }
    let k = k.min(n);
    let z = normal_quantile(alpha);
    beta_inc_inv(k as f64, (n - k + 1) as f64, alpha, cp_guess(k, n, z))
}

/// P(T > t) for Student's t with `df` degrees of freedom.
#[cfg(test)]
pub(crate) fn t_sf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * beta_inc(0.5 * df, 0.5, df / (df + t * t));
    if t >= 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// The p-quantile of Student's t with `df` degrees of freedom (R's `qt(p, df)`).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    // P(T > t) = (1-p) ⇔ I_x(df/2, 1/2) = 2(1-p) with x = df/(df+t²).
    let z = normal_quantile(p);
    let guess = df / (df + z * z);
    let x = beta_inc_inv(0.5 * df, 0.5, 2.0 * (1.0 - p), guess);
    (df * (1.0 - x) / x).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) {
        assert!(
            (got - want).abs() <= rel * want.abs(),
            "got {got:e}, want {want:e} (relative tolerance {rel:e})"
        );
    }

    #[test]
    fn ln_gamma_matches_factorials_and_sqrt_pi() {
        assert!(ln_gamma(1.0).abs() < 1e-14); // Γ(1) = 1
        close(ln_gamma(10.0), 362_880.0_f64.ln(), 1e-14);
        close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-14);
        // lgamma(1e8) = 1742068066.10383470... (mpmath)
        close(ln_gamma(1e8), 1_742_068_066.103_8, 1e-12);
    }

    #[test]
    fn binomial_tails_match_hand_values() {
        close(binom_cdf(3, 10, 0.5), 176.0 / 1024.0, 1e-13);
        close(binom_sf(8, 10, 0.5), 56.0 / 1024.0, 1e-13);
        close(binom_cdf(0, 100, 0.01), 0.99_f64.powi(100), 1e-12);
        close(binom_sf(1, 100, 0.01), 1.0 - 0.99_f64.powi(100), 1e-12);
        // pbinom(9, 1000, 0.01) = 0.45730059217... (mpmath, 40 digits, summing the pmf)
        close(binom_cdf(9, 1000, 0.01), 0.457_300_592_174_890_8, 1e-10);
        assert_eq!(binom_cdf(10, 10, 0.3), 1.0);
        assert_eq!(binom_sf(0, 10, 0.3), 1.0);
        assert_eq!(binom_sf(11, 10, 0.3), 0.0);
    }

    #[test]
    fn clopper_pearson_matches_closed_forms_and_r() {
        // k = 0: 1 - alpha^(1/n); k = n: alpha^(1/n) (closed forms).
        close(
            clopper_pearson_upper(0, 100, 0.05),
            1.0 - 0.05_f64.powf(0.01),
            1e-10,
        );
        close(
            clopper_pearson_lower(50, 50, 0.01),
            0.01_f64.powf(1.0 / 50.0),
            1e-10,
        );
        // R: binom.test(5, 20)$conf.int = 0.08657147 0.49104587 (two-sided 95 %).
        close(clopper_pearson_lower(5, 20, 0.025), 0.086_571_47, 1e-6);
        close(clopper_pearson_upper(5, 20, 0.025), 0.491_045_87, 1e-6);
    }

    #[test]
    fn t_quantiles_match_r() {
        close(t_quantile(0.999, 9.0), 4.296_806, 1e-6); // qt(0.999, 9)
        close(t_quantile(0.975, 10.0), 2.228_139, 1e-6); // qt(0.975, 10)
        close(t_quantile(0.995, 29.0), 2.756_386, 1e-6); // qt(0.995, 29)
        close(t_quantile(0.025, 10.0), -2.228_139, 1e-6);
        close(t_sf(4.296_806, 9.0), 0.001, 1e-5);
    }

    #[test]
    fn large_n_is_accurate_and_fast() {
        // mpmath (40 digits, summing the pmf): P(Binomial(10^8, 0.01) <= 999_000).
        let p = binom_cdf(999_000, 100_000_000, 0.01);
        close(p, LARGE_N_CDF, 1e-6);
        // A look evaluates two such tails; far under a millisecond even in a debug build.
        let ub = clopper_pearson_upper(999_000, 100_000_000, 1e-6);
        assert!(ub > 0.00999 && ub < 0.0101, "{ub}");
        assert!((binom_cdf(999_000, 100_000_000, ub) - 1e-6).abs() < 1e-12);
    }

    const LARGE_N_CDF: f64 = 0.157_559_964_112_262_7;
}
