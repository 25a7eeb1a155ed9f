//! The monitor thread: reads the workers' published counters at absolute deadlines
//! (every bwavgtime / iopsavgtime ms after each worker's measurement start) for the periodic
//! samples, and draws the progress line on stderr when asked to.

use super::clock::{now_ns, sleep_until};
use super::shared::{Published, PHASE_DONE, PHASE_MEASURING};
use crate::stats::Reading;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Cumulative per-direction counters read at the deadlines, per worker, only while the worker
/// is measuring (`assemble` decides which readings fio would count).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub bw: TraceLog,
    pub iops: TraceLog,
}

/// The readings of one counter, delta- and varint-encoded: ≈ 12 bytes a reading instead of
/// 40, so that a 1-hour job's two traces at the default 500 ms (14,400 readings) take ≈ 170 KiB
/// and memory stays nearly flat in run length (`bench/memory.py`).
#[derive(Debug, Clone, Default)]
pub struct TraceLog {
    bytes: Vec<u8>,
    last: [u64; 5],
    len: usize,
}

impl TraceLog {
    /// Appends a reading (once per deadline, on the monitor thread).
    pub fn push(&mut self, p: TracePoint) {
        let now = [p.t_ms, p.at_ns, p.values[0], p.values[1], p.values[2]];
        for (v, last) in now.iter().zip(self.last.iter_mut()) {
            // Wrapping: any u64 sequence round-trips, decreasing ones in 10 bytes.
            let mut d = v.wrapping_sub(*last);
            *last = *v;
            while d >= 0x80 {
                self.bytes.push((d as u8) | 0x80);
                d >>= 7;
            }
            self.bytes.push(d as u8);
        }
        self.len += 1;
    }

    /// Readings recorded.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The readings, decoded (once, when the report is assembled).
    pub fn points(&self) -> Vec<TracePoint> {
        let mut out = Vec::with_capacity(self.len);
        let mut it = self.bytes.iter();
        let mut acc = [0u64; 5];
        'points: for _ in 0..self.len {
            for a in acc.iter_mut() {
                let (mut d, mut shift) = (0u64, 0u32);
                loop {
                    let Some(&b) = it.next() else {
                        break 'points;
                    };
                    d |= u64::from(b & 0x7f).wrapping_shl(shift);
                    shift += 7;
                    if b & 0x80 == 0 {
                        break;
                    }
                }
                *a = a.wrapping_add(d);
            }
            out.push(TracePoint {
                t_ms: acc[0],
                at_ns: acc[1],
                values: [acc[2], acc[3], acc[4]],
            });
        }
        out
    }
}

/// One reading: the deadline it stands for (ms since the measurement start), when the counters
/// were read (ns since the measurement start), and their values per direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TracePoint {
    pub t_ms: u64,
    pub at_ns: u64,
    pub values: [u64; 3],
}

impl TracePoint {
    /// The reading of one direction, for the sampler.
    pub fn reading(&self, d: usize) -> Reading {
        Reading {
            t_ms: self.t_ms,
            at_ns: self.at_ns,
            value: self.values[d],
        }
    }
}

/// What the monitor needs to know about one worker.
pub(crate) struct Watched {
    pub published: Arc<Published>,
    pub bw_ms: u64,
    pub iops_ms: u64,
    /// For the progress line: total bytes (size-based) or total ns incl. ramp (time-based).
    pub total_bytes: Option<u64>,
    pub total_ns: Option<u64>,
    /// 'R', 'W' or 'M' in the progress line, as fio.
    pub letter: char,
    /// I/Os the job keeps in flight (for the latency estimate in progress reports).
    pub depth: u32,
}

/// A progress snapshot, once a second, for whoever draws it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressInfo {
    /// Jobs still running, and fio's letters for them.
    pub running: usize,
    pub letters: String,
    /// 0..=1 of the whole phase (bytes or time, per job).
    pub fraction: f64,
    pub elapsed_s: u64,
    pub eta_s: u64,
    /// I/Os per second over the last second, all jobs.
    pub iops: f64,
    /// Average time per I/O over the last second, from Little's law (in-flight / IOPS), ns.
    pub op_ns: Option<f64>,
}

/// Receives progress snapshots instead of fio's `Jobs:` line.
pub(crate) type ProgressSink = Arc<dyn Fn(&ProgressInfo) + Send + Sync>;

struct State {
    started: bool,
    meas_start: u64,
    next_bw: u64,
    next_iops: u64,
    trace: Trace,
}

const POLL_NS: u64 = 20_000_000;
const PROGRESS_NS: u64 = 1_000_000_000;

/// Run until `done` is set (all workers joined); returns one trace per watched worker.
pub(crate) fn monitor(
    watched: &[Watched],
    done: &AtomicBool,
    progress: bool,
    sink: Option<&ProgressSink>,
    mut control: Option<&mut super::control::Control<'_>>,
    status: Option<(u64, &(dyn Fn() + Sync))>,
) -> Vec<Trace> {
    let progress = progress || sink.is_some();
    let t0 = now_ns();
    let mut states: Vec<State> = watched
        .iter()
        .map(|_| State {
            started: false,
            meas_start: 0,
            next_bw: u64::MAX,
            next_iops: u64::MAX,
            trace: Trace::default(),
        })
        .collect();
    let mut next_progress = t0 + PROGRESS_NS;
    // --status-interval: every interval after the phase started (fio's status dumps).
    let mut next_status = status.map_or(u64::MAX, |(every, _)| t0 + every.max(1));
    let mut drew = false;
    let mut last = (t0, 0u64);
    loop {
        let finished = done.load(Ordering::Acquire);
        let now = now_ns();
        let mut wake = now + POLL_NS;
        for (w, s) in watched.iter().zip(states.iter_mut()) {
            let phase = w.published.phase.load(Ordering::Acquire);
            if !s.started && phase >= PHASE_MEASURING {
                s.started = true;
                s.meas_start = w.published.meas_start_ns.load(Ordering::Relaxed);
                s.next_bw = s.meas_start + w.bw_ms.max(1) * 1_000_000;
                s.next_iops = s.meas_start + w.iops_ms.max(1) * 1_000_000;
            }
            if !s.started || phase != PHASE_MEASURING {
                continue;
            }
            let bw_ns = w.bw_ms.max(1) * 1_000_000;
            if now >= s.next_bw {
                s.trace.bw.push(read(
                    s.meas_start,
                    bw_ns,
                    &w.published.bytes,
                    &w.published.read_back[0],
                ));
                s.next_bw = next_deadline(s.meas_start, bw_ns);
            }
            let iops_ns = w.iops_ms.max(1) * 1_000_000;
            if now >= s.next_iops {
                s.trace.iops.push(read(
                    s.meas_start,
                    iops_ns,
                    &w.published.ios,
                    &w.published.read_back[1],
                ));
                s.next_iops = next_deadline(s.meas_start, iops_ns);
            }
            wake = wake.min(s.next_bw).min(s.next_iops);
        }
        if let Some(c) = control.as_mut() {
            c.poll(now);
            wake = wake.min(c.next_wake());
        }
        if progress && now >= next_progress {
            let info = progress_info(watched, now - t0, &mut last, now);
            match sink {
                Some(f) => f(&info),
                None => {
                    draw_line(&info);
                    drew = true;
                }
            }
            next_progress += PROGRESS_NS;
        }
        if finished {
            break;
        }
        if let Some((every, report)) = status {
            if now >= next_status {
                report();
                next_status = next_deadline(t0, every.max(1));
            }
            wake = wake.min(next_status);
        }
        if progress {
            wake = wake.min(next_progress);
        }
        sleep_until(wake);
    }
    if drew {
        // Clear the progress line so that later stderr output starts clean.
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
    states.into_iter().map(|s| s.trace).collect()
}

/// Read the counters now, for the latest deadline passed (one reading even when the monitor
/// overslept several deadlines: the interval's rate stays right, see `stats::periodic`).
/// The reads are counted without the verify read-backs among them, which fio's samples leave
/// out. The worker stores the read-back count before the reads and this loads it after them,
/// so a read-back already in the reads is always subtracted: a sample can miss a read for a
/// moment, never count a read-back.
fn read(
    meas_start: u64,
    interval_ns: u64,
    counters: &[AtomicU64; 3],
    read_back: &AtomicU64,
) -> TracePoint {
    let at_ns = now_ns().saturating_sub(meas_start);
    let mut values = load3(counters);
    values[0] = values[0].saturating_sub(read_back.load(Ordering::Relaxed));
    TracePoint {
        t_ms: at_ns / interval_ns * interval_ns / 1_000_000,
        at_ns,
        values,
    }
}

/// The first deadline after now (deadlines are k·interval after the measurement start).
fn next_deadline(meas_start: u64, interval_ns: u64) -> u64 {
    let since = now_ns().saturating_sub(meas_start);
    meas_start + (since / interval_ns + 1) * interval_ns
}

fn load3(a: &[AtomicU64; 3]) -> [u64; 3] {
    [
        a[0].load(Ordering::Relaxed),
        a[1].load(Ordering::Relaxed),
        a[2].load(Ordering::Relaxed),
    ]
}

fn progress_info(
    watched: &[Watched],
    elapsed_ns: u64,
    last: &mut (u64, u64),
    now: u64,
) -> ProgressInfo {
    let running: Vec<&Watched> = watched
        .iter()
        .filter(|w| w.published.phase.load(Ordering::Relaxed) != PHASE_DONE)
        .collect();
    let letters: String = running.iter().map(|w| w.letter).collect();
    let mut frac: f64 = 0.0;
    for w in watched {
        let f = if w.published.phase.load(Ordering::Relaxed) == PHASE_DONE {
            1.0
        } else if let Some(t) = w.total_ns {
            elapsed_ns as f64 / t.max(1) as f64
        } else if let Some(b) = w.total_bytes {
            let done: u64 = load3(&w.published.bytes).iter().sum();
            done as f64 / b.max(1) as f64
        } else {
            0.0
        };
        frac += f.min(1.0);
    }
    frac /= watched.len().max(1) as f64;
    let eta_s = if frac > 0.0 {
        ((elapsed_ns as f64 / frac - elapsed_ns as f64) / 1e9) as u64
    } else {
        0
    };
    // Counters restart at the end of ramp_time; a drop just restarts the rate.
    let ios: u64 = watched
        .iter()
        .map(|w| load3(&w.published.ios).iter().sum::<u64>())
        .sum();
    let dt = now.saturating_sub(last.0).max(1) as f64 / 1e9;
    let iops = ios.saturating_sub(last.1) as f64 / dt;
    *last = (now, ios);
    let depth: u32 = running.iter().map(|w| w.depth.max(1)).sum();
    ProgressInfo {
        running: running.len(),
        letters,
        fraction: frac,
        elapsed_s: elapsed_ns / 1_000_000_000,
        eta_s,
        iops,
        op_ns: (iops > 0.0 && depth > 0).then(|| depth as f64 / iops * 1e9),
    }
}

/// fio's `Jobs: 1 [W][42.0%][eta 00m:03s]` line.
fn draw_line(p: &ProgressInfo) {
    let _ = write!(
        std::io::stderr(),
        "\rJobs: {} [{}][{:.1}%][eta {:02}m:{:02}s]\x1b[K",
        p.running,
        p.letters,
        p.fraction * 100.0,
        p.eta_s / 60,
        p.eta_s % 60
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_log_round_trips_and_is_compact() {
        let mut log = TraceLog::default();
        let mut want = Vec::new();
        for k in 1..=7200u64 {
            let p = TracePoint {
                t_ms: k * 500,
                at_ns: k * 500_000_000 + (k * 7919) % 1_000_000,
                values: [k * 10_240_000, 0, k * 3],
            };
            log.push(p);
            want.push(p);
        }
        // Odd sequences round-trip too: a counter going down, extremes.
        for p in [
            TracePoint {
                t_ms: 1,
                at_ns: 0,
                values: [u64::MAX, 5, 0],
            },
            TracePoint {
                t_ms: u64::MAX,
                at_ns: u64::MAX,
                values: [0, u64::MAX, 1],
            },
        ] {
            log.push(p);
            want.push(p);
        }
        assert_eq!(log.len(), want.len());
        assert_eq!(log.points(), want);
        // ≈ 13 bytes a reading (a 1-hour job at 500 ms: 7,200 readings in < 100 KiB).
        assert!(log.bytes.len() < 7200 * 14 + 60, "{}", log.bytes.len());
        assert!(TraceLog::default().points().is_empty());
    }
}
