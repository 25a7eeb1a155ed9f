//! Where the next I/O goes inside one file's I/O region: sequential, random map (each block once
//! per pass), uniform without a map, zipf or pareto. Offsets are aligned to the block size.

use super::dist::{rank_to_block, Pareto, Zipf};
use super::randmap::RandMap;
use super::rng::Rng;
use crate::spec::Distribution;

#[derive(Debug, Clone)]
enum Kind {
    Sequential { next: u64 },
    Map(RandMap),
    Uniform,
    Zipf(Zipf, u64),
    Pareto(Pareto, u64),
}

/// Generates offsets in `[start, start + len)` for I/Os of `bs` bytes.
#[derive(Debug, Clone)]
pub struct OffsetGen {
    start: u64,
    bs: u64,
    nblocks: u64,
    kind: Kind,
}

impl OffsetGen {
    /// `len` is the I/O region's length; it must hold at least one block.
    pub fn new(
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
            Kind::Sequential { next: 0 }
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
    pub fn blocks(&self) -> u64 {
        self.nblocks
    }

    /// The next offset. Sequential generators wrap to the start after the last block.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let block = match &mut self.kind {
            Kind::Sequential { next } => {
                let b = *next;
                *next = if b + 1 == self.nblocks { 0 } else { b + 1 };
                b
            }
            Kind::Map(m) => m.next_block(),
            Kind::Uniform => rng.below(self.nblocks),
            Kind::Zipf(z, salt) => rank_to_block(z.rank(rng), self.nblocks, *salt),
            Kind::Pareto(p, salt) => rank_to_block(p.rank(rng), self.nblocks, *salt),
        };
        self.start + block * self.bs
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
        let v: Vec<u64> = (0..5).map(|_| g.next(&mut rng)).collect();
        assert_eq!(v, vec![4096, 4096 + 2300, 4096 + 4600, 4096 + 6900, 4096]);
    }

    #[test]
    fn random_map_covers_region_once_aligned() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(0, 1 << 20, 4096, true, false, Distribution::Random, 0x89);
        let mut v: Vec<u64> = (0..g.blocks()).map(|_| g.next(&mut rng)).collect();
        assert!(v.iter().all(|o| o % 4096 == 0 && *o + 4096 <= 1 << 20));
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), 256);
    }

    #[test]
    fn norandommap_repeats_blocks() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(0, 1 << 20, 4096, true, true, Distribution::Random, 0x89);
        let mut v: Vec<u64> = (0..256).map(|_| g.next(&mut rng)).collect();
        v.sort_unstable();
        v.dedup();
        // Uniform draws of 256 from 256 leave about 1/e of the blocks untouched.
        assert!(v.len() < 220 && v.len() > 120, "{}", v.len());
    }
}
