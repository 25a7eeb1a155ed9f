//! What ships around `iogauge canary` (deploy/): the Prometheus alert rules and their promtool
//! unit tests, the Grafana dashboard, the systemd unit. promtool (Debian's `prometheus`
//! package) checks the rules, runs their tests and parses every dashboard query; every metric
//! and label they use must be one of the canary's contract (tests/common/canary_names.rs).
//! Without promtool these steps skip outside CI and fail under CI=true (.ci/run installs it).
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::common::canary_names::{exposition_problems, unknown_names};

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const RULES: &str = "deploy/prometheus/iogauge-canary-rules.yaml";
const RULE_TESTS: &str = "deploy/prometheus/iogauge-canary-rules.test.yaml";
const DASHBOARD: &str = "deploy/grafana/iogauge-canary.json";
const UNIT: &str = "deploy/systemd/iogauge-canary.service";
const DOC: &str = "docs/CANARY.md";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml(rel: &str) -> Value {
    yaml_serde::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel} is not YAML: {e}"))
}

/// Whether promtool is installed (see `common::have_tool`).
fn have_promtool() -> bool {
    common::have_tool(
        "promtool",
        "apt-get install -y --no-install-recommends prometheus",
    )
}

/// `promtool ARGS` in `cwd`: its stdout and stderr, asserted successful.
fn promtool(args: &[&str], cwd: &Path) -> String {
    let out = common::cmd("promtool")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    let text = common::text(&out.stdout) + &common::text(&out.stderr);
    assert!(out.status.success(), "promtool {args:?} failed:\n{text}");
    text
}

/// The alerting rules of the one group, by alert name.
fn alerts() -> BTreeMap<String, Value> {
    let doc = yaml(RULES);
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "one group");
    assert_eq!(groups[0]["name"], "iogauge-canary");
    let rules = groups[0]["rules"].as_array().unwrap();
    rules
        .iter()
        .map(|r| (r["alert"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

/// "35m", "2h", "30s" in seconds.
fn seconds(d: &str) -> u64 {
    let (n, unit) = d.split_at(d.len() - 1);
    let n: u64 = n.parse().unwrap_or_else(|_| panic!("duration {d:?}"));
    n * match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => panic!("duration {d:?}"),
    }
}

#[test]
fn rules_pass_promtool_check_and_their_unit_tests() {
    if !have_promtool() {
        return;
    }
    let text = promtool(&["check", "rules", RULES], &root());
    assert!(
        text.contains(&format!("SUCCESS: {} rules found", alerts().len())),
        "{text}"
    );
    // From elsewhere: the test file names its rules file relative to itself.
    let text = promtool(
        &["test", "rules", &root().join(RULE_TESTS).to_string_lossy()],
        &std::env::temp_dir(),
    );
    assert!(text.contains("SUCCESS"), "{text}");
}

/// The rules file is one top-level `groups:` mapping, usable as is as a PrometheusRule's spec;
/// each alert waits (`for:`), has a severity, and annotations that name the target and point at
/// an existing section of docs/CANARY.md.
#[test]
fn every_alert_has_for_severity_summary_and_a_runbook_anchor_that_exists() {
    let doc = yaml(RULES);
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["groups"],
        "a PrometheusRule spec holds only `groups`"
    );
    let anchors = doc_anchors(&read(DOC));
    let alerts = alerts();
    for want in [
        "IogaugeEtcdDiskSlow",
        "IogaugeVerdictFail",
        "IogaugeIopsBelowThreshold",
        "IogaugeCanaryStale",
        "IogaugeCanaryOverBudget",
        "IogaugeProbeErrors",
    ] {
        assert!(alerts.contains_key(want), "{want} is missing");
    }
    for (name, rule) in &alerts {
        let wait = rule["for"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no for:"));
        assert!(seconds(wait) >= 600, "{name}: for: {wait}");
        let severity = rule["labels"]["severity"].as_str().unwrap_or("");
        assert!(
            ["warning", "critical"].contains(&severity),
            "{name}: severity {severity:?}"
        );
        let a = &rule["annotations"];
        let summary = a["summary"].as_str().unwrap();
        assert!(summary.contains("{{ $labels."), "{name}: {summary}");
        if rule["expr"].as_str().unwrap().contains("iogauge_") && name != "IogaugeCanaryDown" {
            for l in ["node", "directory"] {
                assert!(
                    summary.contains(&format!("$labels.{l}")),
                    "{name}: {summary}"
                );
            }
            assert!(summary.contains("$value"), "{name}: {summary}");
        }
        assert!(!a["description"].as_str().unwrap().is_empty(), "{name}");
        let runbook = a["runbook"].as_str().unwrap();
        let anchor = runbook
            .rsplit_once("docs/CANARY.md#")
            .unwrap_or_else(|| panic!("{name}: the runbook names no docs/CANARY.md anchor"))
            .1;
        assert_eq!(anchor, name.to_lowercase(), "{name}");
        assert!(anchors.contains(anchor), "{name}: no #{anchor} in {DOC}");
        assert!(
            read(DOC).contains(&format!("| [{name}](#{anchor}) |")),
            "{name}: not in {DOC}'s table"
        );
    }
}

/// GitHub's anchors of a Markdown file: its headings' slugs and its `<a id=...>`s.
fn doc_anchors(md: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for line in md.lines() {
        if let Some(h) = line.strip_prefix('#') {
            let slug: String = h
                .trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            set.insert(slug);
        }
        for part in line.split("<a id=\"").skip(1) {
            set.insert(part.split('"').next().unwrap().to_string());
        }
    }
    set
}

/// The unit tests assert, for every alert, nothing one evaluation before an instant and the
/// alert at that instant (its `for:` just passed), and one group where everything stays silent.
#[test]
fn rule_tests_bracket_every_alert_and_keep_a_healthy_fleet_silent() {
    let doc = yaml(RULE_TESTS);
    let step = seconds(doc["evaluation_interval"].as_str().unwrap());
    let alerts = alerts();
    let mut bracketed = BTreeSet::new();
    let mut all_silent = false;
    for group in doc["tests"].as_array().unwrap() {
        let checks = group["alert_rule_test"].as_array().unwrap();
        let at = |c: &Value| seconds(c["eval_time"].as_str().unwrap());
        let fired = |c: &Value| !c["exp_alerts"].as_array().unwrap().is_empty();
        for after in checks.iter().filter(|c| fired(c)) {
            let name = after["alertname"].as_str().unwrap();
            if checks.iter().any(|before| {
                before["alertname"] == name && !fired(before) && at(before) + step == at(after)
            }) {
                bracketed.insert(name.to_string());
            }
        }
        let silent: BTreeSet<&str> = checks
            .iter()
            .filter(|c| !fired(c))
            .map(|c| c["alertname"].as_str().unwrap())
            .collect();
        all_silent |= alerts.keys().all(|a| silent.contains(a.as_str()));
    }
    let missing: Vec<&String> = alerts.keys().filter(|a| !bracketed.contains(*a)).collect();
    assert!(missing.is_empty(), "no before/after pair for {missing:?}");
    assert!(all_silent, "no group asserts silence for every alert");
}

/// Every metric and label the rules and the dashboard use is the canary's (or Prometheus's own
/// `up`, `job`, `instance`).
#[test]
fn rules_and_dashboard_use_only_the_contracts_metrics_and_labels() {
    let mut exprs: Vec<(String, String)> = alerts()
        .iter()
        .map(|(n, r)| (n.clone(), r["expr"].as_str().unwrap().to_string()))
        .collect();
    exprs.extend(dashboard_exprs(&dashboard()));
    let mut seen = BTreeSet::new();
    for (whose, expr) in &exprs {
        let bad = unknown_names(expr, &mut seen);
        assert!(bad.is_empty(), "{whose}: {bad:?} in {expr}");
    }
    // The names were found at all (an extractor that finds nothing would pass everything).
    for name in [
        "iogauge_window_latency_seconds",
        "iogauge_latency_seconds_bucket",
        "iogauge_verdict",
        "iogauge_canary_busy_budget_ratio",
        "up",
    ] {
        assert!(seen.contains(name), "{name} not found in any expression");
    }
}

/// The checker itself: a misspelt metric, a label the family lacks, and a grouping label
/// nobody has are all caught; functions, keywords, strings and durations are not names.
#[test]
fn the_name_checker_catches_misspellings() {
    let mut seen = BTreeSet::new();
    let ok = r#"histogram_quantile(0.99, sum by (node, le) (rate(iogauge_latency_seconds_bucket{kind="sync", job=~"x"}[5m]))) > on(node) group_left() max without(profile) (iogauge_canary_busy_ratio offset 1h) and bool up{instance!="iogauge_nope"} or time() - 1e3"#;
    assert_eq!(unknown_names(ok, &mut seen), Vec::<String>::new());
    assert_eq!(
        unknown_names(
            "sum by (nodes) (iogaug_verdict{profile=\"etcd\"})",
            &mut seen
        ),
        ["label nodes", "metric iogaug_verdict"]
    );
    assert_eq!(
        unknown_names("iogauge_canary_busy_ratio{profile=\"etcd\"}", &mut seen),
        ["label profile of iogauge_canary_busy_ratio"]
    );
}

/// The exposition checker the canary's own tests use: a text that follows the contract passes,
/// each kind of departure is named.
#[test]
fn the_exposition_checker_names_each_departure() {
    let t = r#"profile="etcd",directory="/d",device="",node="n1""#;
    let ok = format!(
        "# HELP iogauge_verdict The profile's verdict.\n# TYPE iogauge_verdict gauge\n\
         iogauge_verdict{{{t},verdict=\"pass\"}} 1\n\
         # TYPE iogauge_latency_seconds histogram\n\
         iogauge_latency_seconds_bucket{{{t},kind=\"sync\",le=\"0.01\"}} 3\n\
         iogauge_latency_seconds_sum{{kind=\"sync\",{t}}} 0.02\n\
         iogauge_latency_seconds_count{{{t},kind=\"sync\"}} 3\n\
         # TYPE iogauge_probes counter\n\
         iogauge_probes_total{{{t}}} 4\n\
         iogauge_probes_created{{{t}}} 1.7e9\n\
         iogauge_canary_busy_ratio{{directory=\"/d\",device=\"vda\",node=\"a,b=\\\"c\\\"\"}} 0.01\n# EOF\n"
    );
    assert_eq!(exposition_problems(&ok), Vec::<String>::new());
    let bad = format!(
        "# TYPE iogauge_verdict counter\n\
         iogauge_verdict{{{t}}} 1\n\
         iogauge_canary_busy_ratio{{{t}}} 0.01\n\
         iogauge_window_p99{{{t}}} 1\n\
         iogauge_latency_seconds_bucket{{{t},kind=\"sync\"}} 3\n"
    );
    let problems = exposition_problems(&bad);
    assert_eq!(problems.len(), 5, "{problems:#?}");
    for (p, want) in problems.iter().zip([
        "iogauge_verdict: TYPE counter",
        "iogauge_verdict: labels",
        "iogauge_canary_busy_ratio: labels",
        "iogauge_window_p99: not a contract series",
        "iogauge_latency_seconds_bucket: labels",
    ]) {
        assert!(p.starts_with(want), "{p}");
    }
}

fn dashboard() -> Value {
    serde_json::from_str(&read(DASHBOARD)).unwrap_or_else(|e| panic!("{DASHBOARD}: {e}"))
}

/// Each panel target's expression (panel title and refId as its name), with every template
/// variable replaced as Grafana would: query variables by "All" (`.*`), custom ones by their
/// current value, Grafana's own intervals by 5m; and each variable's label_values() selector.
fn dashboard_exprs(d: &Value) -> Vec<(String, String)> {
    let mut subst: Vec<(String, String)> = ["$__rate_interval", "$__interval", "$__range"]
        .iter()
        .map(|v| (v.to_string(), "5m".to_string()))
        .collect();
    let vars = d["templating"]["list"].as_array().unwrap();
    for v in vars {
        let name = v["name"].as_str().unwrap();
        let value = match v["type"].as_str().unwrap() {
            "query" => ".*".to_string(),
            "custom" => v["current"]["value"].as_str().unwrap().to_string(),
            _ => continue,
        };
        subst.push((format!("${{{name}}}"), value.clone()));
        subst.push((format!("${name}"), value));
    }
    // Longer names first: $directory before a hypothetical $dir.
    subst.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
    let fill = |e: &str| {
        let mut e = e.to_string();
        for (k, v) in &subst {
            e = e.replace(k.as_str(), v);
        }
        assert!(!e.contains('$'), "an unknown variable in {e}");
        e
    };
    let mut out = Vec::new();
    for v in vars.iter().filter(|v| v["type"] == "query") {
        let q = v["query"].as_str().unwrap();
        let inner = q
            .strip_prefix("label_values(")
            .and_then(|s| s.rsplit_once(','))
            .unwrap_or_else(|| panic!("variable query {q}"))
            .0;
        out.push((format!("variable {}", v["name"]), fill(inner)));
    }
    for p in d["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            let name = format!("panel {} {}", p["title"], t["refId"]);
            out.push((name, fill(t["expr"].as_str().unwrap())));
        }
    }
    out
}

/// The dashboard parses, is a current schema with a prometheus `datasource` variable and node,
/// profile and directory variables; every panel has a unique id, a place that overlaps no other
/// one, the `datasource` variable, and targets whose expressions promtool parses.
#[test]
fn dashboard_is_well_formed_and_promtool_parses_its_queries() {
    let d = dashboard();
    assert!(d["schemaVersion"].as_u64().unwrap() >= 39);
    let vars: BTreeMap<&str, &Value> = d["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), v))
        .collect();
    assert_eq!(vars["datasource"]["type"], "datasource");
    assert_eq!(vars["datasource"]["query"], "prometheus");
    for v in ["node", "profile", "directory"] {
        assert_eq!(vars[v]["type"], "query", "{v}");
        let q = vars[v]["query"].as_str().unwrap();
        assert!(
            q.starts_with("label_values(") && q.ends_with(&format!(", {v})")),
            "{q}"
        );
    }
    let panels = d["panels"].as_array().unwrap();
    let mut ids = BTreeSet::new();
    let mut boxes: Vec<(u64, u64, u64, u64)> = Vec::new();
    for p in panels {
        let title = &p["title"];
        assert!(ids.insert(p["id"].as_u64().unwrap()), "{title}: id reused");
        let g = &p["gridPos"];
        let [x, y, w, h] = ["x", "y", "w", "h"].map(|k| g[k].as_u64().unwrap());
        assert!(w > 0 && h > 0 && x + w <= 24, "{title}: gridPos {g}");
        for &(x2, y2, w2, h2) in &boxes {
            let apart = x + w <= x2 || x2 + w2 <= x || y + h <= y2 || y2 + h2 <= y;
            assert!(apart, "{title}: overlaps another panel");
        }
        boxes.push((x, y, w, h));
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        let targets = p["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{title}: no query");
        for t in targets {
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{title}");
        }
    }
    let kinds: BTreeSet<&str> = panels.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert!(kinds.contains("state-timeline"), "no verdict timeline");
    if !have_promtool() {
        return;
    }
    // promtool parses expressions only as rules: one recording rule per query.
    let rules: Vec<Value> = dashboard_exprs(&d)
        .iter()
        .enumerate()
        .map(|(i, (_, e))| json!({"record": format!("dashboard:query:{i}"), "expr": e}))
        .collect();
    let n = rules.len();
    let dir = common::scratch();
    let doc = json!({"groups": [{"name": "dashboard", "rules": rules}]});
    // JSON is YAML: promtool reads it as is.
    std::fs::write(dir.path().join("dashboard.yaml"), doc.to_string()).unwrap();
    let text = promtool(&["check", "rules", "dashboard.yaml"], dir.path());
    assert!(
        text.contains(&format!("SUCCESS: {n} rules found")),
        "{text}"
    );
}

/// The unit is hardened and writes where the canary writes: the probe and textfile directories
/// its ExecStart names are its ReadWritePaths. Where systemd-analyze exists, `verify` accepts
/// it without a warning (ExecStart pointed at the built binary, which must exist) and
/// `security` rates its exposure 2.0 or lower; CI need not install systemd.
#[test]
fn systemd_unit_is_hardened_and_verifies() {
    let unit = read(UNIT);
    let lines: Vec<&str> = unit.lines().collect();
    for want in [
        "Type=simple",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "ProtectHome=yes",
        "CapabilityBoundingSet=",
        "Restart=on-failure",
        "KillSignal=SIGTERM",
        "StateDirectory=etcd-canary iogauge-canary",
    ] {
        assert!(lines.contains(&want), "{UNIT}: no {want}");
    }
    assert!(lines.iter().any(|l| l.starts_with("TimeoutStopSec=")));
    let exec = unit.replace("\\\n", " ");
    let exec = exec
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    let args: Vec<&str> = exec.split_whitespace().collect();
    assert_eq!(args[..2], ["/usr/local/bin/iogauge", "canary"]);
    let after = |flag: &str| args[args.iter().position(|a| *a == flag).unwrap() + 1];
    let writable: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("ReadWritePaths="))
        .flat_map(|l| l.split_whitespace())
        .map(|p| p.trim_start_matches('-'))
        .collect();
    for flag in ["--dir", "--textfile"] {
        assert!(
            writable.contains(&after(flag)),
            "{flag} {} is not writable",
            after(flag)
        );
    }
    let history = Path::new(after("--history-db")).parent().unwrap();
    assert_eq!(
        history,
        Path::new("/var/lib/iogauge-canary"),
        "a StateDirectory"
    );

    let ok = common::cmd("systemd-analyze").arg("--version").output();
    if !ok.map(|o| o.status.success()).unwrap_or(false) {
        eprintln!("skipping systemd-analyze verify: systemd-analyze is not installed");
        return;
    }
    let dir = common::scratch();
    let path = dir.path().join("iogauge-canary.service");
    std::fs::write(
        &path,
        unit.replace("/usr/local/bin/iogauge", common::IOGAUGE),
    )
    .unwrap();
    let out = common::cmd("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .unwrap();
    let text = common::text(&out.stdout) + &common::text(&out.stderr);
    // verify ignores a value it cannot parse with exit 0, but says so.
    assert!(out.status.success() && text.trim().is_empty(), "{text}");
    let out = common::cmd("systemd-analyze")
        .args(["security", "--offline=yes", "--threshold=20", "--no-pager"])
        .arg(&path)
        .output()
        .unwrap();
    let text = common::text(&out.stdout) + &common::text(&out.stderr);
    assert!(out.status.success(), "exposure above 2.0:\n{text}");
}

/// The two computed panels show what they say, run by promtool on a fleet of four: the verdict
/// timeline turns each target's current verdict into its value mapping's number, and the
/// outlier panel divides each target's p99 by the fleet's median.
#[test]
fn dashboard_verdict_and_outlier_queries_compute_what_their_panels_show() {
    if !have_promtool() {
        return;
    }
    let exprs = dashboard_exprs(&dashboard());
    let query = |title: &str| {
        let (_, e) = exprs.iter().find(|(n, _)| n.contains(title)).unwrap();
        e.clone()
    };
    let target = |node: &str| {
        format!(
            r#"profile="etcd",directory="/d",device="vda",node="{node}",job="iogauge-canary",instance="{node}:9465""#
        )
    };
    // node, its verdict, its window p99: the median is 4 ms.
    let fleet = [
        ("n1", "fail", "0.008"),
        ("n2", "pass", "0.004"),
        ("n3", "undecided", "0.004"),
        ("n4", "error", "0.002"),
    ];
    let mut series = Vec::new();
    for (node, verdict, p99) in fleet {
        for state in ["undecided", "pass", "warn", "fail", "error"] {
            let on = if state == verdict { "1x10" } else { "0x10" };
            series.push(json!({"series": format!(r#"iogauge_verdict{{{},verdict="{state}"}}"#, target(node)), "values": on}));
        }
        series.push(json!({"series": format!(r#"iogauge_window_latency_seconds{{{},metric="sync_p99"}}"#, target(node)), "values": format!("{p99}x10")}));
    }
    let verdicts: Vec<Value> = [("n1", 3), ("n2", 1), ("n3", 0), ("n4", 4)]
        .iter()
        .map(|(n, v)| json!({"labels": format!(r#"{{directory="/d",node="{n}",profile="etcd"}}"#), "value": v}))
        .collect();
    let ratios: Vec<Value> = [("n1", 2.0), ("n2", 1.0), ("n3", 1.0), ("n4", 0.5)]
        .iter()
        .map(|(n, v)| json!({"labels": format!(r#"{{{},metric="sync_p99"}}"#, target(n)), "value": v}))
        .collect();
    let doc = json!({
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [{
            "interval": "1m",
            "input_series": series,
            "promql_expr_test": [
                {"expr": query("Verdict timeline"), "eval_time": "5m", "exp_samples": verdicts},
                {"expr": query("Outliers"), "eval_time": "5m", "exp_samples": ratios},
            ],
        }],
    });
    let dir = common::scratch();
    std::fs::write(dir.path().join("panels.test.yaml"), doc.to_string()).unwrap();
    let text = promtool(&["test", "rules", "panels.test.yaml"], dir.path());
    assert!(text.contains("SUCCESS"), "{text}");
}
