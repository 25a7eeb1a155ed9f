//! `iogauge compare` on real runs: a disk throttled with a blkio cgroup is reported worse with an
//! interval that excludes no change; groups of runs go through Mann-Whitney; the outputs and
//! the refusals.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::throttle::Throttle;
use common::*;

use iogauge::report::comparison::{ChangeVerdict, CompareDocument};
use std::path::Path;
use std::process::Output;

fn iogauge(args: &[&str]) -> Output {
    cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .output()
        .unwrap()
}

/// `check sync-iops` for 3 s in `dir` (the whole 3 s: compare keeps runs that stopped early
/// apart from full ones, and wants the intervals), its JSON saved to `out`; `throttle` runs it
/// in a blkio group.
/// The calling test is serial from here on: it compares runs of this disk, which other tests'
/// I/O would slow.
fn sync_iops(dir: &Path, out: &Path, throttle: Option<&Throttle>) {
    serial();
    let check = format!(
        "{} check sync-iops --full --dir {} --duration 3s --scale 0.05 --format json > {}",
        env!("CARGO_BIN_EXE_iogauge"),
        dir.display(),
        out.display()
    );
    let o = match throttle {
        Some(t) => t.sh(&check),
        None => cmd("sh").arg("-c").arg(&check).output().unwrap(),
    };
    assert!(
        [0, 3, 4].contains(&o.status.code().unwrap()),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_throttled_disk_is_worse_with_an_interval_that_excludes_no_change() {
    let d = scratch();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let Some(t) = Throttle::new(&work, "write_iops_device", 100) else {
        return;
    };
    let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
    sync_iops(&work, &a, None);
    sync_iops(&work, &b, Some(&t));
    let o = iogauge(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let doc: CompareDocument = serde_json::from_slice(&o.stdout).unwrap();
    let m = doc
        .metrics
        .iter()
        .find(|m| m.key == "sync-iops/write_iops")
        .unwrap();
    assert_eq!(m.verdict, ChangeVerdict::Worse, "{m:?}");
    let [lo, hi] = m.ci.unwrap();
    assert!(lo <= m.ratio && m.ratio <= hi && hi < 1.0, "{m:?}");
    assert!(doc.notes[0].contains("run-to-run variance was not assessed"));
    // The same comparison reads the same in every format.
    let t = text(&iogauge(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]).stdout);
    // The sentence leads; the table row follows.
    let label = "sync-iops: synchronous write IOPS";
    let mut lines = t.lines().filter(|l| l.starts_with(label));
    let lead = lines.next().unwrap();
    assert!(lead.starts_with(&format!("{label} fell ")), "{t}");
    assert!(lead.ends_with("): worse, 1 run each"), "{t}");
    let row = lines.next().unwrap();
    assert!(row.ends_with("  worse"), "{t}");
    let md = text(
        &iogauge(&[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "markdown",
        ])
        .stdout,
    );
    assert!(
        md.contains("| sync-iops: synchronous write IOPS | "),
        "{md}"
    );
    let csv = text(
        &iogauge(&[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "csv",
        ])
        .stdout,
    );
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("key,label,unit,better,a,b,ratio,ci_low,ci_high,p_value,verdict,noise,note,estimate")
    );
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(row[0], "sync-iops/write_iops");
    assert_eq!(row[10], "worse");
    assert!(row[8].parse::<f64>().unwrap() < 1.0);
    assert_empty(&work);
}

#[test]
fn groups_of_runs_are_compared_by_rank() {
    // Four short null-engine fio runs per side, B limited to a fifth of A's rate: every B run
    // is slower than every A run, so U is extreme and p = 2/70.
    let d = scratch();
    let run = |i: usize, rate: Option<&str>| {
        let f = d.path().join(format!("r{i}.json"));
        let mut args = vec![
            "fio",
            "--name=n",
            "--ioengine=null",
            "--rw=write",
            "--bs=4k",
            "--size=1g",
            "--time_based",
            "--runtime=1",
            "--output-format=json",
        ];
        let r;
        if let Some(x) = rate {
            r = format!("--rate_iops={x}");
            args.push(&r);
        }
        let o = iogauge(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::write(&f, &o.stdout).unwrap();
        f.to_str().unwrap().to_string()
    };
    let a: Vec<String> = (0..4).map(|i| run(i, Some("50000"))).collect();
    let b: Vec<String> = (4..8).map(|i| run(i, Some("10000"))).collect();
    let mut args = vec!["compare", "--format", "json", "--a"];
    args.extend(a.iter().map(String::as_str));
    args.push("--b");
    args.extend(b.iter().map(String::as_str));
    let o = iogauge(&args);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let doc: CompareDocument = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc.method, "Mann-Whitney U");
    let m = &doc.metrics[0];
    assert_eq!(m.key, "n/write/iops");
    assert!((m.p_value.unwrap() - 2.0 / 70.0).abs() < 1e-9, "{m:?}");
    assert!((m.ratio - 0.2).abs() < 0.02, "{m:?}");
    assert_eq!(m.verdict, ChangeVerdict::Worse);
    // The same runs on both sides: no difference.
    let mut args = vec!["compare", "--format", "json", "--a"];
    args.extend(a.iter().map(String::as_str));
    args.push("--b");
    args.extend(a.iter().map(String::as_str));
    let o = iogauge(&args);
    assert_eq!(o.status.code(), Some(0));
    let doc: CompareDocument = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc.metrics[0].verdict, ChangeVerdict::Same);
}

#[test]
fn bad_input_names_the_run_and_the_fix() {
    let d = scratch();
    let notjson = d.path().join("x.txt");
    std::fs::write(&notjson, "PASS etcd").unwrap();
    let other = d.path().join("p.json");
    std::fs::write(&other, r#"{"name": "x"}"#).unwrap();
    let n = notjson.to_str().unwrap();
    let cases: [(&[&str], String); 4] = [
        (
            &["compare", "/nonexistent.json", n],
            "iogauge compare: '/nonexistent.json': No such file or directory (os error 2); expected a saved JSON document (check or kube --format json, fio --output-format=json)\n".into(),
        ),
        (
            &["compare", n, n],
            format!("iogauge compare: '{n}': not JSON (expected value at line 1 column 1); save results with --format json (fio: --output-format=json)\n"),
        ),
        (
            &["compare", other.to_str().unwrap(), other.to_str().unwrap()],
            format!("iogauge compare: {}: not a result iogauge can compare: expected a check, kube or fio JSON document\n", other.display()),
        ),
        (
            &["compare", n],
            "iogauge compare: expected two runs (compare A B) or groups (--a RUN… --b RUN…)\n".into(),
        ),
    ];
    for (args, want) in cases {
        let o = iogauge(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty());
        assert_eq!(text(&o.stderr), want, "{args:?}");
    }
}

#[test]
fn history_ids_name_saved_runs() {
    let d = scratch();
    let db = d.path().join("h.db");
    let db = db.to_str().unwrap();
    for rate in ["50000", "10000"] {
        let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .env_remove("IOGAUGE_NO_HISTORY")
            .args([
                "fio",
                "--name=n",
                "--ioengine=null",
                "--rw=write",
                "--size=1g",
                "--time_based",
                "--runtime=3",
                &format!("--rate_iops={rate}"),
                "--history-db",
                db,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let o = iogauge(&["compare", "1", "2", "--history-db", db, "--format", "json"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let doc: CompareDocument = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (doc.a[0].source.as_str(), doc.b[0].source.as_str()),
        ("#1", "#2")
    );
    let m = &doc.metrics[0];
    assert_eq!(m.key, "n/write/iops");
    assert!((m.ratio - 0.2).abs() < 0.01, "{m:?}");
    assert_eq!(m.verdict, ChangeVerdict::Worse);
    let o = iogauge(&["compare", "1", "7", "--history-db", db]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge compare: no run with id 7 in {db}; 'iogauge history' lists them\n")
    );
}
