//! Reading a canary pod's log (constructed documents, framed as the pod frames them) and the
//! worst verdict over the rows.

use super::*;
use crate::report::document::{CanaryBudget, CanaryMetric, CanaryProfile, SCHEMA_VERSION};
use crate::report::frames::render_canary_frames;

fn doc(verdict: CanaryVerdict, at: f64) -> CanaryDocument {
    CanaryDocument {
        schema_version: SCHEMA_VERSION,
        kind: "canary".into(),
        iogauge: env!("CARGO_PKG_VERSION").into(),
        node: "cp-1".into(),
        dir: "/data".into(),
        device: Some("vda".into()),
        started_at: 1.0,
        at,
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
            verdict,
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
                verdict,
                bound: Some(0.011),
            }],
            probes: 12,
            errors: vec![],
            last_success: Some(at),
            last_error: None,
            last_duration_s: Some(1.25),
            latencies: vec![],
        }],
    }
}

fn row(d: Option<CanaryDocument>) -> Row {
    Row {
        target: "storage class fast".into(),
        pod: "p".into(),
        node: None,
        ready: true,
        current: d.is_some(),
        document: d,
        problem: None,
    }
}

#[test]
fn the_latest_document_is_read_even_when_the_tail_cut_an_earlier_one() {
    let first = render_canary_frames(&doc(CanaryVerdict::Warn, 10.0));
    let last = render_canary_frames(&doc(CanaryVerdict::Fail, 20.0));
    let log = format!("{first}iogauge canary: etcd: FAIL over the last 1h\n{last}");
    let d = read_document(&log).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((d.at, d.profiles[0].verdict), (20.0, CanaryVerdict::Fail));
    // tailLines/limitBytes may start the log in the middle of an older document.
    let cut = &log[first.len() / 2..];
    assert_eq!(read_document(cut).map(|d| d.at), Ok(20.0));
}

#[test]
fn a_log_without_a_document_another_kind_or_version_says_why() {
    let e = read_document("iogauge canary: probing /data every 5m\n").unwrap_err();
    assert!(
        e.starts_with("no canary document in the pod's log yet")
            && e.ends_with("it ends with: iogauge canary: probing /data every 5m"),
        "{e}"
    );
    let mut other = doc(CanaryVerdict::Pass, 1.0);
    other.kind = "check".into();
    let e = read_document(&render_canary_frames(&other)).unwrap_err();
    assert_eq!(
        e,
        "the pod's result is not a canary document but kind check"
    );
    let mut old = doc(CanaryVerdict::Pass, 1.0);
    old.iogauge = "0.0.9".into();
    let e = read_document(&render_canary_frames(&old)).unwrap_err();
    assert!(
        e.starts_with("the pod ran iogauge 0.0.9 but this is iogauge"),
        "{e}"
    );
}

#[test]
fn the_worst_row_decides_fail_over_missing_over_warn() {
    let d = |v| Some(doc(v, 1.0));
    assert_eq!(worst(&[row(d(CanaryVerdict::Pass))]), Worst::Pass);
    assert_eq!(
        worst(&[
            row(d(CanaryVerdict::Pass)),
            row(d(CanaryVerdict::Undecided))
        ]),
        Worst::Warn
    );
    assert_eq!(
        worst(&[row(d(CanaryVerdict::Warn)), row(None)]),
        Worst::Missing
    );
    assert_eq!(
        worst(&[row(d(CanaryVerdict::Error)), row(d(CanaryVerdict::Pass))]),
        Worst::Missing
    );
    assert_eq!(
        worst(&[row(None), row(d(CanaryVerdict::Fail))]),
        Worst::Fail
    );
}

#[test]
fn a_document_of_a_pod_not_ready_or_older_than_3_intervals_counts_as_none() {
    let d = doc(CanaryVerdict::Pass, 1000.0);
    assert_eq!(not_current(&d, true, 1000.0 + 900.0), None);
    let old = not_current(&d, true, 1000.0 + 901.0).unwrap_or_default();
    assert!(
        old.starts_with("its latest document is 901s old, older than 3 intervals of 300s"),
        "{old}"
    );
    let unready = not_current(&d, false, 1001.0).unwrap_or_default();
    assert!(
        unready.starts_with("not ready: its /healthz fails"),
        "{unready}"
    );
    let mut stale = row(Some(d));
    stale.current = false;
    assert_eq!(worst(&[stale]), Worst::Missing);
}

#[test]
fn a_crash_looping_container_is_told_from_one_that_runs() {
    let pod = |state: serde_json::Value, last: serde_json::Value| -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "status": {"containerStatuses": [{"name": "iogauge", "image": "i", "imageID": "",
                "ready": false, "restartCount": 3, "state": state, "lastState": last}]}
        }))
        .unwrap()
    };
    let crashed = pod(
        serde_json::json!({"waiting": {"reason": "CrashLoopBackOff"}}),
        serde_json::json!({"terminated": {"exitCode": 1, "reason": "Error"}}),
    );
    assert_eq!(restarting(&crashed), Some(("CrashLoopBackOff".into(), 1)));
    assert!(started(&crashed));
    let running = pod(
        serde_json::json!({"running": {"startedAt": "2026-01-01T00:00:00Z"}}),
        serde_json::json!({}),
    );
    assert_eq!(restarting(&running), None);
    let creating = pod(
        serde_json::json!({"waiting": {"reason": "ContainerCreating"}}),
        serde_json::json!({}),
    );
    assert_eq!((restarting(&creating), started(&creating)), (None, false));
}
