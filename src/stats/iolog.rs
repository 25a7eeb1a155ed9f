//! fio's `write_iolog`: a text log of the I/Os a job issues, in fio 3.33's "version 3" format.
//!
//! fio 3.33 (iolog.c, ioengines.c) opens the file in append mode when the job's thread starts
//! and writes `fio version 3 iolog`, then `TIME NAME add` for every file of the job; each file
//! gets `TIME NAME open` when the job first uses it and `TIME NAME close` when a loop ends or the
//! job ends; every I/O is one `TIME NAME ACTION OFFSET LENGTH` line written when it is issued
//! (before the engine sees it), ACTION being `read`, `write`, `trim`, `sync` or `datasync`.
//! TIME is µs since the log was opened. A sync carries no length and the offset its I/O unit
//! held last: the previous I/O's on a synchronous engine (iogauge logs the triggering write's
//! offset on every engine). Several jobs naming one file each append their own header and lines.
//!
//! Like the logs for plotting, the lines stream through one fixed buffer (`BUF`, flushed when
//! full); each line is formatted on the stack first, so a flush never splits one, and jobs
//! sharing a file interleave whole lines in blocks (fio: 8 KiB blocks).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Bytes buffered before a write.
const BUF: usize = 128 << 10;
/// A line's room on the stack: a file name up to PATH_MAX and its numbers.
const LINE: usize = 4096 + 96;

/// fio's io_ddir_name for the directions iogauge issues (0 read, 1 write, 2 trim).
const DIR_NAMES: [&[u8]; 3] = [b" read ", b" write ", b" trim "];

/// One job instance's iolog; the worker takes it before its loop and finishes it at its end.
pub(crate) struct IoLog {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    error: Option<String>,
    /// The job's file names, as fio prints them.
    names: Vec<Box<[u8]>>,
    /// Whether each file is open in the log's sense (an `open` line without its `close`).
    open: Vec<bool>,
    /// Passes each file has started, and the loop the job is in (fio closes every file at the
    /// end of a loop and opens each again at its first I/O of the next).
    passes: Vec<u32>,
    loop_no: u32,
    /// A time-based job's passes wrap within one fio loop: files stay open.
    loops_close: bool,
    /// CLOCK_MONOTONIC ns the times count from.
    start: u64,
}

/// One line on the stack.
struct Line {
    buf: [u8; LINE],
    len: usize,
}

impl Line {
    fn new() -> Self {
        Line {
            buf: [0; LINE],
            len: 0,
        }
    }

    #[inline]
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        // Names longer than the room were refused when the log was opened.
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
        self
    }

    #[inline]
    fn num(&mut self, mut v: u64) -> &mut Self {
        let mut tmp = [0u8; 20];
        let mut i = tmp.len();
        loop {
            i -= 1;
            tmp[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.bytes(&tmp[i..])
    }
}

impl IoLog {
    /// Opens (creates, appending as fio does) the job's iolog, or None when it writes none. A
    /// file that cannot be opened is an error before any I/O.
    pub(crate) fn open(
        job: &crate::model::JobSpec,
        paths: &[PathBuf],
    ) -> Result<Option<IoLog>, String> {
        let Some(p) = job.logs.iolog.as_deref() else {
            return Ok(None);
        };
        let path = PathBuf::from(p);
        let names: Vec<Box<[u8]>> = paths
            .iter()
            .map(|f| f.as_os_str().as_bytes().into())
            .collect();
        if let Some(long) = names.iter().find(|n| n.len() > LINE - 96) {
            return Err(format!(
                "job '{}': write_iolog cannot log file '{}': its name is longer than 4096 bytes",
                job.name,
                String::from_utf8_lossy(long)
            ));
        }
        let f = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| {
                format!(
                    "job '{}': cannot open write_iolog file '{}': {e}; name a file in a \
                     writable directory",
                    job.name,
                    path.display()
                )
            })?;
        let n = names.len();
        Ok(Some(IoLog {
            out: Some(BufWriter::with_capacity(BUF, f)),
            path,
            error: None,
            names,
            open: vec![false; n],
            passes: vec![0; n],
            loop_no: 0,
            loops_close: !job.time_based,
            start: 0,
        }))
    }

    /// The job's thread starts at `now` (ns): the header and an `add` line per file.
    #[cold]
    pub(crate) fn begin(&mut self, now: u64) {
        self.start = now;
        self.write(b"fio version 3 iolog\n");
        for f in 0..self.names.len() {
            self.file_action(now, f, b" add\n");
        }
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(bytes) {
                self.fail(e);
            }
        }
    }

    #[cold]
    fn fail(&mut self, e: io::Error) {
        self.error = Some(format!(
            "write_iolog file '{}' is incomplete: {e}",
            self.path.display()
        ));
        self.out = None;
    }

    #[inline]
    fn us(&self, now: u64) -> u64 {
        now.saturating_sub(self.start) / 1000
    }

    #[cold]
    fn file_action(&mut self, now: u64, file: usize, action: &[u8]) {
        let mut l = Line::new();
        l.num(self.us(now))
            .bytes(b" ")
            .bytes(&self.names[file])
            .bytes(action);
        let n = l.len;
        self.write(&l.buf[..n]);
    }

    #[cold]
    fn open_file(&mut self, now: u64, file: usize) {
        self.open[file] = true;
        self.file_action(now, file, b" open\n");
    }

    /// `file` starts a second or later pass: unless the job is time-based, a new fio loop, so
    /// every open file is closed first (each opens again at its next I/O).
    #[cold]
    pub(crate) fn new_pass(&mut self, now: u64, file: usize) {
        self.passes[file] += 1;
        if self.loops_close && self.passes[file] > self.loop_no {
            self.loop_no = self.passes[file];
            self.close_all(now);
        }
    }

    fn close_all(&mut self, now: u64) {
        for f in 0..self.open.len() {
            if self.open[f] {
                self.open[f] = false;
                self.file_action(now, f, b" close\n");
            }
        }
    }

    /// One I/O issued at `now`: `dir` 0 read, 1 write, 2 trim.
    #[inline]
    pub(crate) fn io(&mut self, now: u64, file: usize, dir: usize, offset: u64, len: u64) {
        if !self.open[file] {
            self.open_file(now, file);
        }
        let mut l = Line::new();
        l.num(self.us(now))
            .bytes(b" ")
            .bytes(&self.names[file])
            .bytes(DIR_NAMES[dir])
            .num(offset)
            .bytes(b" ")
            .num(len)
            .bytes(b"\n");
        let n = l.len;
        self.write(&l.buf[..n]);
    }

    /// A sync (fdatasync when `datasync`) of `file` issued at `now`, logged at `offset`.
    #[inline]
    pub(crate) fn sync(&mut self, now: u64, file: usize, datasync: bool, offset: u64) {
        if !self.open[file] {
            self.open_file(now, file);
        }
        let action: &[u8] = if datasync { b" datasync " } else { b" sync " };
        let mut l = Line::new();
        l.num(self.us(now))
            .bytes(b" ")
            .bytes(&self.names[file])
            .bytes(action)
            .num(offset)
            .bytes(b" 0\n");
        let n = l.len;
        self.write(&l.buf[..n]);
    }

    /// The job ended at `now`: a `close` per open file, then the buffer is written. The error
    /// names the file that is incomplete.
    #[cold]
    pub(crate) fn finish(mut self, now: u64) -> Result<(), String> {
        self.close_all(now);
        if let Some(mut out) = self.out.take() {
            if let Err(e) = out.flush() {
                self.fail(e);
            }
        }
        self.error.map_or(Ok(()), Err)
    }
}
