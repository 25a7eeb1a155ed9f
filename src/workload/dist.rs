//! Skewed offset distributions (fio's `random_distribution=zipf:θ|pareto:h`): draw a popularity
//! rank, then hash the rank onto a block so hot blocks are spread over the file as in fio.

use super::rng::Rng;

/// Ranks above this share one zeta tail estimate, which keeps set-up O(1) for huge files
/// (fio likewise caps its zeta computation).
const ZETA_EXACT_LIMIT: u64 = 10_000_000;

#[derive(Debug, Clone)]
pub(crate) struct Zipf {
    n: u64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    half_pow_theta: f64,
}

fn zeta(n: u64, theta: f64) -> f64 {
    let exact = n.min(ZETA_EXACT_LIMIT);
    let mut sum = 0.0;
    for i in 1..=exact {
        sum += 1.0 / (i as f64).powf(theta);
    }
    if n > exact {
        // Integral approximation of the remaining terms.
        let a = exact as f64;
        let b = n as f64;
        if (theta - 1.0).abs() < 1e-12 {
            sum += (b / a).ln();
        } else {
            sum += (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
        }
    }
    sum
}

impl Zipf {
    /// `theta` > 0 and != 1 (fio rejects 1.0).
    pub(crate) fn new(n: u64, theta: f64) -> Self {
        let n = n.max(1);
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2.min(n), theta);
        let alpha = 1.0 / (1.0 - theta);
        let eta = if n > 1 {
            (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan)
        } else {
            1.0
        };
        Zipf {
            n,
            alpha,
            zetan,
            eta,
            half_pow_theta: 0.5f64.powf(theta),
        }
    }

    /// Rank in [0, n): 0 is the most popular (Gray et al.'s generator).
    #[inline]
    pub(crate) fn rank(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + self.half_pow_theta {
            return 1.min(self.n - 1);
        }
        let v = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.n - 1)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Pareto {
    n: u64,
    pow: f64,
}

impl Pareto {
    /// `h` in (0, 1): the "80/20" shape parameter, as fio's pareto:h.
    pub(crate) fn new(n: u64, h: f64) -> Self {
        Pareto {
            n: n.max(1),
            pow: h.ln() / (1.0 - h).ln(),
        }
    }

    #[inline]
    pub(crate) fn rank(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit_f64();
        (((self.n - 1) as f64) * u.powf(self.pow)) as u64
    }
}

/// Spread ranks over blocks so that popular blocks are not all at the start of the file.
#[inline]
pub(crate) fn rank_to_block(rank: u64, n: u64, salt: u64) -> u64 {
    let mut z = rank.wrapping_add(salt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^= z >> 32;
    z % n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share_of_top(ranks: &[u64], n: u64, top_frac: f64) -> f64 {
        let cut = ((n as f64) * top_frac).ceil() as u64;
        ranks.iter().filter(|&&r| r < cut).count() as f64 / ranks.len() as f64
    }

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let n = 100_000;
        let z = Zipf::new(n, 1.2);
        let mut rng = Rng::new(3);
        let ranks: Vec<u64> = (0..100_000).map(|_| z.rank(&mut rng)).collect();
        assert!(ranks.iter().all(|&r| r < n));
        // zipf:1.2 puts most of the accesses on the top 1 % of blocks.
        let top = share_of_top(&ranks, n, 0.01);
        assert!(top > 0.6, "top 1% got {top}");
    }

    #[test]
    fn pareto_is_skewed_and_in_range() {
        let n = 100_000;
        let p = Pareto::new(n, 0.2);
        let mut rng = Rng::new(3);
        let ranks: Vec<u64> = (0..100_000).map(|_| p.rank(&mut rng)).collect();
        assert!(ranks.iter().all(|&r| r < n));
        let top = share_of_top(&ranks, n, 0.2);
        assert!(top > 0.6, "top 20% got {top}");
    }

    #[test]
    fn rank_to_block_stays_in_range() {
        for r in 0..1000 {
            assert!(rank_to_block(r, 37, 5) < 37);
        }
    }
}
