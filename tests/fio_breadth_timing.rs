//! The timing group against fio 3.33: thinktime, rate_process, rate_iops_min, steadystate,
//! exitall and --readonly. Each job file in tests/fixtures/fio/timing-*.fio runs under both tools
//! at a small size; counts are compared where they are deterministic, timing within a
//! tolerance, and iogauge's JSON must hold every key fio prints.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for p in path {
        cur = match p.parse::<usize>() {
            Ok(i) if cur.is_array() => &cur[i],
            _ => &cur[*p],
        };
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number: {cur}"))
}

#[test]
fn thinktime_pauses_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("timing-thinktime.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(u(&g.json, &["jobs", "0", "read", "total_ios"]), 20);
    // 20 pauses of 10 ms: at least 200 ms in both (less one: the clock is in whole ms).
    for o in [&f, &g] {
        let rt = u(&o.json, &["jobs", "0", "job_runtime"]);
        assert!((195..2000).contains(&rt), "job_runtime {rt} ms");
    }
}

#[test]
fn thinktime_on_a_queue_drains_then_pauses() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("timing-thinktime-queue.fio", &[]);
    if g.code != 0 && g.stderr.contains("io_uring") {
        eprintln!("skipping: io_uring is not available here: {}", g.stderr);
        return;
    }
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    // 32 reads, a 10 ms pause once 4 more completed: completions reaped together skip a
    // count, as in fio, so at least 5 pauses (fio and iogauge take 60-90 ms here).
    for o in [&f, &g] {
        let rt = u(&o.json, &["jobs", "0", "job_runtime"]);
        assert!((50..2000).contains(&rt), "job_runtime {rt} ms");
    }
}

#[test]
fn poisson_spreads_the_rate_and_linear_does_not() {
    if !have_fio() {
        return;
    }
    for process in ["poisson", "linear"] {
        let (f, g) = both("timing-poisson.fio", &[("@PROCESS@", process)]);
        assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
        assert_keys_superset(&f.json, &g.json);
        for (who, o) in [("fio", &f), ("iogauge", &g)] {
            let j = &o.json["jobs"][0]["read"];
            let iops = u(j, &["total_ios"]) as f64 * 1000.0 / u(j, &["runtime"]) as f64;
            // The mean rate holds within 15% either way.
            assert!(
                (170.0..230.0).contains(&iops),
                "{who} {process}: {iops} IOPS"
            );
            // 100 ms samples of ~20 I/Os: a Poisson count's CV is ~1/√20 = 0.22; linear ~0.
            let cv = num(j, &["iops_stddev"]) / num(j, &["iops_mean"]);
            if process == "poisson" {
                assert!(cv > 0.1, "{who} poisson: sample CV {cv}");
            } else {
                assert!(cv < 0.08, "{who} linear: sample CV {cv}");
            }
        }
    }
}

#[test]
fn rate_ignore_thinktime_stops_the_catch_up() {
    if !have_fio() {
        return;
    }
    for (ign, range) in [("0", 250..330), ("1", 125..180)] {
        let (f, g) = both("timing-rate-ignore-thinktime.fio", &[("@IGN@", ign)]);
        assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
        assert_keys_superset(&f.json, &g.json);
        for (who, o) in [("fio", &f), ("iogauge", &g)] {
            let n = u(&o.json, &["jobs", "0", "read", "total_ios"]);
            assert!(
                range.contains(&n),
                "{who} rate_ignore_thinktime={ign}: {n} reads"
            );
        }
    }
}

#[test]
fn rate_iops_min_fails_the_job_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("timing-rate-min.fio", &[]);
    assert_eq!((f.code, g.code), (1, 1), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    for o in [&f, &g] {
        assert_eq!(u(&o.json, &["jobs", "0", "error"]), 5);
        assert!(
            o.stderr.contains("slow: rate_iops_min=100 not met, got "),
            "{}",
            o.stderr
        );
        // Ended after the settle period and one cycle, well before its 6 s runtime.
        let rt = u(&o.json, &["jobs", "0", "job_runtime"]);
        assert!((1900..4500).contains(&rt), "job_runtime {rt} ms");
    }
}

#[test]
fn steadystate_ends_the_job_with_fios_block() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("timing-steadystate.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    for o in [&f, &g] {
        let ss = &o.json["jobs"][0]["steadystate"];
        assert_eq!(ss["ss"], "iops:10.000000%");
        assert_eq!(u(ss, &["duration"]), 3);
        assert_eq!(u(ss, &["attained"]), 1);
        assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 3);
        let mean = u(ss, &["data", "iops_mean"]);
        assert!((180..=220).contains(&mean), "iops_mean {mean}");
        // Ended once attained: about 3 s, not the 20 s runtime.
        let rt = u(&o.json, &["jobs", "0", "job_runtime"]);
        assert!((2000..6000).contains(&rt), "job_runtime {rt} ms");
    }
}

#[test]
fn exitall_ends_the_group_when_one_job_ends() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("timing-exitall.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    for o in [&f, &g] {
        // short: 256 reads at 500 IOPS (~0.5 s); long stops with it instead of running 10 s.
        assert_eq!(u(&o.json, &["jobs", "0", "read", "total_ios"]), 256);
        let rt = u(&o.json, &["jobs", "1", "job_runtime"]);
        assert!(rt < 2500, "long ran {rt} ms");
    }
}

#[test]
fn exit_what_all_ends_later_phases_too() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("timing-exit-what-all.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    for o in [&f, &g] {
        let jobs = o.json["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 3);
        assert_eq!(u(&o.json, &["jobs", "0", "read", "total_ios"]), 256);
        assert!(u(&o.json, &["jobs", "1", "job_runtime"]) < 2500);
        assert_eq!(jobs[2]["jobname"], "later");
        assert_eq!(u(&o.json, &["jobs", "2", "groupid"]), 1);
        assert_eq!(u(&o.json, &["jobs", "2", "read", "total_ios"]), 0);
    }
}

#[test]
fn wait_for_starts_after_the_waitee() {
    if !have_fio() {
        return;
    }
    let t0 = std::time::Instant::now();
    let fd = scratch();
    let f = run_fixture("fio", &[], "timing-wait-for.fio", &[], fd.path());
    let fio_wall = t0.elapsed();
    let t0 = std::time::Instant::now();
    let gd = scratch();
    let g = run_fixture(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        "timing-wait-for.fio",
        &[],
        gd.path(),
    );
    let iog_wall = t0.elapsed();
    assert_empty(gd.path());
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(u(&g.json, &["jobs", "1", "groupid"]), 0);
    for (who, wall) in [("fio", fio_wall), ("iogauge", iog_wall)] {
        assert!(
            wall.as_millis() >= 1000,
            "{who} took {wall:?}: the jobs overlapped"
        );
    }
}

/// The fixture under both tools with the files kept (unlink=0): the names each left.
fn names_left(name: &str) -> (Out, Vec<String>, Out, Vec<String>) {
    let fd = scratch();
    let gd = scratch();
    let f = run_fixture("fio", &[], name, &[], fd.path());
    let g = run_fixture(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        name,
        &[],
        gd.path(),
    );
    let mut fnames = files_in(fd.path());
    let mut gnames = files_in(gd.path());
    fnames.sort();
    gnames.sort();
    (f, fnames, g, gnames)
}

#[test]
fn filename_format_names_and_sizes_files_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, fnames, g, gnames) = names_left("files-format.fio");
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(fnames, gnames);
    assert_eq!(
        gnames,
        [
            "data-fmt-0-0.bin",
            "data-fmt-0-1.bin",
            "data-fmt-0-2.bin",
            "data-fmt-1-0.bin",
            "data-fmt-1-1.bin",
            "data-fmt-1-2.bin"
        ]
    );
    // 1 MiB over 3 files: 349525 bytes each, 85 whole blocks each, per instance.
    assert_eq!(u(&g.json, &["jobs", "0", "write", "total_ios"]), 255);
}

#[test]
fn filesize_ranges_and_the_size_cap_follow_fios_rules() {
    if !have_fio() {
        return;
    }
    // Sizes are drawn by each tool's own generator: compare the rules, not the sizes.
    let fd = scratch();
    let gd = scratch();
    let f = run_fixture("fio", &[], "files-filesize-range.fio", &[], fd.path());
    let g = run_fixture(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        "files-filesize-range.fio",
        &[],
        gd.path(),
    );
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    for (who, d, o) in [("fio", fd.path(), &f), ("iogauge", gd.path(), &g)] {
        let sizes: Vec<u64> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .collect();
        assert_eq!(sizes.len(), 4, "{who}: {sizes:?}");
        for s in &sizes {
            assert!(
                (64 << 10..256 << 10).contains(s) && s % 4096 == 0,
                "{who}: {sizes:?}"
            );
        }
        // Every block of every file is written once.
        let total: u64 = sizes.iter().sum();
        assert_eq!(
            u(&o.json, &["jobs", "0", "write", "io_bytes"]),
            total,
            "{who}"
        );
    }
    let (f, g) = both("files-size-cap.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(u(&g.json, &["jobs", "0", "write", "total_ios"]), 128);
}

#[test]
fn pre_read_runs_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("files-preread.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(u(&g.json, &["jobs", "0", "read", "total_ios"]), 256);
}

#[test]
fn create_on_open_writes_a_new_empty_file_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("files-create-on-open.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(u(&g.json, &["jobs", "0", "write", "total_ios"]), 256);
    // Nothing was laid out first (fio prints no "Laying out" either).
    let notes = g.json["iogauge"]["notes"].to_string();
    assert!(!notes.contains("Laying out"), "{notes}");
}

#[test]
fn allow_file_create_0_refuses_a_new_file() {
    let d = scratch();
    let dir = format!("--directory={}", d.path().display());
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=n",
            "--size=1m",
            "--allow_file_create=0",
            &dir,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("file creation is disallowed by allow_file_create=0"),
        "{}",
        text(&out.stderr)
    );
    assert_empty(d.path());
    if have_fio() {
        let out = cmd("fio")
            .args(["--name=n", "--size=1m", "--allow_file_create=0", &dir])
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains("allow_file_create=0"));
    }
}

/// Writes to /dev/full fail with ENOSPC: the error continue_on_error is checked with.
fn dev_full(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=e",
        "--filename=/dev/full",
        "--size=64k",
        "--bs=4k",
        "--rw=write",
        "--output-format=json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn continue_on_error_survives_the_listed_errors_as_fio() {
    if !have_fio() || !Path::new("/dev/full").exists() {
        return;
    }
    for engine in ["psync", "io_uring"] {
        let args = dev_full(&[
            "--continue_on_error=write",
            "--ignore_error=,ENOSPC",
            &format!("--ioengine={engine}"),
        ]);
        let d = scratch();
        let f = cmd("fio")
            .args(&args)
            .current_dir(d.path())
            .output()
            .unwrap();
        let g = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .arg("fio")
            .arg("--allow-overwrite")
            .args(&args)
            .current_dir(d.path())
            .output()
            .unwrap();
        if engine == "io_uring" && text(&g.stderr).contains("io_uring") {
            eprintln!("skipping io_uring: {}", text(&g.stderr));
            continue;
        }
        // Survived errors are no failure: both exit 0.
        assert!(
            f.status.success() && g.status.success(),
            "{}",
            text(&g.stderr)
        );
        let fj: Value = serde_json::from_slice(&f.stdout).unwrap();
        let gj: Value = serde_json::from_slice(&g.stdout).unwrap();
        assert_keys_superset(&fj, &gj);
        for v in [&fj, &gj] {
            // 16 writes issued, all failed: counted as errors and as I/Os of no bytes; the job
            // reports the first error, as fio does.
            assert_eq!(u(v, &["jobs", "0", "total_err"]), 16, "{engine}");
            assert_eq!(u(v, &["jobs", "0", "first_error"]), 28, "{engine}");
            assert_eq!(u(v, &["jobs", "0", "error"]), 28, "{engine}");
            assert_eq!(u(v, &["jobs", "0", "write", "total_ios"]), 16, "{engine}");
            assert_eq!(u(v, &["jobs", "0", "write", "io_bytes"]), 0, "{engine}");
        }
    }
    // Without ENOSPC in the list only EIO and EILSEQ are survived: the job fails in both.
    let args = dev_full(&["--continue_on_error=write"]);
    let f = cmd("fio").args(&args).output().unwrap();
    let g = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .arg("fio")
        .arg("--allow-overwrite")
        .args(&args)
        .output()
        .unwrap();
    assert_eq!((f.status.code(), g.status.code()), (Some(1), Some(1)));
    assert!(text(&g.stderr).contains("No space left on device"));
}

#[test]
fn readonly_refuses_writes_and_layout() {
    let d = scratch();
    let dir = format!("--directory={}", d.path().display());
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--readonly",
            "--name=w",
            "--rw=write",
            "--size=1m",
            &dir,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .contains("job 'w' has write or trim bit set, but iogauge is in read-only mode"),
        "{}",
        text(&out.stderr)
    );
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--readonly",
            "--name=r",
            "--rw=read",
            "--size=1m",
            &dir,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("refusing to lay out"),
        "{}",
        text(&out.stderr)
    );
    assert_empty(d.path());
    // An existing file is read.
    std::fs::write(d.path().join("data"), vec![7u8; 1 << 20]).unwrap();
    let file = format!("--filename={}", d.path().join("data").display());
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--readonly",
            "--name=r",
            "--rw=read",
            "--bs=4k",
            &file,
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(u(&v, &["jobs", "0", "read", "total_ios"]), 256);
    if have_fio() {
        // fio refuses the write job too (exit 1).
        let out = cmd("fio")
            .args(["--readonly", "--name=w", "--rw=write", "--size=1m", &dir])
            .output()
            .unwrap();
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains("read-only mode"));
    }
}

/// max_latency: an I/O over the limit ends the job with ETIMEDOUT (110) and fio's line on
/// stderr, its results kept, exit 1; a limit that is never reached changes nothing.
#[test]
fn max_latency_fails_the_job_as_in_fio() {
    if !have_fio() {
        return;
    }
    for engine in ["psync", "io_uring"] {
        let mut seen = Vec::new();
        for program in ["fio", env!("CARGO_BIN_EXE_iogauge")] {
            let d = scratch();
            let out = cmd(program)
                .args(if program == "fio" {
                    vec![]
                } else {
                    vec!["fio"]
                })
                .args([
                    "--name=ml",
                    "--rw=randread",
                    "--direct=1",
                    "--bs=4k",
                    "--size=1m",
                ])
                .arg(format!("--ioengine={engine}"))
                // At iodepth 1: with more in flight, fio also counts the I/Os that complete
                // after the limit was hit, a number that varies from run to run.
                .args(["--iodepth=1", "--max_latency=1", "--output-format=json"])
                .arg(format!("--directory={}", d.path().display()))
                .output()
                .unwrap();
            let err = text(&out.stderr);
            let line = err
                .lines()
                .find(|l| l.starts_with("fio: latency of"))
                .unwrap_or("");
            // "fio: latency of N nsec exceeds specified max (1000 nsec): PATH read OFF 4096"
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(words.len(), 14, "{program}: {err}");
            let want = ["nsec", "exceeds", "specified", "max", "(1000", "nsec):"];
            assert_eq!(&words[4..10], want);
            assert!(words[10].starts_with(d.path().to_str().unwrap()), "{line}");
            assert_eq!((words[11], words[13]), ("read", "4096"));
            // fio may put a note before its JSON on stdout.
            let stdout = text(&out.stdout);
            let v: Value = serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap();
            let j = &v["jobs"][0];
            seen.push((
                out.status.code(),
                u(j, &["error"]),
                u(j, &["read", "total_ios"]),
            ));
        }
        assert_eq!(
            seen[0], seen[1],
            "{engine}: fio vs iogauge (exit, error, total_ios)"
        );
        assert_eq!(seen[1], (Some(1), 110, 1), "{engine}");
    }
    // A limit never reached: the whole job runs.
    let d = scratch();
    let v = run_json(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        &[
            "--name=ok".into(),
            "--ioengine=null".into(),
            "--size=1m".into(),
            "--max_latency=10s".into(),
        ],
        d.path(),
    );
    assert_eq!(u(&v["jobs"][0], &["read", "total_ios"]), 256);
    assert_eq!(u(&v["jobs"][0], &["error"]), 0);
}
