//! fio's own regression checks, run on fio 3.33 and iogauge side by side: the same job file
//! in two scratch directories, the same checks on both JSON documents and logs, and iogauge
//! must do whatever fio does (exit status, counts, the I/O pattern read from the logs).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;

use std::path::Path;

/// One run of `job` (a job file's text) by fio or iogauge in `dir`, JSON on stdout.
fn run(program: &str, job: &str, dir: &Path) -> Out {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let mut c = cmd(program);
    if program != "fio" {
        c.arg("fio");
    }
    let out = c
        .args(["job.fio", "--output-format=json"])
        .current_dir(dir)
        .output()
        .unwrap();
    std::fs::remove_file(dir.join("job.fio")).unwrap();
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    let start = stdout
        .find('{')
        .unwrap_or_else(|| panic!("{program}: no JSON on stdout: {stdout}\n{stderr}"));
    Out {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_str(&stdout[start..])
            .unwrap_or_else(|e| panic!("{program}: {e}\n{stdout}\n{stderr}")),
        stderr,
    }
}

/// One log entry with `log_offset=1`: time, value, direction, size, offset.
#[derive(Debug, Clone, Copy)]
struct Entry {
    dir: u64,
    size: u64,
    offset: u64,
}

fn log(path: &Path) -> Vec<Entry> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            let f: Vec<u64> = l.split(',').map(|x| x.trim().parse().unwrap()).collect();
            Entry {
                dir: f[2],
                size: f[3],
                offset: f[4],
            }
        })
        .collect()
}

/// fio's trimwrite check: every trim is followed by a write of the same size at the same
/// offset, and (with a random map) the pairs cover every sector of the file once.
fn assert_trim_then_write(who: &str, entries: &[Entry], size: u64, cover: bool) {
    assert!(!entries.is_empty(), "{who}: an empty log");
    assert_eq!(entries.len() % 2, 0, "{who}: {entries:?}");
    let mut covered = vec![false; (size / 512) as usize];
    for pair in entries.chunks(2) {
        let (t, w) = (pair[0], pair[1]);
        assert_eq!(
            (t.dir, w.dir),
            (2, 1),
            "{who}: a trim then a write: {pair:?}"
        );
        assert_eq!((t.offset, t.size), (w.offset, w.size), "{who}: {pair:?}");
        for s in t.offset / 512..(t.offset + t.size) / 512 {
            if cover {
                assert!(!covered[s as usize], "{who}: sector {s} twice");
            }
            covered[s as usize] = true;
        }
    }
    if cover {
        let missed = covered.iter().filter(|c| !**c).count();
        assert_eq!(
            missed, 0,
            "{who}: {missed} sectors never trimmed and written"
        );
    }
}

#[test]
fn trimwrite_jobs_with_bw_logs_pair_each_trim_with_a_write() {
    if !have_fio() {
        return;
    }
    let size = 1 << 20;
    for (rw, extra, cover) in [
        ("trimwrite", "bs=4k", true),
        ("trimwrite", "bsrange=512-64k", true),
        ("trimwrite", "bssplit=4k/50:64k/50", true),
        ("randtrimwrite", "bs=4k", true),
        ("randtrimwrite", "bsrange=512-64k", true),
        ("randtrimwrite", "bssplit=4k/50:64k/50", true),
        ("randtrimwrite", "bs=4k\nnorandommap=1", false),
    ] {
        let job = format!(
            "[t]\nioengine=null\nsize={size}\nrw={rw}\n{extra}\nwrite_bw_log=t\nlog_offset=1\n"
        );
        let (fd, gd) = (scratch(), scratch());
        let f = run("fio", &job, fd.path());
        let g = run(env!("CARGO_BIN_EXE_iogauge"), &job, gd.path());
        let what = format!("rw={rw} {extra}");
        assert_eq!(f.code, 0, "fio, {what}: {}", f.stderr);
        assert_eq!(g.code, 0, "iogauge, {what}: {}", g.stderr);
        assert_eq!(g.stderr, f.stderr, "{what}: stderr");
        for d in ["trim", "write"] {
            let (fb, gb) = (
                u(&f.json, &["jobs", "0", d, "io_bytes"]),
                u(&g.json, &["jobs", "0", d, "io_bytes"]),
            );
            if cover {
                assert_eq!((fb, gb), (size, size), "{what}: {d} io_bytes");
            }
            if extra == "bs=4k" {
                assert_eq!(
                    u(&g.json, &["jobs", "0", d, "total_ios"]),
                    u(&f.json, &["jobs", "0", d, "total_ios"]),
                    "{what}: {d} total_ios"
                );
            }
        }
        for (who, dir) in [("fio", fd.path()), ("iogauge", gd.path())] {
            let entries = log(&dir.join("t_bw.1.log"));
            assert_trim_then_write(&format!("{who}, {what}"), &entries, size, cover);
        }
    }
}

/// The offsets of a job's iops log (`log_offset=1`), in KiB, in order.
fn offsets(dir: &Path, name: &str) -> Vec<u64> {
    log(&dir.join(format!("{name}_iops.1.log")))
        .iter()
        .map(|e| e.offset / 1024)
        .collect()
}

/// `rw=read:N` and `rw=read:-N`: fio's holes forwards and backwards, its wrap, its end of a
/// pass where the next I/O no longer fits (`read:512k` with 1 MiB I/Os reads 85 of 128 MiB),
/// and its quirks with `offset=`: the very offsets fio reads, in fio's order, and its counts.
#[test]
fn holes_forward_and_backward_walk_fios_offsets() {
    if !have_fio() {
        return;
    }
    for spec in [
        "rw=read:512k\nbs=1m\nsize=128m",
        "rw=read:128k\nbs=256k\nsize=32m\nrw_sequencer=identical",
        "rw=write:128k\nbs=256k\nsize=16m",
        "rw=read:4k\nbs=4k\nsize=30k",
        "rw=read:8k\nbs=4k\nsize=32k\noffset=8k",
        "rw=read:8k\nbs=4k\nsize=32k\noffset=8k\nloops=2",
        "rw=read:8k\nbs=4k\nsize=32k\nio_size=64k",
        "rw=read:-8k\nbs=4k\nsize=32k",
        "rw=read:-8k\nbs=4k\nsize=30k",
        "rw=read:-12k\nbs=4k\nsize=32k",
        "rw=read:-2k\nbs=4k\nsize=32k",
        "rw=read:-4k\nbs=4k\nsize=32k",
        "rw=write:-8k\nbs=4k\nsize=32k\noffset=8k",
    ] {
        let job = format!("[h]\nfilename=h.dat\nwrite_iops_log=h\nlog_offset=1\n{spec}\n");
        let (fd, gd) = (scratch(), scratch());
        let f = run("fio", &job, fd.path());
        let g = run(env!("CARGO_BIN_EXE_iogauge"), &job, gd.path());
        let what = spec.replace('\n', " ");
        assert_eq!((f.code, g.code), (0, 0), "{what}: {}", g.stderr);
        assert_eq!(g.stderr, f.stderr, "{what}: stderr");
        for d in ["read", "write"] {
            for k in ["total_ios", "io_bytes"] {
                assert_eq!(
                    u(&g.json, &["jobs", "0", d, k]),
                    u(&f.json, &["jobs", "0", d, k]),
                    "{what}: {d} {k}"
                );
            }
        }
        assert_eq!(
            offsets(gd.path(), "h"),
            offsets(fd.path(), "h"),
            "{what}: offsets (KiB)"
        );
    }
}

/// The null engine creates no file: a job far larger than any disk here runs (fio's flow
/// tests use size=100g), and options fio accepts silently (iodepth on a synchronous engine)
/// leave stderr as empty as fio's; the note goes with the results instead.
#[test]
fn null_jobs_need_no_space_and_print_nothing_on_stderr() {
    if !have_fio() {
        return;
    }
    let job = "[global]\nioengine=null\nsize=100t\nrw=read\nruntime=300ms\ntime_based\n\
               [flow1]\nflow_id=1\nflow=1\nrate_iops=2000\niodepth=16\n\
               [flow2]\nflow_id=1\nflow=2\n";
    let (fd, gd) = (scratch(), scratch());
    let f = run("fio", job, fd.path());
    let g = run(env!("CARGO_BIN_EXE_iogauge"), job, gd.path());
    assert_eq!((f.code, f.stderr.as_str()), (0, ""));
    assert_eq!((g.code, g.stderr.as_str()), (0, ""));
    assert_empty(gd.path());
    let notes = g.json["iogauge"]["notes"].to_string();
    assert!(
        notes.contains("iodepth=16 has no effect with the synchronous engine 'null'"),
        "{notes}"
    );
}

/// Values fio 3.33 reads by ignoring what follows the number (`bsrange=512/25:1k:…` is
/// 512-1k, `filesize=65536)` is 65536): read the same, stderr as empty as fio's, a note in the
/// results saying how each was read.
#[test]
fn values_fio_reads_leniently_are_read_alike() {
    if !have_fio() {
        return;
    }
    let job = "[x]\nioengine=null\nfilesize=65536)\nbsrange=512/25:1k:25:2k:25:4k/25\nrw=read\n";
    let (fd, gd) = (scratch(), scratch());
    let f = run("fio", job, fd.path());
    let g = run(env!("CARGO_BIN_EXE_iogauge"), job, gd.path());
    assert_eq!((f.code, f.stderr.as_str()), (0, ""));
    assert_eq!((g.code, g.stderr.as_str()), (0, ""));
    // Sequential 512..1k sizes over 64 KiB: the same bytes; a size outside 512-1k would not
    // have let fio and iogauge agree on the count of I/Os' bounds.
    assert_eq!(
        u(&g.json, &["jobs", "0", "read", "io_bytes"]),
        u(&f.json, &["jobs", "0", "read", "io_bytes"])
    );
    let ios = u(&g.json, &["jobs", "0", "read", "total_ios"]);
    assert!(
        (64..=128).contains(&ios),
        "{ios} I/Os of 512 B to 1 KiB over 64 KiB"
    );
    let notes: Vec<String> = g.json["iogauge"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        notes,
        [
            "job.fio:3: filesize=65536): '65536)' read as 65536 bytes ('65536'), as fio 3.33 reads it: fio ignores what follows",
            "job.fio:4: bsrange=512/25:1k:25:2k:25:4k/25: '512/25' read as 512 bytes ('512'), as fio 3.33 reads it: fio ignores what follows",
            "job.fio:4: bsrange=512/25:1k:25:2k:25:4k/25: '1k:25:2k:25:4k/25' read as 1024 bytes ('1k'), as fio 3.33 reads it: fio ignores what follows",
        ]
    );
}

/// The options of fio's built-in profiles (fio's examples write `threads=1`) are taken by fio
/// 3.33 in any job and do nothing there: run alike, a note says they were ignored.
#[test]
fn profile_options_in_a_plain_job_are_ignored_as_fio_ignores_them() {
    if !have_fio() {
        return;
    }
    let job = "[global]\nthreads=1\nioengine=null\n[j]\nsize=1m\nrw=read\nblock=4k\nnumruns=2\n\
               load=3\nprep\n";
    let (fd, gd) = (scratch(), scratch());
    let f = run("fio", job, fd.path());
    let g = run(env!("CARGO_BIN_EXE_iogauge"), job, gd.path());
    assert_eq!((f.code, f.stderr.as_str()), (0, ""));
    assert_eq!((g.code, g.stderr.as_str()), (0, ""));
    for k in ["total_ios", "io_bytes"] {
        assert_eq!(
            u(&g.json, &["jobs", "0", "read", k]),
            u(&f.json, &["jobs", "0", "read", k]),
            "read {k}"
        );
    }
    let notes = g.json["iogauge"]["notes"].to_string();
    for o in ["threads=1", "block=4k", "numruns=2", "load=3", "prep"] {
        assert!(
            notes.contains(&format!(
                "{o}: an option of fio's built-in tiobench/act profiles, which does nothing in a plain job"
            )),
            "{o}: {notes}"
        );
    }
}

// --- mixed block sizes verified by a later job ---

/// fio's t0002 (scaled down): a writer with `bssplit=512/50:1M/50` and md5 headers at two
/// offsets of one file (a sequential job and a mixed one), then a reader with the same options
/// checking every block. fio draws write sizes from the read sizes' seed when a job verifies
/// and puts a header in every smallest block (verify_interval = the smallest write size), so a
/// reader finds every header whatever it draws; the second job grows the file the first one
/// made. Each tool reads the other's file, and its own.
#[test]
fn mixed_size_verify_by_a_later_job_reads_either_tools_file() {
    if !have_fio() {
        return;
    }
    let job = |rw: &str, verify: &str| {
        format!(
            "[global]\nioengine=libaio\ndirect=1\nfilename=t0002file\niodepth=16\nsize=4M\n\
             readwrite={rw}\n{verify}verify=md5\nthread\nunlink=0\nbssplit=512/50:1M/50\n\
             [thread0]\noffset=0\n\
             [thread-mix0]\noffset=16M\nreadwrite=rw\nbsrange=512:1M\n"
        )
    };
    let pre = job("write", "do_verify=0\n");
    let post = job("read", "do_verify=1\nverify_fatal=1\n");
    let iogauge = env!("CARGO_BIN_EXE_iogauge");
    for (writer, reader) in [("fio", iogauge), (iogauge, "fio"), (iogauge, iogauge)] {
        let d = scratch();
        let w = run(writer, &pre, d.path());
        assert_eq!((w.code, w.stderr.as_str()), (0, ""), "{writer} writing");
        let len = std::fs::metadata(d.path().join("t0002file")).unwrap().len();
        assert_eq!(
            len,
            20 << 20,
            "{writer}: the file ends where thread-mix0's region does"
        );
        let r = run(reader, &post, d.path());
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (0, ""),
            "{reader} verifying what {writer} wrote"
        );
        let job0 = &r.json["jobs"][0];
        assert_eq!(job0["jobname"], "thread0");
        assert_eq!(job0["read"]["io_bytes"], 4 << 20, "{reader} after {writer}");
        assert_eq!(job0["error"], 0);
    }
}
