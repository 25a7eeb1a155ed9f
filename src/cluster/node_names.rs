//! Targets named with `--node NAME`: an alternative to `--nodes SELECTOR` that a dry run can
//! plan offline. With a cluster, each name is checked to exist and its hostname label (what the
//! pod is placed by) read; offline, the hostname is taken to be the name, as kubeadm, k3s, EKS,
//! GKE and AKS set it.

use super::client::Cluster;
use super::request::KubeRequest;
use super::targets::{Target, TargetKind};
use super::KubeError;

/// The `--node` targets, in the order named.
pub(crate) async fn named_nodes(
    req: &KubeRequest,
    cluster: Option<&Cluster>,
) -> Result<Vec<Target>, KubeError> {
    let dir = req.targets.host_path.clone().unwrap_or_default();
    let mut out = Vec::new();
    for name in &req.targets.node_names {
        let hostname = match cluster {
            None => name.clone(),
            Some(c) => match c.node(name).await.map_err(KubeError::Cluster)? {
                Some(n) => n
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("kubernetes.io/hostname").cloned())
                    .unwrap_or_else(|| name.clone()),
                None => return Err(KubeError::Usage(no_such_node(c, name).await)),
            },
        };
        out.push(Target::new(TargetKind::Node {
            name: name.clone(),
            hostname,
            host_path: dir.clone(),
        }));
    }
    Ok(out)
}

/// "--node x: no such node; the cluster has: …" (the first 20).
async fn no_such_node(c: &Cluster, name: &str) -> String {
    let known: Vec<String> = c
        .nodes("")
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    let mut has = known
        .iter()
        .take(20)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if known.len() > 20 {
        has.push_str(&format!(" and {} more", known.len() - 20));
    }
    if has.is_empty() {
        has = "none".into();
    }
    format!("--node {name}: no such node; the cluster has: {has} (kubectl get nodes)")
}
