//! The HTML report in a real browser: pages from a real check run (`--report`), from
//! `iogauge report` of the saved JSON, from a kube document and from an `iogauge fio` run are
//! opened by headless Chromium, offline; the DOM must hold every chart with its title and the
//! verdict, the files must reference nothing outside themselves, and screenshots at desktop and
//! phone widths are saved under target/html-report/ for people to look at.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::{cmd, scratch, text};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn iogauge(args: &[&str]) -> Output {
    cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(args)
        .output()
        .unwrap()
}

/// Where screenshots and pages are kept for humans: target/html-report/.
fn keep_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("html-report");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether Chromium can run (see `common::have_tool`).
fn have_chromium() -> bool {
    common::have_tool("chromium", "apt-get install -y chromium")
}

/// Chromium, headless and offline: every host name resolves to nothing, no background fetches.
fn chromium(page: &Path, extra: &[String]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--host-resolver-rules=MAP * ~NOTFOUND")
        .args(extra)
        .arg(format!("file://{}", page.canonicalize().unwrap().display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        text(&out.stderr)
    );
    out
}

fn dump_dom(page: &Path) -> String {
    text(&chromium(page, &["--dump-dom".into()]).stdout)
}

/// A PNG of the page at `width`×`height`, kept under target/html-report/.
fn screenshot(page: &Path, name: &str, width: u32, height: u32) {
    let png = keep_dir().join(name);
    let _ = std::fs::remove_file(&png);
    chromium(
        page,
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size={width},{height}"),
        ],
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{name} is not a PNG"
    );
    // A blank page compresses to a few KiB; charts and text do not.
    assert!(bytes.len() > 20_000, "{name} is only {} bytes", bytes.len());
    eprintln!("screenshot: {}", png.display());
}

/// Nothing is loaded from elsewhere: no scripts, no style sheets, no fonts, and every link
/// stays inside the page.
fn assert_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for bad in [
        "<script",
        "<link",
        "@import",
        "url(",
        "<img",
        "<iframe",
        "@font-face",
    ] {
        assert!(!lower.contains(bad), "the page has {bad}");
    }
    for attr in ["src=", "href=", "xlink:href="] {
        for (i, _) in lower.match_indices(attr) {
            let v = &lower[i + attr.len()..];
            assert!(
                v.starts_with("\"#") || v.starts_with("'#"),
                "{attr} points outside the page: {}",
                &html[i..(i + 80).min(html.len())]
            );
            assert!(!v.starts_with("\"http:") && !v.starts_with("\"https:"));
        }
    }
}

/// The `<title>` of every `<svg>` in a DOM dump, in order.
fn chart_titles(dom: &str) -> Vec<String> {
    dom.split("<svg ")
        .skip(1)
        .map(|s| {
            let t = s.split("<title>").nth(1).expect("an svg without a title");
            t.split("</title>").next().unwrap().to_string()
        })
        .collect()
}

fn headline(doc: &Value) -> &'static str {
    let s = &doc["summary"];
    let n = |k: &str| s[k].as_u64().unwrap();
    if n("interrupted") > 0 {
        "INTERRUPTED"
    } else if n("failed") > 0 {
        "FAIL"
    } else if n("errors") > 0 {
        "ERROR"
    } else if n("warned") > 0 {
        "WARN"
    } else {
        "PASS"
    }
}

fn size_note(what: &str, p: &Path) -> u64 {
    let n = std::fs::metadata(p).unwrap().len();
    eprintln!("{what}: {} bytes ({:.1} KiB)", n, n as f64 / 1024.0);
    n
}

#[test]
fn a_real_check_run_as_a_page() {
    let dir = scratch();
    let out = scratch();
    let page = out.path().join("check.html");
    let run = iogauge(&[
        "check",
        "etcd",
        "sync-iops",
        "--scale",
        "0.05",
        "--dir",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
        "--report",
        page.to_str().unwrap(),
    ]);
    let code = run.status.code().unwrap();
    assert!([0, 3, 4].contains(&code), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("HTML report in"));
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    let saved = out.path().join("check.json");
    std::fs::write(&saved, &run.stdout).unwrap();

    // The same document gives the same page, whether written by the run or read back.
    let again = out.path().join("again.html");
    let r = iogauge(&[
        "report",
        saved.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html, std::fs::read_to_string(&again).unwrap());
    assert_self_contained(&html);
    assert!(size_note("check etcd sync-iops page", &page) < 1 << 20);
    std::fs::copy(&page, keep_dir().join("check.html")).unwrap();

    if !have_chromium() {
        return;
    }
    let dom = dump_dom(&page);
    let titles = chart_titles(&dom);
    // Per profile: percentile curve, latency buckets, p50/p99 per interval, the rank, and IOPS
    // and bandwidth over time when there is a point to draw (a sample, or the trailing interval:
    // a fast disk does etcd's 1 MiB in less than a sampling interval).
    let mut expected: Vec<String> = Vec::new();
    for p in doc["profiles"].as_array().unwrap() {
        expected.extend(
            [
                "Latency percentiles",
                "Latency distribution (reads and writes)",
            ]
            .map(String::from),
        );
        if has_series(p) {
            expected.extend(["IOPS over time", "Bandwidth over time"].map(String::from));
        }
        expected.extend(intervals(&p["report"]["jobs"][0]));
        expected.push(
            match p["profile"].as_str().unwrap() {
                "etcd" => "p99 fdatasync latency against reference systems",
                _ => "synchronous write IOPS against reference systems",
            }
            .into(),
        );
    }
    assert_eq!(titles, expected);
    let n = expected.len();
    // Each chart's text alternative and data table.
    assert_eq!(dom.matches("aria-label=").count(), n);
    assert_eq!(dom.matches("<summary>Data</summary>").count(), n);
    // The verdict, the threshold and the job to run again.
    let word = headline(&doc);
    assert!(dom.contains(&format!(
        "<span class=\"big {}\">{word}</span>",
        class(word)
    )));
    assert!(dom.contains("threshold &lt; 10 ms"));
    assert!(dom.contains("--fdatasync=1"));
    assert!(!dom.contains("<script"));
    screenshot(&page, "check-desktop.png", 1280, 2400);
    screenshot(&page, "check-phone.png", 390, 2400);
}

/// The titles of a fio job's p50/p99-per-interval charts, for the sections that recorded
/// `lat_intervals`.
fn intervals(job: &Value) -> Vec<String> {
    let mut t = Vec::new();
    for dir in ["read", "write", "trim"] {
        if let Some(li) = job[dir]["iogauge"].get("lat_intervals") {
            t.push(format!(
                "{dir} {} latency p50 and p99 over time",
                li["latency"].as_str().unwrap()
            ));
        }
    }
    if job["sync"]["iogauge"].get("lat_intervals").is_some() {
        t.push("sync latency p50 and p99 over time".into());
    }
    t
}

/// Whether a profile's run has anything to draw over time: a periodic sample, or the trailing
/// interval (the whole of a run shorter than a sampling interval).
fn has_series(p: &Value) -> bool {
    let ig = &p["report"]["jobs"][0]["write"]["iogauge"];
    ig["iops_series"].as_array().is_some_and(|a| !a.is_empty()) || !ig["iops_tail"].is_null()
}

fn class(word: &str) -> &'static str {
    match word {
        "PASS" => "pass",
        "WARN" => "warn",
        "FAIL" | "ERROR" => "fail",
        _ => "other",
    }
}

/// A check document from a real run, for the documents built around it.
fn check_doc(dir: &Path) -> Value {
    let run = iogauge(&[
        "check",
        "etcd",
        "--scale",
        "0.05",
        "--dir",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ]);
    serde_json::from_slice(&run.stdout).unwrap()
}

#[test]
fn a_kube_document_as_a_page() {
    let dir = scratch();
    let out = scratch();
    let check = check_doc(dir.path());
    let kube = json!({
        "schema_version": 1, "iogauge": "0.1.0", "run_id": "r7x2",
        "cluster": "https://10.0.0.1:6443", "namespace": "iogauge", "profiles": ["etcd"],
        "targets": [
            {"target": "storage class fast", "kind": "storage_class", "storage_class": "fast",
             "provisioner": "ebs.csi.aws.com", "volume_binding_mode": "WaitForFirstConsumer",
             "claim": "iogauge-r7x2-fast", "claim_size": "2Gi", "node": "node-1",
             "host_path": null, "job": "iogauge-r7x2-fast", "status": "completed",
             "reason": null, "check": check},
            {"target": "storage class <slow>", "kind": "storage_class", "storage_class": "slow",
             "provisioner": null, "volume_binding_mode": null, "claim": null,
             "claim_size": null, "node": null, "host_path": null, "job": "iogauge-r7x2-slow",
             "status": "failed", "reason": "pod pending: <script>alert(1)</script>",
             "check": null}
        ],
        "summary": {"passed": 0, "warned": 0, "failed": 1, "errors": 1, "interrupted": 0, "skipped": 0}
    });
    let saved = out.path().join("kube.json");
    std::fs::write(&saved, serde_json::to_vec(&kube).unwrap()).unwrap();
    let page = out.path().join("kube.html");
    let r = iogauge(&[
        "report",
        saved.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("pod pending: &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("storage class &lt;slow&gt;"));
    size_note("kube page (one target with etcd)", &page);
    std::fs::copy(&page, keep_dir().join("kube.html")).unwrap();
    if !have_chromium() {
        return;
    }
    let dom = dump_dom(&page);
    assert!(!dom.contains("<script"));
    let titles = chart_titles(&dom);
    let p = &kube["targets"][0]["check"]["profiles"][0];
    let n = if has_series(p) { 5 } else { 3 } + intervals(&p["report"]["jobs"][0]).len();
    assert_eq!(titles.len(), n, "{titles:?}");
    assert!(dom.contains("Targets by profile") && dom.contains("ebs.csi.aws.com"));
    screenshot(&page, "kube-desktop.png", 1280, 2400);
}

#[test]
fn an_iogauge_fio_run_as_a_page() {
    let dir = scratch();
    let out = scratch();
    let page = out.path().join("fio.html");
    let json = out.path().join("fio.json");
    let r = iogauge(&[
        "fio",
        "--name=mix",
        "--rw=randrw",
        "--bs=4k",
        "--size=2m",
        "--time_based",
        "--runtime=2",
        &format!("--directory={}", dir.path().display()),
        "--output-format=json",
        // The --report page always has the intervals; the saved JSON with this flag.
        "--json-intervals",
        &format!("--output={}", json.display()),
        "--report",
        page.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    size_note("fio randrw page", &page);
    // From the saved JSON, the same page.
    let again = out.path().join("again.html");
    let r = iogauge(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert_eq!(html, std::fs::read_to_string(&again).unwrap());
    assert!(html.contains("--rw=randrw"));
    std::fs::copy(&page, keep_dir().join("fio.html")).unwrap();
    if !have_chromium() {
        return;
    }
    let titles = chart_titles(&dump_dom(&page));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let mut expected: Vec<String> = [
        "Latency percentiles",
        "Latency distribution (reads and writes)",
        "IOPS over time",
        "Bandwidth over time",
    ]
    .map(String::from)
    .to_vec();
    expected.extend(intervals(&doc["jobs"][0]));
    // A two-second randrw run records both directions' intervals.
    assert_eq!(expected.len(), 6);
    assert_eq!(titles, expected);
    screenshot(&page, "fio-desktop.png", 1280, 1800);
}

#[test]
fn report_refuses_what_it_cannot_render() {
    let out = scratch();
    let p = |n: &str| out.path().join(n);
    let run = |args: &[&str]| {
        let o = iogauge(args);
        (o.status.code(), text(&o.stderr))
    };
    let (code, err) = run(&["report", p("missing.json").to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(err.starts_with("iogauge report: cannot read ") && err.contains("missing.json"));
    std::fs::write(p("text.json"), "PASS etcd").unwrap();
    let (code, err) = run(&["report", p("text.json").to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("text.json is not JSON") && err.contains("--format json"),
        "{err}"
    );
    std::fs::write(p("other.json"), r#"{"kind": "Pod"}"#).unwrap();
    let (code, err) = run(&["report", p("other.json").to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("other.json: not a document iogauge knows: expected a check document"),
        "{err}"
    );
    // '-' reads stdin; without -o the page goes to stdout.
    let mut child = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["report", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"collectors": [], "outcomes": [], "schema_version": 1, "iogauge": "0.1.0", "name": "np"}"#)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("<h1>iogauge preflight: np</h1>"));
}

#[test]
fn a_report_that_cannot_be_written_is_one_line_and_exit_1() {
    let dir = scratch();
    let run = |report: &str| {
        iogauge(&[
            "check",
            "etcd",
            "--scale",
            "0.02",
            "--dir",
            dir.path().to_str().unwrap(),
            "--format",
            "json",
            "--report",
            report,
        ])
    };
    // A directory that does not exist is known before the run: bad input, nothing measured.
    let r = run("/nonexistent-dir/x.html");
    assert_eq!(r.status.code(), Some(2));
    assert!(r.stdout.is_empty());
    assert!(
        text(&r.stderr).contains("directory '/nonexistent-dir' does not exist"),
        "{}",
        text(&r.stderr)
    );
    // One that refuses the file only when it is written (procfs creates no files, even for
    // root) costs one stderr line; the run's result stands, and a run that passed or warned
    // exits 1 as the page it was asked for is missing (a failed outcome keeps its 3).
    let r = run("/proc/iogauge-report.html");
    let doc: Value = serde_json::from_slice(&r.stdout).unwrap();
    let expected = match headline(&doc) {
        "FAIL" => 3,
        _ => 1,
    };
    assert_eq!(r.status.code(), Some(expected));
    let err = text(&r.stderr);
    assert_eq!(
        err.lines()
            .filter(|l| l.contains(
                "the HTML report was not written: cannot write /proc/iogauge-report.html"
            ))
            .count(),
        1,
        "{err}"
    );
}

#[test]
fn a_preflight_run_as_a_page() {
    let dir = scratch();
    let out = scratch();
    let spec = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/kurl-style-host-preflight.yaml"
    ))
    .unwrap()
    .replace("/var/lib/etcd", dir.path().to_str().unwrap())
    .replace("fileSize: 22Mi", "fileSize: 1Mi");
    let spec_path = out.path().join("spec.yaml");
    std::fs::write(&spec_path, spec).unwrap();
    let page = out.path().join("preflight.html");
    let r = iogauge(&[
        "preflight",
        spec_path.to_str().unwrap(),
        "-o",
        out.path().join("results").to_str().unwrap(),
        "--report",
        page.to_str().unwrap(),
    ]);
    assert!(
        [0, 3, 4].contains(&r.status.code().unwrap()),
        "{}",
        text(&r.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    // The document preflight writes beside troubleshoot's files gives the same page.
    let again = out.path().join("again.html");
    let doc = out.path().join("results/preflight.iogauge.json");
    let r = iogauge(&[
        "report",
        doc.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert_eq!(html, std::fs::read_to_string(&again).unwrap());
    size_note("preflight page", &page);
    if !have_chromium() {
        return;
    }
    let dom = dump_dom(&page);
    assert_eq!(
        chart_titles(&dom),
        ["filesystem-write-latency-etcd: fdatasync latency percentiles"]
    );
    assert!(dom.contains("Analyzer outcomes") && dom.contains("Filesystem Performance"));
}

#[test]
fn kube_check_takes_no_report_with_dry_run() {
    let r = iogauge(&[
        "kube",
        "check",
        "--storage-class",
        "fast",
        "--image",
        "i",
        "--dry-run",
        "--report",
        "x.html",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(text(&r.stderr).contains("'--dry-run' cannot be used with '--report <FILE.html>'"));
}

#[test]
fn a_comparison_as_a_page() {
    if !have_chromium() {
        return;
    }
    let d = scratch();
    let run = |name: &str, rate: &str| {
        let o = iogauge(&[
            "fio",
            "--name=n",
            "--ioengine=null",
            "--rw=write",
            "--size=1g",
            "--time_based",
            "--runtime=3",
            &format!("--rate_iops={rate}"),
            "--output-format=json",
            // One run per side: compare resamples the runs' intervals.
            "--json-intervals",
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let p = d.path().join(name);
        std::fs::write(&p, &o.stdout).unwrap();
        p
    };
    let (a, b) = (run("a.json", "50000"), run("b.json", "10000"));
    let page = d.path().join("compare.html");
    let o = iogauge(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--report",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    // `iogauge report` of the saved comparison draws the same page.
    let j = iogauge(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let saved = d.path().join("cmp.json");
    std::fs::write(&saved, &j.stdout).unwrap();
    let again = d.path().join("again.html");
    let o = iogauge(&[
        "report",
        saved.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);
    let dom = dump_dom(&page);
    assert_eq!(chart_titles(&dom), ["B/A per metric"]);
    assert!(dom.contains(">FAIL<"), "{dom}");
    // At least the IOPS; a null engine's ns-scale latencies may differ too.
    assert!(dom.contains(" worse, "), "{dom}");
    assert!(dom.contains("n: write IOPS"));
    size_note("compare", &page);
    screenshot(&page, "compare-desktop.png", 1100, 1100);
}
