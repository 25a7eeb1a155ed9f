//! Issue 21, the input side: profiles and troubleshoot specs are data (nothing they say runs a
//! command, touches a path outside the test directory or changes the host), every input is read
//! within a size cap, names are bounded, jobs are capped like fio's, signals end the process
//! while input is read, and input at fault exits 2. Each case was reproduced on the code before
//! (a command run, minutes of CPU, gigabytes of memory, a hang, or exit 1/3).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_iogauge");

/// The address space an iogauge under test may take: refusing bad input needs a few tens of
/// megabytes; the old code took gigabytes (and an allocation beyond this aborts it, which the
/// tests see as a missing exit code).
const MEMORY_LIMIT: u64 = 1 << 30;

/// What a finished iogauge did: exit code, output and wall time.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `c` to the end under [`MEMORY_LIMIT`], timing it.
fn measure(mut c: Command) -> Ran {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit(2) is async-signal-safe, and the closure touches nothing else.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: MEMORY_LIMIT,
                rlim_max: MEMORY_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let t0 = Instant::now();
    let o = c.output().unwrap();
    Ran {
        code: o.status.code(),
        stdout: text(&o.stdout),
        stderr: text(&o.stderr),
        took: t0.elapsed(),
    }
}

fn iogauge(args: &[&str], cwd: &Path) -> Command {
    let mut c = cmd(BIN);
    c.args(args).current_dir(cwd).stdin(Stdio::null());
    c
}

/// Bad input: exit 2, this exact message, quickly (and within [`MEMORY_LIMIT`]).
fn refused_fast(r: &Ran, err: &str) {
    assert_eq!(r.stderr, format!("{err}\n"));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
}

// ---- 1. Profiles and troubleshoot specs are data ----

fn profile(workload: &str) -> String {
    format!(
        "name: x\ntitle: t\nworkload: [rw=write, fdatasync=1, bs=4k, size=4m, {workload}]\n\
         metrics:\n  - {{key: sync_p99, label: l, better: lower, pass: 10ms, source: s}}\n"
    )
}

#[test]
fn a_profile_that_runs_a_command_is_refused_and_nothing_runs() {
    let d = scratch();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(d.path().join("p.yaml"), profile("exec_prerun=touch PWNED")).unwrap();
    let r = measure(iogauge(
        &["check", "./p.yaml", "--dir", dir.to_str().unwrap()],
        d.path(),
    ));
    refused_fast(
        &r,
        "iogauge check: profile './p.yaml': workload: 'exec_prerun=touch PWNED': a profile may \
         not set exec_prerun: it executes a command",
    );
    // Neither the command's file nor fio's prerun output exists, anywhere.
    assert_eq!(sorted(files_in(d.path())), ["data", "p.yaml"]);
    assert_empty(&dir);
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn every_option_that_executes_escapes_the_directory_or_changes_the_host_is_refused() {
    const EXEC: &str = "it executes a command";
    const OUT: &str = "it reads or writes files outside the test directory";
    const PLACE: &str = "it reads or writes files outside the test directory; where the test \
                         file goes is chosen by iogauge check (--dir)";
    const HOST: &str = "it changes host state";
    let cases: &[(&str, String)] = &[
        ("exec_prerun=touch PWNED", format!("exec_prerun: {EXEC}")),
        ("exec_postrun=touch PWNED", format!("exec_postrun: {EXEC}")),
        ("ioengine=exec", format!("ioengine=exec: {EXEC}")),
        ("program=/bin/touch", format!("program: {EXEC}")),
        ("arguments=PWNED", format!("arguments: {EXEC}")),
        ("include /etc/passwd", format!("include: {OUT}")),
        ("filename=/etc/shadow", format!("filename: {PLACE}")),
        (
            "filename_format=../$jobname",
            format!("filename_format: {PLACE}"),
        ),
        ("directory=/root", format!("directory: {PLACE}")),
        ("opendir=/etc", format!("opendir: {PLACE}")),
        ("write_bw_log=/etc/x", format!("write_bw_log: {OUT}")),
        ("write_lat_log=/etc/x", format!("write_lat_log: {OUT}")),
        ("write_iops_log=/etc/x", format!("write_iops_log: {OUT}")),
        ("write_hist_log=/etc/x", format!("write_hist_log: {OUT}")),
        ("write_iolog=/etc/x", format!("write_iolog: {OUT}")),
        ("read_iolog=/etc/x", format!("read_iolog: {OUT}")),
        ("verify_dump=1", format!("verify_dump: {OUT}")),
        (
            "allow_mounted_write=1",
            format!("allow_mounted_write: {OUT}"),
        ),
        ("cgroup=x", format!("cgroup: {HOST}")),
        ("cgroup_weight=500", format!("cgroup_weight: {HOST}")),
        ("cgroup_nodelete=1", format!("cgroup_nodelete: {HOST}")),
        ("uid=0", format!("uid: {HOST}")),
        ("gid=0", format!("gid: {HOST}")),
        ("ioscheduler=none", format!("ioscheduler: {HOST}")),
        ("lockmem=1g", format!("lockmem: {HOST}")),
        ("fill_device=1", format!("fill_device: {HOST}")),
        // An alias is refused under its option's name.
        ("fill_fs=1", format!("fill_device: {HOST}")),
        (
            "unlink=0",
            "unlink=0: it would leave the test file behind (iogauge check --keep-files keeps it \
             when you ask)"
                .into(),
        ),
        (
            "ioengine=filedelete",
            "ioengine=filedelete: profiles do plain file I/O in the test directory, with sync, \
             psync, vsync, pvsync, pvsync2, mmap, libaio, io_uring, posixaio"
                .into(),
        ),
        (
            "ioengine=null",
            "ioengine=null: profiles do plain file I/O in the test directory, with sync, psync, \
             vsync, pvsync, pvsync2, mmap, libaio, io_uring, posixaio"
                .into(),
        ),
        // Not harmful, but not reviewed: refused too.
        (
            "write_iops_log_not_an_option=1",
            String::new(), // unknown: the option parser's message, checked below
        ),
        (
            "stat_type=lstat",
            "stat_type: it is not one of the options profiles may set (docs/PROFILES.md lists \
             them)"
                .into(),
        ),
    ];
    let d = scratch();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    for (opt, why) in cases {
        std::fs::write(d.path().join("p.yaml"), profile(&format!("'{opt}'"))).unwrap();
        let r = measure(iogauge(
            &["check", "./p.yaml", "--dir", dir.to_str().unwrap()],
            d.path(),
        ));
        let want = if why.is_empty() {
            format!(
                "iogauge check: profile './p.yaml': profile 'x': unknown option '{}'; run \
                 'iogauge fio --help' for the options iogauge supports",
                opt.split('=').next().unwrap()
            )
        } else {
            format!(
                "iogauge check: profile './p.yaml': workload: '{opt}': a profile may not set {why}"
            )
        };
        refused_fast(&r, &want);
        assert_empty(&dir);
        assert!(!d.path().join("PWNED").exists());
    }
    // The built-in profiles pass the same list (they are run by the other tests).
    let r = measure(iogauge(&["check", "--list"], d.path()));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn troubleshoot_collectors_other_than_filesystem_performance_never_run() {
    let d = scratch();
    let spec = "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: x\n\
        spec:\n  hostCollectors:\n\
        \x20   - run: {collectorName: r, command: touch, args: [PWNED-run]}\n\
        \x20   - exec: {collectorName: e, command: [touch, PWNED-exec]}\n\
        \x20   - copy: {collectorName: c, path: /etc/shadow}\n\
        \x20   - http: {collectorName: h, get: {url: 'http://127.0.0.1:9/'}}\n\
        \x20 collectors:\n\
        \x20   - run: {collectorName: r2, command: touch, args: [PWNED-run2]}\n\
        \x20   - exec: {collectorName: e2, command: [touch, PWNED-exec2]}\n\
        \x20   - copyFromHost: {collectorName: cfh, hostPath: /etc}\n";
    std::fs::write(d.path().join("s.yaml"), spec).unwrap();
    let r = measure(iogauge(&["preflight", "s.yaml", "-o", "out"], d.path()));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "iogauge preflight: skipped (iogauge runs filesystemPerformance only): \
         hostCollectors: run, hostCollectors: exec, hostCollectors: copy, hostCollectors: http, \
         collectors: run, collectors: exec, collectors: copyFromHost\n"
    );
    assert_eq!(r.stdout, "");
    // Nothing ran and nothing was written: only the spec is here.
    assert_eq!(files_in(d.path()), ["s.yaml"]);
}

#[test]
fn only_filesystem_performance_parameters_reach_a_job() {
    let d = scratch();
    let base =
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nspec:\n  hostCollectors:\n\
        \x20   - filesystemPerformance:\n        directory: bench\n        fileSize: 1Mi\n";
    for (extra, err) in [
        (
            "        exec_prerun: touch PWNED\n",
            "iogauge preflight: s.yaml (document 1): spec.hostCollectors[0].filesystemPerformance: \
             unknown key 'exec_prerun'; known keys: collectorName, exclude, directory, fileSize, \
             operationSize, operationSizeBytes, sync, datasync, runTime, timeout, \
             enableBackgroundIOPS, backgroundIOPSWarmupSeconds, backgroundWriteIOPS, \
             backgroundReadIOPS, backgroundWriteIOPSJobs, backgroundReadIOPSJobs",
        ),
        (
            "        fioArgs: [--exec_prerun=touch PWNED]\n",
            "iogauge preflight: s.yaml (document 1): spec.hostCollectors[0].filesystemPerformance: \
             unknown key 'fioArgs'; known keys: collectorName, exclude, directory, fileSize, \
             operationSize, operationSizeBytes, sync, datasync, runTime, timeout, \
             enableBackgroundIOPS, backgroundIOPSWarmupSeconds, backgroundWriteIOPS, \
             backgroundReadIOPS, backgroundWriteIOPSJobs, backgroundReadIOPSJobs",
        ),
        // 100000 background jobs were 100000 threads and 100 MiB files: capped like fio's jobs.
        (
            "        enableBackgroundIOPS: true\n        backgroundWriteIOPS: 100\n        \
             backgroundWriteIOPSJobs: 100000\n",
            "iogauge preflight: s.yaml (document 1): spec.hostCollectors[0].filesystemPerformance: \
             backgroundWriteIOPSJobs + backgroundReadIOPSJobs is 100000: at most 4095 background \
             jobs (fio's 4096 jobs, the measuring one included)",
        ),
    ] {
        std::fs::write(d.path().join("s.yaml"), format!("{base}{extra}")).unwrap();
        let r = measure(iogauge(&["preflight", "s.yaml", "-o", "out"], d.path()));
        refused_fast(&r, err);
        assert_eq!(files_in(d.path()), ["s.yaml"]);
    }
}

// ---- 2. Bounded inputs ----

#[test]
fn include_of_dev_zero_fails_fast_naming_the_limit() {
    let d = scratch();
    std::fs::write(d.path().join("j.fio"), "[a]\nsize=4k\ninclude /dev/zero\n").unwrap();
    let r = measure(iogauge(&["fio", "j.fio", "--parse-only"], d.path()));
    refused_fast(
        &r,
        "iogauge fio: j.fio:3: job file '/dev/zero': the job files of one run (with their \
         includes) may hold 16 MiB (16777216 bytes) in all, and this one goes beyond it; is it \
         the right file?",
    );
    // Many includes of a big file stop at the same budget, not after reading each one.
    let big = format!("[global]\n{}\n", "#".repeat(6 << 20));
    std::fs::write(d.path().join("big.fio"), big).unwrap();
    std::fs::write(
        d.path().join("many.fio"),
        "include big.fio\n".repeat(1000) + "[a]\nsize=4k\n",
    )
    .unwrap();
    let r = measure(iogauge(&["fio", "many.fio", "--parse-only"], d.path()));
    refused_fast(
        &r,
        "iogauge fio: many.fio:3: job file 'big.fio': the job files of one run (with their \
         includes) may hold 16 MiB (16777216 bytes) in all, and this one goes beyond it; is it \
         the right file?",
    );
}

#[test]
fn job_files_from_dev_zero_and_stdin_are_capped() {
    let d = scratch();
    let r = measure(iogauge(&["fio", "/dev/zero", "--parse-only"], d.path()));
    refused_fast(
        &r,
        "iogauge fio: job file '/dev/zero': the job files of one run (with their includes) may \
         hold 16 MiB (16777216 bytes) in all, and this one goes beyond it; is it the right file?",
    );
    let mut c = iogauge(&["fio", "-", "--parse-only"], d.path());
    c.stdin(std::fs::File::open("/dev/zero").unwrap());
    refused_fast(
        &measure(c),
        "iogauge fio: the job file from stdin: the job files of one run (with their includes) \
         may hold 16 MiB (16777216 bytes) in all, and this one goes beyond it; is it the right \
         file?",
    );
}

#[test]
fn profiles_and_specs_from_dev_zero_are_capped() {
    let d = scratch();
    refused_fast(
        &measure(iogauge(&["check", "/dev/zero", "--dir", "."], d.path())),
        "iogauge check: profile '/dev/zero' is larger than 1 MiB (1048576 bytes), the most \
         iogauge reads; is it the right file?",
    );
    refused_fast(
        &measure(iogauge(&["preflight", "/dev/zero"], d.path())),
        "iogauge preflight: spec '/dev/zero' is larger than 16 MiB (16777216 bytes), the most \
         iogauge reads; is it the right file?",
    );
    let mut c = iogauge(&["preflight", "-"], d.path());
    c.stdin(std::fs::File::open("/dev/zero").unwrap());
    refused_fast(
        &measure(c),
        "iogauge preflight: the spec from stdin is larger than 16 MiB (16777216 bytes), the most \
         iogauge reads; is it the right file?",
    );
    assert_eq!(files_in(d.path()), Vec::<String>::new());
}

#[test]
fn a_megabyte_option_name_is_refused_without_a_suggestion_search() {
    let d = scratch();
    // Took 63 s and 276 MB in the "did you mean" search.
    let name = "x".repeat(1 << 20);
    std::fs::write(d.path().join("j.fio"), format!("[a]\n{name}=1\n")).unwrap();
    let r = measure(iogauge(&["fio", "j.fio", "--parse-only"], d.path()));
    refused_fast(
        &r,
        &format!(
            "iogauge fio: j.fio:2: unknown option '{}… (1048576 bytes)': longer than 64 bytes, \
             and fio's option names are short; run 'iogauge fio --help' for the options iogauge \
             supports",
            "x".repeat(40)
        ),
    );
    // In a profile too (its options go through the same parser; a profile holds 1 MiB).
    let name = "x".repeat(512 << 10);
    std::fs::write(d.path().join("p.yaml"), profile(&format!("{name}=1"))).unwrap();
    let r = measure(iogauge(&["check", "./p.yaml", "--dir", "."], d.path()));
    refused_fast(
        &r,
        &format!(
            "iogauge check: profile './p.yaml': profile 'x': unknown option '{}… (524288 \
             bytes)': longer than 64 bytes, and fio's option names are short; run 'iogauge fio \
             --help' for the options iogauge supports",
            "x".repeat(40)
        ),
    );
}

#[test]
fn a_ten_megabyte_section_name_exits_2() {
    let d = scratch();
    let name = "s".repeat(10 << 20);
    std::fs::write(d.path().join("j.fio"), format!("[{name}]\nsize=4k\n")).unwrap();
    let r = measure(iogauge(&["fio", "j.fio"], d.path()));
    refused_fast(
        &r,
        &format!(
            "iogauge fio: j.fio:1: section name '{}… (10485760 bytes)' is longer than 255 bytes, \
             the most fio reads (it also names the job's files); use a shorter name",
            "s".repeat(40)
        ),
    );
    assert_eq!(files_in(d.path()), ["j.fio"]);
    // 255 is fine.
    let name = "s".repeat(255);
    std::fs::write(d.path().join("j.fio"), format!("[{name}]\nsize=4k\n")).unwrap();
    let r = measure(iogauge(&["fio", "j.fio", "--parse-only"], d.path()));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn too_many_option_lines_stop_at_the_limit() {
    let d = scratch();
    // 300k lines of 6 bytes: within the byte budget, beyond the line budget.
    let text = format!("[global]\n{}[a]\nsize=4k\n", "bs=4k\n".repeat(300_000));
    std::fs::write(d.path().join("j.fio"), text).unwrap();
    let r = measure(iogauge(&["fio", "j.fio", "--parse-only"], d.path()));
    refused_fast(
        &r,
        "iogauge fio: j.fio:262145: the job files of one run may hold at most 262144 sections, \
         options and includes in all (4096 jobs of 64 options); split the run",
    );
}

#[test]
fn a_job_named_after_the_file_name_keyword_does_not_hang() {
    let d = scratch();
    let r = measure(iogauge(
        &["fio", "--name=$jobname", "--size=4k", "--parse-only"],
        d.path(),
    ));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(5));
}

// ---- 3. Jobs capped like fio's, expansion linear ----

#[test]
fn numjobs_beyond_fios_limit_is_refused_at_once() {
    let d = scratch();
    // Spent minutes in a quadratic duplicate check, with SIGINT ignored.
    let r = measure(iogauge(
        &[
            "fio",
            "--name=a",
            "--numjobs=100000",
            "--size=4k",
            "--ioengine=null",
        ],
        d.path(),
    ));
    refused_fast(
        &r,
        "iogauge fio: --numjobs=100000: maximum number of jobs (4096) reached: fio runs at most \
         4096 jobs in all; lower numjobs",
    );
    assert!(r.took < Duration::from_secs(2), "took {:?}", r.took);
    // Over several jobs: counted as they are built.
    std::fs::write(
        d.path().join("j.fio"),
        "[global]\nnumjobs=4000\nsize=4k\n[a]\n[b]\n",
    )
    .unwrap();
    refused_fast(
        &measure(iogauge(&["fio", "j.fio", "--parse-only"], d.path())),
        "iogauge fio: maximum number of jobs (4096) reached: the jobs ask for 8000 in all \
         (numjobs copies counted), more than fio runs; lower numjobs or split the run",
    );
    // fio's limit itself is accepted.
    let r = measure(iogauge(
        &[
            "fio",
            "--name=a",
            "--numjobs=4096",
            "--size=4k",
            "--parse-only",
        ],
        d.path(),
    ));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(2), "took {:?}", r.took);
    assert_eq!(files_in(d.path()), ["j.fio"]);
}

#[test]
fn the_most_jobs_fio_runs_are_planned_in_linear_time() {
    let d = scratch();
    // 4096 instances with a file each: planned, checked for duplicates and safety, then refused
    // by the free space check (1 PiB each), before anything is written.
    let r = measure(iogauge(
        &[
            "fio",
            "--name=a",
            "--numjobs=4096",
            "--size=1p",
            "--ioengine=psync",
        ],
        d.path(),
    ));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.starts_with("iogauge fio: not enough free space"),
        "{}",
        r.stderr
    );
    assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    assert_empty(d.path());
}

// ---- 4. Signals honoured while input is read ----

fn handlers_installed(pid: u32) -> bool {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let caught = s
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .unwrap_or(0);
    let bit = |sig: i32| 1u64 << (sig - 1);
    caught & bit(libc::SIGINT) != 0 && caught & bit(libc::SIGTERM) != 0
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Starts `args` (stdin an open pipe that never gets data), waits until it blocks, signals it,
/// and checks that it ends within 2 s with exit 1 and the reason.
fn stops_on(args: &[&str], cwd: &Path, sig: i32) {
    let mut child = cmd(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !handlers_installed(child.id()) {
        assert!(t0.elapsed() < Duration::from_secs(10), "never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Long enough to be blocked in the read (the old code then ignored the signal for good).
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let sent = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > Duration::from_secs(2) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} still running 2 s after signal {sig}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let name = if sig == libc::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    assert_eq!(status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(
        err,
        format!("iogauge: interrupted by {name} before anything was created\n"),
        "{args:?}"
    );
    drop(child.stdin.take());
}

#[test]
fn signals_stop_every_blocking_input_read() {
    let d = scratch();
    let dir = d.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    for f in ["job.fio", "profile-fifo.yaml", "fifo.yaml"] {
        mkfifo(&d.path().join(f));
    }
    let data = dir.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["fio", "-"],
        &["fio", "job.fio"],
        &["check", "./profile-fifo.yaml", "--dir", data],
        &["preflight", "fifo.yaml"],
        &["preflight", "-"],
    ];
    std::thread::scope(|s| {
        for args in cases {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                let cwd = d.path();
                s.spawn(move || stops_on(args, cwd, sig));
            }
        }
    });
    assert_empty(&dir);
}

// ---- 5. Input at fault exits 2 ----

#[test]
fn a_slash_in_a_job_name_that_names_its_files_exits_2() {
    let d = scratch();
    let r = measure(iogauge(&["fio", "--name=a/b", "--size=4k"], d.path()));
    refused_fast(
        &r,
        "iogauge fio: job 'a/b': the job name names the job's files (a/b.0.0), so a '/' in it \
         would put them in another directory; use a name without '/', or set filename=",
    );
    assert_eq!(files_in(d.path()), Vec::<String>::new());
    // With filename= the name names no file: fine, as in fio.
    let r = measure(iogauge(
        &[
            "fio",
            "--name=a/b",
            "--filename=f",
            "--size=4k",
            "--parse-only",
        ],
        d.path(),
    ));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

#[test]
fn io_uring_deeper_than_the_kernel_allows_exits_2_before_allocating() {
    let d = scratch();
    // EINVAL from io_uring_setup after 261 MB of buffers, exit 1.
    let r = measure(iogauge(
        &[
            "fio",
            "--name=a",
            "--ioengine=io_uring",
            "--iodepth=65536",
            "--size=1m",
        ],
        d.path(),
    ));
    refused_fast(
        &r,
        "iogauge fio: job 'a': iodepth=65536: an io_uring queue holds at most 32768 entries (the \
         kernel's IORING_MAX_ENTRIES); use iodepth=32768 or less",
    );
    assert_eq!(files_in(d.path()), Vec::<String>::new());
}

#[test]
fn analyze_only_with_a_corrupt_result_file_exits_2_naming_it() {
    let d = scratch();
    let spec =
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nspec:\n  hostAnalyzers:\n\
        \x20   - filesystemPerformance:\n        collectorName: etcd-perf\n        outcomes:\n\
        \x20         - pass: {message: ok}\n";
    std::fs::write(d.path().join("s.yaml"), spec).unwrap();
    let res = d.path().join("out/host-collectors/filesystemPerformance");
    std::fs::create_dir_all(&res).unwrap();
    for (content, what) in [
        (
            "{\"Min\": 1",
            "not JSON: EOF while parsing an object at line 1 column 9",
        ),
        (
            "{\"Min\": 1}",
            "expected the number 'Max' (troubleshoot's result table)",
        ),
    ] {
        std::fs::write(res.join("etcd-perf.json"), content).unwrap();
        let r = measure(iogauge(
            &["preflight", "--analyze-only", "out", "s.yaml"],
            d.path(),
        ));
        refused_fast(
            &r,
            &format!(
                "iogauge preflight: --analyze-only out: result file \
                 'out/host-collectors/filesystemPerformance/etcd-perf.json': {what}; expected \
                 the result of collector 'etcd-perf' (troubleshoot's latency table or fio's JSON \
                 output)"
            ),
        );
        assert_eq!(r.stdout, "");
    }
}

#[test]
fn globals_applied_to_every_job_are_bounded() {
    let d = scratch();
    // 100000 globals before 1000 jobs: 100 million applications before (minutes), refused
    // at the third job now.
    let jobs: String = (0..1000).map(|i| format!("[j{i}]\n")).collect();
    let text = format!("[global]\n{}size=4k\n{jobs}", "bs=4k\n".repeat(100_000));
    std::fs::write(d.path().join("j.fio"), text).unwrap();
    let r = measure(iogauge(&["fio", "j.fio", "--parse-only"], d.path()));
    refused_fast(
        &r,
        "iogauge fio: the jobs apply more than 262144 options in all (each job its own and the \
         [global] ones in force); put fewer options in [global] or define fewer jobs",
    );
}

#[test]
fn environment_expansion_counts_against_the_job_text_limit() {
    let d = scratch();
    // 200000 references to a 1 KiB variable on one line: 200 MB once expanded.
    let line = "${BIG}".repeat(200_000);
    std::fs::write(d.path().join("j.fio"), format!("[a]\ndescription={line}\n")).unwrap();
    let mut c = iogauge(&["fio", "j.fio", "--parse-only"], d.path());
    c.env("BIG", "x".repeat(1024));
    refused_fast(
        &measure(c),
        "iogauge fio: j.fio:2: ${BIG} expanded, the job files of one run (with their includes) \
         hold more than 16 MiB (16777216 bytes) in all",
    );
}

#[test]
fn nrfiles_is_bounded_like_the_job_count() {
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=a",
            "--nrfiles=2000000",
            "--size=1g",
            "--parse-only",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "iogauge fio: --nrfiles=2000000: nrfiles=2000000 is more than iogauge plans per job \
         (1000000); use fewer, larger files\n"
    );
}
