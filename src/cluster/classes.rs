//! What a storage class's own settings say about measuring it: whether `--all-storage-classes`
//! should leave it out (every run would leak a volume, or could never bind), and whether a small
//! fresh claim would measure a small-disk performance tier rather than the disk one would run.

use super::quantity::format_bytes;
use k8s_openapi::api::storage::v1::StorageClass;

/// What the storage classes of a run say before it starts: the classes
/// `--all-storage-classes` leaves out, the warnings about fresh claims, and which classes
/// retain their volumes (deleted after the claim by the controller).
#[derive(Default)]
pub(crate) struct ClassNotes {
    /// One line per class left out, saying why and how to measure it anyway.
    pub skipped: Vec<String>,
    /// Warnings about a class's fresh claims, by class name.
    pub warnings: std::collections::BTreeMap<String, Vec<String>>,
    /// Classes with reclaimPolicy Retain.
    pub retained: std::collections::BTreeSet<String>,
}

impl ClassNotes {
    /// Notes a class to be measured with fresh claims of `claim_bytes`.
    pub(crate) fn measured(&mut self, sc: &StorageClass, claim_bytes: u64) {
        let name = sc.metadata.name.clone().unwrap_or_default();
        if sc.reclaim_policy.as_deref() == Some("Retain") {
            self.retained.insert(name.clone());
        }
        if let Some(w) = size_warning(sc, claim_bytes) {
            self.warnings.entry(name).or_default().push(w);
        }
    }

    /// The classes of `all` that `--all-storage-classes` measures: those `skip_reason` leaves
    /// out are noted, unless `named` (the user asked for them, whatever their policy).
    pub(crate) fn pick<'a>(
        &mut self,
        all: &'a [StorageClass],
        named: &[String],
        claim_bytes: u64,
    ) -> Vec<&'a StorageClass> {
        let mut out = Vec::new();
        for sc in all {
            let asked = sc.metadata.name.as_ref().is_some_and(|n| named.contains(n));
            if let Some(why) = skip_reason(sc).filter(|_| !asked) {
                self.skipped.push(why);
                continue;
            }
            self.measured(sc, claim_bytes);
            out.push(sc);
        }
        out
    }
}

/// The provisioner of classes that only bind claims to PersistentVolumes made beforehand.
pub(crate) const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";

/// Why `--all-storage-classes` leaves this class out, or None to measure it.
pub(crate) fn skip_reason(sc: &StorageClass) -> Option<String> {
    let name = sc.metadata.name.as_deref().unwrap_or_default();
    if sc.provisioner == NO_PROVISIONER {
        return Some(format!(
            "--all-storage-classes: skipping storage class {name}: its provisioner is \
             {NO_PROVISIONER}, so a fresh claim binds only to a PersistentVolume made beforehand \
             (a local volume) and would wait for ever; to measure it anyway, make a free volume \
             and name the class with --storage-class {name}, or measure a bound claim with --claim"
        ));
    }
    if sc.reclaim_policy.as_deref() == Some("Retain") {
        return Some(format!(
            "--all-storage-classes: skipping storage class {name}: its reclaimPolicy is Retain, \
             so every run would leave a Released PersistentVolume (and its disk) behind; to \
             measure it anyway, name it with --storage-class {name} (iogauge then sets its \
             volume's reclaimPolicy to Delete, so that the volume and its disk go with the claim)"
        ));
    }
    None
}

/// A provisioner whose performance grows with the volume's size.
struct Scaling {
    /// The disk kind, as its vendor names it.
    what: String,
    /// How performance follows size.
    fact: &'static str,
    /// Below this size the numbers are a small-disk tier's.
    full: u64,
}

const GIB: u64 = 1 << 30;

/// A class parameter, by key regardless of case (Azure documents `skuName`, `skuname` and
/// `storageaccounttype`; values are matched without case too).
fn param(sc: &StorageClass, keys: &[&str]) -> Option<String> {
    let p = sc.parameters.as_ref()?;
    p.iter()
        .find(|(k, _)| keys.iter().any(|want| k.eq_ignore_ascii_case(want)))
        .map(|(_, v)| v.to_ascii_lowercase())
}

fn scaling(sc: &StorageClass) -> Option<Scaling> {
    let kind = param(sc, &["type"]);
    match sc.provisioner.as_str() {
        // AWS EBS gp2: "3 IOPS per GiB of volume size" (at least 100), bursting to 3,000 IOPS on
        // I/O credits; the baseline reaches 3,000 at 1,000 GiB. Source: Amazon EC2 user guide,
        // "Amazon EBS volume types" (gp2), https://docs.aws.amazon.com/ebs/latest/userguide/
        // general-purpose.html. The CSI driver's default type is gp3 (size-independent), the
        // in-tree plugin's gp2.
        "ebs.csi.aws.com" | "kubernetes.io/aws-ebs" => {
            let gp2 = match kind.as_deref() {
                Some(t) => t == "gp2",
                None => sc.provisioner == "kubernetes.io/aws-ebs",
            };
            gp2.then(|| Scaling {
                what: "gp2".into(),
                fact: "gp2 volumes get 3 IOPS per GiB (at least 100) and reach 3,000 IOPS only \
                       while burst credits last",
                full: 1000 * GIB,
            })
        }
        // GCE Persistent Disk: IOPS and throughput are per GB of size (pd-standard 0.75 read /
        // 1.5 write IOPS per GB, pd-balanced 6, pd-ssd 30) up to per-instance caps. Source:
        // Google Cloud, "Configure disks to meet performance requirements",
        // https://cloud.google.com/compute/docs/disks/performance. The driver's default type is
        // pd-standard.
        "pd.csi.storage.gke.io" | "kubernetes.io/gce-pd" => {
            let t = kind.unwrap_or_else(|| "pd-standard".into());
            if !["pd-standard", "pd-balanced", "pd-ssd"].contains(&t.as_str()) {
                return None;
            }
            Some(Scaling {
                what: t,
                fact: "Persistent Disk IOPS and throughput grow per GiB of size (pd-standard \
                       0.75 read and 1.5 write IOPS per GiB, pd-balanced 6, pd-ssd 30)",
                full: 500 * GIB,
            })
        }
        // Azure Premium SSD (v1): a disk gets the performance of its size tier, P1-P4 (up to
        // 32 GiB) 120 IOPS, P10 (128 GiB) 500, P20 (512 GiB) 2,300. Source: Microsoft Learn,
        // "Azure managed disk types", Premium SSD size table,
        // https://learn.microsoft.com/azure/virtual-machines/disks-types. Premium SSD v2
        // (PremiumV2_LRS) and Ultra set IOPS apart from size.
        "disk.csi.azure.com" | "kubernetes.io/azure-disk" => {
            let sku = param(sc, &["skuName", "storageaccounttype"])?;
            sku.starts_with("premium_").then(|| Scaling {
                what: "Azure Premium SSD".into(),
                fact: "Premium SSD disks get their size tier's performance (P1-P4 up to 32 GiB: \
                       120 IOPS; P10, 128 GiB: 500; P20, 512 GiB: 2,300)",
                full: 512 * GIB,
            })
        }
        _ => None,
    }
}

/// A warning when a fresh claim of `bytes` in this class would measure a small-disk tier.
pub(crate) fn size_warning(sc: &StorageClass, bytes: u64) -> Option<String> {
    let s = scaling(sc)?;
    if bytes >= s.full {
        return None;
    }
    Some(format!(
        "a {} {} claim measures a small disk's performance, not a production-sized one: {}; \
         measure the size you will run with --claim-size (e.g. --claim-size {})",
        format_bytes(bytes),
        s.what,
        s.fact,
        format_bytes(s.full)
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn class(
        name: &str,
        provisioner: &str,
        reclaim: &str,
        params: &[(&str, &str)],
    ) -> StorageClass {
        let mut sc = StorageClass {
            provisioner: provisioner.into(),
            reclaim_policy: Some(reclaim.into()),
            ..StorageClass::default()
        };
        sc.metadata.name = Some(name.into());
        if !params.is_empty() {
            sc.parameters = Some(
                params
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
        }
        sc
    }

    #[test]
    fn retain_and_no_provisioner_classes_are_left_out() {
        let keep = class("fast", "ebs.csi.aws.com", "Delete", &[]);
        assert_eq!(skip_reason(&keep), None);
        let r = skip_reason(&class("keep", "ebs.csi.aws.com", "Retain", &[])).unwrap();
        assert!(
            r.contains("reclaimPolicy is Retain") && r.contains("--storage-class keep"),
            "{r}"
        );
        let l = skip_reason(&class("local", NO_PROVISIONER, "Delete", &[])).unwrap();
        assert!(
            l.contains("kubernetes.io/no-provisioner") && l.contains("--storage-class local"),
            "{l}"
        );
    }

    #[test]
    fn small_claims_on_size_scaled_disks_are_warned_about() {
        let gp2 = class("a", "ebs.csi.aws.com", "Delete", &[("type", "gp2")]);
        let w = size_warning(&gp2, GIB).unwrap();
        assert!(
            w.starts_with("a 1Gi gp2 claim measures") && w.ends_with("--claim-size 1000Gi)"),
            "{w}"
        );
        assert_eq!(size_warning(&gp2, 1000 * GIB), None);
        // The CSI driver's default is gp3; the in-tree plugin's gp2.
        assert_eq!(
            size_warning(&class("a", "ebs.csi.aws.com", "Delete", &[]), GIB),
            None
        );
        assert!(size_warning(&class("a", "kubernetes.io/aws-ebs", "Delete", &[]), GIB).is_some());
        let pd = class(
            "a",
            "pd.csi.storage.gke.io",
            "Delete",
            &[("type", "pd-balanced")],
        );
        assert!(size_warning(&pd, 2 * GIB)
            .unwrap()
            .contains("2Gi pd-balanced claim"));
        let extreme = class(
            "a",
            "pd.csi.storage.gke.io",
            "Delete",
            &[("type", "pd-extreme")],
        );
        assert_eq!(size_warning(&extreme, GIB), None);
        let az = class(
            "a",
            "disk.csi.azure.com",
            "Delete",
            &[("skuname", "Premium_LRS")],
        );
        assert!(size_warning(&az, GIB)
            .unwrap()
            .contains("Azure Premium SSD"));
        let v2 = class(
            "a",
            "disk.csi.azure.com",
            "Delete",
            &[("skuName", "PremiumV2_LRS")],
        );
        assert_eq!(size_warning(&v2, GIB), None);
        assert_eq!(
            size_warning(&class("a", "rancher.io/local-path", "Delete", &[]), GIB),
            None
        );
    }
}
