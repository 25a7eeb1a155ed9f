//! A target's outcome: as known before the run (what it is, the warnings about it), what the
//! controller learns once its pod has finished (its node's place in the fleet, its claim's bound
//! capacity), and the volume a Retain class would leave behind.

use super::{Active, Controller};
use crate::cluster::manifests;
use crate::cluster::quantity::{format_bytes, parse_bytes};
use crate::cluster::reclaim::{reclaim, Reclaim};
use crate::cluster::targets::{Target, TargetKind};
use crate::report::document::{TargetOutcome, TargetStatus, TargetType};
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim};

/// The node labels of the fleet view: zone, region, instance type (well-known labels, set by
/// the cloud provider's node controller).
const ZONE: &str = "topology.kubernetes.io/zone";
const REGION: &str = "topology.kubernetes.io/region";
const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";

/// (zone, region, instance type) from a node's labels.
pub(super) fn topology(node: &Node) -> [Option<String>; 3] {
    let label = |k: &str| node.metadata.labels.as_ref()?.get(k).cloned();
    [label(ZONE), label(REGION), label(INSTANCE_TYPE)]
}

/// The capacity a claim was bound with, as a quantity (`10Gi`).
pub(super) fn bound_capacity(claim: &PersistentVolumeClaim) -> Option<String> {
    let q = claim.status.as_ref()?.capacity.as_ref()?.get("storage")?;
    // Shown as the API server wrote it when it is not a whole binary unit (`10G`).
    Some(parse_bytes(&q.0).map_or_else(|_| q.0.clone(), format_bytes))
}

impl Controller<'_> {
    /// The outcome as known before the run: the target's description, status Skipped.
    pub(super) fn outcome(&self, t: &Target) -> TargetOutcome {
        let job = manifests::object_name(&self.plan.run, t);
        let mut o = TargetOutcome {
            target: t.describe(),
            kind: TargetType::StorageClass,
            storage_class: None,
            provisioner: None,
            volume_binding_mode: None,
            claim: None,
            claim_size: None,
            bound_capacity: None,
            node: None,
            host_path: None,
            zone: None,
            region: None,
            instance_type: None,
            warnings: Vec::new(),
            job: job.clone(),
            status: TargetStatus::Skipped,
            reason: None,
            check: None,
            preflight: None,
            fio: None,
            fio_text: None,
        };
        match &t.kind {
            TargetKind::StorageClass {
                class,
                provisioner,
                binding_mode,
                claim_bytes,
            } => {
                o.storage_class = Some(class.clone());
                o.provisioner = provisioner.clone();
                o.volume_binding_mode = binding_mode.clone();
                o.claim = Some(job);
                o.claim_size = Some(format_bytes(*claim_bytes));
                o.warnings = self.plan.warnings.get(class).cloned().unwrap_or_default();
            }
            TargetKind::Claim {
                name,
                storage_class,
                capacity,
            } => {
                o.kind = TargetType::Claim;
                o.storage_class = storage_class.clone();
                o.claim = Some(name.clone());
                o.claim_size = capacity.map(format_bytes);
            }
            TargetKind::Node {
                name, host_path, ..
            } => {
                o.kind = TargetType::Node;
                o.node = Some(name.clone());
                o.host_path = Some(host_path.clone());
            }
        }
        o
    }

    /// Records the node's zone, region and instance type and the claim's bound capacity. A
    /// failed read leaves the fields empty: they describe the result, they are not it.
    pub(super) async fn learn(&mut self, a: &Active, o: &mut TargetOutcome) {
        if let Some(name) = o.node.clone() {
            if let Ok(Some(node)) = self.cluster.node(&name).await {
                [o.zone, o.region, o.instance_type] = topology(&node);
            }
        }
        let claim = match &self.plan.targets[a.index].kind {
            TargetKind::Claim { name, .. } => Some(name.clone()),
            _ => a.claim.clone(),
        };
        if let Some(c) = claim {
            if let Ok(Some(pvc)) = self.cluster.claim(&c).await {
                o.bound_capacity = bound_capacity(&pvc);
            }
        }
    }

    /// Our claim, read before it is deleted; a failed read is said, since a Retain volume then
    /// stays behind.
    pub(super) async fn read_claim(
        &mut self,
        index: usize,
        name: &str,
    ) -> Option<PersistentVolumeClaim> {
        match self.cluster.claim(name).await {
            Ok(c) => c,
            Err(e) => {
                if self.plan.retained.is_empty() {
                    return None;
                }
                self.say(
                    index,
                    &format!(
                        "{e}; if its volume is kept (reclaimPolicy Retain), it stays Released: \
                         kubectl get pv shows it"
                    ),
                );
                None
            }
        }
    }

    /// Before our fresh claim is deleted: if a Retain policy would keep the volume it is bound
    /// to (proven ours by its claimRef uid; nothing else is touched), sets the policy to Delete,
    /// so that the provisioner deletes the volume and its disk once the claim is gone. Deleting
    /// the Released PersistentVolume instead would leave the disk behind, with nothing left in
    /// the cluster to find it by.
    pub(super) async fn reclaim_retained(
        &mut self,
        index: usize,
        claim: Option<&PersistentVolumeClaim>,
    ) -> Option<()> {
        let claim = claim?;
        let class = claim.spec.as_ref()?.storage_class_name.as_deref()?;
        if !self.plan.retained.contains(class) {
            return None;
        }
        match reclaim(self.cluster, claim).await {
            Reclaim::NotRetained => return None,
            Reclaim::Unread(e) => self.obs.note(&format!("iogauge kube: {e}")),
            Reclaim::NotOurs(volume) => self.say(
                index,
                &format!(
                    "volume {volume} was not provisioned for this claim (a volume made \
                     beforehand, bound to it by the cluster): left as it is, Released once the \
                     claim is deleted"
                ),
            ),
            Reclaim::Set(volume) => self.say(
                index,
                &format!(
                    "volume {volume}: reclaimPolicy Retain set to Delete, so that it and its \
                     disk go with the claim"
                ),
            ),
            Reclaim::Failed(e) => self.obs.note(&format!("iogauge kube: {e}")),
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn topology_and_capacity_come_from_labels_and_status() {
        let node: Node = serde_json::from_value(json!({"metadata": {"name": "n", "labels": {
            ZONE: "eu-west-1a", REGION: "eu-west-1", INSTANCE_TYPE: "m6i.large"}}}))
        .unwrap();
        assert_eq!(
            topology(&node),
            [
                Some("eu-west-1a".into()),
                Some("eu-west-1".into()),
                Some("m6i.large".into())
            ]
        );
        let pvc: PersistentVolumeClaim = serde_json::from_value(
            json!({"metadata": {"name": "c"}, "status": {"capacity": {"storage": "10737418240"}}}),
        )
        .unwrap();
        assert_eq!(bound_capacity(&pvc).as_deref(), Some("10Gi"));
        let none: PersistentVolumeClaim =
            serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap();
        assert_eq!(bound_capacity(&none), None);
    }
}
