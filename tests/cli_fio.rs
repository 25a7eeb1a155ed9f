//! `iogauge fio` end to end: the seeds' recipes run unchanged and print fio's layouts; bad input
//! gets its message and exit code; nothing is left behind.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::process::Output;

// `iogauge fio ARGS…` in a directory.
use common::iogauge_fio as iogauge;

fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr: {}",
        o.status.code(),
        stderr(o)
    );
}

const ETCD: [&str; 7] = [
    "--rw=write",
    "--ioengine=sync",
    "--fdatasync=1",
    "--directory=test-data",
    "--size=2m",
    "--bs=2300",
    "--name=mytest",
];

#[test]
fn etcd_recipe_normal_output_reads_like_fio() {
    let d = scratch();
    std::fs::create_dir(d.path().join("test-data")).unwrap();
    let o = iogauge(&ETCD, d.path());
    assert_ok(&o);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("mytest: (g=0): rw=write, bs=(R) 2300B-2300B, (W) 2300B-2300B, (T) 2300B-2300B, ioengine=sync, iodepth=1"),
        "{out}"
    );
    assert!(
        out.contains("mytest: Laying out IO file (1 file / 2MiB)"),
        "{out}"
    );
    assert!(
        out.contains("mytest: (groupid=0, jobs=1): err= 0: pid="),
        "{out}"
    );
    assert!(out.contains("  write: IOPS="), "{out}");
    assert!(
        out.contains("  fsync/fdatasync/sync_file_range:\n    sync ("),
        "{out}"
    );
    assert!(out.contains("    sync percentiles ("), "{out}");
    assert!(
        out.contains("     issued rwts: total=0,911,0,911 short=0,0,0,0 dropped=0,0,0,0"),
        "{out}"
    );
    assert!(out.contains("  IO depths    : 1=100.0%"), "{out}");
    assert!(
        out.contains("Run status group 0 (all jobs):\n  WRITE: bw="),
        "{out}"
    );
    assert!(out.contains("io=2046KiB (2095kB)"), "{out}");
    // Nothing on stderr without a terminal, and no file left behind.
    assert_eq!(stderr(&o), "");
    assert!(files_in(&d.path().join("test-data")).is_empty());
}

#[test]
fn etcd_recipe_json_is_one_document_with_the_sync_p99() {
    let d = scratch();
    std::fs::create_dir(d.path().join("test-data")).unwrap();
    let mut args = ETCD.to_vec();
    args.push("--output-format=json");
    let o = iogauge(&args, d.path());
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("stdout is exactly one JSON document");
    let sync = &v["jobs"][0]["sync"];
    assert_eq!(sync["total_ios"], 911);
    let lat = &sync["lat_ns"];
    let p99 = lat["percentile"]["99.000000"].as_u64().expect("sync p99");
    let (min, max) = (lat["min"].as_u64().unwrap(), lat["max"].as_u64().unwrap());
    assert!(min <= p99 && p99 <= max, "{min} <= {p99} <= {max}");
    assert_eq!(lat["N"], 911);
    assert_eq!(lat["iogauge"]["percentile_method"], "exact");
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 911);
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 911 * 2300);
    assert_eq!(v["jobs"][0]["read"]["short_ios"], 0);
    // As in fio, options before --name are global.
    assert_eq!(v["global options"]["bs"], "2300");
    assert_eq!(v["jobs"][0]["job options"]["name"], "mytest");
}

#[test]
fn json_plus_adds_bins_and_terse_is_version_3() {
    let d = scratch();
    let o = iogauge(
        &[
            "--name=n",
            "--ioengine=null",
            "--size=16m",
            "--output-format=json+,terse",
        ],
        d.path(),
    );
    assert_ok(&o);
    let out = stdout(&o);
    // json+ first, then the terse line.
    let split = out.rfind("\n3;").expect("terse line after the JSON") + 1;
    let v: Value = serde_json::from_str(&out[..split]).expect("json+ document");
    let bins = v["jobs"][0]["read"]["clat_ns"]["bins"]
        .as_object()
        .expect("bins");
    let total: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(total, 4096);
    let terse = out[split..].trim_end();
    let fields: Vec<&str> = terse.split(';').collect();
    assert_eq!(fields[0], "3");
    assert_eq!(fields[2], "n");
    // Read: KiB total, bandwidth, IOPS, runtime.
    assert_eq!(fields[5], "16384");
}

#[test]
fn seed_002_null_engine_time_based() {
    let d = scratch();
    let o = iogauge(
        &[
            "--name=test",
            "--ioengine=null",
            "--filesize=1G",
            "--time_based",
            "--runtime=1s",
        ],
        d.path(),
    );
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains("test: (g=0): rw=read, bs=(R) 4096B-4096B"),
        "{out}"
    );
    assert!(out.contains("  read: IOPS="), "{out}");
    // The runtime is the job's second, not the process's: it ends at the first completion past
    // the deadline, so only a worker descheduled at that moment (a loaded machine) adds a few ms.
    let ms: u64 = out
        .split("/")
        .find_map(|p| p.split_once("msec)").and_then(|(n, _)| n.parse().ok()))
        .expect("a runtime in msec");
    assert!((1000..=1020).contains(&ms), "{out}");
    assert!(out.contains("   bw (  "), "{out}");
    // fio 3.33 takes one sample in 1 s at 500 ms: the one at 1000 ms falls after the job ended.
    assert!(out.contains(", samples=1\n"), "{out}");
    assert!(files_in(d.path()).is_empty());
}

#[test]
fn seed_001_job_file_runs_with_gtod_reduce() {
    let d = scratch();
    let job = d.path().join("fio.job");
    // Seed 001's job file with size and times lowered for a test.
    std::fs::write(
        &job,
        "[global]\nrandrepeat=0\nverify=0\ndirect=1\ngtod_reduce=1\ntime_based\nramp_time=1s\nruntime=2s\nsize=16m\n\n[sequential-write-iops]\nname=sequential_write_iops\nioengine=sync\nfdatasync=1\nreadwrite=write\niodepth=1\nbs=4k\n",
    )
    .unwrap();
    let scratch = d.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let o = iogauge(
        &[
            "fio.job",
            "--eta=never",
            &format!("--directory={}", scratch.display()),
        ],
        d.path(),
    );
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains("sequential_write_iops: (g=0): rw=write, bs=(R) 4096B-4096B"),
        "{out}"
    );
    assert!(
        out.contains("sequential_write_iops: (groupid=0, jobs=1)"),
        "{out}"
    );
    assert!(out.contains("  write: IOPS="), "{out}");
    assert!(out.contains("not measured (gtod_reduce=1)"), "{out}");
    assert!(
        !out.contains("clat ("),
        "latency printed despite gtod_reduce: {out}"
    );
    assert!(files_in(&scratch).is_empty());
}

#[test]
fn output_file_gets_the_report_and_stdout_stays_empty() {
    let d = scratch();
    let o = iogauge(
        &[
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--output=res.json",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_ok(&o);
    assert_eq!(stdout(&o), "");
    let v: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("res.json")).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 256);
}

#[test]
fn eta_always_draws_progress_on_stderr_only() {
    let d = scratch();
    let o = iogauge(
        &[
            "--name=n",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=2",
            "--eta=always",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_ok(&o);
    assert!(stderr(&o).contains("Jobs: 1 [R]"), "{}", stderr(&o));
    let _: Value = serde_json::from_slice(&o.stdout).expect("stdout stays pure JSON");
}

#[test]
fn keep_files_and_unlink_0_keep_the_files() {
    for flag in ["--keep-files", "--unlink=0"] {
        let d = scratch();
        let o = iogauge(&["--name=k", "--rw=write", "--size=1m", flag], d.path());
        assert_ok(&o);
        assert_eq!(files_in(d.path()), vec!["k.0.0".to_string()], "{flag}");
        // Kept on purpose, so not called a killed run's leftover next time.
        let o = iogauge(&["--name=k", "--rw=write", "--size=1m"], d.path());
        assert!(
            stderr(&o).contains("or iogauge --keep-files left for job 'k'"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn existing_file_is_refused_with_exit_2_and_kept() {
    let d = scratch();
    std::fs::write(d.path().join("w.0.0"), b"precious").unwrap();
    let o = iogauge(&["--name=w", "--rw=write", "--size=1m"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "iogauge fio: refusing to write into 'w.0.0': it looks like a data file that fio (which keeps its files) or iogauge --keep-files left for job 'w'; remove it, or pass --allow-overwrite to let iogauge lay it out anew"
    );
    assert_eq!(std::fs::read(d.path().join("w.0.0")).unwrap(), b"precious");
    std::fs::write(d.path().join("data.db"), b"precious").unwrap();
    let o = iogauge(
        &["--name=w", "--rw=write", "--size=1m", "--filename=data.db"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "iogauge fio: refusing to write into existing file 'data.db', which iogauge did not create; remove it, choose another --directory/--filename, or pass --allow-overwrite"
    );
    assert_eq!(
        std::fs::read(d.path().join("data.db")).unwrap(),
        b"precious"
    );
    // A missing directory is bad input too, as in check.
    let o = iogauge(
        &["--name=w", "--size=1m", "--directory=/nonexistent-dir"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "iogauge fio: directory '/nonexistent-dir' does not exist; create it first or choose another --directory"
    );
    // /proc is not storage.
    let o = iogauge(&["--name=w", "--size=1m", "--directory=/proc"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "iogauge fio: '/proc' is on proc, a pseudo filesystem the kernel generates, not storage; choose a --directory on a real filesystem"
    );
}

#[test]
fn sigterm_stops_the_run_and_removes_files() {
    let d = scratch();
    let child = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=s",
            "--rw=write",
            "--size=4m",
            "--time_based",
            "--runtime=60",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the file exists (laid out), then interrupt.
    wait_for_file(&d.path().join("s.0.0"));
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: plain kill(2) on our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("interrupted"), "{}", stderr(&o));
    assert!(
        files_in(d.path()).is_empty(),
        "left: {:?}",
        files_in(d.path())
    );
}

#[test]
fn usage_errors_exit_2_with_one_line_naming_the_input() {
    let d = scratch();
    for (args, msg) in [
        (
            vec!["--name=t", "--size=1m", "--hostname=x"],
            "iogauge fio: option 'hostname' cannot work in iogauge: it belongs to fio's network engines; iogauge measures local files and block devices",
        ),
        (
            vec!["--name=t", "--size=1m", "--runtiem=10"],
            "iogauge fio: unknown option 'runtiem'; did you mean 'runtime'?",
        ),
        (
            vec!["--name=t", "--ioengine=splice"],
            "iogauge fio: --ioengine=splice: ioengine 'splice' is not supported by iogauge yet",
        ),
        (vec!["--name=t", "--direct=true"], "iogauge fio: --direct=true: expected 0 or 1"),
        (
            vec!["missing.fio"],
            "iogauge fio: cannot read job file 'missing.fio': No such file or directory (os error 2); \
             check the path (job files are read relative to the current directory)",
        ),
    ] {
        let o = iogauge(&args, d.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o), format!("{msg}\n"), "{args:?}");
        assert_eq!(stdout(&o), "");
    }
    assert!(files_in(d.path()).is_empty());
}

#[test]
fn job_file_on_stdin_with_groups_and_command_line_globals() {
    use std::io::Write;
    let d = scratch();
    let mut child = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["fio", "--size=1m", "--output-format=json", "-"])
        .current_dir(d.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"[global]\nbs=8k ; inline comment\n[w]\nrw=write\nnumjobs=2\n[r]\nstonewall\nrw=randread\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    let groups: Vec<u64> = jobs
        .iter()
        .map(|j| j["groupid"].as_u64().unwrap())
        .collect();
    assert_eq!(groups, vec![0, 0, 1]);
    // 1 MiB in 8 KiB blocks per job.
    assert_eq!(jobs[0]["write"]["total_ios"], 128);
    assert_eq!(jobs[2]["read"]["total_ios"], 128);
    assert_eq!(v["global options"]["size"], "1m");
    assert_eq!(v["global options"]["bs"], "8k");
    assert!(files_in(d.path()).is_empty());
}

#[test]
fn seed_003_gitlab_recipe_runs_unchanged_with_a_smaller_size() {
    let d = scratch();
    let file = d.path().join("testfile");
    let file_arg = format!("--filename={}", file.display());
    let o = iogauge(
        &[
            "--randrepeat=1",
            "--ioengine=libaio",
            "--direct=1",
            "--gtod_reduce=1",
            "--name=test",
            "--bs=4k",
            "--iodepth=64",
            "--readwrite=randrw",
            "--rwmixread=75",
            "--size=16m",
            &file_arg,
        ],
        d.path(),
    );
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.starts_with("test: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=64\n"),
        "{out}"
    );
    assert!(out.contains("  read: IOPS="), "{out}");
    assert!(out.contains("  write: IOPS="), "{out}");
    assert!(out.contains("not measured (gtod_reduce=1)"), "{out}");
    assert!(!out.contains("clat ("), "{out}");
    // 16 MiB in 4 KiB blocks, split between reads and writes.
    let issued = out
        .lines()
        .find(|l| l.contains("issued rwts: total="))
        .unwrap();
    let totals: Vec<u64> = issued
        .split("total=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(totals[0] + totals[1], 4096, "{issued}");
    // The queue is kept full: almost every I/O is issued at depth 64.
    let depths = out
        .lines()
        .find(|l| l.starts_with("  IO depths    :"))
        .unwrap();
    assert!(depths.contains(">=64=9"), "{depths}");
    assert!(!file.exists());
}

/// iodepth × bs beyond memory is refused up front (exit 2), not an allocation abort that would
/// skip the cleanup.
#[test]
fn buffers_that_cannot_fit_in_memory_are_bad_input() {
    let d = scratch();
    let o = iogauge(
        &[
            "--name=huge",
            "--ioengine=libaio",
            "--iodepth=4096",
            "--bs=1g",
            "--size=1g",
            "--direct=1",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(
            "iogauge fio: job 'huge': 4096 I/O in flight × 1073741824 bytes per block"
        ),
        "{}",
        stderr(&o)
    );
    assert!(files_in(d.path()).is_empty());
}

// --- diagnostics sink ---

/// A line a run raises while fio's progress line is on clears that line first, so that the two
/// never share a line on the terminal; without progress the line is as it always was.
#[test]
fn a_run_line_clears_the_progress_line_first() {
    let d = scratch();
    let args = |eta: &str| {
        [
            "--allow-overwrite",
            "--name=dump",
            "--filename=/dev/full",
            "--rw=write",
            "--bs=4k",
            "--size=8k",
            "--continue_on_error=all",
            "--ignore_error=,ENOSPC",
            "--error_dump=1",
            "--output-format=json",
        ]
        .into_iter()
        .chain(std::iter::once(eta))
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let line =
        "iogauge fio: io_u error on file /dev/full: No space left on device: write offset=0, \
                buflen=4096\n";
    let run = |eta: &str| {
        let a = args(eta);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        iogauge(&a, d.path())
    };
    let o = run("--eta=always");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("\r\x1b[K{line}")),
        "{:?}",
        stderr(&o)
    );
    let o = run("--eta=never");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).starts_with(line), "{:?}", stderr(&o));
}
