//! The host group (cpus_allowed, cpumask, cpus_allowed_policy, nice, lockmem, exec_prerun,
//! exec_postrun, clocksource, mem/iomem, unique_filename): fixtures `tests/fixtures/fio/host-*.fio`
//! under fio and iogauge with equal counts and a superset of fio's JSON keys, and what each
//! option exists for, seen from /proc while the job runs. fio must be installed (with CI=true a
//! missing fio fails).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn fixture(name: &str, dir: &Path) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fio")
            .join(name),
    )
    .unwrap();
    let job = dir.join("job.fio");
    std::fs::write(&job, text.replace("@DIR@", dir.to_str().unwrap())).unwrap();
    job.to_str().unwrap().to_string()
}

/// total_ios and io_bytes of every job and direction.
fn counts(v: &Value) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for j in v["jobs"].as_array().unwrap() {
        for d in ["read", "write", "trim"] {
            let name = format!("{}/{d}", j["jobname"].as_str().unwrap());
            out.push((name, u(j, &[d, "total_ios"]), u(j, &[d, "io_bytes"])));
        }
    }
    out
}

#[test]
fn host_options_run_as_in_fio() {
    if !have_fio() {
        return;
    }
    let (fd, gd) = (scratch(), scratch());
    let f = run_json(
        "fio",
        &[],
        &[fixture("host-basic.fio", fd.path())],
        fd.path(),
    );
    let job = fixture("host-basic.fio", gd.path());
    let g = run_json(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        std::slice::from_ref(&job),
        gd.path(),
    );
    std::fs::remove_file(job).unwrap();
    assert_empty(gd.path());
    assert_keys_superset(&f, &g);
    assert_eq!(counts(&f), counts(&g));
    assert_eq!(g["jobs"].as_array().unwrap().len(), 3);
}

#[test]
fn exec_prerun_and_postrun_as_in_fio() {
    if !have_fio() {
        return;
    }
    let mut outputs = Vec::new();
    for program in ["fio", "iogauge"] {
        let d = scratch();
        let job = fixture("host-exec.fio", d.path());
        let out = cmd(if program == "fio" {
            "fio"
        } else {
            env!("CARGO_BIN_EXE_iogauge")
        })
        .args(if program == "fio" {
            vec![]
        } else {
            vec!["fio"]
        })
        .args([job.as_str(), "--output-format=json"])
        .current_dir(d.path())
        .output()
        .unwrap();
        assert!(out.status.success(), "{program}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        // fio prints its "Saving output" lines before the JSON on stdout; iogauge on stderr.
        let v: Value = serde_json::from_str(&stdout[stdout.find('{').unwrap()..]).unwrap();
        if program == "iogauge" {
            assert!(stdout.starts_with('{'), "iogauge's stdout is the JSON only");
            assert!(text(&out.stderr).contains("ran : Saving output of prerun in ran.prerun.txt"));
        }
        let read = |f: &str| std::fs::read_to_string(d.path().join(f)).ok();
        outputs.push((
            counts(&v),
            v["jobs"][1]["error"].as_u64(),
            read("ran.prerun.txt"),
            read("ran.postrun.txt"),
            read("skipped.prerun.txt"),
            read("skipped.postrun.txt"),
        ));
    }
    assert_eq!(outputs[0], outputs[1], "fio vs iogauge");
    let (c, err, pre, post, skipped_pre, skipped_post) = &outputs[1];
    assert_eq!(c[1].1, 16, "the job whose prerun succeeded wrote 16 blocks");
    assert_eq!(c[4].1, 0, "the job whose prerun failed did no I/O");
    assert_eq!(*err, Some(0));
    assert_eq!(pre.as_deref(), Some("before-ran\n"));
    assert_eq!(post.as_deref(), Some("after-ran\n"));
    assert_eq!(
        skipped_pre.as_deref(),
        Some(""),
        "only the last command is redirected (fio's shell line)"
    );
    assert_eq!(*skipped_post, None, "no postrun after a failed prerun");
}

/// A field of /proc/PID/task/TID/status.
fn status_field(task: &Path, key: &str) -> Option<String> {
    let s = std::fs::read_to_string(task.join("status")).ok()?;
    s.lines().find_map(|l| {
        l.strip_prefix(key)
            .map(|v| v.trim_start_matches(':').trim().to_string())
    })
}

#[test]
fn cpus_nice_and_lockmem_take_effect() {
    let ncpus = std::thread::available_parallelism().unwrap().get();
    let cpu = ncpus - 1;
    let d = scratch();
    let mut child = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=h",
            "--ioengine=null",
            "--size=1m",
            "--time_based",
            "--runtime=3",
        ])
        .arg(format!("--cpus_allowed={cpu}"))
        .args([
            "--nice=7",
            "--lockmem=4m",
            "--numjobs=2",
            "--output-format=terse",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let proc_dir = Path::new("/proc").join(child.id().to_string());
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut seen = Vec::new();
    while Instant::now() < deadline && seen.len() < 2 {
        seen.clear();
        for t in std::fs::read_dir(proc_dir.join("task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            if comm.trim().starts_with("h.") {
                let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
                // Field 19 of stat is the niceness (after the parenthesised name).
                let nice = stat
                    .rsplit(')')
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .nth(16)
                    .map(String::from);
                seen.push((status_field(&t.path(), "Cpus_allowed_list"), nice));
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let locked = status_field(&proc_dir, "VmLck");
    child.wait().unwrap();
    assert_eq!(seen.len(), 2, "both worker threads seen");
    for (cpus, nice) in &seen {
        assert_eq!(cpus.as_deref(), Some(cpu.to_string().as_str()));
        assert_eq!(nice.as_deref(), Some("7"));
    }
    let kib: u64 = locked
        .unwrap()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    assert!(kib >= 8192, "two threads pin 4 MiB each: VmLck {kib} kB");
}

#[test]
fn host_option_errors_name_the_option() {
    let d = scratch();
    for (arg, want) in [
        ("--cpus_allowed=0,4096", "iogauge fio: --cpus_allowed=0,4096: CPU 4096 does not exist"),
        ("--cpus_allowed_policy=spread", "iogauge fio: --cpus_allowed_policy=spread: expected shared or split, e.g. cpus_allowed_policy=split"),
        ("--nice=20", "iogauge fio: --nice=20: expected a niceness from -20 to 19, e.g. nice=10"),
        ("--clocksource=tsc", "iogauge fio: --clocksource=tsc: expected cpu, clock_gettime or gettimeofday, e.g. clocksource=cpu"),
        ("--mem=mmaphuge", "iogauge fio: --mem=mmaphuge: mem=mmaphuge (huge pages) is not supported by iogauge yet; use mem=malloc"),
        ("--cpumask=0", "iogauge fio: --cpumask=0: the mask allows no CPU; expected a CPU bit mask, e.g. cpumask=0x3 for CPUs 0 and 1"),
    ] {
        let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["fio", "--name=x", "--ioengine=null", "--size=1m", arg])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let err = text(&out.stderr);
        assert!(err.lines().next().unwrap().starts_with(want), "{arg}: {err}");
        assert!(out.stdout.is_empty());
    }
    assert_empty(d.path());
}
