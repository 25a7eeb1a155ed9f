//! Issue 21, documents and text output: result documents whose schema this iogauge does not
//! know are refused (report, compare), documents are read up to a size cap, CSV cells that a
//! spreadsheet would run as formulas are neutralised, control characters in names are shown
//! escaped in every text output, charts stay finite for any finite number, and big documents
//! render into a bounded page.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::path::Path;
use std::process::{Output, Stdio};

fn iogauge_in(dir: &Path, args: &[&str]) -> Output {
    cmd(env!("CARGO_BIN_EXE_iogauge"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A minimal check document of schema `version` (a JSON value, as written).
fn check_doc(version: &str) -> String {
    format!(
        r#"{{"schema_version": {version}, "iogauge": "0.1.0",
        "context": {{"iogauge": "0.1.0", "hostname": "h", "kernel": "6", "directory": null,
                     "filesystem": null, "device": null}},
        "dir": "/d", "profiles": [],
        "summary": {{"passed": 0, "warned": 0, "failed": 0, "errors": 0, "interrupted": 0, "skipped": 0}}}}"#
    )
}

const EXPECTED: &str = "this iogauge (0.1.0) reads schema_version 1; read it with the iogauge \
                        version that wrote it (its \"iogauge\" field)";

#[test]
fn unknown_schema_versions_are_refused_by_report_and_compare() {
    let d = scratch();
    for (version, shown) in [
        ("0", "0"),
        ("2", "2"),
        ("999", "999"),
        ("\"1\"", "\"1\""),
        ("-1", "-1"),
    ] {
        std::fs::write(d.path().join("r.json"), check_doc(version)).unwrap();
        let o = iogauge_in(d.path(), &["report", "r.json", "-o", "r.html"]);
        assert_eq!(o.status.code(), Some(2), "{version}");
        assert_eq!(
            text(&o.stderr),
            format!(
                "iogauge report: r.json: looks like a check document but schema_version is \
                 {shown}; {EXPECTED}\n"
            )
        );
        assert!(!d.path().join("r.html").exists());
        let o = iogauge_in(d.path(), &["compare", "r.json", "r.json"]);
        assert_eq!(o.status.code(), Some(2), "{version}");
        assert_eq!(
            text(&o.stderr),
            format!("iogauge compare: r.json: a check document, but schema_version is {shown}; {EXPECTED}\n")
        );
        assert!(o.stdout.is_empty());
    }
    // The version this iogauge writes still renders.
    std::fs::write(d.path().join("r.json"), check_doc("1")).unwrap();
    let o = iogauge_in(d.path(), &["report", "r.json", "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    // A kube document's version, and those of the pods' check documents inside it.
    let kube = |top: &str, inner: &str| {
        format!(
            r#"{{"schema_version": {top}, "iogauge": "0.1.0", "run_id": "r", "cluster": "c",
            "namespace": "n", "profiles": ["etcd"], "targets": [{{"target": "node a",
            "kind": "node", "storage_class": null, "provisioner": null,
            "volume_binding_mode": null, "claim": null, "claim_size": null, "node": "a",
            "host_path": "/x", "job": "j", "status": "completed", "reason": null,
            "check": {}}}],
            "summary": {{"passed": 0, "warned": 0, "failed": 0, "errors": 0, "interrupted": 0, "skipped": 0}}}}"#,
            check_doc(inner)
        )
    };
    std::fs::write(d.path().join("k.json"), kube("7", "1")).unwrap();
    let o = iogauge_in(d.path(), &["report", "k.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge report: k.json: looks like a kube check document but schema_version is 7; {EXPECTED}\n")
    );
    std::fs::write(d.path().join("k.json"), kube("1", "3")).unwrap();
    let o = iogauge_in(d.path(), &["report", "k.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(
            "iogauge report: k.json: looks like a kube check document but does not parse: \
             schema_version is 3; this iogauge (0.1.0) reads schema_version 1"
        ),
        "{err}"
    );
    std::fs::write(d.path().join("k.json"), kube("1", "1")).unwrap();
    let o = iogauge_in(d.path(), &["report", "k.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn fio_json_that_is_not_fios_shape_is_refused() {
    let d = scratch();
    for (doc, why) in [
        (
            r#"{"fio version":1,"jobs":5}"#,
            "\"fio version\" is 1; expected fio's version string such as \"fio-3.33\" (or \
             iogauge's, \"iogauge-0.1.0\"), as fio --output-format=json writes it",
        ),
        (
            r#"{"fio version":"fio-3.33","jobs":5}"#,
            "\"jobs\" is not a list; expected fio's list of jobs, as fio --output-format=json \
             writes it",
        ),
        (
            r#"{"fio version":"fio-3.33","jobs":[{"jobname":"a"},{}]}"#,
            "jobs[1] has no \"jobname\" string; expected a job as fio --output-format=json \
             writes it",
        ),
    ] {
        std::fs::write(d.path().join("f.json"), doc).unwrap();
        let o = iogauge_in(d.path(), &["report", "f.json"]);
        assert_eq!(o.status.code(), Some(2), "{doc}");
        assert!(o.stdout.is_empty(), "{doc}: nothing rendered");
        assert_eq!(
            text(&o.stderr),
            format!("iogauge report: f.json: looks like fio's JSON output but {why}\n")
        );
        let o = iogauge_in(d.path(), &["compare", "f.json", "f.json"]);
        assert_eq!(o.status.code(), Some(2), "{doc}");
        assert_eq!(
            text(&o.stderr),
            format!("iogauge compare: f.json: fio's JSON output, but {why}\n")
        );
    }
}

#[test]
fn documents_are_read_up_to_a_cap() {
    let d = scratch();
    // /dev/zero never ends: refused after the cap instead of growing until the OOM killer.
    let t0 = std::time::Instant::now();
    let o = iogauge_in(d.path(), &["report", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge report: cannot read /dev/zero: larger than 256 MiB, the most a result document \
         may be; is it the right file?\n"
    );
    assert!(t0.elapsed().as_secs() < 30);
    // A regular file over the cap is refused by its size, before reading (sparse: no disk used).
    let big = d.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((256 << 20) + 1)
        .unwrap();
    let o = iogauge_in(d.path(), &["compare", "big.json", "big.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge compare: 'big.json': larger than 256 MiB, the most a result document may be; \
         is it the right file?; expected a saved JSON document (check or kube --format json, \
         fio --output-format=json)\n"
    );
}

/// A fio JSON document with one job named `name` that wrote for 10 intervals.
fn fio_doc(name: &str) -> String {
    let series: Vec<String> = (1..=10)
        .map(|i| format!("[{}, {}]", i * 500, 1000 + i % 3))
        .collect();
    let job = serde_json::json!({
        "jobname": name, "groupid": 0, "error": 0,
        "job options": {"name": name, "rw": "write"},
        "read": {"total_ios": 0}, "trim": {"total_ios": 0},
        "write": {"total_ios": 1000, "iops": 1000.0, "bw": 4000.0, "io_bytes": 4096000,
                  "clat_ns": {"N": 1000, "mean": 1e5, "max": 2e5,
                              "percentile": {"50.000000": 100000, "99.000000": 200000}},
                  "iogauge": {"iops_series": serde_json::from_str::<serde_json::Value>(
                      &format!("[{}]", series.join(","))).unwrap()}}
    });
    serde_json::json!({"fio version": "fio-3.33", "timestamp": 0, "jobs": [job]}).to_string()
}

/// The cells of one CSV line (RFC 4180: quotes around a cell, doubled inside).
fn csv_cells(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) =
        (Vec::new(), String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

const FORMULA: &str = "=HYPERLINK(\"http://evil.example/\",\"click\")";

#[test]
fn compare_csv_neutralises_formula_cells() {
    let d = scratch();
    std::fs::write(d.path().join("a.json"), fio_doc(FORMULA)).unwrap();
    let o = iogauge_in(
        d.path(),
        &["compare", "a.json", "a.json", "--format", "csv"],
    );
    // 4: the latencies have no per-interval data, so they cannot be judged.
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let row = out.lines().nth(1).unwrap();
    assert!(
        row.starts_with(
            "\"'=HYPERLINK(\"\"http://evil.example/\"\",\"\"click\"\")/write/iops\",\
             \"'=HYPERLINK(\"\"http://evil.example/\"\",\"\"click\"\"): write IOPS\",IOPS,higher,"
        ),
        "{out}"
    );
    // No cell starts like a formula once the quotes are read; numbers stay numbers.
    for line in out.lines() {
        for c in csv_cells(line) {
            assert!(
                !c.starts_with(['=', '+', '@', '\t', '\r']),
                "{c:?} in {line}"
            );
            assert!(!c.starts_with('-') || c.parse::<f64>().is_ok(), "{c:?}");
        }
    }
}

#[test]
fn check_csv_neutralises_formula_cells_and_keeps_numbers() {
    let d = scratch();
    // The directory is a CSV cell too; given relative, it is shown absolute (issue 22), so it
    // no longer starts like a formula (its last component still would).
    let dir = d.path().join("@SUM(1+1)");
    std::fs::create_dir(&dir).unwrap();
    let profile = d.path().join("p.yaml");
    std::fs::write(
        &profile,
        format!(
            "name: -db\ntitle: t\nworkload: [rw=write, ioengine=sync, fdatasync=1, bs=4k, size=256k]\n\
             metrics:\n  - {{key: sync_p99, label: '{FORMULA}', better: lower, pass: 10s, source: '+cmd|calc'}}\n"
        ),
    )
    .unwrap();
    let o = iogauge_in(
        d.path(),
        &["check", "p.yaml", "--dir", "@SUM(1+1)", "--format", "csv"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let cells = csv_cells(out.lines().nth(1).unwrap());
    assert_eq!(cells[0], "'-db");
    assert_eq!(cells[3], format!("'{FORMULA}"));
    assert_eq!(cells[9], "'+cmd|calc");
    assert_eq!(cells[14], dir.to_str().unwrap());
    assert!(cells[4].parse::<f64>().unwrap() > 0.0, "{cells:?}");
    assert_empty(&dir);
}

const ESC_NAME: &str = "\x1b]0;pwned\x07\x1b[2J";
const ESC_SHOWN: &str = "\\x1b]0;pwned\\x07\\x1b[2J";

#[test]
fn a_fio_job_named_with_escapes_prints_no_escape_byte() {
    let d = scratch();
    let name_arg = format!("--name={ESC_NAME}");
    let dir_arg = format!("--directory={}", d.path().display());
    let o = iogauge_in(
        d.path(),
        &[
            "fio",
            &name_arg,
            &dir_arg,
            "--rw=write",
            "--bs=4k",
            "--size=64k",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!o.stdout.contains(&0x1b), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!("{ESC_SHOWN}: (g=0): rw=write")),
        "{out}"
    );
    assert!(out.contains(&format!("{ESC_SHOWN}: (groupid=0")), "{out}");
    // JSON output escapes it as JSON does.
    let o = iogauge_in(
        d.path(),
        &[
            "fio",
            &name_arg,
            &dir_arg,
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!o.stdout.contains(&0x1b));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["jobname"], ESC_NAME);
    assert_empty_but(d.path(), &[]);

    // compare's text names the job; the same escapes.
    std::fs::write(d.path().join("a.json"), fio_doc(ESC_NAME)).unwrap();
    let o = iogauge_in(d.path(), &["compare", "a.json", "a.json"]);
    // 4: the latencies have no per-interval data, so they cannot be judged.
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert!(!o.stdout.contains(&0x1b), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains(&format!("{ESC_SHOWN}: write IOPS")));
    let o = iogauge_in(
        d.path(),
        &["compare", "a.json", "a.json", "--format", "markdown"],
    );
    assert!(!o.stdout.contains(&0x1b), "{}", text(&o.stdout));
}

/// Only `keep` are left in `d`.
fn assert_empty_but(d: &Path, keep: &[&str]) {
    let left: Vec<String> = files_in(d)
        .into_iter()
        .filter(|f| !keep.contains(&f.as_str()))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn check_text_and_history_show_escapes_not_obeyed() {
    let d = scratch();
    // The directory's name carries escapes too: the history lists it as the target.
    let data = d.path().join("data\x1b[2J");
    std::fs::create_dir(&data).unwrap();
    let profile = d.path().join("p.yaml");
    std::fs::write(
        &profile,
        "name: esc\ntitle: \"\\e]0;pwned\\a\\e[2J\"\nworkload: [rw=write, ioengine=sync, fdatasync=1, bs=4k, size=256k]\n\
         metrics:\n  - {key: sync_p99, label: \"p99 \\e[31m\", better: lower, pass: 10s, source: \"s\\x9b2J\"}\n",
    )
    .unwrap();
    let db = d.path().join("h.db");
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .env_remove("IOGAUGE_NO_HISTORY")
        .current_dir(d.path())
        .args(["check", "p.yaml", "--dir", "data\x1b[2J", "--history-db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(!o.stdout.contains(&0x1b), "{out}");
    // 64 syncs cannot decide a p99 early: the run says so, with the label's escapes shown.
    assert!(
        out.starts_with(&format!(
            "PASS esc: {ESC_SHOWN}\n  ran the full recipe (64 I/Os in "
        )),
        "{out}"
    );
    assert!(
        out.contains("against p99 \\x1b[31m 10 s (within 10 % of it, or too few samples to tell)\n  PASS  p99 \\x1b[31m "),
        "{out}"
    );
    assert!(out.contains("        source: s\\u{9b}2J\n"), "{out}");
    // The saved run, listed and shown again.
    for args in [&["history"][..], &["history", "show", "1"][..]] {
        let o = iogauge_in(
            d.path(),
            &[args, &["--history-db", db.to_str().unwrap()]].concat(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(!o.stdout.contains(&0x1b), "{}", text(&o.stdout));
        assert!(text(&o.stdout).contains("\\x1b["), "{}", text(&o.stdout));
    }
    // A stored document of a schema this iogauge does not know is refused, not rendered.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("UPDATE runs SET document = json_set(document, '$.schema_version', 2);")
        .unwrap();
    drop(c);
    let o = iogauge_in(
        d.path(),
        &["history", "show", "1", "--history-db", db.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    assert!(
        text(&o.stderr).contains("schema_version")
            && text(&o.stderr)
                .contains("'iogauge history show 1 --format json' prints it as stored"),
        "{}",
        text(&o.stderr)
    );
}

/// `kube check --dry-run` with one argument changed; (exit code, stdout, stderr).
fn kube_dry_run(extra: &[&str]) -> (i32, String, String) {
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "kube",
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--image",
            "registry.example/iogauge:0.1",
            "--dry-run",
        ])
        .args(extra)
        .env_remove("IOGAUGE_IMAGE")
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

#[test]
fn kube_dry_run_refuses_names_and_sizes_the_api_server_would() {
    let subdomain = "1 to 253 lowercase letters, digits, '-' and '.', each part between dots \
                     starting and ending with a letter or digit";
    let long_ns = "a".repeat(64);
    let long_sa = "a".repeat(254);
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["-n", "Bad_NS"],
            "iogauge kube check: --namespace 'Bad_NS': expected a namespace name: 1 to 63 \
             lowercase letters, digits and '-', starting and ending with a letter or digit, e.g. \
             storage-tests\n"
                .into(),
        ),
        (
            vec!["--namespace", &long_ns],
            format!("iogauge kube check: --namespace '{long_ns}': expected a namespace name: 1 to 63 lowercase letters, digits and '-', starting and ending with a letter or digit, e.g. storage-tests\n"),
        ),
        (
            vec!["--namespace", "a.b"],
            "iogauge kube check: --namespace 'a.b': expected a namespace name: 1 to 63 lowercase \
             letters, digits and '-', starting and ending with a letter or digit, e.g. \
             storage-tests\n"
                .into(),
        ),
        (
            vec!["--service-account", "UP"],
            format!("iogauge kube check: --service-account 'UP': expected a service account name: {subdomain}, e.g. iogauge\n"),
        ),
        (
            vec!["--service-account", &long_sa],
            format!("iogauge kube check: --service-account '{long_sa}': expected a service account name: {subdomain}, e.g. iogauge\n"),
        ),
        (
            vec!["--service-account", "a..b"],
            format!("iogauge kube check: --service-account 'a..b': expected a service account name: {subdomain}, e.g. iogauge\n"),
        ),
        (
            vec!["--image-pull-secret", ""],
            format!("iogauge kube check: --image-pull-secret '': expected a secret name: {subdomain}, e.g. regcred\n"),
        ),
        (
            vec!["--image-pull-secret", "ok", "--image-pull-secret", "Regcred"],
            format!("iogauge kube check: --image-pull-secret 'Regcred': expected a secret name: {subdomain}, e.g. regcred\n"),
        ),
        (
            vec!["--claim-size=1Ei"],
            "error: invalid value '1Ei' for '--claim-size <QUANTITY>': '1Ei' is larger than 1Pi, the \
             most a claim may ask for here; e.g. 20Gi\n"
                .into(),
        ),
        (
            vec!["--claim-size=9007199254740993"],
            "error: invalid value '9007199254740993' for '--claim-size <QUANTITY>': \
             '9007199254740993' is larger than 1Pi, the most a claim may ask for here; e.g. 20Gi\n"
                .into(),
        ),
    ];
    for (extra, want) in cases {
        let (rc, out, err) = kube_dry_run(&extra);
        assert_eq!(rc, 2, "{extra:?}: {err}");
        assert!(out.is_empty(), "{extra:?}: no manifest printed: {out}");
        let first = err.split_once("\n\n").map_or(err.as_str(), |(a, _)| a);
        assert_eq!(first.trim_end(), want.trim_end(), "{extra:?}");
    }
    // The same names as the API server takes them, and the largest size, still print.
    let (rc, out, err) = kube_dry_run(&[
        "-n",
        "storage-tests",
        "--service-account",
        "iogauge.runner",
        "--image-pull-secret",
        "regcred-1",
        "--claim-size=1Pi",
    ]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("namespace: storage-tests"), "{out}");
    assert!(out.contains("serviceAccountName: iogauge.runner"), "{out}");
    assert!(out.contains("- name: regcred-1"), "{out}");
    assert!(out.contains("storage: 1024Ti"), "{out}");
    // cleanup checks the namespace too.
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "cleanup", "-n", "Bad_NS"])
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("iogauge kube cleanup: --namespace 'Bad_NS': "));
}

/// `v` times `k`, kept finite (as any number a JSON document can hold is).
fn finite(v: f64, k: f64) -> f64 {
    let x = v * k;
    if x.is_finite() {
        x
    } else {
        v.signum() * f64::MAX
    }
}

/// A fio JSON document whose every latency, rate and series value is `v` (or a small multiple).
fn fio_doc_of(v: f64) -> serde_json::Value {
    let series: Vec<serde_json::Value> = (1..=10)
        .map(|i| serde_json::json!([i * 500, finite(v, f64::from(1 + i % 3))]))
        .collect();
    let lat = serde_json::json!({"N": 10, "mean": v, "max": v, "min": v,
        "percentile": {"1.000000": v, "50.000000": v, "99.000000": v, "99.900000": v}});
    serde_json::json!({"fio version": "fio-3.33", "timestamp": 0, "jobs": [{
        "jobname": "j", "groupid": 0, "error": 0, "job options": {"name": "j", "rw": "randrw"},
        "read": {"total_ios": 10, "iops": v, "bw": v, "io_bytes": 10, "clat_ns": lat,
                 "iogauge": {"bw_series": series, "iops_series": series,
                             "lat_intervals": {"interval_ms": 100, "latency": "clat",
                                "intervals": [[100, [[v, 5], [finite(v, 2.0), 5]]], [200, [[v, 3]]]]}}},
        "write": {"total_ios": 0}, "trim": {"total_ios": 0},
        "sync": {"total_ios": 3, "lat_ns": lat},
        "latency_us": {"2": v, "4": 50.0}, "latency_ms": {"2": v}}]})
}

/// Every number in `doc` replaced by `v`.
fn every_number(doc: &mut serde_json::Value, v: f64) {
    match doc {
        serde_json::Value::Number(_) => *doc = serde_json::json!(v),
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| every_number(x, v)),
        serde_json::Value::Object(o) => o.values_mut().for_each(|x| every_number(x, v)),
        _ => {}
    }
}

/// No NaN or infinity anywhere in a page: not in a coordinate, not in a label.
fn assert_finite_page(html: &str, what: &str) {
    assert!(!html.contains("NaN"), "{what}: NaN in the page");
    for (i, _) in html.match_indices("inf") {
        let before = html[..i].chars().next_back().unwrap_or(' ');
        let after = html[i + 3..].chars().next().unwrap_or(' ');
        assert!(
            before.is_alphabetic() || after.is_alphabetic(),
            "{what}: 'inf' in the page at {i}: {}",
            &html[i.saturating_sub(80)..(i + 20).min(html.len())]
        );
    }
}

const EXTREMES: [f64; 7] = [5e-324, 1e-310, 1e308, f64::MAX, -5.0, -1e308, 0.0];

#[test]
fn charts_stay_finite_for_any_finite_number() {
    let d = scratch();
    // fio's JSON, with each extreme alone and all of them in one document's jobs.
    let mut all = fio_doc_of(1.0);
    for (i, v) in EXTREMES.iter().enumerate() {
        let doc = fio_doc_of(*v);
        let mut job = doc["jobs"][0].clone();
        job["jobname"] = format!("j{i}").into();
        all["jobs"].as_array_mut().unwrap().push(job);
        std::fs::write(d.path().join("f.json"), doc.to_string()).unwrap();
        let o = iogauge_in(d.path(), &["report", "f.json"]);
        assert_eq!(o.status.code(), Some(0), "{v}: {}", text(&o.stderr));
        assert_finite_page(&text(&o.stdout), &format!("fio {v:e}"));
    }
    std::fs::write(d.path().join("f.json"), all.to_string()).unwrap();
    let o = iogauge_in(d.path(), &["report", "f.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_finite_page(&text(&o.stdout), "fio, every extreme");

    // A real check document with its numbers replaced: metric, thresholds, references, report.
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(
        d.path().join("p.yaml"),
        "name: p\ntitle: t\nworkload: [rw=write, ioengine=sync, fdatasync=1, bs=4k, size=256k]\n\
         metrics:\n  - {key: sync_p99, label: p99, better: lower, pass: 10s, warn: 20s, source: s}\n\
         references:\n  - {system: a, sync_p99: 1ms}\n  - {system: b, sync_p99: 2ms}\n",
    )
    .unwrap();
    let o = iogauge_in(
        d.path(),
        &["check", "p.yaml", "--dir", "data", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let check: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for v in EXTREMES {
        let mut doc = check.clone();
        let p = &mut doc["profiles"][0];
        every_number(&mut p["report"], v);
        every_number(&mut p["metrics"][0]["references"], v);
        for k in ["value", "threshold", "warn_threshold"] {
            p["metrics"][0][k] = v.into();
        }
        p["value"] = v.into();
        std::fs::write(d.path().join("c.json"), doc.to_string()).unwrap();
        let o = iogauge_in(d.path(), &["report", "c.json"]);
        assert_eq!(o.status.code(), Some(0), "{v}: {}", text(&o.stderr));
        assert_finite_page(&text(&o.stdout), &format!("check {v:e}"));
    }

    // A comparison whose ratios and intervals are extreme (its forest plot is log-scaled).
    for v in EXTREMES {
        let cmp = serde_json::json!({"schema_version": 1, "iogauge": "0.1.0",
            "a": [{"source": "a", "kind": "fio", "host": null, "target": null}],
            "b": [{"source": "b", "kind": "fio", "host": null, "target": null}],
            "method": "within-run block bootstrap", "notes": [], "unmatched": [],
            "metrics": [{"key": "k", "label": "l", "unit": "ns", "better": "lower", "a": v,
                "b": 1.0, "a_values": [v], "b_values": [1.0], "ratio": v, "ci": [v, finite(v, 2.0)],
                "p_value": null, "verdict": "unknown", "noise": 0.1, "note": null},
                {"key": "k2", "label": "l2", "unit": "IOPS", "better": "higher", "a": 1.0,
                "b": v, "a_values": [1.0], "b_values": [v], "ratio": 1.0, "ci": [v, 1.0],
                "p_value": null, "verdict": "unknown", "noise": 0.1, "note": null}]});
        std::fs::write(d.path().join("m.json"), cmp.to_string()).unwrap();
        let o = iogauge_in(d.path(), &["report", "m.json"]);
        assert_eq!(o.status.code(), Some(0), "{v}: {}", text(&o.stderr));
        assert_finite_page(&text(&o.stdout), &format!("compare {v:e}"));
    }
}

#[test]
fn a_big_fio_document_makes_a_bounded_page() {
    let d = scratch();
    // 300 jobs (as numjobs=300 without group_reporting writes them), the first with 200,000
    // periodic samples per series and 5,000 latency intervals: ~7 MB of JSON.
    let mut doc = fio_doc_of(1000.0);
    let first = doc["jobs"][0].clone();
    let jobs = doc["jobs"].as_array_mut().unwrap();
    for i in 1..300 {
        let mut j = first.clone();
        j["jobname"] = format!("j{i}").into();
        jobs.push(j);
    }
    let series: Vec<serde_json::Value> = (1..=200_000u64)
        .map(|i| serde_json::json!([i * 500, 1000 + i % 97]))
        .collect();
    let intervals: Vec<serde_json::Value> = (1..=5_000u64)
        .map(|i| serde_json::json!([i * 100, [[1000 + i % 50, 7], [90_000, 1]]]))
        .collect();
    let ig = &mut jobs[0]["read"]["iogauge"];
    ig["bw_series"] = series.clone().into();
    ig["iops_series"] = series.into();
    ig["lat_intervals"]["intervals"] = intervals.into();
    let text = doc.to_string();
    assert!(text.len() > 6 << 20, "{}", text.len());
    std::fs::write(d.path().join("big.json"), text).unwrap();
    let o = iogauge_in(d.path(), &["report", "big.json", "-o", "big.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", text_of(&o));
    let page = std::fs::read_to_string(d.path().join("big.html")).unwrap();
    // Every job's numbers, the first 64 with charts, each line thinned to 600 points.
    assert!(page.len() < 4 << 20, "page of {} bytes", page.len());
    assert!(page.contains("<h2>Job j299</h2>"));
    assert!(page
        .contains("300 jobs: the first 64 with their charts, the others with their numbers only"));
    assert!(page.contains("Drawn from 600 points per line of up to"));
    assert_finite_page(&page, "big");
}

fn text_of(o: &Output) -> String {
    text(&o.stderr)
}

// --- a profile's fio report (issue 24, item 7) ---

/// A check document whose profile carries a fio report without what iogauge reads of one (named
/// jobs) is refused by `report` and `compare` with the report's own fault, naming the file; the
/// same document with a well-formed report renders.
#[test]
fn a_profiles_fio_report_is_checked_when_read() {
    let d = scratch();
    let doc = |job: &str| {
        let mut v: serde_json::Value = serde_json::from_str(&check_doc("1")).unwrap();
        v["profiles"] = serde_json::json!([{
            "profile": "etcd", "title": "etcd WAL", "verdict": "error", "metric": null,
            "value": null, "unit": null, "threshold": null, "source": null, "references": null,
            "metrics": [], "info": [], "shortened": false, "not_disk": null, "warnings": [],
            "reason": "stopped", "advice": [], "job": null, "partial": false, "io_error": null,
            "report": serde_json::from_str::<serde_json::Value>(
                &format!(r#"{{"fio version": "iogauge-0.1.0", "jobs": [{job}]}}"#)).unwrap(),
        }]);
        v.to_string()
    };
    std::fs::write(d.path().join("r.json"), doc(r#"{"name": "etcd"}"#)).unwrap();
    let o = iogauge_in(d.path(), &["report", "r.json", "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text_of(&o),
        "iogauge report: r.json: looks like a check document but does not parse: jobs[0] has \
         no \"jobname\" string; expected a job as fio --output-format=json writes it\n"
    );
    let o = iogauge_in(d.path(), &["compare", "r.json", "r.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text_of(&o),
        "iogauge compare: r.json: not a check document: jobs[0] has no \"jobname\" string; \
         expected a job as fio --output-format=json writes it\n"
    );
    std::fs::write(d.path().join("r.json"), doc(r#"{"jobname": "etcd"}"#)).unwrap();
    let o = iogauge_in(d.path(), &["report", "r.json", "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", text_of(&o));
}
