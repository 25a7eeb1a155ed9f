//! The API calls a run makes, each turned into iogauge's words on failure: a thin layer over
//! `kube::Api` so that the controller reads as a sequence of steps. Every call is a plain GET,
//! POST or DELETE (no watch), and one merge PATCH of a Retain volume's reclaimPolicy, which is
//! what the RBAC in deploy/rbac.yaml grants.

use super::kubeconfig;
use super::KubeError;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{
    ConfigMap, Event, Node, PersistentVolume, PersistentVolumeClaim, Pod,
};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, DeleteParams, ListParams, LogParams, Patch, PatchParams, PostParams};
use kube::config::KubeConfigOptions;
use kube::{Client, Config};
use std::path::Path;
use std::time::Duration;

/// A connection to one cluster, in one namespace.
pub(crate) struct Cluster {
    client: Client,
    pub namespace: String,
    /// The API server's address, for the document.
    pub url: String,
}

/// How much of a message from the cluster goes into a line or a `reason`.
const MESSAGE_CAP: usize = 500;

/// A message from the cluster, cut to [`MESSAGE_CAP`] characters.
fn cap(s: &str) -> String {
    match s.char_indices().nth(MESSAGE_CAP) {
        Some((i, _)) => format!("{}… (cut)", &s[..i]),
        None => s.to_string(),
    }
}

/// An API call's failure in words, with the fix for the common ones.
pub(crate) fn failed(what: &str, e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => refused(what, &s.message),
        kube::Error::Api(s) => format!("{what}: {} ({})", cap(&s.message), s.code),
        e => format!("{what}: {}", unreachable_cause(&e)),
    }
}

/// A 403 in words: a ResourceQuota or LimitRange refusal (admission: the request was allowed,
/// the object is too big or too many), a missing RBAC permission, or another admission policy.
/// Only the RBAC case points at deploy/rbac.yaml.
fn refused(what: &str, message: &str) -> String {
    let msg = cap(message);
    if message.contains("exceeded quota:") {
        // `exceeded quota: NAME, requested: R=Q, used: …, limited: …` (ResourceQuota admission).
        let requested = message
            .split_once("requested: ")
            .map_or("", |(_, r)| r.split(", used:").next().unwrap_or(""));
        return format!(
            "{what}: refused by a ResourceQuota of the namespace: {msg}; {} or ask an \
             administrator to raise the quota (kubectl describe resourcequota)",
            quota_fix(requested)
        );
    }
    if message.contains(" usage per ") || message.contains("limit to request ratio per") {
        // LimitRanger: `minimum storage usage per PersistentVolumeClaim is 5Gi, but request is 2Gi`.
        return format!(
            "{what}: refused by a LimitRange of the namespace: {msg}; {} (kubectl describe \
             limitrange shows the allowed range)",
            limit_fix(message)
        );
    }
    if message.contains(" cannot ") && message.contains("resource \"") {
        // RBAC: `jobs.batch is forbidden: User "x" cannot create resource "jobs" in API group …`.
        return format!(
            "{what}: forbidden: {msg}; the permissions iogauge needs are in deploy/rbac.yaml"
        );
    }
    format!("{what}: refused by an admission policy of the cluster: {msg}")
}

/// The flags that ask for less of what a quota ran out of.
fn quota_fix(requested: &str) -> String {
    let mut fixes: Vec<&str> = Vec::new();
    if requested.contains("storage") || requested.contains("persistentvolumeclaims") {
        fixes.push("a smaller --claim-size");
    }
    if requested.contains("cpu") {
        fixes.push("a smaller --cpu-request/--cpu-limit");
    }
    if requested.contains("memory") {
        fixes.push("a smaller --memory-request/--memory-limit");
    }
    if requested.contains("count/") || requested.contains("pods") || fixes.is_empty() {
        fixes.push("--parallel 1");
    }
    format!(
        "ask for less ({}), let other work in the namespace end,",
        fixes.join(", ")
    )
}

/// The flag that moves a request into a LimitRange's range.
fn limit_fix(message: &str) -> &'static str {
    if message.contains(" storage usage") {
        "set --claim-size within the range"
    } else if message.contains(" cpu usage") || message.contains("cpu max limit") {
        "set --cpu-request/--cpu-limit within the range"
    } else if message.contains(" memory usage") || message.contains("memory max limit") {
        "set --memory-request/--memory-limit within the range"
    } else {
        "set the pod's requests and limits within the range"
    }
}

/// Why the API server could not be reached, from the error's chain: refused, DNS, TLS, timeout.
fn unreachable_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut chain = Vec::new();
    let mut refused = false;
    let mut timed_out = false;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
            timed_out |= io.kind() == std::io::ErrorKind::TimedOut;
        }
        chain.push(err.to_string());
        cur = err.source();
    }
    let text = chain.join(": ").to_lowercase();
    let raw = cap(&chain.last().cloned().unwrap_or_default());
    if refused || text.contains("connection refused") {
        "connection refused (nothing listens at that address)".into()
    } else if text.contains("dns error") || text.contains("failed to lookup address") {
        format!("the host name does not resolve (DNS: {raw})")
    } else if text.contains("certificate") || text.contains("tls") || text.contains("handshake") {
        format!("TLS failed: {raw}")
    } else if timed_out || text.contains("timed out") || text.contains("deadline has elapsed") {
        "no answer in time (timeout)".into()
    } else {
        cap(&chain.join(": "))
    }
}

pub(crate) fn not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

impl Cluster {
    /// Connects as kubectl would: `--kubeconfig`, else `KUBECONFIG` or `~/.kube/config`, else
    /// the in-cluster service account; `--context` picks a context. Asks the server its version
    /// once, so that an unreachable server is said here, with its address, and not as the first
    /// call's failure. A missing or wrong kubeconfig is bad input (exit 2); an unreachable
    /// server is an error while running (exit 1).
    pub(crate) async fn connect(
        kubeconfig: Option<&Path>,
        context: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<Cluster, KubeError> {
        let loaded = kubeconfig::load(kubeconfig, context)?;
        let mut config = match &loaded {
            Some(l) => {
                let opts = KubeConfigOptions {
                    context: Some(l.context.clone()),
                    ..KubeConfigOptions::default()
                };
                Config::from_custom_kubeconfig(l.config.clone(), &opts)
                    .await
                    .map_err(|e| KubeError::Usage(format!("{}: {e}", l.describe())))?
            }
            None => Config::incluster().map_err(|e| {
                KubeError::Cluster(format!(
                    "no kubeconfig, and the pod's service account cannot be used: {e}; pass \
                     --kubeconfig FILE or set KUBECONFIG"
                ))
            })?,
        };
        // A hung API server must not hang the run: every call is short.
        config.connect_timeout = Some(Duration::from_secs(10));
        config.read_timeout = Some(Duration::from_secs(30));
        config.write_timeout = Some(Duration::from_secs(30));
        let url = config.cluster_url.to_string();
        let namespace = namespace
            .map(str::to_string)
            .unwrap_or_else(|| config.default_namespace.clone());
        let client = Client::try_from(config).map_err(|e| {
            KubeError::Cluster(format!("API server {url}: {}", unreachable_cause(&e)))
        })?;
        // Any answer, even a refusal, means the server is there.
        if let Err(e) = client.apiserver_version().await {
            if !matches!(e, kube::Error::Api(_)) {
                let (whose, fix) = match &loaded {
                    Some(l) => (format!(" ({})", l.describe()), l.cluster_info()),
                    None => (
                        " (the pod's service account)".into(),
                        "kubectl cluster-info".into(),
                    ),
                };
                return Err(KubeError::Cluster(format!(
                    "cannot reach the API server at {url}{whose}: {}; check that the cluster is \
                     up and that the kubeconfig points at it: {fix}",
                    unreachable_cause(&e)
                )));
            }
        }
        Ok(Cluster {
            client,
            namespace,
            url,
        })
    }

    /// The client itself, for calls this layer does not wrap (kube canary's, in its own file).
    pub(crate) fn client(&self) -> Client {
        self.client.clone()
    }

    fn ns<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    pub(crate) async fn storage_class(&self, name: &str) -> Result<Option<StorageClass>, String> {
        Api::<StorageClass>::all(self.client.clone())
            .get_opt(name)
            .await
            .map_err(|e| failed(&format!("reading storage class {name}"), e))
    }

    pub(crate) async fn storage_classes(&self) -> Result<Vec<StorageClass>, String> {
        Ok(Api::<StorageClass>::all(self.client.clone())
            .list(&ListParams::default())
            .await
            .map_err(|e| failed("listing storage classes", e))?
            .items)
    }

    pub(crate) async fn nodes(&self, selector: &str) -> Result<Vec<Node>, String> {
        Ok(Api::<Node>::all(self.client.clone())
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| failed(&format!("listing nodes with labels '{selector}'"), e))?
            .items)
    }

    pub(crate) async fn claim(&self, name: &str) -> Result<Option<PersistentVolumeClaim>, String> {
        self.ns::<PersistentVolumeClaim>()
            .get_opt(name)
            .await
            .map_err(|e| failed(&format!("reading claim {name}"), e))
    }

    pub(crate) async fn create_job(&self, job: &Job) -> Result<Job, String> {
        let name = job.metadata.name.clone().unwrap_or_default();
        self.ns::<Job>()
            .create(&PostParams::default(), job)
            .await
            .map_err(|e| failed(&format!("creating job {name}"), e))
    }

    pub(crate) async fn create_claim(
        &self,
        claim: &PersistentVolumeClaim,
    ) -> Result<PersistentVolumeClaim, String> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        self.ns::<PersistentVolumeClaim>()
            .create(&PostParams::default(), claim)
            .await
            .map_err(|e| failed(&format!("creating claim {name}"), e))
    }

    pub(crate) async fn create_config_map(&self, cm: &ConfigMap) -> Result<ConfigMap, String> {
        let name = cm.metadata.name.clone().unwrap_or_default();
        self.ns::<ConfigMap>()
            .create(&PostParams::default(), cm)
            .await
            .map_err(|e| failed(&format!("creating configmap {name}"), e))
    }

    pub(crate) async fn config_maps(&self, selector: &str) -> Result<Vec<ConfigMap>, String> {
        Ok(self
            .ns::<ConfigMap>()
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| failed("listing configmaps", e))?
            .items)
    }

    pub(crate) async fn delete_config_map(&self, name: &str) -> Result<(), String> {
        match self
            .ns::<ConfigMap>()
            .delete(name, &DeleteParams::background())
            .await
        {
            Err(e) if !not_found(&e) => Err(failed(&format!("deleting configmap {name}"), e)),
            _ => Ok(()),
        }
    }

    pub(crate) async fn job(&self, name: &str) -> Result<Option<Job>, String> {
        self.ns::<Job>()
            .get_opt(name)
            .await
            .map_err(|e| failed(&format!("reading job {name}"), e))
    }

    pub(crate) async fn jobs(&self, selector: &str) -> Result<Vec<Job>, String> {
        Ok(self
            .ns::<Job>()
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| failed("listing jobs", e))?
            .items)
    }

    pub(crate) async fn claims(
        &self,
        selector: &str,
    ) -> Result<Vec<PersistentVolumeClaim>, String> {
        Ok(self
            .ns::<PersistentVolumeClaim>()
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| failed("listing claims", e))?
            .items)
    }

    pub(crate) async fn pods(&self, selector: &str) -> Result<Vec<Pod>, String> {
        Ok(self
            .ns::<Pod>()
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| failed("listing pods", e))?
            .items)
    }

    /// The events about one object, oldest first.
    pub(crate) async fn events(&self, name: &str) -> Result<Vec<Event>, String> {
        Ok(self
            .ns::<Event>()
            .list(&ListParams::default().fields(&format!("involvedObject.name={name}")))
            .await
            .map_err(|e| failed(&format!("reading events of {name}"), e))?
            .items)
    }

    pub(crate) async fn log(&self, pod: &str, container: &str) -> Result<String, String> {
        self.ns::<Pod>()
            .logs(
                pod,
                &LogParams {
                    container: Some(container.into()),
                    ..LogParams::default()
                },
            )
            .await
            .map_err(|e| failed(&format!("reading the log of pod {pod}"), e))
    }

    /// Deletes a Job and, in the background, its pods. Gone already is fine.
    pub(crate) async fn delete_job(&self, name: &str) -> Result<(), String> {
        match self
            .ns::<Job>()
            .delete(name, &DeleteParams::background())
            .await
        {
            Err(e) if !not_found(&e) => Err(failed(&format!("deleting job {name}"), e)),
            _ => Ok(()),
        }
    }

    pub(crate) async fn delete_claim(&self, name: &str) -> Result<(), String> {
        match self
            .ns::<PersistentVolumeClaim>()
            .delete(name, &DeleteParams::background())
            .await
        {
            Err(e) if !not_found(&e) => Err(failed(&format!("deleting claim {name}"), e)),
            _ => Ok(()),
        }
    }

    pub(crate) async fn delete_pod(&self, name: &str) -> Result<(), String> {
        match self
            .ns::<Pod>()
            .delete(name, &DeleteParams::background())
            .await
        {
            Err(e) if !not_found(&e) => Err(failed(&format!("deleting pod {name}"), e)),
            _ => Ok(()),
        }
    }

    /// The node named `name` (`--node`, and for its topology labels), if it exists.
    pub(crate) async fn node(&self, name: &str) -> Result<Option<Node>, String> {
        Api::<Node>::all(self.client.clone())
            .get_opt(name)
            .await
            .map_err(|e| failed(&format!("reading node {name}"), e))
    }

    /// The events about one object, by its uid: a Job and its claim share a name, and a name
    /// outlives the object (a replaced pod's events are not the new one's).
    pub(crate) async fn events_of(&self, what: &str, uid: &str) -> Result<Vec<Event>, String> {
        Ok(self
            .ns::<Event>()
            .list(&ListParams::default().fields(&format!("involvedObject.uid={uid}")))
            .await
            .map_err(|e| failed(&format!("reading events of {what}"), e))?
            .items)
    }

    /// One PersistentVolume (None: gone already, as a Delete policy makes it).
    pub(crate) async fn persistent_volume(
        &self,
        name: &str,
    ) -> Result<Option<PersistentVolume>, String> {
        Api::<PersistentVolume>::all(self.client.clone())
            .get_opt(name)
            .await
            .map_err(|e| failed(&format!("reading persistent volume {name}"), e))
    }

    /// Sets a volume's reclaimPolicy to Delete: once released, the provisioner deletes it and
    /// its disk (deleting the PersistentVolume object itself would leave the disk behind). The
    /// uid and resourceVersion read are preconditions: a volume replaced or changed since it was
    /// judged ours is refused by the API server (409), not patched.
    pub(crate) async fn reclaim_on_delete(
        &self,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> Result<(), String> {
        let patch = serde_json::json!({
            "metadata": {"uid": uid, "resourceVersion": resource_version},
            "spec": {"persistentVolumeReclaimPolicy": "Delete"}
        });
        Api::<PersistentVolume>::all(self.client.clone())
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map(|_| ())
            .map_err(|e| {
                failed(
                    &format!("setting reclaimPolicy Delete on persistent volume {name}"),
                    e,
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_refusal_names_the_quota_and_the_flag_not_rbac() {
        let m = "persistentvolumeclaims \"iogauge-x\" is forbidden: exceeded quota: storage, \
                 requested: requests.storage=2Gi, used: requests.storage=9Gi, limited: \
                 requests.storage=10Gi";
        let s = refused("creating claim iogauge-x", m);
        assert_eq!(
            s,
            format!(
                "creating claim iogauge-x: refused by a ResourceQuota of the namespace: {m}; ask \
                 for less (a smaller --claim-size), let other work in the namespace \
                 end, or ask an administrator to raise the quota (kubectl describe resourcequota)"
            )
        );
        let jobs = refused(
            "creating job j",
            "jobs.batch \"j\" is forbidden: exceeded quota: q, requested: count/jobs.batch=1, \
             used: count/jobs.batch=5, limited: count/jobs.batch=5",
        );
        assert!(jobs.contains("(--parallel 1)"), "{jobs}");
        assert!(!jobs.contains("rbac"), "{jobs}");
    }

    #[test]
    fn a_limit_range_refusal_names_the_flag_that_fits_it() {
        let m = "persistentvolumeclaims \"c\" is forbidden: minimum storage usage per \
                 PersistentVolumeClaim is 5Gi, but request is 2Gi";
        assert_eq!(
            refused("creating claim c", m),
            format!(
                "creating claim c: refused by a LimitRange of the namespace: {m}; set --claim-size \
                 within the range (kubectl describe limitrange shows the allowed range)"
            )
        );
        let cpu = refused(
            "x",
            "pods \"p\" is forbidden: maximum cpu usage per Container is 500m, but limit is 1",
        );
        assert!(cpu.contains("--cpu-request/--cpu-limit"), "{cpu}");
    }

    #[test]
    fn only_a_real_rbac_refusal_points_at_rbac_yaml() {
        let m = "jobs.batch is forbidden: User \"system:serviceaccount:ci:runner\" cannot create \
                 resource \"jobs\" in API group \"batch\" in the namespace \"team-a\"";
        assert_eq!(
            refused("creating job j", m),
            format!(
                "creating job j: forbidden: {m}; the permissions iogauge needs are in \
                 deploy/rbac.yaml"
            )
        );
        let hook = refused(
            "creating job j",
            "admission webhook \"validate.kyverno.svc\" denied the request: no",
        );
        assert!(!hook.contains("rbac"), "{hook}");
    }

    /// An error with a source, as hyper's connect errors wrap io and resolver errors.
    #[derive(Debug)]
    struct Wrapped(&'static str, std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.1)
        }
    }

    #[test]
    fn an_unreachable_server_is_told_by_its_cause() {
        use std::io::{Error, ErrorKind};
        let cause = |e: Wrapped| unreachable_cause(&e);
        assert_eq!(
            cause(Wrapped(
                "client error (Connect)",
                Error::from(ErrorKind::ConnectionRefused)
            )),
            "connection refused (nothing listens at that address)"
        );
        assert_eq!(
            cause(Wrapped(
                "client error (Connect)",
                Error::from(ErrorKind::TimedOut)
            )),
            "no answer in time (timeout)"
        );
        assert_eq!(
            cause(Wrapped(
                "client error (Connect)",
                Error::other(
                    "dns error: failed to lookup address information: Name or service not known"
                )
            )),
            "the host name does not resolve (DNS: dns error: failed to lookup address \
             information: Name or service not known)"
        );
        assert_eq!(
            cause(Wrapped(
                "client error (Connect)",
                Error::other("invalid peer certificate: UnknownIssuer")
            )),
            "TLS failed: invalid peer certificate: UnknownIssuer"
        );
    }

    #[test]
    fn a_long_message_is_cut() {
        let s = refused("w", &"y".repeat(5000));
        assert!(s.len() < 700, "{}", s.len());
        assert!(s.contains("… (cut)"));
    }
}
