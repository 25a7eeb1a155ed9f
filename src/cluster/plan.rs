//! Finding a run's targets (the storage classes, claims and nodes asked for, checked against
//! the cluster when there is one) and the manifests they make: what `--dry-run` prints and what
//! the controller creates.

use super::classes;
use super::client::Cluster;
use super::manifests;
use super::quantity::parse_bytes;
use super::request::KubeRequest;
use super::targets::{self, Target, TargetKind};
use super::KubeError;

/// A run's objects, before any is created: what `--dry-run` prints.
pub(crate) struct Plan {
    pub run: String,
    pub namespace: String,
    pub targets: Vec<Target>,
    pub footprint: u64,
    /// Storage classes `--all-storage-classes` left out, one line each saying why and how to
    /// measure them anyway.
    pub skipped: Vec<String>,
    /// Warnings about a storage class's fresh claims (a small claim on a size-scaled disk), by
    /// class name: on stderr before the run and in the class's outcome.
    pub warnings: std::collections::BTreeMap<String, Vec<String>>,
    /// Classes with reclaimPolicy Retain: their fresh claims' volumes are deleted after them.
    pub retained: std::collections::BTreeSet<String>,
}

impl Plan {
    /// What to say before the run: the classes left out, then the warnings.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut out = self.skipped.clone();
        for (class, ws) in &self.warnings {
            out.extend(
                ws.iter()
                    .map(|w| format!("storage class {class}: warning: {w}")),
            );
        }
        out
    }

    /// Every manifest, as one YAML stream.
    pub(crate) fn yaml(&self, req: &KubeRequest) -> Result<String, String> {
        let mut out = String::new();
        if !req.files.is_empty() {
            let cm = super::configmap::config_map(
                &req.files,
                &req.pod.labels,
                &self.run,
                &self.namespace,
            );
            out.push_str("# the run's files, mounted read-only at /config in every pod\n---\n");
            out.push_str(&yaml_serde::to_string(&cm).map_err(|e| e.to_string())?);
        }
        for t in &self.targets {
            let job = manifests::job(req, &self.run, t, &self.namespace, self.footprint);
            let mut docs = vec![yaml_serde::to_string(&job).map_err(|e| e.to_string())?];
            if let Some(c) = manifests::claim(req, &self.run, t, &self.namespace, None) {
                docs.push(yaml_serde::to_string(&c).map_err(|e| e.to_string())?);
            }
            out.push_str(&format!("# {}\n", t.describe()));
            for d in &docs {
                out.push_str("---\n");
                out.push_str(d);
            }
        }
        Ok(out)
    }
}

/// Finds the targets. Without a cluster (a dry run that needs no discovery) storage classes are
/// taken as named.
pub(crate) async fn plan(
    req: &KubeRequest,
    cluster: Option<&Cluster>,
    namespace: String,
) -> Result<Plan, KubeError> {
    let footprint = match &req.fio {
        Some(f) => f.footprint,
        None => {
            targets::footprint(&req.profiles, &req.check, &req.files).map_err(KubeError::Usage)?
        }
    };
    let claim_bytes = targets::claim_bytes(footprint, req.pod.claim_size);
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut warnings = std::collections::BTreeMap::<String, Vec<String>>::new();
    let mut retained = std::collections::BTreeSet::new();
    let mut warn = |sc: &k8s_openapi::api::storage::v1::StorageClass| {
        let name = sc.metadata.name.clone().unwrap_or_default();
        if sc.reclaim_policy.as_deref() == Some("Retain") {
            retained.insert(name.clone());
        }
        if let Some(w) = classes::size_warning(sc, claim_bytes) {
            warnings.entry(name).or_default().push(w);
        }
    };
    let class_target = |sc: Option<&k8s_openapi::api::storage::v1::StorageClass>, name: &str| {
        Target::new(TargetKind::StorageClass {
            class: name.to_string(),
            provisioner: sc.map(|s| s.provisioner.clone()),
            binding_mode: sc.and_then(|s| s.volume_binding_mode.clone()),
            claim_bytes,
        })
    };
    if req.targets.all_storage_classes {
        let c = cluster.ok_or_else(|| KubeError::Cluster("no cluster".into()))?;
        let all = c.storage_classes().await.map_err(KubeError::Cluster)?;
        if all.is_empty() {
            return Err(KubeError::Usage(
                "--all-storage-classes: the cluster has no storage classes".into(),
            ));
        }
        for sc in &all {
            // Named classes are measured whatever their policy: the user asked for them.
            let named = sc
                .metadata
                .name
                .as_ref()
                .is_some_and(|n| req.targets.storage_classes.contains(n));
            if let Some(why) = classes::skip_reason(sc).filter(|_| !named) {
                skipped.push(why);
                continue;
            }
            warn(sc);
            found.push(class_target(
                Some(sc),
                sc.metadata.name.as_deref().unwrap_or_default(),
            ));
        }
    }
    for name in &req.targets.storage_classes {
        if found.iter().any(
            |t: &Target| matches!(&t.kind, TargetKind::StorageClass { class, .. } if class == name),
        ) {
            continue;
        }
        match cluster {
            None => found.push(class_target(None, name)),
            Some(c) => match c.storage_class(name).await.map_err(KubeError::Cluster)? {
                Some(sc) => {
                    warn(&sc);
                    found.push(class_target(Some(&sc), name));
                }
                None => {
                    let known: Vec<String> = c
                        .storage_classes()
                        .await
                        .map_err(KubeError::Cluster)?
                        .iter()
                        .filter_map(|s| s.metadata.name.clone())
                        .collect();
                    return Err(KubeError::Usage(format!(
                        "--storage-class {name}: no such storage class; the cluster has: {}",
                        if known.is_empty() {
                            "none".into()
                        } else {
                            known.join(", ")
                        }
                    )));
                }
            },
        }
    }
    for name in &req.targets.claims {
        let c = cluster.ok_or_else(|| KubeError::Cluster("no cluster".into()))?;
        let Some(pvc) = c.claim(name).await.map_err(KubeError::Cluster)? else {
            return Err(KubeError::Usage(format!(
                "--claim {name}: no such claim in namespace {}; name an existing claim, or use \
                 --storage-class for a fresh one",
                c.namespace
            )));
        };
        if pvc.spec.as_ref().and_then(|s| s.volume_mode.as_deref()) == Some("Block") {
            return Err(KubeError::Usage(format!(
                "--claim {name}: a Block volume: the profiles would write over its data; measure a \
                 fresh one with --storage-class CLASS --volume-mode Block"
            )));
        }
        let storage_class = pvc.spec.as_ref().and_then(|s| s.storage_class_name.clone());
        let capacity = pvc
            .status
            .as_ref()
            .and_then(|s| s.capacity.as_ref()?.get("storage"))
            .or_else(|| {
                pvc.spec
                    .as_ref()?
                    .resources
                    .as_ref()?
                    .requests
                    .as_ref()?
                    .get("storage")
            })
            .and_then(|q| parse_bytes(&q.0).ok());
        found.push(Target::new(TargetKind::Claim {
            name: name.clone(),
            storage_class,
            capacity,
        }));
    }
    if let Some(sel) = &req.targets.nodes {
        let c = cluster.ok_or_else(|| KubeError::Cluster("no cluster".into()))?;
        let nodes = c.nodes(sel).await.map_err(KubeError::Cluster)?;
        if nodes.is_empty() {
            return Err(KubeError::Usage(format!(
                "--nodes '{sel}': no node has these labels; see them with kubectl get nodes --show-labels"
            )));
        }
        let dir = req.targets.host_path.clone().unwrap_or_default();
        for n in nodes {
            let name = n.metadata.name.clone().unwrap_or_default();
            let hostname = n
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("kubernetes.io/hostname").cloned())
                .unwrap_or_else(|| name.clone());
            found.push(Target::new(TargetKind::Node {
                name,
                hostname,
                host_path: dir.clone(),
            }));
        }
    }
    found.extend(super::node_names::named_nodes(req, cluster).await?);
    targets::dedupe(&mut found);
    Ok(Plan {
        run: targets::run_id(),
        namespace,
        targets: found,
        footprint,
        skipped,
        warnings,
        retained,
    })
}
