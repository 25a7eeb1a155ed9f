//! `iogauge preflight` end to end with real I/O on small files: verdicts and exit codes,
//! troubleshoot's result files, analyze-only on troubleshoot's formats and per-node layout,
//! timeouts, and spec errors.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::path::Path;

use common::preflight;

/// A HostPreflight with one collector writing in `dir` and one analyzer with `outcomes`.
fn spec(dir: &Path, extra: &str, outcomes: &str) -> String {
    format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: etcd\nspec:\n  \
         hostCollectors:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        \
         directory: {}\n        fileSize: 1Mi\n        operationSize: 2300\n        datasync: true\n{extra}  \
         hostAnalyzers:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        outcomes:\n{outcomes}",
        dir.display()
    )
}

const EXAMPLE: &str = "          - pass: {when: \"p99 < 10s\", message: \"Write latency is great! (p99: {{ .P99 }})\"}\n          - fail: {when: \"p99 >= 10s\", message: \"Write latency is too high {{ .String }}\"}\n";

#[test]
fn a_passing_run_writes_troubleshoots_files_and_cleans_up() {
    let d = scratch();
    let bench = d.path().join("etcd");
    std::fs::write(d.path().join("s.yaml"), spec(&bench, "", EXAMPLE)).unwrap();
    let o = preflight(&["--output", "out", "s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "");
    assert_eq!(lines[1], "   --- PASS Filesystem Performance");
    assert!(
        lines[2].starts_with("      --- Write latency is great! (p99: "),
        "{out}"
    );
    assert!(lines[2].ends_with("s)"), "{out}");
    // troubleshoot ends with the spec's metadata.name and the overall word.
    assert_eq!(lines[3..], ["--- PASS   etcd", "PASS"]);
    let res = d.path().join("out/host-collectors/filesystemPerformance");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("etcd-perf.json")).unwrap())
            .unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 20);
    let (min, p50, p99, max) = (
        v["Min"].as_u64().unwrap(),
        v["P50"].as_u64().unwrap(),
        v["P99"].as_u64().unwrap(),
        v["Max"].as_u64().unwrap(),
    );
    assert!(min <= p50 && p50 <= p99 && p99 <= max, "{v}");
    // The full report: 1 MiB / 2300 B = 455 writes, each followed by fdatasync.
    let full: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("etcd-perf.iogauge.json")).unwrap())
            .unwrap();
    assert_eq!(full["jobs"][0]["write"]["total_ios"], 455);
    assert_eq!(full["jobs"][0]["sync"]["total_ios"], 455);
    assert_eq!(
        full["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"],
        v["P99"]
    );
    assert_eq!(
        full["jobs"][0]["sync"]["iogauge"]["write_and_sync_lat_ns"]["N"],
        455
    );
    // The benchmark directory was created and is left empty.
    assert!(
        !bench.exists(),
        "the test directory iogauge made is removed"
    );
}

#[test]
fn fail_and_warn_outcomes_give_exit_codes_3_and_4() {
    let d = scratch();
    for (outcomes, code, label) in [
        (
            "          - fail: {when: \"p99 >= 0\", message: \"too slow: {{ .P99 }}\"}\n",
            3,
            "\n   --- FAIL: Filesystem Performance",
        ),
        (
            "          - warn: {when: \"max > 0\", message: \"meh\"}\n",
            4,
            "\n   --- WARN: Filesystem Performance",
        ),
    ] {
        std::fs::write(
            d.path().join("s.yaml"),
            spec(&d.path().join("b"), "", outcomes),
        )
        .unwrap();
        let o = preflight(&["--output", "out", "s.yaml"], d.path());
        assert_eq!(o.status.code(), Some(code), "{}", text(&o.stderr));
        assert!(text(&o.stdout).starts_with(label), "{}", text(&o.stdout));
    }
    // JSON format: structured results only on stdout.
    let o = preflight(&["--output", "out", "--format", "json", "s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(4));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["warn"][0]["title"], "Filesystem Performance");
    assert_eq!(v["warn"][0]["message"], "meh");
}

#[test]
fn analyze_only_reads_troubleshoots_formats_and_nodes() {
    let d = scratch();
    let res = d
        .path()
        .join("bundle/host-collectors/filesystemPerformance");
    std::fs::create_dir_all(res.join("node-b")).unwrap();
    // Seed 000's example file (p99 4.46 ms) for the host, and a fio-JSON result for node-b.
    std::fs::write(
        res.join("etcd-perf.json"),
        r#"{"Min":1072380,"Max":28258541,"Average":1936389,"P1":1361771,"P5":1470115,"P10":1530443,"P20":1606706,"P30":1668387,"P40":1722871,"P50":1782345,"P60":1845403,"P70":1929173,"P80":2069770,"P90":2484501,"P95":2887302,"P99":4464537,"P995":5948001,"P999":9461315,"P9995":10746333,"P9999":19159876}"#,
    )
    .unwrap();
    let pct: serde_json::Map<String, serde_json::Value> = [
        1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
        99.95, 99.99,
    ]
    .iter()
    .map(|q: &f64| (format!("{q:.6}"), serde_json::Value::from(9_000_000u64)))
    .collect();
    let fio = serde_json::json!({"jobs": [{"jobname": "fsperf", "sync": {"lat_ns": {"min": 1, "max": 9_500_000, "mean": 5e6, "percentile": pct}}}]});
    std::fs::write(res.join("node-b/etcd-perf.json"), fio.to_string()).unwrap();
    let outcomes = "          - pass: {when: \"p99 < 5ms\", message: \"ok (p99: {{ .P99 }})\"}\n          - fail: {message: \"slow (p99: {{ .P99 }})\"}\n";
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("never"), "", outcomes),
    )
    .unwrap();
    let o = preflight(&["--analyze-only", "bundle", "s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.starts_with(
        "\n   --- PASS Filesystem Performance\n      --- ok (p99: 4.464537ms)\n   --- FAIL: Filesystem Performance - Node node-b\n      --- slow (p99: 9ms)\n"
    ), "{out}");
    // Nothing was collected: the benchmark directory was never created.
    assert!(!d.path().join("never").exists());
}

#[test]
fn file_not_collected_and_timeouts() {
    let d = scratch();
    let outcomes = "          - warn: {when: fileNotCollected, message: \"no result\"}\n          - pass: {message: fine}\n";
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("b"), "", outcomes),
    )
    .unwrap();
    std::fs::create_dir(d.path().join("empty")).unwrap();
    let o = preflight(&["--analyze-only", "empty", "s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(4));
    assert!(
        text(&o.stdout).starts_with("\n   --- WARN: Filesystem Performance\n      --- no result\n")
    );

    // 256 MiB in 2300-byte fdatasynced writes takes far longer than the 1 s timeout.
    let bench = d.path().join("slow");
    let s = spec(
        &bench,
        "        timeout: 1s\n        runTime: \"0\"\n",
        outcomes,
    )
    .replace("fileSize: 1Mi", "fileSize: 256Mi");
    std::fs::write(d.path().join("t.yaml"), s).unwrap();
    let t0 = std::time::Instant::now();
    let o = preflight(&["--output", "out", "t.yaml"], d.path());
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t0.elapsed()
    );
    // The spec says what to do without a result: its fileNotCollected outcome (a warning).
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(
            "iogauge preflight: collector 'etcd-perf' timed out after 1s; its files were removed"
        ),
        "{}",
        text(&o.stderr)
    );
    // The test directory iogauge made is gone again, and nothing was written: no "results in",
    // no empty output directory.
    assert!(!bench.exists());
    assert!(
        !text(&o.stderr).contains("results in"),
        "{}",
        text(&o.stderr)
    );
    assert!(!d.path().join("out").exists());
    // Without one, the timeout itself is the (failing) verdict.
    let s = spec(
        &bench,
        "        timeout: 1s\n        runTime: \"0\"\n",
        EXAMPLE,
    )
    .replace("fileSize: 1Mi", "fileSize: 256Mi");
    std::fs::write(d.path().join("t.yaml"), s).unwrap();
    let o = preflight(&["--output", "out2", "t.yaml"], d.path());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with(
            "\n   --- FAIL: Filesystem Performance\n      --- collector 'etcd-perf' timed out after 1s; its files were removed\n"
        ),
        "{}",
        text(&o.stdout)
    );
    assert!(!bench.exists());
}

#[test]
fn spec_problems_exit_2_naming_the_key() {
    let d = scratch();
    let s = spec(&d.path().join("b"), "        filesize: 1Mi\n", EXAMPLE);
    std::fs::write(d.path().join("s.yaml"), s).unwrap();
    let o = preflight(&["s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge preflight: s.yaml (document 1): spec.hostCollectors[0].filesystemPerformance: unknown key 'filesize'; did you mean 'fileSize'?\n"
    );
    assert_eq!(text(&o.stdout), "");
    assert!(!d.path().join("b").exists());
    let o = preflight(&["missing.yaml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("iogauge preflight: cannot read spec 'missing.yaml': "));
    // A Kubernetes quantity that cannot be meant: 22m is 22 milli-bytes.
    let s = spec(&d.path().join("b"), "", EXAMPLE).replace("fileSize: 1Mi", "fileSize: 22m");
    std::fs::write(d.path().join("m.yaml"), s).unwrap();
    let o = preflight(&["m.yaml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge preflight: m.yaml (document 1): spec.hostCollectors[0].filesystemPerformance.fileSize: '22m': read as 22 milli-bytes (m = 1/1000 in Kubernetes quantities), which is not a whole number of bytes; did you mean 22Mi (22 MiB)?\n"
    );
    assert!(!d.path().join("b").exists());
}

#[test]
fn background_iops_runs_during_warmup_and_benchmark_at_its_budget() {
    let d = scratch();
    let bench = d.path().join("b");
    let extra =
        "        enableBackgroundIOPS: true\n        backgroundIOPSWarmupSeconds: 1\n        \
                 backgroundWriteIOPS: 100\n        backgroundWriteIOPSJobs: 2\n        \
                 backgroundReadIOPS: 50\n        backgroundReadIOPSJobs: 1\n";
    std::fs::write(d.path().join("s.yaml"), spec(&bench, extra, EXAMPLE)).unwrap();
    let t0 = std::time::Instant::now();
    let o = preflight(&["--output", "out", "s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The warmup really happened before the benchmark.
    assert!(t0.elapsed() >= std::time::Duration::from_secs(1));
    let err = text(&o.stderr);
    assert!(err.contains("background write: "), "{err}");
    let full: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            d.path()
                .join("out/host-collectors/filesystemPerformance/etcd-perf.iogauge.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let jobs = full["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "fsperf",
            "background-write-0",
            "background-write-1",
            "background-read-0"
        ]
    );
    let iops = |name: &str, dir: &str| -> f64 {
        jobs.iter().find(|j| j["jobname"] == name).unwrap()[dir]["iops"]
            .as_f64()
            .unwrap()
    };
    let writes = iops("background-write-0", "write") + iops("background-write-1", "write");
    assert!((85.0..=115.0).contains(&writes), "write IOPS {writes}");
    let reads = iops("background-read-0", "read");
    assert!((42.0..=58.0).contains(&reads), "read IOPS {reads}");
    // Background files are 4 KiB direct I/O and are removed with the rest.
    assert!(
        !bench.exists(),
        "the test directory iogauge made is removed"
    );
}

/// A fixture with /var/lib/etcd pointed at `dir`, 22Mi lowered to 1Mi and warmups to 1 s.
fn fixture(name: &str, dir: &Path) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .unwrap()
        .replace("/var/lib/etcd", dir.to_str().unwrap())
        .replace("fileSize: 22Mi", "fileSize: 1Mi")
        .replace(
            "backgroundIOPSWarmupSeconds: 10",
            "backgroundIOPSWarmupSeconds: 1",
        )
}

#[test]
fn seed_000_kurl_and_embedded_cluster_specs_run_end_to_end() {
    let d = scratch();
    let bench = d.path().join("etcd");
    for (file, result, title, last) in [
        (
            "seed000-support-bundle.yaml",
            "filesystem-latency-two-minute-benchmark",
            "   --- PASS Filesystem Performance",
            "--- PASS   filesystem-performance",
        ),
        (
            "kurl-style-host-preflight.yaml",
            "filesystem-write-latency-etcd",
            "   --- PASS Filesystem Performance",
            "--- PASS   kurl-builtin",
        ),
        (
            "embedded-cluster-style.yaml",
            "embedded-cluster-path-usage",
            "   --- PASS Filesystem Write Latency",
            "--- PASS   embedded-cluster",
        ),
    ] {
        std::fs::write(d.path().join(file), fixture(file, &bench)).unwrap();
        let o = preflight(&["--output", "out", file], d.path());
        let (out, err) = (text(&o.stdout), text(&o.stderr));
        // The outcome is whatever this (shared) disk earned; lines and exit code agree with it.
        let (title, last) = match o.status.code() {
            Some(0) => (title.to_string(), last.to_string()),
            Some(4) => (title.replace("PASS ", "WARN: "), last.to_string()),
            Some(3) => (
                title.replace("PASS ", "FAIL: "),
                last.replace("PASS", "FAIL"),
            ),
            c => panic!("{file}: exit {c:?}: {out}{err}"),
        };
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[1], title, "{file}: {out}");
        assert!(lines[2].starts_with("      --- "), "{file}: {out}");
        assert!(!lines[2].contains("{{"), "{file}: {out}");
        assert_eq!(lines[lines.len() - 2], last, "{file}: {out}");
        let res = d.path().join(format!(
            "out/host-collectors/filesystemPerformance/{result}.json"
        ));
        assert!(res.is_file(), "{file}: no {}", res.display());
        assert!(!bench.exists(), "{file} left files or its test directory");
        match file {
            "kurl-style-host-preflight.yaml" => {
                assert!(
                    err.contains("'operationSizeBytes' is read as 'operationSize' (2300 bytes)"),
                    "{err}"
                );
                assert!(err.contains("skipped (iogauge runs filesystemPerformance only): collectors: cpu, analyzers: cpu"), "{err}");
            }
            "embedded-cluster-style.yaml" => {
                // The pass message names the requirement; a slower disk gets another message.
                if o.status.code() == Some(0) {
                    assert!(
                        lines[2].contains(", which is better than the 10 ms requirement."),
                        "{out}"
                    );
                }
                assert_eq!(lines[3], "      --- Strict: true");
                // The same results, analysed again: the same outcome, whatever this disk earned.
                let outcome = if o.status.code() == Some(0) {
                    "pass"
                } else {
                    "fail"
                };
                let o = preflight(
                    &["--analyze-only", "out", "--format", "yaml", file],
                    d.path(),
                );
                let y = text(&o.stdout);
                assert!(
                    y.starts_with(&format!("{outcome}:\n- title: Filesystem Write Latency\n")),
                    "{y}"
                );
                // Only the pass outcome carries a link in this spec.
                assert_eq!(
                    y.contains("uri: https://etcd.io/docs/latest/op-guide/hardware/"),
                    outcome == "pass",
                    "{y}"
                );
                assert!(y.contains("strict: true"), "{y}");
            }
            _ => assert!(err.contains("background write: "), "{err}"),
        }
    }
}

#[test]
fn sigint_stops_the_collector_and_removes_its_files() {
    let d = scratch();
    let bench = d.path().join("b");
    let s = spec(
        &bench,
        "        timeout: 5m\n        runTime: \"0\"\n",
        EXAMPLE,
    )
    .replace("fileSize: 1Mi", "fileSize: 256Mi");
    std::fs::write(d.path().join("s.yaml"), s).unwrap();
    let child = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["preflight", "--output", "out", "s.yaml"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file(&bench.join("fsperf.0.0"));
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: plain kill(2) on our child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("interrupted; removed the files iogauge created"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        !bench.exists(),
        "the test directory iogauge made is removed"
    );
}

#[test]
fn a_timeout_during_layout_is_a_timeout_and_old_results_never_stand_in() {
    let d = scratch();
    // First a passing run that leaves a result in out/.
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("a"), "", EXAMPLE),
    )
    .unwrap();
    assert_eq!(
        preflight(&["--output", "out", "s.yaml"], d.path())
            .status
            .code(),
        Some(0)
    );
    // Then the same collector times out while laying out eight 100 MiB background files; a
    // second collector after it still runs.
    let slow = "        timeout: 50ms\n        enableBackgroundIOPS: true\n        backgroundReadIOPS: 100\n        backgroundReadIOPSJobs: 8\n";
    let second = format!(
        "    - filesystemPerformance:\n        collectorName: other\n        directory: {}\n        fileSize: 1Mi\n        datasync: true\n",
        d.path().join("b").display()
    );
    let s = spec(&d.path().join("a"), slow, EXAMPLE)
        .replace("  hostAnalyzers:\n", &format!("{second}  hostAnalyzers:\n"));
    std::fs::write(d.path().join("t.yaml"), s).unwrap();
    let o = preflight(&["--output", "out", "t.yaml"], d.path());
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(3), "{out}{err}");
    assert!(
        out.contains("--- collector 'etcd-perf' timed out after 50ms; its files were removed"),
        "{out}"
    );
    assert!(err.contains("collecting other in "), "{err}");
    assert!(d
        .path()
        .join("out/host-collectors/filesystemPerformance/other.json")
        .is_file());
    assert!(!d
        .path()
        .join("out/host-collectors/filesystemPerformance/etcd-perf.json")
        .exists());
    assert!(!d.path().join("a").exists() && !d.path().join("b").exists());
}

/// troubleshoot's `collect` spec (kind HostCollector): collectors run and their result files are
/// written; with no analyzer there is no verdict, nothing on stdout, and exit 0.
#[test]
fn a_host_collector_spec_only_collects() {
    let d = scratch();
    let bench = d.path().join("b");
    let s = format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostCollector\nmetadata:\n  name: disks\nspec:\n  \
         collectors:\n    - filesystemPerformance:\n        collectorName: fsperf\n        \
         directory: {}\n        fileSize: 1Mi\n        operationSize: 4096\n        datasync: true\n",
        bench.display()
    );
    std::fs::write(d.path().join("c.yaml"), s).unwrap();
    let o = preflight(&["--output", "out", "c.yaml"], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    assert!(
        text(&o.stderr).contains("results in out"),
        "{}",
        text(&o.stderr)
    );
    let r = d
        .path()
        .join("out/host-collectors/filesystemPerformance/fsperf.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(r).unwrap()).unwrap();
    assert!(v["P99"].as_u64().unwrap() > 0, "{v}");
    assert!(!bench.exists());
}
