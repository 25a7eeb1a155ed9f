//! The targets of a run, once known: a fresh claim per storage class, an existing claim, or a
//! node's directory; their names; and how big a fresh claim must be for the profiles' files.

use super::request::{CheckArgs, MOUNT_PATH};
use crate::input::profiles::Tuning;
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
        let (tag, name) = match &kind {
            TargetKind::StorageClass { class, .. } => ("storage-class", class),
            TargetKind::Claim { name, .. } => ("claim", name),
            TargetKind::Node { name, .. } => ("node", name),
        };
        Target {
            slug: slug(tag, name),
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

/// Names made unique over the run. Slugs already differ by their hash of kind and full name;
/// two equal slugs mean the same target named twice or a hash collision, and a `-2` keeps them
/// apart within the length limit.
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

/// The readable part of a slug at most: the end of a name, where cloud node names differ
/// (`gke-prod-default-pool-3f2a1b2c-xk4m`).
const TAIL: usize = 30;
/// Base-36 characters of the hash.
const HASH: usize = 5;

/// A DNS-1123 label fragment: the last [`TAIL`] characters of the name in lower-case letters,
/// digits and '-', then a short hash of the kind and the whole name, so that names alike in
/// their tail, or equal across kinds (class `fast`, node `fast`), still differ. At most 36
/// characters, and 38 after [`dedupe`], so that `iogauge-<run>-<slug>` (at most 53) plus the
/// Job controller's `-xxxxx` pod suffix stays within Kubernetes' 63.
fn slug(kind: &str, name: &str) -> String {
    let clean: Vec<char> = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let tail: String = clean[clean.len().saturating_sub(TAIL)..].iter().collect();
    let tail = tail.trim_matches('-');
    let tail = if tail.is_empty() { "target" } else { tail };
    format!("{tail}-{}", short_hash(&format!("{kind}/{name}")))
}

/// FNV-1a over the text, as [`HASH`] base-36 digits: stable across runs and versions, so a
/// target keeps its name from one run to the next.
fn short_hash(text: &str) -> String {
    let mut x: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        x ^= u64::from(b);
        x = x.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    (0..HASH)
        .map(|_| {
            let d = char::from(digits[(x % 36) as usize]);
            x /= 36;
            d
        })
        .collect()
}

/// The most bytes any of the profiles writes at once (they run one after another, each removing
/// its files): the size a volume must hold.
pub(crate) fn footprint(
    profile_names: &[String],
    check: &CheckArgs,
    files: &super::configmap::PodFiles,
) -> Result<u64, String> {
    let tuning = Tuning {
        scale: check.scale.unwrap_or(1.0),
        duration: check.duration,
        size: check.file_size,
        max_size: None,
    };
    let mut most = 0u64;
    for name in profile_names {
        let p = files.profile(name)?;
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

/// A `--claim-size` the jobs' files do not fit in (with the filesystem's share, targets.rs
/// FILE_SHARE): Err with the size needed.
pub(crate) fn check_claim_size(footprint: u64, asked: Option<u64>) -> Result<(), String> {
    let need = (footprint as f64 / FILE_SHARE).ceil() as u64;
    match asked {
        Some(a) if a < need => Err(format!(
            "--claim-size {}: the jobs' files take {} bytes, which needs a claim of at least \
             {need} bytes ({} with the filesystem's share); leave --claim-size out to size the \
             claim from the jobs, or give at least {}",
            super::quantity::format_bytes(a),
            footprint,
            super::quantity::format_bytes(need),
            super::quantity::format_bytes(claim_bytes(footprint, None))
        )),
        _ => Ok(()),
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

    fn node(name: &str) -> Target {
        Target::new(TargetKind::Node {
            name: name.into(),
            hostname: name.into(),
            host_path: "/d".into(),
        })
    }

    fn class(name: &str) -> Target {
        Target::new(TargetKind::StorageClass {
            class: name.into(),
            provisioner: None,
            binding_mode: None,
            claim_bytes: 1 << 30,
        })
    }

    fn is_label(s: &str) -> bool {
        !s.is_empty()
            && s.len() <= 63
            && s.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            && !s.starts_with('-')
            && !s.ends_with('-')
    }

    #[test]
    fn slugs_are_a_readable_tail_and_a_hash_of_the_whole_name() {
        let s = slug("node", "Fast_SSD.v2");
        assert!(s.starts_with("fast-ssd-v2-"), "{s}");
        assert_eq!(s.len(), "fast-ssd-v2-".len() + HASH);
        assert_eq!(s, slug("node", "Fast_SSD.v2"), "stable");
        assert!(slug("node", "---").starts_with("target-"));
        // The end of a long name is kept: there cloud node names differ.
        let long = format!("{}-xk4m", "a".repeat(80));
        let s = slug("node", &long);
        assert_eq!(s.len(), TAIL + 1 + HASH);
        assert!(s.starts_with("aaaa") && s.contains("-xk4m-"), "{s}");
    }

    #[test]
    fn names_are_unique_over_the_run_and_fit_63_characters() {
        // GKE and AKS node names alike in their first 30 characters.
        let gke = "gke-production-cluster-1-default-pool-3f2a1b2c";
        let mut t = vec![
            node(&format!("{gke}-xk4m")),
            node(&format!("{gke}-p9zq")),
            node("aks-nodepool1-12345678-vmss000000"),
            node("aks-nodepool1-12345678-vmss000001"),
            // The case: two classes and a node that slugged alike after dedupe.
            class("fast"),
            class("fast-2"),
            node("fast"),
            // Names that only differ in what a slug cannot hold.
            node("a.b"),
            node("a_b"),
            // A name whose last 30 characters are another's.
            node(&format!("x{}", "y".repeat(40))),
            node(&format!("z{}", "y".repeat(40))),
        ];
        // The same target twice still gets two names.
        t.push(class("fast"));
        dedupe(&mut t);
        let names: std::collections::BTreeSet<&str> = t.iter().map(|t| t.slug.as_str()).collect();
        assert_eq!(names.len(), t.len(), "{names:?}");
        let run = run_id();
        for t in &t {
            // The Job controller names pods `<job>-<5 characters>`.
            let pod = format!("iogauge-{run}-{}-abcde", t.slug);
            assert!(is_label(&pod), "{pod} ({} characters)", pod.len());
        }
        assert!(t[4].slug.starts_with("fast-") && t[6].slug.starts_with("fast-"));
        assert_ne!(t[4].slug, t[6].slug);
        assert_eq!(t[11].slug, format!("{}-2", t[4].slug));
    }

    #[test]
    fn run_ids_are_six_label_characters() {
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
        let f = footprint(&all, &CheckArgs::default(), &Default::default()).unwrap();
        assert_eq!(f, 1 << 30);
        assert_eq!(claim_bytes(f, None), 2 << 30);
        // etcd's 22 MiB still gets the 1 GiB minimum; a size the user gives is kept as given.
        let etcd = footprint(&["etcd".into()], &CheckArgs::default(), &Default::default()).unwrap();
        assert_eq!(etcd, 22 << 20);
        assert_eq!(claim_bytes(etcd, None), 1 << 30);
        assert_eq!(claim_bytes(etcd, Some(100 << 20)), 100 << 20);
        // small-files: 1,000 files of at least one 4 KiB block each.
        assert_eq!(
            footprint(
                &["small-files".into()],
                &CheckArgs::default(),
                &Default::default()
            )
            .unwrap(),
            1000 * 4096
        );
        let scaled = CheckArgs {
            scale: Some(0.1),
            ..CheckArgs::default()
        };
        assert!(footprint(&all, &scaled, &Default::default()).unwrap() < 110 << 20);
        assert!(footprint(&["nope".into()], &scaled, &Default::default()).is_err());
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
