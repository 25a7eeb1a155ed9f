//! `iogauge preflight --sequential` on this disk: a collector whose analyzers' conditions are
//! clear stops early and still writes consistent results; one judged by the average runs
//! whole and says why.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::path::Path;

use common::preflight;

/// One collector in `dir` (4 KiB writes, fdatasync after each) and one analyzer.
fn spec(dir: &Path, file_size: &str, outcomes: &str) -> String {
    format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: seq\nspec:\n  \
         hostCollectors:\n    - filesystemPerformance:\n        collectorName: disk\n        \
         directory: {}\n        fileSize: {file_size}\n        operationSize: 4096\n        \
         datasync: true\n        runTime: \"60\"\n        timeout: 2m\n  hostAnalyzers:\n    - \
         filesystemPerformance:\n        collectorName: disk\n        outcomes:\n{outcomes}",
        dir.display()
    )
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

const RESULTS: &str = "out/host-collectors/filesystemPerformance";

/// troubleshoot's table is one run's distribution: the percentiles rise and lie within min..max,
/// the average too.
fn assert_consistent(t: &Value) {
    let n = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{k} in {t}"));
    let keys = [
        "P1", "P5", "P10", "P20", "P30", "P40", "P50", "P60", "P70", "P80", "P90", "P95", "P99",
        "P995", "P999", "P9995", "P9999",
    ];
    let mut last = n("Min");
    for k in keys {
        assert!(n(k) >= last, "{k} below the one before: {t}");
        last = n(k);
    }
    assert!(last <= n("Max"), "{t}");
    assert!(n("Min") <= n("Average") && n("Average") <= n("Max"), "{t}");
}

#[test]
fn a_clear_collector_stops_early_and_writes_the_shorter_runs_results() {
    common::serial();
    let d = scratch();
    // 256 MiB of 4 KiB fdatasyncs is 65,536 of them: at least 9 s on this disk whole. A p99
    // below 1 s is clear on any disk that works: decided after the floor (a second, and about
    // a thousand syncs for a p99 at 99.9 %). A rate is not tested here: this disk's fast and
    // slow spells keep a rate's batches correlated for seconds (run/sequential.rs waits).
    let outcomes = "          - warn: {when: fileNotCollected, message: none}\n          - pass: \
                    {when: \"p99 < 1s\", message: \"ok: {{ .P99 }}\"}\n          - fail: \
                    {when: \"p99 >= 1s\", message: \"p99 too high\"}\n";
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("bench"), "256Mi", outcomes),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    // Saved to a history of its own, and drawn as a page, to see both mark the early stop.
    let o = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .env_remove("IOGAUGE_NO_HISTORY")
        .args([
            "preflight",
            "--sequential",
            "--output",
            "out",
            "--report",
            "page.html",
        ])
        .args(["--history-db", "hist.db", "s.yaml"])
        .current_dir(d.path())
        .output()
        .unwrap();
    let took = t0.elapsed().as_secs_f64();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(took < 30.0, "{took} s: {out}{err}");
    // The text says how the verdict was reached, under the outcome, as check says it.
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], "   --- PASS Filesystem Performance", "{out}");
    assert!(lines[2].starts_with("      --- ok: "), "{out}");
    assert!(
        lines[3].starts_with("      --- Sequential: decided after ")
            && lines[3].contains(" s of a recipe of 65,536 I/Os: ")
            && lines[3].contains("(threshold 1 s)")
            && lines[3].ends_with(" at 99.9 % confidence"),
        "{out}"
    );
    // The document carries the course: stopped early, both thresholds decided the right way.
    let doc = read_json(&d.path().join("out/preflight.iogauge.json"));
    let c = &doc["collectors"][0];
    let s = &c["sequential"];
    assert_eq!(s["stopped_early"], true, "{c}");
    assert_eq!(c["ran_whole"], Value::Null);
    assert_eq!(s["full_ios"], 65536);
    let decided = |key: &str| {
        s["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["metric"] == key)
            .unwrap_or_else(|| panic!("{key} in {s}"))
            .clone()
    };
    let p99 = decided("fdatasync_p99");
    assert_eq!(
        (&p99["side"], p99["threshold"].as_f64()),
        (&"below".into(), Some(1e9))
    );
    let p99_bound = p99["bound"].as_f64().unwrap();
    assert!(p99_bound < 0.9e9, "{p99}");
    assert_eq!(s["decisions"].as_array().unwrap().len(), 1);
    // The result files exist and describe the shorter run, consistently.
    let res = d.path().join(RESULTS);
    let table = read_json(&res.join("disk.json"));
    assert_consistent(&table);
    assert_eq!(c["results"], table);
    let full = read_json(&res.join("disk.iogauge.json"));
    let job = &full["jobs"][0];
    let done = job["write"]["total_ios"].as_u64().unwrap();
    assert!(
        done >= s["ios"].as_u64().unwrap() && done < 65536,
        "{done} writes, {s}"
    );
    assert_eq!(job["sync"]["total_ios"], done);
    assert_eq!(
        job["sync"]["lat_ns"]["percentile"]["99.000000"],
        table["P99"]
    );
    let notes = full["iogauge"]["notes"].to_string();
    assert!(
        notes.contains("disk: --sequential: decided after "),
        "{notes}"
    );
    // The analyzer's outcome agrees with the stated bound: the shorter run's p99 lies below
    // the bound's side of 1 s, so "ok".
    assert!(
        table["P99"].as_u64().unwrap() as f64 <= p99_bound.max(1.0) * 1.5,
        "{table}"
    );
    assert!(table["P99"].as_u64().unwrap() < 1_000_000_000);
    assert_eq!(doc["outcomes"][0]["verdict"], "pass");
    assert!(!d.path().join("bench").exists());
    let page = std::fs::read_to_string(d.path().join("page.html")).unwrap();
    assert!(
        page.contains("<p class=\"muted\">decided after "),
        "the page says how"
    );
    let h = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["history", "--history-db", "hist.db", "--format", "json"])
        .current_dir(d.path())
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&h.stdout).unwrap();
    let kv = rows[0]["key_values"][0].as_str().unwrap();
    assert!(
        kv.starts_with("disk p99 ") && kv.ends_with(" ms (stopped early)"),
        "{kv}"
    );
    eprintln!("preflight --sequential, clear case: {took:.1} s, {done} of 65,536 writes");
}

#[test]
fn a_collector_judged_by_its_average_runs_whole_and_says_why() {
    common::serial();
    let d = scratch();
    // 1 MiB of 4 KiB writes: 256 fdatasyncs, whole. `iops` is read from the full report beside
    // troubleshoot's table (which has no rate).
    let outcomes =
        "          - fail: {when: \"iops < 1\", message: \"{{ .IOPS }} IOPS\"}\n          \
                    - pass: {when: \"p99 < 1s\", message: \"fast, {{ .IOPS }} IOPS\"}\n          \
                    - warn: {when: \"average >= 1s\", message: slow}\n";
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("bench"), "1Mi", outcomes),
    )
    .unwrap();
    let o = preflight(&["--sequential", "--output", "out", "s.yaml"], d.path());
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let why = "an analyzer compares average, which only the whole run measures";
    assert!(
        err.contains(&format!(
            "iogauge preflight: collector 'disk' runs whole: {why}\n"
        )),
        "{err}"
    );
    assert!(
        out.contains(&format!(
            "      --- Sequential: ran the whole collector, not watched: {why}\n"
        )),
        "{out}"
    );
    let doc = read_json(&d.path().join("out/preflight.iogauge.json"));
    let c = &doc["collectors"][0];
    assert_eq!(c["sequential"], Value::Null, "{c}");
    assert_eq!(c["ran_whole"], why);
    assert_eq!(doc["outcomes"][0]["verdict"], "pass", "{doc}");
    let message = doc["outcomes"][0]["message"].as_str().unwrap();
    let rate: f64 = message
        .strip_prefix("fast, ")
        .and_then(|m| m.strip_suffix(" IOPS"))
        .unwrap_or_else(|| panic!("{message}"))
        .parse()
        .unwrap();
    assert!(rate >= 1.0, "{message}");
    let full = read_json(&d.path().join(RESULTS).join("disk.iogauge.json"));
    assert_eq!(full["jobs"][0]["write"]["total_ios"], 256);
    assert_consistent(&read_json(&d.path().join(RESULTS).join("disk.json")));
}

#[test]
fn sequential_with_analyze_only_is_refused() {
    let d = scratch();
    std::fs::write(
        d.path().join("s.yaml"),
        spec(d.path(), "1Mi", "          - pass: {}\n"),
    )
    .unwrap();
    let o = preflight(&["--sequential", "--analyze-only", ".", "s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains(
        "--sequential decides when collectors stop, and --analyze-only runs none: leave one of \
         them out"
    ));
}
