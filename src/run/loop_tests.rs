//! Unit tests of both job loops against a scripted engine (hyperfine's MockExecutor seam): the
//! engine records every call and answers from a script (failures, short I/O, completions held
//! back and handed out of order), and keeps the data written in memory so that a read-back
//! reads it. The loops run for real on this thread; only the device is replaced.

use super::clock::now_ns;
use super::instance::{Published, WorkerInput, WorkerResult};
use super::queue_worker::{run_queue_worker, SlotBuffers};
use super::worker::run_worker;
use crate::engine::{Engine, Op, QueueEngine, SyncOp};
use crate::model::{IoEngine, JobSpec, RwKind, RwMode, DDIR_READ, DDIR_WRITE};
use std::io;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

const BS: usize = 4096;
const REGION: u64 = 64 << 10;

/// One call the loop made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Io {
        op: Op,
        file: usize,
        offset: u64,
        len: usize,
    },
    Sync {
        file: usize,
        op: SyncOp,
        /// Queued or in flight when it was called (the queue loop must drain first).
        outstanding: usize,
    },
    Reap {
        min: usize,
        max: usize,
        got: usize,
    },
}

/// The script and what the engine saw.
#[derive(Default)]
struct Script {
    calls: Vec<Call>,
    /// The n-th data I/O (from 1) fails with this errno.
    fail: Option<(usize, i32)>,
    /// The n-th data I/O (from 1) moves only this many bytes.
    short: Option<(usize, usize)>,
    /// The file's contents (one file); a write lands here, a read copies from here.
    disk: Vec<u8>,
    /// Flip a byte of every write as it lands (the read-back then finds a mismatch).
    corrupt: bool,
    ios: usize,
    /// Queueing engine: queued (slot, result), then in flight, completed newest first.
    queued: Vec<(u32, i64)>,
    inflight: Vec<(u32, i64)>,
}

impl Script {
    /// One data I/O: records it, moves the data, returns the scripted result.
    fn io(&mut self, file: usize, op: Op, buf: *mut u8, len: usize, offset: u64) -> i64 {
        self.calls.push(Call::Io {
            op,
            file,
            offset,
            len,
        });
        self.ios += 1;
        if let Some((_, no)) = self.fail.filter(|f| f.0 == self.ios) {
            return -i64::from(no);
        }
        let n = match self.short {
            Some((i, n)) if i == self.ios => n,
            _ => len,
        };
        let at = offset as usize;
        // SAFETY: the loop hands a buffer of at least `len` bytes, its own for this call.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, n) };
        match op {
            Op::Write => {
                self.disk[at..at + n].copy_from_slice(b);
                if self.corrupt {
                    self.disk[at + 100] ^= 0xff;
                }
            }
            Op::Read => b.copy_from_slice(&self.disk[at..at + n]),
            Op::Trim => {}
        }
        n as i64
    }

    fn sync(&mut self, file: usize, op: SyncOp) {
        let outstanding = self.queued.len() + self.inflight.len();
        self.calls.push(Call::Sync {
            file,
            op,
            outstanding,
        });
    }

    fn data_ios(&self) -> Vec<(Op, u64, usize)> {
        let io = |c: &Call| match *c {
            Call::Io {
                op, offset, len, ..
            } => Some((op, offset, len)),
            _ => None,
        };
        self.calls.iter().filter_map(io).collect()
    }
}

/// The engine: a handle on the shared script (the test reads it after the loop took the
/// engine).
#[derive(Clone)]
struct Scripted(Arc<Mutex<Script>>);

impl Scripted {
    fn new(s: Script) -> Self {
        let disk = vec![0u8; REGION as usize];
        Scripted(Arc::new(Mutex::new(Script { disk, ..s })))
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.0.lock().unwrap()
    }
}

fn as_io(r: i64) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::from_raw_os_error((-r) as i32))
    } else {
        Ok(r as usize)
    }
}

impl Engine for Scripted {
    unsafe fn io(
        &mut self,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<usize> {
        as_io(self.script().io(file, op, buf, len, offset))
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        self.script().sync(file, op);
        Ok(())
    }
}

impl QueueEngine for Scripted {
    unsafe fn queue(
        &mut self,
        slot: u32,
        file: usize,
        op: Op,
        buf: *mut u8,
        len: usize,
        offset: u64,
    ) -> io::Result<()> {
        let mut s = self.script();
        // The data moves now; the completion is held back until reaped.
        let r = s.io(file, op, buf, len, offset);
        s.queued.push((slot, r));
        Ok(())
    }

    fn submit(&mut self) -> io::Result<usize> {
        let mut s = self.script();
        let n = s.queued.len();
        let q: Vec<_> = s.queued.drain(..).collect();
        s.inflight.extend(q);
        Ok(n)
    }

    fn reap<F: FnMut(u32, i64)>(
        &mut self,
        min: usize,
        max: usize,
        _timeout_ns: Option<u64>,
        on: &mut F,
    ) -> io::Result<usize> {
        let done: Vec<(u32, i64)> = {
            let mut s = self.script();
            // Completions come back newest first (out of order), at most `max`.
            let n = s.inflight.len().min(max);
            let at = s.inflight.len() - n;
            let mut d: Vec<_> = s.inflight.drain(at..).collect();
            d.reverse();
            s.calls.push(Call::Reap { min, max, got: n });
            d
        };
        for &(slot, r) in &done {
            on(slot, r);
        }
        Ok(done.len())
    }

    fn sync(&mut self, file: usize, op: SyncOp) -> io::Result<()> {
        self.script().sync(file, op);
        Ok(())
    }

    fn trim(&mut self, _file: usize, _offset: u64, len: usize) -> io::Result<usize> {
        Ok(len)
    }
}

fn job(kind: RwKind, iodepth: u32) -> JobSpec {
    JobSpec {
        name: "j".into(),
        rw: RwMode {
            kind,
            random: false,
        },
        bs: [BS as u64; 3],
        iodepth,
        iodepth_batch_submit: iodepth,
        ioengine: if iodepth > 1 {
            IoEngine::Libaio
        } else {
            IoEngine::Psync
        },
        ..JobSpec::default()
    }
}

fn input(job: JobSpec, limit: u64) -> WorkerInput {
    WorkerInput {
        job,
        jobnum: 0,
        paths: vec!["/scripted/f0".into()],
        regions: vec![(0, REGION)],
        io_limit: Some(limit),
        seed: 0x89,
        pass_drops: Vec::new(),
        logs: Mutex::new(None),
        iolog: Mutex::new(None),
        status_lat: None,
        diag: crate::diag::Diag::default(),
        relink: None,
        flow: None,
        open_window: Mutex::new(None),
        file_locks: None,
    }
}

/// Runs the synchronous loop over `engine`.
fn run_sync(e: &Scripted, input: &WorkerInput) -> WorkerResult {
    let (p, stop) = (Published::default(), AtomicBool::new(false));
    run_worker(e.clone(), input, &p, &stop, now_ns(), 64)
}

/// Runs the queueing loop over `engine`.
fn run_queue(e: &Scripted, input: &WorkerInput) -> WorkerResult {
    let (p, stop) = (Published::default(), AtomicBool::new(false));
    let bufs = SlotBuffers::new(input.job.iodepth, BS);
    run_queue_worker(e.clone(), bufs, input, &p, &stop, now_ns(), 64)
}

fn sequential(op: Op, n: u64) -> Vec<(Op, u64, usize)> {
    (0..n).map(|i| (op, i * BS as u64, BS)).collect()
}

#[test]
fn a_size_limited_job_issues_exactly_its_size_in_both_loops() {
    let e = Scripted::new(Script::default());
    let res = run_sync(&e, &input(job(RwKind::Write, 1), 40 << 10));
    assert_eq!(e.script().data_ios(), sequential(Op::Write, 10));
    assert_eq!((res.ios[DDIR_WRITE], res.bytes[DDIR_WRITE]), (10, 40 << 10));
    assert!(res.error.is_none());

    let e = Scripted::new(Script::default());
    let res = run_queue(&e, &input(job(RwKind::Read, 4), 40 << 10));
    assert_eq!(e.script().data_ios(), sequential(Op::Read, 10));
    assert_eq!((res.ios[DDIR_READ], res.bytes[DDIR_READ]), (10, 40 << 10));
    assert!(res.error.is_none());
}

#[test]
fn a_short_io_counts_its_bytes_and_as_short() {
    let e = Scripted::new(Script {
        short: Some((2, 512)),
        ..Script::default()
    });
    let res = run_sync(&e, &input(job(RwKind::Read, 1), 16 << 10));
    assert_eq!(res.ios[DDIR_READ], 4);
    assert_eq!(res.bytes[DDIR_READ], 3 * BS as u64 + 512);
    assert_eq!(res.short[DDIR_READ], 1);
}

/// The position of each sync among the calls, counted in data I/Os before it.
fn syncs_after(calls: &[Call]) -> Vec<(usize, SyncOp, usize)> {
    let mut ios = 0;
    let mut out = Vec::new();
    for c in calls {
        match *c {
            Call::Io { .. } => ios += 1,
            Call::Sync {
                op, outstanding, ..
            } => out.push((ios, op, outstanding)),
            Call::Reap { .. } => {}
        }
    }
    out
}

#[test]
fn fsync_every_n_writes_lands_after_exactly_n_writes() {
    let mut j = job(RwKind::Write, 1);
    j.fsync = 4;
    let e = Scripted::new(Script::default());
    let res = run_sync(&e, &input(j, 48 << 10));
    let want: Vec<_> = [4, 8, 12].map(|n| (n, SyncOp::Fsync, 0)).into();
    assert_eq!(syncs_after(&e.script().calls), want);
    assert_eq!(res.syncs, 3);
}

#[test]
fn the_queue_drains_before_fsync_every_n_writes() {
    let mut j = job(RwKind::Write, 8);
    j.fdatasync = 3;
    let e = Scripted::new(Script::default());
    let res = run_queue(&e, &input(j, 36 << 10));
    // 9 writes: a sync after the 3rd, 6th and 9th, each with nothing queued or in flight.
    let want: Vec<_> = [3, 6, 9].map(|n| (n, SyncOp::Fdatasync, 0)).into();
    assert_eq!(syncs_after(&e.script().calls), want);
    assert_eq!((res.syncs, res.ios[DDIR_WRITE]), (3, 9));
}

#[test]
fn an_io_error_stops_the_job_with_its_failure() {
    let no = libc::EIO;
    let e = Scripted::new(Script {
        fail: Some((3, no)),
        ..Script::default()
    });
    let res = run_sync(&e, &input(job(RwKind::Write, 1), REGION));
    let f = res.error.expect("the failure");
    assert_eq!(
        (f.op, f.offset, f.len, f.errno),
        ("write", 2 * BS as u64, BS as u64, no)
    );
    assert_eq!(e.script().data_ios().len(), 3, "nothing issued after it");
    // fio counts the failed I/O as issued, of no bytes.
    assert_eq!(
        (res.ios[DDIR_WRITE], res.bytes[DDIR_WRITE]),
        (3, 2 * BS as u64)
    );

    let e = Scripted::new(Script {
        fail: Some((5, libc::ENOSPC)),
        ..Script::default()
    });
    let res = run_queue(&e, &input(job(RwKind::Read, 4), REGION));
    let f = res.error.expect("the failure");
    assert_eq!(
        (f.op, f.offset, f.errno),
        ("read", 4 * BS as u64, libc::ENOSPC)
    );
}

#[test]
fn continue_on_error_counts_the_errors_and_goes_on() {
    let mut j = job(RwKind::Read, 1);
    j.timing.errors.continue_on = 0b11;
    let e = Scripted::new(Script {
        fail: Some((2, libc::EIO)),
        ..Script::default()
    });
    let res = run_sync(&e, &input(j.clone(), 32 << 10));
    assert!(res.error.is_none());
    assert_eq!(e.script().data_ios(), sequential(Op::Read, 8));
    assert_eq!((res.total_err, res.first_error), (1, libc::EIO));
    assert_eq!(
        (res.ios[DDIR_READ], res.bytes[DDIR_READ]),
        (8, 7 * BS as u64)
    );

    j.iodepth = 4;
    j.ioengine = IoEngine::Libaio;
    let e = Scripted::new(Script {
        fail: Some((2, libc::EIO)),
        ..Script::default()
    });
    let res = run_queue(&e, &input(j, 32 << 10));
    assert!(res.error.is_none());
    assert_eq!((res.total_err, res.first_error), (1, libc::EIO));
    assert_eq!(
        (res.ios[DDIR_READ], res.bytes[DDIR_READ]),
        (8, 7 * BS as u64)
    );
}

#[test]
fn each_reap_respects_the_completion_batch_bounds() {
    let mut j = job(RwKind::Read, 8);
    j.iodepth_batch_complete_min = 2;
    j.iodepth_batch_complete_max = 4;
    let e = Scripted::new(Script::default());
    let res = run_queue(&e, &input(j, REGION));
    let reaps: Vec<_> = e
        .script()
        .calls
        .iter()
        .filter_map(|c| match *c {
            Call::Reap { min, max, got } => Some((min, max, got)),
            _ => None,
        })
        .collect();
    assert!(!reaps.is_empty());
    for &(min, max, got) in &reaps {
        assert_eq!(max, 4, "{reaps:?}");
        assert!((1..=4).contains(&min), "{reaps:?}");
        assert!(got <= max, "{reaps:?}");
    }
    let got: usize = reaps.iter().map(|r| r.2).sum();
    assert_eq!((got, res.ios[DDIR_READ]), (16, 16));
}

fn verifying(iodepth: u32) -> JobSpec {
    let mut j = job(RwKind::Write, iodepth);
    j.verify.kind = crate::model::verify::VerifyKind::Crc32c;
    j.verify.kind_set = true;
    j.verify.interval = BS as u32;
    j
}

#[test]
fn verify_reads_back_what_was_written() {
    for depth in [1, 4] {
        let e = Scripted::new(Script::default());
        let inp = input(verifying(depth), 32 << 10);
        let res = if depth == 1 {
            run_sync(&e, &inp)
        } else {
            run_queue(&e, &inp)
        };
        let mut want = sequential(Op::Write, 8);
        want.extend(sequential(Op::Read, 8));
        let mut got = e.script().data_ios();
        // The queue may read back in any order.
        got[8..].sort_by_key(|c| c.1);
        assert_eq!(got, want, "iodepth {depth}");
        assert!(res.error.is_none() && res.job_error == 0, "iodepth {depth}");
        assert_eq!((res.read_back_ios, res.ios[DDIR_READ]), (8, 8));
    }
}

#[test]
fn verify_catches_data_the_device_changed() {
    let e = Scripted::new(Script {
        corrupt: true,
        ..Script::default()
    });
    let res = run_sync(&e, &input(verifying(1), 32 << 10));
    assert_eq!(res.job_error, libc::EILSEQ);
}

#[test]
fn delayed_reordered_completions_count_every_io_once() {
    // Delayed, reordered completions still free each slot exactly once: a queue of 4 over 64
    // I/Os (16 refills of every slot) ends with every I/O counted once.
    let e = Scripted::new(Script::default());
    let mut j = job(RwKind::Read, 4);
    j.loops = 4;
    let res = run_queue(&e, &input(j, 4 * REGION));
    assert_eq!(res.ios[DDIR_READ], 64);
    assert_eq!(e.script().data_ios().len(), 64);
}

#[test]
fn sync_file_range_covers_the_span_before_the_next_io_and_none_after_the_last() {
    let range = |offset, len| SyncOp::Range {
        offset,
        len,
        flags: 2,
    };
    let want = vec![(2, range(0, 8192), 0), (4, range(8192, 8192), 0)];
    for depth in [1, 8] {
        let mut j = job(RwKind::Write, depth);
        j.io.sync_file_range = Some(crate::model::io::SyncFileRange { flags: 2, every: 2 });
        let e = Scripted::new(Script::default());
        let inp = input(j, 24 << 10);
        let res = if depth == 1 {
            run_sync(&e, &inp)
        } else {
            run_queue(&e, &inp)
        };
        assert_eq!(syncs_after(&e.script().calls), want, "iodepth {depth}");
        assert_eq!((res.syncs, res.ios[DDIR_WRITE]), (2, 6), "iodepth {depth}");
    }
}
