//! What `iogauge kube check` was asked to do, as typed values: the checks to run in each pod,
//! the targets to find, and how every pod is to be built. The CLI fills it in; nothing here
//! talks to a cluster.

use super::configmap::PodFiles;
use crate::input::profiles;
use std::collections::BTreeMap;
use std::time::Duration;

/// The uid and gid the pod runs as on a claim by default (the image's own `USER`); a fresh claim
/// is given to this group with `fsGroup`, so a non-root process can write to its root.
pub(crate) const POD_UID: i64 = 65532;

/// `--security-context`: how the pod's identity is chosen (resolved per target, checked and
/// diagnosed in identity.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum SecurityMode {
    /// uid/gid 65532 (the image's user), fsGroup on fresh filesystem claims: Pod Security
    /// "restricted" for claims.
    #[default]
    Restricted,
    /// No runAsUser, runAsGroup or fsGroup: OpenShift's restricted-v2 SCC assigns them from the
    /// namespace's range (it refuses fixed ones outside it). Still non-root.
    Platform,
    /// uid 0 (capabilities still dropped), for volumes only root can write: Pod Security
    /// "baseline".
    Root,
}

/// The identity flags as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Identity {
    pub mode: SecurityMode,
    pub run_as_user: Option<i64>,
    pub run_as_group: Option<i64>,
    pub supplemental_groups: Vec<i64>,
}

/// Where the volume is mounted in the pod, and so the `--dir` of the check there.
pub(crate) const MOUNT_PATH: &str = "/data";

/// The binary's path inside the image (Containerfile).
pub(crate) const BINARY: &str = "/iogauge";

/// The image without `--image`: this iogauge's own version, as `iogauge kube image export` and
/// `push` name it, so that the pod's document matches the CLI (log.rs checks it).
pub(crate) fn default_image() -> String {
    format!("iogauge:{}", env!("CARGO_PKG_VERSION"))
}

/// The running binary's architecture as Kubernetes labels nodes (`kubernetes.io/arch`, Go's
/// GOARCH names): the image holds this binary, so its pods go to such nodes.
pub(crate) fn node_arch() -> &'static str {
    kube_arch(std::env::consts::ARCH)
}

fn kube_arch(rust: &'static str) -> &'static str {
    match rust {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "arm" => "arm",
        "powerpc64" => "ppc64le",
        "s390x" => "s390x",
        "riscv64" => "riscv64",
        "loongarch64" => "loong64",
        other => other,
    }
}

/// The whole request.
#[derive(Debug, Clone)]
pub(crate) struct KubeRequest {
    /// The profiles as the pod's `check` names them, in order: built-in names, or the paths
    /// in the pod (`/config/<key>`) of the user's profile files.
    pub profiles: Vec<String>,
    /// The user's files, shipped in the run's ConfigMap and mounted at `/config` (none: no
    /// ConfigMap).
    pub files: PodFiles,
    /// `kube preflight`: each node's pod runs this troubleshoot spec instead of `check`.
    pub preflight: Option<super::preflight::PreflightPod>,
    /// `kube fio`: the job each pod runs instead of `check` (then `profiles` is empty).
    pub fio: Option<super::fio_request::FioJob>,
    /// What each pod's `iogauge check` gets besides the profiles.
    pub check: CheckArgs,
    /// What to measure.
    pub targets: TargetRequest,
    /// How every pod is built.
    pub pod: PodOptions,
    /// The namespace for everything created (None: the kubeconfig context's, else `default`).
    pub namespace: Option<String>,
    /// The whole run's limit; also each Job's `activeDeadlineSeconds`.
    pub timeout: Duration,
    /// How long a target may stay unschedulable or unprovisioned before it is given up.
    pub pending_timeout: Duration,
    /// Each target's budget (None: estimated from the profiles; cluster/budget.rs).
    pub target_timeout: Option<Duration>,
    /// How many targets run at once; 0: node targets all at once, shared storage one at a time.
    pub parallel: usize,
    /// A kubeconfig file instead of `KUBECONFIG` / `~/.kube/config`.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// A kubeconfig context instead of the current one.
    pub context: Option<String>,
}

/// Options passed through to `iogauge check` in the pod.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CheckArgs {
    pub scale: Option<f64>,
    pub duration: Option<Duration>,
    /// check's `--size`: the test file size, in bytes.
    pub file_size: Option<u64>,
    pub strict: bool,
    /// The pod's document keeps the per-interval latency histograms (`kube check --intervals`).
    pub intervals: bool,
    /// The profiles' full, published recipes instead of stopping once decided (`--full`).
    pub full: bool,
}

/// The targets, before the cluster is asked about them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TargetRequest {
    /// A fresh claim in each of these storage classes.
    pub storage_classes: Vec<String>,
    /// A fresh claim in every storage class of the cluster.
    pub all_storage_classes: bool,
    /// Existing claims, used as they are and never deleted.
    pub claims: Vec<String>,
    /// A label selector for nodes, each measured in `host_path`.
    pub nodes: Option<String>,
    /// Nodes named one by one (`--node`), each measured in `host_path`.
    pub node_names: Vec<String>,
    /// The node directory measured on each selected node.
    pub host_path: Option<String>,
}

impl TargetRequest {
    /// What the command line must say: a target, Block only for fresh claims, an absolute
    /// host path.
    pub(crate) fn validate(&self, mode: VolumeMode) -> Result<(), String> {
        let fresh = !self.storage_classes.is_empty() || self.all_storage_classes;
        if mode == VolumeMode::Block && !fresh {
            return Err("--volume-mode Block applies to fresh claims: name --storage-class or --all-storage-classes".into());
        }
        if !fresh && self.claims.is_empty() && self.nodes.is_none() && self.node_names.is_empty() {
            return Err("no target: name --storage-class NAME, --all-storage-classes, --claim NAME, or --nodes SELECTOR (or --node NAME) with --host-path DIR".into());
        }
        for (flag, names) in [
            ("--storage-class", &self.storage_classes),
            ("--claim", &self.claims),
            ("--node", &self.node_names),
        ] {
            if let Some(bad) = names.iter().find(|n| !is_object_name(n)) {
                return Err(format!(
                    "{flag} '{bad}': expected a Kubernetes object name (lowercase letters, \
                     digits, '-' and '.', starting and ending with a letter or digit), e.g. fast-ssd"
                ));
            }
        }
        match &self.host_path {
            Some(h) if !h.starts_with('/') => Err(format!(
                "--host-path '{h}': expected an absolute path on the node, e.g. /var/lib/etcd"
            )),
            _ => Ok(()),
        }
    }
}

/// An RFC 1123 label, what a namespace name must be (the API server's `IsDNS1123Label`): 1 to 63
/// lowercase letters, digits and '-', starting and ending with a letter or digit.
fn is_dns_label(n: &str) -> bool {
    let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let b = n.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && ok(b[0])
        && ok(b[b.len() - 1])
        && b.iter().all(|&c| ok(c) || c == b'-')
}

/// A DNS-1123 subdomain, what storage class, claim, service account and secret names must be
/// (`IsDNS1123Subdomain`): at most 253 characters, labels of lowercase letters, digits and '-'
/// joined by '.'.
fn is_object_name(n: &str) -> bool {
    n.len() <= 253 && n.split('.').all(is_dns_label)
}

/// The names the pod's objects refer to, checked as the API server would, so that a dry run
/// never prints a manifest it would refuse: the namespace, the service account and the image
/// pull secrets.
pub(crate) fn validate_names(
    namespace: Option<&str>,
    service_account: Option<&str>,
    pull_secrets: &[String],
) -> Result<(), String> {
    if let Some(ns) = namespace.filter(|n| !is_dns_label(n)) {
        return Err(format!(
            "--namespace '{ns}': expected a namespace name: 1 to 63 lowercase letters, digits \
             and '-', starting and ending with a letter or digit, e.g. storage-tests"
        ));
    }
    let subdomain = "1 to 253 lowercase letters, digits, '-' and '.', each part between dots \
                     starting and ending with a letter or digit";
    if let Some(sa) = service_account.filter(|n| !is_object_name(n)) {
        return Err(format!(
            "--service-account '{sa}': expected a service account name: {subdomain}, e.g. \
             iogauge"
        ));
    }
    if let Some(s) = pull_secrets.iter().find(|n| !is_object_name(n)) {
        return Err(format!(
            "--image-pull-secret '{s}': expected a secret name: {subdomain}, e.g. regcred"
        ));
    }
    Ok(())
}

/// The profiles each pod runs: the built-in ones named, or the default suite (without
/// small-files on a raw device, which has no files to create). A profile file (a path, or a name
/// ending in .yaml/.yml, as `check` takes them) is read and validated here, as `check` would,
/// and added to `files`; the pod then names it by its path there.
pub(crate) fn pod_profiles(
    given: &[String],
    mode: VolumeMode,
    files: &mut PodFiles,
) -> Result<Vec<String>, String> {
    let block = mode == VolumeMode::Block;
    let names: Vec<String> = if given.is_empty() {
        profiles::DEFAULT_SUITE
            .iter()
            .filter(|p| !(block && **p == "small-files"))
            .map(|s| s.to_string())
            .collect()
    } else {
        given.to_vec()
    };
    if block && names.iter().any(|p| p == "small-files") {
        return Err("small-files needs a filesystem, and --volume-mode Block gives the pod a raw device; leave it out or use --volume-mode Filesystem".into());
    }
    let mut out = Vec::new();
    for p in &names {
        if !profiles::is_path(std::ffi::OsStr::new(p)) {
            profiles::get(p)?;
            out.push(p.clone());
            continue;
        }
        let file = std::fs::File::open(p).map_err(|e| format!("cannot read profile '{p}': {e}"))?;
        let text = crate::input::read_capped(
            file,
            profiles::MAX_PROFILE_BYTES,
            &format!("profile '{p}'"),
        )?;
        let profile = profiles::from_text(&text, p)?;
        if block && profile.small_files(&profiles::Tuning::default()).is_some() {
            return Err(format!(
                "profile '{p}' creates small files, which needs a filesystem, and --volume-mode \
                 Block gives the pod a raw device; leave it out or use --volume-mode Filesystem"
            ));
        }
        out.push(files.add(p, text)?);
    }
    Ok(out)
}

/// Resource requests or limits from (flag, resource, value) triples: Kubernetes quantities, or
/// `none` to leave one out.
pub(crate) fn quantities(
    pairs: [(&str, &str, &str); 2],
) -> Result<BTreeMap<String, String>, String> {
    let mut m = BTreeMap::new();
    for (flag, key, v) in pairs {
        if v == "none" {
            continue;
        }
        if !super::quantity::is_resource_quantity(v) {
            return Err(format!(
                "--{flag} '{v}': expected a Kubernetes quantity such as 500m or 256Mi, or 'none'"
            ));
        }
        m.insert(key.to_string(), v.to_string());
    }
    Ok(m)
}

/// How a fresh claim's volume is given to the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum VolumeMode {
    /// A mounted filesystem: every profile runs, in `/data`.
    #[default]
    Filesystem,
    /// A raw block device at [`DEVICE_PATH`]: the fio profiles run on it (`check --device`).
    Block,
}

impl VolumeMode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            VolumeMode::Filesystem => "Filesystem",
            VolumeMode::Block => "Block",
        }
    }
}

/// Where a Block claim's device appears in the pod.
pub(crate) const DEVICE_PATH: &str = "/dev/iogauge";

/// A toleration as given on the command line (`key=value:Effect`, `key:Effect`, `key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Toleration {
    pub key: String,
    pub value: Option<String>,
    pub effect: Option<String>,
}

impl std::str::FromStr for Toleration {
    type Err = String;

    fn from_str(v: &str) -> Result<Self, String> {
        const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
        let (kv, effect) = match v.rsplit_once(':') {
            Some((kv, e)) => (kv, Some(e)),
            None => (v, None),
        };
        if let Some(e) = effect {
            if !EFFECTS.contains(&e) {
                return Err(format!(
                    "'{v}': the effect '{e}' is not one of {}; e.g. dedicated=storage:NoSchedule",
                    EFFECTS.join(", ")
                ));
            }
        }
        let (key, value) = match kv.split_once('=') {
            Some((k, val)) => (k, Some(val.to_string())),
            None => (kv, None),
        };
        if key.is_empty() {
            return Err(format!(
                "'{v}': expected key=value:Effect, key:Effect or key, e.g. dedicated=storage:NoSchedule"
            ));
        }
        Ok(Toleration {
            key: key.to_string(),
            value,
            effect: effect.map(str::to_string),
        })
    }
}

/// The taints `--tolerate-control-plane` tolerates: today's name and the one before 1.24.
pub(crate) const CONTROL_PLANE_TAINTS: [&str; 2] = [
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
];

/// How every pod is built.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PodOptions {
    /// The image holding the iogauge binary at `/iogauge`.
    pub image: String,
    /// No `--image` was given: `image` is [`default_image`], which the cluster may not have.
    pub image_is_default: bool,
    /// `Always`, `IfNotPresent` or `Never`.
    pub image_pull_policy: String,
    pub image_pull_secrets: Vec<String>,
    /// Added to every pod's nodeSelector.
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    pub tolerate_control_plane: bool,
    /// Resource requests (`cpu`, `memory`) as Kubernetes quantities.
    pub requests: BTreeMap<String, String>,
    /// Resource limits.
    pub limits: BTreeMap<String, String>,
    /// None: the namespace's default account (the pod's token is not mounted either way).
    pub service_account: Option<String>,
    /// The claim size for fresh claims (None: sized from the profiles).
    pub claim_size: Option<u64>,
    pub access_mode: String,
    pub volume_mode: VolumeMode,
    /// Extra labels on everything created.
    pub labels: BTreeMap<String, String>,
    /// Who the pod runs as (`--security-context`, `--run-as-user`, …).
    pub identity: Identity,
}

impl Default for PodOptions {
    fn default() -> Self {
        PodOptions {
            image: String::new(),
            image_is_default: false,
            image_pull_policy: "IfNotPresent".into(),
            image_pull_secrets: Vec::new(),
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            tolerate_control_plane: false,
            // Small: iogauge needs a few tens of MiB; no CPU limit, because CFS throttling
            // would show up as I/O latency.
            requests: BTreeMap::from([
                ("cpu".to_string(), "100m".to_string()),
                ("memory".to_string(), "64Mi".to_string()),
            ]),
            limits: BTreeMap::from([("memory".to_string(), "512Mi".to_string())]),
            service_account: None,
            claim_size: None,
            access_mode: "ReadWriteOnce".into(),
            volume_mode: VolumeMode::Filesystem,
            labels: BTreeMap::new(),
            identity: Identity::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn tolerations_parse_as_kubectl_taint_writes_them() {
        let t: Toleration = "dedicated=storage:NoSchedule".parse().unwrap();
        assert_eq!(
            t,
            Toleration {
                key: "dedicated".into(),
                value: Some("storage".into()),
                effect: Some("NoSchedule".into())
            }
        );
        let t: Toleration = "node-role.kubernetes.io/control-plane:NoSchedule"
            .parse()
            .unwrap();
        assert_eq!(t.key, "node-role.kubernetes.io/control-plane");
        assert_eq!(t.value, None);
        let t: Toleration = "gpu".parse().unwrap();
        assert_eq!((t.value, t.effect), (None, None));
        assert_eq!(
            "a=b:NoRun".parse::<Toleration>().unwrap_err(),
            "'a=b:NoRun': the effect 'NoRun' is not one of NoSchedule, PreferNoSchedule, NoExecute; e.g. dedicated=storage:NoSchedule"
        );
        assert!("=b:NoSchedule".parse::<Toleration>().is_err());
    }

    #[test]
    fn architectures_are_named_as_nodes_label_them() {
        assert_eq!(kube_arch("x86_64"), "amd64");
        assert_eq!(kube_arch("aarch64"), "arm64");
        assert_eq!(kube_arch("powerpc64"), "ppc64le");
        assert_eq!(
            default_image(),
            format!("iogauge:{}", env!("CARGO_PKG_VERSION"))
        );
    }
}
