//! How every pod is built and how long a run may take: the same for `kube check`, `kube fio`
//! and `kube preflight`.

use super::*;

/// How every pod is built: the same for `kube check`, `kube fio` and `kube preflight`.
#[derive(clap::Args, Debug)]
pub(super) struct PodFlags {
    /// The image with iogauge at /iogauge [default: iogauge:<this version>, made by `iogauge
    /// kube image export` or `push`]
    #[arg(
        long,
        env = "IOGAUGE_IMAGE",
        value_name = "IMAGE",
        help_heading = "Pods"
    )]
    pub(super) image: Option<String>,
    /// The image pull policy
    #[arg(long, value_name = "POLICY", default_value = "IfNotPresent", value_parser = ["Always", "IfNotPresent", "Never"], help_heading = "Pods")]
    pub(super) image_pull_policy: String,
    /// A secret for pulling the image from a private registry (repeatable)
    #[arg(long = "image-pull-secret", value_name = "NAME", help_heading = "Pods")]
    pub(super) image_pull_secrets: Vec<String>,
    /// Only run on nodes with this label, key=value (repeatable)
    #[arg(long = "node-selector", value_name = "KEY=VALUE", value_parser = key_value, help_heading = "Pods")]
    pub(super) node_selector: Vec<(String, String)>,
    /// Tolerate a taint: key=value:Effect, key:Effect or key (repeatable)
    #[arg(long = "toleration", value_name = "TAINT", help_heading = "Pods")]
    pub(super) tolerations: Vec<Toleration>,
    /// Tolerate the control-plane taints (node-role.kubernetes.io/control-plane and /master)
    #[arg(long, help_heading = "Pods")]
    pub(super) tolerate_control_plane: bool,
    /// CPU request ('none' for no request)
    #[arg(long, value_name = "Q", default_value = "100m", help_heading = "Pods")]
    pub(super) cpu_request: String,
    /// Memory request ('none' for no request)
    #[arg(long, value_name = "Q", default_value = "64Mi", help_heading = "Pods")]
    pub(super) memory_request: String,
    /// CPU limit; none by default, because CPU throttling shows up as I/O latency
    #[arg(long, value_name = "Q", default_value = "none", help_heading = "Pods")]
    pub(super) cpu_limit: String,
    /// Memory limit ('none' for no limit)
    #[arg(long, value_name = "Q", default_value = "512Mi", help_heading = "Pods")]
    pub(super) memory_limit: String,
    /// The pod's service account [default: the namespace's default; its token is never mounted]
    #[arg(long, value_name = "NAME", help_heading = "Pods")]
    pub(super) service_account: Option<String>,
    /// Who the pod runs as: restricted (uid/gid 65532, fsGroup on fresh claims), platform
    /// (uid, gid and fsGroup left to the platform, e.g. OpenShift's SCCs) or root (uid 0, for
    /// volumes only root can write; needs Pod Security baseline)
    #[arg(long, value_name = "MODE", value_enum, default_value_t = SecurityContext::Restricted, help_heading = "Pods")]
    pub(super) security_context: SecurityContext,
    /// Run as this uid, e.g. the owner of an NFS export or of a node's etcd directory
    #[arg(long, value_name = "UID", value_parser = id_number, help_heading = "Pods")]
    pub(super) run_as_user: Option<i64>,
    /// Run as this gid (also the fsGroup of fresh claims) [default: --run-as-user's, else 65532]
    #[arg(long, value_name = "GID", value_parser = id_number, help_heading = "Pods")]
    pub(super) run_as_group: Option<i64>,
    /// Also a member of this group, e.g. the group that may write a shared volume (repeatable)
    #[arg(long = "supplemental-group", value_name = "GID", value_parser = id_number, help_heading = "Pods")]
    pub(super) supplemental_groups: Vec<i64>,
}

/// How long the run and each target may take, and how many targets run at once: the same for
/// `kube check`, `kube fio` and `kube preflight`.
#[derive(clap::Args, Debug)]
pub(super) struct RunLimits {
    /// Give up on the whole run after D; also each Job's activeDeadlineSeconds
    #[arg(long, value_name = "D", default_value = "30m", value_parser = parse_duration, help_heading = "Run")]
    pub(super) timeout: Duration,
    /// Give up on one target after D [default: twice its estimate from the profiles, plus 2m
    /// to start]; also its Job's activeDeadlineSeconds
    #[arg(long, value_name = "D", value_parser = parse_duration, help_heading = "Run")]
    pub(super) target_timeout: Option<Duration>,
    /// Give up on a target that stays unschedulable or unprovisioned for D
    #[arg(long, value_name = "D", default_value = "60s", value_parser = parse_duration, help_heading = "Run")]
    pub(super) pending_timeout: Duration,
    /// How many targets run at once [default: node targets all at once (each its own disk),
    /// storage classes and claims one at a time (shared storage would measure itself)]
    #[arg(long, value_name = "N", value_parser = parse_parallel, help_heading = "Run")]
    pub(super) parallel: Option<u16>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(super) enum SecurityContext {
    Restricted,
    Platform,
    Root,
}

impl PodFlags {
    /// The identity flags, checked against each other (exit 2 with the fix).
    pub(super) fn identity(&self) -> Result<Identity, String> {
        let id = Identity {
            mode: match self.security_context {
                SecurityContext::Restricted => SecurityMode::Restricted,
                SecurityContext::Platform => SecurityMode::Platform,
                SecurityContext::Root => SecurityMode::Root,
            },
            run_as_user: self.run_as_user,
            run_as_group: self.run_as_group,
            supplemental_groups: self.supplemental_groups.clone(),
        };
        id.validate()?;
        Ok(id)
    }
}

/// A uid or gid as Kubernetes takes it: 0 to 2147483647.
pub(super) fn id_number(v: &str) -> Result<i64, String> {
    v.parse::<i64>()
        .ok()
        .filter(|n| (0..=i64::from(i32::MAX)).contains(n))
        .ok_or_else(|| format!("'{v}': expected a numeric id from 0 to 2147483647, e.g. 1000"))
}

/// `--parallel`: at least one target at a time.
fn parse_parallel(v: &str) -> Result<u16, String> {
    v.parse::<u16>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| format!("'{v}': expected how many targets run at once, 1 to 65535, e.g. 2"))
}
