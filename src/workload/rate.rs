//! Rate pacing on an absolute schedule: the k-th I/O is due at start + k·interval, so sleeping
//! late never accumulates drift (fio's rate_process=linear); or, with rate_process=poisson, at
//! start + the sum of k exponential gaps of the same mean (a Poisson process, seeded).

use crate::model::timing::RateProcess;

/// Per-direction pacer. `interval_ns == 0` means unlimited.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacer {
    interval_ns: u64,
    start_ns: u64,
    issued: u64,
    /// Poisson: the generator's state (0 = linear) and the sum of the gaps so far.
    poisson: u64,
    offset_ns: u64,
}

impl Pacer {
    /// From `rate_iops` and `rate` (bytes/s) for one direction with block size `bs`;
    /// the stricter limit wins.
    pub(crate) fn new(rate_iops: Option<u64>, rate_bytes: Option<u64>, bs: u64) -> Self {
        let by_iops = rate_iops.filter(|&r| r > 0).map(|r| 1_000_000_000 / r);
        let by_bytes = rate_bytes
            .filter(|&r| r > 0)
            .map(|r| (bs as u128 * 1_000_000_000 / r as u128) as u64);
        let interval_ns = match (by_iops, by_bytes) {
            (Some(a), Some(b)) => a.max(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => 0,
        };
        Pacer {
            interval_ns,
            start_ns: 0,
            issued: 0,
            poisson: 0,
            offset_ns: 0,
        }
    }

    /// With `RateProcess::Poisson`, gaps are exponential with the same mean, drawn from `seed`
    /// (the same sequence every run with the same seed).
    pub(crate) fn with_process(mut self, process: RateProcess, seed: u64) -> Self {
        if process == RateProcess::Poisson {
            self.poisson = seed | 1;
        }
        self
    }

    /// Moves the schedule `ns` later: the time a thinktime took is not caught up afterwards
    /// (fio's rate_ignore_thinktime).
    pub(crate) fn delay(&mut self, ns: u64) {
        self.start_ns += ns;
    }

    pub(crate) fn is_limited(&self) -> bool {
        self.interval_ns != 0
    }

    /// Restart the schedule at `now_ns` (job start, end of ramp).
    pub(crate) fn restart(&mut self, now_ns: u64) {
        self.start_ns = now_ns;
        self.issued = 0;
        self.offset_ns = 0;
    }

    /// When the next I/O is due; callers sleep until then. Counts the I/O as issued.
    #[inline]
    pub(crate) fn next_due(&mut self) -> u64 {
        if self.poisson != 0 {
            let due = self.start_ns + self.offset_ns;
            self.offset_ns += self.exp_gap();
            return due;
        }
        let due = self.start_ns + self.issued * self.interval_ns;
        self.issued += 1;
        due
    }

    /// An exponential gap of mean `interval_ns` (splitmix64 for u in (0, 1]; -ln u · mean, as
    /// fio's usec_for_io).
    fn exp_gap(&mut self) -> u64 {
        self.poisson = self.poisson.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.poisson;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let u = ((z >> 11) + 1) as f64 / (1u64 << 53) as f64;
        (-u.ln() * self.interval_ns as f64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_absolute() {
        let mut p = Pacer::new(Some(100), None, 4096);
        p.restart(1_000);
        assert_eq!(p.next_due(), 1_000);
        assert_eq!(p.next_due(), 1_000 + 10_000_000);
        assert_eq!(p.next_due(), 1_000 + 20_000_000);
    }

    #[test]
    fn poisson_gaps_have_the_mean_and_a_cv_near_one() {
        let mut p = Pacer::new(Some(1000), None, 4096).with_process(RateProcess::Poisson, 7);
        p.restart(0);
        let n = 20_000;
        let dues: Vec<u64> = (0..=n).map(|_| p.next_due()).collect();
        assert_eq!(dues[0], 0);
        let gaps: Vec<f64> = dues.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        let cv = var.sqrt() / mean;
        assert!((mean - 1e6).abs() < 0.03e6, "mean {mean}");
        assert!((cv - 1.0).abs() < 0.05, "cv {cv}");
        // Seeded: the same schedule again.
        let mut q = Pacer::new(Some(1000), None, 4096).with_process(RateProcess::Poisson, 7);
        q.restart(0);
        assert!((0..=n).all(|i| q.next_due() == dues[i]));
    }

    #[test]
    fn delay_moves_the_schedule() {
        let mut p = Pacer::new(Some(100), None, 4096);
        p.restart(0);
        p.next_due();
        p.delay(5);
        assert_eq!(p.next_due(), 10_000_005);
    }

    #[test]
    fn stricter_limit_wins() {
        // 1000 IOPS or 1 MiB/s of 4 KiB blocks (256 IOPS): the byte rate is stricter.
        let p = Pacer::new(Some(1000), Some(1 << 20), 4096);
        assert_eq!(p.interval_ns, 1_000_000_000 / 256);
    }
}
