//! fio's normal (human-readable) output format, line for line where fio has the line.
//!
//! Layout and number formats follow fio 3.33 (`stat.c`: show_thread_status_normal,
//! show_ddir_status, display_lat, show_clat_percentiles, show_lat, show_group_stats,
//! print_disk_util; `init.c` for the job header; `backend.c` for "Starting"). Deliberate
//! differences: syncs are counted in the fourth `issued rwts` column instead of as short reads,
//! a line says when latency was not measured (gtod_reduce), and iogauge's notes close the output.

use crate::untrusted::term;
use std::fmt::Write as _;

use super::units::{
    ctime, depth_share, lat_share, num2str, size_str_in, strerror, TextUnits, Unit, SIG_FIGS,
};
use super::{
    DirReport, DiskReport, GroupReport, JobLine, JobReport, LatSummary, LatencyBuckets, Report,
};

const DIR_NAMES: [&str; 3] = ["read", "write", "trim"];
const GROUP_DIR_NAMES: [&str; 3] = ["   READ", "  WRITE", "   TRIM"];

/// fio's `--status-interval` dump: the results block alone (job blocks, group summaries,
/// disks), without what fio prints once before the run.
pub(crate) fn render_normal_status(r: &Report) -> String {
    let mut out = String::new();
    results(r, &mut out);
    out
}

/// The whole text output of a run: what fio prints before the jobs run (job header lines,
/// version, threads, files laid out), then after (job blocks, group summaries, disk stats).
pub(crate) fn render_normal(r: &Report) -> String {
    let mut out = String::new();
    preamble(r, &mut out);
    results(r, &mut out);
    out
}

fn preamble(r: &Report, out: &mut String) {
    let derived;
    let lines: &[JobLine] = if r.job_lines.is_empty() {
        derived = derive_job_lines(&r.jobs);
        &derived
    } else {
        &r.job_lines
    };
    for l in lines {
        let h = &l.header;
        let range = |d: usize| {
            format!(
                "{}-{}",
                size_str_in(h.bs[d], h.units),
                size_str_in(h.bs_max[d], h.units)
            )
        };
        let trim = if h.bs_is_seq_rand {
            "bs_is_seq_rand".to_string()
        } else {
            format!("(T) {}", range(2))
        };
        let _ = writeln!(
            out,
            "{}: (g={}): rw={}, bs=(R) {}, (W) {}, {trim}, ioengine={}, iodepth={}",
            term(&l.name),
            l.groupid,
            h.rw,
            range(0),
            range(1),
            h.ioengine,
            h.iodepth,
        );
        if l.numjobs > 1 {
            out.push_str("...\n");
        }
    }
    let _ = writeln!(out, "{}", r.version);
    // iogauge runs every job instance as a thread; fio words this exactly so with `thread`.
    let threads: u32 = lines.iter().map(|l| l.numjobs.max(1)).sum();
    let _ = writeln!(
        out,
        "Starting {} thread{}",
        threads,
        if threads == 1 { "" } else { "s" }
    );
    for j in &r.jobs {
        if let Some((files, bytes)) = j.laid_out {
            let many = files > 1;
            let _ = writeln!(
                out,
                "{}: Laying out IO file{} ({} file{} / {}{}MiB)",
                term(&j.name),
                if many { "s" } else { "" },
                files,
                if many { "s" } else { "" },
                if many { "total " } else { "" },
                bytes >> 20
            );
        }
    }
}

/// Without explicit job lines: one per `jobs[]` entry, merging consecutive per-instance entries
/// of the same job (numjobs without group_reporting).
fn derive_job_lines(jobs: &[JobReport]) -> Vec<JobLine> {
    let mut lines: Vec<JobLine> = Vec::new();
    for j in jobs {
        if let Some(last) = lines.last_mut() {
            if last.name == j.name && last.groupid == j.groupid && last.header == j.header {
                last.numjobs += j.njobs.max(1);
                continue;
            }
        }
        lines.push(JobLine {
            name: j.name.clone(),
            groupid: j.groupid,
            header: j.header.clone(),
            numjobs: j.njobs.max(1),
        });
    }
    lines
}

fn results(r: &Report, out: &mut String) {
    out.push('\n');
    for j in &r.jobs {
        render_job(j, r, out);
    }
    for g in &r.groups {
        render_group(g, out);
    }
    if !r.disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for d in &r.disks {
            render_disk(d, out);
        }
    }
    if !r.notes.is_empty() {
        out.push_str("\niogauge notes:\n");
        for n in &r.notes {
            let _ = writeln!(out, "  {}", term(n));
        }
    }
}

fn render_job(j: &JobReport, r: &Report, out: &mut String) {
    let any_bytes = j.dirs.iter().any(|d| d.io_bytes > 0);
    let any_ios = j.dirs.iter().any(|d| d.total_ios > 0);
    // fio skips jobs that did nothing at all.
    if !any_bytes && !any_ios && j.sync.total_ios == 0 {
        return;
    }
    let when = ctime(j.finished_at.unwrap_or(r.started_at));
    let err = if j.error == 0 {
        String::new()
    } else {
        format!(" (error={})", strerror(j.error))
    };
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err={:2}{}: pid={}: {}",
        term(&j.name),
        j.groupid,
        j.njobs,
        j.error,
        err,
        j.pid,
        when
    );
    if !j.description.is_empty() {
        let _ = writeln!(out, "  Description  : [{}]", term(&j.description));
    }
    let prec = percentile_precision(&j.percentile_list);
    let fmt = (prec, sig_figs(j.sig_figs), j.lat_percentiles, j.units);
    let mixed_only = j.unified_rw == crate::model::UnifiedRw::Mixed && j.mixed.is_some();
    for (d, dir) in j.dirs.iter().enumerate() {
        // fio's show_ddir_status: a direction without runtime (verify_only's writes) is not shown.
        if dir.io_bytes > 0 && dir.runtime_ms > 0 && !mixed_only {
            render_dir(DIR_NAMES[d], d == 1, dir, fmt, out);
        }
    }
    if let Some(m) = j.mixed.as_ref().filter(|m| m.io_bytes > 0) {
        if mixed_only {
            render_dir("mixed", false, m, fmt, out);
        } else {
            // unified_rw_reporting=both: fio 3.33 prints the mixed entry's first line with
            // zero IOPS, bandwidth and size (`IOPS=0, BW=0 (0)(0B/…msec)`), its latencies right.
            let mut shown = m.clone();
            shown.total_ios = 0;
            shown.bw_bytes = 0;
            shown.io_bytes = 0;
            let mut text = String::new();
            render_dir("mixed", false, &shown, fmt, &mut text);
            // …and without units on the zero bandwidth.
            out.push_str(&text.replacen("BW=0B/s (0B/s)", "BW=0 (0)", 1));
        }
    }
    if !j.latency_measured() {
        out.push_str("  lat          : not measured (gtod_reduce=1)\n");
    } else {
        render_lat_buckets(&j.lat_buckets, out);
    }
    if j.sync.total_ios > 0 && j.sync.lat.n > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        display_lat("sync", &j.sync.lat, out);
        percentile_block("sync", &j.sync.lat.percentiles, prec, out);
    }
    // A job that did I/O always has a depth distribution, except in a `--status-interval`
    // report so far whose workers have not yet left a snapshot (run/status.rs): its CPU and
    // depth figures are not known then, and the lines are left out rather than printed as 0.
    if j.depths.level.iter().any(|&v| v > 0.0) {
        let c = &j.cpu;
        let _ = writeln!(
            out,
            "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
            c.usr_pct, c.sys_pct, c.ctx, c.majf, c.minf
        );
        let l = j.depths.level.map(depth_share);
        let _ = writeln!(
            out,
            "  IO depths    : 1={:.1}%, 2={:.1}%, 4={:.1}%, 8={:.1}%, 16={:.1}%, 32={:.1}%, >=64={:.1}%",
            l[0], l[1], l[2], l[3], l[4], l[5], l[6]
        );
        for (label, v) in [
            ("     submit    ", j.depths.submit.map(depth_share)),
            ("     complete  ", j.depths.complete.map(depth_share)),
        ] {
            let _ = writeln!(
                out,
                "{label}: 0={:.1}%, 4={:.1}%, 8={:.1}%, 16={:.1}%, 32={:.1}%, 64={:.1}%, >=64={:.1}%",
                v[0], v[1], v[2], v[3], v[4], v[5], v[6]
            );
        }
    }
    let [rd, wr, tr] = &j.dirs;
    // The fourth column counts fsync/fdatasync calls (fio 3.33 miscounts fdatasync as short
    // reads; iogauge does not).
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},{} short={},{},{},0 dropped={},{},{},0",
        rd.total_ios,
        wr.total_ios,
        tr.total_ios,
        j.sync.total_ios,
        rd.short_ios,
        wr.short_ios,
        tr.short_ios,
        rd.drop_ios,
        wr.drop_ios,
        tr.drop_ios
    );
    if let Some((total, first)) = j.errors {
        let _ = writeln!(
            out,
            "     errors    : total={total}, first_error={first}/<{}>",
            strerror(first)
        );
    }
    if j.iodepth > 0 {
        let (target, window, pct) = j.latency_target.unwrap_or((0, 0, 100.0));
        let _ = writeln!(
            out,
            "     latency   : target={target}, window={window}, percentile={pct:.2}%, depth={}",
            j.iodepth
        );
    }
    if let Some(ss) = &j.steadystate {
        out.push_str(&ss.text_line());
    }
}

/// One direction: the IOPS/BW line, latency summaries, percentiles and periodic samples.
fn render_dir(
    name: &str,
    zones: bool,
    dir: &DirReport,
    fmt: (usize, usize, bool, TextUnits),
    out: &mut String,
) {
    let (prec, sig, lat_pcts, units) = fmt;
    let runtime = dir.runtime_ms;
    if runtime == 0 {
        return;
    }
    // fio prints the integer IOPS (1000·ios / runtime) through num2str.
    let iops = (1000u128 * dir.total_ios as u128 / runtime as u128) as u64;
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec){}",
        name,
        num2str(iops, sig, false, Unit::None),
        units.bw(dir.bw_bytes, sig, true),
        units.bw(dir.bw_bytes, sig, false),
        units.bytes(dir.io_bytes, sig, true),
        runtime,
        if zones { "; 0 zone resets" } else { "" }
    );
    if dir.slat.n > 0 {
        display_lat("slat", &dir.slat, out);
    }
    if dir.clat.n > 0 {
        display_lat("clat", &dir.clat, out);
    }
    if dir.lat.n > 0 {
        display_lat(" lat", &dir.lat, out);
    }
    // cmdprio: each priority's latency, `clat` or (lat_percentiles) `lat` as fio names it.
    let prio_type = if lat_pcts { "lat" } else { "clat" };
    for p in &dir.prios {
        let name = format!("{prio_type} prio {}/{}", p.class, p.level);
        display_lat(&name, &p.lat, out);
    }
    if dir.slat.n > 0 {
        percentile_block("slat", &dir.slat.percentiles, prec, out);
    }
    if dir.clat.n > 0 {
        percentile_block("clat", &dir.clat.percentiles, prec, out);
    }
    if dir.lat.n > 0 {
        percentile_block("lat", &dir.lat.percentiles, prec, out);
    }
    let all = if lat_pcts { dir.lat.n } else { dir.clat.n };
    for p in dir.prios.iter().filter(|p| p.lat.n > 0) {
        let share = p.lat.n as f64 * 100.0 / all.max(1) as f64;
        let name = format!(
            "{prio_type} prio {}/{} ({share:.2}% of IOs)",
            p.class, p.level
        );
        percentile_block(&name, &p.lat.percentiles, prec, out);
    }
    let bw = &dir.bw_samples;
    if bw.samples > 0 {
        let (mut min, mut max, mut mean, mut dev) = (bw.min, bw.max, bw.mean, bw.stddev);
        let mut unit = "KiB";
        // Above 1 GiB/s fio switches the line to MiB/s (truncating min and max).
        if mean > 1024.0 * 1024.0 {
            min = (min as f64 / 1024.0) as u64;
            max = (max as f64 / 1024.0) as u64;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={:.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}",
            dir.bw_agg_pct, bw.samples
        );
    }
    let io = &dir.iops_samples;
    if io.samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            io.min, io.max, io.mean, io.stddev, io.samples
        );
    }
}

/// `    clat (usec): min=43, max=10499, avg=312.19, stdev=172.32`. The unit is chosen as fio
/// does: usec when min > 2000 ns, max > 99999 ns and stdev > 1000 ns; msec likewise ×1000.
fn display_lat(name: &str, s: &LatSummary, out: &mut String) {
    let (mut min, mut max, mut mean, mut dev) = (s.min, s.max, s.mean, s.stddev);
    let base = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1_000_000.0;
        dev /= 1_000_000.0;
        "(msec)"
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1000.0;
        dev /= 1000.0;
        "(usec)"
    } else {
        "(nsec)"
    };
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.2}, stdev={dev:5.2}",
        num2str(min, 6, false, Unit::None),
        num2str(max, 6, false, Unit::None)
    );
}

/// The percentile table. Unit: msec when the smallest percentile value exceeds 2 ms and the
/// largest 99.999999 ms, usec for 2 µs and 99.999 µs, else nsec; scaled values are rounded up.
/// Column width follows the largest value (at least 5); entries per line = 73 / (12 + width).
fn percentile_block(pre: &str, pcts: &[(f64, u64)], precision: usize, out: &mut String) {
    if pcts.is_empty() {
        return;
    }
    let minv = pcts.iter().map(|p| p.1).min().unwrap_or(0);
    let maxv = pcts.iter().map(|p| p.1).max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let scaled_max = maxv / divisor;
    let width = if scaled_max == 0 {
        5
    } else {
        (scaled_max.ilog10() as usize + 1).max(5)
    };
    let per_line = (80 - 7) / (precision + 10 + width);
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    for (j, &(p, v)) in pcts.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let is_last = j == pcts.len() - 1;
        let mut v = v;
        for _ in 0..scale_down {
            v = v.div_ceil(1000);
        }
        let _ = write!(
            out,
            " {p:w$.prec$}th=[{v:width$}]{}",
            if is_last { '\n' } else { ',' },
            w = precision + 3,
            prec = precision,
        );
        if !is_last && j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// The significant figures in effect: the job's, or fio's default when unset (0).
fn sig_figs(n: u32) -> usize {
    if n == 0 {
        SIG_FIGS
    } else {
        n as usize
    }
}

/// fio's percentile_precision: the most decimals written in `percentile_list` (2 for the
/// default list), so `50:99` prints `50th=[...]`. Trailing zeros as written (`50.00`) are not
/// seen here (the list is numbers by now): they count as no decimals.
fn percentile_precision(list: &[f64]) -> usize {
    if list.is_empty() {
        return 2;
    }
    list.iter()
        .map(|&p| {
            (0..6)
                .find(|&d| {
                    let x = p * 10f64.powi(d as i32);
                    (x - x.round()).abs() < 1e-6
                })
                .unwrap_or(6)
        })
        .max()
        .unwrap_or(2)
}

/// `  lat (usec)   : 2=39.19%, 4=3.40%, ...`, five entries per line, zero entries skipped.
fn render_lat_buckets(b: &LatencyBuckets, out: &mut String) {
    const LABELS: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    for (unit, vals) in [
        ("nsec", &b.ns[..]),
        ("usec", &b.us[..]),
        ("msec", &b.ms[..]),
    ] {
        let mut shown = 0usize;
        for (i, &v) in vals.iter().enumerate() {
            if v <= 0.0 {
                continue;
            }
            if shown.is_multiple_of(5) {
                if shown > 0 {
                    out.push('\n');
                }
                let _ = write!(out, "  lat ({unit})   : ");
            } else {
                out.push_str(", ");
            }
            let _ = write!(out, "{}={:.2}%", LABELS[i], lat_share(v));
            shown += 1;
        }
        if shown > 0 {
            out.push('\n');
        }
    }
}

fn render_group(g: &GroupReport, out: &mut String) {
    let _ = writeln!(out, "\nRun status group {} (all jobs):", g.groupid);
    let names = GROUP_DIR_NAMES.iter().chain(["  MIXED"].iter());
    for (name, gd) in names.zip(g.dirs.iter().chain(g.mixed.iter())) {
        if gd.max_run_ms == 0 {
            continue;
        }
        let sig = sig_figs(g.sig_figs);
        // Leading units, then the others in parentheses (fio's kb_base and unit_base).
        let iec = |n| g.units.bw(n, sig, true);
        let si = |n| g.units.bw(n, sig, false);
        let _ = writeln!(
            out,
            "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            name,
            iec(gd.agg_bw_bytes),
            si(gd.agg_bw_bytes),
            iec(gd.min_bw_bytes),
            iec(gd.max_bw_bytes),
            si(gd.min_bw_bytes),
            si(gd.max_bw_bytes),
            g.units.bytes(gd.io_bytes, sig, true),
            g.units.bytes(gd.io_bytes, sig, false),
            gd.min_run_ms,
            gd.max_run_ms
        );
    }
}

fn render_disk(d: &DiskReport, out: &mut String) {
    let aggr = d.aggr();
    // fio indents devices that have slaves two more columns.
    if aggr.is_some() {
        out.push_str("  ");
    }
    let _ = write!(
        out,
        "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
        d.name,
        d.read_ios,
        d.write_ios,
        d.read_merges,
        d.write_merges,
        d.read_ticks,
        d.write_ticks,
        d.in_queue,
        d.util_pct.min(100.0)
    );
    if let Some(a) = aggr {
        let _ = write!(
            out,
            ", aggrios={}/{}, aggrmerge={}/{}, aggrticks={}/{}, aggrin_queue={}, aggrutil={:.2}%",
            a.read_ios,
            a.write_ios,
            a.read_merges,
            a.write_merges,
            a.read_ticks,
            a.write_ticks,
            a.in_queue,
            a.util_pct
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::*;

    /// Compares rendered text with fio's, line by line, skipping lines the caller lists by
    /// prefix (pid/date/version lines, deliberate differences). Reports every mismatch.
    fn assert_lines_match(got: &str, want: &str, skip: &[&str]) {
        let keep = |l: &&str| !skip.iter().any(|s| l.starts_with(s));
        let g: Vec<&str> = got.lines().filter(keep).collect();
        let w: Vec<&str> = want.lines().filter(keep).collect();
        let mut errs = Vec::new();
        for i in 0..g.len().max(w.len()) {
            let (a, b) = (g.get(i).copied(), w.get(i).copied());
            if a != b {
                errs.push(format!("line {i}:\n  got:  {a:?}\n  want: {b:?}"));
            }
        }
        assert!(
            errs.is_empty(),
            "{} mismatches:\n{}",
            errs.len(),
            errs.join("\n")
        );
    }

    fn find_line<'a>(text: &'a str, prefix: &str) -> &'a str {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting with {prefix:?} in\n{text}"))
    }

    #[test]
    fn run2_randrw_libaio_matches_fio() {
        let r = fixtures::run2();
        let got = render_normal(&r);
        // The reference has the terse line of the same run on line 4: drop it.
        let want: String = fixtures::RUN2_TXT
            .lines()
            .filter(|l| !l.starts_with("3;"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_lines_match(
            &got,
            &want,
            &["fio-3", "iogauge-", "Starting ", "rr: (groupid="],
        );
        assert!(got.contains("\niogauge-0.1.0\nStarting 1 thread\n"));
        assert!(find_line(&got, "rr: (groupid=0, jobs=1): err= 0: pid=4195: ").len() > 40);
    }

    #[test]
    fn run1_fdatasync_counts_syncs_not_short_reads() {
        let r = fixtures::run1();
        let got = render_normal(&r);
        assert_lines_match(
            &got,
            fixtures::RUN1_TXT,
            &[
                "fio-3",
                "iogauge-",
                "Starting ",
                "t: (groupid=",
                "     issued rwts",
                "  IO depths",
            ],
        );
        // Deliberate differences from fio 3.33: syncs in the 4th column, no short reads, and
        // the depth histogram adds up to 100 %.
        assert_eq!(
            find_line(&got, "     issued rwts"),
            "     issued rwts: total=0,911,0,911 short=0,0,0,0 dropped=0,0,0,0"
        );
        assert_eq!(
            find_line(&got, "  IO depths"),
            "  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%"
        );
        assert!(got.contains("  fsync/fdatasync/sync_file_range:\n    sync (usec): min=76"));
    }

    #[test]
    fn run3_groups_numjobs_and_two_status_groups() {
        let r = fixtures::run3();
        let got = render_normal(&r);
        assert_lines_match(
            &got,
            fixtures::RUN3_TXT,
            &[
                "fio-3",
                "iogauge-",
                "Starting ",
                "seqw: (groupid=",
                "randr: (groupid=",
            ],
        );
        assert!(got.contains("\nStarting 3 threads\n"));
        assert!(got.starts_with("seqw: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1\n...\nrandr: (g=1)"));
    }

    #[test]
    fn derived_job_lines_when_none_given() {
        let mut r = fixtures::run3();
        r.job_lines.clear();
        let got = render_normal(&r);
        // seqw is one group_reporting entry with njobs=2: header plus "...".
        assert!(got.starts_with("seqw: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1\n...\nrandr: (g=1)"));
        assert!(got.contains("\nStarting 3 threads\n"));
    }

    #[test]
    fn seed002_null_engine_bw_in_mib_and_nsec_buckets() {
        let r = fixtures::seed002_null();
        let got = render_normal(&r);
        let want = fixtures::SEED002_TXT;
        assert_lines_match(
            &got,
            want,
            &["fio-3", "iogauge-", "Starting ", "test: (groupid="],
        );
    }

    #[test]
    fn gtod_reduce_says_latency_not_measured_and_notes_close() {
        let mut r = fixtures::seed002_null();
        let j = &mut r.jobs[0];
        j.gtod_reduce = true;
        for d in j.dirs.iter_mut() {
            d.clat = LatSummary::default();
            d.lat = LatSummary::default();
        }
        j.lat_buckets = LatencyBuckets::default();
        r.notes
            .push("latency was not measured (gtod_reduce=1)".to_string());
        let got = render_normal(&r);
        assert!(!got.contains("clat"));
        assert!(!got.contains("lat (nsec)"));
        assert!(got.contains(
            "  read: IOPS=3360k, BW=12.8GiB/s (13.8GB/s)(38.4GiB/3000msec)\n   bw (  MiB/s)"
        ));
        assert!(got.contains("samples=5\n  lat          : not measured (gtod_reduce=1)\n  cpu"));
        assert!(got.ends_with("\niogauge notes:\n  latency was not measured (gtod_reduce=1)\n"));
    }

    #[test]
    fn idle_job_is_skipped_and_no_disk_block_without_disks() {
        let mut r = fixtures::seed002_null();
        r.jobs[0].dirs = Default::default();
        r.disks.clear();
        let got = render_normal(&r);
        assert!(!got.contains("(groupid="));
        assert!(!got.contains("Disk stats"));
    }

    #[test]
    fn percentile_block_scales_to_msec_and_wraps_at_three() {
        // Seed 004 (RHEL 8.2 HDD): sync percentiles in msec.
        let pcts: Vec<(f64, u64)> =
            [(1.0, 5_800_000), (5.0, 6_500_000), (99.99, 233_832_448)].to_vec();
        let mut out = String::new();
        percentile_block("sync", &pcts, 2, &mut out);
        assert_eq!(
            out,
            "    sync percentiles (msec):\n     |  1.00th=[    6],  5.00th=[    7], 99.99th=[  234]\n"
        );
        // 7-digit usec values: three per line.
        let pcts: Vec<(f64, u64)> = (0..5).map(|i| (i as f64 + 1.0, 1_952_700_000)).collect();
        let mut out = String::new();
        percentile_block("clat", &pcts, 2, &mut out);
        assert_eq!(
            out,
            "    clat percentiles (msec):\n     |  1.00th=[ 1953],  2.00th=[ 1953],  3.00th=[ 1953],  4.00th=[ 1953],\n     |  5.00th=[ 1953]\n"
        );
        let pcts: Vec<(f64, u64)> = (0..4).map(|i| (i as f64 + 1.0, 1_952_700)).collect();
        let mut out = String::new();
        // min 1.95 ms > 2 µs and max > 99.999 µs: usec, width 4 → 5.
        percentile_block("clat", &pcts, 2, &mut out);
        assert!(out.starts_with("    clat percentiles (usec):\n     |  1.00th=[ 1953],"));
        let pcts: Vec<(f64, u64)> = (0..4).map(|i| (i as f64 + 1.0, 19_527_000)).collect();
        let mut out = String::new();
        percentile_block("clat", &pcts, 2, &mut out);
        assert_eq!(
            out,
            "    clat percentiles (usec):\n     |  1.00th=[19527],  2.00th=[19527],  3.00th=[19527],  4.00th=[19527]\n"
        );
        let pcts: Vec<(f64, u64)> = (0..4).map(|i| (i as f64 + 1.0, 1_952_700_001)).collect();
        let mut out = String::new();
        percentile_block("clat", &pcts, 2, &mut out);
        assert!(out.contains("[ 1953]"), "{out}");
        let pcts: Vec<(f64, u64)> = (0..4).map(|i| (i as f64 + 1.0, 1_500_000)).collect();
        let mut out = String::new();
        percentile_block("clat", &pcts, 2, &mut out);
        // Max below 99.999 µs·... no: 1.5 ms > 99.999 µs and min > 2 µs → usec.
        assert!(out.contains("[ 1500]"), "{out}");
        let pcts: Vec<(f64, u64)> = (0..4)
            .map(|i| (i as f64 + 1.0, 1_234_567_890_123))
            .collect();
        let mut out = String::new();
        percentile_block("clat", &pcts, 2, &mut out);
        // 7-digit msec values: width 7, 73 / 19 = 3 per line.
        assert_eq!(
            out,
            "    clat percentiles (msec):\n     |  1.00th=[1234568],  2.00th=[1234568],  3.00th=[1234568],\n     |  4.00th=[1234568]\n"
        );
    }

    #[test]
    fn display_lat_units() {
        let s = LatSummary {
            n: 10,
            min: 1_023_000,
            max: 1_952_700_000,
            mean: 2_731_700.0,
            stddev: 28_999_190.0,
            ..Default::default()
        };
        let mut out = String::new();
        display_lat("sync", &s, &mut out);
        // Seed 004: min ≤ 2 ms keeps usec; the 7-digit max goes through num2str.
        assert_eq!(
            out,
            "    sync (usec): min=1023, max=1952.7k, avg=2731.70, stdev=28999.19\n"
        );
        let s = LatSummary {
            n: 10,
            min: 5_000_000,
            max: 234_000_000,
            mean: 23_260_000.0,
            stddev: 7_680_000.0,
            ..Default::default()
        };
        let mut out = String::new();
        display_lat("sync", &s, &mut out);
        assert_eq!(
            out,
            "    sync (msec): min=5, max=234, avg=23.26, stdev= 7.68\n"
        );
    }

    #[test]
    fn disk_with_slaves_prints_aggr() {
        let slave = DiskReport {
            name: "nvme0n1".into(),
            read_ios: 4149,
            write_ios: 82184,
            read_merges: 188,
            write_merges: 1942,
            read_ticks: 536,
            write_ticks: 8280,
            in_queue: 4864,
            util_pct: 28.77,
            slaves: vec![],
        };
        let d = DiskReport {
            name: "dm-8".into(),
            read_ios: 4,
            write_ios: 39339,
            read_merges: 0,
            write_merges: 0,
            read_ticks: 0,
            write_ticks: 15288,
            in_queue: 15295,
            util_pct: 94.22,
            slaves: vec![slave],
        };
        let mut out = String::new();
        render_disk(&d, &mut out);
        assert_eq!(out, "    dm-8: ios=4/39339, merge=0/0, ticks=0/15288, in_queue=15295, util=94.22%, aggrios=4149/82184, aggrmerge=188/1942, aggrticks=536/8280, aggrin_queue=4864, aggrutil=28.77%\n");
    }

    #[test]
    fn numjobs_entries_laying_out_errors_and_lat_percentiles() {
        let mut r = fixtures::seed002_null();
        let mut second = r.jobs[0].clone();
        second.pid = 8499;
        second.error = 5;
        r.jobs[0].laid_out = Some((1, 1 << 30));
        second.laid_out = Some((2, 2 << 30));
        // lat_percentiles: fio prints the clat block, then the lat block.
        second.lat_percentiles = true;
        second.dirs[0].lat.percentiles = second.dirs[0].clat.percentiles.clone();
        r.jobs.push(second);
        let got = render_normal(&r);
        assert!(got.starts_with(
            "test: (g=0): rw=read, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=null, iodepth=1\n...\niogauge-0.1.0\nStarting 2 threads\ntest: Laying out IO file (1 file / 1024MiB)\ntest: Laying out IO files (2 files / total 2048MiB)\n\ntest: (groupid=0, jobs=1): err= 0: pid=8498: "
        ), "{got}");
        assert!(got.contains(
            "\ntest: (groupid=0, jobs=1): err= 5 (error=Input/output error): pid=8499: "
        ));
        let second_block = &got[got.find("pid=8499").unwrap_or(0)..];
        assert!(second_block.contains(
            "     | 99.99th=[  362]\n    lat percentiles (nsec):\n     |  1.00th=[   40],"
        ));
        assert_eq!(
            crate::report::terse::render_terse(&r).lines().count(),
            2,
            "one terse line per job entry"
        );
    }
}
