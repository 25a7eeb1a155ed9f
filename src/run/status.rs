//! fio's `--status-interval`: the results so far, every interval while a phase runs.
//!
//! fio reads its threads' statistics from another thread without locks (racy but complete).
//! iogauge's workers keep their latency recorders to themselves and publish cumulative counters
//! (relaxed atomic stores, see `shared::Published`). A report so far is assembled from:
//! - those counters: I/Os, bytes, runtime, bandwidth and IOPS per direction, exact;
//! - when `--status-interval` is on, a latency snapshot (`shared::StatusLat`) each worker leaves at
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
use super::plan::Instance;
use super::shared::{Published, StatusLat, PHASE_MEASURING};
use crate::model::RunSpec;
use crate::report::{DepthReport, DirReport, GroupDirReport, GroupReport, JobReport, Report};
use crate::stats::{CpuTimes, DepthCounters, LatRecorder};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::SystemTime;

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
    let mut entries: Vec<Entry> = Vec::new();
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
        let idx = match entries.iter().position(|e| e.key.is_some() && e.key == key) {
            Some(i) => i,
            None => {
                entries.push(Entry {
                    key,
                    report: entry_report(spec, inst, pb, now_ns, run_start_ns),
                    lat: None,
                    job: inst.job,
                    state: None,
                });
                entries.len() - 1
            }
        };
        let e = &mut entries[idx];
        // CPU and depth so far: known once every member of the entry has left a snapshot.
        let snapshot = lats.get(i).and_then(|l| l.as_ref());
        let state = snapshot
            .filter(|_| phase >= PHASE_MEASURING)
            .map(|sl| e.merge_latency(sl));
        e.add_state(state, measured_ns);
        let j = &mut e.report;
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
    let jobs: Vec<JobReport> = entries.into_iter().map(|e| e.finish(spec)).collect();
    let groups = group_reports(&jobs);
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

/// One entry of the report so far while its members are added.
struct Entry {
    /// The group with group_reporting (members fold into one entry), None for a lone instance.
    key: Option<u32>,
    report: JobReport,
    /// The members' latency snapshots merged per direction, and (from_lat, queued).
    lat: Option<([LatRecorder; 3], bool, bool)>,
    /// The entry's job (its first member's).
    job: usize,
    /// None before its first member, Some(None) once a member has no snapshot yet.
    state: Option<Option<SoFar>>,
}

/// A new entry's report: the job's settings and the first member's pid; counts are added per
/// member.
fn entry_report(
    spec: &RunSpec,
    inst: &Instance,
    pb: &Published,
    now_ns: u64,
    run_start_ns: u64,
) -> JobReport {
    let job = &spec.jobs[inst.job];
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
    }
}

impl Entry {
    /// Merges a measuring member's latency snapshot into the entry's; returns the member's CPU
    /// and depth so far (None before its first boundary).
    fn merge_latency(&mut self, sl: &StatusLat) -> (Option<CpuTimes>, Option<DepthCounters>) {
        let (snap, flags) = sl.read();
        let e = self.lat.get_or_insert_with(|| {
            (
                std::array::from_fn(|_| LatRecorder::new(0)),
                flags.0,
                flags.1,
            )
        });
        for (m, r) in e.0.iter_mut().zip(snap.recs.iter()) {
            m.merge(r);
        }
        (snap.cpu, snap.depth.clone())
    }

    /// Adds a member's CPU and depth so far (`state`, None without a snapshot) over its
    /// `measured_ns`: the entry's figures are known only while every member has them.
    fn add_state(
        &mut self,
        state: Option<(Option<CpuTimes>, Option<DepthCounters>)>,
        measured_ns: u64,
    ) {
        let seen = &mut self.state;
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
    }

    /// The entry's report once every member is in: CPU and depths when known, rates, and the
    /// latencies the job measures from the merged snapshots.
    fn finish(self, spec: &RunSpec) -> JobReport {
        let mut j = self.report;
        if let Some(Some(st)) = self.state {
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
        let job = &spec.jobs[self.job];
        let (clat_p, lat_p) = (job.clat_percentiles, job.lat_percentiles);
        let measured = job.measured();
        for (d, dir) in j.dirs.iter_mut().enumerate() {
            fill_rates(dir);
            let Some((recs, from_lat, queued)) = &self.lat else {
                continue;
            };
            if !measured.latency || dir.total_ios == 0 {
                continue;
            }
            let pcts = &j.percentile_list;
            // Only the latencies the job measures, as the end report (disable_lat/clat: the
            // synchronous engines' one recorder holds samples of both).
            let (lat, clat) = if *from_lat {
                (measured.lat, false)
            } else {
                // Synchronous engines: lat and clat are one interval, as in the end report.
                (measured.lat && !queued, measured.clat)
            };
            if clat {
                dir.clat = recs[d].summary(pcts, clat_p, false);
            }
            if lat {
                dir.lat = recs[d].summary(pcts, lat_p, false);
            }
        }
        j
    }
}

/// The group blocks of the report so far: per group, its entries' bytes and the min and max of
/// their rates and runtimes, and the aggregate bandwidth.
fn group_reports(jobs: &[JobReport]) -> Vec<GroupReport> {
    let mut groups: Vec<GroupReport> = Vec::new();
    for j in jobs {
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
    groups
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
    use crate::model::JobSpec;
    use crate::run::shared::WorkerState;

    fn instance(groupid: u32) -> Instance {
        Instance {
            job: 0,
            jobnum: 1,
            groupid,
            phase: 0,
            files: Vec::new(),
            deferred: false,
            thread: 0,
        }
    }

    /// A worker measuring since 1 s before `NOW` that published 100 reads of 4 KiB.
    fn measuring() -> Arc<Published> {
        let p = Arc::new(Published::default());
        p.phase.store(PHASE_MEASURING, Ordering::Relaxed);
        p.meas_start_ns
            .store(NOW - 1_000_000_000, Ordering::Relaxed);
        p.bytes[0].store(409_600, Ordering::Relaxed);
        p.ios[0].store(100, Ordering::Relaxed);
        p
    }

    /// A snapshot left at a boundary: 10 reads of 1..=10 µs, from a synchronous engine.
    fn snapshot() -> Arc<StatusLat> {
        let mut read = LatRecorder::new(0);
        for i in 1..=10 {
            read.record(i * 1000);
        }
        let none = LatRecorder::new(0);
        let sl = Arc::new(StatusLat::new());
        let state = WorkerState {
            cpu_start: &CpuTimes::default(),
            depth: None,
        };
        sl.publish(&[&read, &none, &none, &none], false, false, state);
        sl
    }

    const NOW: u64 = 10_000_000_000;

    fn so_far(job: JobSpec, n: usize, lats: &[Option<Arc<StatusLat>>]) -> Report {
        let spec = RunSpec {
            jobs: vec![job],
            ..RunSpec::default()
        };
        let insts: Vec<Instance> = (0..n).map(|_| instance(0)).collect();
        let refs: Vec<&Instance> = insts.iter().collect();
        let published: Vec<_> = (0..n).map(|_| measuring()).collect();
        report_so_far(&spec, &refs, &published, lats, NOW, 0, SystemTime::now())
    }

    #[test]
    fn report_so_far_of_published_counters() {
        let r = so_far(JobSpec::default(), 1, &[None]);
        let d = &r.jobs[0].dirs[0];
        assert_eq!(
            (d.io_bytes, d.total_ios, d.runtime_ms),
            (409_600, 100, 1000)
        );
        assert_eq!((d.bw_bytes, d.iops), (409_600, 100.0));
        // No snapshot: no latency, CPU and depths not known yet.
        assert_eq!((d.clat.n, r.jobs[0].depths.level[0]), (0, 0.0));
        assert_eq!(r.jobs[0].elapsed_s, 10);
        assert_eq!(r.groups[0].dirs[0].agg_bw_bytes, 409_600);
    }

    #[test]
    fn report_so_far_folds_group_reporting_and_reads_the_snapshots() {
        let job = JobSpec {
            group_reporting: true,
            ..JobSpec::default()
        };
        let r = so_far(job, 2, &[Some(snapshot()), Some(snapshot())]);
        assert_eq!(r.jobs.len(), 1);
        let j = &r.jobs[0];
        assert_eq!(
            (j.njobs, j.dirs[0].total_ios, j.dirs[0].runtime_ms),
            (2, 200, 1000)
        );
        // Synchronous engine: lat and clat are the one recorder, both members merged.
        assert_eq!((j.dirs[0].clat.n, j.dirs[0].lat.n), (20, 20));
        // Both members left a snapshot: CPU and depths are known.
        assert_eq!(j.depths.level[0], 100.0);
        // One member without a snapshot yet: the entry's CPU and depths are not known.
        let r = so_far(
            JobSpec {
                group_reporting: true,
                ..JobSpec::default()
            },
            2,
            &[Some(snapshot()), None],
        );
        assert_eq!(
            (r.jobs[0].depths.level[0], r.jobs[0].dirs[0].clat.n),
            (0.0, 10)
        );
        // disable_clat / disable_lat: only the other one, as the end report (the synchronous
        // engine's one recorder holds samples of both).
        for (record, want) in [
            (
                crate::model::RecordSpec {
                    clat: false,
                    ..Default::default()
                },
                (0, 10),
            ),
            (
                crate::model::RecordSpec {
                    lat: false,
                    ..Default::default()
                },
                (10, 0),
            ),
        ] {
            let mut job = JobSpec::default();
            job.reporting.record = record;
            let r = so_far(job, 1, &[Some(snapshot())]);
            let d = &r.jobs[0].dirs[0];
            assert_eq!((d.clat.n, d.lat.n), want, "{record:?}");
        }
        // gtod_reduce: counts, no latency.
        let job = JobSpec {
            gtod_reduce: true,
            ..JobSpec::default()
        };
        let r = so_far(job, 1, &[Some(snapshot())]);
        assert_eq!(
            (r.jobs[0].dirs[0].total_ios, r.jobs[0].dirs[0].clat.n),
            (100, 0)
        );
    }

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
