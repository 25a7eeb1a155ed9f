//! Reading `iogauge.lat_intervals` (the per-interval latency histograms in fio's JSON) back, and
//! fio's percentile rule on a histogram: what the HTML report's p50/p99-over-time chart and
//! `compare`'s block bootstrap both need.

use crate::stats::latency::fio_rank;
use serde_json::Value;

/// One section's interval histograms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LatIntervals {
    /// The interval actually used (100 ms, doubled on long runs).
    pub interval_ms: u64,
    /// `clat` or `lat`.
    pub latency: String,
    /// Per interval: its end (ms from the measured start) and its histogram, (value ns, count)
    /// in ascending value.
    pub intervals: Vec<(f64, Vec<(f64, u64)>)>,
}

/// A section's (`read`, `write`, `sync`, …) `iogauge.lat_intervals`, None when absent.
pub(crate) fn read_lat_intervals(section: &Value) -> Option<LatIntervals> {
    let li = section.get("iogauge")?.get("lat_intervals")?;
    let intervals = li
        .get("intervals")?
        .as_array()?
        .iter()
        .filter_map(|iv| {
            let end = iv.get(0)?.as_f64()?;
            let mut h: Vec<(f64, u64)> = iv
                .get(1)?
                .as_array()?
                .iter()
                .filter_map(|b| Some((b.get(0)?.as_f64()?, b.get(1)?.as_u64()?)))
                .collect();
            h.sort_by(|a, b| a.0.total_cmp(&b.0));
            Some((end, h))
        })
        .collect();
    Some(LatIntervals {
        interval_ms: li.get("interval_ms")?.as_u64()?,
        latency: li
            .get("latency")
            .and_then(Value::as_str)
            .unwrap_or("clat")
            .to_string(),
        intervals,
    })
}

/// fio's rule on a histogram given as (value, count) in ascending value with `total` counts:
/// the value holding the rank [`fio_rank`] gives, the one rule of every percentile iogauge
/// reports (`stats::latency`). None when empty.
pub(crate) fn percentile(
    hist: impl IntoIterator<Item = (f64, u64)>,
    total: u64,
    p: f64,
) -> Option<f64> {
    if total == 0 {
        return None;
    }
    let need = fio_rank(p, total);
    let mut seen = 0;
    let mut last = None;
    for (v, c) in hist {
        seen += c;
        last = Some(v);
        if seen >= need {
            return Some(v);
        }
    }
    last
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn the_smallest_value_covering_p() {
        let h = [(1000.0, 50), (2000.0, 49), (90000.0, 1)];
        assert_eq!(percentile(h, 100, 50.0), Some(1000.0));
        assert_eq!(percentile(h, 100, 99.0), Some(2000.0));
        assert_eq!(percentile(h, 100, 99.5), Some(90000.0));
        assert_eq!(percentile([], 0, 50.0), None);
    }

    /// At the boundary ranks of n distinct values 1..=n: nothing to rank gives None; p0 is rank
    /// 1; p99.9 is rank n of 1000 (the binary 99.9 is a little above it: fio's rule) but rank
    /// n − 1 of 1001; p100 is rank n; with one value every p is rank 1.
    #[test]
    fn boundary_ranks() {
        let h = || (1..=1000u64).map(|v| (v as f64, 1));
        assert_eq!(percentile(h(), 0, 50.0), None);
        assert_eq!(percentile(h(), 1000, 0.0), Some(1.0));
        assert_eq!(percentile(h(), 1000, 50.0), Some(500.0));
        assert_eq!(percentile(h(), 1000, 99.0), Some(990.0));
        assert_eq!(percentile(h(), 1000, 99.5), Some(995.0));
        assert_eq!(percentile(h(), 1000, 99.9), Some(1000.0));
        assert_eq!(percentile(h(), 1000, 100.0), Some(1000.0));
        let h1001 = || (1..=1001u64).map(|v| (v as f64, 1));
        assert_eq!(percentile(h1001(), 1001, 99.9), Some(1000.0));
        assert_eq!(percentile(h1001(), 1001, 100.0), Some(1001.0));
        for p in [0.0, 50.0, 99.0, 99.9, 100.0] {
            assert_eq!(percentile([(7.0, 1)], 1, p), Some(7.0));
        }
    }

    /// The rank is the recorder's (`fio_rank`): p99.9 of 1,000 counts is the 1,000th, p99.9 of
    /// 1,001 the 1,000th too, p50 of 1,001 the 501st.
    #[test]
    fn the_same_rank_as_the_recorders() {
        let h = [(1.0, 499), (2.0, 1), (3.0, 499), (4.0, 1), (5.0, 1)];
        assert_eq!(percentile(h[..4].iter().copied(), 1000, 99.9), Some(4.0));
        assert_eq!(percentile(h[..4].iter().copied(), 1000, 99.0), Some(3.0));
        assert_eq!(percentile(h[..4].iter().copied(), 1000, 50.0), Some(2.0));
        assert_eq!(percentile(h[..4].iter().copied(), 1000, 100.0), Some(4.0));
        assert_eq!(percentile(h, 1001, 99.9), Some(4.0));
        assert_eq!(percentile(h, 1001, 50.0), Some(3.0));
        assert_eq!(percentile(h, 1001, 100.0), Some(5.0));
        assert_eq!(percentile([(7.0, 1)], 1, 99.9), Some(7.0));
    }

    /// The two rules that once differed (the recorder's p99.9 of 1,000 samples was the 999th,
    /// this one's the 1,000th; p30 of 100,000 the other way round) agree on every percentile.
    #[test]
    fn a_histogram_and_the_recorder_agree() {
        use crate::stats::LatRecorder;
        let pcts = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.95, 99.99, 100.0,
        ];
        for n in [1u64, 2, 3, 999, 1000, 1001, 10_000, 100_000] {
            let mut r = LatRecorder::new(n as usize);
            (1..=n).for_each(|v| r.record(v));
            let s = r.summary(&pcts, true, false);
            let hist: Vec<(f64, u64)> = (1..=n).map(|v| (v as f64, 1)).collect();
            for (p, v) in s.percentiles {
                assert_eq!(
                    percentile(hist.iter().copied(), n, p),
                    Some(v as f64),
                    "p{p} of {n}"
                );
            }
        }
    }

    #[test]
    fn intervals_read_back_sorted() {
        let s = json!({"iogauge": {"lat_intervals": {"interval_ms": 200, "latency": "lat",
            "intervals": [[200, [[5000, 1], [1000, 3]]], [400, []]]}}});
        let li = read_lat_intervals(&s).unwrap();
        assert_eq!((li.interval_ms, li.latency.as_str()), (200, "lat"));
        assert_eq!(li.intervals[0], (200.0, vec![(1000.0, 3), (5000.0, 1)]));
        assert!(li.intervals[1].1.is_empty());
        assert!(read_lat_intervals(&json!({"iogauge": {}})).is_none());
    }
}
