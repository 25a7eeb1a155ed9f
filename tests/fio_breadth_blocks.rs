//! What the next I/O is, under fio and iogauge: block size ranges and splits, offset
//! distributions and generators (job files in tests/fixtures/fio/blocks-*.fio). Exact counts
//! where fio's are deterministic (a fixed size, or a region used up exactly once); where the
//! number of I/Os depends on random draws, the two tools' averages per I/O must agree with each
//! other and with the split. fio must be installed (with CI=true a missing fio fails).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "fixtures", "fio", name]
        .iter()
        .collect();
    p.to_str().unwrap().to_string()
}

/// Run `args` under both tools in separate temp dirs (`@DIR@` is each one's directory).
fn both(args: &[&str]) -> (Value, Value) {
    let fd = scratch();
    let gd = scratch();
    let fix = |d: &Path| -> Vec<String> {
        args.iter()
            .map(|a| a.replace("@DIR@", d.to_str().unwrap()))
            .collect()
    };
    let fio = run_json("fio", &[], &fix(fd.path()), fd.path());
    let iog = run_json(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        &fix(gd.path()),
        gd.path(),
    );
    let left: Vec<_> = std::fs::read_dir(gd.path()).unwrap().collect();
    assert!(left.is_empty(), "iogauge left files: {left:?}");
    (fio, iog)
}

/// Job `i`'s (total_ios, io_bytes) in `dir`.
fn counts(v: &Value, i: usize, dir: &str) -> (u64, u64) {
    let i = i.to_string();
    (
        u(v, &["jobs", &i, dir, "total_ios"]),
        u(v, &["jobs", &i, dir, "io_bytes"]),
    )
}

fn job_names(v: &Value) -> Vec<String> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap().to_string())
        .collect()
}

fn within(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b
}

#[test]
fn bsrange_uses_the_region_up_exactly_with_sizes_from_the_range() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[&fixture("blocks-bsrange.fio"), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    assert_eq!(job_names(&f), job_names(&g));
    // Sequential 4k..16k reads: the last I/O is drawn to fit, so both move the 8 MiB exactly;
    // sizes 4k, 8k, 12k, 16k a quarter each make 10 KiB per I/O, 819 I/Os.
    let (fi, fb) = counts(&f, 0, "read");
    let (gi, gb) = counts(&g, 0, "read");
    assert_eq!((fb, gb), (8 << 20, 8 << 20));
    assert!(within(gi as f64, 819.0, 0.06), "iogauge {gi}");
    assert!(within(fi as f64, 819.0, 0.06), "fio {fi}");
    // Random 4k..64k writes under the random map: I/Os are cut where a covered block starts, so
    // the map's pass moves the 8 MiB exactly in both tools, in a similar number of I/Os.
    let (fi, fb) = counts(&f, 1, "write");
    let (gi, gb) = counts(&g, 1, "write");
    assert_eq!((fb, gb), (8 << 20, 8 << 20));
    assert!(within(gi as f64, fi as f64, 0.15), "fio {fi}, iogauge {gi}");
}

#[test]
fn bssplit_sizes_follow_the_split_as_in_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[&fixture("blocks-bssplit.fio"), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    // With the random map: exactly the region, I/O counts within chance of each other.
    let (fi, fb) = counts(&f, 0, "read");
    let (gi, gb) = counts(&g, 0, "read");
    assert_eq!((fb, gb), (32 << 20, 32 << 20));
    assert!(within(gi as f64, fi as f64, 0.12), "fio {fi}, iogauge {gi}");
    // Without the map nothing is cut: bytes per I/O is the split's mean,
    // 0.5·4k + 0.3·16k + 0.2·64k = 19.6 KiB, for both tools (13,000 I/Os: within 1 % by chance); the last I/O may pass
    // the size.
    let mean: f64 = 0.5 * 4096.0 + 0.3 * 16384.0 + 0.2 * 65536.0;
    for (who, v) in [("fio", &f), ("iogauge", &g)] {
        let (n, b) = counts(v, 1, "read");
        assert!((256 << 20..(256 << 20) + 65536).contains(&b), "{who} {b}");
        let per_io = b as f64 / n as f64;
        assert!(within(per_io, mean, 0.05), "{who}: {per_io} bytes per I/O");
    }
    // A mixed random job: reads and writes share one map per file, as in fio, so the pair
    // moves exactly the region, in a number of I/Os within chance of fio's.
    let both_dirs = |v: &Value| {
        let (ri, rb) = counts(v, 2, "read");
        let (wi, wb) = counts(v, 2, "write");
        (ri + wi, rb + wb)
    };
    let ((fi, fb), (gi, gb)) = (both_dirs(&f), both_dirs(&g));
    assert_eq!((fb, gb), (32 << 20, 32 << 20));
    assert!(within(gi as f64, fi as f64, 0.12), "fio {fi}, iogauge {gi}");
}

#[test]
fn distributions_and_generators_count_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[&fixture("blocks-distributions.fio"), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    let names = job_names(&f);
    assert_eq!(names, job_names(&g));
    assert_eq!(names.len(), 8);
    for (i, name) in names.iter().enumerate() {
        for dir in ["read", "write"] {
            assert_eq!(counts(&f, i, dir), counts(&g, i, dir), "{name} {dir}");
        }
    }
    // 8 MiB in 4 KiB I/Os (8 KiB for blockalign's job).
    assert_eq!(counts(&g, 0, "read"), (2048, 8 << 20));
    assert_eq!(counts(&g, 6, "write"), (2048, 8 << 20));
    assert_eq!(counts(&g, 7, "read"), (1024, 8 << 20));
}

#[test]
fn offset_modifiers_count_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[&fixture("blocks-rw-modifier.fio"), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    let names = job_names(&f);
    assert_eq!(names, job_names(&g));
    for (i, name) in names.iter().enumerate() {
        for dir in ["read", "write"] {
            assert_eq!(counts(&f, i, dir), counts(&g, i, dir), "{name} {dir}");
        }
    }
    assert_eq!(counts(&g, 1, "write"), (256, 1 << 20));
}

#[test]
fn io_size_number_ios_and_offset_increment_count_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[&fixture("blocks-limits.fio"), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    let names = job_names(&f);
    assert_eq!(names, job_names(&g));
    assert_eq!(names.len(), 6);
    for (i, name) in names.iter().enumerate() {
        for dir in ["read", "write"] {
            assert_eq!(counts(&f, i, dir), counts(&g, i, dir), "{name} {dir}");
        }
    }
    // io_size=3m over a 1 MiB region wraps (loops=2 are used up on the way); io_limit=1m of
    // a 4 MiB region per loop, 3 loops; number_ios stops at 100.
    assert_eq!(counts(&g, 0, "read"), (768, 3 << 20));
    assert_eq!(counts(&g, 1, "read"), (768, 3 << 20));
    assert_eq!(counts(&g, 2, "write"), (100, 409_600));
}

#[test]
fn offset_increment_moves_each_copy_as_fio_lays_out() {
    if !have_fio() {
        return;
    }
    let args = [
        "--name=inc",
        "--rw=write",
        "--size=1m",
        "--offset=512k",
        "--numjobs=3",
        "--offset_increment=256k",
        "--output-format=terse",
    ];
    let sizes = |d: &Path| {
        let mut v: Vec<(String, u64)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().len(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let fd = scratch();
    let gd = scratch();
    let o = cmd("fio")
        .args(args)
        .arg(format!("--directory={}", fd.path().display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["fio", "--keep-files"])
        .args(args)
        .arg(format!("--directory={}", gd.path().display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Copy k writes 1 MiB from 512k + k·256k: its file ends there.
    let want: Vec<(String, u64)> = (0..3u64)
        .map(|k| {
            (
                format!("inc.{k}.0"),
                (512 << 10) + k * (256 << 10) + (1 << 20),
            )
        })
        .collect();
    assert_eq!(sizes(fd.path()), want);
    assert_eq!(sizes(gd.path()), want);
}

#[test]
fn strided_zones_count_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[&fixture("blocks-strided.fio"), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    let names = job_names(&f);
    assert_eq!(names, job_names(&g));
    for (i, name) in names.iter().enumerate() {
        for dir in ["read", "write"] {
            assert_eq!(counts(&f, i, dir), counts(&g, i, dir), "{name} {dir}");
        }
    }
    assert_eq!(counts(&g, 0, "read"), (16, 1 << 20));
}

#[test]
fn file_service_types_count_as_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both(&[&fixture("blocks-file-service.fio"), "--directory=@DIR@"]);
    assert_keys_superset(&f, &g);
    let names = job_names(&f);
    assert_eq!(names, job_names(&g));
    assert_eq!(names.len(), 5);
    for (i, name) in names.iter().enumerate() {
        for dir in ["read", "write"] {
            assert_eq!(counts(&f, i, dir), counts(&g, i, dir), "{name} {dir}");
        }
    }
}

#[test]
fn rate_iops_with_mixed_sizes_paces_bytes_as_fio() {
    if !have_fio() {
        return;
    }
    // fio turns rate_iops=200 into 200 · 4 KiB/s when sizes vary; with a 4k/12k split (8 KiB on
    // average) that is about 100 I/Os per second, in both tools.
    let (f, g) = both(&[
        "--name=paced",
        "--directory=@DIR@",
        "--rw=randread",
        "--size=16m",
        "--bssplit=4k/50:12k/50",
        "--rate_iops=200",
        "--time_based",
        "--runtime=2",
    ]);
    assert_keys_superset(&f, &g);
    for (who, v) in [("fio", &f), ("iogauge", &g)] {
        let iops = v["jobs"][0]["read"]["iops"].as_f64().unwrap();
        assert!(within(iops, 100.0, 0.15), "{who}: {iops} IOPS");
    }
}

/// iogauge's normal output, first line (the job header).
fn header_line(args: &[&str], program: &str) -> String {
    let d = scratch();
    let mut c = cmd(program);
    if program != "fio" {
        c.arg("fio");
    }
    let out = c
        .args(args)
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().next().unwrap().to_string()
}

#[test]
fn header_shows_size_ranges_as_fio() {
    if !have_fio() {
        return;
    }
    for args in [
        &[
            "--name=h",
            "--rw=randread",
            "--size=1m",
            "--bssplit=4k/50:64k/50,16k",
        ][..],
        &[
            "--name=h",
            "--rw=read",
            "--size=1m",
            "--bsrange=1k-10k",
            "--bs_unaligned=1",
        ][..],
        &[
            "--name=h",
            "--rw=randread",
            "--size=1m",
            "--bs=4k,16k",
            "--bs_is_seq_rand=1",
        ][..],
    ] {
        let fio = header_line(args, "fio");
        let iog = header_line(args, env!("CARGO_BIN_EXE_iogauge"));
        assert_eq!(iog, fio, "{args:?}");
    }
}

#[test]
fn bad_values_are_refused_with_the_option_named() {
    let d = scratch();
    for (arg, want) in [
        (
            "--bssplit=4k/80:8k/30:16k",
            "bssplit percentages add to more than 100% (110)",
        ),
        ("--bsrange=4k", "expected MIN-MAX per direction"),
        (
            "--random_distribution=zoned:60/10:30/20",
            "must add up to 100 (got 90)",
        ),
        (
            "--random_generator=mt",
            "expected tausworthe, lfsr or tausworthe64",
        ),
        ("--zonemode=zbd", "zoned block devices are not supported"),
        ("--zonesize=64k", "zonesize needs zonemode=strided"),
        (
            "--file_service_type=zipf:1",
            "the zipf theta must be above 0 and not 1",
        ),
        (
            "--number_ios=10 --bsrange=4k-8k",
            "number_ios with several block sizes is not supported",
        ),
    ] {
        let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["fio", "--name=x", "--size=1m"])
            .args(arg.split(' '))
            .arg(format!("--directory={}", d.path().display()))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let e = text(&out.stderr);
        assert!(e.contains(want), "{arg}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{arg}: {e}");
    }
}
