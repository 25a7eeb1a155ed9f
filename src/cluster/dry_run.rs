//! `--dry-run`: the manifests a run would create, printed and not created. Offline unless the
//! targets must be found in the cluster (`--all-storage-classes`, `--claim`, `--nodes`): the
//! namespace then comes from the kubeconfig's context, read without contacting the server, so
//! that a reviewed dry run names the namespace the real run lands in.

use super::client::Cluster;
use super::kubeconfig;
use super::manifests;
use super::plan::{plan, Plan};
use super::request::KubeRequest;
use super::KubeError;
use serde_json::{json, Value};

/// How the manifests are printed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Printed {
    /// A YAML stream, a `# target` comment before each target's objects.
    Yaml,
    /// One `List` as `kubectl get -o json` prints several objects.
    Json,
}

/// The plan and its manifests, asking the cluster only to find the targets when it must.
pub(crate) fn dry_run(req: &KubeRequest, printed: Printed) -> Result<(Plan, String), KubeError> {
    let rt = super::run::runtime()?;
    rt.block_on(async {
        let cluster = match needs_cluster(req) {
            Some(flags) => Some(connect(req, &flags).await?),
            None => None,
        };
        let namespace = match &cluster {
            Some(c) => c.namespace.clone(),
            None => offline_namespace(req)?,
        };
        let plan = plan(req, cluster.as_ref(), namespace).await?;
        let text = match printed {
            Printed::Yaml => {
                let yaml = plan.yaml(req).map_err(KubeError::Cluster)?;
                match default_image_note(req) {
                    Some(note) => format!("# {note}\n{yaml}"),
                    None => yaml,
                }
            }
            Printed::Json => json_list(&plan, req)?,
        };
        Ok((plan, text))
    })
}

/// Without `--image`, what the manifests' image is and what it needs: a dry run needs no image,
/// a real run does. A YAML comment line before the manifests; JSON has no comments, so the
/// caller puts it on stderr.
pub(crate) fn default_image_note(req: &KubeRequest) -> Option<String> {
    req.pod.image_is_default.then(|| {
        format!(
            "image: {} is the default (no --image): it must exist in the cluster's registry; \
             make it with `iogauge kube image push REGISTRY/REPO:TAG` (then --image \
             REGISTRY/REPO:TAG) or `iogauge kube image export` and load it on the nodes",
            req.pod.image
        )
    })
}

/// The flags whose targets only the cluster knows, if any.
pub(crate) fn needs_cluster(req: &KubeRequest) -> Option<String> {
    let t = &req.targets;
    let mut flags = Vec::new();
    if t.all_storage_classes {
        flags.push("--all-storage-classes");
    }
    if !t.claims.is_empty() {
        flags.push("--claim");
    }
    if t.nodes.is_some() {
        flags.push("--nodes");
    }
    (!flags.is_empty()).then(|| flags.join(", "))
}

async fn connect(req: &KubeRequest, flags: &str) -> Result<Cluster, KubeError> {
    let why = |e: String| {
        format!(
            "--dry-run with {flags} finds the targets in the cluster: {e}; to review the \
             manifests offline, name the targets with --storage-class NAME or --node NAME"
        )
    };
    Cluster::connect(
        req.kubeconfig.as_deref(),
        req.context.as_deref(),
        req.namespace.as_deref(),
    )
    .await
    .map_err(|e| match e {
        KubeError::Usage(s) => KubeError::Usage(why(s)),
        KubeError::Cluster(s) => KubeError::Cluster(why(s)),
    })
}

/// `--namespace`, else the kubeconfig context's namespace (read, the server never asked), else
/// the pod's own namespace, else `default` as kubectl would.
fn offline_namespace(req: &KubeRequest) -> Result<String, KubeError> {
    if let Some(ns) = &req.namespace {
        return Ok(ns.clone());
    }
    if kubeconfig::nothing_configured(req.kubeconfig.as_deref()) {
        return Ok("default".into());
    }
    Ok(
        match kubeconfig::load(req.kubeconfig.as_deref(), req.context.as_deref())? {
            Some(l) => l.namespace,
            None => {
                std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
            }
        }
        .unwrap_or_else(|| "default".into()),
    )
}

/// Every manifest in one `v1` `List`, the objects as in the YAML stream.
fn json_list(plan: &Plan, req: &KubeRequest) -> Result<String, KubeError> {
    let as_value =
        |v: Result<Value, serde_json::Error>| v.map_err(|e| KubeError::Cluster(e.to_string()));
    let mut items = Vec::new();
    if !req.files.is_empty() {
        let cm =
            super::configmap::config_map(&req.files, &req.pod.labels, &plan.run, &plan.namespace);
        items.push(as_value(serde_json::to_value(&cm))?);
    }
    for t in &plan.targets {
        let job = manifests::job(req, &plan.run, t, &plan.namespace, plan.footprint);
        items.push(as_value(serde_json::to_value(&job))?);
        if let Some(c) = manifests::claim(req, &plan.run, t, &plan.namespace, None) {
            items.push(as_value(serde_json::to_value(&c))?);
        }
    }
    let list = json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": items,
        "metadata": {"resourceVersion": ""},
    });
    serde_json::to_string_pretty(&list).map_err(|e| KubeError::Cluster(e.to_string()))
}
