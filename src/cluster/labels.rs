//! The labels on everything a run creates (Jobs, claims, pods, the run's ConfigMap): a leaf, so
//! that every file making objects can use them.

/// On everything iogauge creates; `iogauge kube cleanup` deletes by it.
pub(crate) const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "iogauge");
/// The run's id, so that one run's objects can be told from another's.
pub(crate) const RUN_LABEL: &str = "iogauge.dev/run";
/// The canary's name (`kube canary --name`) on every object a canary's install made: such
/// objects are the canary's alone (`kube cleanup` never touches them).
pub(crate) const CANARY_LABEL: &str = "iogauge.dev/canary";
