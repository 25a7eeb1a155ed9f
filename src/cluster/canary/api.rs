//! `install` and `uninstall` against a cluster: server-side apply of the canary's objects (so a
//! second install updates them), the prometheus-operator's API found by discovery, and deletion
//! of everything carrying the canary's labels. The calls are RBAC-plain: GET, LIST, PATCH
//! (apply) and DELETE in the namespace, and GET of `/apis/monitoring.coreos.com/v1`.

use super::manifests::{objects, CanaryTarget};
use super::{selector, CanaryRequest, Operator};
use crate::cluster::client::{failed, not_found, Cluster};
use crate::cluster::KubeError;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use serde_json::Value;

/// The field manager of every apply.
const MANAGER: &str = "iogauge";
/// The prometheus-operator's API.
pub(crate) const OPERATOR_API: &str = "monitoring.coreos.com/v1";

/// The kinds a canary is made of, in deletion order (workloads first, so their pods go), and
/// whether each belongs to the prometheus-operator's API.
const KINDS: [(&str, &str, &str, bool); 7] = [
    ("apps/v1", "DaemonSet", "daemonsets", false),
    ("apps/v1", "StatefulSet", "statefulsets", false),
    ("v1", "Service", "services", false),
    ("v1", "ConfigMap", "configmaps", false),
    (OPERATOR_API, "ServiceMonitor", "servicemonitors", true),
    (OPERATOR_API, "PodMonitor", "podmonitors", true),
    (OPERATOR_API, "PrometheusRule", "prometheusrules", true),
];

fn resource(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn api(c: &Cluster, api_version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        c.client(),
        &c.namespace,
        &resource(api_version, kind, plural),
    )
}

/// Whether the cluster serves the prometheus-operator's ServiceMonitors and PrometheusRules.
pub(crate) async fn operator_served(c: &Cluster) -> Result<bool, String> {
    match c.client().list_api_group_resources(OPERATOR_API).await {
        Ok(list) => {
            let has = |p: &str| list.resources.iter().any(|r| r.name == p);
            Ok(has("servicemonitors") && has("prometheusrules"))
        }
        Err(e) if not_found(&e) => Ok(false),
        Err(e) => Err(failed(&format!("discovering {OPERATOR_API}"), e)),
    }
}

/// What install did, line by line (`service/NAME created`).
#[derive(Debug, Default)]
pub(crate) struct Done {
    pub lines: Vec<String>,
    /// Notes for stderr: the operator's objects left out, claims kept.
    pub notes: Vec<String>,
    /// What could not be done (the command fails once the rest is done).
    pub failed: Vec<String>,
}

/// Checks the targets against the cluster: a selector no node matches and an unknown class are
/// bad input, as for `kube check`.
async fn check_targets(c: &Cluster, req: &CanaryRequest) -> Result<(), KubeError> {
    if let Some(sel) = &req.nodes {
        if c.nodes(sel).await.map_err(KubeError::Cluster)?.is_empty() {
            return Err(KubeError::Usage(format!(
                "--nodes '{sel}': no node has these labels; see them with kubectl get nodes \
                 --show-labels"
            )));
        }
    }
    for class in &req.storage_classes {
        if c.storage_class(class)
            .await
            .map_err(KubeError::Cluster)?
            .is_none()
        {
            let known: Vec<String> = c
                .storage_classes()
                .await
                .map_err(KubeError::Cluster)?
                .iter()
                .filter_map(|s| s.metadata.name.clone())
                .collect();
            return Err(KubeError::Usage(format!(
                "--storage-class {class}: no such storage class; the cluster has: {}",
                if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// Applies every object (created, or updated in place), then deletes the canary's workloads
/// and monitors that this request no longer has (a class dropped from the command line).
pub(crate) async fn install(c: &Cluster, req: &CanaryRequest) -> Result<Done, KubeError> {
    check_targets(c, req).await?;
    // Asked with `never` too: monitors an earlier install made are then removed below.
    let served = match operator_served(c).await {
        Ok(s) => s,
        Err(_) if req.operator == Operator::Never => false,
        Err(e) => return Err(KubeError::Cluster(e)),
    };
    let operator = served && req.operator != Operator::Never;
    if req.operator == Operator::Always && !operator {
        return Err(KubeError::Usage(format!(
            "--prometheus-operator always: the cluster does not serve {OPERATOR_API} (the \
             prometheus-operator's CRDs); install the operator, or use --prometheus-operator auto"
        )));
    }
    let mut done = Done::default();
    if !operator {
        done.notes.push(match req.operator {
            Operator::Never => {
                "no ServiceMonitor or PrometheusRule (--prometheus-operator never)".into()
            }
            _ => format!(
                "the cluster does not serve {OPERATOR_API} (the prometheus-operator's CRDs): no \
                 ServiceMonitor or PrometheusRule; Prometheus finds the pods by the Service or \
                 their prometheus.io/scrape annotation"
            ),
        });
    }
    if req.nodes.is_some() {
        done.notes.push(format!(
            "the DaemonSet's pods mount {} from the node (hostPath) as uid 0 unless \
             --run-as-user says otherwise: namespace {} must allow it \
             (pod-security.kubernetes.io/enforce=privileged); `iogauge kube canary status` says \
             when admission refuses them",
            req.host_path.as_deref().unwrap_or_default(),
            c.namespace
        ));
    }
    let objs = objects(req, &c.namespace, operator).map_err(KubeError::Cluster)?;
    // Everything is checked before anything is applied, so that a refusal changes nothing.
    let mut existed = Vec::new();
    for o in &objs {
        existed.push(super::live::check(&api_of(c, o), &c.namespace, o, req).await?);
    }
    for (o, existed) in objs.iter().zip(existed) {
        done.lines
            .push(apply(c, o, existed).await.map_err(KubeError::Cluster)?);
    }
    let keep: Vec<String> = CanaryTarget::all(req)
        .iter()
        .map(|t| t.object_name(&req.name))
        .collect();
    for (av, kind, plural, op) in KINDS {
        // Whether the kinds are served, not the mode: `never` after `auto` removes monitors.
        if (op && !served) || matches!(kind, "Service" | "ConfigMap") {
            continue;
        }
        let monitor = op && objs.iter().any(|o| o["kind"] == kind);
        for name in names(c, av, kind, plural, &req.name).await? {
            if !keep.contains(&name) && !monitor {
                delete(c, av, kind, plural, &name)
                    .await
                    .map_err(KubeError::Cluster)?;
                done.lines.push(format!(
                    "{}/{name} deleted (no longer asked for)",
                    kind.to_lowercase()
                ));
            }
        }
    }
    Ok(done)
}

/// The API of `obj`'s kind, and "kind/name".
pub(super) fn api_of(c: &Cluster, obj: &Value) -> (Api<DynamicObject>, String) {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or_default();
    let (av, kind, name) = (s("/apiVersion"), s("/kind"), s("/metadata/name"));
    let plural = KINDS.iter().find(|k| k.1 == kind).map_or("", |k| k.2);
    (
        api(c, av, kind, plural),
        format!("{}/{name}", kind.to_lowercase()),
    )
}

/// Server-side apply of one object: created, or updated to exactly this.
async fn apply(c: &Cluster, obj: &Value, existed: bool) -> Result<String, String> {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (a, what) = api_of(c, obj);
    a.patch(
        name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(obj),
    )
    .await
    .map_err(|e| failed(&format!("applying {what}"), e))?;
    Ok(format!(
        "{what} {}",
        if existed { "updated" } else { "created" }
    ))
}

/// The names of the canary's objects of one kind.
async fn names(
    c: &Cluster,
    av: &str,
    kind: &str,
    plural: &str,
    canary: &str,
) -> Result<Vec<String>, KubeError> {
    let list = match api(c, av, kind, plural)
        .list(&ListParams::default().labels(&selector(canary)))
        .await
    {
        Ok(l) => l,
        // The kind is not served (the operator's CRDs without PodMonitor): none of it exists.
        Err(e) if not_found(&e) => return Ok(Vec::new()),
        Err(e) => return Err(KubeError::Cluster(failed(&format!("listing {plural}"), e))),
    };
    Ok(list
        .items
        .into_iter()
        .filter_map(|o| o.metadata.name)
        .collect())
}

async fn delete(c: &Cluster, av: &str, kind: &str, plural: &str, name: &str) -> Result<(), String> {
    match api(c, av, kind, plural)
        .delete(name, &DeleteParams::background())
        .await
    {
        Err(e) if !not_found(&e) => Err(failed(
            &format!("deleting {}/{name}", kind.to_lowercase()),
            e,
        )),
        _ => Ok(()),
    }
}

/// Deletes everything labelled with canary `name`; its claims only with `delete_claims`
/// (otherwise they are named in the notes with the command that removes them).
pub(crate) async fn uninstall(
    c: &Cluster,
    name: &str,
    delete_claims: bool,
) -> Result<Done, KubeError> {
    let mut done = Done::default();
    // Discovery failing leaves the monitors (said, and the command fails at its end), not the
    // workloads: removing those is safe whatever the operator's API says.
    let operator = match operator_served(c).await {
        Ok(o) => o,
        Err(e) => {
            done.failed.push(format!(
                "{e}; the canary's ServiceMonitor, PodMonitor and PrometheusRule (if any) were \
                 not removed: run uninstall again once the API answers"
            ));
            false
        }
    };
    for (av, kind, plural, op) in KINDS {
        if op && !operator {
            continue;
        }
        for n in names(c, av, kind, plural, name).await? {
            delete(c, av, kind, plural, &n)
                .await
                .map_err(KubeError::Cluster)?;
            done.lines
                .push(format!("deleted {}/{n}", kind.to_lowercase()));
        }
    }
    let claims = c
        .claims(&selector(name))
        .await
        .map_err(KubeError::Cluster)?;
    let claim_names: Vec<String> = claims.into_iter().filter_map(|p| p.metadata.name).collect();
    if delete_claims {
        for n in &claim_names {
            c.delete_claim(n).await.map_err(KubeError::Cluster)?;
            done.lines
                .push(format!("deleted persistentvolumeclaim/{n}"));
        }
    } else if !claim_names.is_empty() {
        done.notes.push(format!(
            "kept {} claim(s) of the canary's StatefulSets: {}; remove them with `iogauge kube \
             canary uninstall --name {name} --delete-claims` (or kubectl delete pvc -n {} -l \
             {})",
            claim_names.len(),
            claim_names.join(", "),
            c.namespace,
            selector(name)
        ));
    }
    if done.lines.is_empty() {
        done.notes.push(format!(
            "nothing labelled {}={name} in namespace {}: nothing to remove",
            super::CANARY_LABEL,
            c.namespace
        ));
    }
    Ok(done)
}
