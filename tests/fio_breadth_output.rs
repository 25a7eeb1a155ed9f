//! The output group against fio 3.33: `kb_base` (how sizes are read, which units the text leads
//! with), `unit_base` (bandwidth in bits) and `--status-interval` (the results so far, every
//! interval). Each job file in tests/fixtures/fio/output-*.fio runs under both tools.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// Key paths fio prints that iogauge does not, except those `skip` accepts.
fn missing_keys(fio: &Value, iog: &Value, skip: impl Fn(&str) -> bool) -> Vec<String> {
    let (mut fk, mut gk) = (BTreeSet::new(), BTreeSet::new());
    key_paths(fio, "", &mut fk);
    key_paths(iog, "", &mut gk);
    fk.difference(&gk).filter(|k| !skip(k)).cloned().collect()
}

/// `program` on the fixture `name` (with `@DIR@` = `dir`) and `flags`; its stdout.
fn run_fixture(program: &str, pre: &[&str], name: &str, flags: &[&str], dir: &Path) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name);
    let job_text = std::fs::read_to_string(&src)
        .unwrap()
        .replace("@DIR@", dir.to_str().unwrap());
    let job = dir.join("job.fio");
    std::fs::write(&job, job_text).unwrap();
    let out = cmd(program)
        .args(pre)
        .arg(&job)
        .args(flags)
        .current_dir(dir)
        .output()
        .expect("spawn");
    std::fs::remove_file(&job).unwrap();
    assert!(
        out.status.success(),
        "{program} {name} {flags:?} failed: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The fixture under fio (None without fio) and under iogauge, each in its own directory.
fn both(name: &str, flags: &[&str]) -> (Option<String>, String) {
    let fio = have_fio().then(|| {
        let fd = scratch();
        run_fixture("fio", &[], name, flags, fd.path())
    });
    let gd = scratch();
    let iog = run_fixture(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        name,
        flags,
        gd.path(),
    );
    assert_empty(gd.path());
    (fio, iog)
}

/// Every JSON document of a stream of them (fio's `--status-interval` output).
fn documents(s: &str) -> Vec<Value> {
    serde_json::Deserializer::from_str(s)
        .into_iter::<Value>()
        .map(|d| d.unwrap_or_else(|e| panic!("not a stream of JSON documents ({e}):\n{s}")))
        .collect()
}

fn counts(doc: &Value) -> Vec<(u64, u64)> {
    doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|j| {
            ["read", "write", "trim"].map(|d| (u(j, &[d, "total_ios"]), u(j, &[d, "io_bytes"])))
        })
        .collect()
}

#[test]
fn kb_base_1000_reads_k_as_1000_and_kib_as_1024() {
    let (fio, iog) = both("output-kb-base.fio", &["--output-format=json"]);
    let g = documents(&iog).remove(0);
    // si: bs=1k size=20k with kb_base=1000 written after them (fio sorts it first).
    assert_eq!(u(&g, &["jobs", "0", "write", "io_bytes"]), 20_000);
    assert_eq!(u(&g, &["jobs", "0", "write", "total_ios"]), 20);
    // kib: 1kib is 1024 under kb_base=1000.
    assert_eq!(u(&g, &["jobs", "1", "write", "io_bytes"]), 10_240);
    assert_eq!(u(&g, &["jobs", "1", "write", "total_ios"]), 10);
    if let Some(f) = fio {
        let f = documents(&f).remove(0);
        assert_eq!(counts(&f), counts(&g), "counts per job and direction");
        let missing = missing_keys(&f, &g, |_| false);
        assert!(
            missing.is_empty(),
            "keys fio prints but iogauge does not: {missing:?}"
        );
    }
}

#[test]
fn kb_base_on_the_command_line_applies_to_what_follows() {
    let gd = scratch();
    let args = |order: &[&str]| -> Vec<String> {
        let mut a = vec![
            "--name=a".into(),
            "--ioengine=null".into(),
            "--rw=read".into(),
        ];
        a.extend(order.iter().map(|s| s.to_string()));
        a
    };
    let bin = env!("CARGO_BIN_EXE_iogauge");
    // As fio 3.33: on the command line, options apply as they come.
    let after = run_json(
        bin,
        &["fio"],
        &args(&["--size=10k", "--bs=1k", "--kb_base=1000"]),
        gd.path(),
    );
    assert_eq!(u(&after, &["jobs", "0", "read", "io_bytes"]), 10_240);
    let before = run_json(
        bin,
        &["fio"],
        &args(&["--kb_base=1000", "--size=10k", "--bs=1kib"]),
        gd.path(),
    );
    assert_eq!(u(&before, &["jobs", "0", "read", "io_bytes"]), 9_216);
    assert_eq!(u(&before, &["jobs", "0", "read", "total_ios"]), 9);
}

/// A text line with its numbers replaced by `#`, so that two runs' lines compare by layout.
fn shape(line: &str) -> String {
    let mut out = String::new();
    for c in line.chars() {
        if c.is_ascii_digit() || c == '.' {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

#[test]
fn unit_base_1_prints_bandwidth_in_bits_and_kb_base_1000_leads_with_si() {
    let (fio, iog) = both("output-unit-base.fio", &["--output-format=normal"]);
    // 500 kB/s = 4000 kbit/s (3906 Kibit/s); the size in kB, then KiB.
    let job = line_with(&iog, "read: IOPS=");
    assert_eq!(
        shape(job),
        "  read: IOPS=#, BW=#kbit/s (#Kibit/s)(#kB/#msec)",
        "{job}"
    );
    let group = line_with(&iog, "READ: bw=");
    assert_eq!(
        shape(group),
        "   READ: bw=#kbit/s (#Kibit/s), #kbit/s-#kbit/s (#Kibit/s-#Kibit/s), io=#kB (#KiB), run=#-#msec",
        "{group}"
    );
    assert!(iog.contains("bs=(R) 1000B-1000B"), "{iog}");
    if let Some(f) = fio {
        for needle in ["read: IOPS=", "READ: bw=", "rw=read, bs="] {
            assert_eq!(
                shape(line_with(&f, needle)),
                shape(line_with(&iog, needle)),
                "{needle}"
            );
        }
        // size=100k under kb_base=1000 is 100000 bytes: 100kB (97.7KiB).
        assert!(line_with(&iog, "READ: bw=").contains("io=100kB (97.7KiB)"));
        assert!(line_with(&f, "READ: bw=").contains("io=100kB (97.7KiB)"));
    }
}

#[test]
fn status_interval_prints_a_json_document_per_interval_then_the_end_report() {
    let flags = ["--status-interval=1", "--output-format=json"];
    let (fio, iog) = both("output-status.fio", &flags);
    let docs = documents(&iog);
    // 2.5 s of I/O: dumps at 1 s and 2 s, then the end report.
    assert_eq!(docs.len(), 3, "documents:\n{iog}");
    let ios: Vec<u64> = docs
        .iter()
        .map(|d| u(d, &["jobs", "0", "read", "total_ios"]))
        .collect();
    assert!(
        ios.windows(2).all(|w| w[0] < w[1]),
        "I/O counts increase: {ios:?}"
    );
    // Paced at 1000 I/Os per second: about 1000 and 2000 at the dumps.
    assert!((800..=1200).contains(&ios[0]), "{ios:?}");
    assert!((1800..=2200).contains(&ios[1]), "{ios:?}");
    assert_eq!(ios[2], 2500);
    // The dumps' latency comes from the snapshot of the last 100 ms boundary: counted, at most
    // the I/Os so far, with percentiles.
    for (d, &n) in docs.iter().zip(&ios) {
        let lat_n = u(d, &["jobs", "0", "read", "clat_ns", "N"]);
        assert!(lat_n > 0 && lat_n <= n, "clat N {lat_n} of {n} I/Os");
        assert!(d["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"].is_u64());
    }
    // The last document is the end report: the same counts as a run without dumps.
    let gd = scratch();
    let plain = documents(&run_fixture(
        env!("CARGO_BIN_EXE_iogauge"),
        &["fio"],
        "output-status.fio",
        &["--output-format=json"],
        gd.path(),
    ))
    .remove(0);
    assert_eq!(counts(&docs[2]), counts(&plain));
    if let Some(f) = fio {
        let fdocs = documents(&f);
        assert_eq!(fdocs.len(), docs.len(), "documents: fio's and iogauge's");
        assert_eq!(counts(fdocs.last().unwrap()), counts(&docs[2]));
        let missing = missing_keys(fdocs.last().unwrap(), &docs[2], |_| false);
        assert!(
            missing.is_empty(),
            "end report: keys fio prints but iogauge does not: {missing:?}"
        );
        let missing = missing_keys(&fdocs[0], &docs[0], |_| false);
        assert!(
            missing.is_empty(),
            "dump: keys fio prints but iogauge does not: {missing:?}"
        );
    }
}

#[test]
fn status_interval_in_text_prints_the_header_once_and_a_results_block_per_interval() {
    let flags = ["--status-interval=1", "--output-format=normal"];
    let (fio, iog) = both("output-status.fio", &flags);
    let blocks = iog.matches("Run status group 0 (all jobs):").count();
    let headers = iog.matches("status: (g=0): rw=read").count();
    assert_eq!((headers, blocks), (1, 3), "{iog}");
    assert!(
        iog.starts_with("status: (g=0)"),
        "the header comes first:\n{iog}"
    );
    assert_eq!(iog.matches("issued rwts: total=").count(), 3, "{iog}");
    assert!(
        iog.contains("issued rwts: total=2500,0,0,0"),
        "the end report:\n{iog}"
    );
    if let Some(f) = fio {
        assert_eq!(
            f.matches("Run status group 0 (all jobs):").count(),
            blocks,
            "{f}"
        );
        assert_eq!(f.matches("status: (g=0): rw=read").count(), 1, "{f}");
    }
}

#[test]
fn bad_values_are_refused_with_the_expected_form() {
    let gd = scratch();
    let run = |a: &[&str]| {
        let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .arg("fio")
            .args(["--name=a", "--ioengine=null", "--size=4k"])
            .args(a)
            .current_dir(gd.path())
            .output()
            .unwrap();
        (out.status.code(), text(&out.stderr))
    };
    let (code, err) = run(&["--kb_base=512"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("kb_base=512: expected 1024 or 1000, e.g. kb_base=1000"),
        "{err}"
    );
    let (code, err) = run(&["--unit_base=2"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("expected 0 (auto: bytes), 8 (bytes) or 1 (bits), e.g. unit_base=1"),
        "{err}"
    );
    let (code, err) = run(&["--status-interval=0"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--status-interval=0: too small; expected at least 1ms"),
        "{err}"
    );
}

/// The JSON document in a tool's stdout (fio may print a note before it).
fn json_doc(out: &str) -> Value {
    serde_json::from_str(&out[out.find('{').unwrap_or(0)..]).unwrap()
}

/// disk_util=0: the job's devices are left out of the disk statistics, as in fio 3.33: no
/// `disk_util` in the JSON and no "Disk stats" in the text when no job reports them; another job
/// on the same device still brings it in.
#[test]
fn disk_util_0_leaves_the_devices_out() {
    if !have_fio() {
        return;
    }
    for program in ["fio", env!("CARGO_BIN_EXE_iogauge")] {
        let d = scratch();
        let dir = format!("--directory={}", d.path().display());
        let base = ["--rw=write", "--bs=4k", "--size=256k"];
        let pre: &[&str] = if program == "fio" { &[] } else { &["fio"] };
        let run = |extra: &[&str], format: &str| {
            let out = cmd(program)
                .args(pre)
                .args(["--name=a", &dir, "--disk_util=0"])
                .args(base)
                .args(extra)
                .arg(format!("--output-format={format}"))
                .current_dir(d.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{program}: {}", text(&out.stderr));
            text(&out.stdout)
        };
        let v = json_doc(&run(&[], "json"));
        assert!(v.get("disk_util").is_none(), "{program}: {v}");
        assert!(!run(&[], "normal").contains("Disk stats"), "{program}");
        // A second job without disk_util=0, on the same directory: the device is back.
        let second = [
            "--name=b",
            dir.as_str(),
            "--disk_util=1",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
        ];
        let v = json_doc(&run(&second, "json"));
        let disks = v["disk_util"].as_array().map_or(0, Vec::len);
        assert!(
            disks >= 1,
            "{program}: the second job's device is reported: {v}"
        );
    }
}
