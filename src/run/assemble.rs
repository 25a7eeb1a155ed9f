//! Raw worker results → `Report`: per-instance or per-group (group_reporting) entries and group
//! summaries (disk statistics come from `run::disks`). All statistics are computed here or in
//! `stats`, never in renderers.

use super::monitor::TracePoint;
use super::InstanceResult;
use crate::model::{JobSpec, RunSpec, UnifiedRw};
use crate::report::{
    CpuReport, DepthReport, DirReport, DiskReport, GroupDirReport, GroupReport, IntervalLatency,
    JobHeader, JobLine, JobReport, LatIntervals, LatSummary, Report, SyncReport,
};
use crate::stats::{
    interval_latency, latency_buckets, merge_intervals, CpuTimes, LatRecorder, MeasuredEnd,
    PeriodicSampler, SampleStats, SampleUnit,
};
use std::borrow::Cow;
use std::time::SystemTime;

pub(super) fn runtime_ms(ns: u64) -> u64 {
    ns.div_ceil(1_000_000)
}

/// Several instances folded into one `jobs[]` entry (one instance without group_reporting).
struct Folded<'a> {
    job: &'a JobSpec,
    groupid: u32,
    members: Vec<&'a InstanceResult>,
}

fn fold<'a>(spec: &'a RunSpec, results: &'a [InstanceResult]) -> Vec<Folded<'a>> {
    let mut out: Vec<Folded> = Vec::new();
    for r in results {
        let job = &spec.jobs[r.instance.job];
        let g = r.instance.groupid;
        let group_reporting = spec
            .jobs
            .iter()
            .zip(results.iter().map(|x| x.instance.groupid))
            .any(|(j, gid)| gid == g && j.group_reporting)
            || job.group_reporting;
        if group_reporting {
            if let Some(f) = out.iter_mut().find(|f| f.groupid == g) {
                f.members.push(r);
                continue;
            }
        }
        out.push(Folded {
            job,
            groupid: g,
            members: vec![r],
        });
    }
    out
}

/// The recorders folded into one. A lone recorder with data is borrowed, not copied: the end of
/// a run would otherwise hold every exact sample twice (see `WorkerResult::sort_samples`).
fn merged<'a>(recs: impl Iterator<Item = &'a LatRecorder>) -> Cow<'a, LatRecorder> {
    let mut with_data = recs.filter(|r| r.count() > 0);
    let Some(first) = with_data.next() else {
        return Cow::Owned(LatRecorder::new(0));
    };
    let Some(second) = with_data.next() else {
        return Cow::Borrowed(first);
    };
    let mut out = LatRecorder::new(0);
    for r in [first, second].into_iter().chain(with_data) {
        out.merge(r);
    }
    out.sort_samples();
    Cow::Owned(out)
}

/// Periodic samples of one instance and direction: the monitor's readings that fio would have
/// taken, and the tail up to the end of the measured period (see `stats::periodic`).
fn sampler(
    points: &[TracePoint],
    d: usize,
    interval_ms: u64,
    unit: SampleUnit,
    end: MeasuredEnd,
    final_value: u64,
) -> PeriodicSampler {
    let readings = points.iter().map(|p| p.reading(d));
    PeriodicSampler::from_trace(interval_ms, unit, readings, end, final_value)
}

/// A direction's count as periodic samples see it: fio leaves verify read-backs out of them
/// (its this_io_bytes), so the reads' count is without them.
fn sampled(d: usize, count: u64, read_back: u64) -> u64 {
    if d == crate::model::DDIR_READ {
        count.saturating_sub(read_back)
    } else {
        count
    }
}

/// The members' per-interval histograms of recorder `i` (0–2 directions, 3 sync), merged as
/// group_reporting merges recorders.
fn intervals(f: &Folded, i: usize, latency: IntervalLatency) -> Option<LatIntervals> {
    let parts: Vec<_> = f
        .members
        .iter()
        .map(|m| (m.result.intervals.len_ns(), m.result.intervals.intervals(i)))
        .collect();
    merge_intervals(&parts, latency)
}

/// Seconds from the start of the run to the report, as fio's `elapsed`.
fn elapsed_s(run_start_ns: u64) -> u64 {
    super::clock::now_ns()
        .saturating_sub(run_start_ns)
        .div_ceil(1_000_000_000)
}

/// One `jobs[]` entry: each direction's counts, latencies and periodic samples, the syncs, CPU,
/// depths, error and the job's settings the renderers print.
fn job_report(f: &Folded, run_start_ns: u64) -> JobReport {
    let job = f.job;
    // unified_rw_reporting's mixed entry: the whole measured period.
    let run_ms = runtime_ms(
        f.members
            .iter()
            .map(|m| m.result.measured_ns)
            .max()
            .unwrap_or(0),
    );
    let mut dirs: [DirReport; 3] = Default::default();
    let mut clats: Vec<Cow<LatRecorder>> = Vec::with_capacity(3);
    // Every direction's bw and iops sample statistics, for unified_rw_reporting's mixed entry.
    let mut mixed_samples: (Vec<SampleStats>, Vec<SampleStats>) = Default::default();
    for (d, dir) in dirs.iter_mut().enumerate() {
        let rec = merged(f.members.iter().map(|m| &m.result.clat[d]));
        dir_counts(f, d, dir);
        dir_latency(f, d, &rec, dir);
        if dir.total_ios > 0 {
            let (bw, iops) = dir_samples(f, d, dir);
            mixed_samples.0.extend(bw);
            mixed_samples.1.extend(iops);
        }
        clats.push(rec);
    }
    let sync = sync_report(f);
    let cpu = cpu_report(f);
    let any_io = dirs.iter().any(|d| d.total_ios > 0) || sync.total_ios > 0;
    let depths = depth_report(f, any_io);
    let finished_at = f.members.iter().map(|m| m.result.finished_at).max();
    let elapsed_s = elapsed_s(run_start_ns);
    let laid = f.members.iter().filter_map(|m| m.laid_out).fold(
        None,
        |acc: Option<(u32, u64)>, (n, b)| {
            let (an, ab) = acc.unwrap_or((0, 0));
            Some((an + n, ab + b))
        },
    );
    let dirs_copy = dirs.clone();
    JobReport {
        name: job.name.clone(),
        groupid: f.groupid,
        njobs: f.members.len() as u32,
        pid: f.members.first().map(|m| m.result.tid).unwrap_or(0),
        error: job_error(f),
        elapsed_s,
        job_runtime_ms: runtime_ms(f.members.iter().map(|m| m.result.measured_ns).sum()),
        finished_at,
        header: header(job),
        options: job.options.clone(),
        description: job.description.clone(),
        percentile_list: job.percentile_list.clone(),
        dirs,
        sync,
        cpu,
        depths,
        lat_buckets: if job.measured().clat {
            latency_buckets(
                &clats
                    .iter()
                    .map(|c| c.lat_bucket_counts())
                    .collect::<Vec<_>>(),
            )
        } else {
            Default::default()
        },
        gtod_reduce: job.gtod_reduce,
        errors: job.timing.errors.is_set().then(|| {
            let total = f.members.iter().map(|m| m.result.total_err).sum();
            let first = f
                .members
                .iter()
                .map(|m| m.result.first_error)
                .find(|&e| e != 0)
                .unwrap_or(0);
            (total, first)
        }),
        steadystate: f.members.iter().rev().find_map(|m| m.steadystate.clone()),
        sequential: f.members.iter().find_map(|m| m.sequential.clone()),
        clat_percentiles: job.clat_percentiles,
        lat_percentiles: job.lat_percentiles,
        // latency_target: the depth the search ended at (the last member's, as fio's sum).
        iodepth: f
            .members
            .iter()
            .rev()
            .find_map(|m| m.result.latency_depth)
            .unwrap_or(job.iodepth),
        latency_target: Some((
            job.latency.target_ns,
            job.latency.window_us,
            job.latency.percentile,
        )),
        nr_files: f
            .members
            .first()
            .map(|m| m.instance.files.len() as u32)
            .unwrap_or(0),
        laid_out: laid,
        unified_rw: job.reporting.unified_rw,
        sig_figs: job.reporting.sig_figs,
        units: text_units(job),
        mixed: (job.reporting.unified_rw != UnifiedRw::None)
            .then(|| mixed_dir(f, &dirs_copy, run_ms, &mixed_samples)),
    }
}

/// Direction `d`'s bytes, I/Os and short I/Os over the members, and its rates over the
/// longest member's runtime (a read-back counts in reads alone).
fn dir_counts(f: &Folded, d: usize, dir: &mut DirReport) {
    dir.io_bytes = f.members.iter().map(|m| m.result.bytes[d]).sum();
    dir.total_ios = f.members.iter().map(|m| m.result.ios[d]).sum();
    dir.short_ios = f.members.iter().map(|m| m.result.short[d]).sum();
    // No runtime (verify_only's writes), no rate: fio's 0.
    if dir.total_ios > 0 {
        let ns = f.members.iter().map(|m| m.result.runtime_ns[d]).max();
        dir.runtime_ms = runtime_ms(ns.unwrap_or(0));
    }
    if dir.runtime_ms > 0 {
        let ms = dir.runtime_ms;
        dir.bw_bytes = (dir.io_bytes as u128 * 1000 / ms as u128) as u64;
        dir.iops = dir.total_ios as f64 * 1000.0 / ms as f64;
    }
}

/// Direction `d`'s latencies (`clat` is its merged completion recorder): a summary of each one
/// the job measured, fio's zero for the others (disable_*, gtod_reduce), and, when latency is
/// measured at all, the per-priority latencies and per-interval histograms.
fn dir_latency(f: &Folded, d: usize, clat: &LatRecorder, dir: &mut DirReport) {
    let job = f.job;
    let pcts = &job.percentile_list;
    let measured = job.measured();
    let queued = f.members.iter().any(|m| !m.result.lat.is_empty());
    if measured.clat {
        dir.clat = clat.summary(pcts, job.clat_percentiles, true);
    }
    if measured.lat {
        dir.lat = if queued {
            merged(f.members.iter().map(|m| &m.result.lat[d])).summary(
                pcts,
                job.lat_percentiles,
                true,
            )
        } else {
            // Synchronous engines prepare and submit in one step: lat and clat are one interval.
            clat.summary(pcts, job.lat_percentiles, true)
        };
    }
    if measured.slat && queued {
        let slat = merged(f.members.iter().map(|m| &m.result.slat[d]));
        dir.slat = slat.summary(pcts, job.reporting.slat_percentiles, true);
    }
    if d < 2 && measured.latency {
        dir.prios = prio_reports(f, d);
    }
    if dir.total_ios > 0 && measured.latency {
        let latency = interval_latency(job.clat_percentiles, job.lat_percentiles);
        dir.lat_intervals = intervals(f, d, latency);
    }
}

/// Direction `d`'s periodic bw and iops samples (statistics, series and tails) over the
/// members; returns each member's bw and iops statistics for the mixed entry.
fn dir_samples(f: &Folded, d: usize, dir: &mut DirReport) -> (Vec<SampleStats>, Vec<SampleStats>) {
    let job = f.job;
    let mut bw = Vec::new();
    let mut iops = Vec::new();
    // The runtime limit counts from the end of the ramp, as the measured period does.
    let runtime_ns = job.runtime.map(|r| r.as_nanos() as u64).filter(|&n| n > 0);
    for m in &f.members {
        let end = MeasuredEnd {
            end_ns: m.result.measured_ns,
            runtime_ns,
            after_ramp: !job.ramp_time.is_zero(),
        };
        let b = sampler(
            &m.trace.bw.points(),
            d,
            job.bwavgtime_ms,
            SampleUnit::KiBPerSec,
            end,
            sampled(d, m.result.bytes[d], m.result.read_back_bytes),
        );
        let i = sampler(
            &m.trace.iops.points(),
            d,
            job.iopsavgtime_ms,
            SampleUnit::PerSec,
            end,
            sampled(d, m.result.ios[d], m.result.read_back_ios),
        );
        bw.push(b);
        iops.push(i);
    }
    let stats = |v: &[PeriodicSampler]| {
        let parts: Vec<SampleStats> = v.iter().map(|s| *s.stats()).collect();
        SampleStats::sum_fio(&parts).summary()
    };
    dir.bw_samples = stats(&bw);
    dir.iops_samples = stats(&iops);
    // fio: with a per-I/O bw/iops log, its JSON statistics are per I/O too.
    for (k, per_io) in job.logs.per_io_stats.iter().enumerate() {
        if *per_io {
            let parts: Vec<SampleStats> = f
                .members
                .iter()
                .filter_map(|m| m.result.per_io_samples.map(|s| s[k][d]))
                .collect();
            let s = SampleStats::sum_fio(&parts).summary();
            if k == 0 {
                dir.bw_samples = s;
            } else {
                dir.iops_samples = s;
            }
        }
    }
    let series = |v: &[PeriodicSampler], ms: u64| {
        let all: Vec<&[crate::report::SeriesPoint]> = v.iter().map(|s| s.series()).collect();
        crate::stats::aggregate_series(&all, ms)
    };
    dir.bw_series = series(&bw, job.bwavgtime_ms);
    dir.iops_series = series(&iops, job.iopsavgtime_ms);
    let tail = |v: &[PeriodicSampler]| {
        crate::stats::aggregate_tail(&v.iter().map(|s| s.tail()).collect::<Vec<_>>())
    };
    dir.bw_tail = tail(&bw);
    dir.iops_tail = tail(&iops);
    (
        bw.iter().map(|s| *s.stats()).collect(),
        iops.iter().map(|s| *s.stats()).collect(),
    )
}

/// The job's syncs: their count, and their latencies when measured (fio: no sync latency
/// under disable_clat).
fn sync_report(f: &Folded) -> SyncReport {
    let measured = f.job.measured();
    let pcts = &f.job.percentile_list;
    let sync_ios: u64 = f.members.iter().map(|m| m.result.syncs).sum();
    SyncReport {
        lat_intervals: if sync_ios > 0 && measured.latency {
            intervals(f, 3, IntervalLatency::Lat)
        } else {
            None
        },
        write_and_sync: if measured.latency {
            merged(f.members.iter().map(|m| &m.result.write_sync)).summary(pcts, true, true)
        } else {
            LatSummary::default()
        },
        total_ios: sync_ios,
        lat: if measured.clat {
            merged(f.members.iter().map(|m| &m.result.sync_lat)).summary(pcts, true, true)
        } else {
            LatSummary::default()
        },
    }
}

/// The members' CPU use summed, as a share of their summed measured time.
fn cpu_report(f: &Folded) -> CpuReport {
    let mut cpu = CpuTimes::default();
    let mut wall = 0u64;
    for m in &f.members {
        let c = &m.result.cpu;
        cpu.utime_ns += c.utime_ns;
        cpu.stime_ns += c.stime_ns;
        cpu.nvcsw += c.nvcsw;
        cpu.nivcsw += c.nivcsw;
        cpu.majflt += c.majflt;
        cpu.minflt += c.minflt;
        wall += m.result.measured_ns;
    }
    cpu.report(wall)
}

/// fio's IO depths: the queueing engines' measured counters merged; synchronous engines have
/// exactly one I/O in flight, submitted and completed one at a time (syncs count like any
/// other I/O: fio shows 200 % here). Empty without any I/O.
fn depth_report(f: &Folded, any_io: bool) -> DepthReport {
    let measured_depth = f
        .members
        .iter()
        .filter_map(|m| m.result.depth.as_ref())
        .fold(None::<crate::stats::DepthCounters>, |acc, d| {
            let mut acc = acc.unwrap_or_default();
            acc.merge(d);
            Some(acc)
        });
    if let Some(d) = measured_depth.filter(|_| any_io) {
        d.report()
    } else if any_io {
        let mut d = DepthReport::default();
        d.level[0] = 100.0;
        d.submit[1] = 100.0;
        d.complete[1] = 100.0;
        d
    } else {
        DepthReport::default()
    }
}

/// The job's error, as fio reports it: an I/O error that ended the job (the run is then
/// partial) first, then a verify mismatch (EILSEQ) or a missed rate_min (EIO), then the first
/// error a job survived under continue_on_error; 0 for none.
fn job_error(f: &Folded) -> i32 {
    f.members
        .iter()
        .find_map(|m| m.result.error.as_ref().map(|e| e.errno))
        .filter(|&e| e != 0)
        .or_else(|| f.members.iter().map(|m| m.result.job_error).max())
        .filter(|&e| e != 0)
        .or_else(|| {
            f.members
                .iter()
                .map(|m| m.result.first_error)
                .find(|&e| e != 0)
        })
        .unwrap_or(0)
}

/// fio's `prios` of direction `d`: latency per distinct I/O priority over the members, in
/// order of first appearance (the job's priority first); only when two or more had I/O.
fn prio_reports(f: &Folded, d: usize) -> Vec<crate::report::PrioReport> {
    let job = f.job;
    let mut by_value: Vec<(u16, LatRecorder)> = Vec::new();
    for m in &f.members {
        let Some(p) = m.result.prio_lat.as_ref() else {
            continue;
        };
        for (i, &v) in p.values[d].iter().enumerate() {
            match by_value.iter_mut().find(|(x, _)| *x == v) {
                Some((_, r)) => r.merge(&p.recs[d][i]),
                None => {
                    let mut r = LatRecorder::new(0);
                    r.merge(&p.recs[d][i]);
                    by_value.push((v, r));
                }
            }
        }
    }
    by_value.retain(|(_, r)| r.count() > 0);
    if by_value.len() < 2 {
        return Vec::new();
    }
    let pct = job.clat_percentiles || job.lat_percentiles;
    by_value
        .iter()
        .map(|(v, r)| crate::report::PrioReport {
            class: u32::from(v >> 13),
            level: u32::from(v & 7),
            lat: r.summary(&job.percentile_list, pct, true),
        })
        .collect()
}

/// fio's `mixed` entry (unified_rw_reporting): every direction's counts and latencies summed
/// into one, the bw/iops sample statistics merged by fio's rule.
fn mixed_dir(
    f: &Folded,
    dirs: &[DirReport; 3],
    run_ms: u64,
    samples: &(Vec<SampleStats>, Vec<SampleStats>),
) -> DirReport {
    let job = f.job;
    let pcts = &job.percentile_list;
    let mut m = DirReport {
        io_bytes: dirs.iter().map(|d| d.io_bytes).sum(),
        total_ios: dirs.iter().map(|d| d.total_ios).sum(),
        short_ios: dirs.iter().map(|d| d.short_ios).sum(),
        ..Default::default()
    };
    if m.total_ios > 0 {
        m.runtime_ms = run_ms;
        let ms = run_ms.max(1);
        m.bw_bytes = (m.io_bytes as u128 * 1000 / ms as u128) as u64;
        m.iops = m.total_ios as f64 * 1000.0 / ms as f64;
    }
    let all = |pick: fn(&super::WorkerResult) -> &[LatRecorder]| {
        merged(f.members.iter().flat_map(|x| pick(&x.result).iter()))
    };
    // Each latency the job measured (fio's zero for the others), as `dir_latency`.
    let measured = job.measured();
    if measured.latency {
        let clat = all(|r| &r.clat[..]);
        let queued = f.members.iter().any(|x| !x.result.lat.is_empty());
        if measured.clat {
            m.clat = clat.summary(pcts, job.clat_percentiles, true);
        }
        if measured.lat {
            m.lat = if queued {
                all(|r| &r.lat[..]).summary(pcts, job.lat_percentiles, true)
            } else {
                clat.summary(pcts, job.lat_percentiles, true)
            };
        }
        if measured.slat && queued {
            m.slat = all(|r| &r.slat[..]).summary(pcts, job.reporting.slat_percentiles, true);
        }
    }
    m.bw_samples = SampleStats::sum_fio(&samples.0).summary();
    m.iops_samples = SampleStats::sum_fio(&samples.1).summary();
    m
}

pub(super) fn header(job: &JobSpec) -> JobHeader {
    JobHeader {
        rw: job.rw.fio_name().to_string(),
        bs: [0, 1, 2].map(|d| job.bs_range(d).0),
        bs_max: [0, 1, 2].map(|d| job.bs_range(d).1),
        bs_is_seq_rand: job.blocks.is_seq_rand,
        ioengine: job.ioengine.fio_name().to_string(),
        iodepth: job.iodepth,
        units: text_units(job),
    }
}

/// fio's text-output units from the job's `kb_base` and `unit_base`.
pub(super) fn text_units(job: &JobSpec) -> crate::report::units::TextUnits {
    crate::report::units::TextUnits {
        si: job.reporting.kb_base == 1000,
        bits: job.reporting.unit_bits,
    }
}

/// One header line per job definition, as fio prints before the run.
pub(super) fn job_lines(spec: &RunSpec) -> Vec<JobLine> {
    let gp = super::plan::group_and_phase(&spec.jobs);
    spec.jobs
        .iter()
        .zip(gp)
        .map(|(j, (g, _))| JobLine {
            name: j.name.clone(),
            groupid: g,
            header: header(j),
            numjobs: j.numjobs,
        })
        .collect()
}

fn group_reports(spec: &RunSpec, results: &[InstanceResult]) -> Vec<GroupReport> {
    let mut groups: Vec<GroupReport> = Vec::new();
    let ngroups = results
        .iter()
        .map(|r| r.instance.groupid + 1)
        .max()
        .unwrap_or(0);
    for g in 0..ngroups {
        let members: Vec<&InstanceResult> =
            results.iter().filter(|r| r.instance.groupid == g).collect();
        if members.is_empty() {
            continue;
        }
        let mut gr = GroupReport {
            groupid: g,
            dirs: Default::default(),
            mixed: None,
            sig_figs: spec.jobs[members[0].instance.job].reporting.sig_figs,
            units: text_units(&spec.jobs[members[0].instance.job]),
        };
        for (d, gd) in gr.dirs.iter_mut().enumerate() {
            // stats=0 jobs keep their group's block but add nothing to it, as fio's.
            let active: Vec<(u64, u64)> = members
                .iter()
                // A direction without runtime (verify_only's writes) is left out, as fio's.
                .filter(|m| {
                    m.result.ios[d] > 0
                        && runtime_ms(m.result.runtime_ns[d]) > 0
                        && spec.jobs[m.instance.job].reporting.record.stats
                })
                .map(|m| (m.result.bytes[d], runtime_ms(m.result.runtime_ns[d]).max(1)))
                .collect();
            if active.is_empty() {
                continue;
            }
            let bws: Vec<u64> = active.iter().map(|&(b, ms)| b * 1000 / ms).collect();
            *gd = GroupDirReport {
                io_bytes: active.iter().map(|a| a.0).sum(),
                agg_bw_bytes: 0,
                min_bw_bytes: *bws.iter().min().unwrap_or(&0),
                max_bw_bytes: *bws.iter().max().unwrap_or(&0),
                min_run_ms: active.iter().map(|a| a.1).min().unwrap_or(0),
                max_run_ms: active.iter().map(|a| a.1).max().unwrap_or(0),
            };
            gd.agg_bw_bytes = (gd.io_bytes as u128 * 1000 / gd.max_run_ms.max(1) as u128) as u64;
        }
        gr.mixed = mixed_group(spec, &members);
        // unified_rw_reporting=mixed: fio's group block has the MIXED line alone.
        if gr.mixed.is_some()
            && spec.jobs[members[0].instance.job].reporting.unified_rw == UnifiedRw::Mixed
        {
            gr.dirs = Default::default();
        }
        groups.push(gr);
    }
    groups
}

/// fio's `MIXED:` group line (unified_rw_reporting): with `mixed`, each job's directions
/// summed first; with `both`, min and max over every job's directions.
fn mixed_group(spec: &RunSpec, members: &[&InstanceResult]) -> Option<GroupDirReport> {
    let mode = spec.jobs[members.first()?.instance.job]
        .reporting
        .unified_rw;
    let entries: Vec<(u64, u64)> = members
        .iter()
        .flat_map(|m| {
            let ms = runtime_ms(m.result.measured_ns).max(1);
            let per_dir: Vec<(u64, u64)> = (0..3)
                .filter(|&d| m.result.ios[d] > 0)
                .map(|d| (m.result.bytes[d], ms))
                .collect();
            if mode == UnifiedRw::Mixed && !per_dir.is_empty() {
                vec![(per_dir.iter().map(|e| e.0).sum(), ms)]
            } else {
                per_dir
            }
        })
        .collect();
    if mode == UnifiedRw::None || entries.is_empty() {
        return None;
    }
    let bws: Vec<u64> = entries.iter().map(|&(b, ms)| b * 1000 / ms).collect();
    let mut gd = GroupDirReport {
        io_bytes: entries.iter().map(|e| e.0).sum(),
        agg_bw_bytes: 0,
        min_bw_bytes: *bws.iter().min().unwrap_or(&0),
        max_bw_bytes: *bws.iter().max().unwrap_or(&0),
        min_run_ms: entries.iter().map(|e| e.1).min().unwrap_or(0),
        max_run_ms: entries.iter().map(|e| e.1).max().unwrap_or(0),
    };
    gd.agg_bw_bytes = (gd.io_bytes as u128 * 1000 / gd.max_run_ms.max(1) as u128) as u64;
    Some(gd)
}

/// Where the run's files were: the first job's directory, the parent of its first named file,
/// or the current directory.
fn where_run(spec: &RunSpec) -> std::path::PathBuf {
    let Some(j) = spec.jobs.first() else {
        return ".".into();
    };
    if let Some(name) = j.filename.as_deref().and_then(|f| {
        crate::workload::layout::split_filenames(f)
            .into_iter()
            .next()
    }) {
        let p = std::path::PathBuf::from(name);
        let p = match &j.directory {
            Some(d) if p.is_relative() => d.join(p),
            _ => p,
        };
        return crate::workload::layout::parent_dir(&p);
    }
    j.directory.clone().unwrap_or_else(|| ".".into())
}

pub(crate) fn report(
    spec: &RunSpec,
    results: Vec<InstanceResult>,
    started_at: SystemTime,
    run_start_ns: u64,
    disks: Vec<DiskReport>,
) -> Report {
    let folded = fold(spec, &results);
    let (counted, silent): (Vec<&Folded>, Vec<&Folded>) =
        folded.iter().partition(|f| f.job.reporting.record.stats);
    let mut jobs: Vec<JobReport> = counted
        .iter()
        .map(|f| job_report(f, run_start_ns))
        .collect();
    // fio's stats=0: without group_reporting each such job still takes a slot of fio's
    // `jobs[]`, filled last and left empty; with it, the job is not reported at all.
    jobs.extend(
        silent
            .iter()
            .filter(|f| !f.job.group_reporting)
            .map(|_| JobReport::silent(elapsed_s(run_start_ns))),
    );
    let groups = group_reports(spec, &results);
    // fio's per=: the entry's mean periodic bandwidth as a share of its group's aggregate.
    for j in jobs.iter_mut() {
        if let Some(g) = groups.iter().find(|g| g.groupid == j.groupid) {
            for (d, dir) in j.dirs.iter_mut().enumerate() {
                if dir.bw_samples.samples > 0 {
                    dir.bw_agg_pct =
                        share_of_aggregate(dir.bw_samples.mean, g.dirs[d].agg_bw_bytes);
                }
            }
            if let (Some(m), Some(gm)) = (j.mixed.as_mut(), g.mixed.as_ref()) {
                if m.bw_samples.samples > 0 {
                    m.bw_agg_pct = share_of_aggregate(m.bw_samples.mean, gm.agg_bw_bytes);
                }
            }
        }
    }
    let mut notes = Vec::new();
    if spec.jobs.iter().any(|j| j.gtod_reduce) {
        notes.push("latency was not measured (gtod_reduce=1)".to_string());
    }
    Report {
        version: Report::version_string(),
        started_at,
        context: Some(super::context::describe(Some(&where_run(spec)))),
        global_options: spec.global_options.clone(),
        job_lines: job_lines(spec),
        jobs,
        groups,
        disks,
        notes,
        interrupted: None,
    }
}

/// fio's per= (stat.c, convert_agg_kbytes_percent): the mean of the periodic bandwidth samples,
/// in whole KiB/s, as a percentage of the group's aggregate bandwidth, capped at 100 (samples of
/// a job's busy intervals can average above the whole run's rate); 100 when the aggregate is
/// at most 1 KiB/s.
fn share_of_aggregate(mean_kib: f64, agg_bytes: u64) -> f64 {
    if agg_bytes <= 1024 {
        return 100.0;
    }
    // fio passes the mean as an int.
    (mean_kib.trunc() * 100.0 / (agg_bytes as f64 / 1024.0)).min(100.0)
}

#[cfg(test)]
mod tests {
    use super::{job_error, job_report, share_of_aggregate, Folded};
    use crate::model::{JobSpec, RecordSpec};
    use crate::run::instance::{IoFailure, WorkerResult};
    use crate::run::monitor::Trace;
    use crate::run::plan::Instance;
    use crate::run::InstanceResult;

    /// A synchronous engine's worker that read 100 blocks of 4 KiB in one measured second,
    /// with completion latencies of 1..=100 µs and one sync of 7 µs.
    fn scripted(job: &JobSpec) -> InstanceResult {
        let mut r = WorkerResult::new(1000, false, job);
        for i in 1..=100u64 {
            r.clat[0].record(i * 1000);
            r.write_sync.record(9000);
        }
        r.sync_lat.record(7000);
        r.syncs = 1;
        r.bytes[0] = 100 * 4096;
        r.ios[0] = 100;
        r.measured_ns = 1_000_000_000;
        r.runtime_ns = [1_000_000_000, 0, 0];
        r.sort_samples();
        InstanceResult {
            instance: Instance {
                job: 0,
                jobnum: 1,
                groupid: 0,
                phase: 0,
                files: Vec::new(),
                deferred: false,
                thread: 0,
            },
            result: r,
            trace: Trace::default(),
            laid_out: None,
            steadystate: None,
            sequential: None,
        }
    }

    fn report_of(job: &JobSpec) -> crate::report::JobReport {
        let r = scripted(job);
        let f = Folded {
            job,
            groupid: 0,
            members: vec![&r],
        };
        job_report(&f, 0)
    }

    #[test]
    fn job_report_of_a_scripted_result() {
        let j = report_of(&JobSpec::default());
        let d = &j.dirs[0];
        assert_eq!(
            (d.io_bytes, d.total_ios, d.runtime_ms),
            (409_600, 100, 1000)
        );
        assert_eq!((d.bw_bytes, d.iops), (409_600, 100.0));
        assert_eq!((d.clat.n, d.clat.min, d.clat.max), (100, 1000, 100_000));
        // Synchronous engine: lat is the clat recorder; no submission step, no slat.
        assert_eq!((d.lat.n, d.lat.max, d.lat.bins.len()), (100, 100_000, 100));
        // Percentiles as asked: clat's by default, lat's not.
        assert_eq!((d.clat.percentiles.len(), d.lat.percentiles.len()), (17, 0));
        assert_eq!(d.slat.n, 0);
        assert_eq!(j.dirs[1].total_ios, 0);
        assert_eq!(
            (j.sync.total_ios, j.sync.lat.n, j.sync.lat.max),
            (1, 1, 7000)
        );
        assert_eq!(j.sync.write_and_sync.n, 100);
        assert_ne!(j.lat_buckets, Default::default());
        // One I/O in flight at a time (syncs count too).
        assert_eq!(j.depths.level[0], 100.0);
        assert_eq!((j.njobs, j.error, j.gtod_reduce), (1, 0, false));
    }

    #[test]
    fn job_report_shows_only_the_latencies_measured() {
        // disable_clat: clat, its buckets and the sync latency are fio's zero; lat stays.
        let mut job = JobSpec::default();
        job.reporting.record = RecordSpec {
            clat: false,
            ..RecordSpec::default()
        };
        let j = report_of(&job);
        assert_eq!((j.dirs[0].clat.n, j.dirs[0].lat.n), (0, 100));
        assert_eq!(j.lat_buckets, Default::default());
        assert_eq!((j.sync.lat.n, j.sync.write_and_sync.n), (0, 100));
        // disable_lat: the synchronous engine's lat is blanked, clat stays.
        job.reporting.record = RecordSpec {
            lat: false,
            ..RecordSpec::default()
        };
        let j = report_of(&job);
        assert_eq!((j.dirs[0].clat.n, j.dirs[0].lat.n), (100, 0));
        // gtod_reduce: no latency at all, counts and rates stay.
        let job = JobSpec {
            gtod_reduce: true,
            ..JobSpec::default()
        };
        let j = report_of(&job);
        let d = &j.dirs[0];
        assert_eq!(
            (d.clat.n, d.lat.n, d.total_ios, d.bw_bytes),
            (0, 0, 100, 409_600)
        );
        assert!(d.lat_intervals.is_none() && d.prios.is_empty());
        assert_eq!((j.sync.lat.n, j.sync.write_and_sync.n), (0, 0));
        assert!(j.gtod_reduce && !j.latency_measured());
    }

    #[test]
    fn job_error_is_the_io_failure_then_the_job_error_then_the_first_survived() {
        let job = JobSpec::default();
        let mut a = scripted(&job);
        let mut b = scripted(&job);
        b.result.first_error = libc::ENOSPC;
        let err = |a: &InstanceResult, b: &InstanceResult| {
            job_error(&Folded {
                job: &job,
                groupid: 0,
                members: vec![a, b],
            })
        };
        assert_eq!(err(&a, &b), libc::ENOSPC);
        a.result.job_error = libc::EILSEQ;
        assert_eq!(err(&a, &b), libc::EILSEQ);
        b.result.error = Some(IoFailure {
            op: "read",
            path: "f".into(),
            offset: 0,
            len: 4096,
            errno: libc::EIO,
            message: String::new(),
        });
        assert_eq!(err(&a, &b), libc::EIO);
    }

    #[test]
    fn per_is_capped_at_100_as_fio_does() {
        // The case: a single job whose samples average 0.84 % above the group's rate.
        assert_eq!(share_of_aggregate(10_084.7, 10_000 * 1024), 100.0);
        // Below the aggregate: the whole-KiB mean over the aggregate in KiB/s.
        assert_eq!(share_of_aggregate(2_500.9, 10_000 * 1024), 25.0);
        // An aggregate of at most 1 KiB/s: fio says 100.
        assert_eq!(share_of_aggregate(0.5, 1024), 100.0);
    }
}
