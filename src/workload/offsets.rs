//! Where the next I/O goes inside one file's I/O region: sequential, random map (each block once
//! per pass), uniform without a map, zipf or pareto. Offsets are aligned to the block size.
//! Sequential and mapped generators say when an offset starts a new pass over the region, the
//! point where fio resets the file and drops its cache again; the others never finish a pass.

use super::dist::{rank_to_block, Pareto, Zipf};
use super::randmap::RandMap;
use super::rng::Rng;
use crate::model::Distribution;

#[derive(Debug, Clone)]
enum Kind {
    /// `wrapped`: the last block was handed out, so the next offset starts a new pass.
    Sequential {
        next: u64,
        wrapped: bool,
    },
    Map(RandMap),
    Uniform,
    Zipf(Zipf, u64),
    Pareto(Pareto, u64),
}

/// Generates offsets in `[start, start + len)` for I/Os of `bs` bytes.
#[derive(Debug, Clone)]
pub(crate) struct OffsetGen {
    start: u64,
    bs: u64,
    nblocks: u64,
    kind: Kind,
}

impl OffsetGen {
    /// `len` is the I/O region's length; it must hold at least one block.
    pub(crate) fn new(
        start: u64,
        len: u64,
        bs: u64,
        random: bool,
        norandommap: bool,
        dist: Distribution,
        seed: u64,
    ) -> Self {
        let nblocks = (len / bs).max(1);
        let kind = if !random {
            Kind::Sequential {
                next: 0,
                wrapped: false,
            }
        } else {
            match dist {
                Distribution::Random if norandommap => Kind::Uniform,
                Distribution::Random => Kind::Map(RandMap::new(nblocks, seed)),
                Distribution::Zipf(theta) => Kind::Zipf(Zipf::new(nblocks, theta), seed),
                Distribution::Pareto(h) => Kind::Pareto(Pareto::new(nblocks, h), seed),
            }
        };
        OffsetGen {
            start,
            bs,
            nblocks,
            kind,
        }
    }

    /// Number of whole blocks in the region: one pass of a sequential or mapped generator.
    #[cfg(test)]
    fn blocks(&self) -> u64 {
        self.nblocks
    }

    /// The next offset, and whether it starts a second or later pass over the region (never
    /// for the first offset). Sequential generators wrap to the start after the last block;
    /// mapped ones start a new permutation once every block was handed out.
    #[inline]
    pub(crate) fn next(&mut self, rng: &mut Rng) -> (u64, bool) {
        let (block, new_pass) = match &mut self.kind {
            Kind::Sequential { next, wrapped } => {
                let b = *next;
                let new_pass = *wrapped;
                *wrapped = b + 1 == self.nblocks;
                *next = if *wrapped { 0 } else { b + 1 };
                (b, new_pass)
            }
            Kind::Map(m) => {
                let new_pass = m.pass_done();
                (m.next_block(), new_pass)
            }
            Kind::Uniform => (rng.below(self.nblocks), false),
            Kind::Zipf(z, salt) => (rank_to_block(z.rank(rng), self.nblocks, *salt), false),
            Kind::Pareto(p, salt) => (rank_to_block(p.rank(rng), self.nblocks, *salt), false),
        };
        (self.start + block * self.bs, new_pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_walks_blocks_then_wraps() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(
            4096,
            4 * 2300 + 100,
            2300,
            false,
            false,
            Distribution::Random,
            0,
        );
        let v: Vec<(u64, bool)> = (0..9).map(|_| g.next(&mut rng)).collect();
        let (b0, b1, b2, b3) = (4096, 4096 + 2300, 4096 + 4600, 4096 + 6900);
        // A new pass starts at the wrap, not at the very first offset.
        assert_eq!(
            v,
            vec![
                (b0, false),
                (b1, false),
                (b2, false),
                (b3, false),
                (b0, true),
                (b1, false),
                (b2, false),
                (b3, false),
                (b0, true)
            ]
        );
    }

    #[test]
    fn random_map_covers_region_once_aligned() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(0, 1 << 20, 4096, true, false, Distribution::Random, 0x89);
        let mut v: Vec<u64> = (0..g.blocks()).map(|_| g.next(&mut rng).0).collect();
        assert!(v.iter().all(|o| o % 4096 == 0 && *o + 4096 <= 1 << 20));
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 256);
    }

    #[test]
    fn random_map_flags_the_first_offset_of_each_later_pass() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(0, 1 << 20, 4096, true, false, Distribution::Random, 0x89);
        let starts: Vec<usize> = (0..256 * 3 + 10).filter(|_| g.next(&mut rng).1).collect();
        assert_eq!(starts, vec![256, 512, 768]);
        // A single-block region: every offset after the first starts a pass.
        let mut g = OffsetGen::new(0, 4096, 4096, true, false, Distribution::Random, 7);
        let flags: Vec<bool> = (0..3).map(|_| g.next(&mut rng).1).collect();
        assert_eq!(flags, vec![false, true, true]);
    }

    #[test]
    fn generators_without_a_map_never_finish_a_pass() {
        // As in fio: norandommap, zipf and pareto never run out of blocks, so never reset.
        let mut rng = Rng::new(1);
        for dist in [
            Distribution::Random,
            Distribution::Zipf(1.2),
            Distribution::Pareto(0.9),
        ] {
            let mut g = OffsetGen::new(0, 64 * 4096, 4096, true, true, dist, 5);
            assert!((0..1000).all(|_| !g.next(&mut rng).1), "{dist:?}");
        }
    }

    #[test]
    fn norandommap_repeats_blocks() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(0, 1 << 20, 4096, true, true, Distribution::Random, 0x89);
        let mut v: Vec<u64> = (0..256).map(|_| g.next(&mut rng).0).collect();
        v.sort_unstable();
        v.dedup();
        // Uniform draws of 256 from 256 leave about 1/e of the blocks untouched.
        assert!(v.len() < 220 && v.len() > 120, "{}", v.len());
    }
}
