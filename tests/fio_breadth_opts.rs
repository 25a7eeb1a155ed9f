//! The last options of fio's files and verify groups against fio 3.33: file regions under
//! filesize=/size=/offset=, unlink_each_loop, openfiles, verify's trim mode (trim_percentage,
//! trim_verify_zero, trim_backlog, trim_backlog_batch), verify_async and experimental_verify's values.
//! Each job file in tests/fixtures/fio/opts-*.fio runs under both tools at a small size;
//! counts are compared, iogauge's JSON must hold every key fio prints, and the behaviour each
//! option exists for is asserted.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

/// Names and sizes of the files in `d`.
fn sizes(d: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect()
}

/// The total_ios of job `j` in direction `d`.
fn ios(v: &Value, j: usize, d: &str) -> u64 {
    u(v, &["jobs", &j.to_string(), d, "total_ios"])
}

#[test]
fn filesize_and_size_regions_after_offset_as_fio() {
    if !have_fio() {
        return;
    }
    let fd = scratch();
    let gd = scratch();
    let f = run_fixture("fio", &[], "opts-filesize-offset.fio", &[], fd.path());
    let g = run_fixture(
        IOGAUGE,
        &["fio", "--keep-files"],
        "opts-filesize-offset.fio",
        &[],
        gd.path(),
    );
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    // The bug this fixes: filesize=256k offset=128k is a 256 KiB file with 8 writes of 16 KiB
    // (not 384 KiB and 16).
    assert_eq!(ios(&g.json, 0, "write"), 8);
    // The files fio lays out, byte for byte the same sizes.
    let (fs, gs) = (sizes(fd.path()), sizes(gd.path()));
    assert_eq!(fs, gs, "file sizes");
    assert_eq!(gs["fsoff.0.0"], 256 << 10);
    assert_eq!(gs["fspct.0.0"], 192 << 10);
    assert_eq!(gs["sizeoff.0.1"], 384 << 10);
    assert_eq!(gs["sizepct.0.0"], 256 << 10);
}

#[test]
fn offset_past_filesize_is_refused() {
    let d = scratch();
    let out = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=t",
            "--filesize=256k",
            "--offset=512k",
            "--bs=4k",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr).trim(),
        format!(
            "iogauge fio: job 't': offset 524288 is past the end of '{}/t.0.0' (262144 bytes); lower offset= or raise filesize=",
            d.path().display()
        )
    );
    assert_empty(d.path());
}

#[test]
fn verify_async_counts_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("opts-verify-async.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    // Every written block read back and checked.
    assert_eq!(
        (ios(&g.json, 0, "write"), ios(&g.json, 0, "read")),
        (64, 64)
    );
    assert_eq!(
        (ios(&g.json, 1, "write"), ios(&g.json, 1, "read")),
        (16, 16)
    );
    assert_eq!(
        g.json["global options"]["verify_async"],
        f.json["global options"]["verify_async"]
    );
    assert_eq!(g.json["global options"]["verify_async"], "2");
}

/// `tool` (fio or iogauge) with a sequential crc32c write job of 16 blocks of 4 KiB in `d`.
fn seq_verify(tool: &str, d: &Path, extra: &[&str]) -> (Value, String, i32) {
    let mut c = if tool == "fio" {
        cmd("fio")
    } else {
        let mut c = cmd(IOGAUGE);
        c.arg("fio");
        c
    };
    let out = c
        .args([
            "--name=t",
            "--rw=write",
            "--size=64k",
            "--bs=4k",
            "--verify=crc32c",
        ])
        .arg(format!("--directory={}", d.display()))
        .args(extra)
        .arg("--output-format=json")
        // fio saves a failed verify's state (local-t-0-verify.state) in its working directory.
        .current_dir(d)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let start = stdout
        .find('{')
        .unwrap_or_else(|| panic!("{tool}: {}", text(&out.stderr)));
    (
        serde_json::from_str(&stdout[start..]).unwrap(),
        text(&out.stderr),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn verify_async_still_catches_a_corrupted_block() {
    if !have_fio() {
        return;
    }
    let d = scratch();
    let (_, err, code) = seq_verify("iogauge", d.path(), &["--do_verify=0", "--keep-files"]);
    assert_eq!(code, 0, "{err}");
    let file = d.path().join("t.0.0");
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
        f.write_all_at(b"XXXX", 8192 + 100).unwrap();
    }
    let only = ["--verify_only=1", "--verify_async=2"];
    let (g, gerr, gcode) = seq_verify("iogauge", d.path(), &only);
    let (f, ferr, fcode) = seq_verify("fio", d.path(), &only);
    assert_eq!((gcode, fcode), (1, 1), "{gerr}\n{ferr}");
    let line = format!(
        "crc32c: verify failed at file {} offset 8192, length 4096",
        file.display()
    );
    assert!(gerr.lines().any(|l| l.starts_with(&line)), "{gerr}");
    assert!(ferr.lines().any(|l| l.starts_with(&line)), "{ferr}");
    assert_eq!(
        (
            g["jobs"][0]["error"].as_u64(),
            f["jobs"][0]["error"].as_u64()
        ),
        (Some(84), Some(84))
    );
    // Inline, the reads stop at the bad block (the third); fio's verify threads let it read
    // on before the failure lands: 3 or 4 blocks on a quiet machine, up to all of them (16)
    // under load.
    assert_eq!(ios(&g, 0, "read"), 3);
    assert!((3..=16).contains(&ios(&f, 0, "read")), "{f}");
}

/// iogauge fio with `args` in a fresh directory: exit code and stderr.
fn refused(args: &[&str]) -> (i32, String) {
    let d = scratch();
    let out = cmd(IOGAUGE)
        .arg("fio")
        .args(args)
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert_empty(d.path());
    (
        out.status.code().unwrap_or(-1),
        text(&out.stderr).trim().to_string(),
    )
}

#[test]
fn bad_values_are_refused_with_the_reason() {
    let base = ["--name=t", "--size=64k", "--verify=crc32c"];
    let with = |o: &str| {
        let mut v = base.to_vec();
        v.push(o);
        refused(&v)
    };
    assert_eq!(
        with("--verify_async=x"),
        (
            2,
            "iogauge fio: --verify_async=x: expected a number of threads, e.g. verify_async=2; got 'x'"
                .to_string()
        )
    );
    assert_eq!(
        with("--experimental_verify=maybe"),
        (
            2,
            "iogauge fio: --experimental_verify=maybe: expected 0 or 1".to_string()
        )
    );
}

#[test]
fn openfiles_at_or_above_nrfiles_counts_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("opts-openfiles.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(ios(&g.json, 0, "write"), 64);
    assert_eq!(ios(&g.json, 1, "write"), 64);
    assert_eq!(ios(&g.json, 2, "read"), 64);
}

#[test]
fn openfiles_below_the_number_of_files_refuses_what_it_does_not_cover() {
    assert_eq!(
        refused(&["--name=t", "--size=64k", "--nrfiles=8", "--openfiles=2", "--ioengine=libaio"]),
        (
            2,
            "iogauge fio: job 't': openfiles=2 below the job's 8 files with ioengine=libaio is not supported by iogauge yet; use a synchronous engine (psync, sync, vsync, pvsync, pvsync2) or drop openfiles"
                .to_string()
        )
    );
    assert_eq!(
        refused(&["--name=t", "--size=64k", "--openfiles=x"]),
        (
            2,
            "iogauge fio: --openfiles=x: expected a number of files, e.g. openfiles=4 (0: all); got 'x'"
                .to_string()
        )
    );
    // fio 3.33's trim verification cannot work on files: refused by name, with the reason.
    for o in [
        "--trim_percentage=10",
        "--trim_backlog=4",
        "--trim_backlog_batch=2",
        "--trim_verify_zero=1",
    ] {
        let name = &o[2..o.find('=').unwrap()];
        let (code, err) = refused(&["--name=t", "--size=64k", o]);
        assert_eq!(code, 2, "{o}");
        assert!(
            err.contains(&format!(
                "option '{name}' cannot work in iogauge: fio 3.33 cannot do it on files either"
            )),
            "{o}: {err}"
        );
    }
}

#[test]
fn unlink_each_loop_counts_match_fio() {
    if !have_fio() {
        return;
    }
    let (f, g) = both("opts-unlink-each-loop.fio", &[]);
    assert_eq!((f.code, g.code), (0, 0), "{}", g.stderr);
    assert_keys_superset(&f.json, &g.json);
    assert_counts_equal(&f.json, &g.json);
    assert_eq!(ios(&g.json, 0, "write"), 45);
    // verify reads back the last loop's blocks, in the files written last.
    assert_eq!(
        (ios(&g.json, 1, "write"), ios(&g.json, 1, "read")),
        (64, 64)
    );
}

#[test]
fn unlink_each_loop_gives_each_loop_a_new_file() {
    // Paced so that the test sees each loop's file: 16 writes per loop at 200 IOPS.
    let d = scratch();
    let file = d.path().join("t.0.0");
    let mut child = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=t",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--loops=3",
            "--rate_iops=200",
            "--unlink_each_loop=1",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&file);
    use std::os::unix::fs::MetadataExt;
    let mut inodes: Vec<u64> = Vec::new();
    while child.try_wait().unwrap().is_none() {
        if let Ok(md) = std::fs::metadata(&file) {
            if inodes.last() != Some(&md.ino()) {
                inodes.push(md.ino());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ios(&v, 0, "write"), 48);
    // Loops 2 and 3 each wrote a new file (a new inode while the old one was still open).
    assert_eq!(inodes.len(), 3, "{inodes:?}");
    assert_empty(d.path());
}

#[test]
fn unlink_each_loop_outside_what_it_covers_is_refused_with_the_reason() {
    let base = [
        "--name=t",
        "--size=64k",
        "--loops=2",
        "--unlink_each_loop=1",
    ];
    let with = |o: &[&str]| {
        let mut v = base.to_vec();
        v.extend_from_slice(o);
        refused(&v)
    };
    assert_eq!(
        with(&["--rw=read"]),
        (2, "iogauge fio: job 't': unlink_each_loop needs a write-only job (rw=write or randwrite): fio 3.33 unlinks the files after the first loop, so the next loop's reads fail (ENOENT for rw=read, EIO on the new empty file for mixed jobs)".to_string())
    );
    assert_eq!(
        with(&["--rw=write", "--ioengine=libaio"]),
        (2, "iogauge fio: job 't': unlink_each_loop with ioengine=libaio is not supported by iogauge yet; use a synchronous engine (psync, sync, vsync, pvsync, pvsync2)".to_string())
    );
    assert_eq!(
        with(&["--rw=randwrite", "--norandommap"]),
        (2, "iogauge fio: job 't': unlink_each_loop with random offsets needs the random map (loops are passes over every block): drop norandommap, random_distribution, random_generator=lfsr or blockalign".to_string())
    );
    assert_eq!(
        with(&["--rw=write", "--filename=f"]),
        (2, "iogauge fio: job 't': unlink_each_loop with filename= is not supported by iogauge yet (the files may be another job's or yours); let iogauge name the files".to_string())
    );
}

#[test]
fn percentages_of_an_existing_file_as_fio() {
    if !have_fio() {
        return;
    }
    // offset=30% of 100 KiB rounds up to 32 KiB; size=50% is 50 KiB of the whole file, in
    // whole blocks: 48 KiB, 3 reads of 16 KiB. Without size=, the rest of the file: 4 reads.
    for (extra, want) in [(None, 4u64), (Some("--size=50%"), 3)] {
        let mut got = Vec::new();
        for tool in ["fio", IOGAUGE] {
            let d = scratch();
            let data: Vec<u8> = (0..100 * 1024u32).map(|i| (i * 7 + 3) as u8).collect();
            std::fs::write(d.path().join("t.0.0"), data).unwrap();
            let mut args = vec![
                "--name=t".to_string(),
                "--rw=read".into(),
                "--bs=16k".into(),
                "--offset=30%".into(),
                format!("--directory={}", d.path().display()),
            ];
            args.extend(extra.map(String::from));
            let pre: &[&str] = if tool == "fio" { &[] } else { &["fio"] };
            let v = run_json(tool, pre, &args, d.path());
            got.push((
                ios(&v, 0, "read"),
                u(&v, &["jobs", "0", "read", "io_bytes"]),
            ));
        }
        assert_eq!(got[0], got[1], "{extra:?}");
        assert_eq!(got[1], (want, want * 16384), "{extra:?}");
    }
}

#[test]
fn openfiles_limit_holds_while_the_job_runs() {
    // nrfiles=4 openfiles=4, paced: the data files iogauge holds open never exceed 4.
    let d = scratch();
    let mut child = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=t",
            "--rw=randwrite",
            "--bs=4k",
            "--size=128k",
            "--nrfiles=4",
            "--openfiles=4",
            "--rate_iops=200",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let fds = format!("/proc/{}/fd", child.id());
    let (mut most, mut seen) = (0, 0);
    while child.try_wait().unwrap().is_none() {
        let open = std::fs::read_dir(&fds)
            .map(|r| {
                r.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                    // The directory itself is held open too (its handle).
                    .filter(|t| {
                        t.starts_with(d.path())
                            && t != d.path()
                            && !t.to_string_lossy().contains(".iogauge")
                    })
                    .count()
            })
            .unwrap_or(0);
        if open > 0 {
            seen += 1;
        }
        most = most.max(open);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        seen > 10,
        "the job's files were seen open only {seen} times"
    );
    assert_eq!(most, 4, "data files open at once");
    assert_empty(d.path());
}
