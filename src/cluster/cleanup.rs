//! `iogauge kube cleanup`: deletes what runs left behind (a run killed before it could delete,
//! or one that left on a second Ctrl-C), found by the labels every created object carries.
//! Claims named with `--claim` were never labelled, so they are never touched.

use super::client::Cluster;
use super::manifests;
use super::KubeError;
use crate::run::stop::Stop;

/// What cleanup found and deleted, as `kind/name`.
#[derive(Debug, Default)]
pub(crate) struct Cleaned {
    pub namespace: String,
    pub deleted: Vec<String>,
    /// Objects that could not be deleted, with the reason.
    pub failed: Vec<String>,
}

/// Deletes every Job, claim and pod of run `run` (or of every iogauge run) in the namespace.
pub(crate) fn cleanup(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
    namespace: Option<&str>,
    run: Option<&str>,
    stop: &Stop,
) -> Result<Cleaned, KubeError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| KubeError::Cluster(format!("cannot start the async runtime: {e}")))?;
    rt.block_on(async {
        let c = Cluster::connect(kubeconfig, context, namespace)
            .await
            .map_err(KubeError::Cluster)?;
        let sel = manifests::selector(run);
        let mut out = Cleaned {
            namespace: c.namespace.clone(),
            ..Cleaned::default()
        };
        let jobs = c.jobs(&sel).await.map_err(KubeError::Cluster)?;
        let claims = c.claims(&sel).await.map_err(KubeError::Cluster)?;
        let pods = c.pods(&sel).await.map_err(KubeError::Cluster)?;
        let name = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            m.name.clone().unwrap_or_default()
        };
        // Jobs first (their pods go with them), then claims, then any pod left without its Job.
        // Objects already being deleted (a claim waits for its pod to go) are left to finish.
        let live = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            m.deletion_timestamp.is_none()
        };
        let mut work: Vec<(&str, String)> = Vec::new();
        work.extend(
            jobs.iter()
                .filter(|j| live(&j.metadata))
                .map(|j| ("job", name(&j.metadata))),
        );
        work.extend(
            claims
                .iter()
                .filter(|c| live(&c.metadata))
                .map(|c| ("persistentvolumeclaim", name(&c.metadata))),
        );
        work.extend(
            pods.iter()
                .filter(|p| live(&p.metadata))
                .map(|p| ("pod", name(&p.metadata))),
        );
        for (kind, n) in work {
            if stop.is_set() {
                out.failed.push(format!(
                    "{kind}/{n}: not deleted, stopped by {}",
                    stop.reason()
                ));
                continue;
            }
            let r = match kind {
                "job" => c.delete_job(&n).await,
                "persistentvolumeclaim" => c.delete_claim(&n).await,
                _ => c.delete_pod(&n).await,
            };
            match r {
                Ok(()) => out.deleted.push(format!("{kind}/{n}")),
                Err(e) => out.failed.push(format!("{kind}/{n}: {e}")),
            }
        }
        Ok(out)
    })
}
