//! fio's `write_iolog`: a text log of the I/Os a job issues, in fio 3.33's "version 3" format.
//!
//! fio 3.33 (iolog.c, ioengines.c) opens the file in append mode when the job's thread starts
//! and writes `fio version 3 iolog`, then `TIME NAME add` for every file of the job; each file
//! gets `TIME NAME open` when the job first uses it and `TIME NAME close` when a loop ends or the
//! job ends; every I/O is one `TIME NAME ACTION OFFSET LENGTH` line written when it is issued
//! (before the engine sees it), ACTION being `read`, `write`, `trim`, `sync` or `datasync`.
//! TIME is µs since the log was opened. A sync carries no length and the offset its I/O unit
//! held last: the previous write's on a synchronous engine, 0 on a queueing one (a unit not
//! used before), which iogauge logs likewise. Several jobs naming one file each append their own
//! header and lines.
//!
//! **Differs from fio:** iogauge syncs right after every Nth write (fsync=N), also after the
//! job's last one, where fio syncs before the next write; so when the write count is a multiple
//! of N, iogauge's log (and JSON) has one more sync. Reads of a synchronous engine's verify
//! phase are not logged (fio logs them).
//!
//! Like the logs for plotting, the lines stream through one fixed buffer (`stats::sink`, flushed when
//! full); each line is formatted on the stack first, so a flush never splits one, and jobs
//! sharing a file interleave whole lines in blocks (fio: 8 KiB blocks).

use super::sink::{Line, Sink};
use std::fs::OpenOptions;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// fio's names of the sync actions (`io_ddir_name`), spaced for a line.
pub(crate) const SYNC: &[u8] = b" sync ";
/// fdatasync.
pub(crate) const DATASYNC: &[u8] = b" datasync ";
/// sync_file_range(2).
pub(crate) const SYNC_FILE_RANGE: &[u8] = b" sync_file_range ";

/// A line's room on the stack: a file name up to PATH_MAX and its numbers.
const LINE: usize = 4096 + 96;

/// fio's io_ddir_name for the directions iogauge issues (0 read, 1 write, 2 trim).
const DIR_NAMES: [&[u8]; 3] = [b" read ", b" write ", b" trim "];

/// One job instance's iolog; the worker takes it before its loop and finishes it at its end.
pub(crate) struct IoLog {
    out: Sink,
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
        // Never through a symlink planted at the name (docs/SECURITY.md).
        let f = OpenOptions::new()
            .append(true)
            .create(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
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
            out: Sink::new(f, path, "write_iolog file"),
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
        self.out.write(b"fio version 3 iolog\n");
        for f in 0..self.names.len() {
            self.file_action(now, f, b" add\n");
        }
    }

    #[inline]
    fn us(&self, now: u64) -> u64 {
        now.saturating_sub(self.start) / 1000
    }

    #[cold]
    fn file_action(&mut self, now: u64, file: usize, action: &[u8]) {
        let mut l = Line::<LINE>::new();
        l.num(self.us(now))
            .bytes(b" ")
            .bytes(&self.names[file])
            .bytes(action);
        self.out.write(l.as_bytes());
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
        let mut l = Line::<LINE>::new();
        l.num(self.us(now))
            .bytes(b" ")
            .bytes(&self.names[file])
            .bytes(DIR_NAMES[dir])
            .num(offset)
            .bytes(b" ")
            .num(len)
            .bytes(b"\n");
        self.out.write(l.as_bytes());
    }

    /// A sync of `file` issued at `now`, logged at `offset` with length 0 as fio does: `action`
    /// is one of [`SYNC`], [`DATASYNC`], [`SYNC_FILE_RANGE`].
    #[inline]
    pub(crate) fn sync(&mut self, now: u64, file: usize, action: &[u8], offset: u64) {
        if !self.open[file] {
            self.open_file(now, file);
        }
        let mut l = Line::<LINE>::new();
        l.num(self.us(now))
            .bytes(b" ")
            .bytes(&self.names[file])
            .bytes(action)
            .num(offset)
            .bytes(b" 0\n");
        self.out.write(l.as_bytes());
    }

    /// The job ended at `now`: a `close` per open file, then the buffer is written. The error
    /// names the file that is incomplete.
    #[cold]
    pub(crate) fn finish(mut self, now: u64) -> Result<(), String> {
        self.close_all(now);
        self.out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(time_based: bool, dir: &std::path::Path) -> (IoLog, PathBuf) {
        let path = dir.join("j.iolog");
        let mut job = crate::model::JobSpec {
            time_based,
            ..Default::default()
        };
        job.logs.iolog = Some(path.to_str().unwrap().into());
        let files = [PathBuf::from("/d/a"), PathBuf::from("/d/b")];
        (IoLog::open(&job, &files).unwrap().unwrap(), path)
    }

    fn lines(path: &std::path::Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_new_loop_closes_every_file_and_each_opens_at_its_next_io() {
        let d = tempfile::tempdir().unwrap();
        let (mut l, path) = log(false, d.path());
        l.begin(1_000_000);
        l.io(1_002_000, 0, 1, 0, 4096);
        l.io(1_003_000, 1, 1, 0, 4096);
        l.sync(1_004_000, 1, SYNC, 0);
        // The second loop: file 0's new pass closes both; file 1's (same loop) closes nothing.
        l.new_pass(1_005_000, 0);
        l.io(1_005_000, 0, 0, 0, 512);
        l.new_pass(1_006_000, 1);
        l.sync(1_006_000, 1, DATASYNC, 8192);
        l.io(1_007_999, 0, 2, 4096, 4096);
        l.finish(1_009_000).unwrap();
        assert_eq!(
            lines(&path),
            "fio version 3 iolog\n0 /d/a add\n0 /d/b add\n\
             2 /d/a open\n2 /d/a write 0 4096\n3 /d/b open\n3 /d/b write 0 4096\n\
             4 /d/b sync 0 0\n5 /d/a close\n5 /d/b close\n5 /d/a open\n5 /d/a read 0 512\n\
             6 /d/b open\n6 /d/b datasync 8192 0\n7 /d/a trim 4096 4096\n\
             9 /d/a close\n9 /d/b close\n"
        );
    }

    #[test]
    fn time_based_passes_keep_files_open_and_the_file_is_appended_to() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("j.iolog"), "earlier\n").unwrap();
        let (mut l, path) = log(true, d.path());
        l.begin(0);
        l.io(1000, 0, 0, 0, 4096);
        l.new_pass(2000, 0);
        l.io(2000, 0, 0, 0, 4096);
        l.finish(3000).unwrap();
        assert_eq!(
            lines(&path),
            "earlier\nfio version 3 iolog\n0 /d/a add\n0 /d/b add\n1 /d/a open\n\
             1 /d/a read 0 4096\n2 /d/a read 0 4096\n3 /d/a close\n"
        );
    }
}
