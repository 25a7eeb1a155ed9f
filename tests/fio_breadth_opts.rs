//! The last options of fio's files and verify groups against fio 3.33: file regions under
//! filesize=/size=/offset=, unlink_each_loop, openfiles, verify's trim mode (trim_percentage,
//! trim_verify_zero, trim_backlog, trim_backlog_batch), verify_async and experimental_verify.
//! Each job file in tests/fixtures/fio/opts-*.fio runs under both tools at a small size;
//! counts are compared, iogauge's JSON must hold every key fio prints, and the behaviour each
//! option exists for is asserted.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One run: exit code, the JSON document on stdout (fio prints error lines before it), stderr.
struct Out {
    code: i32,
    json: Value,
    stderr: String,
}

/// The fixture `name` with `@DIR@` (and `subst`) replaced, written into `dir`, run by
/// `program` (with `pre` before the job file) there.
fn run_fixture(program: &str, pre: &[&str], name: &str, subst: &[(&str, &str)], dir: &Path) -> Out {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name);
    let mut job_text = std::fs::read_to_string(&src).unwrap();
    job_text = job_text.replace("@DIR@", dir.to_str().unwrap());
    for (k, v) in subst {
        job_text = job_text.replace(k, v);
    }
    let job = dir.join("job.fio");
    std::fs::write(&job, job_text).unwrap();
    let out = cmd(program)
        .args(pre)
        .arg(&job)
        .arg("--output-format=json")
        .current_dir(dir)
        .output()
        .expect("spawn");
    std::fs::remove_file(&job).unwrap();
    let stdout = text(&out.stdout);
    let start = stdout.find('{').unwrap_or_else(|| {
        panic!(
            "{program}: no JSON on stdout: {stdout}\n{}",
            text(&out.stderr)
        )
    });
    Out {
        code: out.status.code().unwrap_or(-1),
        json: serde_json::from_str(&stdout[start..]).unwrap(),
        stderr: text(&out.stderr),
    }
}

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

/// The fixture under fio and under iogauge (each in its own directory, iogauge's left empty).
fn both(name: &str, subst: &[(&str, &str)]) -> (Out, Out) {
    let fd = scratch();
    let gd = scratch();
    let fio = run_fixture("fio", &[], name, subst, fd.path());
    let iog = run_fixture(IOGAUGE, &["fio"], name, subst, gd.path());
    assert_empty(gd.path());
    (fio, iog)
}

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

fn assert_counts_equal(fio: &Value, iog: &Value) {
    let fj = fio["jobs"].as_array().unwrap();
    let gj = iog["jobs"].as_array().unwrap();
    assert_eq!(fj.len(), gj.len(), "number of job entries");
    for (f, g) in fj.iter().zip(gj) {
        for d in ["read", "write", "trim"] {
            assert_eq!(
                (f["jobname"].as_str(), u(f, &[d, "total_ios"])),
                (g["jobname"].as_str(), u(g, &[d, "total_ios"])),
                "{d} total_ios"
            );
            assert_eq!(
                u(f, &[d, "io_bytes"]),
                u(g, &[d, "io_bytes"]),
                "{} {d} io_bytes",
                f["jobname"]
            );
        }
    }
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
