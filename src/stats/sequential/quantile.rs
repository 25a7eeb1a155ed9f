//! A percentile against a threshold from exceedance counts, and order-statistic ranks for the
//! bound stated at the end. Both rest only on "k of n independent samples exceed x is
//! Binomial(n, P(X > x))", which holds for any distribution.

use super::risk::{LookClock, Risk, Side};
use super::tails::{binom_cdf, binom_sf, normal_quantile};

/// A percentile (`q`, e.g. 0.99) against one threshold, from exceedance counts with exact
/// Clopper-Pearson tests at each counted look.
#[derive(Debug, Clone)]
pub(crate) struct QuantileRule {
    q: f64,
    low: f64,
    high: f64,
    clock: LookClock,
    side: Side,
}

impl QuantileRule {
    pub(crate) fn new(q: f64, threshold: f64, risk: Risk) -> Self {
        QuantileRule {
            q,
            low: threshold * (1.0 - risk.margin),
            high: threshold * (1.0 + risk.margin),
            clock: LookClock::new(risk),
            side: Side::Undecided,
        }
    }

    /// The two values whose exceedances the caller counts: (threshold·(1-margin),
    /// threshold·(1+margin)).
    pub(crate) fn edges(&self) -> (f64, f64) {
        (self.low, self.high)
    }

    /// One look: `n` samples so far, `above_low` of which MAY exceed the low edge (a bucket
    /// straddling the edge counted as above) and `above_high` SURELY exceed the high edge.
    /// Counting more exceedances than are real can only delay Below, fewer only delay Above.
    ///
    /// Below when the (1 - alpha_per_look/2) Clopper-Pearson upper bound on P(X > low) is below
    /// 1-q, i.e. P(Binomial(n, 1-q) <= above_low) < alpha_per_look/2; Above symmetrically with
    /// the lower bound on P(X > high). One or two binomial tails per counted look; nothing else.
    pub(crate) fn look(&mut self, progress: u64, n: u64, above_low: u64, above_high: u64) -> Side {
        if self.side != Side::Undecided || !self.clock.count(progress) || n == 0 {
            return self.side;
        }
        // Inside the margin both decisions are wrong: each side gets half the look's risk, as
        // the rate rule's two tails do.
        let alpha = self.clock.alpha_per_look() / 2.0;
        let p0 = 1.0 - self.q;
        if binom_cdf(above_low.min(n), n, p0) < alpha {
            self.side = Side::Below;
        } else if binom_sf(above_high.min(n), n, p0) < alpha {
            self.side = Side::Above;
        }
        self.side
    }

    /// Looks counted so far.
    pub(crate) fn looks(&self) -> u32 {
        self.clock.looks()
    }

    /// Takes back the decision of the look just made (the caller's own check vetoed it): only
    /// a later counted look, with its own share of the risk, can decide again.
    pub(crate) fn undecide(&mut self) {
        self.side = Side::Undecided;
    }
}

/// Smallest x in [lo, hi] where `pred` holds, for a `pred` false then true, known true at hi.
/// Gallops from `guess` in steps of `step` (doubling) before bisecting: a few dozen calls.
fn first_true(lo: u64, hi: u64, guess: u64, step: u64, pred: impl Fn(u64) -> bool) -> u64 {
    let guess = guess.clamp(lo, hi);
    let mut step = step.max(1);
    // Invariant after galloping: pred(a) is false or a = lo - 1 (virtual), pred(b) is true.
    let (mut a, mut b);
    if pred(guess) {
        b = guess;
        loop {
            let next = b.saturating_sub(step).max(lo);
            if next == b {
                return b;
            }
            if pred(next) {
                b = next;
                step = step.saturating_mul(2);
            } else {
                a = next;
                break;
            }
        }
    } else {
        a = guess;
        loop {
            let next = a.saturating_add(step).min(hi);
            if pred(next) {
                b = next;
                break;
            }
            a = next;
            step = step.saturating_mul(2);
        }
    }
    while b - a > 1 {
        let mid = a + (b - a) / 2;
        if pred(mid) {
            b = mid;
        } else {
            a = mid;
        }
    }
    b
}

/// A normal-approximation guess for the rank of the q-quantile at z standard deviations, and
/// one standard deviation (in ranks) to gallop with.
fn rank_guess(n: u64, q: f64, z: f64) -> (u64, u64) {
    let (nf, sd) = (n as f64, (n as f64 * q * (1.0 - q)).sqrt());
    ((nf * q + z * sd).max(1.0) as u64, sd.max(1.0) as u64)
}

/// The 1-based rank r such that the r-th smallest of n samples is >= the true q-quantile with
/// probability >= 1-alpha: the smallest r with P(Binomial(n, q) >= r) <= alpha. None when even
/// the largest sample is not enough (q^n > alpha), e.g. n = 100, q = 0.99, alpha = 0.001.
pub(crate) fn quantile_upper_rank(n: u64, q: f64, alpha: f64) -> Option<u64> {
    if n == 0 || binom_sf(n, n, q) > alpha {
        return None;
    }
    let (guess, sd) = rank_guess(n, q, -normal_quantile(alpha));
    Some(first_true(1, n, guess, sd, |r| binom_sf(r, n, q) <= alpha))
}

/// The 1-based rank r such that the r-th smallest of n samples is <= the true q-quantile with
/// probability >= 1-alpha: the largest r with P(Binomial(n, q) <= r-1) <= alpha. None when even
/// the smallest sample is not enough ((1-q)^n > alpha).
pub(crate) fn quantile_lower_rank(n: u64, q: f64, alpha: f64) -> Option<u64> {
    if n == 0 || binom_cdf(0, n, q) > alpha {
        return None;
    }
    if binom_cdf(n - 1, n, q) <= alpha {
        return Some(n);
    }
    let (guess, sd) = rank_guess(n, q, normal_quantile(alpha));
    // The first r whose rank r+1 would fail is the last that holds.
    Some(first_true(1, n - 1, guess, sd, |r| {
        binom_cdf(r, n, q) > alpha
    }))
}

#[cfg(test)]
#[path = "quantile_tests.rs"]
mod tests;
