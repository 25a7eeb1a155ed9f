//! fio's data verification, bit for bit with fio 3.33 (verify.c, verify.h, crc/): every written
//! block carries, per `verify_interval`, a 40-byte header (magic 0xacca, type, length, seed,
//! offset, time, thread, numberio, crc32c of the header) followed by the checksum of the rest,
//! so fio's `verify_only` accepts data iogauge wrote and the other way round. Checking a block
//! reports a mismatch on stderr in fio's words. Filling and checking allocate nothing; the log
//! of written blocks is sized once, from the job's regions.

use super::buffers::{fill_pattern, fill_percentage};
use super::rng::Rng;
use crate::model::verify::{resolve_interval, VerifyKind, VerifySpec};
use crate::model::{JobSpec, RwKind, DDIR_READ, DDIR_TRIM, DDIR_WRITE};
use sha2::Digest;
use std::collections::VecDeque;
use std::path::Path;

/// fio's FIO_HDR_MAGIC.
pub(crate) const MAGIC: u16 = 0xacca;
/// sizeof(struct verify_header) in fio 3.33.
pub(crate) const HDR_LEN: usize = 40;
/// fio's errno for a verification failure (EILSEQ).
pub(crate) const EILSEQ: i32 = libc::EILSEQ;

fn csum_len(kind: VerifyKind) -> usize {
    kind.csum_len()
}

/// Header plus checksum bytes at the start of each interval (fio's hdr_size).
pub(crate) fn hdr_size(kind: VerifyKind) -> usize {
    kind.hdr_size()
}

fn name(kind: VerifyKind) -> &'static str {
    kind.name()
}

/// fio's crc32c (crc32c_sw/crc32c_intel): Castagnoli, initial ~0, no final inversion.
pub(crate) fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// fio's crc32: polynomial 0x04C11DB7, most significant bit first, initial 0, no inversion.
const FIO_CRC32: crc::Algorithm<u32> = crc::Algorithm {
    width: 32,
    poly: 0x04C1_1DB7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0x89A1_897F,
    residue: 0,
};
/// fio's crc64: reflected table of 0x95AC9329AC4BC9B5 (the reverse of 0xAD93D23594C935A9),
/// initial 0, no inversion.
const FIO_CRC64: crc::Algorithm<u64> = crc::Algorithm {
    width: 64,
    poly: 0xAD93_D235_94C9_35A9,
    init: 0,
    refin: true,
    refout: true,
    xorout: 0,
    check: 0xE9C6_D914_C4B8_D9CA,
    residue: 0,
};
static CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&FIO_CRC32);
static CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&FIO_CRC64);
/// fio's crc16: the kernel's (0x8005 reflected, initial 0): CRC-16/ARC.
static CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_ARC);
/// fio's crc7: the kernel's (x^7 + x^3 + 1, initial 0): CRC-7/MMC.
static CRC7: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_7_MMC);

/// fio 3.33's sha256 (crc/sha256.c): SHA-256 rounds, but the message length is appended
/// little-endian and the stored "digest" is the low byte of each state word followed by the
/// rest of the last 64-byte block the update left in the same buffer.
fn fio_sha256(data: &[u8], out: &mut [u8]) {
    let mut state: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let full = data.len() / 64 * 64;
    for block in data[..full].chunks_exact(64) {
        sha2::compress256(
            &mut state,
            &[*sha2::digest::generic_array::GenericArray::from_slice(
                block,
            )],
        );
    }
    let rem = &data[full..];
    let mut last = [0u8; 64];
    last[..rem.len()].copy_from_slice(rem);
    last[rem.len()] = 0x80;
    let bits = (data.len() as u64).wrapping_mul(8).to_le_bytes();
    if rem.len() >= 56 {
        sha2::compress256(
            &mut state,
            &[*sha2::digest::generic_array::GenericArray::from_slice(
                &last,
            )],
        );
        last = [0u8; 64];
    }
    last[56..].copy_from_slice(&bits);
    sha2::compress256(
        &mut state,
        &[*sha2::digest::generic_array::GenericArray::from_slice(
            &last,
        )],
    );
    for (o, s) in out.iter_mut().zip(state.iter()) {
        *o = *s as u8;
    }
    out[8..64].copy_from_slice(&last[8..64]);
}

/// fio 3.33's sha512 (verify.c fill_sha512): update without final, into the stored field, so
/// the field holds the message's last `len % 128` bytes and then bytes `len % 128..128` of its
/// first block. (Later fio versions compute a real SHA-512.)
fn fio_sha512(data: &[u8], out: &mut [u8]) {
    let n = data.len();
    if n < 128 {
        out[..n].copy_from_slice(data);
        out[n..128].fill(0);
        return;
    }
    let r = n % 128;
    out[..r].copy_from_slice(&data[n - r..]);
    out[r..128].copy_from_slice(&data[r..128]);
}

/// The checksum of `data` as fio stores it (`out` is `csum_len(kind)` bytes).
fn compute(kind: VerifyKind, data: &[u8], out: &mut [u8]) {
    match kind {
        VerifyKind::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        VerifyKind::Crc64 => out.copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
        VerifyKind::Crc32 => out.copy_from_slice(&CRC32.checksum(data).to_le_bytes()),
        VerifyKind::Crc32c => out.copy_from_slice(&fio_crc32c(data).to_le_bytes()),
        VerifyKind::Crc16 => out.copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
        VerifyKind::Crc7 => out[0] = CRC7.checksum(data),
        VerifyKind::Sha256 => fio_sha256(data, out),
        VerifyKind::Sha512 => fio_sha512(data, out),
        VerifyKind::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
        VerifyKind::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
        VerifyKind::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
        VerifyKind::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
        VerifyKind::Xxhash => {
            out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes());
        }
        VerifyKind::Sha1 => {
            // fio keeps SHA-1's five state words in host order.
            let d = sha1::Sha1::digest(data);
            for (o, w) in out.chunks_exact_mut(4).zip(d.chunks_exact(4)) {
                o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
            }
        }
        _ => {}
    }
}

/// The fields of fio's struct verify_header (3.33 layout, little-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    magic: u16,
    verify_type: u16,
    len: u32,
    rand_seed: u64,
    offset: u64,
    time_sec: u32,
    time_nsec: u32,
    thread: u16,
    numberio: u16,
    crc32: u32,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(a)
}

impl Header {
    /// The header at the start of `b`; a chunk shorter than a header (verify=pattern, which
    /// has none, on blocks of a few bytes) reads as zero-padded.
    fn read(b: &[u8]) -> Header {
        let mut padded = [0u8; HDR_LEN];
        let n = b.len().min(HDR_LEN);
        padded[..n].copy_from_slice(&b[..n]);
        let b = &padded;
        Header {
            magic: u16_at(b, 0),
            verify_type: u16_at(b, 2),
            len: u32_at(b, 4),
            rand_seed: u64_at(b, 8),
            offset: u64_at(b, 16),
            time_sec: u32_at(b, 24),
            time_nsec: u32_at(b, 28),
            thread: u16_at(b, 32),
            numberio: u16_at(b, 34),
            crc32: u32_at(b, 36),
        }
    }

    /// Writes the header, its crc32c over the first 36 bytes included.
    fn write(&self, b: &mut [u8]) {
        b[0..2].copy_from_slice(&self.magic.to_le_bytes());
        b[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
        b[4..8].copy_from_slice(&self.len.to_le_bytes());
        b[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        b[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        b[32..34].copy_from_slice(&self.thread.to_le_bytes());
        b[34..36].copy_from_slice(&self.numberio.to_le_bytes());
        let crc = fio_crc32c(&b[..36]);
        b[36..40].copy_from_slice(&crc.to_le_bytes());
    }
}

/// One written block the verify phase reads back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Written {
    pub file: usize,
    pub offset: u64,
    pub len: usize,
    /// The write's number (fio's numberio: writes issued before it).
    pub numberio: u64,
    /// The seed its data was drawn from (checked only by an experimental_verify replay of a
    /// mixed workload, as fio checks it; 0 otherwise).
    pub seed: u64,
}

/// The blocks a job instance wrote, newest write per block: one slot per `unit` bytes of each
/// file's region, allocated once.
pub(crate) struct WriteLog {
    files: Vec<FileLog>,
    unit: u64,
    /// Where the read-back cursor is: (file, slot).
    cursor: (usize, usize),
    /// verify_backlog: writes not read back yet, oldest first (file, slot, numberio), at most
    /// `fifo_cap` (then the oldest leaves the queue and waits for the final read-back).
    fifo: Option<VecDeque<(u32, u32, u64)>>,
    fifo_cap: usize,
    /// Queueing engines with verify_backlog: count the writes in flight per block, so that the
    /// backlog reads a block only after its write completed (fio's IP_F_IN_FLIGHT).
    track: bool,
    /// A random job with a random map: the blocks in the order they were written (file, slot),
    /// which is the order fio reads them back in (its io_hist_list; other jobs' blocks it
    /// sorts by offset). At most one entry per block: a job that writes more (a block twice,
    /// possible only after its map was reset) falls back to offset order.
    order: Option<VecDeque<(u32, u32)>>,
}

struct FileLog {
    start: u64,
    /// numberio + 1 (0: not written), length, and writes in flight (with `track`) per slot.
    slots: Vec<(u64, u32, u16)>,
}

impl WriteLog {
    fn new(regions: &[(u64, u64)], unit: u64, backlog: bool) -> WriteLog {
        let unit = unit.max(1);
        let files: Vec<FileLog> = regions
            .iter()
            .map(|&(start, len)| FileLog {
                start,
                slots: vec![(0, 0, 0); len.div_ceil(unit) as usize],
            })
            .collect();
        let blocks: usize = files.iter().map(|f| f.slots.len()).sum();
        WriteLog {
            files,
            unit,
            cursor: (0, 0),
            fifo: backlog.then(|| VecDeque::with_capacity(blocks.max(1))),
            fifo_cap: blocks.max(1),
            track: false,
            order: None,
        }
    }

    /// Read back in write order (a random job with a random map, as fio's list).
    fn in_write_order(mut self) -> WriteLog {
        self.order = Some(VecDeque::with_capacity(self.fifo_cap));
        self
    }

    /// A write recorded earlier at `offset` of `file` completed (with in-flight tracking).
    #[inline]
    pub(crate) fn write_done(&mut self, file: usize, offset: u64) {
        if !self.track {
            return;
        }
        let f = &mut self.files[file];
        let i = (offset.saturating_sub(f.start) / self.unit) as usize;
        if let Some(s) = f.slots.get_mut(i) {
            s.2 = s.2.saturating_sub(1);
        }
    }

    /// Writes waiting in the backlog queue.
    pub(crate) fn pending(&self) -> usize {
        self.fifo.as_ref().map_or(0, |q| q.len())
    }

    /// The oldest write of the backlog queue that is still the newest of its block (fio reads
    /// the backlog back in write order); it is not read back again at the end.
    pub(crate) fn next_oldest(&mut self) -> Option<Written> {
        let q = self.fifo.as_mut()?;
        while let Some(&(f, i, n)) = q.front() {
            let fl = &mut self.files[f as usize];
            let (stored, len, busy) = fl.slots[i as usize];
            if stored == n + 1 && busy > 0 {
                // Its write is still in flight: nothing to read back yet (fio waits too).
                return None;
            }
            q.pop_front();
            if stored == n + 1 {
                fl.slots[i as usize] = (0, 0, busy);
                return Some(Written {
                    file: f as usize,
                    offset: fl.start + i as u64 * self.unit,
                    len: len as usize,
                    numberio: n,
                    seed: 0,
                });
            }
        }
        None
    }

    /// Records a write (a later write to the same block replaces the earlier one).
    #[inline]
    pub(crate) fn record(&mut self, w: Written) {
        let f = &mut self.files[w.file];
        let i = (w.offset.saturating_sub(f.start) / self.unit) as usize;
        if let Some(s) = f.slots.get_mut(i) {
            *s = (w.numberio + 1, w.len as u32, s.2 + u16::from(self.track));
            if let Some(q) = self.fifo.as_mut() {
                if q.len() == self.fifo_cap {
                    q.pop_front();
                }
                q.push_back((w.file as u32, i as u32, w.numberio));
            }
            if let Some(o) = self.order.as_mut() {
                if o.len() == self.fifo_cap {
                    self.order = None; // cold: more writes than blocks since the last read-back
                } else {
                    o.push_back((w.file as u32, i as u32));
                }
            }
        }
    }

    /// The next written block to read back, in write order (see `order`) or else in file then
    /// offset order; each is returned once.
    pub(crate) fn next(&mut self) -> Option<Written> {
        if let Some(o) = self.order.as_mut() {
            while let Some((f, i)) = o.pop_front() {
                let fl = &mut self.files[f as usize];
                let (n, len, busy) = fl.slots[i as usize];
                // Empty: read back already (by verify_backlog).
                if n != 0 {
                    fl.slots[i as usize] = (0, 0, busy);
                    return Some(Written {
                        file: f as usize,
                        offset: fl.start + i as u64 * self.unit,
                        len: len as usize,
                        numberio: n - 1,
                        seed: 0,
                    });
                }
            }
            return None;
        }
        let (mut f, mut i) = self.cursor;
        while f < self.files.len() {
            let fl = &mut self.files[f];
            while i < fl.slots.len() {
                let (n, len, busy) = fl.slots[i];
                i += 1;
                if n != 0 {
                    fl.slots[i - 1] = (0, 0, busy);
                    self.cursor = (f, i);
                    return Some(Written {
                        file: f,
                        offset: fl.start + (i as u64 - 1) * self.unit,
                        len: len as usize,
                        numberio: n - 1,
                        seed: 0,
                    });
                }
            }
            f += 1;
            i = 0;
        }
        // From the start again for the next read-back (verify with loops > 1).
        self.cursor = (0, 0);
        None
    }
}

/// Verification for one job instance: fills each write and checks each read-back.
pub(crate) struct Verifier {
    kind: VerifyKind,
    interval: usize,
    hoff: usize,
    fatal: bool,
    dump: bool,
    /// fio checks numberio for write jobs with one block size that are not time based.
    check_numberio: bool,
    /// experimental_verify on a mixed workload: the header's seed is checked against the
    /// replayed write's (fio checks it for rw jobs, taking the header's own otherwise).
    check_seed: bool,
    /// experimental_verify: the write seeds drawn again, in write order, for the replay.
    replay_seeds: Option<Rng>,
    pattern: Option<Vec<u8>>,
    pattern_offsets: Vec<usize>,
    compress: u32,
    /// buffer_pattern: the compressible part of a block holds it instead of zeros.
    buf_pattern: Option<Vec<u8>>,
    thread: u16,
    rng: Rng,
    /// What was written, for the read-back (None when the job does not read back).
    pub log: Option<WriteLog>,
    /// verify_backlog and its batch (0: read back at the end only).
    backlog: (u64, u64),
    /// Reads of a read job are checked as they complete (fio checks every read when the job
    /// does not also write).
    pub check_reads: bool,
    /// Where fio's verify-failure lines go (see [`Verifier::say_to`]).
    diag: crate::diag::Diag,
}

/// Why a block failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mismatch;

impl Verifier {
    /// None when the job does not verify. `thread` is fio's thread number (1-based).
    pub(crate) fn new(
        job: &JobSpec,
        regions: &[(u64, u64)],
        seed: u64,
        thread: u16,
    ) -> Option<Verifier> {
        let v: &VerifySpec = &job.verify;
        if !v.enabled() {
            return None;
        }
        let writes = job.rw.kind != RwKind::Read;
        let interval = resolve_interval(job);
        let pattern = v.pattern.as_ref();
        let rng = Rng::new(seed ^ 0x7e51_f1ed_0000_0001);
        // experimental_verify: no log; the read-back replays the workload (run/verify_phase.rs).
        let replay = v.experimental && writes && v.do_verify && v.kind != VerifyKind::Null;
        Some(Verifier {
            kind: v.kind,
            interval,
            hoff: v.offset as usize,
            fatal: v.fatal,
            dump: v.dump,
            // fio checks numberio only where it is sure of the last write to a block: a
            // writing job, not time based, not verify_only, one block size (td_min_bs ==
            // td_max_bs over all directions).
            check_numberio: writes && !job.time_based && !v.only && one_block_size(job),
            check_seed: replay && job.rw.kind == RwKind::ReadWrite,
            replay_seeds: replay.then(|| rng.clone()),
            pattern: pattern.map(|p| p.bytes.clone()),
            pattern_offsets: pattern.map(|p| p.offsets_at.clone()).unwrap_or_default(),
            compress: job.buffers.compress_percentage,
            buf_pattern: job.buffers.pattern.as_ref().map(|p| p.bytes.clone()),
            thread,
            rng,
            log: (writes && v.do_verify && v.kind != VerifyKind::Null && !replay).then(|| {
                let mut l = WriteLog::new(regions, job.bs[DDIR_WRITE], v.backlog > 0);
                l.track = v.backlog > 0 && job.ioengine.is_async();
                if job.rw.random && job.uses_random_map() {
                    l = l.in_write_order();
                }
                l
            }),
            backlog: (
                v.backlog,
                if v.backlog_batch == 0 {
                    v.backlog
                } else {
                    v.backlog_batch
                },
            ),
            check_reads: job.rw.kind == RwKind::Read && v.kind != VerifyKind::Null,
            diag: crate::diag::Diag::default(),
        })
    }

    /// fio's verify-failure lines go to `diag` (the run's; by default they are dropped).
    pub(crate) fn say_to(&mut self, diag: &crate::diag::Diag) {
        self.diag = diag.clone();
    }

    /// experimental_verify: the seed of the next replayed write (the writes drew theirs from
    /// the same sequence, one per write).
    #[inline]
    pub(crate) fn replayed_seed(&mut self) -> u64 {
        self.replay_seeds.as_mut().map_or(0, Rng::next_u64)
    }

    /// experimental_verify on a workload that may write a block more than once (no random map,
    /// or more bytes per loop than its region): the replay reads such a block back at its first
    /// write, holding the last one's header, so the header's write number and seed are not
    /// checked (fio 3.33 checks them and reports intact blocks as corrupt). The offset, length,
    /// header checksum and data checksum still are.
    pub(crate) fn replay_may_rewrite(&mut self) {
        self.check_numberio = false;
        self.check_seed = false;
    }

    /// How many written blocks to read back now (fio: every `verify_backlog` logged writes,
    /// `verify_backlog_batch` of them); 0 almost always.
    #[inline]
    pub(crate) fn backlog_due(&self) -> usize {
        let (every, batch) = self.backlog;
        if every == 0 {
            return 0;
        }
        let pending = self.log.as_ref().map_or(0, |l| l.pending()) as u64;
        if pending > 0 && pending.is_multiple_of(every) {
            batch as usize
        } else {
            0
        }
    }

    /// fio's pattern with the block's offset pasted at each %o.
    fn paste(&self, buf: &mut [u8], offset: u64) {
        let p = self.pattern.as_deref().unwrap_or(&[]);
        fill_pattern(buf, p);
        if self.pattern_offsets.is_empty() {
            return;
        }
        let o = offset.to_le_bytes();
        let plen = p.len();
        // The first copy gets the offset; fio then duplicates it over the buffer.
        let mut start = 0;
        while start < buf.len() {
            for &at in &self.pattern_offsets {
                for (k, b) in o.iter().enumerate() {
                    if at + k < plen && start + at + k < buf.len() {
                        buf[start + at + k] = *b;
                    }
                }
            }
            start += plen;
        }
    }

    /// Fills one write of `buf.len()` bytes at `offset`: data, then a header and checksum per
    /// interval (fio's populate_verify_io_u).
    pub(crate) fn fill_write(&mut self, buf: &mut [u8], offset: u64, numberio: u64, now_ns: u64) {
        let seed = self.rng.next_u64();
        self.fill_with(buf, offset, numberio, now_ns, seed);
    }

    fn fill_with(&mut self, buf: &mut [u8], offset: u64, numberio: u64, now_ns: u64, seed: u64) {
        if self.pattern.is_some() {
            self.paste(buf, offset);
        } else {
            let mut rng = Rng::new(seed);
            let n = buf.len();
            let bp = self.buf_pattern.as_deref();
            fill_percentage(&mut rng, buf, self.compress, n, bp);
        }
        if self.kind == VerifyKind::Null {
            return;
        }
        let hs = hdr_size(self.kind);
        let iv = if self.interval <= buf.len() {
            self.interval
        } else {
            buf.len()
        };
        let wanted = if self.kind == VerifyKind::PatternNoHdr {
            0
        } else {
            hs
        };
        for (n, chunk) in buf.chunks_mut(iv).enumerate() {
            if wanted == 0 || chunk.len() <= hs {
                continue;
            }
            let h = Header {
                magic: MAGIC,
                verify_type: self.kind.fio_type(),
                len: iv as u32,
                rand_seed: seed,
                offset: offset + (n * self.interval) as u64,
                time_sec: (now_ns / 1_000_000_000) as u32,
                time_nsec: (now_ns % 1_000_000_000) as u32,
                thread: self.thread,
                numberio: numberio as u16,
                crc32: 0,
            };
            h.write(chunk);
            let cl = csum_len(self.kind);
            let (head, data) = chunk.split_at_mut(hs);
            compute(self.kind, data, &mut head[HDR_LEN..HDR_LEN + cl]);
            if self.hoff > 0 {
                swap(chunk, self.hoff, hs);
            }
        }
    }

    /// Checks a block read back from `path` at `offset`; `expect` is the write it should hold
    /// (None for reads of a read job and for verify_only). Reports a mismatch on stderr as fio
    /// does. `buf` may be modified (the header swapped back in place).
    pub(crate) fn check(
        &mut self,
        buf: &mut [u8],
        path: &Path,
        offset: u64,
        expect: Option<&Written>,
        flags: u32,
    ) -> Result<(), Mismatch> {
        if self.kind == VerifyKind::Null {
            return Ok(());
        }
        let hs = hdr_size(self.kind);
        let iv = if self.interval <= buf.len() {
            self.interval
        } else {
            buf.len()
        };
        let buflen = buf.len();
        let mut failed = false;
        for n in 0..buflen.div_ceil(iv) {
            if failed && self.fatal {
                break;
            }
            let at = n * iv;
            let end = (at + iv).min(buflen);
            if self.hoff > 0 {
                swap(&mut buf[at..end], self.hoff, hs);
            }
            let chunk = &buf[at..end];
            let ctx = Ctx {
                path,
                offset,
                buflen,
                n,
                iv,
                flags,
            };
            if self.kind != VerifyKind::PatternNoHdr {
                if let Err(msg) = self.check_header(chunk, &ctx, expect) {
                    self.diag.line(&format!(
                        "{msg} at file {} offset {}, length {} (requested block: offset={}, length={})",
                        path.display(),
                        offset + at as u64,
                        iv,
                        offset,
                        buflen
                    ));
                    if self.dump {
                        dump_buf(chunk, path, offset + at as u64, "hdr_fail", &self.diag);
                    }
                    return Err(Mismatch);
                }
            }
            let hdr = Header::read(chunk);
            let ok = match self.kind {
                VerifyKind::Meta => match self.pattern.is_some() {
                    true => self.check_pattern(chunk, &ctx, hs),
                    false => true,
                },
                VerifyKind::Pattern => self.check_pattern(chunk, &ctx, hs),
                VerifyKind::PatternNoHdr => self.check_pattern(chunk, &ctx, 0),
                k => self.check_csum(k, chunk, &ctx, &hdr),
            };
            if !ok {
                failed = true;
                if self.dump {
                    self.dump_both(chunk, &ctx, &hdr);
                }
            }
        }
        if failed {
            Err(Mismatch)
        } else {
            Ok(())
        }
    }

    /// fio's verify_header, with its messages.
    fn check_header(&self, b: &[u8], ctx: &Ctx, expect: Option<&Written>) -> Result<(), String> {
        if b.len() < HDR_LEN {
            return Err(format!(
                "verify: bad header length {}, wanted {}",
                b.len(),
                ctx.iv
            ));
        }
        let h = Header::read(b);
        if h.magic != MAGIC {
            return Err(format!(
                "verify: bad magic header {:x}, wanted {:x}",
                h.magic, MAGIC
            ));
        }
        if h.len as usize != ctx.iv {
            return Err(format!(
                "verify: bad header length {}, wanted {}",
                h.len, ctx.iv
            ));
        }
        if let (true, Some(w)) = (self.check_seed, expect) {
            if h.rand_seed != w.seed {
                return Err(format!(
                    "verify: bad header rand_seed {}, wanted {}",
                    h.rand_seed, w.seed
                ));
            }
        }
        let want = ctx.offset + (ctx.n * self.interval) as u64;
        if h.offset != want {
            return Err(format!(
                "verify: bad header offset {}, wanted {}",
                h.offset, ctx.offset
            ));
        }
        if let (true, Some(w)) = (self.check_numberio, expect) {
            if h.numberio != w.numberio as u16 {
                return Err(format!(
                    "verify: bad header numberio {}, wanted {}",
                    h.numberio, w.numberio as u16
                ));
            }
        }
        let crc = fio_crc32c(&b[..36]);
        if crc != h.crc32 {
            return Err(format!(
                "verify: bad header crc {:x}, calculated {:x}",
                h.crc32, crc
            ));
        }
        Ok(())
    }

    fn check_csum(&self, kind: VerifyKind, b: &[u8], ctx: &Ctx, hdr: &Header) -> bool {
        let hs = hdr_size(kind);
        let cl = csum_len(kind);
        let mut got = [0u8; 128];
        // A chunk shorter than header and checksum (the tail of a read larger than the
        // blocks written, whose next block's header passed) holds no checksum to compare:
        // it is bad, not a panic (fio reads past its buffer there).
        if b.len() < hs {
            log_failure(name(kind), ctx, hdr.len, &self.diag);
            return false;
        }
        compute(kind, &b[hs..], &mut got[..cl]);
        let stored = &b[HDR_LEN..HDR_LEN + cl];
        if stored == &got[..cl] {
            return true;
        }
        log_failure(name(kind), ctx, hdr.len, &self.diag);
        self.diag
            .line(&format!("       Expected CRC: {}", hex(stored)));
        self.diag
            .line(&format!("       Received CRC: {}", hex(&got[..cl])));
        false
    }

    /// fio's verify_io_u_pattern: the bytes after the header match the pattern at the same
    /// position of the block.
    fn check_pattern(&self, b: &[u8], ctx: &Ctx, hs: usize) -> bool {
        let p = self.pattern.as_deref().unwrap_or(&[]);
        if p.is_empty() {
            return true;
        }
        let mut pat = [0u8; 512];
        let plen = p.len();
        self.paste(&mut pat[..plen], ctx.offset);
        let base = ctx.iv * ctx.n + hs;
        for (i, &got) in b[hs.min(b.len())..].iter().enumerate() {
            let want = pat[(base + i) % plen];
            if got != want {
                self.diag.line(&format!(
                    "fio: got pattern '{got:02x}', wanted '{want:02x}'. Bad bits {}",
                    (got ^ want).count_ones()
                ));
                self.diag
                    .line(&format!("fio: bad pattern block offset {i}"));
                log_failure("pattern", ctx, ctx.iv as u32, &self.diag);
                return false;
            }
        }
        true
    }

    /// verify_dump: the interval as received and as it should have been.
    #[cold]
    fn dump_both(&mut self, chunk: &[u8], ctx: &Ctx, hdr: &Header) {
        let at = ctx.offset + (ctx.n * ctx.iv) as u64;
        dump_buf(chunk, ctx.path, at, "received", &self.diag);
        let mut want = vec![0u8; ctx.buflen];
        let now = hdr.time_sec as u64 * 1_000_000_000 + hdr.time_nsec as u64;
        self.fill_with(
            &mut want,
            ctx.offset,
            hdr.numberio as u64,
            now,
            hdr.rand_seed,
        );
        let s = ctx.n * ctx.iv;
        let e = (s + ctx.iv).min(want.len());
        if self.hoff > 0 {
            swap(&mut want[s..e], self.hoff, hdr_size(self.kind));
        }
        dump_buf(&want[s..e], ctx.path, at, "expected", &self.diag);
    }
}

/// Where a check is, for the messages.
struct Ctx<'a> {
    path: &'a Path,
    offset: u64,
    buflen: usize,
    n: usize,
    iv: usize,
    flags: u32,
}

fn log_failure(what: &str, ctx: &Ctx, len: u32, diag: &crate::diag::Diag) {
    diag.line(&format!(
        "{what:.8}: verify failed at file {} offset {}, length {} (requested block: offset={}, length={}, flags={:x})",
        ctx.path.display(),
        ctx.offset + (ctx.n * ctx.iv) as u64,
        len,
        ctx.offset,
        ctx.buflen,
        ctx.flags
    ));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// fio's td_min_bs == td_max_bs: every direction's every I/O has the same size.
fn one_block_size(job: &JobSpec) -> bool {
    let ranges = [DDIR_READ, DDIR_WRITE, DDIR_TRIM].map(|d| job.bs_range(d));
    let lo = ranges.iter().map(|r| r.0).min();
    let hi = ranges.iter().map(|r| r.1).max();
    lo == hi
}

/// fio's memswp: the header moves to `at` within the interval (and back).
fn swap(chunk: &mut [u8], at: usize, len: usize) {
    if len == 0 || at + len > chunk.len() {
        return;
    }
    for i in 0..len {
        chunk.swap(i, at + i);
    }
}

/// fio's dump_buf: `<file name>.<offset>.<kind>` in the working directory.
#[cold]
fn dump_buf(b: &[u8], path: &Path, offset: u64, kind: &str, diag: &crate::diag::Diag) {
    let base = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = format!("{base}.{offset}.{kind}");
    // A new file only, never through a symlink: iogauge may run as root in a directory others
    // can write (fio truncates whatever is there).
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o644)
        .open(&name)
        .and_then(|mut f| f.write_all(b));
    match written {
        Ok(()) => diag.line(&format!("       {kind} data dumped as {name}")),
        Err(e) => diag.line(&format!("open verify buf file {name}: {e}")),
    }
}

/// Whether the job writes and then reads back (the verify phase runs).
pub(crate) fn reads_back(job: &JobSpec) -> bool {
    job.verify.enabled()
        && job.verify.do_verify
        && job.verify.kind != VerifyKind::Null
        && job.rw.kind != RwKind::Read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_checksums_match_fios_tables() {
        // Values of fio 3.33's own functions for "123456789".
        let d = b"123456789";
        let mut o = [0u8; 8];
        compute(VerifyKind::Crc32c, d, &mut o[..4]);
        assert_eq!(u32::from_le_bytes([o[0], o[1], o[2], o[3]]), !0xE306_9283);
        // fio's crc64 table: entry 1 is 0x7ad870c830358979.
        assert_eq!(CRC64.checksum(&[1]), 0x7ad8_70c8_3035_8979);
        // fio's crc32 table: entry 1 is 0x04c11db7.
        assert_eq!(CRC32.checksum(&[1]), 0x04c1_1db7);
    }

    #[test]
    fn header_round_trip_and_corruption() {
        let mut job = JobSpec::default();
        job.rw.kind = RwKind::Write;
        job.verify.kind = VerifyKind::Md5;
        let mut v = Verifier::new(&job, &[(0, 1 << 20)], 7, 1).unwrap();
        let mut buf = vec![0u8; 4096];
        v.fill_write(&mut buf, 8192, 2, 5);
        let w = Written {
            file: 0,
            offset: 8192,
            len: 4096,
            numberio: 2,
            seed: 0,
        };
        assert_eq!(u16_at(&buf, 0), MAGIC);
        assert!(v
            .check(&mut buf.clone(), Path::new("f"), 8192, Some(&w), 0x88)
            .is_ok());
        let mut bad = buf.clone();
        bad[1000] ^= 1;
        assert!(v
            .check(&mut bad, Path::new("f"), 8192, Some(&w), 0x88)
            .is_err());
        let mut moved = buf.clone();
        assert!(v
            .check(&mut moved, Path::new("f"), 4096, Some(&w), 0x88)
            .is_err());
    }

    #[test]
    fn experimental_replay_of_a_mixed_job_checks_the_seed_and_write_number() {
        let mut job = JobSpec::default();
        job.rw.kind = RwKind::ReadWrite;
        job.rw.random = true;
        job.verify.kind = VerifyKind::Crc32c;
        job.verify.experimental = true;
        let mut v = Verifier::new(&job, &[(0, 1 << 20)], 7, 1).unwrap();
        assert!(v.log.is_none(), "no log of written blocks");
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        v.fill_write(&mut a, 0, 0, 5);
        v.fill_write(&mut b, 0, 1, 6);
        // The replay draws the seeds again, in write order.
        let w = |numberio, seed| Written {
            file: 0,
            offset: 0,
            len: 4096,
            numberio,
            seed,
        };
        let (s0, s1) = (v.replayed_seed(), v.replayed_seed());
        let p = Path::new("f");
        assert!(v.check(&mut a.clone(), p, 0, Some(&w(0, s0)), 0x88).is_ok());
        // The block holds the second write while the replay expects the first.
        assert!(v
            .check(&mut b.clone(), p, 0, Some(&w(0, s0)), 0x88)
            .is_err());
        assert!(v
            .check(&mut b.clone(), p, 0, Some(&w(1, s0)), 0x88)
            .is_err());
        assert!(v.check(&mut b.clone(), p, 0, Some(&w(1, s1)), 0x88).is_ok());
        // A workload that may rewrite a block: neither is checked, the data still is.
        v.replay_may_rewrite();
        assert!(v.check(&mut b.clone(), p, 0, Some(&w(0, s0)), 0x88).is_ok());
        b[100] ^= 1;
        assert!(v.check(&mut b, p, 0, Some(&w(1, s1)), 0x88).is_err());
    }

    #[test]
    fn write_log_of_a_random_job_returns_each_block_once_in_write_order() {
        let mut l = WriteLog::new(&[(0, 16384), (4096, 8192)], 4096, false).in_write_order();
        let writes = [(0, 8192, 0), (1, 4096, 1), (0, 0, 2), (0, 8192, 3)];
        let rec = |l: &mut WriteLog, (f, o, n): (usize, u64, u64)| {
            l.record(Written {
                file: f,
                offset: o,
                len: 4096,
                numberio: n,
                seed: 0,
            })
        };
        for w in writes {
            rec(&mut l, w);
        }
        let got: Vec<_> = std::iter::from_fn(|| l.next())
            .map(|w| (w.file, w.offset, w.numberio))
            .collect();
        // As fio's list: in write order, a block rewritten read once, with its last write.
        assert_eq!(got, [(0, 8192, 3), (1, 4096, 1), (0, 0, 2)]);
        // More writes than blocks (6 here): the rest in offset order, none lost.
        for (k, w) in writes.iter().cycle().take(7).enumerate() {
            rec(&mut l, (w.0, w.1, 10 + k as u64));
        }
        let got: Vec<_> = std::iter::from_fn(|| l.next())
            .map(|w| (w.file, w.offset, w.numberio))
            .collect();
        assert_eq!(got, [(0, 0, 16), (0, 8192, 14), (1, 4096, 15)]);
    }

    #[test]
    fn write_log_returns_each_block_once_in_offset_order() {
        let mut l = WriteLog::new(&[(0, 16384), (4096, 8192)], 4096, true);
        for (f, o, n) in [(0, 8192, 0), (1, 4096, 1), (0, 0, 2), (0, 8192, 3)] {
            l.record(Written {
                file: f,
                offset: o,
                len: 4096,
                numberio: n,
                seed: 0,
            });
        }
        let got: Vec<_> = std::iter::from_fn(|| l.next())
            .map(|w| (w.file, w.offset, w.numberio))
            .collect();
        assert_eq!(got, [(0, 0, 2), (0, 8192, 3), (1, 4096, 1)]);
        // The backlog queue returns writes oldest first, skipping one a later write replaced.
        let mut l = WriteLog::new(&[(0, 16384)], 4096, true);
        for (o, n) in [(8192, 0), (0, 1), (8192, 2), (4096, 3)] {
            l.record(Written {
                file: 0,
                offset: o,
                len: 4096,
                numberio: n,
                seed: 0,
            });
        }
        assert_eq!(l.pending(), 4);
        let got: Vec<_> = std::iter::from_fn(|| l.next_oldest())
            .map(|w| (w.offset, w.numberio))
            .collect();
        assert_eq!(got, [(0, 1), (8192, 2), (4096, 3)]);
        assert_eq!(l.next(), None);
    }

    #[test]
    fn write_log_backlog_waits_for_a_write_in_flight() {
        let mut l = WriteLog::new(&[(0, 16384)], 4096, true);
        l.track = true;
        let w = |offset, numberio| Written {
            file: 0,
            offset,
            len: 4096,
            numberio,
            seed: 0,
        };
        l.record(w(0, 0));
        l.record(w(4096, 1));
        // The oldest is in flight: nothing yet, even though the next one completed.
        l.write_done(0, 4096);
        assert_eq!(l.next_oldest(), None);
        l.write_done(0, 0);
        assert_eq!(l.next_oldest().map(|w| w.offset), Some(0));
        assert_eq!(l.next_oldest().map(|w| w.offset), Some(4096));
        // Two writes of one block in flight: read back after both completed, the newer one.
        l.record(w(8192, 2));
        l.record(w(8192, 3));
        l.write_done(0, 8192);
        assert_eq!(l.next_oldest(), None);
        l.write_done(0, 8192);
        assert_eq!(l.next_oldest().map(|w| w.numberio), Some(3));
        assert_eq!(l.next_oldest(), None);
    }
}
