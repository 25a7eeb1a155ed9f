//! Real faults in the middle of a run (issue 13), made on ext4 on a loop device (there is
//! no device-mapper here):
//!
//! - an I/O error (EIO): the loop device is shrunk under the mounted filesystem (the image is
//!   truncated to 24 MiB and `losetup -c` reads its size again). On a 64 MiB ext4 with 1 KiB
//!   blocks the metadata (flex_bg) sits in the first group and the journal in the third, both
//!   below 24 MiB, while a new file's data goes to the groups above 32 MiB: every later write
//!   (direct) or writeback (buffered, seen by fsync) of the file fails with EIO, and the
//!   filesystem stays writable, so the file can still be removed.
//! - a disk that fills: a job that writes a new sparse file (`fallocate=none`, so its blocks are
//!   allocated as it writes) at a limited rate while this test fills the filesystem; the next
//!   write fails with ENOSPC.
//!
//! Each asserts exit 1, the error line naming file and operation, the partial results printed
//! and marked, and that nothing iogauge created (file, run marker) is left. Loop devices need
//! root; CI runs as root, so with CI=true these tests must run.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::loopfs::{can_loop, sh, LoopFs};
use common::*;

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// ext4 on a 64 MiB loop device with 1 KiB blocks: 8 MiB groups, so metadata, journal and data
/// land where the module doc says; every table written now, so nothing is written lazily
/// afterwards.
fn disk() -> LoopFs {
    let d = LoopFs::new(
        "64M",
        &["-b", "1024", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
    );
    std::fs::remove_dir(d.mnt.join("lost+found")).unwrap();
    d
}

/// The device shrinks to `bytes` under the mounted filesystem. Writes in flight may extend the
/// image between the truncate and the size change, so repeat until the device has that size.
fn shrink(d: &LoopFs, bytes: u64) {
    for _ in 0..10 {
        sh(
            "truncate",
            &["-s", &bytes.to_string(), d.img.to_str().unwrap()],
        );
        sh("losetup", &["-c", &d.dev]);
        if sh("blockdev", &["--getsize64", &d.dev]) == bytes.to_string() {
            return;
        }
    }
    panic!("{} did not shrink to {bytes} bytes", d.dev);
}

fn spawn(args: &[&str], cwd: &Path) -> Child {
    common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iogauge")
}

/// Waits until iogauge's data file exists in `dir` (a name starting with `prefix`): the run is
/// then past its free-space check and writing.
fn wait_for_data_file(dir: &Path, prefix: &str) -> String {
    let t0 = Instant::now();
    loop {
        // (The directory itself may not exist yet: preflight makes it.)
        let names = if dir.exists() {
            files_in(dir)
        } else {
            Vec::new()
        };
        if let Some(f) = names.into_iter().find(|f| f.starts_with(prefix)) {
            return f;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no {prefix}* in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn finish(c: Child) -> Output {
    c.wait_with_output().unwrap()
}

/// The line of `text` that starts with `start`.
fn line_with<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{text}"))
}

/// `iogauge fio` with a write job on the disk; the device shrinks under it once its file exists.
fn fio_eio(extra: &[&str], op: &str) {
    if !can_loop() {
        return;
    }
    let d = disk();
    let mut args = vec![
        "fio",
        "--name=w",
        "--directory=mnt",
        "--rw=write",
        "--bs=4k",
        "--size=16m",
        "--time_based",
        "--runtime=30",
        "--output-format=normal,json",
    ];
    args.extend_from_slice(extra);
    let child = spawn(&args, d.dir.path());
    let file = wait_for_data_file(&d.mnt, "w.");
    // Some I/O first, so that the error falls in the middle of the run.
    std::thread::sleep(Duration::from_millis(300));
    shrink(&d, 24 * MIB);
    let o = finish(child);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    // fio's line: file, error, operation, offset and length.
    let l = line_with(
        &err,
        "iogauge fio: io_u error on file mnt/w.0.0: Input/output error: ",
    );
    let tail = l.rsplit(": ").next().unwrap();
    let (what, len) = tail.split_once(", buflen=").unwrap();
    let offset: u64 = what
        .strip_prefix(&format!("{op} offset="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(offset < 16 * MIB, "{l}");
    let want_len = if op == "write" { "4096" } else { "0" };
    assert_eq!(len, want_len, "{l}");
    assert_eq!(file, "w.0.0");
    // Then the same in iogauge's words, with the errno.
    let (iog_op, iog_len) = if op == "write" {
        ("write", ", length 4096")
    } else {
        ("fsync", "")
    };
    line_with(
        &err,
        &format!(
            "iogauge fio: {iog_op} error on 'mnt/w.0.0' at offset {offset}{iog_len}: Input/output \
             error (errno 5); the run ended there, partial results follow"
        ),
    );
    // The partial results: the job line with fio's err=, then the JSON with "error" : 5 and
    // the note that says why it is partial.
    assert!(
        out.contains("\nw: (groupid=0, jobs=1): err= 5 (error=Input/output error): pid="),
        "{out}"
    );
    let json: Value = serde_json::from_str(&out[out.find("\n{").unwrap()..]).unwrap();
    let job = &json["jobs"][0];
    assert_eq!(job["error"], 5, "{job}");
    assert!(job["write"]["total_ios"].as_u64().unwrap() > 0, "{job}");
    let notes = json["iogauge"]["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "partial results: an I/O error ended the run before its end: {}",
            if op == "write" { "write" } else { "fsync" }
        )),
        "{notes}"
    );
    // Nothing iogauge created is left: neither the file nor the run marker.
    assert_eq!(d.left(&[]), Vec::<String>::new());
}

#[test]
fn fio_direct_write_error_prints_partial_results_and_removes_its_files() {
    fio_eio(&["--direct=1"], "write");
}

#[test]
fn fio_buffered_fsync_error_prints_partial_results_and_removes_its_files() {
    fio_eio(&["--fsync=8"], "sync");
}

#[test]
fn fio_disk_full_mid_run_prints_partial_results_and_removes_its_files() {
    if !can_loop() {
        return;
    }
    let d = disk();
    // A new file of 40 MiB (the filesystem has about 50 MiB free, so the check before the run
    // passes) written at 8 MiB/s, allocating as it goes; the test takes the rest meanwhile.
    let child = spawn(
        &[
            "fio",
            "--name=w",
            "--directory=mnt",
            "--rw=write",
            "--bs=4k",
            "--size=40m",
            "--direct=1",
            "--fallocate=none",
            "--rate=8m",
            "--output-format=json",
        ],
        d.dir.path(),
    );
    wait_for_data_file(&d.mnt, "w.");
    d.fill("filler");
    let o = finish(child);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let l = line_with(
        &err,
        "iogauge fio: io_u error on file mnt/w.0.0: No space left on device: write offset=",
    );
    assert!(l.ends_with(", buflen=4096"), "{l}");
    let json: Value = serde_json::from_str(&out).unwrap();
    let job = &json["jobs"][0];
    assert_eq!(job["error"], 28, "{job}");
    let ios = job["write"]["total_ios"].as_u64().unwrap();
    assert!(ios > 0 && ios < 40 * 256, "{job}");
    assert!(
        json["iogauge"]["notes"].to_string().contains("partial results: an I/O error ended the run before its end: write error on 'mnt/w.0.0' at offset "),
        "{}",
        json["iogauge"]["notes"]
    );
    // Only the test's own filler is left.
    assert_eq!(d.left(&["filler"]), Vec::<String>::new());
}

#[test]
fn check_io_error_is_a_partial_unjudged_outcome_and_removes_its_files() {
    if !can_loop() {
        return;
    }
    let d = disk();
    let child = spawn(
        &[
            "check",
            "sync-iops",
            "--dir",
            "mnt",
            "--size",
            "16m",
            "--duration",
            "30",
            "--format",
            "json",
        ],
        d.dir.path(),
    );
    let file = wait_for_data_file(&d.mnt, "iogauge-sync-iops.");
    std::thread::sleep(Duration::from_millis(300));
    shrink(&d, 24 * MIB);
    let o = finish(child);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    // The error names the file and the operation, on stderr and in the document.
    let l = line_with(
        &err,
        &format!("iogauge check: sync-iops: write error on 'mnt/{file}' at offset "),
    );
    assert!(
        l.ends_with(
            ", length 4096: Input/output error (errno 5); the run stopped there: its numbers are \
             partial and not judged"
        ),
        "{l}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["profiles"][0];
    assert_eq!(p["verdict"], "error", "{p}");
    assert_eq!(p["partial"], true, "{p}");
    assert_eq!(
        p["metrics"],
        serde_json::json!([]),
        "partial numbers are not judged: {p}"
    );
    let e = &p["io_error"];
    assert_eq!(e["operation"], "write", "{e}");
    assert_eq!(e["file"], format!("mnt/{file}"), "{e}");
    assert_eq!(e["length"], 4096, "{e}");
    assert_eq!(e["errno"], 5, "{e}");
    assert_eq!(e["message"], "Input/output error", "{e}");
    // The partial fio report is kept, with the job's error.
    assert_eq!(p["report"]["jobs"][0]["error"], 5, "{p}");
    assert_eq!(d.left(&[]), Vec::<String>::new());
}

#[test]
fn preflight_io_error_fails_the_collector_as_troubleshoot_and_removes_its_files() {
    if !can_loop() {
        return;
    }
    let d = disk();
    let bench = d.mnt.join("etcd");
    let spec = format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: faults\nspec:\n  \
         hostCollectors:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        \
         directory: {}\n        fileSize: 16Mi\n        operationSize: 2300\n        datasync: true\n        \
         runTime: \"30\"\n  hostAnalyzers:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        \
         outcomes:\n          - pass: {{when: \"p99 < 10s\", message: \"fine\"}}\n          - fail: {{when: \"p99 >= 10s\", message: \"slow\"}}\n",
        bench.display()
    );
    std::fs::write(d.dir.path().join("s.yaml"), spec).unwrap();
    let child = spawn(&["preflight", "--output", "out", "s.yaml"], d.dir.path());
    let file = wait_for_data_file(&bench, "fsperf.");
    std::thread::sleep(Duration::from_millis(300));
    shrink(&d, 24 * MIB);
    let o = finish(child);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    // The collector failed: troubleshoot then has no result file, and the analyzer's outcome
    // says why (exit 3: an outcome failed, as for any failed collector).
    assert_eq!(o.status.code(), Some(3), "{out}{err}");
    let why = format!(
        "collector 'etcd-perf': fdatasync error on '{}' at offset ",
        bench.join(&file).display()
    );
    let l = line_with(&err, &format!("iogauge preflight: {why}"));
    assert!(l.ends_with(": Input/output error (errno 5)"), "{l}");
    assert!(out.contains(&format!("--- {why}")), "{out}");
    assert!(!d
        .dir
        .path()
        .join("out/host-collectors/filesystemPerformance/etcd-perf.json")
        .exists());
    // The directory made for the test went too.
    assert_eq!(d.left(&[]), Vec::<String>::new());
}

/// ext4's shutdown ioctl (`EXT4_IOC_SHUTDOWN`, flag 0: flush, then every later I/O fails).
fn shut_down(dir: &Path) {
    const EXT4_IOC_SHUTDOWN: libc::c_ulong = 0x8004_587D;
    let f = std::fs::File::open(dir).unwrap();
    let flags: u32 = 0;
    // SAFETY: the ioctl reads one u32 from a live local; the fd is open for the call.
    let r = unsafe {
        libc::ioctl(
            std::os::unix::io::AsRawFd::as_raw_fd(&f),
            EXT4_IOC_SHUTDOWN as _,
            &flags,
        )
    };
    assert_eq!(r, 0, "shutdown: {}", std::io::Error::last_os_error());
}

#[test]
fn a_shut_down_filesystem_keeps_the_marker_and_cleanup_removes_the_file_later() {
    if !can_loop() {
        return;
    }
    let d = disk();
    let child = spawn(
        &[
            "fio",
            "--name=w",
            "--directory=mnt",
            "--rw=write",
            "--bs=4k",
            "--size=16m",
            "--direct=1",
            "--time_based",
            "--runtime=30",
        ],
        d.dir.path(),
    );
    wait_for_data_file(&d.mnt, "w.");
    std::thread::sleep(Duration::from_millis(300));
    shut_down(&d.mnt);
    let o = finish(child);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    line_with(
        &err,
        "iogauge fio: io_u error on file mnt/w.0.0: Input/output error: write offset=",
    );
    // Nothing can be removed from a shut-down filesystem: iogauge says so and what to do.
    line_with(&err, "iogauge: warning: could not remove 'mnt/w.0.0': ");
    line_with(
        &err,
        "iogauge: its run marker stays: `iogauge cleanup mnt` removes what is left once the \
         filesystem works again",
    );
    assert!(out.contains("err= 5 (error=Input/output error)"), "{out}");
    // Mounted again, the file and its marker are there, and `iogauge cleanup` removes both.
    sh("umount", &[d.mnt.to_str().unwrap()]);
    sh("mount", &[&d.dev, d.mnt.to_str().unwrap()]);
    let left = d.left(&[]);
    assert!(left.contains(&"w.0.0".to_string()), "{left:?}");
    assert!(
        left.iter().any(|f| f.starts_with(".iogauge-run.")),
        "{left:?}"
    );
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["cleanup", "mnt"])
        .current_dir(d.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(d.left(&[]), Vec::<String>::new());
}

/// fio's JSON on stdout after an I/O error starts with its `fio: pid=…, err=…` line: the document
/// is what follows.
fn json_after_lines(out: &[u8]) -> Value {
    let t = text(out);
    let start = t.find("\n{").map(|i| i + 1).unwrap_or(0);
    serde_json::from_str(&t[start..]).unwrap_or_else(|e| panic!("no JSON document ({e}):\n{t}"))
}

/// No root needed: /dev/full fails every write with ENOSPC. fio 3.33 and iogauge on the same
/// job: both exit 1, the same error line, the same job error and counts (fio counts the failed
/// I/Os as issued, of no bytes), and iogauge's JSON has every key fio's has.
#[test]
fn the_error_line_and_partial_json_match_fio_on_dev_full() {
    if !have_fio() || !Path::new("/dev/full").exists() {
        return;
    }
    for engine in ["psync", "io_uring"] {
        let args = [
            "--name=w",
            "--filename=/dev/full",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--iodepth=4",
            &format!("--ioengine={engine}"),
            "--output-format=json",
        ];
        let f = common::cmd("fio").args(args).output().unwrap();
        let g = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args(["fio", "--allow-overwrite"])
            .args(args)
            .output()
            .unwrap();
        if engine == "io_uring" && g.status.code() == Some(2) {
            eprintln!("skipping io_uring: {}", text(&g.stderr));
            continue;
        }
        assert_eq!(
            (f.status.code(), g.status.code()),
            (Some(1), Some(1)),
            "{engine}: {}",
            text(&g.stderr)
        );
        let line =
            "io_u error on file /dev/full: No space left on device: write offset=0, buflen=4096";
        let (fe, ge) = (text(&f.stderr), text(&g.stderr));
        assert_eq!(
            fe.lines().next(),
            Some(&*format!("fio: {line}")),
            "{engine}: {fe}"
        );
        assert!(
            ge.lines().any(|l| l == format!("iogauge fio: {line}")),
            "{engine}: {ge}"
        );
        let (fj, gj) = (json_after_lines(&f.stdout), json_after_lines(&g.stdout));
        for path in [
            &["jobs", "0", "error"][..],
            &["jobs", "0", "write", "io_bytes"],
            &["jobs", "0", "read", "total_ios"],
        ] {
            assert_eq!(u(&fj, path), u(&gj, path), "{engine}: {path:?}");
        }
        // Every issued write failed. With psync that is the first one; with io_uring each
        // one in flight at the error (up to iodepth=4, 4 in every run seen here, but how many
        // were issued before the first completion depends on timing, for fio too).
        let ios = |v: &Value| u(v, &["jobs", "0", "write", "total_ios"]);
        if engine == "psync" {
            assert_eq!((ios(&fj), ios(&gj)), (1, 1));
        } else {
            assert!(
                (1..=4).contains(&ios(&fj)) && (1..=4).contains(&ios(&gj)),
                "{engine}"
            );
        }
        assert_eq!(u(&gj, &["jobs", "0", "error"]), 28);
        assert_keys_superset(&fj, &gj);
    }
}
