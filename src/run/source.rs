//! What the next I/O is: its direction (fixed or by rwmixread), its file (round robin) and its
//! offset (one generator per file and direction, as fio keeps a position per direction), and
//! when it is due under rate limits. Shared by the synchronous and the queueing worker loops.

use super::instance::WorkerInput;
use crate::model::{RwKind, DDIR_READ, DDIR_WRITE};
use crate::workload::offsets::OffsetGen;
use crate::workload::rate::Pacer;
use crate::workload::rng::Rng;

pub(crate) struct IoSource {
    gens: Vec<[OffsetGen; 2]>,
    pub rng: Rng,
    fixed_dir: Option<usize>,
    mix: u64,
    pacers: [Pacer; 2],
    pub paced: bool,
    bs: [u64; 2],
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
                        job.bs[d],
                        job.rw.random,
                        job.norandommap,
                        job.random_distribution,
                        seed.wrapping_add((i * 2 + d) as u64 * 0x9E37),
                    )
                };
                [g(DDIR_READ), g(DDIR_WRITE)]
            })
            .collect();
        let process = job.timing.rate_process;
        let pacers = [
            Pacer::new(job.rate_iops[0], job.rate[0], job.bs[0]).with_process(process, seed ^ 0x5A),
            Pacer::new(job.rate_iops[1], job.rate[1], job.bs[1]).with_process(process, seed ^ 0xA5),
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
            bs: [job.bs[DDIR_READ], job.bs[DDIR_WRITE]],
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

    /// Move the rate schedules `ns` later (thinktime with rate_ignore_thinktime).
    pub(crate) fn delay_pacing(&mut self, ns: u64) {
        for p in self.pacers.iter_mut() {
            p.delay(ns);
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
        let (offset, new_pass) = self.gens[file][dir].next(&mut self.rng);
        NextIo {
            file,
            offset,
            len: self.bs[dir] as usize,
            new_pass,
        }
    }
}
