//! `iogauge kube canary install --dry-run`: the manifests validated offline with
//! `kubernetes-validate --strict` (as tests/kube_manifests.rs runs it), the StatefulSet's pod
//! checked against Pod Security restricted and the node DaemonSet's against exactly the
//! exceptions `kube check` documents for node targets, and the ServiceMonitor and
//! PrometheusRule against the validators generated from the prometheus-operator's CRD schemas.
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

/// The validators npm's `@kubernetes-models/prometheus-operator` generates from the operator's
/// CRD schemas (monitoring.coreos.com/v1), installed by .ci/run under $IOGAUGE_CRD_VALIDATORS;
/// skipped without them unless CI=true. Err: what the validator said.
fn crd_check(doc: &Value) -> Option<Result<(), String>> {
    let Some(prefix) = std::env::var_os("IOGAUGE_CRD_VALIDATORS") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must validate the operator's objects: .ci/run sets IOGAUGE_CRD_VALIDATORS"
        );
        eprintln!("skipping the CRD validators: IOGAUGE_CRD_VALIDATORS is not set (.ci/run)");
        return None;
    };
    let kind = doc["kind"].as_str().unwrap();
    let d = common::scratch();
    let file = d.path().join("object.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let script = format!(
        "import {{ {kind} }} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/{kind}';\n\
         import {{ readFileSync }} from 'node:fs';\n\
         new {kind}(JSON.parse(readFileSync(process.argv[1], 'utf8'))).validate();\n"
    );
    let o = common::cmd("node")
        .args(["--input-type=module", "-e", &script])
        .arg(&file)
        .current_dir(std::path::Path::new(&prefix))
        .output()
        .unwrap();
    Some(if o.status.success() {
        Ok(())
    } else {
        Err(common::text(&o.stderr))
    })
}

fn operator_schema(doc: &Value) {
    if let Some(r) = crd_check(doc) {
        assert_eq!(r, Ok(()), "{}", doc["kind"]);
        // The validator is real: a port by number, which the CRD types as a string, is refused.
        if doc["kind"] == "ServiceMonitor" {
            let mut bad = doc.clone();
            bad["spec"]["endpoints"][0]["port"] = 9465.into();
            let err = crd_check(&bad).unwrap().unwrap_err();
            assert!(err.contains("port"), "{err}");
        }
    }
}
