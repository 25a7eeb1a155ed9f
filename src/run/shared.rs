//! The types a running job instance shares with the threads around it and hands back: the
//! counters and phase it publishes (read by the monitor, `control` and `--status-interval`), its
//! status snapshot, its flow group, and the I/O failure that ended it.
//!
//! A leaf on purpose: it imports no module under `run/`, so the worker loops (`instance.rs` and
//! the loops), the watchers (`monitor.rs`, `control.rs`, `status.rs`), `latency_target.rs` and
//! `partial.rs` all depend on it and never on each other in a circle.

use crate::stats::{CpuTimes, DepthCounters, LatRecorder};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Worker phases as published to the monitor (0, the initial value: waiting to start).
pub(crate) const PHASE_RAMP: u8 = 1;
pub(crate) const PHASE_MEASURING: u8 = 2;
pub(crate) const PHASE_DONE: u8 = 3;

/// Counters a worker publishes for periodic samples and progress. Cache-line aligned so that
/// workers never share a line.
#[repr(align(64))]
#[derive(Debug, Default)]
pub(crate) struct Published {
    pub phase: AtomicU8,
    /// CLOCK_MONOTONIC ns when measurement (after ramp) started.
    pub meas_start_ns: AtomicU64,
    /// CLOCK_MONOTONIC ns when the worker finished.
    pub end_ns: AtomicU64,
    /// Bytes and I/Os completed since measurement start, per direction.
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    /// Of the reads counted above, the bytes and I/Os of the verify read-backs (and backlog),
    /// which periodic samples leave out, as fio's (its this_io_bytes skips them).
    pub read_back: [AtomicU64; 2],
    /// The worker ended with an error (for exitall_on_error).
    pub failed: AtomicBool,
    /// The worker's thread id (fio's pid), for `--status-interval` reports.
    pub tid: AtomicU32,
}

/// An operation that failed and ended its job: what, on which file, where, and why. (Built from
/// the worker's input by `IoFailure::new` in `instance.rs`.)
#[derive(Debug, Clone)]
pub struct IoFailure {
    /// The operation: `read`, `write`, `trim`, `fsync`, `fdatasync`, `open`, ...
    pub op: &'static str,
    /// The file it was on.
    pub path: PathBuf,
    /// The offset of the I/O (for a sync: that of the write before it).
    pub offset: u64,
    /// Its length in bytes (0 for a sync and for operations that move no data, as fio's buflen).
    pub len: u64,
    /// The error number.
    pub errno: i32,
    /// The error in words (`strerror`).
    pub message: String,
}

impl IoFailure {
    /// The failed I/O moved (or was to move) `len` bytes.
    #[cold]
    pub(super) fn with_len(mut self, len: usize) -> Self {
        self.len = len as u64;
        self
    }
}

/// `--status-interval`: a worker's snapshot for the dumps (see `status.rs`): its four interval
/// recorders (read, write, trim, sync), its CPU use and queue depth counters since measurement
/// started, copied at a 100 ms boundary.
pub(crate) struct StatusLat {
    snap: Mutex<Snapshot>,
    /// The recorders are queueing engines' `lat` (else `clat`).
    from_lat: AtomicBool,
    /// The worker uses a queueing engine.
    queued: AtomicBool,
}

/// The copy a [`StatusLat`] holds.
pub(super) struct Snapshot {
    pub recs: [LatRecorder; 4],
    /// None until the first boundary: then the dump has no CPU or depth figures to show.
    pub cpu: Option<CpuTimes>,
    /// Queueing engines' counters (synchronous engines have none: one I/O at a time).
    pub depth: Option<DepthCounters>,
}

/// What a worker hands over at a boundary besides its recorders.
pub(crate) struct WorkerState<'a> {
    /// CPU use at measurement start (the worker's baseline for its end report).
    pub cpu_start: &'a CpuTimes,
    pub depth: Option<&'a DepthCounters>,
}

impl StatusLat {
    /// Empty recorders, allocated once before the run.
    pub(crate) fn new() -> Self {
        StatusLat {
            snap: Mutex::new(Snapshot {
                recs: std::array::from_fn(|_| LatRecorder::new(0)),
                cpu: None,
                depth: None,
            }),
            from_lat: false.into(),
            queued: false.into(),
        }
    }

    /// Worker side, at an interval boundary (every 100 ms, never per I/O): copy the recorders
    /// and counters unless the reader holds them. The CPU figure costs one getrusage here.
    pub(crate) fn publish(
        &self,
        recs: &[&LatRecorder; 4],
        from_lat: bool,
        queued: bool,
        state: WorkerState,
    ) {
        if let Ok(mut mine) = self.snap.try_lock() {
            for (m, r) in mine.recs.iter_mut().zip(recs) {
                m.copy_stats_from(r);
            }
            mine.cpu = CpuTimes::now_thread()
                .ok()
                .map(|now| now.delta(state.cpu_start));
            match (&mut mine.depth, state.depth) {
                (Some(m), Some(d)) => m.clone_from(d),
                (m, d) => *m = d.cloned(),
            }
            self.from_lat.store(from_lat, Ordering::Relaxed);
            self.queued.store(queued, Ordering::Relaxed);
        }
    }

    /// Reader side: the snapshot (the worker skips its boundaries while it is held) and its
    /// (from_lat, queued) flags.
    pub(super) fn read(&self) -> (MutexGuard<'_, Snapshot>, (bool, bool)) {
        let snap = self.snap.lock().unwrap_or_else(|p| p.into_inner());
        let flags = (
            self.from_lat.load(Ordering::Relaxed),
            self.queued.load(Ordering::Relaxed),
        );
        (snap, flags)
    }
}

/// One flow group (fio's struct fio_flow): the I/Os its jobs issued (from 1) and their weights
/// (see `latency_target.rs`, which fills and reads it).
#[derive(Debug)]
pub(crate) struct FlowGroup {
    pub(super) counter: AtomicU64,
    pub(super) total_weight: AtomicU64,
}
