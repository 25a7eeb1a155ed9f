//! `iogauge canary` for real: probes in a scratch directory, its HTTP endpoint read by a plain
//! client and by a real Prometheus, its textfile checked by promtool, probe failures on a full
//! loop filesystem and a removed directory, and a disk slowed by a blkio throttle.

use crate::common;
use crate::common::canary::{http_get, sample, Canary};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// A tool from Debian's `prometheus` package, which CI installs.
fn have(tool: &str) -> bool {
    common::have_tool(
        tool,
        "apt-get install -y --no-install-recommends prometheus",
    )
}

fn profile(doc: &Value, name: &str) -> Value {
    doc["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["profile"] == name)
        .unwrap_or_else(|| panic!("no profile {name} in {doc}"))
        .clone()
}

fn verdict(doc: &Value, name: &str) -> String {
    profile(doc, name)["verdict"].as_str().unwrap().to_string()
}

#[test]
fn serves_metrics_json_and_a_textfile_and_ends_cleanly_on_sigterm() {
    common::serial();
    let d = common::scratch();
    let probes = d.path().join("probes");
    let textfile = d.path().join("textfile");
    std::fs::create_dir_all(&probes).unwrap();
    std::fs::create_dir_all(&textfile).unwrap();
    let mut c = Canary::start(&[
        "etcd",
        "--dir",
        probes.to_str().unwrap(),
        "--every",
        "1s",
        "--window",
        "1m",
        "--listen",
        "127.0.0.1:0",
        "--textfile",
        textfile.to_str().unwrap(),
        "--node",
        "node-a",
        "--no-history",
    ]);
    let addr = c.addr();
    let docs = c.wait_docs(Duration::from_secs(60), |d| d.len() >= 2);
    let (status, head, body) = http_get(&addr, "/metrics", None);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(head.contains("Content-Type: text/plain; version=0.0.4"));
    let docs_after = c.docs.lock().unwrap().clone();
    // Every family and label is the contract's, the one the alert rules and dashboard use.
    assert_eq!(
        common::canary_names::exposition_problems(&body),
        Vec::<String>::new()
    );
    let doc = &docs[1];
    assert_eq!(doc["kind"], "canary");
    assert_eq!(doc["node"], "node-a");
    assert_eq!(doc["dir"], probes.to_str().unwrap());
    let etcd = profile(doc, "etcd");
    let m = &etcd["metrics"][0];
    assert_eq!(
        (m["key"].as_str(), m["unit"].as_str()),
        (Some("sync_p99"), Some("seconds"))
    );
    assert_eq!(m["pass"], 0.01);
    // The served document is one of the cycles': its probe count and window value match one.
    let labels = [("profile", "etcd"), ("node", "node-a")];
    let served = sample(&body, "iogauge_probes_total", &labels).unwrap();
    let cycle = docs_after
        .iter()
        .find(|d| profile(d, "etcd")["probes"].as_f64() == Some(served))
        .unwrap_or_else(|| panic!("no cycle had {served} probes"));
    let p99 = sample(
        &body,
        "iogauge_window_latency_seconds",
        &[("metric", "sync_p99")],
    )
    .unwrap();
    assert_eq!(
        Some(p99),
        profile(cycle, "etcd")["metrics"][0]["value"].as_f64()
    );
    let v = verdict(cycle, "etcd");
    assert_eq!(
        sample(&body, "iogauge_verdict", &[("verdict", v.as_str())]),
        Some(1.0)
    );
    let ones: f64 = ["pass", "warn", "fail", "undecided", "error"]
        .iter()
        .map(|w| sample(&body, "iogauge_verdict", &[("verdict", w)]).unwrap())
        .sum();
    assert_eq!(ones, 1.0, "exactly one verdict is current");
    // The histogram is cumulative, holds the 10 ms threshold, and its +Inf bucket is its count.
    let kind = [("profile", "etcd"), ("kind", "sync")];
    let count = sample(&body, "iogauge_latency_seconds_count", &kind).unwrap();
    let inf = sample(
        &body,
        "iogauge_latency_seconds_bucket",
        &[("kind", "sync"), ("le", "+Inf")],
    );
    assert_eq!(inf, Some(count));
    assert!(
        sample(
            &body,
            "iogauge_latency_seconds_bucket",
            &[("kind", "sync"), ("le", "0.01")]
        )
        .unwrap()
            <= count
    );
    assert!(
        count >= 2.0 * 400.0,
        "two probes of about 490 syncs each: {count}"
    );
    assert!(body.contains("iogauge_canary_busy_budget_ratio{directory="));
    assert_eq!(
        sample(&body, "iogauge_canary_busy_budget_ratio", &[]),
        Some(0.01)
    );
    // OpenMetrics when asked for, with its end marker and counter family names.
    let (_, head, om) = http_get(
        &addr,
        "/metrics",
        Some("application/openmetrics-text;version=1.0.0"),
    );
    assert!(head.contains("application/openmetrics-text; version=1.0.0"));
    assert!(om.ends_with("# EOF\n") && om.contains("# TYPE iogauge_probes counter\n"));
    assert_eq!(
        common::canary_names::exposition_problems(&om),
        Vec::<String>::new()
    );
    let (status, _, health) = http_get(&addr, "/healthz", None);
    assert_eq!(
        (status.as_str(), health.as_str()),
        ("HTTP/1.1 200 OK", "ok\n")
    );
    assert_eq!(http_get(&addr, "/nope", None).0, "HTTP/1.1 404 Not Found");
    // The textfile: the same exposition, written whole.
    let prom = textfile.join("iogauge_canary.prom");
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.starts_with("# HELP iogauge_canary_info"));
    assert!(text.contains("iogauge_verdict{profile=\"etcd\""));
    if have("promtool") {
        let o = common::cmd("promtool")
            .args(["check", "metrics"])
            .stdin(std::fs::File::open(&prom).unwrap())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "promtool check metrics: {}{}",
            common::text(&o.stdout),
            common::text(&o.stderr)
        );
    }
    let status = c.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0), "{}", c.stderr_text());
    assert!(c
        .stderr_text()
        .contains("iogauge canary: stopped by SIGTERM; its files were removed"));
    common::assert_empty(&probes);
    // The textfile goes too: node_exporter must not serve a stopped canary's series.
    common::assert_empty(&textfile);
}

#[test]
fn profiles_it_cannot_judge_and_a_busy_address_are_refused() {
    let d = common::scratch();
    let o = common::iogauge(
        &["canary", "small-files", "--dir", d.path().to_str().unwrap()],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        common::text(&o.stderr),
        "iogauge canary: small-files: cannot be a canary profile: it judges small_files_total, which \
         only the whole run measures; choose etcd, etcd-large, sync-iops, gitlab or a profile judged \
         on sync_p99, write_iops or read_iops\n"
    );
    let dir = d.path().to_str().unwrap();
    for (args, said) in [
        (
            vec!["etcd", "etcd"],
            "profile 'etcd' is named twice; each profile is watched once (its series would repeat)",
        ),
        (
            vec!["--every", "5m", "--window", "10m"],
            "--window 10m: shorter than three intervals of --every 5m; a verdict needs at least 3 \
             probes in its window: raise --window or lower --every",
        ),
    ] {
        let o = common::iogauge(&[&["canary", "--dir", dir][..], &args].concat(), d.path());
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(common::text(&o.stderr), format!("iogauge canary: {said}\n"));
    }
    let o = common::iogauge(&["canary", "--dir", dir, "--max-busy", "0.001%"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::text(&o.stderr).contains("expected a share from 0.01% to 100%, e.g. 1% or 0.01"),
        "{}",
        common::text(&o.stderr)
    );
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let o = common::iogauge(
        &[
            "canary",
            "--dir",
            d.path().to_str().unwrap(),
            "--listen",
            &addr,
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    let err = common::text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "iogauge canary: --listen {addr}: cannot listen there ("
        )),
        "{err}"
    );
    assert!(
        err.ends_with("choose another address or port, or --listen none\n"),
        "{err}"
    );
    let o = common::iogauge(
        &[
            "canary",
            "--dir",
            "/nonexistent/iogauge",
            "--listen",
            "none",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        common::text(&o.stderr),
        "iogauge canary: directory '/nonexistent/iogauge' does not exist; create it or choose \
         another with --dir\n"
    );
    common::assert_empty(d.path());
}

/// The errors counted for `reason` in a document.
fn errors(doc: &Value, reason: &str) -> u64 {
    profile(doc, "etcd")["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["reason"] == reason)
        .map_or(0, |e| e["count"].as_u64().unwrap())
}

#[test]
fn a_full_disk_and_a_removed_directory_are_counted_and_it_keeps_probing() {
    if !common::loopfs::can_loop() {
        return;
    }
    let fs = common::loopfs::LoopFs::new("32M", &[]);
    let dir = fs.mnt.join("canary");
    std::fs::create_dir(&dir).unwrap();
    let mut c = Canary::start(&[
        "--dir",
        dir.to_str().unwrap(),
        "--every",
        "1s",
        "--window",
        "1m",
        "--listen",
        "none",
        // The whole disk's time for the probes: a stretched interval would only slow the test.
        "--max-busy",
        "100%",
        "--no-history",
    ]);
    c.wait_docs(Duration::from_secs(60), |d| {
        d.iter()
            .any(|d| profile(d, "etcd")["last_success"].is_number())
    });
    fs.fill("filler");
    let docs = c.wait_docs(Duration::from_secs(60), |d| {
        d.last().is_some_and(|d| errors(d, "no_space") > 0)
    });
    let last = docs.last().unwrap();
    assert!(profile(last, "etcd")["last_error"]
        .as_str()
        .unwrap()
        .contains("free space"));
    std::fs::remove_file(fs.mnt.join("filler")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    c.wait_docs(Duration::from_secs(60), |d| {
        d.last().is_some_and(|d| errors(d, "missing_directory") > 0)
    });
    std::fs::create_dir(&dir).unwrap();
    let before = c.docs.lock().unwrap().len();
    c.wait_docs(Duration::from_secs(60), |d| {
        d.len() > before && profile(d.last().unwrap(), "etcd")["last_error"].is_null()
    });
    // A read-only remount: the kernel refuses it while a probe holds a file open for writing,
    // so it is tried until it lands between two probes.
    let mnt = fs.mnt.to_str().unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    while !common::cmd("mount")
        .args(["-o", "remount,ro", mnt])
        .output()
        .unwrap()
        .status
        .success()
    {
        assert!(Instant::now() < end, "the filesystem never went read-only");
        std::thread::sleep(Duration::from_millis(50));
    }
    c.wait_docs(Duration::from_secs(60), |d| {
        d.last().is_some_and(|d| errors(d, "read_only") > 0)
    });
    common::loopfs::sh("mount", &["-o", "remount,rw", mnt]);
    let before = c.docs.lock().unwrap().len();
    let docs = c.wait_docs(Duration::from_secs(60), |d| {
        d.len() > before && profile(d.last().unwrap(), "etcd")["last_error"].is_null()
    });
    // Every failure counted once per probe, and the window still judges the probes that ran.
    let last = docs.last().unwrap();
    assert!(profile(last, "etcd")["probes"].as_u64().unwrap() >= 3);
    assert_ne!(verdict(last, "etcd"), "error");
    let status = c.stop(libc::SIGTERM);
    assert_eq!(status.code(), Some(0));
    let err = c.stderr_text();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("probe failed (no_space)"))
        .collect();
    assert_eq!(lines.len(), 1, "one line per change, not per probe:\n{err}");
    assert!(
        lines[0]
            .starts_with("iogauge canary: etcd: probe failed (no_space): not enough free space in"),
        "{err}"
    );
    assert!(lines[0].ends_with("; trying again every 1s"), "{err}");
    assert!(
        err.contains(&format!(
            "iogauge canary: etcd: probe failed (missing_directory): directory '{}' does not exist; \
             create it or choose another with --dir; trying again every 1s",
            dir.display()
        )),
        "{err}"
    );
    // Once after the directory came back (and once more if a probe ran between the two faults).
    assert!(
        err.contains("iogauge canary: etcd: probes succeed again"),
        "{err}"
    );
    common::assert_empty(&dir);
}

/// A free TCP port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The first value of an instant query, once Prometheus has one.
fn query(prom: &str, q: &str, limit: Duration) -> Option<f64> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        let encoded: String = q
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' => {
                    (b as char).to_string()
                }
                b => format!("%{b:02X}"),
            })
            .collect();
        let path = format!("/api/v1/query?query={encoded}");
        let (status, _, body) = http_get(prom, &path, None);
        // Prometheus answers 503 until its storage is ready; an empty status: not listening yet.
        if status.contains("200") {
            let v: Value = serde_json::from_str(&body).unwrap();
            if let Some(r) = v["data"]["result"].as_array().and_then(|a| a.first()) {
                return r["value"][1].as_str().and_then(|s| s.parse().ok());
            }
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    None
}

#[test]
fn a_real_prometheus_scrapes_the_canary() {
    if !have("prometheus") {
        return;
    }
    common::serial();
    let d = common::scratch();
    let probes = d.path().join("probes");
    std::fs::create_dir(&probes).unwrap();
    let mut c = Canary::start(&[
        "--dir",
        probes.to_str().unwrap(),
        "--every",
        "1s",
        "--window",
        "1m",
        "--listen",
        "127.0.0.1:0",
        "--node",
        "node-p",
        "--no-history",
    ]);
    let target = c.addr();
    let config = d.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: iogauge-canary\n    static_configs:\n      - targets: ['{target}']\n"),
    )
    .unwrap();
    let prom = format!("127.0.0.1:{}", free_port());
    let mut p = common::cmd("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            d.path().join("tsdb").display()
        ))
        .arg(format!("--web.listen-address={prom}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let up = query(&prom, "up{job=\"iogauge-canary\"}", Duration::from_secs(60));
    let probes_seen = query(
        &prom,
        "max_over_time(iogauge_probes_total{profile=\"etcd\",node=\"node-p\"}[1m]) >= 2",
        Duration::from_secs(60),
    );
    let p99 = query(
        &prom,
        "iogauge_window_latency_seconds{profile=\"etcd\",metric=\"sync_p99\"}",
        Duration::from_secs(10),
    );
    let _ = p.kill();
    let _ = p.wait();
    c.stop(libc::SIGTERM);
    assert_eq!(up, Some(1.0), "Prometheus scraped the canary");
    let probes_seen = probes_seen.expect("Prometheus stored iogauge_probes_total");
    let p99 = p99.expect("Prometheus stored the window p99");
    let docs = c.docs.lock().unwrap().clone();
    // Prometheus's values are the canary's own, as its documents had them.
    assert!(docs
        .iter()
        .any(|d| profile(d, "etcd")["probes"].as_f64() == Some(probes_seen)));
    assert!(
        docs.iter()
            .any(|d| profile(d, "etcd")["metrics"][0]["value"].as_f64() == Some(p99)),
        "{p99} is no cycle's p99"
    );
    common::assert_empty(&probes);
}

/// etcd's recipe with a smaller file, so that a probe (a twentieth of it, 182 fdatasyncs)
/// takes a few seconds on a throttled disk.
const SMALL_ETCD: &str = "name: etcd-small\ntitle: etcd WAL, small\nworkload:\n  - rw=write\n  - ioengine=sync\n  - fdatasync=1\n  - bs=2300\n  - size=8m\nscale: [size]\nmetrics:\n  - key: sync_p99\n    label: p99 fdatasync latency\n    better: lower\n    pass: 10ms\n    source: etcd FAQ\n";

#[test]
fn a_throttled_disk_fails_within_a_window_and_passes_again_once_lifted() {
    common::serial();
    let d = common::scratch();
    let Some(t) = common::throttle::Throttle::new(d.path(), "write_iops_device", 0) else {
        return;
    };
    let profile_file = d.path().join("etcd-small.yaml");
    std::fs::write(&profile_file, SMALL_ETCD).unwrap();
    let probes = d.path().join("probes");
    std::fs::create_dir(&probes).unwrap();
    let child = t.spawn(&format!(
        "env IOGAUGE_NO_HISTORY=1 {} canary {} --dir {} --every 1s --window 15s --max-busy 100% --listen none --format json",
        common::IOGAUGE,
        profile_file.display(),
        probes.display()
    ));
    let mut c = Canary::watch(child);
    let v = |d: &[Value]| {
        d.last()
            .map(|d| verdict(d, "etcd-small"))
            .unwrap_or_default()
    };
    c.wait_docs(Duration::from_secs(90), |d| v(d) == "pass");
    t.set("write_iops_device", 100);
    let slowed = Instant::now();
    let docs = c.wait_docs(Duration::from_secs(60), |d| v(d) == "fail");
    let took = slowed.elapsed();
    let last = profile(docs.last().unwrap(), "etcd-small");
    assert!(
        last["metrics"][0]["bound"].as_f64().unwrap() > 0.011,
        "{last}"
    );
    t.set("write_iops_device", 0);
    let lifted = Instant::now();
    c.wait_docs(Duration::from_secs(90), |d| v(d) == "pass");
    let back = lifted.elapsed();
    c.stop(libc::SIGTERM);
    eprintln!("FAIL {took:?} after throttling, PASS {back:?} after lifting");
    common::assert_empty(&probes);
    let _ = Path::new("");
}

#[test]
fn a_trickling_client_is_cut_off_and_a_full_server_says_busy() {
    let d = common::scratch();
    let mut c = Canary::start(&[
        "--dir",
        d.path().to_str().unwrap(),
        "--every",
        "1s",
        "--window",
        "1m",
        "--listen",
        "127.0.0.1:0",
        "--no-history",
    ]);
    let addr = c.addr();
    // Sixteen clients that send a byte a second hold every place: the next one hears 503.
    let mut slow: Vec<std::net::TcpStream> = (0..16)
        .map(|_| std::net::TcpStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        http_get(&addr, "/healthz", None).0,
        "HTTP/1.1 503 Service Unavailable"
    );
    let start = Instant::now();
    for _ in 0..7 {
        for s in &mut slow {
            use std::io::Write;
            let _ = s.write_all(b"G");
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    // Each had 5 s for its whole request however it trickled: cut off, places free again.
    let (status, _, body) = http_get(&addr, "/healthz", None);
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "ok\n")
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(c.stop(libc::SIGTERM).code(), Some(0));
    common::assert_empty(d.path());
}

#[test]
fn a_profile_file_is_read_once() {
    let d = common::scratch();
    let file = d.path().join("etcd-small.yaml");
    std::fs::write(&file, SMALL_ETCD).unwrap();
    let probes = d.path().join("probes");
    std::fs::create_dir(&probes).unwrap();
    let mut c = Canary::start(&[
        file.to_str().unwrap(),
        "--dir",
        probes.to_str().unwrap(),
        "--every",
        "1s",
        "--window",
        "1m",
        "--max-busy",
        "100%",
        "--listen",
        "none",
        "--no-history",
    ]);
    c.wait_docs(Duration::from_secs(60), |d| !d.is_empty());
    // Removed (or edited) afterwards: the probes run what was read at the start.
    std::fs::remove_file(&file).unwrap();
    let docs = c.wait_docs(Duration::from_secs(60), |d| d.len() >= 3);
    assert_eq!(c.stop(libc::SIGTERM).code(), Some(0));
    let p = profile(docs.last().unwrap(), "etcd-small");
    assert!(p["last_error"].is_null(), "{p}");
    assert!(
        p["errors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["count"] == 0),
        "{p}"
    );
    assert!(p["probes"].as_u64().unwrap() >= 3);
    common::assert_empty(&probes);
}
