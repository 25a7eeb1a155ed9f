//! The targets of a run, once known: a fresh claim per storage class, an existing claim, or a
//! node's directory; their names; and how big a fresh claim must be for the profiles' files.

use super::request::{CheckArgs, MOUNT_PATH};
use crate::input::profiles::{self, Tuning};
use crate::model::SizeSpec;
use std::path::Path;

/// A test file may use this share of a claim: the rest is the filesystem's own overhead, and
/// room so that a full claim never fails the test with ENOSPC (kubestr #253).
pub(crate) const FILE_SHARE: f64 = 0.8;

/// One thing measured by one Job.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Target {
    /// Unique within the run, usable in object names.
    pub slug: String,
    pub kind: TargetKind,
}

/// What a target is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TargetKind {
    /// A fresh claim in this storage class, deleted afterwards.
    StorageClass {
        class: String,
        provisioner: Option<String>,
        binding_mode: Option<String>,
        claim_bytes: u64,
    },
    /// An existing claim: used, never created or deleted.
    Claim {
        name: String,
        storage_class: Option<String>,
        capacity: Option<u64>,
    },
    /// A node's directory, through a hostPath volume.
    Node {
        name: String,
        /// The node's `kubernetes.io/hostname` label, which the pod selects it by.
        hostname: String,
        host_path: String,
    },
}

impl Target {
    pub(crate) fn new(kind: TargetKind) -> Target {
        let name = match &kind {
            TargetKind::StorageClass { class, .. } => class,
            TargetKind::Claim { name, .. } => name,
            TargetKind::Node { name, .. } => name,
        };
        Target {
            slug: slug(name),
            kind,
        }
    }

    /// "storage class fast-ssd", "claim etcd-data", "node cp-1".
    pub(crate) fn describe(&self) -> String {
        match &self.kind {
            TargetKind::StorageClass { class, .. } => format!("storage class {class}"),
            TargetKind::Claim { name, .. } => format!("claim {name}"),
            TargetKind::Node { name, .. } => format!("node {name}"),
        }
    }

    /// The largest test file that fits this target's volume with headroom (None: no known
    /// size; check then compares with the free space it finds).
    pub(crate) fn max_file(&self) -> Option<u64> {
        let room = match &self.kind {
            TargetKind::StorageClass { claim_bytes, .. } => Some(*claim_bytes),
            TargetKind::Claim { capacity, .. } => *capacity,
            TargetKind::Node { .. } => None,
        }?;
        Some(((room as f64 * FILE_SHARE) as u64) >> 20 << 20)
    }
}

/// Names made unique: a second target with the same slug gets `-2`, and so on.
pub(crate) fn dedupe(targets: &mut [Target]) {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for t in targets {
        let n = seen.entry(t.slug.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            t.slug = format!("{}-{n}", t.slug);
        }
    }
}

/// A DNS-1123 label fragment: lower-case letters, digits and '-', at most 30 characters, so
/// that `iogauge-<run>-<slug>-<pod suffix>` stays within Kubernetes' 63.
fn slug(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.truncate(30);
    let s = s.trim_matches('-').to_string();
    if s.is_empty() {
        "target".into()
    } else {
        s
    }
}

/// The most bytes any of the profiles writes at once (they run one after another, each removing
/// its files): the size a volume must hold.
pub(crate) fn footprint(profile_names: &[String], check: &CheckArgs) -> Result<u64, String> {
    let tuning = Tuning {
        scale: check.scale.unwrap_or(1.0),
        duration: check.duration,
        size: check.file_size,
        max_size: None,
    };
    let mut most = 0u64;
    for name in profile_names {
        let p = profiles::get(name)?;
        let bytes = match p.small_files(&tuning) {
            // Every small file takes at least a 4 KiB block.
            Some(s) => u64::from(s.files) * s.size.max(4096) as u64,
            None => match p.job(Path::new(MOUNT_PATH), &tuning)?.size {
                Some(SizeSpec::Bytes(b)) => b,
                _ => 0,
            },
        };
        most = most.max(bytes);
    }
    Ok(most)
}

/// A fresh claim's size: what the user asked for, or enough for the largest file with headroom
/// in whole GiB (at least 1 GiB, which many provisioners round up to anyway).
pub(crate) fn claim_bytes(footprint: u64, asked: Option<u64>) -> u64 {
    match asked {
        Some(b) => b,
        None => {
            let need = (footprint as f64 / FILE_SHARE).ceil() as u64;
            need.div_ceil(1 << 30).max(1) << 30
        }
    }
}

/// A short id for one run, in every object's name and label: six base-36 characters from the
/// clock and the process id.
pub(crate) fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut x = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
    // One round of a 64-bit mixer, so that runs close in time differ in every character.
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    // A letter first: the id is also a label value, and reads better that way.
    let mut s = String::from(char::from(digits[10 + (x % 26) as usize]));
    x /= 26;
    for _ in 0..5 {
        s.push(char::from(digits[(x % 36) as usize]));
        x /= 36;
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn slugs_are_dns_labels_and_unique() {
        assert_eq!(slug("Fast_SSD.v2"), "fast-ssd-v2");
        assert_eq!(slug("---"), "target");
        assert_eq!(slug(&"x".repeat(80)).len(), 30);
        let mut t = vec![
            Target::new(TargetKind::Node {
                name: "a.b".into(),
                hostname: "a.b".into(),
                host_path: "/d".into(),
            }),
            Target::new(TargetKind::Node {
                name: "a_b".into(),
                hostname: "a_b".into(),
                host_path: "/d".into(),
            }),
        ];
        dedupe(&mut t);
        assert_eq!((t[0].slug.as_str(), t[1].slug.as_str()), ("a-b", "a-b-2"));
        let id = run_id();
        assert_eq!(id.len(), 6);
        assert!(id.chars().next().unwrap().is_ascii_lowercase());
        assert!(id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    }

    #[test]
    fn claims_hold_the_largest_file_with_headroom() {
        let all: Vec<String> = crate::input::profiles::DEFAULT_SUITE
            .iter()
            .map(|s| s.to_string())
            .collect();
        // sync-iops and gitlab write 1 GiB files: 1.25 GiB rounds up to 2 GiB.
        let f = footprint(&all, &CheckArgs::default()).unwrap();
        assert_eq!(f, 1 << 30);
        assert_eq!(claim_bytes(f, None), 2 << 30);
        // etcd's 22 MiB still gets the 1 GiB minimum; a size the user gives is kept as given.
        let etcd = footprint(&["etcd".into()], &CheckArgs::default()).unwrap();
        assert_eq!(etcd, 22 << 20);
        assert_eq!(claim_bytes(etcd, None), 1 << 30);
        assert_eq!(claim_bytes(etcd, Some(100 << 20)), 100 << 20);
        // small-files: 1,000 files of at least one 4 KiB block each.
        assert_eq!(
            footprint(&["small-files".into()], &CheckArgs::default()).unwrap(),
            1000 * 4096
        );
        let scaled = CheckArgs {
            scale: Some(0.1),
            ..CheckArgs::default()
        };
        assert!(footprint(&all, &scaled).unwrap() < 110 << 20);
        assert!(footprint(&["nope".into()], &scaled).is_err());
        // A 2 GiB claim takes files up to 1638 MiB.
        let t = Target::new(TargetKind::StorageClass {
            class: "c".into(),
            provisioner: None,
            binding_mode: None,
            claim_bytes: 2 << 30,
        });
        assert_eq!(t.max_file(), Some(1638 << 20));
    }
}
