//! A target's outcome: as known before the run (what it is, the warnings about it), what the
//! controller learns once its pod has finished (its node's place in the fleet, its claim's bound
//! capacity), and the volume a Retain class would leave behind.

use super::{Active, Controller};
use crate::cluster::manifests;
use crate::cluster::quantity::{format_bytes, parse_bytes};
use crate::cluster::targets::{Target, TargetKind};
use crate::report::document::{TargetOutcome, TargetStatus, TargetType};
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim};

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

/// Whether `pv` was provisioned for our claim and is kept by a Retain policy: only then is
/// changing it ours to do. Bound to our claim is not enough: the PV controller binds a new claim
/// to a matching Available volume made beforehand (an administrator's, or a static local one)
/// before it asks for a new one, and marks that bind `pv.kubernetes.io/bound-by-controller`; a
/// volume made for the claim names its provisioner and is no older than the claim.
pub(super) fn retained_by(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    let spec = pv.spec.as_ref();
    let annotation = |k: &str| pv.metadata.annotations.as_ref()?.get(k).cloned();
    let uid = claim.metadata.uid.as_deref().unwrap_or_default();
    let newer = match (
        &pv.metadata.creation_timestamp,
        &claim.metadata.creation_timestamp,
    ) {
        (Some(v), Some(c)) => v.0 >= c.0,
        _ => false,
    };
    spec.and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) == Some("Retain")
        && spec
            .and_then(|s| s.claim_ref.as_ref()?.uid.as_deref())
            .is_some_and(|u| !uid.is_empty() && u == uid)
        && annotation("pv.kubernetes.io/provisioned-by").is_some_and(|p| !p.is_empty())
        && annotation("pv.kubernetes.io/bound-by-controller").as_deref() != Some("yes")
        && newer
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
        let volume = claim.spec.as_ref()?.volume_name.as_deref()?;
        let pv = match self.cluster.persistent_volume(volume).await {
            Ok(pv) => pv?,
            Err(e) => {
                self.obs.note(&format!("iogauge kube: {e}"));
                return None;
            }
        };
        let policy = pv
            .spec
            .as_ref()?
            .persistent_volume_reclaim_policy
            .as_deref();
        if policy != Some("Retain") {
            return None;
        }
        if !retained_by(&pv, claim) {
            self.say(
                index,
                &format!(
                    "volume {volume} was not provisioned for this claim (a volume made \
                     beforehand, bound to it by the cluster): left as it is, Released once the \
                     claim is deleted"
                ),
            );
            return None;
        }
        let uid = pv.metadata.uid.as_deref().unwrap_or_default();
        let version = pv.metadata.resource_version.as_deref().unwrap_or_default();
        match self.cluster.reclaim_on_delete(volume, uid, version).await {
            Ok(()) => self.say(
                index,
                &format!(
                    "volume {volume}: reclaimPolicy Retain set to Delete, so that it and its \
                     disk go with the claim"
                ),
            ),
            Err(e) => self.obs.note(&format!(
                "iogauge kube: {e}; the volume and its disk stay once the claim is deleted: \
                 kubectl patch pv {volume} -p '{{\"spec\":{{\"persistentVolumeReclaimPolicy\":\"Delete\"}}}}' \
                 deletes both"
            )),
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
    fn only_a_retained_volume_provisioned_for_our_claim_is_ours_to_change() {
        let claim: PersistentVolumeClaim = serde_json::from_value(json!({"metadata": {
            "name": "c", "uid": "u1", "creationTimestamp": "2026-11-27T10:00:00Z"}}))
        .unwrap();
        let pv = |policy: &str, uid: &str, made: &str, annotations: serde_json::Value| {
            serde_json::from_value::<PersistentVolume>(json!({"metadata": {"name": "pv",
                "creationTimestamp": made, "annotations": annotations}, "spec": {
                "persistentVolumeReclaimPolicy": policy, "claimRef": {"uid": uid}}}))
            .unwrap()
        };
        let provisioned = json!({"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"});
        let after = "2026-11-27T10:00:01Z";
        assert!(retained_by(
            &pv("Retain", "u1", after, provisioned.clone()),
            &claim
        ));
        // Another claim's, or a Delete volume.
        assert!(!retained_by(
            &pv("Retain", "u2", after, provisioned.clone()),
            &claim
        ));
        assert!(!retained_by(
            &pv("Delete", "u1", after, provisioned.clone()),
            &claim
        ));
        // Made beforehand: older than the claim, no provisioner, or bound by the controller.
        assert!(!retained_by(
            &pv("Retain", "u1", "2026-01-01T00:00:00Z", provisioned),
            &claim
        ));
        assert!(!retained_by(&pv("Retain", "u1", after, json!({})), &claim));
        assert!(!retained_by(
            &pv(
                "Retain",
                "u1",
                after,
                json!({"pv.kubernetes.io/provisioned-by": "x",
                       "pv.kubernetes.io/bound-by-controller": "yes"})
            ),
            &claim
        ));
        let nameless: PersistentVolumeClaim =
            serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap();
        assert!(!retained_by(
            &pv(
                "Retain",
                "",
                after,
                json!({"pv.kubernetes.io/provisioned-by": "x"})
            ),
            &nameless
        ));
    }

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
