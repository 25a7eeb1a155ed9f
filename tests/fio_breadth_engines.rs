//! The extra ioengines (vsync, pvsync, pvsync2, mmap, posixaio, filecreate, filestat,
//! filedelete): each fixture `tests/fixtures/fio/engines-*.fio` runs under fio and iogauge at a
//! small size with equal counts and a superset of fio's JSON keys, plus the behaviour each engine
//! exists for. fio must be installed (with CI=true a missing fio fails).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fio")
            .join(name),
    )
    .unwrap()
}

/// Runs the job file `name` (with `@DIR@` replaced by a fresh temp dir) under `program`.
fn run_fixture(program: &str, pre: &[&str], name: &str, dir: &Path) -> Value {
    let job = dir.join("job.fio");
    std::fs::write(&job, fixture(name).replace("@DIR@", dir.to_str().unwrap())).unwrap();
    let v = run_json(program, pre, &[job.to_str().unwrap().to_string()], dir);
    std::fs::remove_file(&job).unwrap();
    v
}

/// The fixture under fio and iogauge, each in its own temp dir; iogauge must leave nothing.
fn both(name: &str) -> (Value, Value) {
    let fd = scratch();
    let gd = scratch();
    let fio = run_fixture("fio", &[], name, fd.path());
    let iog = run_fixture(env!("CARGO_BIN_EXE_iogauge"), &["fio"], name, gd.path());
    let left: Vec<_> = std::fs::read_dir(gd.path()).unwrap().collect();
    assert!(left.is_empty(), "iogauge left files: {left:?}");
    (fio, iog)
}

fn assert_counts_equal(fio: &Value, iog: &Value) {
    let fj = fio["jobs"].as_array().unwrap();
    let gj = iog["jobs"].as_array().unwrap();
    assert_eq!(fj.len(), gj.len(), "number of job entries");
    for (f, g) in fj.iter().zip(gj) {
        assert_eq!(f["jobname"], g["jobname"]);
        for d in ["read", "write", "trim"] {
            let name = f["jobname"].as_str().unwrap();
            assert_eq!(
                u(f, &[d, "total_ios"]),
                u(g, &[d, "total_ios"]),
                "{name}: {d} total_ios"
            );
            assert_eq!(
                u(f, &[d, "io_bytes"]),
                u(g, &[d, "io_bytes"]),
                "{name}: {d} io_bytes"
            );
        }
    }
}

/// fio and iogauge agree on a fixture: counts, keys; returns iogauge's JSON.
fn crosscheck(name: &str) -> Option<Value> {
    if !have_fio() {
        return None;
    }
    let (f, g) = both(name);
    assert_keys_superset(&f, &g);
    assert_counts_equal(&f, &g);
    Some(g)
}

#[test]
fn sync_family_counts_and_keys_match_fio() {
    let Some(g) = crosscheck("engines-sync-family.fio") else {
        return;
    };
    for e in ["vsync", "pvsync", "pvsync2", "mmap"] {
        let w = job(&g, &format!("{e}-w"));
        assert_eq!(u(w, &["write", "total_ios"]), 64, "{e}");
        assert_eq!(u(w, &["write", "clat_ns", "N"]), 64, "{e}");
        let r = job(&g, &format!("{e}-r"));
        assert_eq!(u(r, &["read", "io_bytes"]), 256 << 10, "{e}");
        assert_eq!(r["job options"]["ioengine"], e);
    }
    // mmap's fsync=8 is an msync every 8 writes.
    assert_eq!(u(job(&g, "mmap-w"), &["sync", "total_ios"]), 8);
}

#[test]
fn posixaio_counts_keys_and_depth_match_fio() {
    let Some(g) = crosscheck("engines-posixaio.fio") else {
        return;
    };
    let w = job(&g, "paio-w");
    assert_eq!(u(w, &["write", "total_ios"]), 128);
    // Queued: slat and lat are recorded, and more than one I/O was in flight.
    assert_eq!(u(w, &["write", "slat_ns", "N"]), 128);
    let depths = &w["iodepth_level"];
    let deep: f64 = ["2", "4", "8"]
        .iter()
        .map(|k| depths[*k].as_f64().unwrap_or(0.0))
        .sum();
    assert!(deep > 0.0, "no depth above 1: {depths}");
}

#[test]
fn filecreate_times_one_open_per_file_and_pass_and_leaves_nothing() {
    let Some(g) = crosscheck("engines-filecreate.fio") else {
        return;
    };
    for j in g["jobs"].as_array().unwrap() {
        // 50 files x 2 loops: one timed open each, recorded as write clat.
        assert_eq!(u(j, &["write", "clat_ns", "N"]), 100);
        assert_eq!(u(j, &["write", "total_ios"]), 100);
        assert_eq!(u(j, &["read", "clat_ns", "N"]), 0);
        assert!(j["write"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn filestat_counts_one_stat_per_file_and_fake_ios_per_block() {
    let Some(g) = crosscheck("engines-filestat.fio") else {
        return;
    };
    for name in ["stat", "lstat", "statx"] {
        let j = job(&g, name);
        assert_eq!(u(j, &["read", "clat_ns", "N"]), 20, "{name}");
        assert_eq!(u(j, &["read", "total_ios"]), 80, "{name}");
    }
}

#[test]
fn filedelete_unlinks_every_file() {
    let Some(g) = crosscheck("engines-filedelete.fio") else {
        return;
    };
    let j = job(&g, "fd");
    assert_eq!(u(j, &["write", "clat_ns", "N"]), 30);
    assert_eq!(u(j, &["write", "total_ios"]), 60);
}

// `iogauge fio ARGS…` in a directory.
use common::iogauge_fio as iogauge;

#[test]
fn mmap_writes_reach_the_file() {
    let d = scratch();
    let dir = format!("--directory={}", d.path().display());
    let out = iogauge(
        &[
            "--name=m",
            "--ioengine=mmap",
            "--rw=write",
            "--size=64k",
            "--bs=4k",
            "--unlink=0",
            "--end_fsync=1",
            &dir,
        ],
        d.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Laid out preallocated (reads as zeros); every block was then written with random data
    // through the shared mapping.
    let data = std::fs::read(d.path().join("m.0.0")).unwrap();
    assert_eq!(data.len(), 64 << 10);
    for (i, block) in data.chunks(4096).enumerate() {
        assert!(block.iter().any(|&b| b != 0), "block {i} still zeros");
    }
}

#[test]
fn filecreate_leaves_an_existing_file_alone() {
    let d = scratch();
    // The user's file under the name the job would create: opened, not removed.
    let mine = vec![7u8; 4096];
    std::fs::write(d.path().join("fc.0.0"), &mine).unwrap();
    let dir = format!("--directory={}", d.path().display());
    let out = iogauge(
        &[
            "--name=fc",
            "--ioengine=filecreate",
            "--nrfiles=3",
            "--filesize=4k",
            "--output-format=json",
            &dir,
        ],
        d.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(files_in(d.path()), vec!["fc.0.0".to_string()]);
    assert_eq!(std::fs::read(d.path().join("fc.0.0")).unwrap(), mine);
}

#[test]
fn engine_options_are_checked_against_the_engine() {
    let d = scratch();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--name=t", "--nowait=1"],
            "job 't': nowait is an option of ioengine=pvsync2, but ioengine=psync; set ioengine=pvsync2",
        ),
        (
            &["--name=t", "--ioengine=filestat", "--stat_type=fstat"],
            "--stat_type=fstat: expected stat, lstat or statx, e.g. stat_type=statx",
        ),
        (
            &["--name=t", "--ioengine=pvsync2", "--hipri_percentage=101"],
            "expected a percentage from 0 to 100, e.g. hipri_percentage=50",
        ),
        (
            &["--name=t", "--ioengine=pvsync2", "--uncached=1"],
            "RWF_UNCACHED never reached Linux",
        ),
        (
            &["--name=t", "--ioengine=mmap", "--bs=1k", "--fsync=1"],
            "multiple of the page size",
        ),
        (
            &["--name=t", "--ioengine=filestat", "--time_based", "--runtime=1"],
            "time_based with ioengine=filestat is not supported by iogauge yet",
        ),
        (
            &["--name=t", "--ioengine=dircreate", "--time_based", "--runtime=1"],
            "time_based with ioengine=dircreate is not supported by iogauge yet",
        ),
        (
            &["--name=t", "--ioengine=splice"],
            "ioengine 'splice' is not supported by iogauge yet",
        ),
    ];
    for (args, want) in cases {
        let out = iogauge(args, d.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn pvsync2_hipri_runs_buffered_and_nowait_fails_as_under_fio() {
    let d = scratch();
    let dir = format!("--directory={}", d.path().display());
    // RWF_HIPRI is ignored for buffered I/O by the kernel, as under fio.
    let out = iogauge(
        &[
            "--name=p",
            "--ioengine=pvsync2",
            "--rw=write",
            "--size=64k",
            "--hipri",
            "--hipri_percentage=30",
            "--output-format=json",
            &dir,
        ],
        d.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(u(&v, &["jobs", "0", "write", "total_ios"]), 16);
    // RWF_NOWAIT on a buffered write: whether the filesystem takes it decides, for both tools.
    if !have_fio() {
        return;
    }
    let args = [
        "--name=p",
        "--ioengine=pvsync2",
        "--rw=write",
        "--size=64k",
        "--nowait",
        &dir,
    ];
    let g = iogauge(&args, d.path());
    let f = cmd("fio")
        .args(args)
        .current_dir(d.path())
        .output()
        .unwrap();
    let fio_failed = !f.status.success() || text(&f.stdout).contains("err=");
    assert_eq!(
        !g.status.success(),
        fio_failed,
        "fio: {} / iogauge: {}",
        text(&f.stdout),
        text(&g.stderr)
    );
    if fio_failed {
        assert!(text(&g.stderr).contains("errno"), "{}", text(&g.stderr));
    }
}

#[test]
fn falloc_and_ftruncate_counts_and_keys_match_fio() {
    let Some(g) = crosscheck("engines-falloc.fio") else {
        return;
    };
    assert_eq!(u(job(&g, "falloc-w"), &["write", "total_ios"]), 64);
    assert_eq!(u(job(&g, "falloc-r"), &["read", "total_ios"]), 16);
    assert_eq!(u(job(&g, "ftrunc"), &["write", "io_bytes"]), 256 << 10);
}

#[test]
fn ftruncate_leaves_the_file_at_the_last_write_offset() {
    let d = scratch();
    let dir = format!("--directory={}", d.path().display());
    let out = iogauge(
        &[
            "--name=t",
            "--ioengine=ftruncate",
            "--rw=write",
            "--size=64k",
            "--bs=4k",
            "--unlink=0",
            &dir,
        ],
        d.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let len = std::fs::metadata(d.path().join("t.0.0")).unwrap().len();
    assert_eq!(len, 60 << 10);
    let out = iogauge(&["--name=t", "--ioengine=ftruncate", &dir], d.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("ioengine=ftruncate only writes"));
}

#[test]
fn trim_modes_counts_and_keys_match_fio() {
    let Some(g) = crosscheck("trim-falloc.fio") else {
        return;
    };
    for name in ["trim", "randtrim"] {
        let j = job(&g, name);
        assert_eq!(u(j, &["trim", "total_ios"]), 32, "{name}");
        assert_eq!(u(j, &["trim", "clat_ns", "N"]), 32, "{name}");
        assert_eq!(u(j, &["write", "total_ios"]), 0, "{name}");
    }
    // trimwrite: every block trimmed, then written.
    let j = job(&g, "trimwrite");
    assert_eq!(u(j, &["trim", "total_ios"]), 32);
    assert_eq!(u(j, &["write", "total_ios"]), 32);
    let j = job(&g, "randtrimwrite");
    assert_eq!(u(j, &["trim", "io_bytes"]), 128 << 10);
    assert_eq!(u(j, &["write", "io_bytes"]), 128 << 10);
}

/// Allocated bytes of a file and whether [offset, offset+len) holds data (SEEK_DATA).
fn data_at(path: &Path, offset: u64) -> Option<u64> {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: plain syscall on an open file.
    let r = unsafe { libc::lseek(f.as_raw_fd(), offset as libc::off_t, libc::SEEK_DATA) };
    (r >= 0).then_some(r as u64)
}

fn allocated(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn trim_punches_real_holes_in_files() {
    for engine in [
        "psync", "sync", "pvsync", "pvsync2", "vsync", "mmap", "falloc", "libaio", "io_uring",
        "posixaio",
    ] {
        let d = scratch();
        let dir = format!("--directory={}", d.path().display());
        let eng = format!("--ioengine={engine}");
        // Trim the second half of the file (offset=50%): the first half keeps its data.
        let out = iogauge(
            &[
                "--name=t",
                &eng,
                "--rw=randtrim",
                "--iodepth=4",
                "--size=128k",
                "--offset=128k",
                "--bs=16k",
                "--unlink=0",
                "--output-format=json",
                &dir,
            ],
            d.path(),
        );
        assert!(out.status.success(), "{engine}: {}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(u(&v, &["jobs", "0", "trim", "total_ios"]), 8, "{engine}");
        let f = d.path().join("t.0.0");
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 256 << 10, "{engine}");
        // Data up to 128k, none from there on: SEEK_DATA past 128k finds nothing (ENXIO).
        assert_eq!(data_at(&f, 0), Some(0), "{engine}");
        assert_eq!(
            data_at(&f, 128 << 10),
            None,
            "{engine}: the trimmed half has data"
        );
        // ext4 may keep one extent-tree block, depending on the order the holes were punched
        // in (seed-dependent); the trimmed half itself must be gone.
        assert!(
            allocated(&f) <= (128 << 10) + 4096,
            "{engine}: {} allocated",
            allocated(&f)
        );
    }
}

#[test]
fn trimwrite_leaves_every_block_written() {
    let d = scratch();
    let dir = format!("--directory={}", d.path().display());
    let out = iogauge(
        &[
            "--name=t",
            "--rw=randtrimwrite",
            "--size=64k",
            "--bs=4k",
            "--unlink=0",
            &dir,
        ],
        d.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let data = std::fs::read(d.path().join("t.0.0")).unwrap();
    for (i, block) in data.chunks(4096).enumerate() {
        assert!(block.iter().any(|&b| b != 0), "block {i} is a hole");
    }
    assert!(allocated(&d.path().join("t.0.0")) >= 64 << 10);
}

#[test]
fn trim_is_refused_where_it_cannot_run() {
    let d = scratch();
    for (args, want) in [
        (
            &["--name=t", "--rw=trim", "--ioengine=cpuio", "--cpuload=5"][..],
            "rw=trim with ioengine=cpuio is not supported by iogauge yet",
        ),
        (
            &["--name=t", "--rw=trimwrite", "--ioengine=filecreate"][..],
            "rw=trimwrite with ioengine=filecreate is not supported by iogauge yet",
        ),
    ] {
        let out = iogauge(args, d.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(want), "{}", text(&out.stderr));
    }
    // An existing file is the user's: trimming it needs --allow-overwrite, as writing does.
    std::fs::write(d.path().join("mine"), vec![1u8; 8192]).unwrap();
    let file = format!("--filename={}", d.path().join("mine").display());
    let out = iogauge(&["--name=t", "--rw=trim", "--size=8k", &file], d.path());
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(d.path().join("mine")).unwrap(),
        vec![1u8; 8192]
    );
}

/// A loop device over a 4 MiB image full of data on the real disk, detached on drop.
struct LoopDev {
    _dir: tempfile::TempDir,
    img: std::path::PathBuf,
    dev: String,
}

impl LoopDev {
    /// None when loop devices cannot be made here (not root); with CI=true they must. The
    /// calling test is serial from here on: loop devices are the host's.
    fn new() -> Option<LoopDev> {
        serial();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must run the block device trim test: it needs root for losetup"
            );
            return None;
        }
        let dir = scratch();
        let img = dir.path().join("disk.img");
        std::fs::write(&img, vec![0x5au8; 4 << 20]).unwrap();
        let o = cmd("losetup")
            .args(["-f", "--show", img.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "losetup: {}", text(&o.stderr));
        let dev = text(&o.stdout).trim().to_string();
        Some(LoopDev {
            _dir: dir,
            img,
            dev,
        })
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = cmd("losetup").args(["-d", &self.dev]).output();
    }
}

#[test]
fn trim_on_a_block_device_discards_behind_allow_overwrite() {
    let Some(lo) = LoopDev::new() else {
        return;
    };
    let d = scratch();
    let file = format!("--filename={}", lo.dev);
    let args = ["--name=t", "--rw=trim", "--bs=64k", "--size=1m", &file];
    // Refused without --allow-overwrite: nothing is discarded.
    let out = iogauge(&args, d.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--allow-overwrite"));
    assert_eq!(data_at(&lo.img, 0), Some(0));

    let mut with = vec!["--allow-overwrite", "--output-format=json"];
    with.extend(args);
    let out = iogauge(&with, d.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(u(&v, &["jobs", "0", "trim", "total_ios"]), 16);
    // BLKDISCARD on a loop device punches the backing file: the first MiB is a hole now, the
    // rest keeps its data.
    assert_eq!(data_at(&lo.img, 0), Some(1 << 20));
    assert_eq!(
        std::fs::read(&lo.img).unwrap()[(1 << 20)..],
        vec![0x5au8; 3 << 20]
    );

    // libaio at iodepth 8, trimwrite: trims wait for the queue to drain (as fio's); the writes
    // queue. The first MiB holds data again.
    let aio = [
        "--name=t",
        "--rw=trimwrite",
        "--ioengine=libaio",
        "--iodepth=8",
        "--direct=1",
        "--bs=64k",
        "--size=1m",
        &file,
    ];
    let mut with = vec!["--allow-overwrite", "--output-format=json"];
    with.extend(aio);
    let out = iogauge(&with, d.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let va: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(u(&va, &["jobs", "0", "trim", "total_ios"]), 16);
    assert_eq!(u(&va, &["jobs", "0", "write", "total_ios"]), 16);
    assert_eq!(data_at(&lo.img, 0), Some(0));

    // fio 3.33 does the same BLKDISCARDs: equal counts, iogauge has every key.
    if have_fio() {
        let fa = run_json(
            "fio",
            &[],
            &aio.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            d.path(),
        );
        assert_keys_superset(&fa, &va);
        assert_counts_equal(&fa, &va);
        let fio = run_json(
            "fio",
            &[],
            &args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            d.path(),
        );
        assert_keys_superset(&fio, &v);
        assert_counts_equal(&fio, &v);
    }
}

/// fio's cpuio prints "NAME (MODE): ioengine=cpuio, …" on stdout before its JSON.
fn fio_json_after_banner(name: &str, dir: &Path) -> Value {
    let job = dir.join("job.fio");
    std::fs::write(&job, fixture(name).replace("@DIR@", dir.to_str().unwrap())).unwrap();
    let out = cmd("fio")
        .arg(&job)
        .arg("--output-format=json")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", text(&out.stderr));
    let s = text(&out.stdout);
    serde_json::from_str(&s[s.find('{').unwrap()..]).unwrap()
}

#[test]
fn cpuio_cycles_and_keys_match_fio() {
    let gd = scratch();
    let g = run_fixture(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        "engines-cpuio.fio",
        gd.path(),
    );
    assert!(std::fs::read_dir(gd.path()).unwrap().next().is_none());
    // 20 ms busy + 20 ms asleep: 25 cycles in 1 s, each one 0-byte "read" timed as clat.
    let noop = job(&g, "noop");
    let n = u(noop, &["read", "total_ios"]);
    assert!((15..=26).contains(&n), "{n} cycles");
    assert_eq!(u(noop, &["read", "clat_ns", "N"]), n);
    assert_eq!(u(noop, &["read", "io_bytes"]), 0);
    let mean = noop["read"]["clat_ns"]["mean"].as_f64().unwrap();
    assert!(mean >= 20e6, "a cycle took {mean} ns");
    // exit_on_io_done: qsort stops when the write job (about 0.5 s) is done.
    let q = job(&g, "qsort");
    assert!(u(q, &["read", "total_ios"]) >= 1);
    assert!(u(q, &["job_runtime"]) < 3000, "{q}");
    assert_eq!(u(job(&g, "io"), &["write", "total_ios"]), 256);
    if !have_fio() {
        return;
    }
    let fd = scratch();
    let f = fio_json_after_banner("engines-cpuio.fio", fd.path());
    assert_keys_superset(&f, &g);
    let fnoop = job(&f, "noop");
    let fnum = u(fnoop, &["read", "total_ios"]);
    assert!(n.abs_diff(fnum) <= 5, "fio {fnum} cycles, iogauge {n}");
    assert_eq!(u(job(&f, "io"), &["write", "total_ios"]), 256);
}

#[test]
fn exec_runs_the_program_for_the_runtime_as_fio() {
    let gd = scratch();
    let g = run_fixture(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        "engines-exec.fio",
        gd.path(),
    );
    // %n and %r expanded; the output kept as the program's (fio keeps it too).
    let out = std::fs::read_to_string(gd.path().join("ex.stdout")).unwrap();
    assert_eq!(out, "job ex for 1 s\n");
    let mut left = files_in(gd.path());
    left.sort();
    assert_eq!(left, vec!["ex.stderr", "ex.stdout"]);
    // The spawn, then one 50 ms pause + 50 ms think time per I/O until 1 s: 11 I/Os of 0 bytes.
    let j = job(&g, "ex");
    let n = u(j, &["read", "total_ios"]);
    assert!((9..=12).contains(&n), "{n} I/Os");
    assert_eq!(u(j, &["read", "io_bytes"]), 0);
    assert!(u(j, &["job_runtime"]) >= 1000);
    if !have_fio() {
        return;
    }
    let fd = scratch();
    let f = fio_json_after_banner("engines-exec.fio", fd.path());
    assert_keys_superset(&f, &g);
    let fnum = u(job(&f, "ex"), &["read", "total_ios"]);
    assert!(n.abs_diff(fnum) <= 1, "fio {fnum} I/Os, iogauge {n}");
    assert_eq!(
        std::fs::read_to_string(fd.path().join("ex.stdout")).unwrap(),
        out
    );
}

#[test]
fn exec_and_cpuio_need_what_they_run_by() {
    let d = scratch();
    for (args, want) in [
        (
            &["--name=t", "--ioengine=exec", "--runtime=1"][..],
            "ioengine=exec needs program=, e.g. program=/usr/bin/stress-ng",
        ),
        (
            &["--name=t", "--ioengine=exec", "--program=/bin/true"][..],
            "ioengine=exec runs its program for the job's runtime; set runtime=",
        ),
        (
            &["--name=t", "--program=/bin/true"][..],
            "program is an option of ioengine=exec, but ioengine=psync; set ioengine=exec",
        ),
        (
            &[
                "--name=t",
                "--ioengine=cpuio",
                "--cpuload=10",
                "--cpumode=spin",
            ][..],
            "expected noop or qsort, e.g. cpumode=qsort",
        ),
    ] {
        let out = iogauge(args, d.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(want), "{}", text(&out.stderr));
    }
    // A program that cannot run is a run error naming it.
    let out = iogauge(
        &[
            "--name=t",
            "--ioengine=exec",
            "--program=/nonexistent/prog",
            "--std_redirect=0",
            "--runtime=1",
        ],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("'/nonexistent/prog'"),
        "{}",
        text(&out.stderr)
    );
}
