//! The API calls a run makes, each turned into iogauge's words on failure: a thin layer over
//! `kube::Api` so that the controller reads as a sequence of steps. Every call is a plain GET,
//! POST or DELETE (no watch), and one merge PATCH of a Retain volume's reclaimPolicy, which is
//! what the RBAC in deploy/rbac.yaml grants.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, DeleteParams, ListParams, LogParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
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

/// An API call's failure in words, with the fix for the common ones.
fn failed(what: &str, e: kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => format!(
            "{what}: forbidden: {}; the permissions iogauge needs are in deploy/rbac.yaml",
            s.message
        ),
        kube::Error::Api(s) => format!("{what}: {} ({})", s.message, s.code),
        e => format!("{what}: {e}"),
    }
}

fn not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 404)
}

impl Cluster {
    /// Connects as kubectl would: `--kubeconfig`, else `KUBECONFIG` or `~/.kube/config`, else
    /// the in-cluster service account; `--context` picks a context.
    pub(crate) async fn connect(
        kubeconfig: Option<&Path>,
        context: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<Cluster, String> {
        let opts = KubeConfigOptions {
            context: context.map(str::to_string),
            ..KubeConfigOptions::default()
        };
        let mut config = match (kubeconfig, context) {
            (Some(path), _) => {
                let kc = Kubeconfig::read_from(path)
                    .map_err(|e| format!("cannot read --kubeconfig '{}': {e}", path.display()))?;
                Config::from_custom_kubeconfig(kc, &opts)
                    .await
                    .map_err(|e| format!("--kubeconfig '{}': {e}", path.display()))?
            }
            (None, Some(_)) => Config::from_kubeconfig(&opts)
                .await
                .map_err(|e| format!("--context: {e}"))?,
            (None, None) => Config::infer().await.map_err(|e| {
                format!(
                    "no cluster to talk to: {e}; set KUBECONFIG or --kubeconfig, or run inside a pod"
                )
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
        let client = Client::try_from(config).map_err(|e| format!("cluster {url}: {e}"))?;
        Ok(Cluster {
            client,
            namespace,
            url,
        })
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

    /// One node, for its topology labels (None: gone already).
    pub(crate) async fn node(&self, name: &str) -> Result<Option<Node>, String> {
        Api::<Node>::all(self.client.clone())
            .get_opt(name)
            .await
            .map_err(|e| failed(&format!("reading node {name}"), e))
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
    /// its disk (deleting the PersistentVolume object itself would leave the disk behind).
    pub(crate) async fn reclaim_on_delete(&self, name: &str) -> Result<(), String> {
        let patch = serde_json::json!({"spec": {"persistentVolumeReclaimPolicy": "Delete"}});
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
