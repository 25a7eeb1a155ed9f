//! Kubernetes mode (`iogauge kube`): the same checks, run by a Job per target (a storage class's
//! fresh claim, or a node's directory), with the results read back from the pods' logs. The only
//! async code in iogauge lives here, on a tokio runtime this module owns.

pub(crate) mod cleanup;
pub(crate) mod client;
pub(crate) mod diagnose;
pub mod log;
pub(crate) mod manifests;
pub(crate) mod quantity;
pub(crate) mod request;
pub(crate) mod run;
pub(crate) mod targets;
