//! `iogauge kube canary install --dry-run`: the manifests validated offline with
//! `kubernetes-validate --strict` (as tests/kube_manifests.rs runs it), the StatefulSet's pod
//! checked against Pod Security restricted and the node DaemonSet's against exactly the
//! exceptions `kube check` documents for node targets, and the ServiceMonitor and
//! PrometheusRule against the prometheus-operator's schema (the fields its CRDs require).
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::kube_manifests::{documents, restricted_violations, validate};
use serde_json::Value;

fn dry_run(args: &[&str]) -> (i32, String, String) {
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["kube", "canary", "install"])
        .args(args)
        .args(["--image", "registry.example/iogauge:0.1", "--dry-run"])
        .env_remove("IOGAUGE_IMAGE")
        .env("KUBECONFIG", "/nonexistent")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

#[test]
fn the_dry_run_meets_the_schema_and_pod_security() {
    let (code, yaml, err) = dry_run(&[
        "etcd",
        "sync-iops",
        "--nodes",
        "node-role.kubernetes.io/control-plane,!spot",
        "--host-path",
        "/var/lib/etcd",
        "--storage-class",
        "fast",
        "--storage-class",
        "standard",
        "--tolerate-control-plane",
        "-n",
        "monitoring",
        "--monitor-label",
        "release=kube-prometheus-stack",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing created"), "{err}");
    let docs = documents(&yaml);
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
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
    // kubernetes-validate knows Kubernetes' own kinds; the operator's are checked below.
    let core: Vec<String> = yaml
        .split("---\n")
        .filter(|d| !d.trim().is_empty() && !d.contains("monitoring.coreos.com/v1"))
        .map(|d| format!("---\n{d}"))
        .collect();
    validate("canary", &core.concat());
    for d in &docs {
        assert_eq!(d["metadata"]["namespace"], "monitoring", "{d}");
        assert_eq!(
            d["metadata"]["labels"]["iogauge.dev/canary"], "default",
            "{d}"
        );
    }
    let pod = |i: usize| docs[i]["spec"]["template"]["spec"].clone();
    assert_eq!(
        restricted_violations(&pod(1)),
        [
            "volume type hostPath",
            "runAsNonRoot is not true",
            "runAsUser 0"
        ]
    );
    let affinity =
        &pod(1)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    assert_eq!(
        affinity["nodeSelectorTerms"][0]["matchExpressions"],
        serde_json::json!([
            {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
            {"key": "spot", "operator": "DoesNotExist"}
        ])
    );
    // Small by default: the canary idles between probes.
    assert_eq!(
        pod(1)["containers"][0]["resources"],
        serde_json::json!({"requests": {"cpu": "10m", "memory": "64Mi"},
            "limits": {"memory": "256Mi"}})
    );
    for i in [2, 3] {
        assert!(
            restricted_violations(&pod(i)).is_empty(),
            "{:?}",
            restricted_violations(&pod(i))
        );
        assert_eq!(pod(i)["securityContext"]["fsGroup"], 65532);
        let claim = &docs[i]["spec"]["volumeClaimTemplates"][0];
        assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "1Gi");
        assert_eq!(claim["metadata"]["labels"]["iogauge.dev/canary"], "default");
        let name = docs[i]["metadata"]["name"].as_str().unwrap();
        // The controller's revision hash label (NAME-<10>) must fit 63 characters.
        assert!(name.len() <= 52, "{name}");
    }
    assert_eq!(
        docs[4]["metadata"]["labels"]["release"],
        "kube-prometheus-stack"
    );
    operator_schema(&docs[4]);
    operator_schema(&docs[5]);
    // The PrometheusRule's spec is deploy/prometheus's rules file, unchanged.
    let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/prometheus/iogauge-canary-rules.yaml");
    let file: Value = yaml_serde::from_str(&std::fs::read_to_string(rules).unwrap()).unwrap();
    assert_eq!(docs[5]["spec"], file);
}

/// The fields the prometheus-operator's CRDs (monitoring.coreos.com/v1) require and their
/// types, as JSON Schema: ServiceMonitor's `spec.selector`, each endpoint's `port` a string;
/// PrometheusRule's groups each with a `name` and rules with `expr` and either `alert` or
/// `record`, `for` a duration.
fn operator_schema(doc: &Value) {
    let duration = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$";
    let schema = match doc["kind"].as_str().unwrap() {
        "ServiceMonitor" => serde_json::json!({
            "type": "object",
            "required": ["apiVersion", "kind", "metadata", "spec"],
            "properties": {
                "apiVersion": {"const": "monitoring.coreos.com/v1"},
                "spec": {
                    "type": "object",
                    "required": ["selector"],
                    "additionalProperties": false,
                    "properties": {
                        "selector": {"type": "object", "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}},
                        "namespaceSelector": {"type": "object", "properties": {"matchNames": {"type": "array", "items": {"type": "string"}}}},
                        "endpoints": {"type": "array", "items": {
                            "type": "object",
                            "properties": {
                                "port": {"type": "string"},
                                "path": {"type": "string"},
                                "scheme": {"enum": ["http", "https", "HTTP", "HTTPS"]},
                                "interval": {"type": "string", "pattern": duration}
                            }
                        }}
                    }
                }
            }
        }),
        _ => serde_json::json!({
            "type": "object",
            "required": ["apiVersion", "kind", "metadata", "spec"],
            "properties": {
                "apiVersion": {"const": "monitoring.coreos.com/v1"},
                "spec": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {"groups": {"type": "array", "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string", "minLength": 1},
                            "rules": {"type": "array", "items": {
                                "type": "object",
                                "required": ["expr"],
                                "oneOf": [{"required": ["alert"]}, {"required": ["record"]}],
                                "properties": {
                                    "expr": {"type": ["string", "integer"]},
                                    "for": {"type": "string", "pattern": duration},
                                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                                    "annotations": {"type": "object", "additionalProperties": {"type": "string"}}
                                }
                            }}
                        }
                    }}}
                }
            }
        }),
    };
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", doc["kind"]);
}
