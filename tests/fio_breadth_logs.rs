//! fio's logs for plotting (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`, `log_*`): the same job files under fio and iogauge produce the same file
//! names and column counts, and iogauge's logs add up to its own JSON totals (one line per I/O
//! without averaging; averaged bandwidth consistent with the JSON's). fio must be installed for
//! the cross-checks (with CI=true a missing fio fails them).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn assert_counts_equal(fio: &Value, iog: &Value) {
    let fj = fio["jobs"].as_array().unwrap();
    let gj = iog["jobs"].as_array().unwrap();
    assert_eq!(fj.len(), gj.len(), "number of job entries");
    for (f, g) in fj.iter().zip(gj) {
        assert_eq!(f["jobname"], g["jobname"]);
        // A random mix splits by chance, differently in each tool: compare the totals.
        let total = |v: &Value, k: &str| u(v, &["read", k]) + u(v, &["write", k]);
        assert_eq!(total(f, "total_ios"), total(g, "total_ios"), "total_ios");
        assert_eq!(total(f, "io_bytes"), total(g, "io_bytes"), "io_bytes");
    }
}

/// A run in its own directory: the job file's data under `DIR/data`, logs in `DIR` (the
/// working directory, where fio writes them).
struct Run {
    dir: tempfile::TempDir,
    json: Value,
}

impl Run {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The log files written (name → lines split into columns).
    fn logs(&self) -> BTreeMap<String, Vec<Vec<u64>>> {
        let mut out = BTreeMap::new();
        for name in files_in(self.path()) {
            if !name.ends_with(".log") {
                continue;
            }
            let text = std::fs::read_to_string(self.path().join(&name)).unwrap();
            let rows = text
                .lines()
                .map(|l| {
                    l.split(", ")
                        .map(|c| match c.strip_prefix("0x") {
                            Some(h) => u64::from_str_radix(h, 16).unwrap(),
                            None => c.parse::<u64>().unwrap(),
                        })
                        .collect()
                })
                .collect();
            out.insert(name, rows);
        }
        out
    }
}

fn run_fixture(program: &str, fixture: &str, extra: &[&str]) -> Run {
    let (dir, data, job) = job_with_data_dir(fixture);
    let mut args = vec![job.to_str().unwrap().to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let pre: &[&str] = if program == "fio" { &[] } else { &["fio"] };
    let json = run_json(program, pre, &args, dir.path());
    std::fs::remove_file(&job).unwrap();
    if program != "fio" {
        assert_empty(&data);
    }
    std::fs::remove_dir_all(&data).unwrap();
    Run { dir, json }
}

fn iogauge(fixture: &str, extra: &[&str]) -> Run {
    run_fixture(env!("CARGO_BIN_EXE_iogauge"), fixture, extra)
}

/// Lines of a log per direction (column 2).
fn per_dir(rows: &[Vec<u64>], col: usize) -> [u64; 2] {
    let mut n = [0; 2];
    for r in rows {
        n[r[col] as usize] += 1;
    }
    n
}

fn column_counts(logs: &BTreeMap<String, Vec<Vec<u64>>>) -> BTreeMap<String, BTreeSet<usize>> {
    logs.iter()
        .map(|(k, rows)| (k.clone(), rows.iter().map(|r| r.len()).collect()))
        .collect()
}

#[test]
fn per_io_logs_hold_one_line_per_io_and_add_up_to_the_json() {
    let r = iogauge("logs-all.fio", &[]);
    let logs = r.logs();
    let names: Vec<&String> = logs.keys().collect();
    assert_eq!(
        names,
        [
            "s_bw.1.log",
            "s_bw.2.log",
            "s_clat.1.log",
            "s_clat.2.log",
            "s_clat_hist.1.log",
            "s_clat_hist.2.log",
            "s_iops.1.log",
            "s_iops.2.log",
            "s_lat.1.log",
            "s_lat.2.log",
            "s_slat.1.log",
            "s_slat.2.log",
            "uring_bw.3.log",
            "uring_clat.3.log",
            "uring_iops.3.log",
            "uring_lat.3.log",
            "uring_slat.3.log",
        ]
    );
    let jobs = r.json["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    for (i, job) in jobs.iter().enumerate() {
        let n = i + 1;
        let prefix = if n < 3 { "s" } else { "uring" };
        let ios = [
            u(job, &["read", "total_ios"]),
            u(job, &["write", "total_ios"]),
        ];
        let bytes = [
            u(job, &["read", "io_bytes"]),
            u(job, &["write", "io_bytes"]),
        ];
        assert_eq!(ios[0] + ios[1], 256);
        for kind in ["bw", "clat", "lat", "iops"] {
            let rows = &logs[&format!("{prefix}_{kind}.{n}.log")];
            assert_eq!(per_dir(rows, 2), ios, "{kind}.{n}: one line per I/O");
            for d in 0..2 {
                let sum: u64 = rows.iter().filter(|r| r[2] == d).map(|r| r[3]).sum();
                assert_eq!(
                    sum, bytes[d as usize],
                    "{kind}.{n}: block sizes sum to io_bytes"
                );
            }
            // Times never go backwards by more than a ms (completion order).
            assert!(rows.windows(2).all(|w| w[1][0] + 1 >= w[0][0]));
            if kind == "iops" {
                assert!(rows.iter().all(|r| r[1] == 1));
            }
        }
        let slat = &logs[&format!("{prefix}_slat.{n}.log")];
        if n < 3 {
            // Synchronous engines have no submission latency: the file exists, empty (fio's).
            assert!(slat.is_empty());
            // log_offset=1: offsets are block-aligned and inside the 1 MiB file.
            let clat = &logs[&format!("s_clat.{n}.log")];
            assert!(clat
                .iter()
                .all(|r| r.len() == 6 && r[4] % 4096 == 0 && r[4] < 1 << 20));
        } else {
            assert_eq!(per_dir(slat, 2), ios);
            // log_prio=1: the priority column is fio's hex ioprio (0 here).
            assert!(slat.iter().all(|r| r.len() == 5 && r[4] == 0));
            // lat = slat + clat per I/O, line by line (same order).
            let (lat, clat) = (&logs["uring_lat.3.log"], &logs["uring_clat.3.log"]);
            let diff: u64 = lat.iter().zip(clat).map(|(l, c)| l[1] - c[1]).sum();
            let slat_sum: u64 = slat.iter().map(|s| s[1]).sum();
            assert!(diff >= slat_sum, "lat - clat covers slat");
        }
    }
    // Histogram lines: time, direction, block size, then fio's 1856 bins; they count at most
    // the I/Os of that direction.
    for n in 1..=2 {
        let rows = &logs[&format!("s_clat_hist.{n}.log")];
        assert!(rows.iter().all(|r| r.len() == 3 + 1856));
        let job = &jobs[n - 1];
        for d in 0..2u64 {
            let counted: u64 = rows
                .iter()
                .filter(|r| r[1] == d)
                .map(|r| r[3..].iter().sum::<u64>())
                .sum();
            let dir = if d == 0 { "read" } else { "write" };
            assert!(counted <= u(job, &[dir, "total_ios"]));
        }
    }
}

/// bench/fio-logs.py --check on a run's logs and JSON: its report (the check passed).
fn script_check(r: &Run) -> String {
    let json = r.path().join("run.json");
    std::fs::write(&json, r.json.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/fio-logs.py");
    let logs: Vec<PathBuf> = files_in(r.path())
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .map(|n| r.path().join(n))
        .collect();
    let out = cmd("python3")
        .arg(&script)
        .arg("--check")
        .arg("--json")
        .arg(&json)
        .args(&logs)
        .output()
        .expect("python3");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(!stdout.contains("MISMATCH"), "{stdout}");
    stdout
}

#[test]
fn the_script_agrees_with_the_json() {
    let out = script_check(&iogauge("logs-all.fio", &[]));
    assert!(out.contains("clat      read"), "{out}");
    let out = script_check(&iogauge("logs-avg.fio", &[]));
    assert!(out.contains("averaged"), "{out}");
}

#[test]
fn logs_match_fio_names_columns_and_counts() {
    if !have_fio() {
        return;
    }
    let f = run_fixture("fio", "logs-all.fio", &[]);
    let g = iogauge("logs-all.fio", &[]);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    // The script reads fio's own logs the same way, and they add up to fio's JSON.
    script_check(&f);
    let (fl, gl) = (f.logs(), g.logs());
    assert_eq!(
        fl.keys().collect::<Vec<_>>(),
        gl.keys().collect::<Vec<_>>(),
        "same log file names"
    );
    // Column counts per file (histogram logs may be empty in fio's shorter runs; compare
    // those present in both).
    let (fc, gc) = (column_counts(&fl), column_counts(&gl));
    for (name, cols) in &fc {
        if !cols.is_empty() && !gc[name].is_empty() {
            assert_eq!(cols, &gc[name], "{name}: columns");
        }
    }
    // With a per-I/O bandwidth/IOPS log fio's bw and iops statistics are per I/O: one sample
    // per I/O (iops always 1), in both tools.
    for v in [&f.json, &g.json] {
        for job in v["jobs"].as_array().unwrap() {
            for d in ["read", "write"] {
                let ios = u(job, &[d, "total_ios"]);
                assert_eq!(u(job, &[d, "bw_samples"]), ios, "{d} bw_samples");
                assert_eq!(u(job, &[d, "iops_samples"]), ios, "{d} iops_samples");
                assert_eq!(u(job, &[d, "iops_min"]), 1);
            }
        }
    }
    // Per-I/O logs: fio's lines add up to its total_ios too, so both agree line for line.
    for name in fl
        .keys()
        .filter(|n| n.contains("_clat.") || n.contains("_bw."))
    {
        assert_eq!(fl[name].len(), gl[name].len(), "{name}: lines");
    }
}

#[test]
fn averaged_logs_follow_the_window_and_the_json_bandwidth() {
    let r = iogauge("logs-avg.fio", &[]);
    let logs = r.logs();
    let job = &r.json["jobs"][0];
    for kind in ["bw", "iops", "lat", "clat", "slat"] {
        let rows = &logs[&format!("a_{kind}.1.log")];
        let n = per_dir(rows, 2);
        // About 10 windows of 100 ms per direction in a one-second run.
        for c in n {
            assert!((5..=12).contains(&c), "{kind}: {n:?} entries");
        }
        // Averaged entries carry no block size (0), as fio's.
        assert!(rows.iter().all(|r| r[3] == 0 && r.len() == 5), "{kind}");
    }
    for (d, dir) in ["read", "write"].iter().enumerate() {
        let rows: Vec<_> = logs["a_bw.1.log"]
            .iter()
            .filter(|r| r[2] == d as u64)
            .collect();
        let mean = rows.iter().map(|r| r[1]).sum::<u64>() as f64 / rows.len() as f64;
        let bw = u(job, &[dir, "bw"]) as f64;
        assert!(
            mean > bw / 2.0 && mean < bw * 2.0,
            "{dir}: mean logged {mean} KiB/s vs JSON bw {bw}"
        );
        // Windows close on 100 ms boundaries (the last one when the job ends, fio's
        // finalize_logs, possibly right after the one before).
        let closed = &rows[..rows.len() - 1];
        assert!(
            closed.windows(2).all(|w| w[1][0] >= w[0][0] + 90),
            "{rows:?}"
        );
    }
}

#[test]
fn averaged_logs_match_fio_names_and_columns() {
    if !have_fio() {
        return;
    }
    let f = run_fixture("fio", "logs-avg.fio", &[]);
    let g = iogauge("logs-avg.fio", &[]);
    assert_keys_superset(&f.json, &g.json);
    // log_avg_msec=100 with a bandwidth log and no bwavgtime: fio samples bandwidth every
    // 100 ms for its JSON too (about 10 in one second), so do we.
    for v in [&f.json, &g.json] {
        for d in ["read", "write"] {
            let n = u(&v["jobs"][0], &[d, "bw_samples"]);
            assert!((8..=11).contains(&n), "{d}: {n} bw samples");
        }
    }
    let (fl, gl) = (f.logs(), g.logs());
    assert_eq!(fl.keys().collect::<Vec<_>>(), gl.keys().collect::<Vec<_>>());
    assert_eq!(column_counts(&fl), column_counts(&gl));
}

#[test]
fn without_per_job_logs_instances_share_one_file() {
    let run = || iogauge("logs-all.fio", &["--per_job_logs=0", "--section=sync"]);
    let r = run();
    let logs = r.logs();
    assert_eq!(
        logs.keys().collect::<Vec<_>>(),
        [
            "s_bw.log",
            "s_clat.log",
            "s_clat_hist.log",
            "s_iops.log",
            "s_lat.log",
            "s_slat.log"
        ]
    );
    // Both instances' lines in one file, each line whole.
    assert_eq!(logs["s_clat.log"].len(), 512);
    assert!(logs["s_clat.log"].iter().all(|r| r.len() == 6));
}

#[test]
fn hist_coarseness_merges_bins_and_bad_values_are_refused() {
    let r = iogauge(
        "logs-all.fio",
        &["--section=sync", "--log_hist_coarseness=2"],
    );
    let rows = &r.logs()["s_clat_hist.1.log"];
    assert!(rows.iter().all(|r| r.len() == 3 + 1856 / 4));

    let d = scratch();
    for (arg, want) in [
        ("--log_hist_coarseness=7", "log_hist_coarseness"),
        ("--log_compression=512", "512 bytes is out of range"),
        ("--log_store_compressed=yes", "expected 0 or 1"),
        ("--log_avg_msec=abc", "expected milliseconds"),
    ] {
        let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["fio", "--name=x", "--size=64k", "--ioengine=null", arg])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let err = text(&out.stderr);
        assert!(err.contains(want), "{arg}: {err}");
    }
    // A prefix in a directory that does not exist: refused before any I/O.
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=x",
            "--size=64k",
            "--ioengine=null",
            "--write_bw_log=/nonexistent/dir/x",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot create log file"));
}

/// The `X percentiles (unit):` block names of a text output, job by job, in order.
fn percentile_blocks(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(" percentiles ("))
        .map(|l| l.trim().split(" (").next().unwrap().to_string())
        .collect()
}

#[test]
fn percentile_combinations_match_fio() {
    let g = iogauge("logs-percentiles.fio", &[]);
    let has = |v: &Value, j: usize, k: &str| v["jobs"][j]["read"][k].get("percentile").is_some();
    // all-three: every block; slat-only: slat alone; sync-lat: lat only (no slat step).
    let want = [
        [true, true, true],
        [true, false, false],
        [false, false, true],
    ];
    for (j, w) in want.iter().enumerate() {
        let got = ["slat_ns", "clat_ns", "lat_ns"].map(|k| has(&g.json, j, k));
        assert_eq!(&got, w, "job {j}");
    }
    // The list as given, keys as fio prints them.
    let p = &g.json["jobs"][0]["read"]["slat_ns"]["percentile"];
    let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["50.000000", "90.000000", "99.500000"]);

    // Text: one decimal as written ("99.5th"), the blocks in fio's order.
    let d = scratch();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/logs-percentiles.fio");
    let job = d.path().join("p.fio");
    std::fs::write(
        &job,
        std::fs::read_to_string(src)
            .unwrap()
            .replace("@DIR@", data.to_str().unwrap()),
    )
    .unwrap();
    let text_of = |program: &str, pre: &[&str]| {
        let out = cmd(program)
            .args(pre)
            .arg(&job)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let gt = text_of(env!("CARGO_BIN_EXE_iogauge"), &["fio"]);
    assert!(gt.contains(" 99.5th=["), "{gt}");
    let blocks = percentile_blocks(&gt);
    assert_eq!(
        blocks,
        [
            "slat percentiles",
            "clat percentiles",
            "lat percentiles",
            "slat percentiles",
            "lat percentiles"
        ]
    );
    if !have_fio() {
        return;
    }
    assert_eq!(percentile_blocks(&text_of("fio", &[])), blocks);
    let f = run_fixture("fio", "logs-percentiles.fio", &[]);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    for j in 0..3 {
        for k in ["slat_ns", "clat_ns", "lat_ns"] {
            assert_eq!(has(&f.json, j, k), has(&g.json, j, k), "job {j} {k}");
        }
    }
}

#[test]
fn unified_rw_reporting_matches_fio() {
    let g = iogauge("logs-unified.fio", &[]);
    let keys = |v: &Value, j: usize| -> Vec<String> {
        v["jobs"][j].as_object().unwrap().keys().cloned().collect()
    };
    let has = |v: &Value, j: usize, k: &str| keys(v, j).iter().any(|x| x == k);
    // mixed: the `mixed` entry alone, holding every I/O.
    assert!(has(&g.json, 0, "mixed"));
    for k in ["read", "write", "trim", "sync"] {
        assert!(!has(&g.json, 0, k), "mixed job has {k}");
    }
    let m = &g.json["jobs"][0]["mixed"];
    assert_eq!(u(m, &["total_ios"]), 256);
    assert_eq!(u(m, &["io_bytes"]), 1 << 20);
    assert_eq!(u(m, &["clat_ns", "N"]), 256);
    assert_eq!(u(m, &["slat_ns", "N"]), 256);
    // both: the directions, then `mixed` = their sum.
    let b = &g.json["jobs"][1];
    for k in ["read", "write", "trim", "sync", "mixed"] {
        assert!(has(&g.json, 1, k), "both job lacks {k}");
    }
    assert_eq!(
        u(b, &["mixed", "total_ios"]),
        u(b, &["read", "total_ios"]) + u(b, &["write", "total_ios"])
    );
    assert_eq!(u(b, &["mixed", "io_bytes"]), 1 << 20);
    assert_eq!(u(b, &["mixed", "lat_ns", "N"]), 256);

    if !have_fio() {
        return;
    }
    let f = run_fixture("fio", "logs-unified.fio", &[]);
    assert_keys_superset(&f.json, &g.json);
    for j in 0..2 {
        assert_eq!(
            keys(&f.json, j),
            keys(&g.json, j)[..keys(&f.json, j).len()].to_vec()
        );
        for k in ["total_ios", "io_bytes"] {
            assert_eq!(
                u(&f.json["jobs"][j]["mixed"], &[k]),
                u(&g.json["jobs"][j]["mixed"], &[k]),
                "job {j} mixed {k}"
            );
        }
    }
}

#[test]
fn unified_rw_reporting_text_is_fios() {
    let d = scratch();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/logs-unified.fio");
    let job = d.path().join("u.fio");
    let body = std::fs::read_to_string(src)
        .unwrap()
        .replace("@DIR@", data.to_str().unwrap());
    std::fs::write(&job, body).unwrap();
    let lines = |program: &str, pre: &[&str]| -> Vec<String> {
        let out = cmd(program)
            .args(pre)
            .arg(&job)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        // The lines that name a direction: per-job headers and group lines.
        text(&out.stdout)
            .lines()
            .filter_map(|l| {
                let t = l.trim_start();
                ["read:", "write:", "mixed:", "READ:", "WRITE:", "MIXED:"]
                    .iter()
                    .find(|p| t.starts_with(**p))
                    .map(|p| p.to_string())
            })
            .collect()
    };
    let g = lines(env!("CARGO_BIN_EXE_iogauge"), &["fio"]);
    assert_eq!(
        g,
        ["mixed:", "read:", "write:", "mixed:", "MIXED:", "READ:", "WRITE:", "MIXED:"]
    );
    if have_fio() {
        assert_eq!(lines("fio", &[]), g);
    }
}

#[test]
fn significant_figures_widen_the_text_numbers_as_fios() {
    let d = scratch();
    let run = |program: &str, pre: &[&str], extra: &str| {
        let out = cmd(program)
            .args(pre)
            .args([
                "--name=sig",
                "--size=1m",
                "--bs=4k",
                &format!("--directory={}", d.path().display()),
                extra,
            ])
            .current_dir(d.path())
            .output()
            .unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let iog = env!("CARGO_BIN_EXE_iogauge");
    let (code, out, _) = run(iog, &["fio"], "--significant_figures=6");
    assert_eq!(code, Some(0));
    // 1 MiB in six figures: 1024.0KiB (1048.6kB), in the job and the group lines.
    assert!(out.contains("(1024.0KiB/"), "{out}");
    assert!(out.contains("io=1024.0KiB (1048.6kB)"), "{out}");
    let (code, _, err) = run(iog, &["fio"], "--significant_figures=11");
    assert_eq!(code, Some(2));
    assert!(err.contains("significant_figures"), "{err}");
    if have_fio() {
        let (_, out, _) = run("fio", &[], "--significant_figures=6");
        assert!(out.contains("(1024.0KiB/") && out.contains("io=1024.0KiB (1048.6kB)"));
    }
}

#[test]
fn job_priority_shows_in_the_logs_as_fios() {
    let g = iogauge("logs-prio.fio", &[]);
    let logs = g.logs();
    // log_prio=1: the full ioprio value, idle class (3) level 4 = 0x6004.
    let idle = &logs["pr_clat.1.log"];
    assert_eq!(idle.len(), 128);
    assert!(idle.iter().all(|r| r[4] == 0x6004), "{:?}", &idle[..2]);
    // log_prio=0: 1 for the real-time class only, so 0 for best-effort.
    assert!(logs["pr_clat.2.log"].iter().all(|r| r[4] == 0));
    let d = scratch();
    for (arg, want) in [("--prio=8", "prio"), ("--prioclass=4", "prioclass")] {
        let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["fio", "--name=x", "--size=64k", "--ioengine=null", arg])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        assert!(text(&out.stderr).contains(want));
    }
    if !have_fio() {
        return;
    }
    let f = run_fixture("fio", "logs-prio.fio", &[]);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    let fl = f.logs();
    assert_eq!(
        fl.keys().collect::<Vec<_>>(),
        logs.keys().collect::<Vec<_>>()
    );
    for name in [
        "pr_clat.1.log",
        "pr_clat.2.log",
        "pr_lat.1.log",
        "pr_slat.1.log",
    ] {
        let prios = |l: &BTreeMap<String, Vec<Vec<u64>>>| -> BTreeSet<u64> {
            l[name].iter().map(|r| r[4]).collect()
        };
        assert_eq!(prios(&fl), prios(&logs), "{name}");
    }
}

#[test]
fn command_priorities_are_reported_per_priority_as_fio() {
    let g = iogauge("logs-cmdprio.fio", &[]);
    let logs = g.logs();
    for (j, key) in [(0usize, "clat_ns"), (1, "lat_ns")] {
        let job = &g.json["jobs"][j];
        for dir in ["read", "write"] {
            let prios = job[dir]["prios"].as_array().unwrap();
            assert_eq!(prios.len(), 2, "job {j} {dir}");
            assert_eq!(
                (u(&prios[0], &["prioclass"]), u(&prios[0], &["prio"])),
                (0, 0)
            );
            assert_eq!(
                (u(&prios[1], &["prioclass"]), u(&prios[1], &["prio"])),
                (3, 2)
            );
            // Every I/O in one of them; about 30 % with the command priority.
            let n: Vec<u64> = prios.iter().map(|p| u(p, &[key, "N"])).collect();
            assert_eq!(n[0] + n[1], u(job, &[dir, "total_ios"]));
            let share = n[1] as f64 / (n[0] + n[1]) as f64;
            assert!((0.15..0.45).contains(&share), "job {j} {dir}: {share}");
            assert!(prios[1][key].get("percentile").is_some());
        }
        // The log's priority column says which I/O had which: the same split.
        let rows = &logs[&format!("cp_clat.{}.log", j + 1)];
        let cmd = rows.iter().filter(|r| r[4] == 0x6002).count() as u64;
        let other = rows.iter().filter(|r| r[4] == 0).count() as u64;
        let total = u(job, &["read", "total_ios"]) + u(job, &["write", "total_ios"]);
        assert_eq!(cmd + other, total);
        let n1: u64 = ["read", "write"]
            .iter()
            .map(|d| u(&job[*d]["prios"][1], &[key, "N"]))
            .sum();
        assert_eq!(cmd, n1);
    }
    // Synchronous engines have no per-I/O priority: refused before any I/O, as fio does.
    let d = scratch();
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=x",
            "--size=64k",
            "--ioengine=psync",
            "--cmdprio_percentage=10",
            &format!("--directory={}", d.path().display()),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("queueing engine"));
    assert_empty(d.path());

    let gt = {
        let data = d.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/logs-cmdprio.fio");
        let job = d.path().join("c.fio");
        std::fs::write(
            &job,
            std::fs::read_to_string(src)
                .unwrap()
                .replace("@DIR@", data.to_str().unwrap()),
        )
        .unwrap();
        let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["fio", job.to_str().unwrap()])
            .current_dir(d.path())
            .output()
            .unwrap();
        text(&out.stdout)
    };
    assert!(
        gt.contains("    clat prio 0/0 (usec): min=")
            || gt.contains("    clat prio 0/0 (nsec): min=")
    );
    assert!(gt.contains("    lat prio 3/2 ("), "{gt}");
    assert!(gt.contains("% of IOs) percentiles ("), "{gt}");

    if !have_fio() {
        return;
    }
    let f = run_fixture("fio", "logs-cmdprio.fio", &[]);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    let fl = f.logs();
    assert_eq!(
        fl.keys().collect::<Vec<_>>(),
        logs.keys().collect::<Vec<_>>()
    );
}

#[test]
fn cmdprio_bssplit_gives_each_block_size_its_priorities_as_fio() {
    // Four priorities for reads (the job's, 3/1 20 %, 2/5 30 %, cmdprio_class/cmdprio 3/6
    // 10 %), two for writes (2/3 60 %), in fio's order: the job's, then by block size.
    /// Expected (class, level, share of the direction's I/Os) per priority.
    type Prios<'a> = &'a [(u64, u64, f64)];
    let want: [(&str, Prios); 2] = [
        (
            "read",
            &[(0, 0, 0.4), (3, 1, 0.2), (2, 5, 0.3), (3, 6, 0.1)],
        ),
        ("write", &[(0, 0, 0.4), (2, 3, 0.6)]),
    ];
    let check = |json: &Value, who: &str| {
        for (j, key) in [(0usize, "clat_ns"), (1, "lat_ns")] {
            let job = &json["jobs"][j];
            for (dir, w) in want {
                let prios = job[dir]["prios"].as_array().unwrap();
                let got: Vec<(u64, u64)> = prios
                    .iter()
                    .map(|p| (u(p, &["prioclass"]), u(p, &["prio"])))
                    .collect();
                let expect: Vec<(u64, u64)> = w.iter().map(|x| (x.0, x.1)).collect();
                assert_eq!(got, expect, "{who} job {j} {dir}");
                let total = u(job, &[dir, "total_ios"]);
                let n: Vec<u64> = prios.iter().map(|p| u(p, &[key, "N"])).collect();
                assert_eq!(n.iter().sum::<u64>(), total, "{who} job {j} {dir}");
                for (k, x) in w.iter().enumerate() {
                    let share = n[k] as f64 / total as f64;
                    assert!(
                        (share - x.2).abs() < 0.1,
                        "{who} job {j} {dir} prio {}/{}: {share}",
                        x.0,
                        x.1
                    );
                }
            }
        }
    };
    let g = iogauge("logs-cmdprio-bssplit.fio", &[]);
    check(&g.json, "iogauge");

    // With bssplit, only the block size named gets the priority: every 16k read and no 4k
    // read carries 3/4 (the log's bs and priority columns).
    let d = scratch();
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=x",
            "--size=2m",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--rw=randread",
            "--bssplit=4k/50:16k/50",
            "--cmdprio_bssplit=16k/100/3/4",
            "--write_lat_log=cp",
            "--log_prio=1",
            "--output-format=json",
            &format!("--directory={}", data.display()),
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<Vec<u64>> = std::fs::read_to_string(d.path().join("cp_clat.1.log"))
        .unwrap()
        .lines()
        .map(|l| {
            l.split(", ")
                .map(|c| match c.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).unwrap(),
                    None => c.parse().unwrap(),
                })
                .collect()
        })
        .collect();
    let of = |bs: u64| rows.iter().filter(move |r| r[3] == bs);
    assert!(of(16384).count() > 10 && of(4096).count() > 10);
    assert!(of(16384).all(|r| r[4] == 0x6004));
    assert!(of(4096).all(|r| r[4] == 0));

    // cmdprio_bssplit and cmdprio_percentage together: refused before any I/O, as fio does.
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=x",
            "--size=64k",
            "--ioengine=io_uring",
            "--cmdprio_percentage=10",
            "--cmdprio_bssplit=4k/10",
            &format!("--directory={}", data.display()),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("mutually exclusive"));

    if !have_fio() {
        return;
    }
    let f = run_fixture("fio", "logs-cmdprio-bssplit.fio", &[]);
    check(&f.json, "fio");
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
}
