//! What the next I/O is: its direction (fixed or by rwmixread), its file (round robin) and its
//! offset (one generator per file and direction, as fio keeps a position per direction), and
//! when it is due under rate limits. Shared by the synchronous and the queueing worker loops.
//! Trims are the third direction; `trimwrite` alternates a trim and a write of the same block.

use super::instance::WorkerInput;
use crate::model::{RwKind, DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::workload::offsets::OffsetGen;
use crate::workload::rate::Pacer;
use crate::workload::rng::Rng;

pub(crate) struct IoSource {
    gens: Vec<[OffsetGen; 3]>,
    pub rng: Rng,
    fixed_dir: Option<usize>,
    mix: u64,
    pacers: [Pacer; 3],
    pub paced: bool,
    bs: [u64; 3],
    file: usize,
    /// trimwrite: the trim whose block the next write rewrites (file, offset).
    trimmed: Option<(usize, u64)>,
    trimwrite: bool,
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
                        job.bs[d],
                        job.rw.random,
                        job.norandommap,
                        job.random_distribution,
                        seed.wrapping_add((i * 2 + d) as u64 * 0x9E37),
                    )
                };
                [g(DDIR_READ), g(DDIR_WRITE), g(DDIR_TRIM)]
            })
            .collect();
        let pacers = [
            Pacer::new(job.rate_iops[0], job.rate[0], job.bs[0]),
            Pacer::new(job.rate_iops[1], job.rate[1], job.bs[1]),
            Pacer::new(job.rate_iops[2], job.rate[2], job.bs[2]),
        ];
        IoSource {
            gens,
            rng: Rng::new(seed),
            fixed_dir: match job.rw.kind {
                RwKind::Read => Some(DDIR_READ),
                RwKind::Write => Some(DDIR_WRITE),
                RwKind::Trim => Some(DDIR_TRIM),
                RwKind::ReadWrite | RwKind::TrimWrite => None,
            },
            mix: job.rwmixread as u64,
            paced: pacers.iter().any(Pacer::is_limited),
            pacers,
            bs: job.bs,
            file: 0,
            trimmed: None,
            trimwrite: job.rw.kind == RwKind::TrimWrite,
        }
    }

    /// Direction of the next I/O.
    #[inline]
    pub(crate) fn pick_dir(&mut self) -> usize {
        match self.fixed_dir {
            Some(d) => d,
            None if self.trimwrite => {
                if self.trimmed.is_some() {
                    DDIR_WRITE
                } else {
                    DDIR_TRIM
                }
            }
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
        if self.trimwrite {
            if let Some((file, offset)) = self.trimmed.take() {
                // The write of trimwrite: the block just trimmed (fio's last trim offset).
                return NextIo {
                    file,
                    offset,
                    len: self.bs[DDIR_WRITE] as usize,
                    new_pass: false,
                };
            }
        }
        let file = self.file;
        self.file += 1;
        if self.file == self.gens.len() {
            self.file = 0;
        }
        let (offset, new_pass) = self.gens[file][dir].next(&mut self.rng);
        if self.trimwrite {
            self.trimmed = Some((file, offset));
        }
        NextIo {
            file,
            offset,
            len: self.bs[dir] as usize,
            new_pass,
        }
    }
}
