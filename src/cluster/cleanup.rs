//! `iogauge kube cleanup`: deletes what runs left behind (a run killed before it could delete,
//! or one that left on a second Ctrl-C), found by the labels every created object carries.
//! Claims named with `--claim` were never labelled, so they are never touched; nor is anything of
//! `kube canary` (labelled `iogauge.dev/canary`, and no run's): a canary is removed by its
//! uninstall only. A run that may
//! still be going (a colleague's, in the same namespace) is left alone unless named or `--all`.
//! A claim of a Retain class has its volume set to go with it first, as the controller does
//! ([`super::reclaim`]); a volume it was bound to but that was made beforehand stays, and is
//! named.

use super::client::Cluster;
use super::labels::{CANARY_LABEL, MANAGED_BY};
use super::manifests::RUN_LABEL;
use super::reclaim::{reclaim, Reclaim};
use super::KubeError;
use crate::run::stop::Stop;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Which runs to remove.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scope {
    /// `--run ID`: that run, whatever its age.
    Run(String),
    /// Runs whose oldest object was created longer ago than this (`--older-than`, 1 h by default).
    OlderThan(Duration),
    /// `--all`: every run, also live ones.
    All,
}

/// What cleanup found and deleted, as `kind/name`.
#[derive(Debug, Default)]
pub(crate) struct Cleaned {
    pub namespace: String,
    pub deleted: Vec<String>,
    /// Objects that could not be deleted, with the reason.
    pub failed: Vec<String>,
    /// Runs left alone because they are younger than `--older-than`, one line each.
    pub kept: Vec<String>,
    /// What became of the volumes of Retain claims, one line each.
    pub volumes: Vec<String>,
}

/// Deletes the Jobs, claims, ConfigMaps and pods of the runs `scope` names in the namespace.
pub(crate) fn cleanup(
    kubeconfig: Option<&std::path::Path>,
    context: Option<&str>,
    namespace: Option<&str>,
    scope: &Scope,
    stop: &Stop,
) -> Result<Cleaned, KubeError> {
    let rt = super::run::runtime()?;
    rt.block_on(async {
        let c = Cluster::connect(kubeconfig, context, namespace).await?;
        let sel = selector(scope);
        let mut out = Cleaned {
            namespace: c.namespace.clone(),
            ..Cleaned::default()
        };
        let jobs = c.jobs(&sel).await.map_err(KubeError::Cluster)?;
        let claims = c.claims(&sel).await.map_err(KubeError::Cluster)?;
        let config_maps = c.config_maps(&sel).await.map_err(KubeError::Cluster)?;
        let pods = c.pods(&sel).await.map_err(KubeError::Cluster)?;
        // Jobs first (their pods go with them), then claims and the run's files, then any pod
        // left without its Job.
        let mut found: Vec<(&str, &ObjectMeta)> = Vec::new();
        found.extend(jobs.iter().map(|j| ("job", &j.metadata)));
        found.extend(
            claims
                .iter()
                .map(|c| ("persistentvolumeclaim", &c.metadata)),
        );
        found.extend(config_maps.iter().map(|m| ("configmap", &m.metadata)));
        found.extend(pods.iter().map(|p| ("pod", &p.metadata)));
        let keep = young_runs(&found, scope, SystemTime::now());
        for (run, age) in &keep {
            out.kept.push(kept_line(run, *age, scope));
        }
        // Objects already being deleted (a claim waits for its pod to go) are left to finish; a
        // canary's are never ours to delete, whatever the server's selector matched.
        let work: Vec<(&str, String)> = found
            .iter()
            .filter(|(_, m)| m.deletion_timestamp.is_none())
            .filter(|(_, m)| !canary_object(m))
            .filter(|(_, m)| !keep.contains_key(&run_of(m)))
            .map(|(k, m)| (*k, m.name.clone().unwrap_or_default()))
            .collect();
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
                "persistentvolumeclaim" => {
                    let claim = claims.iter().find(|p| p.metadata.name.as_ref() == Some(&n));
                    if let Some(p) = claim {
                        out.volumes.extend(volume_line(&n, reclaim(&c, p).await));
                    }
                    c.delete_claim(&n).await
                }
                "configmap" => c.delete_config_map(&n).await,
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

/// The line for claim `claim`'s volume, if any. The claim is deleted whatever it says (as the
/// controller does): a namespace's user may not be allowed to read or change volumes.
fn volume_line(claim: &str, r: Reclaim) -> Option<String> {
    match r {
        Reclaim::NotRetained => None,
        Reclaim::Set(v) => Some(format!(
            "persistentvolume/{v}: reclaimPolicy Retain set to Delete, so that it and its disk \
             go with claim {claim}"
        )),
        Reclaim::NotOurs(v) => Some(format!(
            "persistentvolume/{v} was not provisioned for claim {claim} (a volume made \
             beforehand, bound to it by the cluster): it stays, Released; kubectl delete pv {v} \
             removes it once its data is not needed"
        )),
        Reclaim::Failed(e) => Some(format!("claim {claim}: {e}")),
        Reclaim::Unread(e) => Some(format!(
            "claim {claim}: {e}; if its class is Retain, its volume stays Released (kubectl get \
             pv shows it)"
        )),
    }
}

/// The objects of runs: iogauge's, with a run id, and none of `kube canary`'s (whose pods and
/// claims carry `managed-by=iogauge` too, and must outlive any cleanup).
fn selector(scope: &Scope) -> String {
    let run = match scope {
        Scope::Run(r) => format!("{RUN_LABEL}={r}"),
        _ => RUN_LABEL.to_string(),
    };
    format!("{}={},{run},!{CANARY_LABEL}", MANAGED_BY.0, MANAGED_BY.1)
}

fn canary_object(m: &ObjectMeta) -> bool {
    m.labels
        .as_ref()
        .is_some_and(|l| l.contains_key(CANARY_LABEL))
}

fn run_of(m: &ObjectMeta) -> String {
    m.labels
        .as_ref()
        .and_then(|l| l.get(RUN_LABEL).cloned())
        .unwrap_or_default()
}

/// The runs too young to remove under `scope`, with their age (from their oldest object: a
/// run's pods are younger than its Job). An object without a creation time counts as new.
fn young_runs(
    found: &[(&str, &ObjectMeta)],
    scope: &Scope,
    now: SystemTime,
) -> BTreeMap<String, Duration> {
    let Scope::OlderThan(limit) = scope else {
        return BTreeMap::new();
    };
    let mut age: BTreeMap<String, Duration> = BTreeMap::new();
    for (_, m) in found {
        let created = m
            .creation_timestamp
            .as_ref()
            .map(|t| SystemTime::from(t.0))
            .unwrap_or(now);
        let a = now.duration_since(created).unwrap_or_default();
        let e = age.entry(run_of(m)).or_insert(a);
        *e = (*e).max(a);
    }
    age.retain(|_, a| *a < *limit);
    age
}

/// "run k3v9q2: started 4 min ago, left alone (younger than --older-than 1 h); …"
fn kept_line(run: &str, age: Duration, scope: &Scope) -> String {
    let limit = match scope {
        Scope::OlderThan(d) => words(*d),
        _ => String::new(),
    };
    format!(
        "run {run}: started {} ago, left alone (younger than --older-than {limit}); remove it \
         with --run {run}, or a shorter --older-than",
        words(age)
    )
}

/// A duration as people say it: "40 s", "4 min", "3 h".
fn words(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 && s.is_multiple_of(3600) {
        return format!("{} h", s / 3600);
    }
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        _ => format!("{} h", s / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn meta(run: &str, created: SystemTime) -> ObjectMeta {
        ObjectMeta {
            labels: Some([(RUN_LABEL.to_string(), run.to_string())].into()),
            creation_timestamp: k8s_openapi::jiff::Timestamp::try_from(created)
                .ok()
                .map(Time),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn a_run_is_as_old_as_its_oldest_object() {
        let now = SystemTime::now();
        let old = meta("old", now - Duration::from_secs(7200));
        let old_pod = meta("old", now - Duration::from_secs(10));
        let new = meta("new", now - Duration::from_secs(240));
        let found = [("job", &old), ("pod", &old_pod), ("job", &new)];
        let young = young_runs(&found, &Scope::OlderThan(Duration::from_secs(3600)), now);
        assert_eq!(young.keys().collect::<Vec<_>>(), ["new"]);
        assert!(young_runs(&found, &Scope::All, now).is_empty());
        assert!(young_runs(&found, &Scope::Run("new".into()), now).is_empty());
    }

    #[test]
    fn cleanup_selects_runs_and_never_a_canarys_objects() {
        assert_eq!(
            selector(&Scope::All),
            "app.kubernetes.io/managed-by=iogauge,iogauge.dev/run,!iogauge.dev/canary"
        );
        assert_eq!(
            selector(&Scope::Run("k3".into())),
            "app.kubernetes.io/managed-by=iogauge,iogauge.dev/run=k3,!iogauge.dev/canary"
        );
        let mut m = meta("", SystemTime::now());
        assert!(!canary_object(&m));
        m.labels = Some([(CANARY_LABEL.to_string(), "default".to_string())].into());
        assert!(canary_object(&m));
    }

    #[test]
    fn a_kept_run_says_why_and_how_to_remove_it() {
        assert_eq!(
            kept_line(
                "k3v9q2",
                Duration::from_secs(250),
                &Scope::OlderThan(Duration::from_secs(3600))
            ),
            "run k3v9q2: started 4 min ago, left alone (younger than --older-than 1 h); remove \
             it with --run k3v9q2, or a shorter --older-than"
        );
    }
}
