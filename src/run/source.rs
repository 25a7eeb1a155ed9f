//! What the next I/O is: its direction (fixed or by rwmixread), its file (round robin) and its
//! offset (one generator per file and direction, as fio keeps a position per direction), and
//! when it is due under rate limits, and its length (one size, or drawn per I/O from `bsrange`
//! or `bssplit`). Shared by the synchronous and the queueing worker loops. Trims are the third
//! direction; `trimwrite` alternates a trim and a write of the same block.

use super::instance::WorkerInput;
use crate::model::verify::VerifyKind;
use crate::model::{RwKind, Strided, DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use crate::workload::bsize::BlockSizer;
use crate::workload::fileservice::FileChooser;
use crate::workload::offsets::{lend_map, shares_random_map, GenParams, OffsetGen};
use crate::workload::openfiles::OpenWindow;
use crate::workload::rate::Pacer;
use crate::workload::rng::Rng;

/// `zonemode=strided` in progress: the zone the (single) file's generators are in.
#[derive(Clone, Copy)]
struct ZoneWalk {
    z: Strided,
    /// Bytes transferred in the current zone.
    bytes: u64,
    /// The zone's start, relative to the region.
    zone: u64,
    /// The region's start and length.
    base: u64,
    len: u64,
    /// A zone shorter than this at the region's end is skipped.
    min: u64,
}

pub(crate) struct IoSource {
    gens: Vec<[OffsetGen; 3]>,
    pub rng: Rng,
    fixed_dir: Option<usize>,
    mix: u64,
    pacers: [Pacer; 3],
    pub paced: bool,
    /// Sizes per direction (indexed like `gens`' arrays).
    sizers: [BlockSizer; 3],
    /// Every I/O has its direction's one size (no draw, no fit check).
    fixed: bool,
    /// `bs_is_seq_rand`: sizes come from the read sizer for sequential offsets, the write one
    /// for random offsets.
    seq_rand: bool,
    /// `rw=randread:N`: a new random offset every `seq_nr` I/Os; `seq_left` counts down.
    seq_nr: u32,
    seq_left: u32,
    strided: Option<ZoneWalk>,
    files: FileChooser,
    /// Reads and writes share each file's random map (see `offsets::lend_map`).
    shared_map: bool,
    /// trimwrite: the trim whose block the next write rewrites (file, offset, length).
    trimmed: Option<(usize, u64, u64)>,
    trimwrite: bool,
    /// None of the above is in use (fixed sizes, fresh offsets, files in turn, no zones, no
    /// shared map, no trimwrite): `next` takes the short way, as before these options existed.
    simple: bool,
    /// The next file of the short way's round robin.
    rr: usize,
    /// openfiles below the number of files: the file service chooses among the window's
    /// slots, and a slot's file that is done is closed and the next one opened.
    window: Option<OpenWindow>,
    /// A time-based job wraps its files without closing them (as fio's).
    window_rotates: bool,
    /// The file that could not be reopened, for the worker to end the job with.
    open_error: Option<(usize, std::io::Error)>,
}

/// One I/O to do.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NextIo {
    pub file: usize,
    pub offset: u64,
    pub len: usize,
    /// The offset starts a second or later pass over the file's region (see `OffsetGen::next`),
    /// or the file was just reopened (openfiles); then check [`IoSource::take_open_error`].
    pub new_pass: bool,
}

impl IoSource {
    pub(crate) fn new(input: &WorkerInput) -> Self {
        let job = &input.job;
        let seed = input.seed;
        // Strided zones (fio allows them with one file only): the generators start on the first.
        let strided = match (job.strided(), input.regions.as_slice()) {
            (Some(z), &[(base, len)]) => Some(ZoneWalk {
                z,
                bytes: 0,
                zone: 0,
                base,
                len,
                min: job.min_bs(),
            }),
            _ => None,
        };
        let window = |len: u64| strided.as_ref().map_or(len, |w| w.z.range.min(len));
        let gens = input
            .regions
            .iter()
            .enumerate()
            .map(|(i, &(off, len))| {
                let g = |d: usize| {
                    // Trim's salt keeps its seed apart from the next file's read generator.
                    let salt = if d == DDIR_TRIM { 0x7E1A } else { 0 };
                    OffsetGen::new(
                        off,
                        window(len),
                        &GenParams::of(job, d),
                        seed.wrapping_add((i * 2 + d) as u64 * 0x9E37) ^ salt,
                    )
                };
                [g(DDIR_READ), g(DDIR_WRITE), g(DDIR_TRIM)]
            })
            .collect();
        let process = job.timing.rate_process;
        let pacer = |d: usize, salt: u64| {
            let (iops, bytes, bs) = job.pacing(d);
            Pacer::new(iops, bytes, bs).with_process(process, seed ^ salt)
        };
        let pacers = [
            pacer(DDIR_READ, 0x5A),
            pacer(DDIR_WRITE, 0xA5),
            pacer(DDIR_TRIM, 0x3C),
        ];
        let window = input.open_window.lock().ok().and_then(|mut w| w.take());
        let slots = window.as_ref().map_or(input.regions.len(), OpenWindow::len);
        // fio seeds the write sizes as the read sizes when the job verifies: a later read job
        // (or verify_only) with the same options draws each block at the size it was written.
        let write_bs_seed = if job.verify.kind == VerifyKind::None {
            seed.wrapping_add(1)
        } else {
            seed
        };
        let mut s = IoSource {
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
            sizers: [
                BlockSizer::new(job, DDIR_READ, seed),
                BlockSizer::new(job, DDIR_WRITE, write_bs_seed),
                BlockSizer::new(job, DDIR_TRIM, seed.wrapping_add(2)),
            ],
            fixed: !job.blocks.is_seq_rand
                && (0..3).all(|d| job.bs_range(d).0 == job.bs_range(d).1),
            seq_rand: job.blocks.is_seq_rand,
            seq_nr: job.blocks.rw_seq_nr,
            // The countdown fires on the first I/O (fio's write_iolog shows rw=randread:4 as a
            // random offset, three after it, a random offset, ...).
            seq_left: 1,
            strided,
            files: FileChooser::new(job, slots, seed),
            shared_map: shares_random_map(job),
            trimmed: None,
            trimwrite: job.rw.kind == RwKind::TrimWrite,
            simple: false,
            rr: 0,
            window_rotates: !job.time_based,
            window,
            open_error: None,
        };
        s.simple = s.window.is_none()
            && !s.trimwrite
            && s.fixed
            && s.seq_nr == 1
            && s.strided.is_none()
            && !s.shared_map
            && s.files.is_plain_round_robin();
        s
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

    /// Move the rate schedules `ns` later (thinktime with rate_ignore_thinktime).
    pub(crate) fn delay_pacing(&mut self, ns: u64) {
        for p in self.pacers.iter_mut() {
            p.delay(ns);
        }
    }

    /// The next I/O in `dir`; files take turns.
    #[inline]
    pub(crate) fn next(&mut self, dir: usize) -> NextIo {
        if self.simple {
            let file = self.rr;
            self.rr = if file + 1 == self.gens.len() {
                0
            } else {
                file + 1
            };
            let len = self.sizers[dir].min();
            let gen = &mut self.gens[file][dir];
            let p = gen.place(&mut self.rng, true);
            let len = gen.commit(&p, len);
            return NextIo {
                file,
                offset: p.offset,
                len: len as usize,
                new_pass: p.new_pass,
            };
        }
        if let Some((file, offset, len)) = self.trimmed.take() {
            // The write of trimwrite: the block just trimmed (fio's last trim offset).
            return NextIo {
                file,
                offset,
                len: len as usize,
                new_pass: false,
            };
        }
        let gens = &mut self.gens;
        let window = &self.window;
        let (slot, chosen) = self.files.next(|s| {
            let f = window.as_ref().map_or(s, |w| w.file(s));
            gens[f][dir].pass_complete()
        });
        let mut file = slot;
        let mut opened = false;
        if let Some(w) = &mut self.window {
            file = w.file(slot);
            // fio closes a file once its region is done and opens another in its place.
            if self.window_rotates && self.gens[file][dir].pass_complete() {
                match w.rotate(slot) {
                    Ok(f) => {
                        opened = f != file;
                        file = f;
                    }
                    Err(e) => {
                        self.open_error = Some(e);
                        opened = true;
                    }
                }
            }
        }
        if chosen || opened {
            self.gens[file][dir].restart_pass_bytes();
        }
        // fio's ddir_seq_nr: one countdown over all files and directions; it fires on the
        // first I/O and every N-th after it (so never with N = 0, and always with N = 1).
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
        if let Some(w) = &mut self.strided {
            if w.bytes >= w.z.size {
                next_zone(w, &mut self.gens[0], &mut self.rng);
            }
        }
        if self.shared_map {
            // Reads and writes only: a third direction (trim) would join the same lending.
            let [r, w, _] = &mut self.gens[file];
            if dir == DDIR_READ {
                lend_map(w, r);
            } else {
                lend_map(r, w);
            }
        }
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
        if let Some(w) = &mut self.strided {
            w.bytes += len;
        }
        if self.trimwrite {
            self.trimmed = Some((file, p.offset, len));
        }
        NextIo {
            file,
            offset: p.offset,
            len: len as usize,
            new_pass: p.new_pass || opened,
        }
    }

    /// experimental_verify: a copy of this source as it is now (before the workload's first
    /// I/O), which generates the same I/Os again for the read-back: fio's generators reset
    /// to their seeds and its files reopened with fresh random maps. None with an openfiles
    /// window (refused with experimental_verify). Made once per job instance.
    pub(crate) fn replay_copy(&self) -> Option<IoSource> {
        if self.window.is_some() {
            return None;
        }
        Some(IoSource {
            gens: self.gens.clone(),
            rng: self.rng.clone(),
            fixed_dir: self.fixed_dir,
            mix: self.mix,
            pacers: self.pacers,
            paced: self.paced,
            sizers: self.sizers.clone(),
            fixed: self.fixed,
            seq_rand: self.seq_rand,
            seq_nr: self.seq_nr,
            seq_left: self.seq_left,
            strided: self.strided,
            files: self.files.clone(),
            shared_map: self.shared_map,
            trimmed: self.trimmed,
            trimwrite: self.trimwrite,
            simple: self.simple,
            rr: self.rr,
            window: None,
            window_rotates: self.window_rotates,
            open_error: None,
        })
    }

    /// openfiles: the file that could not be reopened, and why (checked on `new_pass`).
    #[cold]
    pub(crate) fn take_open_error(&mut self) -> Option<(usize, std::io::Error)> {
        self.open_error.take()
    }
}

/// fio's `setup_strided_zone_mode`: after `zonesize` bytes, the next zone starts `zonerange +
/// zoneskip` further, back at the region's start past its end.
fn next_zone(w: &mut ZoneWalk, gens: &mut [OffsetGen], rng: &mut Rng) {
    w.bytes = 0;
    w.zone += w.z.step;
    if w.zone >= w.len || w.len - w.zone < w.min {
        w.zone = 0;
    }
    let window = w.z.range.min(w.len - w.zone);
    let seed = rng.next_u64();
    for g in gens.iter_mut() {
        g.rebase(w.base + w.zone, window, seed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{JobSpec, RwMode};

    fn source(job: JobSpec, region: u64) -> IoSource {
        let input = WorkerInput {
            job,
            jobnum: 0,
            paths: Vec::new(),
            regions: vec![(0, region)],
            io_limit: None,
            seed: 0x89,
            pass_drops: Vec::new(),
            logs: std::sync::Mutex::new(None),
            iolog: std::sync::Mutex::new(None),
            status_lat: None,
            diag: crate::diag::Diag::default(),
            relink: None,
            flow: None,
            open_window: std::sync::Mutex::new(None),
            file_locks: None,
        };
        IoSource::new(&input)
    }

    fn strided(rw: RwKind, random: bool, bs: u64) -> JobSpec {
        let mut j = JobSpec {
            rw: RwMode { kind: rw, random },
            bs: [bs; 3],
            ..JobSpec::default()
        };
        j.blocks.strided = true;
        j.blocks.zone_range = 256 << 10;
        j.blocks.zone_size = 128 << 10;
        j.blocks.zone_skip = 128 << 10;
        j
    }

    #[test]
    fn strided_zones_walk_as_fio_writes_them_in_its_iolog() {
        // fio 3.33, rw=read bs=64k size=1m zonerange=256k zonesize=128k zoneskip=128k, from its
        // write_iolog: 0 64 384 448 768 832, then back to 0 (KiB).
        let mut s = source(strided(RwKind::Read, false, 64 << 10), 1 << 20);
        let offs: Vec<u64> = (0..8).map(|_| s.next(DDIR_READ).offset >> 10).collect();
        assert_eq!(offs, vec![0, 64, 384, 448, 768, 832, 0, 64]);
    }

    #[test]
    fn strided_random_offsets_stay_in_the_current_zone() {
        let mut s = source(strided(RwKind::Read, true, 4096), 1 << 20);
        // 32 I/Os of 4 KiB (zonesize 128k) per zone; zones start at 0, 384k, 768k.
        for round in 0..6u64 {
            let zone = [0u64, 384 << 10, 768 << 10][(round % 3) as usize];
            let mut v: Vec<u64> = (0..32).map(|_| s.next(DDIR_READ).offset).collect();
            assert!(
                v.iter()
                    .all(|&o| o >= zone && o + 4096 <= zone + (256 << 10)),
                "{round}"
            );
            v.sort_unstable();
            v.dedup();
            assert_eq!(v.len(), 32, "the random map holds within a zone");
        }
    }

    #[test]
    fn random_offset_every_nth_io_counts_over_the_whole_job() {
        let mut j = strided(RwKind::Read, true, 4096);
        j.blocks.strided = false;
        j.blocks.zone_size = 0;
        j.blocks.rw_seq_nr = 4;
        let mut s = source(j, 64 << 20);
        let v: Vec<u64> = (0..12).map(|_| s.next(DDIR_READ).offset).collect();
        // As fio's write_iolog for rw=randread:4: a random offset, three I/Os after it, ...
        for k in [0usize, 4, 8] {
            assert_eq!(v[k + 1], v[k] + 4096);
            assert_eq!(v[k + 3], v[k] + 3 * 4096);
        }
        assert!(v[4] != v[3] + 4096 || v[8] != v[7] + 4096);
    }

    #[test]
    fn reads_and_writes_share_one_random_map_per_file_as_fio() {
        // randrw with mixed sizes: one pass of reads and writes together covers every 4 KiB
        // block of the 1 MiB region exactly once (fio keeps one map per file).
        let mut j = JobSpec {
            rw: RwMode {
                kind: RwKind::ReadWrite,
                random: true,
            },
            ..JobSpec::default()
        };
        j.blocks.split = [0, 1, 2].map(|_| {
            vec![
                crate::model::BsSplit { bs: 4096, perc: 50 },
                crate::model::BsSplit {
                    bs: 65536,
                    perc: 50,
                },
            ]
        });
        let mut s = source(j, 1 << 20);
        let mut blocks = Vec::new();
        let mut done = 0;
        let mut dirs = [0; 2];
        while done < 1 << 20 {
            let d = s.pick_dir();
            dirs[d] += 1;
            let io = s.next(d);
            assert!(!io.new_pass);
            blocks.extend((io.offset / 4096)..((io.offset + io.len as u64) / 4096));
            done += io.len as u64;
        }
        assert_eq!(done, 1 << 20);
        blocks.sort_unstable();
        assert_eq!(blocks, (0..256).collect::<Vec<_>>());
        assert!(dirs[0] > 0 && dirs[1] > 0);
    }
}
