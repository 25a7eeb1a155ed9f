//! Skewed offset distributions (fio's `random_distribution=zipf:θ|pareto:h|normal:dev|zoned`):
//! draw a popularity rank, then hash the rank onto a block so hot blocks are spread over the file
//! as in fio (which hashes zipf, pareto and normal alike); zones pick a slice of the region.

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

/// fio's `normal:dev` (lib/gauss.c): the mean of 12 uniform draws over [0, n] (an
/// approximately normal value around n/2 with a deviation of n/12), plus a uniform jitter
/// `dev` percent of n wide. Like fio, the value is then hashed onto a block.
#[derive(Debug, Clone)]
pub(crate) struct Gauss {
    n: u64,
    stddev: u64,
}

impl Gauss {
    pub(crate) fn new(n: u64, dev: f64) -> Self {
        let n = n.max(1);
        let stddev = if dev != 0.0 {
            ((n as f64 * dev) / 100.0).ceil() as u64
        } else {
            0
        };
        Gauss {
            n,
            stddev: stddev.min(n / 2),
        }
    }

    /// A value in [0, n): most draws near n/2.
    #[inline]
    pub(crate) fn rank(&self, rng: &mut Rng) -> u64 {
        const ITERS: u64 = 12;
        let mut sum = 0;
        for _ in 0..ITERS {
            sum += rng.below(self.n + 1);
        }
        let mut sum = sum.div_ceil(ITERS);
        if self.stddev != 0 {
            let mut dev = rng.below(self.stddev) as i64 - (self.stddev / 2) as i64;
            while sum as i64 + dev >= self.n as i64 {
                dev /= 2;
            }
            sum = (sum as i64 + dev).max(0) as u64;
        }
        sum.min(self.n - 1)
    }
}

/// fio's zoned distributions: a draw v in 1..=100 picks the zone that owns it (each zone owns as
/// many values as its access percentage, in the order written); the block is uniform inside it.
#[derive(Debug, Clone)]
pub(crate) struct Zoned {
    /// For each v-1: the zone's first block and its number of blocks.
    slots: Box<[(u64, u64)]>,
}

impl Zoned {
    /// `zones` as (access %, size): size in percent of `n` blocks, or with `abs` in bytes
    /// (converted with `unit`). Zones past the region are cut at its end (fio stops the job
    /// with "zoned_abs sizes exceed file size").
    pub(crate) fn new(zones: &[crate::model::Zone], n: u64, abs: bool, unit: u64) -> Self {
        let mut slots = Vec::with_capacity(100);
        let mut prev = 0u64;
        for z in zones {
            let end = prev + z.size;
            let (first, last) = if abs {
                (prev / unit.max(1), end / unit.max(1))
            } else {
                (prev * n / 100, n * end / 100)
            };
            let first = first.min(n.saturating_sub(1));
            let last = last.min(n).max(first);
            for _ in 0..z.access {
                slots.push((first, last - first));
            }
            prev = end;
        }
        slots.resize(100, (0, n));
        Zoned {
            slots: slots.into_boxed_slice(),
        }
    }

    /// A block index in [0, n).
    #[inline]
    pub(crate) fn block(&self, rng: &mut Rng) -> u64 {
        let (first, len) = self.slots[rng.below(100) as usize];
        first + rng.below(len.max(1))
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
    fn gauss_concentrates_on_few_values_around_the_middle() {
        // Before hashing, normal:0 is the mean of 12 uniforms: deviation n/12, so about 68 %
        // of the draws fall within n/12 of n/2 and nearly all within 3·n/12.
        let n = 12_000;
        let g = Gauss::new(n, 0.0);
        let mut rng = Rng::new(9);
        let v: Vec<u64> = (0..50_000).map(|_| g.rank(&mut rng)).collect();
        assert!(v.iter().all(|&x| x < n));
        let within = |d: u64| v.iter().filter(|&&x| x.abs_diff(n / 2) <= d).count() as f64 / 5e4;
        assert!((within(1000) - 0.68).abs() < 0.03, "{}", within(1000));
        assert!(within(3000) > 0.99);
        // A deviation of 40 % widens it.
        let g = Gauss::new(n, 40.0);
        let w: Vec<u64> = (0..50_000).map(|_| g.rank(&mut rng)).collect();
        let wide = w.iter().filter(|&&x| x.abs_diff(n / 2) <= 1000).count() as f64 / 5e4;
        assert!(wide < 0.5, "{wide}");
    }

    #[test]
    fn zoned_shares_land_in_their_zones() {
        use crate::model::Zone;
        let zones = [
            Zone {
                access: 60,
                size: 10,
            },
            Zone {
                access: 30,
                size: 20,
            },
            Zone {
                access: 8,
                size: 30,
            },
            Zone {
                access: 2,
                size: 40,
            },
        ];
        let n = 1000;
        let z = Zoned::new(&zones, n, false, 1);
        let mut rng = Rng::new(11);
        let mut hits = [0u32; 4];
        for _ in 0..100_000 {
            let b = z.block(&mut rng);
            let zi = match b {
                0..=99 => 0,
                100..=299 => 1,
                300..=599 => 2,
                600..=999 => 3,
                _ => panic!("{b}"),
            };
            hits[zi] += 1;
        }
        for (h, want) in hits.iter().zip([0.60, 0.30, 0.08, 0.02]) {
            assert!((*h as f64 / 1e5 - want).abs() < 0.01, "{hits:?}");
        }
        // zoned_abs: 1 MiB then 3 MiB of a 4 MiB region of 4 KiB blocks.
        let zones = [
            Zone {
                access: 75,
                size: 1 << 20,
            },
            Zone {
                access: 25,
                size: 3 << 20,
            },
        ];
        let z = Zoned::new(&zones, 1024, true, 4096);
        let first = (0..40_000).filter(|_| z.block(&mut rng) < 256).count() as f64 / 4e4;
        assert!((first - 0.75).abs() < 0.015, "{first}");
    }

    #[test]
    fn rank_to_block_stays_in_range() {
        for r in 0..1000 {
            assert!(rank_to_block(r, 37, 5) < 37);
        }
    }
}
