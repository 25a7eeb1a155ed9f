//! What the next I/O is: its direction (fixed or by rwmixread), its file (round robin) and its
//! offset (one generator per file and direction, as fio keeps a position per direction), and
//! when it is due under rate limits, and its length (one size, or drawn per I/O from `bsrange`
//! or `bssplit`). Shared by the synchronous and the queueing worker loops.

use super::instance::WorkerInput;
use crate::model::{RwKind, DDIR_READ, DDIR_WRITE};
use crate::workload::bsize::BlockSizer;
use crate::workload::offsets::{GenParams, OffsetGen};
use crate::workload::rate::Pacer;
use crate::workload::rng::Rng;

pub(crate) struct IoSource {
    gens: Vec<[OffsetGen; 2]>,
    pub rng: Rng,
    fixed_dir: Option<usize>,
    mix: u64,
    pacers: [Pacer; 2],
    pub paced: bool,
    /// Sizes per direction (indexed like `gens`' arrays).
    sizers: [BlockSizer; 2],
    /// Every I/O has its direction's one size (no draw, no fit check).
    fixed: bool,
    /// `bs_is_seq_rand`: sizes come from the read sizer for sequential offsets, the write one
    /// for random offsets.
    seq_rand: bool,
    /// `rw=randread:N`: a new random offset every `seq_nr` I/Os; `seq_left` counts down.
    seq_nr: u32,
    seq_left: u32,
    file: usize,
}

/// One I/O to do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NextIo {
    pub file: usize,
    pub offset: u64,
    pub len: usize,
    /// The offset starts a second or later pass over the file's region (see `OffsetGen::next`).
    pub new_pass: bool,
}

impl IoSource {
    pub(crate) fn new(input: &WorkerInput) -> Self {
        let job = &input.job;
        let seed = input.seed;
        let gens = input
            .regions
            .iter()
            .enumerate()
            .map(|(i, &(off, len))| {
                let g = |d: usize| {
                    OffsetGen::new(
                        off,
                        len,
                        &GenParams::of(job, d),
                        seed.wrapping_add((i * 2 + d) as u64 * 0x9E37),
                    )
                };
                [g(DDIR_READ), g(DDIR_WRITE)]
            })
            .collect();
        let pacers = [
            Pacer::new(job.rate_iops[0], job.rate[0], job.mean_bs(DDIR_READ)),
            Pacer::new(job.rate_iops[1], job.rate[1], job.mean_bs(DDIR_WRITE)),
        ];
        IoSource {
            gens,
            rng: Rng::new(seed),
            fixed_dir: match job.rw.kind {
                RwKind::Read => Some(DDIR_READ),
                RwKind::Write => Some(DDIR_WRITE),
                RwKind::ReadWrite => None,
            },
            mix: job.rwmixread as u64,
            paced: pacers[0].is_limited() || pacers[1].is_limited(),
            pacers,
            sizers: [
                BlockSizer::new(job, DDIR_READ, seed),
                BlockSizer::new(job, DDIR_WRITE, seed.wrapping_add(1)),
            ],
            fixed: !job.blocks.is_seq_rand
                && (0..2).all(|d| job.bs_range(d).0 == job.bs_range(d).1),
            seq_rand: job.blocks.is_seq_rand,
            seq_nr: job.blocks.rw_seq_nr,
            seq_left: job.blocks.rw_seq_nr,
            file: 0,
        }
    }

    /// Direction of the next I/O.
    #[inline]
    pub(crate) fn pick_dir(&mut self) -> usize {
        match self.fixed_dir {
            Some(d) => d,
            None if self.rng.below(100) < self.mix => DDIR_READ,
            None => DDIR_WRITE,
        }
    }

    /// When an I/O in `dir` is due (CLOCK_MONOTONIC ns); advances that direction's schedule.
    #[inline]
    pub(crate) fn due(&mut self, dir: usize) -> u64 {
        self.pacers[dir].next_due()
    }

    /// Restart the rate schedules at `now` (start of measurement).
    pub(crate) fn restart_pacing(&mut self, now: u64) {
        for p in self.pacers.iter_mut() {
            p.restart(now);
        }
    }

    /// The next I/O in `dir`; files take turns.
    #[inline]
    pub(crate) fn next(&mut self, dir: usize) -> NextIo {
        let file = self.file;
        self.file += 1;
        if self.file == self.gens.len() {
            self.file = 0;
        }
        // fio's ddir_seq_nr: one countdown over all files and directions; it fires on the
        // N-th I/O (so never with N = 0, and on every I/O with N = 1).
        let fresh = match self.seq_nr {
            1 => true,
            0 => false,
            n => {
                self.seq_left -= 1;
                if self.seq_left == 0 {
                    self.seq_left = n;
                }
                self.seq_left == n
            }
        };
        let gen = &mut self.gens[file][dir];
        let p = gen.place(&mut self.rng, fresh);
        let len = if self.fixed {
            self.sizers[dir].min()
        } else {
            let d = match (self.seq_rand, p.random) {
                (false, _) => dir,
                (true, false) => DDIR_READ,
                (true, true) => DDIR_WRITE,
            };
            // Offsets leave room for the smallest size, so a draw always fits.
            self.sizers[d].pick(p.room).max(1)
        };
        let len = gen.commit(&p, len);
        NextIo {
            file,
            offset: p.offset,
            len: len as usize,
            new_pass: p.new_pass,
        }
    }
}
