//! How long the next I/O is in one direction: one size (`bs`), a range (`bsrange`) or shares of
//! sizes (`bssplit`), drawn as fio 3.33's `get_next_buflen` draws them, so that it fits in what
//! is left of the I/O region after its offset.

use super::rng::Rng;
use crate::model::{BsSplit, JobSpec};

/// fio draws sizes from a 32-bit generator (`FRAND32_MAX`); the same scale keeps its integer
/// arithmetic for the split shares.
const FRAND_MAX: u64 = u32::MAX as u64;

/// Draws before the fallback: fio retries until a size fits, which always ends (the minimum
/// fits), but a split whose fitting sizes have tiny shares could take long.
const MAX_TRIES: u32 = 64;

/// Block sizes of one direction.
#[derive(Debug, Clone)]
pub(crate) struct BlockSizer {
    min: u64,
    max: u64,
    split: Box<[BsSplit]>,
    unaligned: bool,
    rng: Rng,
}

impl BlockSizer {
    /// The sizes of direction `d` of `job`, with their own random stream (fio's `bsrange_state`).
    pub(crate) fn new(job: &JobSpec, d: usize, seed: u64) -> Self {
        let (min, max) = job.bs_range(d);
        BlockSizer {
            min: min.max(1),
            max: max.max(min).max(1),
            split: job.blocks.split[d].clone().into_boxed_slice(),
            unaligned: job.blocks.unaligned,
            rng: Rng::new(seed ^ 0xB5_5B_1E),
        }
    }

    /// Every I/O has the same size.
    #[inline]
    pub(crate) fn fixed(&self) -> bool {
        self.min == self.max
    }

    /// The smallest size.
    #[inline]
    pub(crate) fn min(&self) -> u64 {
        self.min
    }

    /// The size of the next I/O when `room` bytes are left after its offset; 0 when not even
    /// the smallest fits. As fio: a range draws `min + max·u` (u uniform in [0, 1)), a split walks
    /// its entries (sorted by share) adding up shares until the draw is covered by one that
    /// fits; then the size is rounded down to a multiple of the minimum (unless
    /// `bs_unaligned`), capped at the maximum, and drawn again if it does not fit.
    #[inline]
    pub(crate) fn pick(&mut self, room: u64) -> u64 {
        if self.fixed() {
            return self.min;
        }
        if room < self.min {
            return 0;
        }
        for _ in 0..MAX_TRIES {
            let r = self.rng.next_u64() >> 32;
            let mut len = if self.split.is_empty() {
                self.min + (self.max as f64 * (r as f64 / (FRAND_MAX as f64 + 1.0))) as u64
            } else {
                let mut len = self.min;
                let mut perc: u64 = 0;
                for s in self.split.iter() {
                    if s.perc == 0 {
                        continue;
                    }
                    len = s.bs;
                    perc += s.perc as u64;
                    if r / perc <= FRAND_MAX / 100 && s.bs <= room {
                        break;
                    }
                }
                len
            };
            if !self.unaligned {
                len -= len % self.min;
            }
            len = len.min(self.max);
            if len <= room {
                return len;
            }
        }
        // Unlucky draws: the largest aligned size that fits (the minimum always does).
        let len = room.min(self.max);
        if self.unaligned {
            len
        } else {
            len - len % self.min
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::JobSpec;

    fn shares(s: &mut BlockSizer, room: u64, n: usize) -> std::collections::BTreeMap<u64, f64> {
        let mut m = std::collections::BTreeMap::new();
        for _ in 0..n {
            *m.entry(s.pick(room)).or_insert(0.0) += 1.0 / n as f64;
        }
        m
    }

    #[test]
    fn split_shares_follow_the_percentages() {
        let mut j = JobSpec::default();
        j.blocks.split[0] = vec![
            BsSplit { bs: 4096, perc: 10 },
            BsSplit {
                bs: 32768,
                perc: 40,
            },
            BsSplit {
                bs: 65536,
                perc: 50,
            },
        ];
        let mut s = BlockSizer::new(&j, 0, 1);
        let m = shares(&mut s, u64::MAX, 100_000);
        assert_eq!(m.len(), 3, "{m:?}");
        for (bs, want) in [(4096, 0.10), (32768, 0.40), (65536, 0.50)] {
            assert!((m[&bs] - want).abs() < 0.01, "{bs}: {m:?}");
        }
    }

    #[test]
    fn split_under_100_gives_the_rest_to_the_last_entry() {
        let mut j = JobSpec::default();
        j.blocks.split[0] = vec![
            BsSplit { bs: 4096, perc: 10 },
            BsSplit { bs: 8192, perc: 20 },
        ];
        let m = shares(&mut BlockSizer::new(&j, 0, 2), u64::MAX, 50_000);
        assert!((m[&4096] - 0.10).abs() < 0.01, "{m:?}");
        assert!((m[&8192] - 0.90).abs() < 0.01, "{m:?}");
    }

    #[test]
    fn split_skips_sizes_that_do_not_fit() {
        let mut j = JobSpec::default();
        j.blocks.split[0] = vec![
            BsSplit { bs: 4096, perc: 50 },
            BsSplit {
                bs: 65536,
                perc: 50,
            },
        ];
        let mut s = BlockSizer::new(&j, 0, 3);
        assert!((0..1000).all(|_| s.pick(16384) == 4096));
        assert_eq!(s.pick(4095), 0);
    }

    #[test]
    fn range_draws_multiples_of_the_minimum_evenly() {
        // fio draws min + max·u and rounds down: 4k-16k gives 4k, 8k, 12k and 16k a quarter each.
        let mut j = JobSpec::default();
        j.blocks.range[0] = Some((4096, 16384));
        let m = shares(&mut BlockSizer::new(&j, 0, 4), u64::MAX, 100_000);
        assert_eq!(
            m.keys().copied().collect::<Vec<_>>(),
            vec![4096, 8192, 12288, 16384]
        );
        assert!(m.values().all(|v| (v - 0.25).abs() < 0.01), "{m:?}");
        // Near the region's end only the sizes that fit are drawn.
        let mut s = BlockSizer::new(&j, 0, 5);
        assert!((0..1000).all(|_| s.pick(9000) <= 8192));
    }

    #[test]
    fn unaligned_range_gives_any_size_and_caps_at_the_maximum() {
        // min + max·u over [1000, 5000) capped at 4000: a quarter of the draws hit the cap.
        let mut j = JobSpec::default();
        j.blocks.range[0] = Some((1000, 4000));
        j.blocks.unaligned = true;
        let m = shares(&mut BlockSizer::new(&j, 0, 6), u64::MAX, 100_000);
        assert!(m.keys().any(|&k| k % 1000 != 0));
        assert!(m.keys().all(|&k| (1000..=4000).contains(&k)));
        assert!((m[&4000] - 0.25).abs() < 0.01, "{}", m[&4000]);
    }
}
