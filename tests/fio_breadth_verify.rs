//! Data verification and buffer contents (fio's `verify` family and buffer options) under fio
//! and iogauge: equal counts and a superset of fio's JSON keys for the fixtures in
//! `tests/fixtures/fio/{verify,buffers}-*.fio`, data each tool writes accepted by the other's
//! `verify_only`, a corrupted block reported as fio reports it (stderr lines, err=84, exit
//! code), and the written data having the properties the buffer options promise (measured with
//! a real compressor and by counting duplicate blocks). With CI=true a missing fio fails.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

fn n(v: &Value, job: usize, dir: &str, key: &str) -> u64 {
    v["jobs"][job][dir][key].as_u64().unwrap()
}

fn assert_counts_equal(fio: &Value, iog: &Value) {
    let fj = fio["jobs"].as_array().unwrap();
    let gj = iog["jobs"].as_array().unwrap();
    assert_eq!(fj.len(), gj.len(), "number of job entries");
    for i in 0..fj.len() {
        assert_eq!(fj[i]["jobname"], gj[i]["jobname"]);
        for d in ["read", "write", "trim"] {
            for k in ["total_ios", "io_bytes"] {
                assert_eq!(
                    n(fio, i, d, k),
                    n(iog, i, d, k),
                    "job {} {d} {k}",
                    fj[i]["jobname"]
                );
            }
        }
        assert_eq!(fj[i]["error"], gj[i]["error"], "error of job {i}");
    }
}

fn fixture(name: &str, dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name);
    let text = std::fs::read_to_string(src).unwrap();
    let out = dir.join(name);
    std::fs::write(&out, text.replace("@DIR@", dir.to_str().unwrap())).unwrap();
    out
}

fn iogauge() -> std::process::Command {
    let mut c = cmd(env!("CARGO_BIN_EXE_iogauge"));
    c.arg("fio");
    c
}

/// Runs `c` in `dir` with JSON output; (JSON, stderr, exit code).
fn json_run(mut c: std::process::Command, dir: &Path) -> (Value, String, i32) {
    let out: Output = c
        .arg("--output-format=json")
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    // fio prints its "fio: pid=..., err=84/..." line on stdout before the JSON.
    let json = &stdout[stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {stdout} {}", text(&out.stderr)))..];
    (
        serde_json::from_str(json).unwrap(),
        text(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

/// The same fixture under both tools, each in its own directory (kept: the files are checked).
fn both_fixture(name: &str) -> (Value, Value, tempfile::TempDir, tempfile::TempDir) {
    let (fd, gd) = (scratch(), scratch());
    let mut f = cmd("fio");
    f.arg(fixture(name, fd.path()));
    let (fj, ferr, fcode) = json_run(f, fd.path());
    assert_eq!(fcode, 0, "fio {name}: {ferr}");
    let mut g = iogauge();
    g.arg("--keep-files").arg(fixture(name, gd.path()));
    let (gj, gerr, gcode) = json_run(g, gd.path());
    assert_eq!(gcode, 0, "iogauge {name}: {gerr}");
    (fj, gj, fd, gd)
}

#[test]
fn write_and_verify_counts_match_fio() {
    if !have_fio() {
        return;
    }
    for name in ["verify-md5.fio", "verify-crc32c.fio", "verify-pattern.fio"] {
        let (f, g, _fd, _gd) = both_fixture(name);
        assert_keys_superset(&f, &g);
        assert_counts_equal(&f, &g);
        // Every written block is read back once, counted as a read.
        for j in 0..g["jobs"].as_array().unwrap().len() {
            assert_eq!(n(&g, j, "read", "io_bytes"), n(&g, j, "write", "io_bytes"));
            assert!(n(&g, j, "read", "total_ios") > 0);
            assert_eq!(g["jobs"][j]["error"], 0);
        }
    }
}

/// Writes a file of 16 blocks of 4 KiB with `verify` and do_verify=0 using `tool`, in `dir`.
fn write_kept(tool: &str, dir: &Path, extra: &[&str]) {
    let mut c = if tool == "fio" { cmd("fio") } else { iogauge() };
    if tool != "fio" {
        c.arg("--keep-files");
    }
    c.args([
        "--name=t",
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--do_verify=0",
    ])
    .arg(format!("--directory={}", dir.display()))
    .args(extra);
    let (_, err, code) = json_run(c, dir);
    assert_eq!(code, 0, "{tool} {extra:?}: {err}");
}

/// verify_only over the file `write_kept` wrote.
fn verify_only(tool: &str, dir: &Path, extra: &[&str]) -> (Value, String, i32) {
    let mut c = if tool == "fio" { cmd("fio") } else { iogauge() };
    c.args([
        "--name=t",
        "--rw=randwrite",
        "--size=64k",
        "--bs=4k",
        "--verify_only=1",
    ])
    .arg(format!("--directory={}", dir.display()))
    .args(extra);
    json_run(c, dir)
}

const KINDS: [&str; 16] = [
    "md5",
    "crc64",
    "crc32",
    "crc32c",
    "crc32c-intel",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
];

#[test]
fn each_tool_verifies_what_the_other_wrote() {
    if !have_fio() {
        return;
    }
    for kind in KINDS {
        let opt = format!("--verify={kind}");
        for (writer, reader) in [("fio", "iogauge"), ("iogauge", "fio")] {
            let d = scratch();
            write_kept(writer, d.path(), &[&opt]);
            let (j, err, code) = verify_only(reader, d.path(), &[&opt]);
            assert_eq!(code, 0, "{reader} verifying {writer}'s {kind}: {err}");
            assert_eq!(j["jobs"][0]["error"], 0);
            assert_eq!(
                n(&j, 0, "read", "total_ios"),
                16,
                "{kind} {writer}->{reader}"
            );
            assert_eq!(
                n(&j, 0, "write", "total_ios"),
                16,
                "verify_only counts the dry run"
            );
        }
    }
    // Patterns (with the offset pasted in), intervals and a moved header, both ways too.
    let pattern = "--verify_pattern=0xdead%o\"ab\"";
    for extra in [
        vec![pattern],
        vec!["--verify=pattern", pattern],
        vec!["--verify=meta", "--verify_pattern=-1024"],
        vec!["--verify=md5", "--verify_interval=512"],
        vec!["--verify=crc32c", "--verify_offset=100"],
    ] {
        for (writer, reader) in [("fio", "iogauge"), ("iogauge", "fio")] {
            let d = scratch();
            write_kept(writer, d.path(), &extra);
            let (_, err, code) = verify_only(reader, d.path(), &extra);
            assert_eq!(code, 0, "{reader} verifying {writer}'s {extra:?}: {err}");
        }
    }
}

fn corrupt(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

/// The lines of `stderr` from the first one starting with `start`, `count` of them.
fn lines_from(stderr: &str, start: &str, count: usize) -> Vec<String> {
    let all: Vec<&str> = stderr.lines().collect();
    let i = all
        .iter()
        .position(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in:\n{stderr}"));
    all[i..(i + count).min(all.len())]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn a_corrupted_block_is_reported_as_fio_reports_it() {
    if !have_fio() {
        return;
    }
    // Sequential 4 KiB blocks so that offsets are known; a checksum failure in block 2.
    let seq = |tool: &str, d: &Path, extra: &[&str]| -> (Value, String, i32) {
        let mut c = if tool == "fio" { cmd("fio") } else { iogauge() };
        c.args([
            "--name=t",
            "--rw=write",
            "--size=64k",
            "--bs=4k",
            "--verify=crc32c",
        ])
        .arg(format!("--directory={}", d.display()))
        .args(extra);
        json_run(c, d)
    };
    let d = scratch();
    let (_, err, code) = seq("iogauge", d.path(), &["--do_verify=0", "--keep-files"]);
    assert_eq!(code, 0, "{err}");
    let file = d.path().join("t.0.0");
    corrupt(&file, 8192 + 100, b"XXXX");
    let (g, gerr, gcode) = seq("iogauge", d.path(), &["--verify_only=1"]);
    let (f, ferr, fcode) = seq("fio", d.path(), &["--verify_only=1"]);
    assert_eq!(gcode, 1, "a verify failure fails the run:\n{gerr}");
    assert_eq!(fcode, 1);
    let first = format!(
        "crc32c: verify failed at file {} offset 8192, length 4096 (requested block: offset=8192, length=4096, flags=88)",
        file.display()
    );
    let got = lines_from(&gerr, "crc32c: verify failed", 3);
    assert_eq!(got[0], first);
    assert!(
        got[1].starts_with("       Expected CRC: ") && got[1].len() == 29,
        "{got:?}"
    );
    assert!(
        got[2].starts_with("       Received CRC: ") && got[2].len() == 29,
        "{got:?}"
    );
    // fio computes the same two checksums over the same bytes.
    assert_eq!(got, lines_from(&ferr, "crc32c: verify failed", 3));
    assert!(
        gerr.lines().any(|l| l.starts_with("fio: pid=") && l.ends_with(
            "err=84/file:io_u.c:2152, func=io_u_sync_complete, error=Invalid or incomplete multibyte or wide character"
        )),
        "{gerr}"
    );
    // The job's error is EILSEQ and the reads stop at the bad block, in both tools.
    assert_eq!(g["jobs"][0]["error"], 84);
    assert_counts_equal(&f, &g);
    assert_eq!(n(&g, 0, "read", "total_ios"), 3);

    // A broken header: fio's "bad magic" line, with the block's place.
    corrupt(&file, 8192, &[0u8; 4]);
    corrupt(&file, 4096, &[0x11, 0x22]);
    let (g, gerr, gcode) = seq("iogauge", d.path(), &["--verify_only=1"]);
    let (_, ferr, _) = seq("fio", d.path(), &["--verify_only=1"]);
    assert_eq!(gcode, 1);
    let want = format!(
        "verify: bad magic header 2211, wanted acca at file {} offset 4096, length 4096 (requested block: offset=4096, length=4096)",
        file.display()
    );
    assert_eq!(lines_from(&gerr, "verify: bad magic", 1)[0], want);
    assert_eq!(lines_from(&ferr, "verify: bad magic", 1)[0], want);
    assert_eq!(n(&g, 0, "read", "total_ios"), 2);
}

#[test]
fn read_jobs_check_every_read_and_patterns_name_the_bad_byte() {
    let d = scratch();
    let run = |extra: &[&str]| -> (Value, String, i32) {
        let mut c = iogauge();
        c.args([
            "--name=t",
            "--size=64k",
            "--bs=4k",
            "--verify_pattern=0xdead%o\"ab\"",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .args(extra);
        json_run(c, d.path())
    };
    let (g, err, code) = run(&["--rw=write", "--keep-files"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(n(&g, 0, "read", "total_ios"), 16, "written and read back");
    let (g, err, code) = run(&["--rw=randread"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(n(&g, 0, "read", "total_ios"), 16);
    // Flip byte 60 of block 3 (inside the pattern, after the 40-byte header).
    let file = d.path().join("t.0.0");
    corrupt(&file, 3 * 4096 + 60, b"Z");
    let (g, err, code) = run(&["--rw=read"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(g["jobs"][0]["error"], 84);
    let lines = lines_from(&err, "fio: got pattern", 3);
    assert!(
        lines[0].starts_with("fio: got pattern '5a', wanted '"),
        "{lines:?}"
    );
    // The header is 40 bytes: byte 60 of the block is byte 20 after it.
    assert_eq!(lines[1], "fio: bad pattern block offset 20");
    assert!(lines[2].starts_with(&format!(
        "pattern: verify failed at file {} offset 12288, length 4096 (requested block: offset=12288, length=4096, flags=8)",
        file.display()
    )));
    assert_eq!(n(&g, 0, "read", "total_ios"), 4);
}

#[test]
fn verify_on_a_queueing_engine_reads_back_and_catches_corruption() {
    let d = scratch();
    let run = |extra: &[&str]| -> (Value, String, i32) {
        let mut c = iogauge();
        c.args([
            "--name=t",
            "--size=256k",
            "--bs=4k",
            "--verify=sha256",
            "--ioengine=libaio",
            "--iodepth=8",
            "--rw=randwrite",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .args(extra);
        json_run(c, d.path())
    };
    let (g, err, code) = run(&["--keep-files"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(n(&g, 0, "read", "total_ios"), 64);
    assert_eq!(n(&g, 0, "write", "total_ios"), 64);
    corrupt(&d.path().join("t.0.0"), 40 * 4096 + 2000, b"!");
    let (g, err, code) = run(&["--verify_only=1"]);
    assert_eq!(code, 1);
    assert_eq!(g["jobs"][0]["error"], 84);
    assert!(
        err.contains("sha256: verify failed at file") && err.contains("offset 163840, length 4096"),
        "{err}"
    );
    assert!(err.contains("func=io_u_queued_complete"), "{err}");
}

#[test]
fn bad_verify_settings_are_refused_with_the_reason() {
    let d = scratch();
    let refuse = |args: &[&str], want: &str| {
        let out = iogauge()
            .args(["--name=t", "--size=64k", "--rw=write"])
            .arg(format!("--directory={}", d.path().display()))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    };
    refuse(&["--verify=md6"], "expected one of md5, crc64");
    refuse(&["--verify=pattern"], "verify=pattern needs verify_pattern");
    refuse(
        &["--verify=sha512", "--bs=128"],
        "cannot hold the 168-byte verify header",
    );
    refuse(
        &["--verify=md5", "--verify_offset=4090"],
        "past the end of the 4096-byte",
    );
    refuse(
        &["--verify_state_save=1"],
        "iogauge keeps no verify state file",
    );
    refuse(
        &[
            "--verify=md5",
            "--loops=2",
            "--rw=randwrite",
            "--norandommap",
        ],
        "verify with loops > 1 and verify_only, norandommap, io_size or number_ios is not",
    );
    refuse(
        &["--verify=md5", "--loops=2", "--verify_only=1"],
        "verify with loops > 1 and verify_only",
    );
    refuse(
        &["--verify=md5", "--loops=2", "--io_size=32k"],
        "io_size/number_ios",
    );
    refuse(&["--verify_pattern=\"abc"], "no closing");
    refuse(&["--dedupe_mode=often"], "expected repeat or working_set");
    refuse(&["--buffer_compress_percentage=101"], "from 0 to 100");
}

fn deflate_ratio(data: &[u8]) -> f64 {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap().len() as f64 / data.len() as f64
}

fn dup_share(data: &[u8], block: usize) -> f64 {
    let mut seen: HashMap<&[u8], u32> = HashMap::new();
    let blocks = data.chunks(block).count();
    for c in data.chunks(block) {
        *seen.entry(c).or_default() += 1;
    }
    (blocks - seen.len()) as f64 / blocks as f64
}

#[test]
fn written_data_has_the_promised_compressibility_and_duplicates() {
    if !have_fio() {
        return;
    }
    let (f, g, fd, gd) = both_fixture("buffers-compress.fio");
    assert_keys_superset(&f, &g);
    assert_counts_equal(&f, &g);
    let gr = deflate_ratio(&std::fs::read(gd.path().join("compress.0.0")).unwrap());
    let fr = deflate_ratio(&std::fs::read(fd.path().join("compress.0.0")).unwrap());
    assert!(
        (gr - 0.5).abs() < 0.03,
        "iogauge's data compresses to {gr:.3}"
    );
    assert!((gr - fr).abs() < 0.03, "iogauge {gr:.3}, fio {fr:.3}");

    let (f, g, fd, gd) = both_fixture("buffers-dedupe.fio");
    assert_counts_equal(&f, &g);
    let gs = dup_share(&std::fs::read(gd.path().join("dedupe.0.0")).unwrap(), 4096);
    let fs = dup_share(&std::fs::read(fd.path().join("dedupe.0.0")).unwrap(), 4096);
    assert!(
        (gs - 0.4).abs() < 0.06,
        "iogauge repeats {gs:.3} of its blocks"
    );
    assert!((gs - fs).abs() < 0.06, "iogauge {gs:.3}, fio {fs:.3}");

    let (f, g, _fd, gd) = both_fixture("buffers-pattern.fio");
    assert_counts_equal(&f, &g);
    let p = std::fs::read(gd.path().join("pattern.0.0")).unwrap();
    let unit = b"iogauge\x00\xff";
    assert!(p.chunks(4096).all(|b| b
        .iter()
        .enumerate()
        .all(|(i, &x)| x == unit[i % unit.len()])));
    let s = std::fs::read(gd.path().join("scramble.0.0")).unwrap();
    assert_eq!(dup_share(&s, 512), 0.0, "scrambled sectors all differ");
    // Each 512 bytes carries its own offset in one of its eight 64-byte lines.
    let sector = 7 * 512;
    let off = (sector as u64).to_le_bytes();
    assert!((0..8).any(|l| s[sector + l * 64..sector + l * 64 + 8] == off));
}

#[test]
fn dedupe_working_set_repeats_only_a_few_distinct_blocks() {
    let d = scratch();
    let mut c = iogauge();
    c.args([
        "--name=ws",
        "--size=4m",
        "--bs=4k",
        "--rw=write",
        "--dedupe_percentage=60",
        "--dedupe_mode=working_set",
        "--dedupe_working_set_percentage=2",
        "--keep-files",
    ])
    .arg(format!("--directory={}", d.path().display()));
    let (_, err, code) = json_run(c, d.path());
    assert_eq!(code, 0, "{err}");
    let data = std::fs::read(d.path().join("ws.0.0")).unwrap();
    let share = dup_share(&data, 4096);
    assert!(share > 0.5 && share < 0.7, "{share}");
    // The repeated blocks come from a set of 2% of the file: 20 distinct 4 KiB blocks.
    let mut count: HashMap<&[u8], u32> = HashMap::new();
    for b in data.chunks(4096) {
        *count.entry(b).or_default() += 1;
    }
    let repeated = count.values().filter(|&&c| c > 1).count();
    assert!(repeated <= 20, "{repeated} distinct repeated blocks");
}

#[test]
fn verify_backlog_reads_back_during_the_run_and_counts_match_fio() {
    if !have_fio() {
        return;
    }
    // A batch smaller than the backlog leaves blocks for the final read-back: every block is
    // still read back once, as fio does.
    // On the queueing engines the backlog's reads go through the job's queue.
    let mut runs = Vec::new();
    for engine in ["psync", "io_uring", "libaio"] {
        for backlog in [
            vec!["--verify_backlog=16"],
            vec!["--verify_backlog=10", "--verify_backlog_batch=4"],
            vec!["--verify_backlog=7", "--verify_backlog_batch=20"],
        ] {
            let mut a: Vec<String> = backlog.iter().map(|s| s.to_string()).collect();
            a.push(format!("--ioengine={engine}"));
            a.push("--iodepth=8".into());
            runs.push(a);
        }
    }
    for extra in runs {
        let (fd, gd) = (scratch(), scratch());
        let args = |d: &Path| -> Vec<String> {
            let mut a: Vec<String> = [
                "--name=t",
                "--rw=randwrite",
                "--size=1m",
                "--bs=4k",
                "--verify=crc32c",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            a.push(format!("--directory={}", d.display()));
            a.extend(extra.iter().map(|s| s.to_string()));
            a
        };
        let mut f = cmd("fio");
        f.args(args(fd.path()));
        let (f, _, fcode) = json_run(f, fd.path());
        let mut g = iogauge();
        g.args(args(gd.path()));
        let (g, err, gcode) = json_run(g, gd.path());
        assert_eq!((fcode, gcode), (0, 0), "{err}");
        assert_keys_superset(&f, &g);
        assert_counts_equal(&f, &g);
        assert_eq!(n(&g, 0, "read", "total_ios"), 256);
    }
    // A time-based job never reaches the final read-back (fio: "verification read phase will
    // never start"); with a backlog it reads back while it writes.
    let d = scratch();
    let timed = |extra: &[&str]| -> u64 {
        let mut c = iogauge();
        c.args([
            "--name=t",
            "--rw=randwrite",
            "--size=256k",
            "--bs=4k",
            "--verify=md5",
            "--time_based",
            "--runtime=1s",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .args(extra);
        let (g, err, code) = json_run(c, d.path());
        assert_eq!(code, 0, "{err}");
        assert_eq!(g["jobs"][0]["error"], 0);
        n(&g, 0, "read", "total_ios")
    };
    assert_eq!(timed(&[]), 0);
    assert!(timed(&["--verify_backlog=4"]) > 64);
    for engine in ["--ioengine=io_uring", "--ioengine=libaio"] {
        assert!(timed(&["--verify_backlog=4", engine, "--iodepth=8"]) > 64);
    }
}

#[test]
fn verify_backlog_on_a_queueing_engine_catches_a_block_overwritten_during_the_run() {
    // A time-based job never reaches the final read-back: only the backlog's reads, queued
    // between its writes, can see the other job's zeros.
    let d = scratch();
    let job = d.path().join("c.fio");
    for engine in ["io_uring", "libaio"] {
        std::fs::write(
            &job,
            format!(
                "[global]\ndirectory={}\nfilename=shared\nsize=256k\nbs=4k\ntime_based\n\
                 runtime=1\n[verifier]\nioengine={engine}\niodepth=4\nrw=randwrite\n\
                 verify=crc32c\nverify_backlog=4\n[vandal]\nioengine=psync\nrw=write\n\
                 buffer_pattern=0x00\n",
                d.path().display()
            ),
        )
        .unwrap();
        let mut c = iogauge();
        c.arg(&job);
        let (g, err, code) = json_run(c, d.path());
        assert_eq!(code, 1, "{engine}: {err}");
        assert_eq!(g["jobs"][0]["error"], 84, "{engine}");
        assert!(err.contains("bad magic header 0"), "{engine}: {err}");
        assert!(err.contains("func=io_u_queued_complete"), "{engine}: {err}");
        // iogauge removed the file it created.
        assert!(!d.path().join("shared").exists());
    }
}

#[test]
fn verify_only_with_a_mixed_workload_reads_back_the_writes_the_job_made() {
    // The blocks a mixed job writes depend on its random read/write choices, so verify_only
    // reads back what the same tool wrote with the same seed (iogauge's random stream is its
    // own). The dry run counts both directions; the read-back adds one read per written block.
    let run = |tool: &str, dir: &Path, extra: &[&str]| -> (Value, String, i32) {
        let mut c = if tool == "fio" { cmd("fio") } else { iogauge() };
        if tool != "fio" {
            c.arg("--keep-files");
        }
        c.args([
            "--name=t",
            "--rw=randrw",
            "--size=256k",
            "--bs=4k",
            "--verify=crc32c",
            "--randseed=5",
        ])
        .arg(format!("--directory={}", dir.display()))
        .args(extra);
        json_run(c, dir)
    };
    let mut tools = vec!["iogauge"];
    if have_fio() {
        tools.push("fio");
    }
    for tool in tools {
        for engine in ["--ioengine=psync", "--ioengine=io_uring"] {
            let d = scratch();
            let (w, err, code) = run(tool, d.path(), &[engine, "--do_verify=0"]);
            assert_eq!(code, 0, "{tool} {engine}: {err}");
            let writes = n(&w, 0, "write", "total_ios");
            assert!(writes > 10 && writes < 54, "{tool} {engine}: {writes}");
            let (v, err, code) = run(tool, d.path(), &[engine, "--verify_only=1"]);
            assert_eq!(code, 0, "{tool} {engine}: {err}");
            assert_eq!(v["jobs"][0]["error"], 0);
            assert_eq!(n(&v, 0, "write", "total_ios"), writes, "{tool} {engine}");
            assert_eq!(n(&v, 0, "read", "total_ios"), 64, "{tool} {engine}");
            assert_eq!(n(&v, 0, "read", "io_bytes"), 256 << 10, "{tool} {engine}");
            if tool == "fio" {
                continue;
            }
            // A byte changed in every block: the first written block read back fails.
            let f = d.path().join("t.0.0");
            for b in 0..64u64 {
                corrupt(&f, b * 4096 + 2000, &[0x5a]);
            }
            let (v, err, code) = run(tool, d.path(), &[engine, "--verify_only=1"]);
            assert_eq!(code, 1, "{engine}: {err}");
            assert_eq!(v["jobs"][0]["error"], 84, "{engine}");
        }
    }
}

#[test]
fn verify_with_loops_reads_back_after_every_loop_as_fio() {
    // Each loop's written blocks are read back before the next loop: three times the blocks
    // (read back only at the end, the newest write of each block would be read once).
    for extra in [
        vec!["--rw=write"],
        vec!["--rw=randwrite", "--nrfiles=2"],
        vec!["--rw=randrw"],
        vec!["--rw=write", "--ioengine=io_uring", "--iodepth=4"],
        vec!["--rw=randwrite", "--ioengine=libaio", "--iodepth=8"],
        vec![
            "--rw=randwrite",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--verify_backlog=8",
        ],
    ] {
        let run = |tool: &str| {
            let d = scratch();
            let mut c = if tool == "fio" { cmd("fio") } else { iogauge() };
            c.args([
                "--name=t",
                "--size=256k",
                "--bs=4k",
                "--verify=crc32c",
                "--loops=3",
            ])
            .arg(format!("--directory={}", d.path().display()))
            .args(&extra);
            let (j, err, code) = json_run(c, d.path());
            assert_eq!(code, 0, "{tool} {extra:?}: {err}");
            assert_eq!(j["jobs"][0]["error"], 0);
            j
        };
        let g = run("iogauge");
        assert_eq!(n(&g, 0, "read", "total_ios"), 192, "{extra:?}");
        assert_eq!(n(&g, 0, "read", "io_bytes"), 3 * (256 << 10), "{extra:?}");
        if extra[0] != "--rw=randrw" {
            assert_eq!(n(&g, 0, "write", "total_ios"), 192, "{extra:?}");
        }
        if !have_fio() {
            continue;
        }
        let f = run("fio");
        assert_keys_superset(&f, &g);
        if extra[0] == "--rw=randrw" {
            // The random mix splits differently in each tool: every read or write of the
            // three loops plus one read per write.
            assert_eq!(n(&f, 0, "read", "total_ios"), 192);
        } else {
            assert_counts_equal(&f, &g);
        }
    }
}
