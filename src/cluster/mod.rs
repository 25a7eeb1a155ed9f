//! Kubernetes mode (`iogauge kube`): the same checks, run by a Job per target (a storage class's
//! fresh claim, or a node's directory), with the results read back from the pods' logs. The only
//! async code in iogauge lives here, on a tokio runtime this module owns.

pub(crate) mod budget;
pub(crate) mod canary;
pub(crate) mod classes;
pub(crate) mod cleanup;
pub(crate) mod client;
pub(crate) mod configmap;
pub(crate) mod diagnose;
pub(crate) mod disruption;
pub(crate) mod dry_run;
pub(crate) mod fio_request;
pub(crate) mod fleet;
pub(crate) mod identity;
pub(crate) mod kubeconfig;
pub(crate) mod labels;
pub mod log;
pub(crate) mod manifests;
pub(crate) mod node_names;
mod pending;
pub(crate) mod plan;
pub(crate) mod pod_document;
pub(crate) mod poll;
pub mod preflight;
pub(crate) mod quantity;
pub(crate) mod reclaim;
pub(crate) mod request;
pub(crate) mod run;
pub(crate) mod targets;

/// Why a run could not start; nothing was created.
#[derive(Debug)]
pub(crate) enum KubeError {
    /// The request is wrong (exit 2): an unknown storage class, no matching node.
    Usage(String),
    /// The cluster could not be asked (exit 1).
    Cluster(String),
}

impl std::fmt::Display for KubeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KubeError::Usage(s) | KubeError::Cluster(s) => f.write_str(s),
        }
    }
}
