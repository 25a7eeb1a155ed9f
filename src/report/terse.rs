//! fio's terse output, version 3: one `;`-separated line per `jobs[]` entry.
//!
//! Field order follows fio 3.33 (`stat.c`: show_thread_status_terse_all,
//! show_ddir_status_terse; documented under TERSE OUTPUT in fio's HOWTO):
//!
//! ```text
//! 3;version;jobname;groupid;error;
//! READ  kb;bw KiB/s;iops;runtime ms;
//!       slat min;max;mean;stddev (µs); clat min;max;mean;stddev (µs);
//!       20 × clat (or lat) percentile `p%=µs` (unused slots `0%=0`);
//!       lat min;max;mean;stddev (µs); bw min;max;agg %;mean;stddev (KiB/s);
//! WRITE the same;
//! cpu usr %;sys %;ctx;majf;minf;
//! IO depth 1;2;4;8;16;32;>=64 (%);
//! latency µs 2;4;10;20;50;100;250;500;750;1000 (%, ns buckets folded into the first);
//! latency ms 2;4;10;20;50;100;250;500;750;1000;2000;>=2000 (%);
//! per disk: name;read ios;write ios;read merges;write merges;read ticks;write ticks;
//!           in_queue;util % [;slaves;aggr values…];
//! [description]
//! ```
//! Version 3 has no trim and no sync fields; µs values are truncated (ns / 1000).

use std::fmt::Write as _;

use super::units::{depth_share, lat_share};
use super::{DirReport, DiskReport, JobReport, Report, DEFAULT_PERCENTILES};

/// fio prints a fixed number of percentile slots (FIO_IO_U_LIST_MAX_LEN).
const PERCENTILE_SLOTS: usize = 20;

/// Terse v3: one line per job entry.
pub(crate) fn render_terse(r: &Report) -> String {
    let mut out = String::new();
    for j in &r.jobs {
        render_job(r, j, &mut out);
    }
    out
}

fn render_job(r: &Report, j: &JobReport, out: &mut String) {
    let _ = write!(out, "3;{};{};{};{}", r.version, j.name, j.groupid, j.error);
    render_dir(j, &j.dirs[0], out);
    render_dir(j, &j.dirs[1], out);
    let c = &j.cpu;
    let _ = write!(
        out,
        ";{:.6}%;{:.6}%;{};{};{}",
        c.usr_pct, c.sys_pct, c.ctx, c.majf, c.minf
    );
    for v in j.depths.level.map(depth_share) {
        let _ = write!(out, ";{v:.1}%");
    }
    // fio keeps the v3 layout by folding the nanosecond buckets into the first µs bucket.
    let ns_total: f64 = j.lat_buckets.ns.iter().sum();
    for (i, v) in j.lat_buckets.us.map(lat_share).iter().enumerate() {
        let v = if i == 0 { v + ns_total } else { *v };
        let _ = write!(out, ";{v:.2}%");
    }
    for v in j.lat_buckets.ms.map(lat_share) {
        let _ = write!(out, ";{v:.2}%");
    }
    for d in &r.disks {
        render_disk(d, out);
    }
    // fio: with continue_on_error, the errors survived and the first one.
    if let Some((total, first)) = j.errors {
        let _ = write!(out, ";{total};{first}");
    }
    if !j.description.is_empty() {
        let _ = write!(out, ";{}", j.description);
    }
    out.push('\n');
}

fn render_dir(j: &JobReport, d: &DirReport, out: &mut String) {
    let (bw_kib, iops) = if d.runtime_ms > 0 {
        (
            d.bw_bytes / 1024,
            (1000u128 * d.total_ios as u128 / d.runtime_ms as u128) as u64,
        )
    } else {
        (0, 0)
    };
    let _ = write!(
        out,
        ";{};{};{};{}",
        d.io_bytes >> 10,
        bw_kib,
        iops,
        d.runtime_ms
    );
    lat_us(&d.slat, out);
    lat_us(&d.clat, out);

    // The percentile columns: lat's with lat_percentiles, else clat's; nothing when
    // latencies were not recorded or percentiles are off.
    let src = if j.lat_percentiles && !d.lat.percentiles.is_empty() {
        Some(&d.lat)
    } else if j.clat_percentiles || !d.clat.percentiles.is_empty() {
        Some(&d.clat)
    } else {
        None
    };
    let list: Vec<(f64, u64)> = match src {
        _ if !j.latency_measured() => Vec::new(),
        Some(s) if !s.percentiles.is_empty() => s.percentiles.clone(),
        // Enabled but no samples: fio prints the percentile list with zero values.
        Some(_) => {
            let l: &[f64] = if j.percentile_list.is_empty() {
                &DEFAULT_PERCENTILES
            } else {
                &j.percentile_list
            };
            l.iter().map(|&p| (p, 0)).collect()
        }
        None => Vec::new(),
    };
    for i in 0..PERCENTILE_SLOTS {
        match list.get(i) {
            Some(&(p, v)) => {
                let _ = write!(out, ";{p:.6}%={}", v / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    lat_us(&d.lat, out);

    let bw = &d.bw_samples;
    if bw.samples > 0 {
        let _ = write!(
            out,
            ";{};{};{:.6}%;{:.6};{:.6}",
            bw.min, bw.max, d.bw_agg_pct, bw.mean, bw.stddev
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
}

/// `min;max;mean;stddev` in µs, or zeros without samples.
fn lat_us(s: &super::LatSummary, out: &mut String) {
    if s.n > 0 {
        let _ = write!(
            out,
            ";{};{};{:.6};{:.6}",
            s.min / 1000,
            s.max / 1000,
            s.mean / 1000.0,
            s.stddev / 1000.0
        );
    } else {
        out.push_str(";0;0;0.000000;0.000000");
    }
}

fn render_disk(d: &DiskReport, out: &mut String) {
    let _ = write!(
        out,
        ";{};{};{};{};{};{};{};{};{:.2}%",
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
    if let Some(a) = d.aggr() {
        let _ = write!(
            out,
            ";slaves;{};{};{};{};{};{};{};{:.2}%",
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
}

#[cfg(test)]
mod tests {
    use super::super::fixtures;
    use super::super::LatSummary;
    use super::*;

    fn reference_line() -> &'static str {
        fixtures::RUN2_TXT
            .lines()
            .find(|l| l.starts_with("3;"))
            .expect("terse line in run2 reference")
    }

    #[test]
    fn run2_matches_fio_field_by_field() {
        let got = render_terse(&fixtures::run2());
        assert!(got.ends_with('\n'));
        assert_eq!(got.lines().count(), 1);
        let g: Vec<&str> = got.trim_end().split(';').collect();
        let w: Vec<&str> = reference_line().split(';').collect();
        assert_eq!(g.len(), w.len(), "field count");
        // Field 2 is the version string.
        assert_eq!(g[1], "iogauge-0.1.0");
        let diffs: Vec<String> = g
            .iter()
            .zip(&w)
            .enumerate()
            .filter(|(i, (a, b))| *i != 1 && a != b)
            .map(|(i, (a, b))| format!("field {}: got {a} want {b}", i + 1))
            .collect();
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }

    #[test]
    fn field_positions() {
        let got = render_terse(&fixtures::run2());
        let f: Vec<&str> = got.trim_end().split(';').collect();
        // 5 general + 2 × (4 + 4 + 4 + 20 + 4 + 5) + 5 cpu + 7 depth + 10 µs + 12 ms = 121,
        // then 9 per disk.
        assert_eq!(f.len(), 121 + 9);
        assert_eq!(f[2], "rr");
        assert_eq!(f[5], "464660"); // read kB
        assert_eq!(f[17], "1.000000%=171"); // first read percentile
        assert_eq!(f[46], "463824"); // write kB
        assert_eq!(f[87], "4.820000%"); // usr cpu
        assert_eq!(f[92], "0.1%"); // depth 1
        assert_eq!(f[99], "0.00%"); // latency ≤ 2 µs
        assert_eq!(f[109], "0.06%"); // latency ≤ 2 ms
        assert_eq!(f[121], "vda");
        assert_eq!(f[129], "84.70%");
    }

    #[test]
    fn no_samples_and_gtod_reduce() {
        let mut r = fixtures::run2();
        let j = &mut r.jobs[0];
        // Percentiles enabled but no samples: the list with zeros, as fio.
        j.dirs[0].clat = LatSummary::default();
        let line = render_terse(&r);
        assert!(line.contains(";0;0;0.000000;0.000000;1.000000%=0;5.000000%=0;"));
        // gtod_reduce: all 20 slots empty.
        let j = &mut r.jobs[0];
        j.gtod_reduce = true;
        j.dirs[1].clat = LatSummary::default();
        let line = render_terse(&r);
        assert_eq!(line.matches(";0%=0").count(), 40);
    }

    #[test]
    fn ns_buckets_fold_into_first_us_bucket_and_description_last() {
        let mut r = fixtures::seed002_null();
        r.jobs[0].description = "etcd check".into();
        let line = render_terse(&r);
        let f: Vec<&str> = line.trim_end().split(';').collect();
        assert_eq!(f.len(), 122);
        // The ns buckets (100.01 % after fio's 0.01 % floor) plus the ≤ 2 µs bucket.
        assert_eq!(f[99], "100.02%");
        assert_eq!(f[121], "etcd check");
    }
}
