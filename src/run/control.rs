//! Run control inside one phase, driven by the monitor thread: each worker gets its own stop
//! flag, set when the run is stopped, when a steady state is reached (fio's steadystate_check,
//! once a second) or when a job ends under `exitall` / `exitall_on_error` (fio's
//! fio_terminate_threads with `exit_what`), or when a sequential check's thresholds are all
//! decided (`sequential.rs`). Only phases that use one of these get a control;
//! the others keep the shared stop flag.

use super::sequential::Watch;
use super::shared::{Published, StatusLat, PHASE_DONE, PHASE_MEASURING, PHASE_RAMP};
use crate::model::timing::{ExitWhat, SsMetric, SteadyState};
use crate::model::JobSpec;
use crate::report::sequential::SequentialRun;
use crate::report::steadystate::SteadyStateReport;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the control needs to know about one instance of the phase.
pub(crate) struct Member {
    pub published: Arc<Published>,
    pub groupid: u32,
    pub background: bool,
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
    /// The worker's 100 ms snapshot of its recorders (for a sequential watch of a percentile).
    pub status: Option<Arc<StatusLat>>,
}

/// One steady-state detection: a job instance, or a whole group with group_reporting.
struct Track {
    spec: SteadyState,
    dur: usize,
    ramp_ns: u64,
    ramp_over: bool,
    members: Vec<usize>,
    prev: (u64, u64),
    prev_time: u64,
    iops: Vec<u64>,
    bw: Vec<u64>,
    attained: bool,
    criterion: f64,
    deviation: f64,
    slope: f64,
    /// The instance whose result carries the report (the group's last).
    owner: usize,
}

impl Track {
    /// One sample a second; true when the steady state is reached.
    fn sample(&mut self, members: &[Member], now: u64, epoch: u64) -> bool {
        let running = self.members.iter().any(|&i| {
            let p = members[i].published.phase.load(Ordering::Acquire);
            p == PHASE_RAMP || p == PHASE_MEASURING
        });
        if self.attained || !running {
            return false;
        }
        if !self.ramp_over && now.saturating_sub(epoch) >= self.ramp_ns + 1_000_000_000 {
            self.ramp_over = true;
        }
        let (mut ios, mut bytes) = (0u64, 0u64);
        for &i in &self.members {
            let p = &members[i].published;
            for d in 0..3 {
                ios += p.ios[d].load(Ordering::Relaxed);
                bytes += p.bytes[d].load(Ordering::Relaxed);
            }
        }
        // The counters restart at the end of ramp_time: count from zero then.
        if ios < self.prev.0 || bytes < self.prev.1 {
            self.prev = (0, 0);
        }
        let ms = (now.saturating_sub(self.prev_time) / 1_000_000).max(1);
        self.prev_time = now;
        let (iops, bw) = (
            1000 * (ios - self.prev.0) / ms,
            1000 * (bytes - self.prev.1) / ms,
        );
        self.prev = (ios, bytes);
        if !self.ramp_over {
            return false;
        }
        if self.iops.len() == self.dur {
            self.iops.remove(0);
            self.bw.remove(0);
        }
        self.iops.push(iops);
        self.bw.push(bw);
        if self.iops.len() < self.dur {
            return false;
        }
        let y: Vec<f64> = match self.spec.metric {
            SsMetric::Iops => self.iops.iter().map(|&v| v as f64).collect(),
            SsMetric::Bw => self.bw.iter().map(|&v| v as f64).collect(),
        };
        let n = y.len() as f64;
        let mean = y.iter().sum::<f64>() / n;
        let scale = |v: f64| {
            if self.spec.percent {
                100.0 * v / mean
            } else {
                v
            }
        };
        let met = if self.spec.slope {
            // Least squares over x = 0..n-1 (fio assumes equally spaced samples).
            let sum_x = n * (n - 1.0) / 2.0;
            let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
            let sum_xy: f64 = y.iter().enumerate().map(|(i, v)| i as f64 * v).sum();
            let sum_y = mean * n;
            self.slope = (sum_xy - sum_x * sum_y / n) / (sum_x2 - sum_x * sum_x / n);
            self.criterion = scale(self.slope);
            self.criterion.abs() < self.spec.limit
        } else {
            self.deviation = y.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
            self.criterion = scale(self.deviation);
            self.criterion < self.spec.limit
        };
        if met {
            self.attained = true;
        }
        met
    }

    fn report(&self) -> SteadyStateReport {
        let pad = |v: &[u64]| {
            let mut v = v.to_vec();
            v.resize(self.dur, 0);
            v
        };
        SteadyStateReport {
            kind: self.spec_name().into(),
            limit: self.spec.limit,
            percent: self.spec.percent,
            iops_based: self.spec.metric == SsMetric::Iops,
            slope_based: self.spec.slope,
            duration: self.dur as u64,
            attained: self.attained,
            criterion: finite(self.criterion),
            max_deviation: finite(self.deviation),
            slope: finite(self.slope),
            iops: pad(&self.iops),
            bw: pad(&self.bw),
        }
    }

    fn spec_name(&self) -> &'static str {
        self.spec.fio_name()
    }
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// The phase's control, owned by the monitor thread while the phase runs.
pub(crate) struct Control<'a> {
    members: Vec<Member>,
    own: &'a [AtomicBool],
    stop: &'a AtomicBool,
    bg_stop: &'a AtomicBool,
    /// Set for exit_what=all: later phases do not start.
    end_run: &'a AtomicBool,
    exitall: bool,
    seen_done: Vec<bool>,
    tracks: Vec<Track>,
    /// Per member, its sequential watch.
    watches: Vec<Option<Watch>>,
    epoch: u64,
    next_tick: u64,
}

/// Whether a phase of these jobs needs a control.
pub(crate) fn needed(jobs: &[&JobSpec], exitall_any: bool) -> bool {
    exitall_any
        || jobs.iter().any(|j| {
            j.timing.exitall_on_error || !j.timing.ss_dur.is_zero() || j.timing.sequential.is_some()
        })
}

/// The stop flags a control sets (one value instead of four arguments).
pub(crate) struct StopFlags<'a> {
    /// Each instance's own (steadystate, exitall).
    pub own: &'a [AtomicBool],
    /// The phase's foreground jobs'.
    pub stop: &'a AtomicBool,
    /// The background jobs'.
    pub bg_stop: &'a AtomicBool,
    /// exit_what=all: later phases do not start.
    pub end_run: &'a AtomicBool,
}

impl<'a> Control<'a> {
    /// `jobs[i]` is instance i's job; `flags.own[i]` its stop flag.
    pub(crate) fn new(
        members: Vec<Member>,
        jobs: &[&JobSpec],
        flags: StopFlags<'a>,
        exitall: bool,
        start: u64,
    ) -> Self {
        let StopFlags {
            own,
            stop,
            bg_stop,
            end_run,
        } = flags;
        let mut tracks: Vec<Track> = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            let t = &j.timing;
            let dur = t.ss_dur.as_secs() as usize;
            if dur == 0 {
                continue;
            }
            let gid = members[i].groupid;
            if j.group_reporting {
                if let Some(tr) = tracks
                    .iter_mut()
                    .find(|tr| members[tr.members[0]].groupid == gid)
                {
                    tr.members.push(i);
                    tr.owner = i;
                    continue;
                }
            }
            tracks.push(Track {
                spec: t.steadystate,
                dur,
                ramp_ns: t.ss_ramp.as_nanos() as u64,
                ramp_over: t.ss_ramp.is_zero(),
                members: vec![i],
                prev: (0, 0),
                prev_time: start + j.startdelay.as_nanos() as u64,
                iops: Vec::with_capacity(dur),
                bw: Vec::with_capacity(dur),
                attained: false,
                criterion: 0.0,
                deviation: 0.0,
                slope: 0.0,
                owner: i,
            });
        }
        let watches = jobs
            .iter()
            .zip(&members)
            .map(|(j, m)| Watch::new(j, m.published.clone(), m.status.clone()))
            .collect();
        Control {
            seen_done: vec![false; members.len()],
            watches,
            members,
            own,
            stop,
            bg_stop,
            end_run,
            exitall,
            tracks,
            epoch: start,
            next_tick: start + 1_000_000_000,
        }
    }

    /// When the monitor must wake up next for this control.
    pub(crate) fn next_wake(&self) -> u64 {
        let watches = self.watches.iter().flatten().map(Watch::next_wake);
        let ss = if self.tracks.is_empty() {
            u64::MAX
        } else {
            self.next_tick
        };
        watches.fold(ss, u64::min)
    }

    /// Called by the monitor at every wake-up.
    pub(crate) fn poll(&mut self, now: u64) {
        let (stop, bg) = (
            self.stop.load(Ordering::Relaxed),
            self.bg_stop.load(Ordering::Relaxed),
        );
        for (m, own) in self.members.iter().zip(self.own) {
            if stop || (m.background && bg) {
                own.store(true, Ordering::Relaxed);
            }
        }
        if !self.tracks.is_empty() && now >= self.next_tick {
            self.next_tick += 1_000_000_000 * ((now - self.next_tick) / 1_000_000_000 + 1);
            for t in self.tracks.iter_mut() {
                if t.sample(&self.members, now, self.epoch) {
                    for &i in &t.members {
                        self.own[i].store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        for (w, own) in self.watches.iter_mut().zip(self.own) {
            if w.as_mut().is_some_and(|w| w.poll(now)) {
                own.store(true, Ordering::Relaxed);
            }
        }
        for i in 0..self.members.len() {
            if self.seen_done[i] {
                continue;
            }
            let m = &self.members[i];
            if m.published.phase.load(Ordering::Acquire) != PHASE_DONE {
                continue;
            }
            self.seen_done[i] = true;
            let failed = m.published.failed.load(Ordering::Relaxed);
            if !(self.exitall || (m.exitall_on_error && failed)) {
                continue;
            }
            let (gid, what) = (m.groupid, m.exit_what);
            for (o, own) in self.members.iter().zip(self.own) {
                if what != ExitWhat::Group || o.groupid == gid {
                    own.store(true, Ordering::Relaxed);
                }
            }
            if what == ExitWhat::All {
                self.end_run.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Each instance's sequential course.
    pub(crate) fn sequential(&self) -> Vec<Option<SequentialRun>> {
        self.watches
            .iter()
            .map(|w| w.as_ref().map(Watch::report))
            .collect()
    }

    /// Each instance's steady-state report (on the group's last instance with group_reporting).
    pub(crate) fn reports(&self) -> Vec<Option<SteadyStateReport>> {
        let mut out: Vec<Option<SteadyStateReport>> = vec![None; self.members.len()];
        for t in &self.tracks {
            out[t.owner] = Some(t.report());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn track(spec: SteadyState, dur: usize) -> Track {
        Track {
            spec,
            dur,
            ramp_ns: 0,
            ramp_over: true,
            members: vec![0],
            prev: (0, 0),
            prev_time: 0,
            iops: Vec::new(),
            bw: Vec::new(),
            attained: false,
            criterion: 0.0,
            deviation: 0.0,
            slope: 0.0,
            owner: 0,
        }
    }

    fn member() -> Vec<Member> {
        let p = Arc::new(Published::default());
        p.phase.store(PHASE_MEASURING, Ordering::Relaxed);
        vec![Member {
            published: p,
            groupid: 0,
            background: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
            status: None,
        }]
    }

    /// Feeds per-second I/O counts; returns the second at which the state was reached.
    fn feed(t: &mut Track, per_sec: &[u64]) -> Option<usize> {
        let m = member();
        let mut ios = 0;
        for (i, n) in per_sec.iter().enumerate() {
            ios += n;
            m[0].published.ios[0].store(ios, Ordering::Relaxed);
            m[0].published.bytes[0].store(ios * 4096, Ordering::Relaxed);
            if t.sample(&m, (i as u64 + 1) * 1_000_000_000, 0) {
                return Some(i + 1);
            }
        }
        None
    }

    #[test]
    fn deviation_and_slope_as_fio() {
        let dev = SteadyState {
            metric: SsMetric::Iops,
            slope: false,
            limit: 10.0,
            percent: true,
        };
        let mut t = track(dev, 3);
        // 100, 150, 200: deviation 50 of mean 150 = 33%; then 200, 200, 205: within 10%.
        assert_eq!(feed(&mut t, &[100, 150, 200, 200, 205, 200]), Some(5));
        let r = t.report();
        assert_eq!(r.iops, vec![200, 200, 205]);
        assert_eq!(r.bw, vec![200 * 4096, 200 * 4096, 205 * 4096]);
        assert!(r.attained && r.criterion < 10.0);
        let slope = SteadyState {
            metric: SsMetric::Iops,
            slope: true,
            limit: 1.0,
            percent: true,
        };
        let mut t = track(slope, 3);
        // A rising rate has a slope of 50/s (25% of the mean); a flat one 0.
        assert_eq!(feed(&mut t, &[100, 150, 200]), None);
        assert!((t.slope - 50.0).abs() < 1e-9 && (t.criterion - 33.333).abs() < 0.01);
        let mut t = track(slope, 3);
        assert_eq!(feed(&mut t, &[100, 150, 200, 200, 200]), Some(5));
        assert_eq!(t.report().slope, 0.0);
        // Not full yet: the report is padded with zeros, as fio prints it.
        let mut t = track(slope, 4);
        assert_eq!(feed(&mut t, &[10]), None);
        assert_eq!(t.report().iops, vec![10, 0, 0, 0]);
    }
}
