//! Rate pacing on an absolute schedule: the k-th I/O is due at start + k·interval, so sleeping
//! late never accumulates drift (fio's rate_process=linear).

/// Per-direction pacer. `interval_ns == 0` means unlimited.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacer {
    interval_ns: u64,
    start_ns: u64,
    issued: u64,
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
        }
    }

    pub(crate) fn is_limited(&self) -> bool {
        self.interval_ns != 0
    }

    /// Restart the schedule at `now_ns` (job start, end of ramp).
    pub(crate) fn restart(&mut self, now_ns: u64) {
        self.start_ns = now_ns;
        self.issued = 0;
    }

    /// When the next I/O is due; callers sleep until then. Counts the I/O as issued.
    #[inline]
    pub(crate) fn next_due(&mut self) -> u64 {
        let due = self.start_ns + self.issued * self.interval_ns;
        self.issued += 1;
        due
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
    fn stricter_limit_wins() {
        // 1000 IOPS or 1 MiB/s of 4 KiB blocks (256 IOPS): the byte rate is stricter.
        let p = Pacer::new(Some(1000), Some(1 << 20), 4096);
        assert_eq!(p.interval_ns, 1_000_000_000 / 256);
    }
}
