//! The canary's objects, built from its request: pure functions, so that `--dry-run` prints
//! exactly what `install` applies. The pods are built as `kube check`'s are (cluster/manifests.rs:
//! node selector, tolerations, resources, identity), and run `iogauge canary` instead of a check.

use super::{labels, CanaryRequest, APP, PORT, PORT_NAME};
use super::{TARGET_ANNOTATION, TARGET_LABEL};
use crate::cluster::manifests::{
    container_security, node_selector, pod_security, pull_secrets, resources, tolerations,
    CONTAINER,
};
use crate::cluster::request::{BINARY, MOUNT_PATH};
use crate::cluster::targets::{Target, TargetKind};
use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec, StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, HostPathVolumeSource,
    NodeAffinity, NodeSelector, ObjectFieldSelector, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PodSpec, PodTemplateSpec, Probe, Service, ServicePort, ServiceSpec,
    Volume, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The alerts: deploy/prometheus's rules file, the PrometheusRule's spec as it is.
pub(crate) const RULES: &str = include_str!("../../../deploy/prometheus/iogauge-canary-rules.yaml");

/// How often the ServiceMonitor has Prometheus scrape: the canary's numbers change once per
/// probe (minutes), and a few scrapes per interval keep the staleness alerts exact.
const SCRAPE_INTERVAL: &str = "60s";

/// One thing a canary measures: a directory on the nodes a selector picks, or a claim of a class.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CanaryTarget {
    Nodes { selector: String, host_path: String },
    Class { class: String },
}

impl CanaryTarget {
    /// The targets of a request, nodes first.
    pub(crate) fn all(req: &CanaryRequest) -> Vec<CanaryTarget> {
        let mut out = Vec::new();
        if let (Some(s), Some(h)) = (&req.nodes, &req.host_path) {
            out.push(CanaryTarget::Nodes {
                selector: s.clone(),
                host_path: h.clone(),
            });
        }
        for c in &req.storage_classes {
            out.push(CanaryTarget::Class { class: c.clone() });
        }
        out
    }

    /// The value of the pods' `iogauge.dev/target` label: `nodes`, or the class's slug.
    pub(crate) fn slug(&self) -> String {
        match self {
            CanaryTarget::Nodes { .. } => "nodes".into(),
            CanaryTarget::Class { class } => {
                let s = Target::new(self.kind(class)).slug;
                // The readable tail is cut first; the hash at the end keeps names apart.
                s[s.len().saturating_sub(24)..]
                    .trim_start_matches('-')
                    .into()
            }
        }
    }

    fn kind(&self, class: &str) -> TargetKind {
        match self {
            CanaryTarget::Nodes { host_path, .. } => TargetKind::Node {
                name: String::new(),
                hostname: String::new(),
                host_path: host_path.clone(),
            },
            CanaryTarget::Class { .. } => TargetKind::StorageClass {
                class: class.into(),
                provisioner: None,
                binding_mode: None,
                claim_bytes: 0,
            },
        }
    }

    /// "nodes matching SEL, in DIR" or "storage class C".
    pub(crate) fn describe(&self) -> String {
        match self {
            CanaryTarget::Nodes {
                selector,
                host_path,
            } => format!("nodes matching {selector}, in {host_path}"),
            CanaryTarget::Class { class } => format!("storage class {class}"),
        }
    }

    /// The DaemonSet's or StatefulSet's name.
    pub(crate) fn object_name(&self, name: &str) -> String {
        format!("{APP}-{name}-{}", self.slug())
    }
}

/// The Service's (and monitors') name.
pub(crate) fn service_name(name: &str) -> String {
    format!("{APP}-{name}")
}

fn meta(req: &CanaryRequest, name: String, ns: &str) -> ObjectMeta {
    let mut l = req.pod.labels.clone();
    l.extend(labels(&req.name));
    ObjectMeta {
        name: Some(name),
        namespace: Some(ns.into()),
        labels: Some(l),
        ..ObjectMeta::default()
    }
}

/// The pod's command line after the binary, as `iogauge canary` takes it; `$(NODE_NAME)` is
/// expanded by the kubelet from the container's environment (the Downward API's nodeName).
pub(crate) fn canary_args(req: &CanaryRequest) -> Vec<String> {
    let mut a = vec!["canary".to_string()];
    a.extend(req.profiles.iter().cloned());
    let listen = format!("0.0.0.0:{PORT}");
    for (flag, v) in [
        ("--dir", MOUNT_PATH),
        ("--listen", &listen),
        ("--node", "$(NODE_NAME)"),
        ("--every", &req.every),
        ("--window", &req.window),
        ("--max-busy", &req.max_busy),
        ("--format", "kube-frames"),
    ] {
        a.extend([flag.to_string(), v.to_string()]);
    }
    a.push("--no-history".into());
    a
}

fn probe(period: i32, failures: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/healthz".into()),
            port: IntOrString::String(PORT_NAME.into()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(period),
        failure_threshold: Some(failures),
        timeout_seconds: Some(5),
        ..Probe::default()
    }
}

/// The liveness probe's failures (a minute apart) before a restart: the window's minutes.
pub(crate) fn liveness_failures(window_s: u64) -> i32 {
    i32::try_from(window_s.div_ceil(60))
        .unwrap_or(i32::MAX)
        .max(10)
}

fn container(req: &CanaryRequest, ids: &crate::cluster::identity::PodIds) -> Container {
    Container {
        name: CONTAINER.into(),
        image: Some(req.pod.image.clone()),
        image_pull_policy: Some(req.pod.image_pull_policy.clone()),
        command: Some(vec![BINARY.into()]),
        args: Some(canary_args(req)),
        env: Some(vec![EnvVar {
            name: "NODE_NAME".into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "spec.nodeName".into(),
                    ..ObjectFieldSelector::default()
                }),
                ..EnvVarSource::default()
            }),
            ..EnvVar::default()
        }]),
        ports: Some(vec![ContainerPort {
            name: Some(PORT_NAME.into()),
            container_port: PORT,
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        // Ready while the canary's last cycle is recent (its /healthz); a canary that stopped
        // probing for long is restarted, but only after a window's worth of 503s (at least 10
        // min): a cycle as long as the window on a slow disk (the first one, which may start
        // late, included) is not killed, and the slow disk shows as metrics and alerts rather
        // than as restarts.
        readiness_probe: Some(probe(30, 1)),
        liveness_probe: Some(probe(60, liveness_failures(req.window_s))),
        resources: Some(resources(&req.pod)),
        security_context: Some(container_security(ids)),
        volume_mounts: Some(vec![VolumeMount {
            name: "data".into(),
            mount_path: MOUNT_PATH.into(),
            ..VolumeMount::default()
        }]),
        termination_message_policy: Some("FallbackToLogsOnError".into()),
        ..Container::default()
    }
}

/// The pod template of `target`, and its labels (the workload's selector).
fn template(
    req: &CanaryRequest,
    target: &CanaryTarget,
) -> (PodTemplateSpec, BTreeMap<String, String>) {
    let (kind, volume, affinity) = match target {
        CanaryTarget::Nodes {
            selector,
            host_path,
        } => {
            let term = super::selector::node_term(selector).unwrap_or_default();
            let affinity = Affinity {
                node_affinity: Some(NodeAffinity {
                    required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                        node_selector_terms: vec![term],
                    }),
                    ..NodeAffinity::default()
                }),
                ..Affinity::default()
            };
            let vol = Volume {
                name: "data".into(),
                host_path: Some(HostPathVolumeSource {
                    path: host_path.clone(),
                    type_: Some("Directory".into()),
                }),
                ..Volume::default()
            };
            (target.kind(""), Some(vol), Some(affinity))
        }
        CanaryTarget::Class { class } => (target.kind(class), None, None),
    };
    let ids = req.pod.identity.resolve(&kind, false);
    let mut sel = labels(&req.name);
    sel.insert(TARGET_LABEL.into(), target.slug());
    let mut pod_labels = req.pod.labels.clone();
    pod_labels.extend(sel.clone());
    let spec = PodSpec {
        // The canary never talks to the API server.
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        service_account_name: req.pod.service_account.clone(),
        node_selector: Some(node_selector(&req.pod)),
        affinity,
        tolerations: tolerations(&req.pod),
        image_pull_secrets: pull_secrets(&req.pod),
        security_context: Some(pod_security(&ids)),
        containers: vec![container(req, &ids)],
        volumes: volume.map(|v| vec![v]),
        ..PodSpec::default()
    };
    let annotations = BTreeMap::from([
        (TARGET_ANNOTATION.to_string(), target.describe()),
        // For a Prometheus that finds pods by annotation instead of a ServiceMonitor.
        ("prometheus.io/scrape".to_string(), "true".to_string()),
        ("prometheus.io/port".to_string(), PORT.to_string()),
    ]);
    let t = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(pod_labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        }),
        spec: Some(spec),
    };
    (t, sel)
}

fn daemon_set(req: &CanaryRequest, target: &CanaryTarget, ns: &str) -> DaemonSet {
    let (template, sel) = template(req, target);
    DaemonSet {
        metadata: meta(req, target.object_name(&req.name), ns),
        spec: Some(DaemonSetSpec {
            selector: LabelSelector {
                match_labels: Some(sel),
                ..LabelSelector::default()
            },
            template,
            ..DaemonSetSpec::default()
        }),
        ..DaemonSet::default()
    }
}

fn stateful_set(req: &CanaryRequest, target: &CanaryTarget, class: &str, ns: &str) -> StatefulSet {
    let (template, sel) = template(req, target);
    let claim = PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("data".into()),
            // The controller copies these onto each claim, so that uninstall finds them.
            labels: Some(labels(&req.name)),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec![req.pod.access_mode.clone()]),
            storage_class_name: Some(class.into()),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    Quantity(crate::cluster::quantity::format_bytes(req.claim_size)),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    };
    StatefulSet {
        metadata: meta(req, target.object_name(&req.name), ns),
        spec: Some(StatefulSetSpec {
            replicas: Some(1),
            service_name: Some(service_name(&req.name)),
            selector: LabelSelector {
                match_labels: Some(sel),
                ..LabelSelector::default()
            },
            template,
            volume_claim_templates: Some(vec![claim]),
            ..StatefulSetSpec::default()
        }),
        ..StatefulSet::default()
    }
}

fn service(req: &CanaryRequest, ns: &str) -> Service {
    Service {
        metadata: meta(req, service_name(&req.name), ns),
        spec: Some(ServiceSpec {
            // Headless: Prometheus scrapes every pod, not one behind a virtual IP; and a pod whose
            // /healthz fails is still scraped, so that its metrics say why.
            cluster_ip: Some("None".into()),
            publish_not_ready_addresses: Some(true),
            selector: Some(labels(&req.name)),
            ports: Some(vec![ServicePort {
                name: Some(PORT_NAME.into()),
                port: PORT,
                target_port: Some(IntOrString::String(PORT_NAME.into())),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

fn monitor_meta(req: &CanaryRequest, ns: &str) -> Value {
    let mut l = labels(&req.name);
    l.extend(req.monitor_labels.iter().cloned());
    json!({"name": service_name(&req.name), "namespace": ns, "labels": l})
}

/// The ServiceMonitor: Prometheus scrapes the Service's endpoints (every canary pod).
pub(crate) fn service_monitor(req: &CanaryRequest, ns: &str) -> Value {
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": monitor_meta(req, ns),
        "spec": {
            "selector": {"matchLabels": labels(&req.name)},
            "namespaceSelector": {"matchNames": [ns]},
            "endpoints": [{"port": PORT_NAME, "path": "/metrics", "scheme": "http",
                "interval": SCRAPE_INTERVAL}],
        },
    })
}

/// The PrometheusRule: the alerts of deploy/prometheus, unchanged.
pub(crate) fn prometheus_rule(req: &CanaryRequest, ns: &str) -> Result<Value, String> {
    let spec: Value = yaml_serde::from_str(RULES)
        .map_err(|e| format!("the built-in alert rules do not parse: {e}"))?;
    Ok(json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": monitor_meta(req, ns),
        "spec": spec,
    }))
}

/// Every object of the canary, in the order they are applied: the Service, the workloads, then
/// (with `operator`) the ServiceMonitor and the PrometheusRule.
pub(crate) fn objects(req: &CanaryRequest, ns: &str, operator: bool) -> Result<Vec<Value>, String> {
    let v = |r: Result<Value, serde_json::Error>| r.map_err(|e| e.to_string());
    let mut out = vec![v(serde_json::to_value(service(req, ns)))?];
    for t in CanaryTarget::all(req) {
        out.push(match &t {
            CanaryTarget::Nodes { .. } => v(serde_json::to_value(daemon_set(req, &t, ns)))?,
            CanaryTarget::Class { class } => {
                v(serde_json::to_value(stateful_set(req, &t, class, ns)))?
            }
        });
    }
    if operator {
        out.push(service_monitor(req, ns));
        out.push(prometheus_rule(req, ns)?);
    }
    Ok(out)
}

/// The objects as one YAML stream, each after `---`.
pub(crate) fn yaml(objects: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        out.push_str(&yaml_serde::to_string(o).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "manifests_tests.rs"]
mod tests;
