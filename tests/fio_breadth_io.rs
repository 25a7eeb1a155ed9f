//! The I/O group (sync_file_range, write_hint, write_barrier, atomic, allrandrepeat, error_dump,
//! force_async, serialize_overlap, io_submit_mode, lockfile, dedupe_global): fixtures
//! `tests/fixtures/fio/io-*.fio` under fio 3.33 and iogauge with equal counts and a superset of
//! fio's JSON keys, and the system calls each option exists for, seen with strace. fio must be
//! installed (with CI=true a missing fio fails); the strace checks skip without strace.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::strace::*;
use common::*;

use serde_json::Value;
use std::path::Path;

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

#[test]
fn sync_file_range_makes_fios_calls() {
    if !have_fio() || !have_strace() {
        return;
    }
    let calls = "trace=sync_file_range";
    let (f, fc) = traced("fio", "io-sync-file-range.fio", &[], calls);
    let (g, gc) = traced("iogauge", "io-sync-file-range.fio", &[], calls);
    assert_eq!((f.code, g.code), (0, 0), "{}\n{}", f.stderr, g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    // Syncs timed: 3 on psync (writes 4, 8, 12; none after the 16th, the last), 7 on libaio.
    for (name, n) in [("sfr-psync", 3), ("sfr-libaio", 7)] {
        let fn_ = u(job(&f.json, name), &["sync", "lat_ns", "N"]);
        let gn = u(job(&g.json, name), &["sync", "lat_ns", "N"]);
        assert_eq!((fn_, gn), (n, n), "{name}: sync latencies fio vs iogauge");
        // fio 3.33 counts each as a short write (an index past its sync counter), iogauge as
        // a sync.
        assert_eq!(u(job(&f.json, name), &["write", "short_ios"]), n);
        assert_eq!(u(job(&g.json, name), &["write", "short_ios"]), 0);
        assert_eq!(u(job(&g.json, name), &["sync", "total_ios"]), n);
    }
    // psync: the same calls, span and flags as fio's.
    let all = "SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE|SYNC_FILE_RANGE_WAIT_AFTER";
    let want: Vec<String> = [0, 16384, 32768]
        .iter()
        .map(|o| format!("sync_file_range({o}, 16384, {all}) = 0"))
        .collect();
    let psync =
        |c: &[String]| -> Vec<String> { c.iter().filter(|l| l.contains(all)).cloned().collect() };
    assert_eq!(psync(&fc), want, "fio");
    assert_eq!(psync(&gc), want, "iogauge");
    // libaio: fio skips the call while no write has completed yet (an empty span) and covers
    // only completed writes; iogauge drains the queue first, so each call covers 2 writes.
    let aio = |c: &[String]| {
        c.iter()
            .filter(|l| l.ends_with("SYNC_FILE_RANGE_WRITE) = 0"))
            .count()
    };
    assert!((6..=7).contains(&aio(&fc)), "fio: {fc:?}");
    let want: Vec<String> = (0..7)
        .map(|i| {
            format!(
                "sync_file_range({}, 8192, SYNC_FILE_RANGE_WRITE) = 0",
                i * 8192
            )
        })
        .collect();
    let gaio: Vec<String> = gc
        .iter()
        .filter(|l| l.ends_with("SYNC_FILE_RANGE_WRITE) = 0"))
        .cloned()
        .collect();
    assert_eq!(gaio, want, "iogauge on libaio");
}

#[test]
fn write_hint_is_set_on_open_as_fio_does() {
    if !have_fio() || !have_strace() {
        return;
    }
    // F_SET_RW_HINT is 0x40c, F_SET_FILE_RW_HINT 0x40e (strace may print either way).
    let calls = "trace=fcntl";
    let hints = |c: &[String]| -> Vec<String> {
        c.iter()
            .filter(|l| l.contains("HINT") || l.contains("0x40c") || l.contains("0x40e"))
            .map(|l| {
                let cmd = if l.contains("0x40c") || l.contains("F_SET_RW_HINT") {
                    "F_SET_RW_HINT"
                } else {
                    "F_SET_FILE_RW_HINT"
                };
                let result = l.rsplit_once(" = ").unwrap().1;
                format!(
                    "{cmd} = {}",
                    result.split(' ').take(2).collect::<Vec<_>>().join(" ")
                )
            })
            .collect()
    };
    // Buffered: both set the inode's hint once per file.
    let (f, fc) = traced("fio", "io-write-hint.fio", &[("@DIRECT@", "0")], calls);
    let (g, gc) = traced("iogauge", "io-write-hint.fio", &[("@DIRECT@", "0")], calls);
    assert_eq!((f.code, g.code), (0, 0), "{}\n{}", f.stderr, g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    let want = vec!["F_SET_RW_HINT = 0".to_string(); 2];
    assert_eq!((hints(&fc), hints(&gc)), (want.clone(), want));

    // Direct: fio sets the open file's hint, which Linux 5.17 removed (EINVAL): fio's job
    // fails. iogauge then sets the inode's hint, which direct writes carry since then.
    let (f, fc) = traced("fio", "io-write-hint.fio", &[("@DIRECT@", "1")], calls);
    let (g, gc) = traced("iogauge", "io-write-hint.fio", &[("@DIRECT@", "1")], calls);
    let fh = hints(&fc);
    assert_eq!(fh[0], "F_SET_RW_HINT = 0");
    if fh[1] == "F_SET_FILE_RW_HINT = -1 EINVAL" {
        assert_eq!(f.code, 1);
        assert_eq!(u(job(&f.json, "hint-extreme"), &["error"]), 22);
        assert_eq!(
            hints(&gc),
            [
                "F_SET_RW_HINT = 0",
                "F_SET_FILE_RW_HINT = -1 EINVAL",
                "F_SET_RW_HINT = 0"
            ]
        );
    } else {
        // An older kernel: the file hint works for both.
        assert_eq!(hints(&gc), fh);
    }
    assert_eq!(g.code, 0, "{}", g.stderr);
    assert_eq!(u(job(&g.json, "hint-extreme"), &["write", "total_ios"]), 16);
}

/// The inode keeps the hint iogauge set: read back with F_GET_RW_HINT from a kept file.
#[test]
fn write_hint_reaches_the_inode() {
    let d = scratch();
    let out = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=h",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--write_hint=long",
            "--keep-files",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let f = std::fs::File::open(d.path().join("h.0.0")).unwrap();
    let mut v: u64 = 0;
    // SAFETY: F_GET_RW_HINT (1024 + 11) writes one u64 through the pointer.
    let r = unsafe {
        libc::fcntl(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            1024 + 11,
            &mut v as *mut u64,
        )
    };
    assert_eq!((r, v), (0, 4), "RWH_WRITE_LIFE_LONG on the inode");
}

#[test]
fn accepted_options_run_as_in_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("io-accepted.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}\n{}", f.stderr, g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
}

#[test]
fn atomic_opens_with_o_direct_as_fio() {
    if !have_fio() || !have_strace() {
        return;
    }
    let direct_opens = |c: &[String]| {
        c.iter()
            .filter(|l| l.contains("atomic.0.0") && l.contains("O_DIRECT"))
            .count()
    };
    let calls = "trace=openat";
    let (_, fc) = traced("fio", "io-accepted.fio", &[], calls);
    let (_, gc) = traced("iogauge", "io-accepted.fio", &[], calls);
    assert!(direct_opens(&fc) >= 1, "fio: {fc:?}");
    assert!(direct_opens(&gc) >= 1, "iogauge: {gc:?}");
    let others = |c: &[String]| {
        c.iter()
            .filter(|l| l.contains("barrier.0.0") && l.contains("O_DIRECT"))
            .count()
    };
    assert_eq!((others(&fc), others(&gc)), (0, 0));
}

/// Offsets of a randread job's completion log (log_offset=1), one run of fio or iogauge.
fn offsets(fio: bool, extra: &[&str]) -> Vec<u64> {
    let d = scratch();
    let out = cmd(if fio { "fio" } else { IOGAUGE })
        .args(if fio { None } else { Some("fio") })
        .args([
            "--name=r",
            "--rw=randread",
            "--bs=4k",
            "--size=256k",
            "--randrepeat=0",
            "--write_lat_log=r",
            "--log_offset=1",
            "--output-format=json",
        ])
        .args(extra)
        .arg(format!("--directory={}", d.path().display()))
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = std::fs::read_to_string(d.path().join("r_clat.1.log")).unwrap();
    log.lines()
        .map(|l| l.split(", ").nth(4).unwrap().trim().parse().unwrap())
        .collect()
}

#[test]
fn allrandrepeat_repeats_what_randrepeat_0_would_vary() {
    let tools: &[bool] = if have_fio() { &[true, false] } else { &[false] };
    for &fio in tools {
        let a = offsets(fio, &["--allrandrepeat=1"]);
        assert_eq!(a.len(), 64, "fio: {fio}");
        assert_eq!(
            a,
            offsets(fio, &["--allrandrepeat=1", "--randseed=7"]),
            "fio: {fio}"
        );
        assert_ne!(
            offsets(fio, &[]),
            offsets(fio, &[]),
            "randrepeat=0 alone varies"
        );
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_ne!(a, sorted, "random order (fio: {fio})");
    }
}

#[test]
fn bad_values_are_refused_with_exit_2() {
    for (arg, want) in [
        (
            "--sync_file_range=flush",
            "'flush' is not a sync_file_range flag",
        ),
        (
            "--write_hint=forever",
            "expected none, short, medium, long or extreme",
        ),
        ("--write_barrier=x", "expected a number of writes"),
    ] {
        let d = scratch();
        let out = cmd(IOGAUGE)
            .args(["fio", "--name=x", "--size=64k", arg])
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        assert!(
            text(&out.stderr).contains(want),
            "{arg}: {}",
            text(&out.stderr)
        );
        assert_empty(d.path());
    }
}

#[test]
fn error_dump_prints_each_survived_error_as_fio() {
    if !have_fio() {
        return;
    }
    for dump in ["0", "1"] {
        let s = [("@DUMP@", dump)];
        let fd = scratch();
        let gd = scratch();
        let f = run_fixture("fio", &[], "io-error-dump.fio", &s, fd.path());
        let g = run_fixture(
            IOGAUGE,
            &["fio", "--allow-overwrite"],
            "io-error-dump.fio",
            &s,
            gd.path(),
        );
        assert_empty(gd.path());
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
        for o in [&f, &g] {
            assert_eq!(u(&o.json["jobs"][0], &["total_err"]), 4);
            assert_eq!(u(&o.json["jobs"][0], &["error"]), 28);
        }
        let lines = |e: &str| -> Vec<String> {
            e.lines()
                .filter_map(|l| l.split_once("io_u error on file "))
                .map(|(_, rest)| rest.to_string())
                .collect()
        };
        let want: Vec<String> = if dump == "1" {
            (0..4)
                .map(|i| {
                    format!(
                        "/dev/full: No space left on device: write offset={}, buflen=4096",
                        i * 4096
                    )
                })
                .collect()
        } else {
            vec![]
        };
        assert_eq!(lines(&f.stderr), want, "fio, error_dump={dump}");
        assert_eq!(lines(&g.stderr), want, "iogauge, error_dump={dump}");
    }
}

/// Runs the force_async fixture under `program` and returns its JSON and whether an io-wq
/// worker thread (`iou-wrk-*`) of the process was seen while it ran.
fn force_async_run(program: &str, n: &str) -> (Value, bool) {
    let d = scratch();
    let job = d.path().join("job.fio");
    let text_ = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/io-force-async.fio"),
    )
    .unwrap()
    .replace("@DIR@", d.path().to_str().unwrap())
    .replace("@N@", n);
    std::fs::write(&job, text_).unwrap();
    let child = spawn_job_json(program, IOGAUGE, &job, d.path());
    let mut seen = false;
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !seen && std::time::Instant::now() < until {
        seen = io_wq_threads_of(child.id());
        std::thread::sleep(std::time::Duration::from_millis(20));
        if std::fs::metadata(format!("/proc/{}", child.id())).is_err() {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{program}: {}", text(&out.stderr));
    let s = text(&out.stdout);
    (
        serde_json::from_str(&s[s.find('{').unwrap()..]).unwrap(),
        seen,
    )
}

/// Whether `pid` or one of its children (fio runs jobs in a child process) has an io-wq worker.
fn io_wq_threads_of(pid: u32) -> bool {
    let mut pids = vec![pid];
    if let Ok(c) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
        pids.extend(c.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    pids.iter().any(|p| {
        std::fs::read_dir(format!("/proc/{p}/task"))
            .map(|rd| {
                rd.flatten().any(|t| {
                    std::fs::read_to_string(t.path().join("comm"))
                        .is_ok_and(|c| c.starts_with("iou-wrk-"))
                })
            })
            .unwrap_or(false)
    })
}

#[test]
fn force_async_sends_requests_to_io_wq_as_fio() {
    if !have_fio() {
        return;
    }
    for program in ["fio", "iogauge"] {
        let (with, seen_with) = force_async_run(program, "1");
        assert!(seen_with, "{program}: no iou-wrk thread with force_async=1");
        assert!(u(&with["jobs"][0], &["read", "total_ios"]) > 0);
        let (_, seen_without) = force_async_run(program, "0");
        assert!(
            !seen_without,
            "{program}: iou-wrk threads without force_async"
        );
    }
}

#[test]
fn serialize_overlap_keeps_one_overlapping_io_in_flight_as_fio() {
    if !have_fio() {
        return;
    }
    // The share of I/Os issued at depth 1 and at depth 8 (fio's `IO depths`).
    let levels = |j: &Value| {
        let f = |k: &str| j["iodepth_level"][k].as_f64().unwrap();
        (f("1"), f("8"))
    };
    for on in ["0", "1"] {
        let (f, g) = both("io-serialize-overlap.fio", &[("@ON@", on)]);
        assert_eq!((f.code, g.code), (0, 0), "{}\n{}", f.stderr, g.stderr);
        assert_keys_superset(&f.json, &g.json);
        for name in ["so-uring", "so-libaio", "so-psync"] {
            for (tool, v) in [("fio", &f.json), ("iogauge", &g.json)] {
                let j = job(v, name);
                assert!(u(j, &["write", "total_ios"]) > 0, "{tool} {name}");
                let (d1, d8) = levels(j);
                if on == "1" || name == "so-psync" {
                    assert_eq!(d1, 100.0, "{tool} {name} serialize_overlap={on}");
                } else {
                    // Without the option the queue fills up again after each reap (fio reaps
                    // only when it is full). How many one reap takes depends on the load (the
                    // longer the job is descheduled, the more have ended, and the refill is
                    // counted at lower depths: 8=90 % was a quiet machine's, not a guarantee);
                    // but an I/O is issued at depth 1 only into an empty queue, and then 7 more
                    // follow before the next reap: at most one I/O in 8 (rounded up), plus
                    // fio's 0.1 % display floor.
                    let n = u(j, &["write", "total_ios"]) as f64;
                    let most = 100.0 * (n / 8.0).ceil() / n + 0.1;
                    assert!(
                        d1 <= most && (d8 > 0.0 || n < 8.0),
                        "{tool} {name}: the queue fills without the option ({n} I/Os, depth 1 \
                         {d1} % > {most} %?): {}",
                        j["iodepth_level"]
                    );
                }
            }
        }
    }
}

/// io_submit_mode: offload runs (the pool of submitting threads, `run/offload.rs`), inline is
/// the default; io_uring with offload is refused, as fio refuses it.
#[test]
fn io_submit_mode_offload_runs_inline_accepted_io_uring_refused() {
    let d = scratch();
    let run = |mode: &str, engine: &str| {
        cmd(IOGAUGE)
            .args([
                "fio",
                "--name=x",
                "--size=64k",
                "--rw=write",
                "--iodepth=4",
                "--output-format=json",
            ])
            .arg(format!("--io_submit_mode={mode}"))
            .arg(format!("--ioengine={engine}"))
            .arg(format!("--directory={}", d.path().display()))
            .output()
            .unwrap()
    };
    let off = run("offload", "psync");
    assert_eq!(off.status.code(), Some(0), "{}", text(&off.stderr));
    assert_eq!(text(&off.stderr), "");
    let v: serde_json::Value = serde_json::from_slice(&off.stdout).unwrap();
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 16);
    assert!(run("inline", "psync").status.success());
    let uring = run("offload", "io_uring");
    assert_eq!(uring.status.code(), Some(2));
    assert!(
        text(&uring.stderr)
            .contains("io_submit_mode=offload cannot use ioengine=io_uring (fio refuses it too"),
        "{}",
        text(&uring.stderr)
    );
    assert_empty(d.path());
}

/// Time intervals of each thread's `pwrite64` calls from `strace -f -ttt -T` output, and
/// how many pairs from different threads overlap.
fn overlapping_writes(trace: &str) -> (usize, usize) {
    let mut start: std::collections::HashMap<&str, f64> = Default::default();
    let mut spans: Vec<(&str, f64, f64)> = Vec::new();
    for l in trace.lines() {
        // strace pads the pid column: `123  1795.5 pwrite64(…`.
        let Some((tid, l)) = l.trim_start().split_once(' ') else {
            continue;
        };
        let Some((ts, rest)) = l.trim_start().split_once(' ') else {
            continue;
        };
        let Ok(ts) = ts.parse::<f64>() else { continue };
        let dur = || {
            let d = rest.rsplit_once('<')?.1.trim_end_matches('>');
            d.parse::<f64>().ok()
        };
        if rest.starts_with("pwrite64(") && rest.ends_with("<unfinished ...>") {
            start.insert(tid, ts);
        } else if rest.starts_with("pwrite64(") {
            if let Some(d) = dur() {
                spans.push((tid, ts, ts + d));
            }
        } else if rest.starts_with("<... pwrite64 resumed>") {
            if let (Some(s), Some(d)) = (start.remove(tid), dur()) {
                spans.push((tid, s, s + d));
            }
        }
    }
    let mut n = 0;
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if a.0 != b.0 && a.1 < b.2 && b.1 < a.2 {
                n += 1;
            }
        }
    }
    (spans.len(), n)
}

#[test]
fn lockfile_serializes_the_jobs_writes_as_fio() {
    if !have_fio() || !have_strace() {
        return;
    }
    for mode in ["none", "exclusive", "readwrite"] {
        for program in ["fio", "iogauge"] {
            let d = scratch();
            let log = d.path().join("strace.log");
            let log_s = log.to_str().unwrap().to_string();
            let mut pre = vec![
                "-f",
                "-qq",
                "-ttt",
                "-T",
                "-e",
                "trace=pwrite64",
                "-o",
                &log_s,
            ];
            pre.extend(if program == "fio" {
                vec!["fio"]
            } else {
                vec![IOGAUGE, "fio"]
            });
            let o = run_fixture(
                "strace",
                &pre,
                "io-lockfile.fio",
                &[("@MODE@", mode)],
                d.path(),
            );
            assert_eq!(o.code, 0, "{program}: {}", o.stderr);
            for j in 0..2 {
                assert_eq!(u(&o.json["jobs"][j], &["write", "total_ios"]), 256);
            }
            let (writes, overlaps) = overlapping_writes(&std::fs::read_to_string(&log).unwrap());
            assert!(writes >= 512, "{program}: {writes} writes traced");
            if mode != "none" {
                // readwrite: writes are exclusive too (reads would share).
                assert_eq!(
                    overlaps, 0,
                    "{program} {mode}: writes of the two jobs overlapped"
                );
            } else {
                assert!(
                    overlaps > 0,
                    "{program}: without a lock the jobs write together"
                );
            }
        }
    }
}

/// The distinct 4 KiB blocks of a file.
fn blocks_of(p: &Path) -> std::collections::HashSet<Vec<u8>> {
    std::fs::read(p)
        .unwrap()
        .chunks(4096)
        .map(|c| c.to_vec())
        .collect()
}

#[test]
fn dedupe_global_shares_the_working_set_between_jobs_as_fio() {
    if !have_fio() {
        return;
    }
    for global in ["0", "1"] {
        let s = [("@GLOBAL@", global)];
        let (fd, gd) = (scratch(), scratch());
        let f = run_fixture("fio", &[], "io-dedupe-global.fio", &s, fd.path());
        let g = run_fixture(
            IOGAUGE,
            &["fio", "--keep-files"],
            "io-dedupe-global.fio",
            &s,
            gd.path(),
        );
        assert_eq!((f.code, g.code), (0, 0), "{}\n{}", f.stderr, g.stderr);
        assert_keys_superset(&f.json, &g.json);
        assert_counts_equal(&f.json, &g.json);
        for (tool, d) in [("fio", fd.path()), ("iogauge", gd.path())] {
            let a = blocks_of(&d.join("dd.0.0"));
            let b = blocks_of(&d.join("dd.1.0"));
            let common = a.intersection(&b).count();
            if global == "1" {
                assert!(common > 0, "{tool}: no block shared between the jobs");
            } else {
                assert_eq!(
                    common, 0,
                    "{tool}: jobs shared blocks without dedupe_global"
                );
            }
            // Half the writes repeat: far fewer distinct blocks than the 256 written.
            assert!(
                a.len() < 200 && b.len() < 200,
                "{tool}: {} {}",
                a.len(),
                b.len()
            );
        }
    }
}
