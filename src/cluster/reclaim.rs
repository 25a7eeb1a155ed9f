//! A Retain class's volume, when iogauge deletes a claim it made (the controller at a target's
//! end, `kube cleanup` for runs left behind): the volume provisioned for the claim is set to
//! reclaimPolicy Delete first, so that it and its disk go with the claim; a volume the claim
//! was bound to but that was made beforehand is left as it is, and said.

use super::client::Cluster;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};

/// What became of a claim's volume before the claim is deleted.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reclaim {
    /// No volume, or one that goes with the claim anyway (not Retain).
    NotRetained,
    /// The volume could not be read (the API server's words).
    Unread(String),
    /// A Retain volume made beforehand, not for this claim: left as it is (its name).
    NotOurs(String),
    /// Set to Delete (its name).
    Set(String),
    /// Setting Delete failed: the reason, with the kubectl command that does it.
    Failed(String),
}

/// Whether `pv` was provisioned for our claim and is kept by a Retain policy: only then is
/// changing it ours to do. Bound to our claim is not enough: the PV controller binds a new claim
/// to a matching Available volume made beforehand (an administrator's, or a static local one)
/// before it asks for a new one, and marks that bind `pv.kubernetes.io/bound-by-controller`; a
/// volume made for the claim names its provisioner and is no older than the claim.
pub(crate) fn retained_by(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
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

/// Before `claim` is deleted: sets its volume's reclaimPolicy from Retain to Delete when the
/// volume was provisioned for it ([`retained_by`], proven by its claimRef uid; nothing else is
/// touched), so that the provisioner deletes the volume and its disk once the claim is gone.
/// Deleting the Released PersistentVolume instead would leave the disk behind, with nothing
/// left in the cluster to find it by.
pub(crate) async fn reclaim(cluster: &Cluster, claim: &PersistentVolumeClaim) -> Reclaim {
    // A canary's claim keeps its volume as its class says: never ours to change.
    let canary = claim.metadata.labels.as_ref();
    if canary.is_some_and(|l| l.contains_key(super::labels::CANARY_LABEL)) {
        return Reclaim::NotRetained;
    }
    let Some(volume) = claim.spec.as_ref().and_then(|s| s.volume_name.clone()) else {
        return Reclaim::NotRetained;
    };
    let pv = match cluster.persistent_volume(&volume).await {
        Ok(Some(pv)) => pv,
        Ok(None) => return Reclaim::NotRetained,
        Err(e) => return Reclaim::Unread(e),
    };
    let spec = pv.spec.as_ref();
    if spec.and_then(|s| s.persistent_volume_reclaim_policy.as_deref()) != Some("Retain") {
        return Reclaim::NotRetained;
    }
    if !retained_by(&pv, claim) {
        return Reclaim::NotOurs(volume);
    }
    let uid = pv.metadata.uid.as_deref().unwrap_or_default();
    let version = pv.metadata.resource_version.as_deref().unwrap_or_default();
    match cluster.reclaim_on_delete(&volume, uid, version).await {
        Ok(()) => Reclaim::Set(volume),
        Err(e) => Reclaim::Failed(format!(
            "{e}; the volume and its disk stay once the claim is deleted: kubectl patch pv \
             {volume} -p '{{\"spec\":{{\"persistentVolumeReclaimPolicy\":\"Delete\"}}}}' deletes both"
        )),
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
}
