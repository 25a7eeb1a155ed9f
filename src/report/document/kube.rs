//! `iogauge kube check|fio|preflight`'s result document: every target's outcome with the
//! document its pod printed. Re-exported by `report::document` (its parent), where the other documents are.

use super::{known_schema_version, CheckDocument, PreflightDocument, Summary};
// For the doc links only.
#[cfg(doc)]
use super::SCHEMA_VERSION;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `iogauge kube check`'s result: the check document of every target's pod.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KubeDocument {
    /// Layout version of this document ([`SCHEMA_VERSION`]).
    #[serde(deserialize_with = "known_schema_version")]
    pub schema_version: u32,
    /// The iogauge version that ran the controller.
    pub iogauge: String,
    /// The run's id, in every created object's `iogauge.dev/run` label.
    pub run_id: String,
    /// The API server's address.
    pub cluster: String,
    /// The namespace everything was created in.
    pub namespace: String,
    /// The profiles every target ran, in order.
    pub profiles: Vec<String>,
    /// One entry per target, in the order they were found.
    pub targets: Vec<TargetOutcome>,
    /// Targets whose metric is far from the median of their peers (node targets among nodes,
    /// storage classes among classes); empty with fewer than 3 peers. Absent in older documents.
    #[serde(default)]
    pub outliers: Vec<Outlier>,
    /// How many profiles ended each way, over every target (a target that could not run counts
    /// each of its profiles as could-not-run).
    pub summary: Summary,
}

/// What was measured for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetOutcome {
    /// The target in words: `storage class fast-ssd`, `claim etcd-data`, `node cp-1`.
    pub target: String,
    /// What kind of target.
    pub kind: TargetType,
    /// The storage class of the claim measured.
    pub storage_class: Option<String>,
    /// That storage class's provisioner (`ebs.csi.aws.com`).
    pub provisioner: Option<String>,
    /// That storage class's `volumeBindingMode`.
    pub volume_binding_mode: Option<String>,
    /// The claim measured (fresh, or the existing one named).
    pub claim: Option<String>,
    /// The claim's size, as a Kubernetes quantity.
    pub claim_size: Option<String>,
    /// The capacity the claim was bound with (`status.capacity`), which a provisioner may round
    /// up from the size asked for. Absent in older documents.
    #[serde(default)]
    pub bound_capacity: Option<String>,
    /// The node the pod ran on.
    pub node: Option<String>,
    /// For a node target, the node's directory measured.
    pub host_path: Option<String>,
    /// The node's `topology.kubernetes.io/zone` label. Absent in older documents.
    #[serde(default)]
    pub zone: Option<String>,
    /// The node's `topology.kubernetes.io/region` label.
    #[serde(default)]
    pub region: Option<String>,
    /// The node's `node.kubernetes.io/instance-type` label.
    #[serde(default)]
    pub instance_type: Option<String>,
    /// What may make this target's numbers unrepresentative (a small claim on a provisioner
    /// whose performance scales with size). Absent in older documents.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The Job that ran the check.
    pub job: String,
    /// How the target ended.
    pub status: TargetStatus,
    /// Why it did not complete (one line, from the pod's conditions and events).
    pub reason: Option<String>,
    /// The check document the pod printed; its `context` is the pod's view of the volume.
    pub check: Option<CheckDocument>,
    /// For `kube preflight`, the preflight document the node's pod printed: its collectors'
    /// results (the analyzers are evaluated over every node's). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preflight: Option<PreflightDocument>,
    /// `kube fio`: the fio document the pod printed, as `iogauge fio --output-format=json`
    /// prints it on a host. Absent for `kube check` and in older documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio: Option<serde_json::Value>,
    /// `kube fio`: the pod's text output of the same run (`iogauge fio`'s normal output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_text: Option<String>,
}

/// One target's metric far from the median of its peers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Outlier {
    /// The target's name: the node or the storage class.
    pub target: String,
    /// The profile that measured it.
    pub profile: String,
    /// The metric's name (`sync_p99`).
    pub metric: String,
    /// The target's value, in the metric's unit.
    pub value: f64,
    /// The median of the peers' values (the target's included).
    pub median: f64,
    /// `value / median`.
    pub ratio: f64,
    /// How many targets were compared.
    pub peers: usize,
    /// In words: `cp-3: etcd p99 fdatasync latency 6.1× the median of 5 nodes`.
    pub message: String,
}

/// What kind of thing a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetType {
    /// A fresh claim in a storage class, deleted afterwards.
    StorageClass,
    /// An existing claim, left as it was.
    Claim,
    /// A node's directory.
    Node,
}

/// How a target ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetStatus {
    /// The pod ran the check and printed its document (whatever the verdicts).
    Completed,
    /// The pod did not start, or ended without a result.
    Failed,
    /// The run's `--timeout` passed first.
    TimedOut,
    /// A signal stopped the run while this target ran.
    Interrupted,
    /// Not started: the run was stopped or timed out before.
    Skipped,
}
