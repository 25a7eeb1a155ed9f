//! Tests only: a deterministic generator (splitmix64) and the distributions the tests draw.

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for simulations.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1): never exactly 0, so logs and negative powers stay finite.
    pub(super) fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller; one of the pair is enough here).
    pub(super) fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// Poisson(mean) by a normal approximation for large means, exact inversion below 30.
    pub(super) fn poisson(&mut self, mean: f64) -> u64 {
        if mean >= 30.0 {
            return (mean + mean.sqrt() * self.normal()).round().max(0.0) as u64;
        }
        let (mut k, mut p, mut cdf, u) = (0u64, (-mean).exp(), 0.0, self.uniform());
        loop {
            cdf += p;
            if u <= cdf || k > 1000 {
                return k;
            }
            k += 1;
            p *= mean / k as f64;
        }
    }
}

/// A latency distribution, scaled so that its 0.99-quantile is `p99`.
#[derive(Clone, Copy)]
pub(super) enum Latency {
    /// Lognormal with log-sd `sigma`.
    LogNormal { p99: f64, sigma: f64 },
    /// Pareto with tail index `shape` (infinite variance below 2).
    Pareto { p99: f64, shape: f64 },
}

/// z such that P(N(0,1) <= z) = 0.99.
const Z99: f64 = 2.326_347_874_040_841;

impl Latency {
    pub(super) fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Latency::LogNormal { p99, sigma } => p99 * (sigma * (rng.normal() - Z99)).exp(),
            // P(X > x) = (xm/x)^shape; P(X > p99) = 0.01 gives xm = p99·0.01^(1/shape).
            Latency::Pareto { p99, shape } => {
                p99 * 0.01_f64.powf(1.0 / shape) * rng.uniform().powf(-1.0 / shape)
            }
        }
    }

    /// The same distribution slowed down by `factor`.
    pub(super) fn scaled(&self, factor: f64) -> Latency {
        match *self {
            Latency::LogNormal { p99, sigma } => Latency::LogNormal {
                p99: p99 * factor,
                sigma,
            },
            Latency::Pareto { p99, shape } => Latency::Pareto {
                p99: p99 * factor,
                shape,
            },
        }
    }
}
