//! The exposition of a constructed document: every family once, labels escaped, histograms
//! whole, OpenMetrics' differences.

use super::*;
use crate::report::document::{
    CanaryBudget, CanaryErrorCount, CanaryHistogram, CanaryMetric, SCHEMA_VERSION,
};

fn doc() -> CanaryDocument {
    CanaryDocument {
        schema_version: SCHEMA_VERSION,
        kind: "canary".into(),
        iogauge: "0.1.0".into(),
        node: "n\"1".into(),
        dir: "/var/lib/a\\b\nc".into(),
        device: Some("vda".into()),
        started_at: 1.0,
        at: 2.0,
        every_s: 300.0,
        interval_s: 300.0,
        window_s: 3600.0,
        budget: CanaryBudget {
            max_busy: 0.01,
            busy: 0.002,
            measured_by: "device".into(),
            scale: 1.0,
        },
        profiles: vec![CanaryProfile {
            profile: "etcd".into(),
            title: "etcd WAL".into(),
            verdict: CanaryVerdict::Fail,
            confidence: 0.999,
            metrics: vec![CanaryMetric {
                key: "sync_p99".into(),
                label: "p99 fdatasync latency".into(),
                unit: "seconds".into(),
                better: "lower".into(),
                value: Some(0.0123),
                pass: 0.01,
                warn: None,
                samples: 5000,
                probes: 10,
                verdict: CanaryVerdict::Fail,
                bound: Some(0.011),
            }],
            probes: 12,
            errors: vec![CanaryErrorCount {
                reason: "no_space".into(),
                count: 2,
            }],
            last_success: Some(1_800_000_000.5),
            last_error: None,
            last_duration_s: Some(1.25),
            latencies: vec![CanaryHistogram {
                kind: "sync".into(),
                buckets: vec![(0.005, 10), (0.01, 40)],
                count: 50,
                sum: 0.4,
            }],
        }],
    }
}

#[test]
fn every_series_with_escaped_labels() {
    let t = render_openmetrics(&doc(), Flavour::Text);
    let base = r#"directory="/var/lib/a\\b\nc",device="vda",node="n\"1""#;
    for line in [
        format!("iogauge_canary_info{{version=\"0.1.0\",{base}}} 1"),
        format!("iogauge_latency_seconds_bucket{{profile=\"etcd\",{base},kind=\"sync\",le=\"0.01\"}} 40"),
        format!("iogauge_latency_seconds_bucket{{profile=\"etcd\",{base},kind=\"sync\",le=\"+Inf\"}} 50"),
        format!("iogauge_latency_seconds_count{{profile=\"etcd\",{base},kind=\"sync\"}} 50"),
        format!("iogauge_window_latency_seconds{{profile=\"etcd\",{base},metric=\"sync_p99\"}} 0.0123"),
        format!("iogauge_latency_threshold_seconds{{profile=\"etcd\",{base},metric=\"sync_p99\",level=\"pass\"}} 0.01"),
        format!("iogauge_window_samples{{profile=\"etcd\",{base},metric=\"sync_p99\"}} 5000"),
        format!("iogauge_verdict{{profile=\"etcd\",{base},verdict=\"fail\"}} 1"),
        format!("iogauge_verdict{{profile=\"etcd\",{base},verdict=\"pass\"}} 0"),
        format!("iogauge_probes_total{{profile=\"etcd\",{base}}} 12"),
        format!("iogauge_probe_errors_total{{profile=\"etcd\",{base},reason=\"no_space\"}} 2"),
        format!("iogauge_last_success_timestamp_seconds{{profile=\"etcd\",{base}}} 1800000000.5"),
        format!("iogauge_probe_duration_seconds{{profile=\"etcd\",{base}}} 1.25"),
        format!("iogauge_canary_busy_ratio{{{base}}} 0.002"),
        format!("iogauge_canary_busy_budget_ratio{{{base}}} 0.01"),
        format!("iogauge_canary_interval_seconds{{{base}}} 300"),
        format!("iogauge_canary_probe_scale{{{base}}} 1"),
    ] {
        assert!(t.lines().any(|l| l == line), "missing {line}\n{t}");
    }
    // No warn threshold, no IOPS metric: no such series, but their families are declared once.
    assert!(!t.contains("level=\"warn\""));
    assert!(!t.contains("\niogauge_window_iops{"));
    for fam in [
        "iogauge_window_iops",
        "iogauge_verdict",
        "iogauge_probes_total",
    ] {
        assert_eq!(t.matches(&format!("# TYPE {fam} ")).count(), 1, "{fam}");
    }
    assert!(!t.contains("# EOF"));
}

#[test]
fn openmetrics_names_counter_families_without_total_and_ends() {
    let t = render_openmetrics(&doc(), Flavour::OpenMetrics);
    assert!(t.contains("# TYPE iogauge_probes counter\n"));
    assert!(t.contains("# TYPE iogauge_probe_errors counter\n"));
    assert!(t.contains("\niogauge_probes_total{"));
    assert!(t.ends_with("# EOF\n"));
}
