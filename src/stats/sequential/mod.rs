//! Sequential verdicts (issue 27): decide, while a profile runs, on which side of a threshold a
//! metric's true value lies, at a stated risk, so the run can stop early. Pure math: the monitor
//! thread feeds counts every 100 ms; nothing here reads clocks or allocates per call (except
//! where a function says so).
//!
//! **Looks.** A rule may be asked as often as the caller likes, but it *counts* a look (and
//! spends alpha on it) only at the floor, then each time progress has grown by `growth`, and
//! once at the full length: at most [`Risk::max_looks`] looks. Each counted look spends
//! `alpha / max_looks` (Bonferroni), which bounds the chance of any wrong decision by `alpha`
//! whatever the dependence between looks. Decisions are sticky.
//!
//! **Indifference margin.** A rule decides Below only if its bound lies below
//! `threshold·(1-margin)`, Above only if above `threshold·(1+margin)`: a true value within the
//! margin can never be decided (except with probability <= alpha) and runs the full recipe.
//!
//! **Percentiles** ([`QuantileRule`]): the q-quantile is <= x exactly when P(X > x) <= 1-q, and
//! the number of samples above x is Binomial(n, P(X > x)) for *any* distribution of
//! independent samples. So exact binomial (Clopper-Pearson) tests on two exceedance counts
//! decide without assuming a shape: heavy tails only change the counts, not the validity.
//! Histogram buckets straddling an edge are counted against the decision they could favour.
//!
//! **Rates** ([`RateRule`]): per-slice counts (100 ms) are autocorrelated, so they are grouped
//! into b = 10..30 batches of consecutive slices; batch means of long enough batches are close
//! to independent and normal (a central limit over each batch), so a Student-t interval with
//! b-1 degrees of freedom applies. This assumes a stationary rate whose correlations die out
//! within a batch. Guards: the batch means' lag-1 autocorrelation must be <= 0.5; the latest
//! half of the batches must agree with the decision (no trend); and, since ten batches judge
//! their own correlation poorly, an AR(1) fitted to the slices (many more points) must find a
//! batch at least one correlation time (1+r)/(1-r) long, and widens the standard error by the
//! variance the batches miss. What no statistic of a window can see is a correlation time
//! longer than the window: the floor must span several of them (see the rate tests: with AR(1)
//! phi 0.9 and a 20 % sd, a 3 s floor gave 4 wrong decisions in 600 runs, 10 s gave 1).
//!
//! One file per concept: `risk` (Side, Risk, look counting), `tails` (binomial, beta, t),
//! `quantile` (percentile rule and order-statistic ranks), `rate` (batch means).

mod quantile;
mod rate;
mod risk;
pub(crate) mod tails;
#[cfg(test)]
mod test_rng;

pub(crate) use quantile::{quantile_lower_rank, quantile_upper_rank, QuantileRule};
pub(crate) use rate::RateRule;
pub(crate) use risk::{Risk, Side};
