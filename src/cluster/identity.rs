//! Who the pod runs as: the `--security-context` modes and the uid/gid flags, resolved per
//! target into the pod's ids; and, when a pod could not write its directory, the likely cause
//! and the flag that fixes it. Pure: the manifests and the controller call in.

use super::request::{Identity, SecurityMode, POD_UID};
use super::targets::TargetKind;

/// The ids one pod gets (None: left out of the manifest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PodIds {
    pub uid: Option<i64>,
    pub gid: Option<i64>,
    pub non_root: bool,
    pub fs_group: Option<i64>,
    pub supplemental: Vec<i64>,
}

impl Identity {
    /// Refuses combinations that contradict themselves, with the fix.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let ids = self.run_as_user.is_some() || self.run_as_group.is_some();
        match self.mode {
            SecurityMode::Platform if ids => Err(
                "--security-context platform leaves the uid and gid to the platform (OpenShift \
                 assigns them from the namespace's range): drop --run-as-user/--run-as-group, or \
                 use --security-context restricted to set them"
                    .into(),
            ),
            SecurityMode::Root if ids => Err(
                "--security-context root runs as uid 0 and gid 0: drop --run-as-user/\
                 --run-as-group, or use --security-context restricted with them"
                    .into(),
            ),
            SecurityMode::Restricted if self.run_as_user == Some(0) => Err(
                "--run-as-user 0: for uid 0 use --security-context root (the namespace then \
                 needs Pod Security baseline)"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    /// The ids for a target's pod. `block`: a fresh claim given as a raw device, which belongs
    /// to root in the container (fsGroup does not apply to device nodes).
    pub(crate) fn resolve(&self, kind: &TargetKind, block: bool) -> PodIds {
        let supplemental = self.supplemental_groups.clone();
        match self.mode {
            SecurityMode::Platform => PodIds {
                uid: None,
                gid: None,
                non_root: true,
                fs_group: None,
                supplemental,
            },
            SecurityMode::Root => PodIds {
                uid: Some(0),
                gid: Some(0),
                non_root: false,
                fs_group: None,
                supplemental,
            },
            SecurityMode::Restricted => {
                // A node directory is the host's own (etcd's is root's, mode 0700), and a raw
                // device is root's: uid 0 there unless the user names the owner.
                let host = matches!(kind, TargetKind::Node { .. }) || block;
                let default = if host { 0 } else { POD_UID };
                let uid = self.run_as_user.unwrap_or(default);
                let gid = self.run_as_group.or(self.run_as_user).unwrap_or(default);
                // fsGroup gives a fresh filesystem's root to the pod's group; a user's existing
                // claim keeps its ownership.
                let fresh = matches!(kind, TargetKind::StorageClass { .. }) && !block;
                PodIds {
                    uid: Some(uid),
                    gid: Some(gid),
                    non_root: uid != 0,
                    fs_group: fresh.then_some(gid),
                    supplemental,
                }
            }
        }
    }
}

/// CSI drivers and provisioners of shared file volumes, which usually leave fsGroup unapplied
/// (the export's owner stays, so a non-root pod cannot write its root).
const FILE_PROVISIONERS: [&str; 10] = [
    "nfs.csi.k8s.io",
    "cephfs.csi.ceph.com",
    "openshift-storage.cephfs.csi.ceph.com",
    "efs.csi.aws.com",
    "file.csi.azure.com",
    "kubernetes.io/azure-file",
    "filestore.csi.storage.gke.io",
    "nfs.csi.netapp.com",
    "csi.trident.netapp.io",
    "smb.csi.k8s.io",
];

/// Whether a provisioner serves shared file volumes (by name: the list, or "nfs"/"cephfs" in it).
pub(crate) fn is_file_provisioner(p: &str) -> bool {
    FILE_PROVISIONERS.contains(&p) || p.contains("nfs") || p.contains("cephfs")
}

/// What the target and the pod's identity tell about a failure that says the pod could not
/// write its directory (`iogauge check`'s "is not writable (Permission denied …)"): the reason
/// with the likely cause and the flag that fixes it appended, or the reason unchanged.
pub(crate) fn explain(
    reason: String,
    kind: &TargetKind,
    access_mode: &str,
    id: &Identity,
) -> String {
    let denied = reason.contains("is not writable (")
        && (reason.contains("Permission denied") || reason.contains("Operation not permitted"));
    if !denied {
        return reason;
    }
    let who = match (id.mode, id.run_as_user) {
        (SecurityMode::Platform, _) => "the uid the platform assigned".to_string(),
        (SecurityMode::Root, _) => "uid 0 without capabilities".to_string(),
        (_, Some(u)) => format!("uid {u}"),
        (_, None) if matches!(kind, TargetKind::Node { .. }) => {
            "uid 0 without capabilities".to_string()
        }
        _ => format!("uid {POD_UID}"),
    };
    let fix_owner = "--run-as-user <owner uid> or --supplemental-group <owner gid>";
    let hint = match kind {
        TargetKind::Node { host_path, .. } => format!(
            "{host_path} on the node belongs to another user, and {who} may not write it: run as \
             its owner with --run-as-user <owner uid> (ls -ln {host_path} on the node shows it)"
        ),
        TargetKind::StorageClass { provisioner, .. } if id.mode == SecurityMode::Platform => {
            let p = provisioner.as_deref().unwrap_or("its provisioner");
            format!(
                "the volume ({p}) is not writable by {who}; under OpenShift the namespace's \
                 SCC decides the groups: ask for an SCC that allows fsGroup, or use {fix_owner} \
                 with --security-context restricted"
            )
        }
        TargetKind::StorageClass { provisioner, .. }
            if provisioner.as_deref().is_some_and(is_file_provisioner)
                || access_mode == "ReadWriteMany" =>
        {
            let p = provisioner.as_deref().unwrap_or("a shared file volume");
            format!(
                "{p} volumes usually ignore fsGroup, so the export's owner stays and {who} may \
                 not write it: use {fix_owner} of the export, or --security-context root"
            )
        }
        TargetKind::StorageClass { .. } => format!(
            "the volume's root is not writable by {who} although fsGroup was set (a driver \
             without fsGroup support?): use {fix_owner}, or --security-context root"
        ),
        TargetKind::Claim { name, .. } => format!(
            "the claim {name}'s files belong to another user (iogauge leaves an existing \
             claim's ownership alone), and {who} may not write them: use {fix_owner}, or \
             --security-context root; under OpenShift, --security-context platform"
        ),
    };
    // check's own fix names --dir, which a kube user cannot pass: the hint above replaces it.
    let reason = reason.replace("; choose another with --dir", "");
    format!("{reason} ({hint})")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn class(p: &str) -> TargetKind {
        TargetKind::StorageClass {
            class: "c".into(),
            provisioner: Some(p.into()),
            binding_mode: None,
            claim_bytes: 1 << 30,
        }
    }

    fn node() -> TargetKind {
        TargetKind::Node {
            name: "cp-1".into(),
            hostname: "cp-1".into(),
            host_path: "/var/lib/etcd".into(),
        }
    }

    fn id(mode: SecurityMode, user: Option<i64>) -> Identity {
        Identity {
            mode,
            run_as_user: user,
            ..Identity::default()
        }
    }

    #[test]
    fn modes_resolve_per_target() {
        let r = Identity::default();
        let fresh = r.resolve(&class("ebs.csi.aws.com"), false);
        assert_eq!(
            (fresh.uid, fresh.gid, fresh.non_root, fresh.fs_group),
            (Some(65532), Some(65532), true, Some(65532))
        );
        let n = r.resolve(&node(), false);
        assert_eq!((n.uid, n.non_root, n.fs_group), (Some(0), false, None));
        let b = r.resolve(&class("x"), true);
        assert_eq!((b.uid, b.fs_group), (Some(0), None));
        // The owner of an etcd data dir: non-root, its group too.
        let etcd = id(SecurityMode::Restricted, Some(998)).resolve(&node(), false);
        assert_eq!(
            (etcd.uid, etcd.gid, etcd.non_root),
            (Some(998), Some(998), true)
        );
        let p = Identity {
            mode: SecurityMode::Platform,
            supplemental_groups: vec![5000],
            ..Identity::default()
        }
        .resolve(&class("x"), false);
        assert_eq!(
            p,
            PodIds {
                uid: None,
                gid: None,
                non_root: true,
                fs_group: None,
                supplemental: vec![5000]
            }
        );
        let root = id(SecurityMode::Root, None).resolve(&class("x"), false);
        assert_eq!(
            (root.uid, root.non_root, root.fs_group),
            (Some(0), false, None)
        );
    }

    #[test]
    fn contradictions_are_refused_with_the_fix() {
        assert!(id(SecurityMode::Platform, Some(1000))
            .validate()
            .unwrap_err()
            .starts_with("--security-context platform leaves the uid and gid to the platform"));
        assert!(id(SecurityMode::Root, Some(1000))
            .validate()
            .unwrap_err()
            .starts_with("--security-context root runs as uid 0"));
        assert!(id(SecurityMode::Restricted, Some(0))
            .validate()
            .unwrap_err()
            .starts_with("--run-as-user 0: for uid 0 use --security-context root"));
        assert!(id(SecurityMode::Restricted, Some(1000)).validate().is_ok());
    }

    #[test]
    fn a_denied_write_names_the_cause_and_the_flag() {
        let err = "the pod ended (Error, exit code 2) without a result: no result in the pod's \
                   log; it ends with: error: directory '/data' is not writable (Permission \
                   denied (os error 13)); choose another with --dir";
        let nfs = explain(
            err.into(),
            &class("nfs.csi.k8s.io"),
            "ReadWriteOnce",
            &Identity::default(),
        );
        // check's "choose another with --dir" is dropped: kube has no --dir.
        let shown = err.strip_suffix("; choose another with --dir").unwrap();
        assert_eq!(
            nfs,
            format!(
                "{shown} (nfs.csi.k8s.io volumes usually ignore fsGroup, so the export's owner \
                 stays and uid 65532 may not write it: use --run-as-user <owner uid> or \
                 --supplemental-group <owner gid> of the export, or --security-context root)"
            )
        );
        let n = explain(err.into(), &node(), "ReadWriteOnce", &Identity::default());
        assert!(n.ends_with(
            "(/var/lib/etcd on the node belongs to another user, and uid 0 without \
             capabilities may not write it: run as its owner with --run-as-user <owner uid> \
             (ls -ln /var/lib/etcd on the node shows it))"
        ));
        let rwx = explain(
            err.into(),
            &class("example.com/x"),
            "ReadWriteMany",
            &Identity::default(),
        );
        assert!(rwx.contains("usually ignore fsGroup"));
        let platform = explain(
            err.into(),
            &class("ebs.csi.aws.com"),
            "ReadWriteOnce",
            &id(SecurityMode::Platform, None),
        );
        assert!(platform.contains("the uid the platform assigned; under OpenShift"));
        // Anything else is left as it was.
        let other = "the pod ended without a result: directory '/data' is not writable \
                     (Read-only file system (os error 30))";
        assert_eq!(
            explain(other.into(), &node(), "", &Identity::default()),
            other
        );
    }
}
