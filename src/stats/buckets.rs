//! fio's coarse latency distribution (`lat (usec): 2=39.19%, 4=3.40%, …`, JSON `latency_ns`,
//! `latency_us`, `latency_ms`).
//!
//! Rule (fio 3.33 `io_u_mark_latency`, confirmed against the sample outputs): a value below
//! 1000 ns is bucketed by its ns value; below 1 ms by `ns / 1000` (truncated µs); otherwise by
//! `ns / 1_000_000` (truncated ms). Inside a unit, each label is an exclusive upper bound on the
//! truncated value: `2` holds 0–1, `4` holds 2–3, `10` holds 4–9, … `1000` holds 750–999; for ms,
//! `2000` holds 1000–1999 and `>=2000` the rest. So exactly 2 µs (2000 ns) goes to the µs `4`
//! bucket and 1999 ns to µs `2`; 1 ms exactly goes to ms `2`.
//!
//! These edges (2, 4, 10, 20, 50, 100, 250, 500, 750 in decimal units) do not fall on the
//! log-linear histogram's power-of-two bucket edges, so counting from the histogram would smear
//! I/Os across labels. The recorder therefore keeps 32 exact counters, updated with a table
//! lookup on the hot path (see [`lat_bucket_index`]).

use super::summary::LatencyBuckets;

/// 10 ns + 10 µs + 12 ms buckets.
pub(crate) const NLAT_BUCKETS: usize = 32;

/// Maps a truncated value 0..999 (in ns, µs or ms) to its bucket 0..9.
static UNIT_LUT: [u8; 1000] = build_lut();

const fn build_lut() -> [u8; 1000] {
    // Exclusive upper bounds of buckets 0..9.
    const EDGES: [u16; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut lut = [0u8; 1000];
    let mut v = 0usize;
    let mut b = 0usize;
    while v < 1000 {
        while v as u16 >= EDGES[b] {
            b += 1;
        }
        lut[v] = b as u8;
        v += 1;
    }
    lut
}

/// Bucket 0..31 of a latency: 0..9 ns labels, 10..19 µs labels, 20..31 ms labels.
/// Hot path: at most two compares, one division by a constant and one table load.
#[inline(always)]
pub(crate) fn lat_bucket_index(ns: u64) -> usize {
    if ns < 1000 {
        UNIT_LUT[ns as usize] as usize
    } else if ns < 1_000_000 {
        10 + UNIT_LUT[(ns / 1000) as usize] as usize
    } else {
        let ms = ns / 1_000_000;
        if ms < 1000 {
            20 + UNIT_LUT[ms as usize] as usize
        } else if ms < 2000 {
            30
        } else {
            31
        }
    }
}

/// Share of I/Os per bucket, as a percentage of the total count over all given recorders
/// (pass read/write/trim clat, as fio does). fio's display floor is applied: a non-empty bucket
/// whose share rounds below 0.01 % reports 0.01 (fio's `stat_calc_lat`; visible in its JSON).
/// fio's latency bucket percentages from per-recorder bucket counts
/// (`LatRecorder::lat_bucket_counts`).
pub(crate) fn latency_buckets(recs: &[&[u64; NLAT_BUCKETS]]) -> LatencyBuckets {
    let mut counts = [0u64; NLAT_BUCKETS];
    for r in recs {
        for (c, v) in counts.iter_mut().zip(r.iter()) {
            *c += *v;
        }
    }
    let total: u64 = counts.iter().sum();
    let pct = |c: u64| -> f64 {
        if total == 0 || c == 0 {
            return 0.0;
        }
        let p = 100.0 * c as f64 / total as f64;
        if p < 0.01 {
            0.01
        } else {
            p
        }
    };
    let mut out = LatencyBuckets::default();
    for i in 0..10 {
        out.ns[i] = pct(counts[i]);
        out.us[i] = pct(counts[10 + i]);
    }
    for i in 0..12 {
        out.ms[i] = pct(counts[20 + i]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LatRecorder;

    #[test]
    fn edges_follow_fio() {
        // ns
        assert_eq!(lat_bucket_index(0), 0);
        assert_eq!(lat_bucket_index(1), 0);
        assert_eq!(lat_bucket_index(2), 1);
        assert_eq!(lat_bucket_index(9), 2);
        assert_eq!(lat_bucket_index(10), 3);
        assert_eq!(lat_bucket_index(749), 8);
        assert_eq!(lat_bucket_index(750), 9);
        assert_eq!(lat_bucket_index(999), 9);
        // µs: 1000..1999 ns → "2", exactly 2 µs → "4"
        assert_eq!(lat_bucket_index(1000), 10);
        assert_eq!(lat_bucket_index(1999), 10);
        assert_eq!(lat_bucket_index(2000), 11);
        assert_eq!(lat_bucket_index(99_999), 15);
        assert_eq!(lat_bucket_index(100_000), 16);
        assert_eq!(lat_bucket_index(999_999), 19);
        // ms
        assert_eq!(lat_bucket_index(1_000_000), 20);
        assert_eq!(lat_bucket_index(1_999_999), 20);
        assert_eq!(lat_bucket_index(2_000_000), 21);
        assert_eq!(lat_bucket_index(999_999_999), 29);
        assert_eq!(lat_bucket_index(1_000_000_000), 30);
        assert_eq!(lat_bucket_index(1_999_999_999), 30);
        assert_eq!(lat_bucket_index(2_000_000_000), 31);
        assert_eq!(lat_bucket_index(u64::MAX), 31);
    }

    #[test]
    fn percentages_over_several_recorders() {
        let mut r = LatRecorder::new(16);
        let mut w = LatRecorder::new(16);
        r.record(1500); // µs "2"
        r.record(2000); // µs "4"
        w.record(60_000); // µs "100"
        w.record(3_000_000); // ms "4"
        let b = latency_buckets(&[r.lat_bucket_counts(), w.lat_bucket_counts()]);
        assert_eq!(b.us[0], 25.0);
        assert_eq!(b.us[1], 25.0);
        assert_eq!(b.us[5], 25.0);
        assert_eq!(b.ms[1], 25.0);
        let sum: f64 = b.ns.iter().chain(b.us.iter()).chain(b.ms.iter()).sum();
        assert!((sum - 100.0).abs() < 1e-9);
        assert_eq!(latency_buckets(&[]), LatencyBuckets::default());
    }

    #[test]
    fn tiny_share_floors_at_001() {
        let mut r = LatRecorder::new(0);
        for _ in 0..100_000 {
            r.record(300_000);
        }
        r.record(5_000_000_000);
        let b = latency_buckets(&[r.lat_bucket_counts()]);
        assert_eq!(b.ms[11], 0.01);
    }
}
