//! What the next I/O is, beyond `bs` and `rw`: variable block sizes (`bsrange`, `bssplit`,
//! `bs_unaligned`, `bs_is_seq_rand`), random offset alignment (`blockalign`), zoned and normal
//! distributions' parameters, the random generator and `percentage_random`, as fio 3.33 reads them.

use super::{JobSpec, RwKind, DDIR_READ, DDIR_WRITE};

/// One `bssplit` entry: I/Os of `bs` bytes get `perc` percent of the draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BsSplit {
    /// Block size in bytes.
    pub bs: u64,
    /// Share in percent, after fio's filling of entries written without one (0 = never picked).
    pub perc: u32,
}

/// One zone of `random_distribution=zoned:` or `zoned_abs:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    /// Percent of the random I/Os that land in this zone.
    pub access: u32,
    /// The zone's length: percent of the I/O region (`zoned`) or bytes (`zoned_abs`).
    pub size: u64,
}

/// fio's `random_generator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandomGenerator {
    /// `tausworthe` (fio's default) and `tausworthe64`: iogauge draws from one 64-bit generator
    /// for both, so the two differ only by name here.
    Tausworthe,
    /// `lfsr`: a full-period sequence that visits each block exactly once per pass with no
    /// random map (iogauge's map-less permutation is exactly that).
    Lfsr,
}

/// Block sizes and offsets beyond `bs` and `rw` (fio 3.33 defaults in `Default`).
#[derive(Debug, Clone, PartialEq)]
pub struct BlocksSpec {
    /// `bsrange` per direction: (min, max) bytes; None = from `bs`.
    pub range: [Option<(u64, u64)>; 3],
    /// `bssplit` per direction, sorted by share as fio sorts it (empty = none).
    pub split: [Vec<BsSplit>; 3],
    /// `blocksize_unaligned`: sizes from a range or split need not be multiples of the minimum.
    pub unaligned: bool,
    /// `bs_is_seq_rand`: the read sizes serve sequential I/Os, the write sizes random ones.
    pub is_seq_rand: bool,
    /// `blockalign` per direction (0 = the direction's minimum block size). Random I/O only.
    pub align: [u64; 3],
    /// Zones of `zoned`/`zoned_abs` per direction (empty = uniform over the region).
    pub zones: [Vec<Zone>; 3],
    /// The optional center of zipf, pareto and normal (`zipf:1.2:0.25`), in [0, 1].
    pub center: Option<f64>,
    /// `random_generator`.
    pub generator: RandomGenerator,
    /// `percentage_random` per direction: share of a random job's I/Os at random offsets
    /// (the others continue after the previous I/O).
    pub percentage_random: [u32; 3],
    /// `rw=randread:N`: a new random offset every N I/Os (1 = every I/O; 0 = never after
    /// the first, as fio's counter never fires).
    pub rw_seq_nr: u32,
    /// `rw=read:N`: bytes skipped after each sequential I/O (holes).
    pub rw_seq_add: u64,
    /// `rw_sequencer=identical`: the I/Os between new random offsets repeat the last offset
    /// (the default, `sequential`, continues after the last I/O).
    pub rw_seq_identical: bool,
}

impl Default for BlocksSpec {
    fn default() -> Self {
        BlocksSpec {
            range: [None; 3],
            split: [Vec::new(), Vec::new(), Vec::new()],
            unaligned: false,
            is_seq_rand: false,
            align: [0; 3],
            zones: [Vec::new(), Vec::new(), Vec::new()],
            center: None,
            generator: RandomGenerator::Tausworthe,
            percentage_random: [100; 3],
            rw_seq_nr: 1,
            rw_seq_add: 0,
            rw_seq_identical: false,
        }
    }
}

impl JobSpec {
    /// The smallest and largest block size of direction `d` (fio's `min_bs[d]`/`max_bs[d]`): from
    /// `bssplit` if given for it, else `bsrange`, else `bs`.
    pub(crate) fn bs_range(&self, d: usize) -> (u64, u64) {
        let split = &self.blocks.split[d];
        if !split.is_empty() {
            let min = split.iter().map(|s| s.bs).min().unwrap_or(self.bs[d]);
            let max = split.iter().map(|s| s.bs).max().unwrap_or(self.bs[d]);
            return (min, max);
        }
        self.blocks.range[d].unwrap_or((self.bs[d], self.bs[d]))
    }

    /// The minimum block size of the directions the job transfers.
    pub(crate) fn transfer_min_bs(&self) -> u64 {
        let (r, w) = (self.bs_range(DDIR_READ).0, self.bs_range(DDIR_WRITE).0);
        match self.rw.kind {
            RwKind::Read => r,
            RwKind::Write => w,
            RwKind::ReadWrite => r.min(w),
        }
    }

    /// The alignment of random offsets in direction `d` (fio's `ba[d]`): `blockalign` for random
    /// jobs, else the direction's minimum block size.
    pub(crate) fn block_align(&self, d: usize) -> u64 {
        let a = self.blocks.align[d];
        if a == 0 || !self.rw.random {
            self.bs_range(d).0
        } else {
            a
        }
    }

    /// The random map is kept (fio turns it off for `blockalign`, a non-uniform distribution and
    /// `random_generator=lfsr`, whose sequence needs none).
    pub(crate) fn uses_random_map(&self) -> bool {
        !self.norandommap
            && self.random_distribution == super::Distribution::Random
            && self.blocks.generator == RandomGenerator::Tausworthe
            && (0..3).all(|d| self.block_align(d) == self.bs_range(d).0)
    }

    /// The mean size of direction `d`'s I/Os (for byte-rate pacing of variable sizes).
    pub(crate) fn mean_bs(&self, d: usize) -> u64 {
        let split = &self.blocks.split[d];
        let total: u64 = split.iter().map(|s| s.perc as u64).sum();
        if total > 0 {
            return split.iter().map(|s| s.bs * s.perc as u64).sum::<u64>() / total;
        }
        let (lo, hi) = self.bs_range(d);
        lo + (hi - lo) / 2
    }
}
