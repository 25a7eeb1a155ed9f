//! The objects a run creates, as typed Kubernetes manifests: for each target one Job whose pod
//! runs `iogauge check` on the volume, and for a storage class a fresh claim owned by that Job
//! (so that the Job's deletion, or its `ttlSecondsAfterFinished`, takes the claim with it even
//! when iogauge itself was killed). Pure functions: `--dry-run` prints exactly these.

use super::identity::PodIds;
use super::request::{
    node_arch, KubeRequest, PodOptions, Toleration, VolumeMode, BINARY, CONTROL_PLANE_TAINTS,
    DEVICE_PATH, MOUNT_PATH,
};
use super::targets::{Target, TargetKind};
use k8s_openapi::api::batch::v1::{
    Job, JobSpec, PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, HostPathVolumeSource, LocalObjectReference, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PersistentVolumeClaimVolumeSource, PodSecurityContext, PodSpec,
    PodTemplateSpec, ResourceRequirements, SeccompProfile, SecurityContext,
    Toleration as K8sToleration, Volume, VolumeDevice, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use std::collections::BTreeMap;

pub(crate) use super::labels::{MANAGED_BY, RUN_LABEL};
/// The target's slug within the run.
pub(crate) const TARGET_LABEL: &str = "iogauge.dev/target";
/// The container's name in every pod.
pub(crate) const CONTAINER: &str = "iogauge";
/// How long a finished Job (and through it the claim) stays if iogauge could not delete it.
pub(crate) const TTL_AFTER_FINISHED: i32 = 600;

/// The label selector for every object of a run (or of every run, with None).
pub(crate) fn selector(run: Option<&str>) -> String {
    match run {
        Some(r) => format!("{}={},{RUN_LABEL}={r}", MANAGED_BY.0, MANAGED_BY.1),
        None => format!("{}={}", MANAGED_BY.0, MANAGED_BY.1),
    }
}

/// The name of a target's Job and claim.
pub(crate) fn object_name(run: &str, target: &Target) -> String {
    format!("iogauge-{run}-{}", target.slug)
}

fn labels(req: &KubeRequest, run: &str, target: &Target) -> BTreeMap<String, String> {
    let mut l = req.pod.labels.clone();
    l.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    l.insert("app.kubernetes.io/name".into(), "iogauge".into());
    l.insert(RUN_LABEL.into(), run.into());
    l.insert(TARGET_LABEL.into(), target.slug.clone());
    l
}

fn meta(req: &KubeRequest, run: &str, target: &Target, namespace: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(object_name(run, target)),
        namespace: Some(namespace.into()),
        labels: Some(labels(req, run, target)),
        annotations: Some(BTreeMap::from([(
            "iogauge.dev/target".to_string(),
            target.describe(),
        )])),
        ..ObjectMeta::default()
    }
}

/// Whether `target` is a fresh claim given to the pod as a raw block device.
pub(crate) fn is_block(req: &KubeRequest, target: &Target) -> bool {
    req.pod.volume_mode == VolumeMode::Block
        && matches!(target.kind, TargetKind::StorageClass { .. })
}

/// The pod's command line after the binary: `check PROFILE… --dir /data --format kube-frames`,
/// with the file capped to fit the volume when the profiles' largest file would not; for a
/// Block claim (which iogauge created, so nothing on it is anyone's), `--device` with
/// `--allow-overwrite`, and check caps the files at the device's size itself.
pub(crate) fn check_args(
    req: &KubeRequest,
    target: &Target,
    max_file: Option<u64>,
    footprint: u64,
) -> Vec<String> {
    let block = is_block(req, target);
    let mut a = vec!["check".to_string()];
    a.extend(req.profiles.iter().cloned());
    if block {
        a.extend(["--device", DEVICE_PATH, "--allow-overwrite"].map(String::from));
    } else {
        a.extend(["--dir", MOUNT_PATH].map(String::from));
    }
    a.extend(["--format", "kube-frames"].map(String::from));
    if req.check.intervals {
        a.push("--intervals".into());
    }
    if let Some(s) = req.check.scale {
        a.push(format!("--scale={s}"));
    }
    if let Some(d) = req.check.duration {
        a.push(format!("--duration={}ms", d.as_millis()));
    }
    if let Some(s) = req.check.file_size {
        a.push(format!("--size={s}"));
    }
    if let Some(m) = max_file.filter(|m| *m < footprint && !block) {
        a.push(format!("--max-size={m}"));
    }
    if req.check.strict {
        a.push("--strict".into());
    }
    if req.check.full {
        a.push("--full".into());
    }
    a
}

fn quantities(m: &BTreeMap<String, String>) -> Option<BTreeMap<String, Quantity>> {
    (!m.is_empty()).then(|| {
        m.iter()
            .map(|(k, v)| (k.clone(), Quantity(v.clone())))
            .collect()
    })
}

fn toleration(t: &Toleration) -> K8sToleration {
    K8sToleration {
        key: Some(t.key.clone()),
        operator: Some(if t.value.is_some() { "Equal" } else { "Exists" }.into()),
        value: t.value.clone(),
        effect: t.effect.clone(),
        ..K8sToleration::default()
    }
}

/// The Job for `target`. `footprint` is the largest file the profiles write, for capping.
pub(crate) fn job(
    req: &KubeRequest,
    run: &str,
    target: &Target,
    namespace: &str,
    footprint: u64,
) -> Job {
    let name = object_name(run, target);
    let mut node_selector = node_selector(&req.pod);
    let tolerations = tolerations(&req.pod);
    // Who the pod runs as: by default uid 65532 with fsGroup on a fresh claim, uid 0 on a node
    // directory or a raw device (root's); see identity.rs for the modes.
    let block = is_block(req, target);
    let ids = req.pod.identity.resolve(&target.kind, block);
    let volume = match &target.kind {
        TargetKind::Node {
            hostname,
            host_path,
            ..
        } => {
            // Selected by label, never by nodeName: the scheduler still checks taints and
            // resources, and says why when it cannot place the pod.
            node_selector.insert("kubernetes.io/hostname".into(), hostname.clone());
            Volume {
                name: "data".into(),
                host_path: Some(HostPathVolumeSource {
                    path: host_path.clone(),
                    type_: Some("Directory".into()),
                }),
                ..Volume::default()
            }
        }
        TargetKind::Claim { name: claim, .. } => claim_volume(claim),
        TargetKind::StorageClass { .. } => claim_volume(&name),
    };
    let container = Container {
        name: CONTAINER.into(),
        image: Some(req.pod.image.clone()),
        image_pull_policy: Some(req.pod.image_pull_policy.clone()),
        command: Some(vec![BINARY.into()]),
        args: Some(match &req.fio {
            Some(f) => std::iter::once("fio".to_string())
                .chain(f.args.iter().cloned())
                .collect(),
            None => check_args(req, target, target.max_file(), footprint),
        }),
        // kube fio: the job's relative directory and file names land on the volume.
        working_dir: req.fio.as_ref().map(|_| MOUNT_PATH.to_string()),
        resources: Some(resources(&req.pod)),
        security_context: Some(container_security(&ids)),
        volume_mounts: {
            let mut m: Vec<VolumeMount> = Vec::new();
            if !block {
                m.push(VolumeMount {
                    name: "data".into(),
                    mount_path: MOUNT_PATH.into(),
                    ..VolumeMount::default()
                });
            }
            if !req.files.is_empty() {
                m.push(super::configmap::mount());
            }
            (!m.is_empty()).then_some(m)
        },
        volume_devices: block.then(|| {
            vec![VolumeDevice {
                name: "data".into(),
                device_path: DEVICE_PATH.into(),
            }]
        }),
        // A pod that fails before printing its result still says why in its status.
        termination_message_policy: Some("FallbackToLogsOnError".into()),
        ..Container::default()
    };
    let mut pod = PodSpec {
        restart_policy: Some("Never".into()),
        // The pod never talks to the API server.
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        service_account_name: req.pod.service_account.clone(),
        node_selector: Some(node_selector),
        tolerations,
        image_pull_secrets: pull_secrets(&req.pod),
        security_context: Some(pod_security(&ids)),
        containers: vec![container],
        volumes: Some(if req.files.is_empty() {
            vec![volume]
        } else {
            vec![volume, super::configmap::volume(run)]
        }),
        ..PodSpec::default()
    };
    if let Some(p) = &req.preflight {
        super::preflight::into_pod(p, &mut pod);
    }
    let meta = meta(req, run, target, namespace);
    Job {
        spec: Some(JobSpec {
            // No retry by the Job for a failed check, but a disrupted pod (evicted, preempted,
            // drained) is replaced and not counted; the controller caps how often
            // (run.rs DISRUPTIONS). Needs restartPolicy Never; GA in Kubernetes 1.31, on by
            // default since 1.26.
            backoff_limit: Some(0),
            pod_failure_policy: Some(pod_failure_policy()),
            active_deadline_seconds: Some(req.timeout.as_secs().max(1) as i64),
            ttl_seconds_after_finished: Some(TTL_AFTER_FINISHED),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: meta.labels.clone(),
                    annotations: meta.annotations.clone(),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..JobSpec::default()
        }),
        metadata: meta,
        ..Job::default()
    }
}

/// The nodeSelector every pod starts from: `--node-selector`, then the binary's OS and
/// architecture. The image holds a Linux binary of this build's architecture: on another node it
/// could not start (exec format error), so the scheduler says so instead. A `--node-selector` of
/// the same keys (an image built for another architecture) wins.
pub(crate) fn node_selector(pod: &PodOptions) -> BTreeMap<String, String> {
    let mut node_selector = pod.node_selector.clone();
    for (key, value) in [
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", node_arch()),
    ] {
        node_selector
            .entry(key.into())
            .or_insert_with(|| value.into());
    }
    node_selector
}

/// `--toleration` and `--tolerate-control-plane` as the pod's tolerations (None: none).
pub(crate) fn tolerations(pod: &PodOptions) -> Option<Vec<K8sToleration>> {
    let mut tolerations: Vec<K8sToleration> = pod.tolerations.iter().map(toleration).collect();
    if pod.tolerate_control_plane {
        for key in CONTROL_PLANE_TAINTS {
            tolerations.push(K8sToleration {
                key: Some(key.into()),
                operator: Some("Exists".into()),
                effect: Some("NoSchedule".into()),
                ..K8sToleration::default()
            });
        }
    }
    (!tolerations.is_empty()).then_some(tolerations)
}

/// The container's requests and limits.
pub(crate) fn resources(pod: &PodOptions) -> ResourceRequirements {
    ResourceRequirements {
        requests: quantities(&pod.requests),
        limits: quantities(&pod.limits),
        ..ResourceRequirements::default()
    }
}

/// `--image-pull-secret` as the pod's imagePullSecrets (None: none).
pub(crate) fn pull_secrets(pod: &PodOptions) -> Option<Vec<LocalObjectReference>> {
    (!pod.image_pull_secrets.is_empty()).then(|| {
        pod.image_pull_secrets
            .iter()
            .map(|s| LocalObjectReference { name: s.clone() })
            .collect()
    })
}

/// The container's restrictions: every mode keeps these, whoever it runs as.
pub(crate) fn container_security(ids: &PodIds) -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(ids.non_root),
        run_as_user: ids.uid,
        run_as_group: ids.gid,
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            ..Capabilities::default()
        }),
        seccomp_profile: Some(runtime_default()),
        ..SecurityContext::default()
    }
}

/// The pod's identity and seccomp profile.
pub(crate) fn pod_security(ids: &PodIds) -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(ids.non_root),
        run_as_user: ids.uid,
        run_as_group: ids.gid,
        fs_group: ids.fs_group,
        fs_group_change_policy: ids.fs_group.map(|_| "OnRootMismatch".into()),
        supplemental_groups: (!ids.supplemental.is_empty()).then(|| ids.supplemental.clone()),
        seccomp_profile: Some(runtime_default()),
        ..PodSecurityContext::default()
    }
}

/// Ignore disruptions (DisruptionTarget), fail the Job at once on any other non-zero exit: the
/// pod exits 0 whenever it printed a document (1 when a signal stopped it, so that a disrupted
/// pod is replaced), so anything else is a broken run.
fn pod_failure_policy() -> PodFailurePolicy {
    PodFailurePolicy {
        rules: vec![
            PodFailurePolicyRule {
                action: "Ignore".into(),
                on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                    type_: "DisruptionTarget".into(),
                    status: "True".into(),
                }]),
                ..PodFailurePolicyRule::default()
            },
            PodFailurePolicyRule {
                action: "FailJob".into(),
                on_exit_codes: Some(PodFailurePolicyOnExitCodesRequirement {
                    container_name: Some(CONTAINER.into()),
                    operator: "NotIn".into(),
                    values: vec![0],
                }),
                ..PodFailurePolicyRule::default()
            },
        ],
    }
}

fn runtime_default() -> SeccompProfile {
    SeccompProfile {
        type_: "RuntimeDefault".into(),
        ..SeccompProfile::default()
    }
}

fn claim_volume(claim: &str) -> Volume {
    Volume {
        name: "data".into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: claim.into(),
            read_only: None,
        }),
        ..Volume::default()
    }
}

/// The fresh claim for a storage-class target (None for other targets). `owner` is the created
/// Job (with its uid); without it (a dry run) the claim has no owner reference.
pub(crate) fn claim(
    req: &KubeRequest,
    run: &str,
    target: &Target,
    namespace: &str,
    owner: Option<&Job>,
) -> Option<PersistentVolumeClaim> {
    let TargetKind::StorageClass {
        class, claim_bytes, ..
    } = &target.kind
    else {
        return None;
    };
    let mut metadata = meta(req, run, target, namespace);
    metadata.owner_references = owner.and_then(|j| {
        Some(vec![OwnerReference {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            name: j.metadata.name.clone()?,
            uid: j.metadata.uid.clone()?,
            ..OwnerReference::default()
        }])
    });
    Some(PersistentVolumeClaim {
        metadata,
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec![req.pod.access_mode.clone()]),
            storage_class_name: Some(class.clone()),
            volume_mode: Some(req.pod.volume_mode.name().into()),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    Quantity(super::quantity::format_bytes(*claim_bytes)),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    })
}
