//! The canary's objects from a request: names within Kubernetes' limits, the labels uninstall
//! and status select by, the pod's command line, the operator's objects only when asked.

use super::*;
use crate::cluster::canary::{selector, Operator, CANARY_LABEL};
use crate::cluster::request::PodOptions;

fn req() -> CanaryRequest {
    CanaryRequest {
        name: "twelve-chars".into(),
        profiles: vec!["etcd".into(), "sync-iops".into()],
        every: "5m".into(),
        window: "1h".into(),
        window_s: 3600,
        max_busy: "0.5%".into(),
        nodes: Some("disk=ssd".into()),
        host_path: Some("/var/lib/etcd".into()),
        storage_classes: vec![format!("{}-class", "x".repeat(200)), "fast".into()],
        claim_size: 2 << 30,
        pod: PodOptions {
            image: "r/iogauge:1".into(),
            ..PodOptions::default()
        },
        operator: Operator::Auto,
        monitor_labels: vec![("release".into(), "prom".into())],
    }
}

#[test]
fn every_object_is_labelled_named_within_limits_and_runs_the_canary() {
    let r = req();
    let objs = objects(&r, "ns", true).unwrap();
    let kinds: Vec<&str> = objs.iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "Service",
            "DaemonSet",
            "StatefulSet",
            "StatefulSet",
            "ServiceMonitor",
            "PrometheusRule"
        ]
    );
    for o in &objs {
        assert_eq!(o["metadata"]["labels"][CANARY_LABEL], "twelve-chars", "{o}");
        assert!(o["metadata"]["name"].as_str().unwrap().len() <= 52, "{o}");
    }
    // Each workload's pods carry every label of the canary's selector, and their own target.
    for o in &objs[1..4] {
        let l = &o["spec"]["template"]["metadata"]["labels"];
        for kv in selector("twelve-chars").split(',') {
            let (k, v) = kv.split_once('=').unwrap();
            assert_eq!(l[k], v, "{o}");
        }
        assert_eq!(
            o["spec"]["selector"]["matchLabels"]["iogauge.dev/target"],
            l["iogauge.dev/target"]
        );
    }
    assert_ne!(objs[2]["metadata"]["name"], objs[3]["metadata"]["name"]);
    assert_eq!(
        canary_args(&r).join(" "),
        "canary etcd sync-iops --dir /data --listen 0.0.0.0:9465 --node $(NODE_NAME) --every 5m \
         --window 1h --max-busy 0.5% --format kube-frames --no-history"
    );
    assert_eq!(objs[4]["metadata"]["labels"]["release"], "prom");
    assert!(objs[5]["spec"]["groups"].is_array(), "{}", objs[5]);
    assert_eq!(objects(&r, "ns", false).unwrap().len(), 4);
    let yaml = yaml(&objs).unwrap();
    assert_eq!(yaml.matches("---\n").count(), 6);
}

#[test]
fn liveness_waits_out_a_cycle_as_long_as_the_window() {
    assert_eq!(liveness_failures(3600), 60);
    assert_eq!(liveness_failures(3601), 61);
    assert_eq!(liveness_failures(60), 10);
    assert_eq!(liveness_failures(u64::MAX), i32::MAX);
    let objs = objects(&req(), "ns", false).unwrap();
    let ds = objs.iter().find(|o| o["kind"] == "DaemonSet").unwrap();
    let live = &ds["spec"]["template"]["spec"]["containers"][0]["livenessProbe"];
    // 60 failures a minute apart: an hour of 503s, the window's length, before a restart.
    assert_eq!(
        (
            live["periodSeconds"].as_i64(),
            live["failureThreshold"].as_i64()
        ),
        (Some(60), Some(60))
    );
}
