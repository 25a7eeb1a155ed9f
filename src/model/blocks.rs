//! What the next I/O is, beyond `bs` and `rw`: variable block sizes (`bsrange`, `bssplit`,
//! `bs_unaligned`, `bs_is_seq_rand`), random offset alignment (`blockalign`), zoned and normal
//! distributions' parameters, the random generator and `percentage_random`, as fio 3.33 reads them.

use super::{JobSpec, RwKind, DDIR_READ, DDIR_TRIM, DDIR_WRITE};

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
    /// `rw=read:N`: bytes skipped after each sequential I/O (holes); negative for
    /// `rw=read:-N`, which steps backwards.
    pub rw_seq_add: i64,
    /// `rw_sequencer=identical`: the I/Os between new random offsets repeat the last offset
    /// (the default, `sequential`, continues after the last I/O).
    pub rw_seq_identical: bool,
    /// `io_size`: bytes an instance transfers per loop instead of its regions' size, wrapping
    /// over them until that many are done (see `JobSpec::byte_limit`).
    pub io_size: Option<u64>,
    /// `number_ios`: stop after this many I/Os if nothing stopped the job earlier.
    pub number_ios: Option<u64>,
    /// `offset_increment`: instance k of `numjobs` starts its I/O k times this much further.
    pub offset_increment: u64,
    /// `zonemode=strided`.
    pub strided: bool,
    /// `zonerange`: the zone's length (0 = `zonesize`).
    pub zone_range: u64,
    /// `zonesize`: bytes transferred in a zone before moving to the next.
    pub zone_size: u64,
    /// `zoneskip`: bytes skipped between zones, after `zonerange`.
    pub zone_skip: u64,
    /// `file_service_type`.
    pub file_service: FileService,
    /// I/Os to a file before choosing again (`random:8`; 1 by default).
    pub file_service_nr: u32,
    /// The center of a zipf, pareto or normal file choice (`zipf:1.2:0.5`).
    pub file_service_center: Option<f64>,
}

/// fio's `file_service_type`: which of an instance's files the next I/O goes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FileService {
    /// Files take turns (fio's default).
    RoundRobin,
    /// One file's pass over its region, then the next file's.
    Sequential,
    /// A file drawn uniformly.
    Random,
    /// A file drawn from zipf:theta (file popularity ranks, not hashed).
    Zipf(f64),
    /// A file drawn from pareto:h.
    Pareto(f64),
    /// A file drawn from normal:dev (the middle files are the hot ones).
    Normal(f64),
}

/// `zonemode=strided` as a job runs it: bytes per zone, the zone's length, and the step from one
/// zone's start to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strided {
    /// Bytes transferred in a zone before moving on (`zonesize`).
    pub size: u64,
    /// The zone's length (`zonerange`).
    pub range: u64,
    /// From one zone's start to the next (`zonerange + zoneskip`).
    pub step: u64,
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
            io_size: None,
            number_ios: None,
            offset_increment: 0,
            strided: false,
            zone_range: 0,
            zone_size: 0,
            zone_skip: 0,
            file_service: FileService::RoundRobin,
            file_service_nr: 1,
            file_service_center: None,
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
        let t = self.bs_range(DDIR_TRIM).0;
        match self.rw.kind {
            RwKind::Read => r,
            RwKind::Write => w,
            RwKind::ReadWrite => r.min(w),
            RwKind::Trim => t,
            RwKind::TrimWrite => t.min(w),
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

    /// The one size of every I/O the job transfers, if it has one.
    pub(crate) fn one_transfer_size(&self) -> Option<u64> {
        let dirs: &[usize] = match self.rw.kind {
            RwKind::Read => &[DDIR_READ],
            RwKind::Write => &[DDIR_WRITE],
            RwKind::ReadWrite => &[DDIR_READ, DDIR_WRITE],
            RwKind::Trim => &[DDIR_TRIM],
            RwKind::TrimWrite => &[DDIR_TRIM, DDIR_WRITE],
        };
        let (lo, hi) = self.bs_range(dirs[0]);
        let same = dirs.iter().all(|&d| self.bs_range(d) == (lo, lo));
        (lo == hi && same && !self.blocks.is_seq_rand).then_some(lo)
    }

    /// Bytes an instance transfers after ramp when its regions hold `per_pass` bytes of whole
    /// blocks: one pass (or `io_size` if smaller) `loops` times, at least `io_size`; cut at
    /// `number_ios` I/Os.
    pub(crate) fn byte_limit(&self, per_pass: u64) -> u64 {
        // As fio 3.33 behaves: each loop transfers io_size or less (a pass over the regions),
        // and the job goes on past the loops until io_size bytes are done.
        let loops = self.loops.max(1) as u64;
        let bytes = match self.blocks.io_size {
            Some(b) => b.min(per_pass).saturating_mul(loops).max(b),
            None => per_pass.saturating_mul(loops),
        };
        match (self.blocks.number_ios, self.one_transfer_size()) {
            (Some(n), Some(bs)) => bytes.min(n.saturating_mul(bs)),
            _ => bytes,
        }
    }

    /// The strided zones the job walks (fio turns them off with several files).
    pub(crate) fn strided(&self) -> Option<Strided> {
        let b = &self.blocks;
        if !b.strided || b.zone_size == 0 || self.nrfiles > 1 {
            return None;
        }
        let range = if b.zone_range == 0 {
            b.zone_size
        } else {
            b.zone_range
        };
        Some(Strided {
            size: b.zone_size,
            range,
            step: range + b.zone_skip,
        })
    }

    /// What the options of model/blocks.rs cannot do together here, in words.
    pub(crate) fn check_blocks(&self) -> Result<(), String> {
        let b = &self.blocks;
        let varies = (0..3).any(|d| {
            let (lo, hi) = self.bs_range(d);
            lo != hi
        });
        if b.unaligned && self.direct && varies {
            // fio only warns ("bs_unaligned may not work with raw io"), then fails mid-run.
            return Err(format!(
                "job '{}': bs_unaligned draws sizes that O_DIRECT refuses; drop bs_unaligned \
                 or direct=1",
                self.name
            ));
        }
        if b.strided && b.zone_size == 0 {
            return Err(format!(
                "job '{}': zonemode=strided needs zonesize, e.g. zonesize=64k",
                self.name
            ));
        }
        if !b.strided && b.zone_size > 0 {
            return Err(format!(
                "job '{}': zonesize needs zonemode=strided (fio: --zonemode=none and --zonesize \
                 are not compatible)",
                self.name
            ));
        }
        if self.strided().is_some()
            && !matches!(self.random_distribution, super::Distribution::Random)
        {
            return Err(format!(
                "job '{}': zonemode=strided with a non-uniform random_distribution is not \
                 supported by iogauge yet",
                self.name
            ));
        }
        if self.blocks.number_ios.is_some() && self.one_transfer_size().is_none() {
            return Err(format!(
                "job '{}': number_ios with several block sizes is not supported by iogauge yet \
                 (iogauge counts it in bytes); use one bs for every direction, e.g. bs=4k",
                self.name
            ));
        }
        Ok(())
    }

    /// Direction `d`'s rate limits as the pacer takes them: (I/Os per s, bytes per s, I/O size).
    /// With several sizes fio paces by bytes: `rate`, else `rate_iops` times the smallest size
    /// (so fewer I/Os per second than `rate_iops` when larger ones come up); iogauge paces
    /// each I/O at the mean size to the same average.
    pub(crate) fn pacing(&self, d: usize) -> (Option<u64>, Option<u64>, u64) {
        let (lo, hi) = self.bs_range(d);
        if lo == hi {
            return (self.rate_iops[d], self.rate[d], lo);
        }
        let bytes = self.rate[d].or(self.rate_iops[d].map(|i| i.saturating_mul(lo)));
        (None, bytes, self.mean_bs(d))
    }

    /// The mean size of direction `d`'s I/Os (for byte-rate pacing of variable sizes).
    pub(crate) fn mean_bs(&self, d: usize) -> u64 {
        let split = &self.blocks.split[d];
        let total: u64 = split.iter().map(|s| s.perc as u64).sum();
        let weighted: u64 = split.iter().map(|s| s.bs * s.perc as u64).sum();
        if let Some(mean) = weighted.checked_div(total) {
            return mean;
        }
        let (lo, hi) = self.bs_range(d);
        lo + (hi - lo) / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_limit_follows_fio_for_io_size_loops_and_number_ios() {
        let mib = 1u64 << 20;
        let mut j = JobSpec::default();
        assert_eq!(j.byte_limit(4 * mib), 4 * mib);
        j.loops = 3;
        assert_eq!(j.byte_limit(4 * mib), 12 * mib);
        // io_size below a pass: that much per loop; above: at least io_size in all.
        j.blocks.io_size = Some(mib);
        assert_eq!(j.byte_limit(4 * mib), 3 * mib);
        j.blocks.io_size = Some(3 * mib);
        j.loops = 2;
        assert_eq!(j.byte_limit(mib), 3 * mib);
        j.loops = 5;
        assert_eq!(j.byte_limit(mib), 5 * mib);
        // number_ios only ever cuts, in I/Os of the job's one size.
        j.blocks.number_ios = Some(100);
        assert_eq!(j.byte_limit(mib), 100 * 4096);
        j.blocks.number_ios = Some(1 << 40);
        assert_eq!(j.byte_limit(mib), 5 * mib);
        assert!(j.check_blocks().is_ok());
        j.blocks.range[DDIR_READ] = Some((4096, 8192));
        assert!(j.check_blocks().unwrap_err().contains("number_ios"));
    }

    #[test]
    fn variable_sizes_pace_by_bytes_as_fio() {
        let mut j = JobSpec::default();
        j.rate_iops[DDIR_READ] = Some(100);
        assert_eq!(j.pacing(DDIR_READ), (Some(100), None, 4096));
        // 4k/50:12k/50: fio's 100 IOPS become 100 · 4 KiB/s, paced at the 8 KiB mean size.
        j.blocks.split[DDIR_READ] = vec![
            BsSplit { bs: 4096, perc: 50 },
            BsSplit {
                bs: 12288,
                perc: 50,
            },
        ];
        assert_eq!(j.pacing(DDIR_READ), (None, Some(409_600), 8192));
        j.rate[DDIR_READ] = Some(1 << 20);
        assert_eq!(j.pacing(DDIR_READ), (None, Some(1 << 20), 8192));
    }
}
