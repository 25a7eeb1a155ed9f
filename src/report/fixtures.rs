//! Test fixtures: `Report`s that reproduce real fio 3.33 outputs (testdata/, copied from the
//! project's reference runs), built by hand from the text outputs, or converted from fio's JSON.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::*;

pub const RUN1_TXT: &str = include_str!("testdata/run1_sync_fdatasync.txt");
pub const RUN2_TXT: &str = include_str!("testdata/run2_randrw_libaio.txt");
pub const RUN3_TXT: &str = include_str!("testdata/run3_jobfile_group.txt");
pub const SEED002_TXT: &str = include_str!("testdata/seed002_null.txt");
pub const RUN1_JSON: &str = include_str!("testdata/run1_sync_fdatasync.json");
pub const RUN1_KEYPATHS: &str = include_str!("testdata/run1_sync_fdatasync.keypaths.txt");
pub const RUN2_JSON: &str = include_str!("testdata/run2_randrw_libaio.json");
pub const RUN2_JSONPLUS: &str = include_str!("testdata/run2_randrw_libaio.jsonplus");
pub const RUN2_KEYPATHS: &str = include_str!("testdata/run2_randrw_libaio.keypaths.txt");
pub const RUN3_JSON: &str = include_str!("testdata/run3_jobfile_group.json");
pub const RUN5_JSON: &str = include_str!("testdata/run5_sync_fsync.json");

fn at_ms(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

fn lat(n: u64, min: u64, max: u64, mean: f64, stddev: f64) -> LatSummary {
    LatSummary {
        n,
        min,
        max,
        mean,
        stddev,
        ..Default::default()
    }
}

/// Percentiles from the values fio printed scaled to µs (rounded up): pick a value in ns that
/// rounds up to it (and down to one less, as the terse output shows).
fn pcts_us(us: &[u64]) -> Vec<(f64, u64)> {
    DEFAULT_PERCENTILES
        .iter()
        .zip(us)
        .map(|(&p, &v)| (p, v * 1000 - 488))
        .collect()
}

fn pcts_ns(ns: &[u64]) -> Vec<(f64, u64)> {
    DEFAULT_PERCENTILES
        .iter()
        .zip(ns)
        .map(|(&p, &v)| (p, v))
        .collect()
}

fn samples(min: u64, max: u64, mean: f64, stddev: f64, n: u64) -> SampleSummary {
    SampleSummary {
        min,
        max,
        mean,
        stddev,
        samples: n,
    }
}

fn dir(io_bytes: u64, total_ios: u64, runtime_ms: u64) -> DirReport {
    DirReport {
        io_bytes,
        total_ios,
        runtime_ms,
        bw_bytes: io_bytes * 1000 / runtime_ms,
        iops: total_ios as f64 * 1000.0 / runtime_ms as f64,
        ..Default::default()
    }
}

fn one_job_group(groupid: u32, d: usize, io: u64, runtime_ms: u64) -> GroupReport {
    let mut g = GroupReport {
        groupid,
        dirs: Default::default(),
        mixed: None,
        sig_figs: 0,
        units: Default::default(),
    };
    let bw = io * 1000 / runtime_ms;
    g.dirs[d] = GroupDirReport {
        io_bytes: io,
        agg_bw_bytes: bw,
        min_bw_bytes: bw,
        max_bw_bytes: bw,
        min_run_ms: runtime_ms,
        max_run_ms: runtime_ms,
    };
    g
}

fn depths_sync() -> DepthReport {
    let mut d = DepthReport::default();
    d.level[0] = 100.0;
    d.submit[1] = 100.0;
    d.complete[1] = 100.0;
    d
}

fn header(rw: &str, bs: u64, engine: &str, iodepth: u32) -> JobHeader {
    JobHeader {
        rw: rw.into(),
        bs: [bs; 3],
        bs_max: [bs; 3],
        bs_is_seq_rand: false,
        ioengine: engine.into(),
        iodepth,
        units: Default::default(),
    }
}

/// `vda` with [read ios, write ios, read merges, write merges, read ticks, write ticks, in_queue].
fn vda(c: [u64; 7], util: f64) -> DiskReport {
    let [r, w, rm, wm, rt, wt, q] = c;
    DiskReport {
        name: "vda".into(),
        read_ios: r,
        write_ios: w,
        read_merges: rm,
        write_merges: wm,
        read_ticks: rt,
        write_ticks: wt,
        in_queue: q,
        util_pct: util,
        slaves: vec![],
    }
}

fn report(jobs: Vec<JobReport>, groups: Vec<GroupReport>, disks: Vec<DiskReport>) -> Report {
    Report {
        version: Report::version_string(),
        started_at: at_ms(1_795_333_742_000),
        context: None,
        global_options: vec![],
        jobs,
        groups,
        disks,
        notes: vec![],
        job_lines: vec![],
        interrupted: None,
    }
}

/// run2_randrw_libaio.txt: its normal output and its terse line (same run).
pub fn run2() -> Report {
    let mut rd = dir(116_165 * 4096, 116_165, 5001);
    rd.slat = lat(116_165, 3500, 2_419_500, 5610.241, 9491.568);
    rd.clat = lat(116_165, 43_500, 10_499_500, 312_187.845, 172_323.124);
    rd.clat.percentiles = pcts_us(&[
        172, 198, 215, 237, 255, 273, 293, 318, 343, 371, 416, 457, 562, 644, 2671, 4015, 6063,
    ]);
    rd.clat.method = Some(PercentileMethod::Exact);
    rd.lat = lat(116_165, 78_500, 10_503_500, 317_798.087, 172_754.132);
    rd.bw_samples = samples(76752, 118_808, 94070.222222, 15114.432720, 9);
    rd.bw_agg_pct = 100.0;
    rd.iops_samples = samples(19188, 29702, 23517.555556, 3778.61, 9);

    let mut wr = dir(115_956 * 4096, 115_956, 5001);
    wr.slat = lat(115_956, 3500, 10_191_500, 6089.472, 32912.494);
    wr.clat = lat(115_956, 44_500, 10_568_500, 364_693.501, 196_764.201);
    wr.clat.percentiles = pcts_us(&[
        204, 237, 255, 281, 302, 322, 347, 371, 396, 429, 478, 529, 644, 725, 2868, 4817, 8455,
    ]);
    wr.lat = lat(115_956, 99_500, 10_593_500, 370_782.972, 200_485.824);
    wr.bw_samples = samples(78288, 118_552, 93930.666667, 14995.432371, 9);
    wr.bw_agg_pct = 100.0;
    wr.iops_samples = samples(19572, 29638, 23482.666667, 3748.86, 9);

    let depths = DepthReport {
        level: [0.1, 0.1, 0.1, 0.1, 99.993, 0.0, 0.0],
        submit: [0.0, 100.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        complete: [0.0, 99.96, 0.0, 0.1, 0.0, 0.0, 0.0],
    };
    let buckets = LatencyBuckets {
        us: [0.0, 0.0, 0.0, 0.0, 0.01, 0.03, 18.04, 77.06, 4.51, 0.16],
        ms: [
            0.06, 0.08, 0.06, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ],
        ..Default::default()
    };

    let job = JobReport {
        name: "rr".into(),
        groupid: 0,
        njobs: 1,
        pid: 4195,
        elapsed_s: 6,
        job_runtime_ms: 5000,
        finished_at: Some(at_ms(1_795_333_762_000)),
        header: header("randrw", 4096, "libaio", 16),
        options: vec![
            ("name".into(), "rr".into()),
            ("rw".into(), "randrw".into()),
            ("ioengine".into(), "libaio".into()),
            ("iodepth".into(), "16".into()),
        ],
        dirs: [rd.clone(), wr.clone(), DirReport::default()],
        cpu: CpuReport {
            usr_pct: 4.82,
            sys_pct: 29.18,
            ctx: 17413,
            majf: 0,
            minf: 13,
        },
        depths,
        lat_buckets: buckets,
        clat_percentiles: true,
        iodepth: 16,
        nr_files: 1,
        ..Default::default()
    };
    let mut g = one_job_group(0, 0, rd.io_bytes, 5001);
    g.dirs[1] = one_job_group(0, 1, wr.io_bytes, 5001).dirs[1].clone();
    report(
        vec![job],
        vec![g],
        vec![vda([113_765, 113_475, 0, 8, 28399, 28880, 57278], 84.70)],
    )
}

/// run1_sync_fdatasync.txt (the etcd recipe at 2 MiB), with syncs counted correctly.
pub fn run1() -> Report {
    let mut wr = dir(911 * 2300, 911, 136);
    wr.clat = lat(911, 1622, 251_105, 39897.16, 34816.66);
    wr.clat.percentiles = pcts_ns(&[
        1640, 1656, 1656, 1688, 1736, 2128, 60672, 65280, 68096, 70144, 73216, 76288, 99840,
        104_960, 250_880, 250_880, 250_880,
    ]);
    wr.lat = lat(911, 1653, 252_156, 39943.74, 34820.48);
    let mut sync_lat = lat(911, 76_400, 305_300, 108_150.0, 19010.0);
    sync_lat.percentiles = pcts_us(&[
        84, 89, 92, 96, 99, 103, 105, 109, 111, 114, 126, 145, 180, 206, 306, 306, 306,
    ]);
    let buckets = LatencyBuckets {
        us: [39.19, 3.40, 1.10, 0.11, 0.11, 55.10, 0.88, 0.11, 0.0, 0.0],
        ..Default::default()
    };
    let job = JobReport {
        name: "t".into(),
        njobs: 1,
        pid: 4160,
        elapsed_s: 1,
        job_runtime_ms: 136,
        finished_at: Some(at_ms(1_795_333_742_000)),
        header: header("write", 2300, "sync", 1),
        dirs: [DirReport::default(), wr.clone(), DirReport::default()],
        sync: SyncReport {
            total_ios: 911,
            lat: sync_lat,
            write_and_sync: LatSummary::default(),
            lat_intervals: None,
        },
        cpu: CpuReport {
            usr_pct: 0.0,
            sys_pct: 40.0,
            ctx: 2367,
            majf: 0,
            minf: 13,
        },
        depths: depths_sync(),
        lat_buckets: buckets,
        clat_percentiles: true,
        iodepth: 1,
        nr_files: 1,
        ..Default::default()
    };
    report(
        vec![job],
        vec![one_job_group(0, 1, wr.io_bytes, 136)],
        vec![vda([0, 0, 0, 0, 0, 0, 0], 0.0)],
    )
}

/// run3_jobfile_group.txt: seqw (numjobs=2, group_reporting) in group 0, randr in group 1.
pub fn run3() -> Report {
    let mut wr = dir(16 << 20, 4096, 7);
    wr.clat = lat(4096, 1061, 146_870, 1547.38, 3459.35);
    wr.clat.percentiles = pcts_ns(&[
        1080, 1096, 1128, 1176, 1224, 1288, 1368, 1448, 1496, 1576, 1720, 1848, 2352, 3664, 57600,
        78336, 146_432,
    ]);
    wr.lat = lat(4096, 1081, 146_900, 1580.09, 3470.63);
    let b0 = LatencyBuckets {
        us: [97.29, 2.25, 0.22, 0.05, 0.05, 0.10, 0.05, 0.0, 0.0, 0.0],
        ..Default::default()
    };
    let seqw = JobReport {
        name: "seqw".into(),
        groupid: 0,
        njobs: 2,
        pid: 4377,
        elapsed_s: 1,
        job_runtime_ms: 14,
        finished_at: Some(at_ms(1_795_333_811_000)),
        header: header("write", 4096, "psync", 1),
        options: vec![
            ("rw".into(), "write".into()),
            ("numjobs".into(), "2".into()),
        ],
        dirs: [DirReport::default(), wr.clone(), DirReport::default()],
        cpu: CpuReport {
            usr_pct: 30.0,
            sys_pct: 50.0,
            ctx: 2,
            majf: 0,
            minf: 24,
        },
        depths: depths_sync(),
        lat_buckets: b0,
        clat_percentiles: true,
        iodepth: 1,
        ..Default::default()
    };
    let mut rd = dir(8 << 20, 2048, 177);
    rd.clat = lat(2048, 49_100, 5_297_100, 84990.0, 127_820.0);
    rd.clat.percentiles = pcts_us(&[
        53, 59, 62, 67, 70, 74, 78, 81, 85, 88, 96, 116, 225, 334, 1401, 1696, 5276,
    ]);
    rd.lat = lat(2048, 49_200, 5_298_100, 85060.0, 127_830.0);
    let b1 = LatencyBuckets {
        us: [0.0, 0.0, 0.0, 0.0, 0.05, 92.09, 7.13, 0.54, 0.05, 0.0],
        ms: [0.10, 0.0, 0.05, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ..Default::default()
    };
    let randr = JobReport {
        name: "randr".into(),
        groupid: 1,
        njobs: 1,
        pid: 4379,
        elapsed_s: 1,
        job_runtime_ms: 177,
        finished_at: Some(at_ms(1_795_333_811_000)),
        header: header("randread", 4096, "psync", 1),
        options: vec![("rw".into(), "randread".into())],
        dirs: [rd.clone(), DirReport::default(), DirReport::default()],
        cpu: CpuReport {
            usr_pct: 0.0,
            sys_pct: 48.86,
            ctx: 2033,
            majf: 0,
            minf: 9,
        },
        depths: depths_sync(),
        lat_buckets: b1,
        clat_percentiles: true,
        iodepth: 1,
        ..Default::default()
    };
    let mut r = report(
        vec![seqw, randr],
        vec![
            one_job_group(0, 1, wr.io_bytes, 7),
            one_job_group(1, 0, rd.io_bytes, 177),
        ],
        vec![vda([1083, 5, 0, 0, 68, 24, 91], 16.19)],
    );
    r.global_options = vec![
        ("directory".into(), "test-data".into()),
        ("size".into(), "8m".into()),
        ("bs".into(), "4k".into()),
        ("ioengine".into(), "psync".into()),
    ];
    r.job_lines = vec![
        JobLine {
            name: "seqw".into(),
            groupid: 0,
            header: header("write", 4096, "psync", 1),
            numjobs: 2,
        },
        JobLine {
            name: "randr".into(),
            groupid: 1,
            header: header("randread", 4096, "psync", 1),
            numjobs: 1,
        },
    ];
    r
}

/// Seed 002's null-engine run (fio-3.34): bandwidth above 1 GiB/s is shown in MiB/s.
pub fn seed002_null() -> Report {
    let ios = 10_079_211u64;
    let mut rd = dir(ios * 4096, ios, 3000);
    rd.clat = lat(ios, 37, 62397, 46.13, 146.11);
    rd.clat.percentiles = pcts_ns(&[
        40, 42, 42, 43, 43, 44, 44, 45, 45, 45, 48, 51, 57, 78, 110, 113, 362,
    ]);
    rd.lat = lat(ios, 73, 62490, 87.04, 197.77);
    rd.bw_samples = samples(
        12354 * 1024 + 100,
        13351 * 1024,
        13130.32 * 1024.0,
        435.0 * 1024.0,
        5,
    );
    rd.bw_agg_pct = 100.0;
    rd.iops_samples = samples(3_162_738, 3_418_112, 3_361_363.6, 111_358.31, 5);
    let b = LatencyBuckets {
        ns: [0.0, 0.0, 0.0, 0.0, 93.49, 6.26, 0.23, 0.01, 0.01, 0.01],
        us: [0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.0, 0.0, 0.0, 0.0],
        ..Default::default()
    };
    let depths = DepthReport {
        level: [100.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ..Default::default()
    };
    let job = JobReport {
        name: "test".into(),
        njobs: 1,
        pid: 8498,
        elapsed_s: 3,
        job_runtime_ms: 3000,
        header: header("read", 4096, "null", 1),
        dirs: [rd.clone(), DirReport::default(), DirReport::default()],
        cpu: CpuReport {
            usr_pct: 99.93,
            sys_pct: 0.0,
            ctx: 3,
            majf: 0,
            minf: 8,
        },
        depths,
        lat_buckets: b,
        clat_percentiles: true,
        iodepth: 1,
        ..Default::default()
    };
    report(
        vec![job],
        vec![one_job_group(0, 0, rd.io_bytes, 3000)],
        vec![],
    )
}

// ---- fio JSON → Report, to check the JSON renderer value by value against real fio output.

fn u(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

fn f(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

fn lat_from(v: &Value) -> LatSummary {
    let mut s = LatSummary {
        n: u(v, "N"),
        min: u(v, "min"),
        max: u(v, "max"),
        mean: f(v, "mean"),
        stddev: f(v, "stddev"),
        ..Default::default()
    };
    if let Some(p) = v.get("percentile").and_then(Value::as_object) {
        s.percentiles = p
            .iter()
            .map(|(k, v)| (k.parse().unwrap_or(0.0), v.as_u64().unwrap_or(0)))
            .collect();
    }
    if let Some(b) = v.get("bins").and_then(Value::as_object) {
        s.bins = b
            .iter()
            .map(|(k, v)| (k.parse().unwrap_or(0), v.as_u64().unwrap_or(0)))
            .collect();
    }
    s
}

fn dir_from(v: &Value) -> DirReport {
    DirReport {
        io_bytes: u(v, "io_bytes"),
        total_ios: u(v, "total_ios"),
        short_ios: u(v, "short_ios"),
        drop_ios: u(v, "drop_ios"),
        runtime_ms: u(v, "runtime"),
        bw_bytes: u(v, "bw_bytes"),
        iops: f(v, "iops"),
        slat: lat_from(&v["slat_ns"]),
        clat: lat_from(&v["clat_ns"]),
        lat: lat_from(&v["lat_ns"]),
        bw_samples: samples(
            u(v, "bw_min"),
            u(v, "bw_max"),
            f(v, "bw_mean"),
            f(v, "bw_dev"),
            u(v, "bw_samples"),
        ),
        bw_agg_pct: f(v, "bw_agg"),
        iops_samples: samples(
            u(v, "iops_min"),
            u(v, "iops_max"),
            f(v, "iops_mean"),
            f(v, "iops_stddev"),
            u(v, "iops_samples"),
        ),
        ..Default::default()
    }
}

fn opts(v: &Value) -> Vec<(String, String)> {
    v.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

fn arr<const N: usize>(v: &Value, keys: &[&str; N]) -> [f64; N] {
    let mut a = [0.0; N];
    for (i, k) in keys.iter().enumerate() {
        a[i] = f(v, k);
    }
    a
}

/// Converts a fio 3.33 JSON document into the model. fio's fdatasync miscount (syncs as short
/// reads, `sync.total_ios` 0) is corrected on the way in, as iogauge's stats layer would.
pub fn from_fio_json(text: &str) -> Report {
    let doc: Value = serde_json::from_str(text).expect("reference JSON parses");
    let ts_ms = u(&doc, "timestamp_ms");
    let lvl = ["1", "2", "4", "8", "16", "32", ">=64"];
    let sub = ["0", "4", "8", "16", "32", "64", ">=64"];
    let lat_keys = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    let ms_keys = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    let jobs = doc["jobs"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or(&[])
        .iter()
        .map(|j| {
            let mut dirs = [
                dir_from(&j["read"]),
                dir_from(&j["write"]),
                dir_from(&j["trim"]),
            ];
            let mut sync = SyncReport {
                total_ios: u(&j["sync"], "total_ios"),
                lat: lat_from(&j["sync"]["lat_ns"]),
                write_and_sync: LatSummary::default(),
                lat_intervals: None,
            };
            if sync.total_ios == 0 && sync.lat.n > 0 && dirs[0].short_ios == sync.lat.n {
                dirs[0].short_ios = 0;
                sync.total_ios = sync.lat.n;
            }
            JobReport {
                name: j["jobname"].as_str().unwrap_or("").to_string(),
                groupid: u(j, "groupid") as u32,
                njobs: 1,
                error: u(j, "error") as i32,
                elapsed_s: u(j, "elapsed"),
                job_runtime_ms: u(j, "job_runtime"),
                finished_at: Some(at_ms(ts_ms)),
                options: opts(&j["job options"]),
                dirs,
                sync,
                cpu: CpuReport {
                    usr_pct: f(j, "usr_cpu"),
                    sys_pct: f(j, "sys_cpu"),
                    ctx: u(j, "ctx"),
                    majf: u(j, "majf"),
                    minf: u(j, "minf"),
                },
                depths: DepthReport {
                    level: arr(&j["iodepth_level"], &lvl),
                    submit: arr(&j["iodepth_submit"], &sub),
                    complete: arr(&j["iodepth_complete"], &sub),
                },
                lat_buckets: LatencyBuckets {
                    ns: arr(&j["latency_ns"], &lat_keys),
                    us: arr(&j["latency_us"], &lat_keys),
                    ms: arr(&j["latency_ms"], &ms_keys),
                },
                clat_percentiles: true,
                iodepth: u(j, "latency_depth") as u32,
                description: j["desc"].as_str().unwrap_or("").to_string(),
                ..Default::default()
            }
        })
        .collect();
    let disks = doc["disk_util"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or(&[])
        .iter()
        .map(|d| DiskReport {
            name: d["name"].as_str().unwrap_or("").to_string(),
            read_ios: u(d, "read_ios"),
            write_ios: u(d, "write_ios"),
            read_merges: u(d, "read_merges"),
            write_merges: u(d, "write_merges"),
            read_ticks: u(d, "read_ticks"),
            write_ticks: u(d, "write_ticks"),
            in_queue: u(d, "in_queue"),
            util_pct: f(d, "util"),
            slaves: vec![],
        })
        .collect();
    Report {
        version: Report::version_string(),
        started_at: at_ms(ts_ms),
        context: None,
        global_options: opts(&doc["global options"]),
        jobs,
        groups: vec![],
        disks,
        notes: vec![],
        job_lines: vec![],
        interrupted: None,
    }
}
