//! One log file written as the job runs: a fixed buffer per file, entries formatted on the
//! stack (`time, value, direction, block size[, offset], priority`) or, with
//! log_store_compressed, packed as fio's binary samples ([`super::packed`]), fio's averaging
//! windows (mean or maximum per log_avg_msec), and the first write error kept to name the file.

use super::packed::Packer;
use crate::stats::sink::{Line, Sink};
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// A log line's room: six numbers and their separators.
const LINE: usize = 160;
/// fio's LOG_MSEC_SLACK: a non-latency window this close to its end is closed early.
const MSEC_SLACK: u64 = 1;

/// fio's running mean/max of one averaging window.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Window {
    samples: u64,
    mean: f64,
    max: u64,
}

impl Window {
    fn add(&mut self, v: u64) {
        self.samples += 1;
        self.mean += (v as f64 - self.mean) / self.samples as f64;
        self.max = self.max.max(v);
    }
}

/// Where a file's entries go: text lines, or fio's compressed samples (`.log.fz`).
enum Out {
    Text(Sink),
    Packed(Packer),
}

/// log_store_compressed: how a file's samples are chunked (see [`Packer::new`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Pack {
    /// log_compression in bytes (0: unset).
    pub(super) chunk_bytes: u64,
    /// log_entries.
    pub(super) entries: u64,
}

/// One log file and its averaging windows per direction.
pub(super) struct LogFile {
    out: Out,
    pub(super) win: [Window; super::DIRS],
    pub(super) last: [u64; super::DIRS],
    /// Latency logs close a window exactly at its end; bw/iops allow fio's slack.
    inline: bool,
}

/// How entries are formatted, shared by every file of a job.
#[derive(Debug, Clone, Copy)]
pub(super) struct Format {
    /// Added to each entry's time (log_unix_epoch / log_alternate_epoch), set at the epoch.
    pub(super) time_ms: u64,
    pub(super) offset: bool,
    pub(super) prio: bool,
    pub(super) avg_ms: u64,
    pub(super) max_value: bool,
}

impl LogFile {
    /// `pack`: written as fio's compressed samples, with the entry layout of `f`.
    pub(super) fn open(
        path: PathBuf,
        per_job: bool,
        inline: bool,
        pack: Option<(Pack, Format)>,
    ) -> io::Result<Self> {
        let mut o = OpenOptions::new();
        // fio: "w" for per-job files, "a" when every instance shares one file. Never through a
        // symlink planted at the name (docs/SECURITY.md).
        o.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
        if per_job {
            o.write(true).create(true).truncate(true);
        } else {
            o.append(true).create(true);
        }
        let f = o.open(&path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create log file '{}': {e}", path.display()),
            )
        })?;
        let out = match pack {
            None => Out::Text(Sink::new(f, path, "log file")),
            Some((p, fmt)) => Out::Packed(Packer::new(
                Sink::new(f, path.clone(), "log file"),
                path,
                fmt.offset,
                fmt.prio,
                p.chunk_bytes,
                p.entries,
            )),
        };
        Ok(LogFile {
            out,
            win: [Window::default(); super::DIRS],
            last: [0; super::DIRS],
            inline,
        })
    }

    /// Text as it is (the histogram log, which is always text).
    #[inline]
    pub(super) fn write(&mut self, bytes: &[u8]) {
        if let Out::Text(s) = &mut self.out {
            s.write(bytes);
        }
    }

    /// One entry: `time, value, dir, bs[, offset], prio`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn entry(&mut self, f: Format, ms: u64, val: u64, dir: usize, bs: u64, off: u64, prio: u64) {
        let out = match &mut self.out {
            Out::Text(s) => s,
            Out::Packed(p) => {
                p.sample(ms + f.time_ms, val, dir, bs, off, prio);
                return;
            }
        };
        let mut l = Line::<LINE>::new();
        l.num(ms + f.time_ms)
            .sep()
            .num(val)
            .sep()
            .num(dir as u64)
            .sep()
            .num(bs)
            .sep();
        if f.offset {
            l.num(off).sep();
        }
        if f.prio {
            l.hex4(prio);
        } else {
            // fio prints 1 for the real-time class (3), 0 otherwise.
            l.num(u64::from(prio >> 13 == 1));
        }
        l.bytes(b"\n");
        out.write(l.as_bytes());
    }

    /// fio's add_log_sample: one entry per sample, or averaged over `avg_ms` windows.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sample(
        &mut self,
        f: Format,
        ms: u64,
        val: u64,
        dir: usize,
        bs: u64,
        off: u64,
        prio: u64,
    ) {
        if f.avg_ms == 0 {
            self.entry(f, ms, val, dir, bs, off, prio);
            return;
        }
        self.win[dir].add(val);
        if ms < self.last[dir] {
            return;
        }
        let this = ms - self.last[dir];
        if this < f.avg_ms && (self.inline || f.avg_ms - this > MSEC_SLACK) {
            return;
        }
        self.close_window(f, dir, ms);
        self.last[dir] = ms - ms % f.avg_ms;
    }

    /// fio's __add_stat_to_log: the window's mean (rounded) or maximum, if it has samples.
    pub(super) fn close_window(&mut self, f: Format, dir: usize, ms: u64) {
        let w = self.win[dir];
        if w.samples > 0 {
            let v = if f.max_value {
                w.max
            } else {
                (w.mean + 0.5) as u64
            };
            self.entry(f, ms, v, dir, 0, 0, 0);
        }
        self.win[dir] = Window::default();
    }

    pub(super) fn finish(self) -> Result<(), String> {
        match self.out {
            Out::Text(s) => s.finish(),
            Out::Packed(p) => p.finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn averaged(max_value: bool) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_lat.1.log");
        let f = Format {
            time_ms: 0,
            offset: false,
            prio: false,
            avg_ms: 100,
            max_value,
        };
        let mut l = LogFile::open(path.clone(), true, true, None).unwrap();
        // Window 1 (ms 10..99): 10 and 21 ns; at 100 ms it closes with the sample taken then.
        for (ms, v) in [(10, 10), (50, 21), (100, 30), (150, 7), (199, 8)] {
            l.sample(f, ms, v, 0, 4096, 0, 0);
        }
        // A write: its direction's window began at 0, so at 120 ms it closes at once (fio's).
        l.sample(f, 120, 1000, 1, 4096, 0, 0);
        for d in 0..2 {
            l.close_window(f, d, 230);
        }
        l.finish().unwrap();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn averaging_windows_follow_fio() {
        // Mean of 10, 21, 30 = 20.33 → 20 (rounded half up), closed at 100 ms with no block
        // size; the write's at 120 ms; then 7 and 8 → 7.5 → 8, closed by finish at 230 ms.
        assert_eq!(
            averaged(false),
            "100, 20, 0, 0, 0\n120, 1000, 1, 0, 0\n230, 8, 0, 0, 0\n"
        );
        // log_max_value: the window's maximum instead.
        assert_eq!(
            averaged(true),
            "100, 30, 0, 0, 0\n120, 1000, 1, 0, 0\n230, 8, 0, 0, 0\n"
        );
    }

    /// The same entries as text, and packed then inflated (fio's `--inflate-log`), are the
    /// same lines: per I/O and averaged, every column layout.
    #[test]
    fn packed_entries_inflate_to_the_text_lines() {
        let dir = tempfile::tempdir().unwrap();
        for (offset, prio, avg_ms) in [(false, false, 0), (true, true, 0), (true, false, 100)] {
            let f = Format {
                time_ms: 7,
                offset,
                prio,
                avg_ms,
                max_value: false,
            };
            let pack = Pack {
                chunk_bytes: 1024,
                entries: 1024,
            };
            let (t, z) = (dir.path().join("t.log"), dir.path().join("t.log.fz"));
            let mut text = LogFile::open(t.clone(), true, true, None).unwrap();
            let mut packed = LogFile::open(z.clone(), true, true, Some((pack, f))).unwrap();
            for l in [&mut text, &mut packed] {
                for i in 0..500u64 {
                    l.sample(f, i, i * 3, (i % 3) as usize, 4096, i << 12, 0x2001 + i);
                }
                l.close_window(f, 0, 600);
            }
            text.finish().unwrap();
            packed.finish().unwrap();
            let mut out = Vec::new();
            super::super::inflate(&z, &mut |b| out.extend_from_slice(b)).unwrap();
            let want = std::fs::read(&t).unwrap();
            assert!(!want.is_empty());
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
    }

    #[test]
    fn entry_columns_with_offset_and_prio() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x_clat.1.log");
        let mut l = LogFile::open(path.clone(), true, true, None).unwrap();
        let plain = Format {
            time_ms: 0,
            offset: false,
            prio: false,
            avg_ms: 0,
            max_value: false,
        };
        let full = Format {
            time_ms: 0,
            offset: true,
            prio: true,
            ..plain
        };
        l.sample(plain, 3, 12345, 1, 4096, 8192, 0x2001);
        l.sample(full, 4, 7, 0, 512, 8192, 0x6004);
        l.finish().unwrap();
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            "3, 12345, 1, 4096, 1\n4, 7, 0, 512, 8192, 0x6004\n"
        );
    }
}
