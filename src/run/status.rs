//! fio's `--status-interval`: the results so far, every interval while a phase runs.
//!
//! fio reads its threads' statistics from another thread without locks (racy but complete).
//! iogauge's workers keep their latency recorders to themselves and publish cumulative counters
//! (relaxed atomic stores, see `instance::Published`). A report so far is assembled from:
//! - those counters: I/Os, bytes, runtime, bandwidth and IOPS per direction, exact;
//! - when `--status-interval` is on, a latency snapshot ([`StatusLat`]) each worker leaves at
//!   its 100 ms interval boundaries (the cold path that already closes the per-interval
//!   histograms): a copy of the interval recorders' counts, extremes, sums and histograms into
//!   recorders allocated up front, under a `try_lock` (never waits; a boundary whose copy finds
//!   the reader busy is skipped). Nothing is added per I/O. So the dump's latency (clat for
//!   synchronous engines, which is also their lat; clat or lat for queueing engines, as their
//!   interval histograms count) lags its counts by up to 100 ms, and its percentiles come from
//!   the histogram (within its bucket width), not from exact samples;
//! - the worker's thread id (fio's pid), published when it starts;
//! - the same snapshot carries the worker's CPU use since measurement started (one getrusage
//!   per boundary) and its queue depth counters, so CPU and IO depths are the figures so far as
//!   of the last boundary. Before a worker's first boundary they are not known: the text leaves
//!   the cpu and IO depths lines out then (JSON has zeros);
//! - left empty (zeros in JSON, lines absent in the text): slat, latency buckets, periodic bw/iops
//!   samples and disk stats.
//!
//! The end report is the usual, complete one. A dump covers the running phase's jobs only
//! (earlier stonewall phases are not repeated).

use super::assemble::{header, job_lines, runtime_ms, text_units};
use super::instance::{Published, PHASE_MEASURING};
use super::plan::Instance;
use crate::model::RunSpec;
use crate::report::{DepthReport, DirReport, GroupDirReport, GroupReport, JobReport, Report};
use crate::stats::{CpuTimes, DepthCounters, LatRecorder};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::SystemTime;

/// A worker's snapshot for the dumps: its four interval recorders (read, write, trim, sync),
/// its CPU use and queue depth counters since measurement started, copied at a 100 ms
/// boundary.
pub(crate) struct StatusLat {
    snap: std::sync::Mutex<Snapshot>,
    /// The recorders are queueing engines' `lat` (else `clat`).
    from_lat: std::sync::atomic::AtomicBool,
    /// The worker uses a queueing engine.
    queued: std::sync::atomic::AtomicBool,
}

struct Snapshot {
    recs: [LatRecorder; 4],
    /// None until the first boundary: then the dump has no CPU or depth figures to show.
    cpu: Option<CpuTimes>,
    /// Queueing engines' counters (synchronous engines have none: one I/O at a time).
    depth: Option<DepthCounters>,
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
            snap: std::sync::Mutex::new(Snapshot {
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
}

/// Receives each report so far (the caller renders and prints it).
pub type StatusSink = Arc<dyn Fn(&Report) + Send + Sync>;

/// fio `--status-interval`: how often, and who prints.
#[derive(Clone)]
pub struct StatusInterval {
    /// The interval (fio's minimum is 1 ms).
    pub every: std::time::Duration,
    /// Where each report so far goes.
    pub sink: StatusSink,
}

/// The report so far of one phase's instances, from their published counters at `now_ns`.
/// `run_start_ns`/`started_at`: when the run began (fio's `elapsed`).
pub(super) fn report_so_far(
    spec: &RunSpec,
    instances: &[&Instance],
    published: &[Arc<Published>],
    lats: &[Option<Arc<StatusLat>>],
    now_ns: u64,
    run_start_ns: u64,
    started_at: SystemTime,
) -> Report {
    // One entry per instance, or per group with group_reporting (as the end report folds).
    let mut jobs: Vec<(Option<u32>, JobReport)> = Vec::new();
    // Per entry: merged latency recorders per direction, and (from_lat, queued).
    let mut entry_lat: Vec<Option<([LatRecorder; 3], bool, bool)>> = Vec::new();
    let mut entry_job: Vec<usize> = Vec::new();
    // Per entry: None before its first member, Some(None) when a member has no snapshot yet.
    let mut entry_state: Vec<Option<Option<SoFar>>> = Vec::new();
    for (i, (inst, pb)) in instances.iter().zip(published).enumerate() {
        let job = &spec.jobs[inst.job];
        let phase = pb.phase.load(Ordering::Acquire);
        let measured_ns = if phase >= PHASE_MEASURING {
            let start = pb.meas_start_ns.load(Ordering::Relaxed);
            let end = match pb.end_ns.load(Ordering::Relaxed) {
                0 => now_ns,
                e => e,
            };
            end.saturating_sub(start)
        } else {
            0
        };
        let key = job.group_reporting.then_some(inst.groupid);
        let idx = match jobs.iter().position(|(k, _)| k.is_some() && *k == key) {
            Some(i) => i,
            None => {
                jobs.push((
                    key,
                    JobReport {
                        name: job.name.clone(),
                        groupid: inst.groupid,
                        elapsed_s: now_ns.saturating_sub(run_start_ns) / 1_000_000_000,
                        finished_at: Some(SystemTime::now()),
                        header: header(job),
                        options: job.options.clone(),
                        description: job.description.clone(),
                        percentile_list: job.percentile_list.clone(),
                        gtod_reduce: job.gtod_reduce,
                        clat_percentiles: job.clat_percentiles,
                        lat_percentiles: job.lat_percentiles,
                        iodepth: job.iodepth,
                        // The entry's first worker, as the end report (fio: the first job's).
                        pid: pb.tid.load(Ordering::Relaxed),
                        nr_files: inst.files.len() as u32,
                        unified_rw: job.reporting.unified_rw,
                        sig_figs: job.reporting.sig_figs,
                        units: text_units(job),
                        // (the depth is iodepth here, not where latency_target's search is)
                        latency_target: Some((
                            job.latency.target_ns,
                            job.latency.window_us,
                            job.latency.percentile,
                        )),
                        ..JobReport::default()
                    },
                ));
                entry_lat.push(None);
                entry_state.push(None);
                entry_job.push(inst.job);
                jobs.len() - 1
            }
        };
        // CPU and depth so far: known once every member of the entry has left a snapshot.
        let mut state = None;
        if let Some(sl) = lats.get(i).and_then(|l| l.as_ref()) {
            if phase >= PHASE_MEASURING {
                let snap = sl.snap.lock().unwrap_or_else(|p| p.into_inner());
                let flags = (
                    sl.from_lat.load(Ordering::Relaxed),
                    sl.queued.load(Ordering::Relaxed),
                );
                let e = entry_lat[idx].get_or_insert_with(|| {
                    (
                        std::array::from_fn(|_| LatRecorder::new(0)),
                        flags.0,
                        flags.1,
                    )
                });
                for (m, r) in e.0.iter_mut().zip(snap.recs.iter()) {
                    m.merge(r);
                }
                state = Some((snap.cpu, snap.depth.clone()));
            }
        }
        let seen = &mut entry_state[idx];
        match (state, seen.as_mut()) {
            (Some((Some(cpu), depth)), Some(Some(st))) => {
                st.cpu += cpu;
                st.wall_ns += measured_ns;
                if let (Some(acc), Some(d)) = (st.depth.as_mut(), depth.as_ref()) {
                    acc.merge(d);
                }
            }
            (Some((Some(cpu), depth)), None) => {
                *seen = Some(Some(SoFar {
                    cpu,
                    wall_ns: measured_ns,
                    depth,
                }));
            }
            // A member without a snapshot yet: the entry's figures are not known.
            _ => *seen = Some(None),
        }
        let j = &mut jobs[idx].1;
        j.njobs += 1;
        j.job_runtime_ms += runtime_ms(measured_ns);
        let run_ms = runtime_ms(measured_ns);
        for d in 0..3 {
            let dir = &mut j.dirs[d];
            dir.io_bytes += pb.bytes[d].load(Ordering::Relaxed);
            dir.total_ios += pb.ios[d].load(Ordering::Relaxed);
            dir.runtime_ms = dir.runtime_ms.max(run_ms);
        }
    }
    let mut jobs: Vec<JobReport> = jobs.into_iter().map(|(_, j)| j).collect();
    for (j, st) in jobs.iter_mut().zip(entry_state) {
        if let Some(Some(st)) = st {
            j.cpu = st.cpu.report(st.wall_ns);
            let any_io = j.dirs.iter().any(|d| d.total_ios > 0);
            // As the end report: synchronous engines have one I/O in flight, one at a time.
            // An empty distribution tells the text renderer the figures are not known yet.
            j.depths = match st.depth {
                Some(d) if any_io => d.report(),
                None if any_io => {
                    let mut d = DepthReport::default();
                    d.level[0] = 100.0;
                    d.submit[1] = 100.0;
                    d.complete[1] = 100.0;
                    d
                }
                _ => DepthReport::default(),
            };
        }
    }
    for ((j, lat), ji) in jobs.iter_mut().zip(entry_lat).zip(entry_job) {
        let job = &spec.jobs[ji];
        let (clat_p, lat_p, gtod_reduce) =
            (job.clat_percentiles, job.lat_percentiles, job.gtod_reduce);
        for (d, dir) in j.dirs.iter_mut().enumerate() {
            fill_rates(dir);
            let Some((recs, from_lat, queued)) = &lat else {
                continue;
            };
            if gtod_reduce || dir.total_ios == 0 {
                continue;
            }
            let pcts = &j.percentile_list;
            if *from_lat {
                dir.lat = recs[d].summary(pcts, lat_p, false);
            } else {
                dir.clat = recs[d].summary(pcts, clat_p, false);
                if !queued {
                    // Synchronous engines: lat and clat are one interval, as in the end report.
                    dir.lat = recs[d].summary(pcts, lat_p, false);
                }
            }
        }
    }
    let mut groups: Vec<GroupReport> = Vec::new();
    for j in &jobs {
        let g = match groups.iter().position(|g| g.groupid == j.groupid) {
            Some(i) => &mut groups[i],
            None => {
                groups.push(GroupReport {
                    groupid: j.groupid,
                    dirs: Default::default(),
                    mixed: None,
                    sig_figs: j.sig_figs,
                    units: j.units,
                });
                let last = groups.len() - 1;
                &mut groups[last]
            }
        };
        for (gd, dir) in g.dirs.iter_mut().zip(&j.dirs) {
            if dir.total_ios == 0 {
                continue;
            }
            let ms = dir.runtime_ms.max(1);
            let bw = dir.io_bytes * 1000 / ms;
            let first = gd.max_run_ms == 0;
            gd.io_bytes += dir.io_bytes;
            gd.min_bw_bytes = if first { bw } else { gd.min_bw_bytes.min(bw) };
            gd.max_bw_bytes = gd.max_bw_bytes.max(bw);
            gd.min_run_ms = if first { ms } else { gd.min_run_ms.min(ms) };
            gd.max_run_ms = gd.max_run_ms.max(ms);
        }
    }
    for g in &mut groups {
        for gd in &mut g.dirs {
            set_agg(gd);
        }
    }
    Report {
        version: Report::version_string(),
        started_at,
        context: None,
        global_options: spec.global_options.clone(),
        job_lines: job_lines(spec),
        interrupted: None,
        jobs,
        groups,
        disks: Vec::new(),
        notes: Vec::new(),
    }
}

/// One report entry's figures so far, from its members' snapshots.
struct SoFar {
    cpu: CpuTimes,
    /// Measured time of the members, the CPU percentages' denominator (as the end report's).
    wall_ns: u64,
    depth: Option<DepthCounters>,
}

/// Bandwidth and IOPS of a direction from its bytes, I/Os and runtime (as fio: per ms).
fn fill_rates(dir: &mut DirReport) {
    if dir.total_ios == 0 {
        dir.runtime_ms = 0;
    }
    if dir.runtime_ms == 0 {
        return;
    }
    dir.bw_bytes = (dir.io_bytes as u128 * 1000 / dir.runtime_ms as u128) as u64;
    dir.iops = dir.total_ios as f64 * 1000.0 / dir.runtime_ms as f64;
}

fn set_agg(gd: &mut GroupDirReport) {
    gd.agg_bw_bytes = (gd.io_bytes as u128 * 1000 / gd.max_run_ms.max(1) as u128) as u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_follow_the_counters() {
        let mut d = DirReport {
            io_bytes: 4096 * 1000,
            total_ios: 1000,
            runtime_ms: 500,
            ..DirReport::default()
        };
        fill_rates(&mut d);
        assert_eq!(d.bw_bytes, 8_192_000);
        assert_eq!(d.iops, 2000.0);
    }
}
