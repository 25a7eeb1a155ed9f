//! fio's compressed logs (`log_store_compressed=1`): `NAME_KIND.N.log.fz` is a run of zlib
//! streams, one after another, each holding the binary samples of one chunk as fio 3.33 keeps
//! them in memory (its `struct io_sample`, little-endian: time, value, direction word,
//! priority, padding, block size, then the offset with `log_offset`). `fio --inflate-log` and
//! `iogauge fio --inflate-log` ([`inflate`]) turn such a file back into the text lines.
//!
//! The writer ([`Packer`]) fills one fixed buffer with samples (no allocation per sample) and
//! compresses it as one stream when full, at the log's flush point: once per chunk, on the
//! job's thread, never per I/O.

use crate::stats::sink::{Line, Sink};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// fio's LOG_OFFSET_SAMPLE_BIT: the sample carries an offset (set in every sample's direction).
const OFFSET_BIT: u32 = 0x8000_0000;
/// fio's LOG_PRIO_SAMPLE_BIT: the priority column holds the full ioprio value.
const PRIO_BIT: u32 = 0x4000_0000;
/// fio's `struct io_sample` on 64-bit Linux: u64 time, u64 value, u32 direction word,
/// u16 priority, 2 bytes of padding, u64 block size.
const SAMPLE: usize = 32;
/// `struct io_sample_offset`: the sample, then a u64 offset.
const SAMPLE_OFFSET: usize = 40;
/// The most samples in one chunk. A chunk is compressed on the job's thread, between two
/// I/Os: 32 Ki samples (1 MiB, 1.25 with offsets) keep that pause to milliseconds, once per
/// 32 Ki entries (fio's arrays go to 1 Mi samples, compressed in a helper thread).
const MAX_SAMPLES: u64 = 32 * 1024;

/// The samples of one compressed log file, a chunk at a time.
pub(super) struct Packer {
    out: Sink,
    path: PathBuf,
    /// Samples of the current chunk, as fio lays them out.
    raw: Vec<u8>,
    /// Bytes in a full chunk: whole samples.
    cap: usize,
    /// Bytes of one sample.
    rec: usize,
    /// The direction word's flag bits (offset, priority).
    flags: u32,
    z: Compress,
    /// One compressed stream, reused for every chunk.
    zbuf: Vec<u8>,
    error: Option<String>,
}

impl Packer {
    /// `chunk_bytes`: log_compression (0: unset, then `entries` samples a chunk, fio's first
    /// array size, log_entries).
    pub(super) fn new(
        out: Sink,
        path: PathBuf,
        offset: bool,
        prio: bool,
        chunk_bytes: u64,
        entries: u64,
    ) -> Self {
        let rec = if offset { SAMPLE_OFFSET } else { SAMPLE };
        let samples = if chunk_bytes > 0 {
            (chunk_bytes / rec as u64).max(1)
        } else {
            entries.max(1)
        }
        .min(MAX_SAMPLES);
        let cap = samples as usize * rec;
        Packer {
            out,
            path,
            raw: Vec::with_capacity(cap),
            cap,
            rec,
            flags: if offset { OFFSET_BIT } else { 0 } | if prio { PRIO_BIT } else { 0 },
            // fio's deflateInit(Z_DEFAULT_COMPRESSION): level 6, zlib header.
            z: Compress::new(Compression::default(), true),
            zbuf: Vec::with_capacity(cap / 4 + 1024),
            error: None,
        }
    }

    /// One sample: `prio` is the I/O's ioprio value (fio keeps the 16 bits).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sample(&mut self, ms: u64, val: u64, dir: usize, bs: u64, off: u64, prio: u64) {
        let r = &mut self.raw;
        r.extend_from_slice(&ms.to_le_bytes());
        r.extend_from_slice(&val.to_le_bytes());
        r.extend_from_slice(&(dir as u32 | self.flags).to_le_bytes());
        r.extend_from_slice(&(prio as u16).to_le_bytes());
        r.extend_from_slice(&[0, 0]);
        r.extend_from_slice(&bs.to_le_bytes());
        if self.rec == SAMPLE_OFFSET {
            r.extend_from_slice(&off.to_le_bytes());
        }
        if r.len() + self.rec > self.cap {
            self.flush_chunk();
        }
    }

    /// Compresses the chunk as one zlib stream and writes it (whole, so instances appending
    /// to one file under per_job_logs=0 interleave whole streams).
    #[cold]
    fn flush_chunk(&mut self) {
        if self.raw.is_empty() || self.error.is_some() {
            self.raw.clear();
            return;
        }
        self.z.reset();
        self.zbuf.clear();
        let mut input = &self.raw[..];
        loop {
            if self.zbuf.capacity() - self.zbuf.len() < 1024 {
                self.zbuf.reserve(input.len() / 2 + 1024);
            }
            let before = self.z.total_in();
            match self
                .z
                .compress_vec(input, &mut self.zbuf, FlushCompress::Finish)
            {
                Ok(Status::StreamEnd) => break,
                Ok(_) => input = &input[(self.z.total_in() - before) as usize..],
                Err(e) => {
                    self.error = Some(format!(
                        "log file '{}' is incomplete: compressing it failed: {e}",
                        self.path.display()
                    ));
                    break;
                }
            }
        }
        if self.error.is_none() {
            self.out.write(&self.zbuf);
        }
        self.raw.clear();
    }

    /// Writes the last chunk; the error names the file that is incomplete.
    pub(super) fn finish(mut self) -> Result<(), String> {
        self.flush_chunk();
        let written = self.out.finish();
        match self.error {
            Some(e) => Err(e),
            None => written,
        }
    }
}

/// Text lines of the samples in a compressed log file, as fio's `--inflate-log` prints them,
/// handed to `emit` a block at a time (memory stays bounded whatever the file's size).
/// The error says what is wrong with the file; lines before it were emitted.
pub(crate) fn inflate(path: &Path, emit: &mut dyn FnMut(&[u8])) -> Result<(), String> {
    const EXPECTED: &str = "expected a .fz file that fio or iogauge wrote with \
                            log_store_compressed=1, e.g. job_bw.1.log.fz";
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open it: {e}"))?;
    let mut r = BufReader::with_capacity(64 << 10, f);
    let mut z = Decompress::new(true);
    // Inflated bytes not yet printed: less than one sample between calls.
    let mut raw: Vec<u8> = Vec::with_capacity(256 << 10);
    let mut text: Vec<u8> = Vec::with_capacity(128 << 10);
    // The stream being read: where it starts and, from its first sample, its layout.
    let mut stream: Option<u64> = None;
    let mut layout: Option<(usize, bool)> = None;
    let mut pos: u64 = 0;
    loop {
        let input = r
            .fill_buf()
            .map_err(|e| format!("cannot read it at byte {pos}: {e}"))?;
        if input.is_empty() {
            break;
        }
        if stream.is_none() {
            if input.starts_with(&[0x1f, 0x8b]) {
                return Err(format!(
                    "byte {pos} starts a gzip file, not fio's zlib streams of binary samples; \
                     {EXPECTED}"
                ));
            }
            stream = Some(pos);
        }
        if raw.capacity() - raw.len() < (64 << 10) {
            raw.reserve(64 << 10);
        }
        let (before, out_before) = (z.total_in(), z.total_out());
        let st = z
            .decompress_vec(input, &mut raw, FlushDecompress::None)
            .map_err(|e| {
                format!(
                    "the zlib stream at byte {} is not valid ({e}); {EXPECTED}",
                    stream.unwrap_or(pos)
                )
            })?;
        let used = (z.total_in() - before) as usize;
        r.consume(used);
        pos += used as u64;
        // fio reads the layout of a stream from its first sample's direction word.
        if layout.is_none() && raw.len() >= SAMPLE {
            let word = u32::from_le_bytes([raw[16], raw[17], raw[18], raw[19]]);
            let rec = if word & OFFSET_BIT != 0 {
                SAMPLE_OFFSET
            } else {
                SAMPLE
            };
            layout = Some((rec, word & PRIO_BIT != 0));
        }
        if let Some((rec, prio)) = layout {
            let whole = raw.len() - raw.len() % rec;
            for s in raw[..whole].chunks_exact(rec) {
                line(s, rec == SAMPLE_OFFSET, prio, &mut text);
                if text.len() > (120 << 10) {
                    emit(&text);
                    text.clear();
                }
            }
            raw.drain(..whole);
        }
        if st == Status::StreamEnd {
            // As fio: a partial sample at a stream's end is dropped.
            raw.clear();
            layout = None;
            stream = None;
            z.reset(true);
        } else if used == 0 && z.total_out() == out_before {
            return Err(format!(
                "the zlib stream at byte {} makes no progress; {EXPECTED}",
                stream.unwrap_or(pos)
            ));
        }
    }
    emit(&text);
    if let Some(start) = stream {
        return Err(format!(
            "the file ends inside the zlib stream that starts at byte {start} (cut short?); \
             the entries before that were printed"
        ));
    }
    if pos == 0 {
        return Err(format!(
            "the file is empty: it holds no log entry; {EXPECTED}"
        ));
    }
    Ok(())
}

/// One sample as fio's flush_samples prints it: `time, value, direction, block size[, offset],
/// priority` (the value signed; the priority 0x%04x with log_prio, else 1 for real-time).
fn line(s: &[u8], offset: bool, prio: bool, text: &mut Vec<u8>) {
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&s[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let word = u32::from_le_bytes([s[16], s[17], s[18], s[19]]);
    let pr = u64::from(u16::from_le_bytes([s[20], s[21]]));
    let val = u64_at(8) as i64;
    let mut l = Line::<160>::new();
    l.num(u64_at(0)).sep();
    if val < 0 {
        l.bytes(b"-");
    }
    l.num(val.unsigned_abs())
        .sep()
        .num(u64::from(word & !(OFFSET_BIT | PRIO_BIT)))
        .sep()
        .num(u64_at(24))
        .sep();
    if offset {
        l.num(u64_at(32)).sep();
    }
    if prio {
        l.hex4(pr);
    } else {
        l.num(u64::from(pr >> 13 == 1));
    }
    l.bytes(b"\n");
    text.extend_from_slice(l.as_bytes());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::fs::File;

    fn packed(path: &Path, offset: bool, prio: bool, chunk: u64, n: u64) {
        let sink = Sink::new(File::create(path).unwrap(), path.into(), "log file");
        let mut p = Packer::new(sink, path.into(), offset, prio, chunk, 1024);
        for i in 0..n {
            p.sample(i / 10, i * 1000, (i % 3) as usize, 4096, i * 4096, 0x2001);
        }
        p.finish().unwrap();
    }

    fn inflated(path: &Path) -> Result<String, String> {
        let mut out = Vec::new();
        inflate(path, &mut |b| out.extend_from_slice(b)).map(|()| String::from_utf8(out).unwrap())
    }

    #[test]
    fn chunks_are_whole_zlib_streams_read_back_in_order() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x_bw.1.log.fz");
        // 1024-byte chunks of 40-byte samples: 25 samples a stream, 10 000 samples.
        packed(&p, true, false, 1024, 10_000);
        let text = inflated(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 10_000);
        assert_eq!(lines[0], "0, 0, 0, 4096, 0, 1");
        assert_eq!(lines[9_999], "999, 9999000, 0, 4096, 40955904, 1");
        // Each stream a zlib stream of 25 samples (1000 bytes), as fio's inflater takes them.
        let bytes = std::fs::read(&p).unwrap();
        let mut z = Decompress::new(true);
        let mut out = Vec::with_capacity(4096);
        z.decompress_vec(&bytes, &mut out, FlushDecompress::None)
            .unwrap();
        assert_eq!(out.len(), 25 * 40);
    }

    #[test]
    fn priority_column_and_negative_values_follow_fio() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x_lat.1.log.fz");
        packed(&p, false, true, 0, 2);
        assert_eq!(
            inflated(&p).unwrap(),
            "0, 0, 0, 4096, 0x2001\n0, 1000, 1, 4096, 0x2001\n"
        );
        let mut t = Vec::new();
        let mut s = [0u8; 32];
        s[8..16].copy_from_slice(&(-5i64).to_le_bytes());
        s[20..22].copy_from_slice(&0x6004u16.to_le_bytes());
        line(&s, false, false, &mut t);
        assert_eq!(t, b"0, -5, 0, 0, 0\n");
    }

    #[test]
    fn bad_files_are_refused_with_what_is_wrong() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"").unwrap();
        assert!(inflated(&p).unwrap_err().starts_with("the file is empty"));
        std::fs::write(&p, b"0, 1, 0, 4096, 0\n").unwrap();
        assert!(inflated(&p)
            .unwrap_err()
            .starts_with("the zlib stream at byte 0 is not valid"));
        packed(&p, false, false, 0, 3000);
        let whole = std::fs::read(&p).unwrap();
        std::fs::write(&p, &whole[..whole.len() - 5]).unwrap();
        assert!(inflated(&p)
            .unwrap_err()
            .starts_with("the file ends inside the zlib stream that starts at byte"));
        assert!(inflated(&d.path().join("none"))
            .unwrap_err()
            .starts_with("cannot open it: "));
    }
}
