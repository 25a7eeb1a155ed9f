//! The fio translator end to end: arguments and job files in, RunSpec or exact error out.

use super::*;
use crate::model::{RwKind, SizeSpec};
use std::time::Duration;

fn args(s: &[&str]) -> Vec<String> {
    s.iter().map(|a| a.to_string()).collect()
}

fn env(k: &str) -> Option<String> {
    (k == "SCRATCH").then(|| "/scratch/node1".to_string())
}

fn run_spec(a: &[&str], stdin: &str) -> Result<RunSpec, String> {
    run_and_output(a, stdin).map(|(s, _)| s)
}

/// The run and how it is printed.
fn run_and_output(a: &[&str], stdin: &str) -> Result<(RunSpec, FioOutput), String> {
    match parse_fio_args(&args(a), &env, &mut stdin.as_bytes()) {
        Ok(FioCommand::Run(s, o)) => Ok((s, o)),
        Ok(other) => panic!("not a run: {other:?}"),
        Err(e) => Err(e.0),
    }
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_etcd_recipe_with_the_name_last() {
    let (s, out) = run_and_output(
        &[
            "--rw=write",
            "--ioengine=sync",
            "--fdatasync=1",
            "--directory=test-data",
            "--size=22m",
            "--bs=2300",
            "--name=mytest",
        ],
        "",
    )
    .unwrap();
    assert_eq!(s.jobs.len(), 1);
    let j = &s.jobs[0];
    assert_eq!(j.name, "mytest");
    assert_eq!(j.rw.kind, RwKind::Write);
    assert_eq!(j.bs, [2300; 3]);
    assert_eq!(j.size, Some(SizeSpec::Bytes(22 << 20)));
    // fio's JSON puts options before --name under "global options", the name under "job options".
    assert_eq!(j.options, pairs(&[("name", "mytest")]));
    assert_eq!(s.global_options[5], ("bs".to_string(), "2300".to_string()));
    assert_eq!(out.formats, vec![OutputFormat::Normal]);
    assert!(out.warnings.is_empty());
}

#[test]
fn each_name_starts_a_job_that_inherits_only_the_globals() {
    let s = run_spec(
        &[
            "--bs=8k",
            "--name=a",
            "--rw=randread",
            "--size=1m",
            "--name=b",
            "--size=2m",
            "--stonewall",
        ],
        "",
    )
    .unwrap();
    let (a, b) = (&s.jobs[0], &s.jobs[1]);
    assert_eq!((a.bs[0], b.bs[0]), (8192, 8192));
    assert!(a.rw.random && !b.rw.random, "rw=randread leaked into job b");
    assert_eq!(b.size, Some(SizeSpec::Bytes(2 << 20)));
    assert!(b.stonewall && !a.stonewall);
    assert_eq!(
        b.options,
        pairs(&[("name", "b"), ("size", "2m"), ("stonewall", "")])
    );
}

/// Seed 001's job file, with the command line's `--directory` applying to it.
#[test]
fn seed_001_job_file_with_command_line_globals() {
    let file =
        "[global]\nrandrepeat=0\nverify=0\ndirect=1\ngtod_reduce=1\ntime_based\nramp_time=2s\n\
                runtime=60s\nsize=10G\n\n[sequential-write-iops]\nname=sequential_write_iops\n\
                ioengine=sync\nfdatasync=1\nreadwrite=write\niodepth=1\nbs=4k\n";
    let (s, out) = run_and_output(&["-", "--eta=never", "--directory=/scratch/h1"], file).unwrap();
    let j = &s.jobs[0];
    assert_eq!(j.name, "sequential_write_iops");
    assert_eq!(
        j.directory.as_deref(),
        Some(std::path::Path::new("/scratch/h1"))
    );
    assert!(j.direct && j.gtod_reduce && j.time_based && !j.randrepeat);
    assert_eq!(j.ramp_time, Duration::from_secs(2));
    assert_eq!(j.runtime, Some(Duration::from_secs(60)));
    assert_eq!(j.size, Some(SizeSpec::Bytes(10 << 30)));
    assert_eq!(j.fdatasync, 1);
    assert_eq!(out.eta, Eta::Never);
    assert_eq!(
        s.global_options[0],
        ("directory".to_string(), "/scratch/h1".to_string())
    );
    assert_eq!(
        s.global_options[5],
        ("time_based".to_string(), "".to_string())
    );
    assert_eq!(
        j.options[0],
        ("name".to_string(), "sequential_write_iops".to_string())
    );
}

#[test]
fn a_later_global_section_applies_only_to_later_jobs() {
    let file = "[global]\nbs=4k\n[a]\n[global]\nbs=8k\n[b]\nbs=16k\n[c]\n";
    let s = run_spec(&["-"], file).unwrap();
    let bs: Vec<u64> = s.jobs.iter().map(|j| j.bs[0]).collect();
    assert_eq!(bs, vec![4096, 16384, 8192]);
    let names: Vec<&str> = s.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, vec!["a", "b", "c"]);
}

#[test]
fn environment_variables_and_sections() {
    let file = "[global]\ndirectory=${SCRATCH}\nsize=1m\n[one]\n[two]\nrw=write\n";
    let s = run_spec(&["--section=two", "-"], file).unwrap();
    assert_eq!(s.jobs.len(), 1);
    assert_eq!(s.jobs[0].name, "two");
    assert_eq!(
        s.jobs[0].directory.as_deref(),
        Some(std::path::Path::new("/scratch/node1"))
    );
    assert_eq!(
        run_spec(&["--section=three", "-"], file).unwrap_err(),
        "--section=three: no such section in the job files"
    );
}

#[test]
fn unsupported_and_misspelt_options_are_refused_by_name() {
    let err = |a: &[&str]| run_spec(a, "").unwrap_err();
    assert!(err(&["--name=t", "--profile=tiobench"])
        .starts_with("option 'profile' cannot work in iogauge: fio's built-in profiles"));
    assert_eq!(
        err(&["--name=t", "--blocksise=4k"]),
        "unknown option 'blocksise'; did you mean 'blocksize'?"
    );
    assert_eq!(
        err(&["--name=t", "--zzzzzzzzzzzz=1"]),
        "unknown option 'zzzzzzzzzzzz'; run 'iogauge fio --help' for the options iogauge supports"
    );
    assert_eq!(
        err(&["--name=t", "--bs=k4"]),
        "--bs=k4: expected a size such as 4096, 4k, 64KiB or 1g"
    );
    assert_eq!(
        err(&["--direct=true", "--name=t"]),
        "--direct=true: expected 0 or 1"
    );
    // A bad global is caught even when no job would use it.
    assert_eq!(
        err(&["--ioengine=splice"]),
        "--ioengine=splice: ioengine 'splice' is not supported by iogauge yet"
    );
    assert_eq!(
        err(&["--name=t", "--fixedbufs"]),
        "job 't': fixedbufs is an io_uring option, but ioengine=psync; set ioengine=io_uring"
    );
    assert_eq!(
        err(&["--size=1m"]),
        "no jobs defined: give a job file or start a job with --name=NAME (options before the first \
         --name apply to every job)"
    );
    assert_eq!(
        err(&["--name="]),
        "--name= needs a job name, e.g. --name=test"
    );
    assert!(run_spec(&["-"], "[j]\nprofile=tiobench\n")
        .unwrap_err()
        .starts_with(
            "<stdin>:2: option 'profile' cannot work in iogauge: fio's built-in profiles"
        ));
    assert_eq!(
        run_spec(&["-"], "[j]\nrw=trim\nioengine=filestat\n").unwrap_err(),
        "job 'j': rw=trim with ioengine=filestat is not supported by iogauge yet; trims run on \
         the data engines (psync, sync, vsync, pvsync, pvsync2, mmap, falloc, null, libaio, \
         io_uring, posixaio)"
    );
}

#[test]
fn queue_options_reach_the_job() {
    let (s, out) = run_and_output(
        &[
            "--name=q",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--iodepth_batch=8",
            "--iodepth_batch_complete=4",
            "--iodepth_batch_complete_max=16",
            "--iodepth_low=16",
            "--fixedbufs",
            "--registerfiles=1",
            "--sqthread_poll",
            "--direct=1",
            "--hipri",
            "--size=1m",
        ],
        "",
    )
    .unwrap();
    let j = &s.jobs[0];
    assert_eq!(j.ioengine, IoEngine::IoUring);
    assert_eq!(
        (
            j.iodepth,
            j.iodepth_batch_submit,
            j.iodepth_batch_complete_min
        ),
        (32, 8, 4)
    );
    assert_eq!((j.iodepth_batch_complete_max, j.iodepth_low), (16, 16));
    assert!(j.fixedbufs && j.registerfiles && j.sqthread_poll && j.hipri);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(
        run_spec(
            &["--name=q", "--ioengine=io_uring", "--hipri", "--size=1m"],
            ""
        )
        .unwrap_err(),
        "job 'q': hipri (polled I/O) needs direct=1"
    );
    let s = run_spec(
        &["--name=l", "--ioengine=libaio", "--iodepth=64", "--size=1m"],
        "",
    )
    .unwrap();
    assert_eq!(s.jobs[0].ioengine, IoEngine::Libaio);
}

#[test]
fn no_effect_options_are_said_not_ignored() {
    let (_, out) = run_and_output(&["--name=t", "--iodepth=64", "--size=1m"], "").unwrap();
    assert_eq!(
        out.warnings,
        vec!["job 't': iodepth=64 has no effect with the synchronous engine 'psync' (one I/O at a time)"]
    );
}

#[test]
fn program_flags_reach_the_run_spec() {
    let (s, out) = run_and_output(
        &[
            "--name=t",
            "--size=1m",
            "--output-format=json+,terse",
            "--output=r.txt",
            "--keep-files",
            "--allow-overwrite",
            "--parse-only",
            "--eta=always",
        ],
        "",
    )
    .unwrap();
    assert_eq!(
        out.formats,
        vec![OutputFormat::JsonPlus, OutputFormat::Terse]
    );
    assert_eq!(out.path.as_deref(), Some(std::path::Path::new("r.txt")));
    assert!(s.keep_files && s.allow_overwrite && out.parse_only);
    assert_eq!(out.eta, Eta::Always);
}

#[test]
fn version_and_help_win_over_jobs() {
    let p = |a: &[&str]| parse_fio_args(&args(a), &env, &mut std::io::empty()).unwrap();
    assert!(matches!(p(&["--version"]), FioCommand::Version));
    assert!(
        matches!(p(&["--name=t", "--help"]), FioCommand::Help(h) if h.starts_with("Usage: iogauge fio"))
    );
    assert!(matches!(p(&["--cmdhelp=bs"]), FioCommand::Help(h) if h.contains("Block size")));
}

#[test]
fn description_and_rename() {
    let s = run_spec(
        &["-"],
        "[sec]\nname=renamed\ndescription=an etcd-like test\nsize=1m\n",
    )
    .unwrap();
    assert_eq!(s.jobs[0].name, "renamed");
    assert_eq!(s.jobs[0].description, "an etcd-like test");
}

#[test]
fn what_cannot_work_here_is_refused_with_the_reason() {
    let err = |a: &[&str]| run_spec(a, "").unwrap_err();
    assert_eq!(
        err(&["--name=t", "--ioengine=net"]),
        "--ioengine=net: ioengine 'net' cannot work in iogauge: it belongs to fio's network \
         engines; iogauge measures local files and block devices"
    );
    assert_eq!(
        err(&["--name=t", "--ioengine=io_uring_cmd"]),
        "--ioengine=io_uring_cmd: ioengine 'io_uring_cmd' cannot work in iogauge: it sends SCSI \
         or NVMe commands past the block layer (passthrough), which iogauge does not do"
    );
    assert_eq!(
        run_spec(&["-"], "[j]\nmax_open_zones=4\n").unwrap_err(),
        "<stdin>:2: option 'max_open_zones' cannot work in iogauge: zoned block devices \
         (zonemode=zbd) are not supported; zonemode=strided works on ordinary files"
    );
}

#[test]
fn iogauge_caps_shrink_a_job_file_s_size_and_times_and_say_so() {
    let job = "[global]\ntime_based\nramp_time=2s\nruntime=60s\nsize=10G\n[w]\nrw=write\n";
    let (s, o) = run_and_output(
        &["--iogauge-max-size=1m", "--iogauge-max-runtime=1s", "-"],
        job,
    )
    .unwrap();
    let j = &s.jobs[0];
    assert_eq!(j.size, Some(SizeSpec::Bytes(1 << 20)));
    assert_eq!(j.runtime, Some(Duration::from_secs(1)));
    assert_eq!(j.ramp_time, Duration::from_secs(1));
    assert!(o.warnings.contains(
        &"job 'w': size 10737418240 capped to 1048576 bytes by --iogauge-max-size".into()
    ));
    assert!(run_spec(&["--iogauge-max-size=lots", "-"], job).is_err());
}
