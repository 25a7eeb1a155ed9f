//! `kube canary status`: each canary pod's latest document, read from the end of its log (the
//! pod prints one after every probe, as frames), or why there is none yet (the pod's state, by
//! diagnose.rs); and the rows that say it per target.

use super::{selector, TARGET_ANNOTATION};
use crate::cluster::client::{failed, Cluster};
use crate::cluster::diagnose::{diagnose, Diagnosis, Observed};
use crate::cluster::log::tail;
use crate::cluster::manifests::CONTAINER;
use crate::cluster::pod_document::{value, Words};
use crate::cluster::KubeError;
use crate::report::document::{CanaryDocument, CanaryVerdict, CANARY_KIND};
use k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, LogParams};
use serde::Serialize;

/// How much of a pod's log is read: its last lines, at most this many bytes. A document is a
/// few frames and the canary prints one per probe, so the latest is always within them.
pub(crate) const TAIL_LINES: i64 = 400;
pub(crate) const LIMIT_BYTES: i64 = 4 << 20;

/// One canary pod: what it measures and its latest document, or why there is none.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    /// "nodes matching …, in DIR" or "storage class C".
    pub target: String,
    pub pod: String,
    pub node: Option<String>,
    pub ready: bool,
    pub document: Option<CanaryDocument>,
    /// Whether `document` says how the target is now: its pod is ready and the document no
    /// older than 3 of its intervals. One that is not is shown, but counts as none (exit 1).
    pub current: bool,
    /// Why there is no current document.
    pub problem: Option<String>,
}

/// The worst of the rows: what the exit code says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Worst {
    Pass,
    /// A profile warns or is undecided yet.
    Warn,
    /// A target has no document (or its probes all failed).
    Missing,
    Fail,
}

/// The worst verdict over every row.
pub(crate) fn worst(rows: &[Row]) -> Worst {
    let mut w = Worst::Pass;
    for r in rows {
        let this = match &r.document {
            None => Worst::Missing,
            Some(_) if !r.current => Worst::Missing,
            Some(d) => d
                .profiles
                .iter()
                .map(|p| match p.verdict {
                    CanaryVerdict::Pass => Worst::Pass,
                    CanaryVerdict::Warn | CanaryVerdict::Undecided => Worst::Warn,
                    CanaryVerdict::Error => Worst::Missing,
                    CanaryVerdict::Fail => Worst::Fail,
                })
                .max()
                .unwrap_or(Worst::Missing),
        };
        w = w.max(this);
    }
    w
}

/// The latest canary document in a pod's log: its frames, this iogauge's version, kind
/// `canary` and a schema this iogauge reads.
pub(crate) fn read_document(log: &str) -> Result<CanaryDocument, String> {
    let words = Words {
        no_frames: &|log| {
            Err(format!(
                "no canary document in the pod's log yet (the first probe has not ended?); it \
                 ends with: {}",
                tail(log, 3)
            ))
        },
        damaged: &|e| format!("the canary's latest document in the pod's log is damaged: {e}"),
        bad: &|e| format!("the pod's canary document does not parse: {e}"),
    };
    let v = value(log, &words)?;
    match v.get("kind").and_then(serde_json::Value::as_str) {
        Some(CANARY_KIND) => {}
        other => {
            return Err(format!(
                "the pod's result is not a canary document but kind {}",
                crate::cluster::pod_document::cap(other.unwrap_or("(none)"))
            ))
        }
    }
    serde_json::from_value(v).map_err(|e| format!("the pod's canary document does not parse: {e}"))
}

/// Why a pod's latest document does not say how its target is now (None: it does). `/healthz`
/// fails after 3 intervals without a cycle; a document older than that (the log's last, from a
/// canary stuck since) says the same when readiness has not caught up yet.
pub(crate) fn not_current(d: &CanaryDocument, ready: bool, now: f64) -> Option<String> {
    let age = now - d.at;
    if !ready {
        Some(
            "not ready: its /healthz fails (no probe cycle ended for 3 intervals); its latest \
             document counts as none"
                .into(),
        )
    } else if age > 3.0 * d.interval_s {
        Some(format!(
            "its latest document is {:.0}s old, older than 3 intervals of {:.0}s: no probe cycle \
             ended since; it counts as none",
            age, d.interval_s
        ))
    } else {
        None
    }
}

fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn started(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.state
                    .as_ref()
                    .is_some_and(|s| s.running.is_some() || s.terminated.is_some())
                    || c.last_state
                        .as_ref()
                        .is_some_and(|s| s.terminated.is_some())
            })
        })
}

/// A container waiting to start again after it ended (CrashLoopBackOff): the waiting reason
/// and the last run's exit code.
fn restarting(p: &Pod) -> Option<(String, i32)> {
    let cs = p.status.as_ref()?.container_statuses.as_ref()?.first()?;
    let waiting = cs.state.as_ref()?.waiting.as_ref()?;
    let last = cs.last_state.as_ref()?.terminated.as_ref()?;
    Some((waiting.reason.clone().unwrap_or_default(), last.exit_code))
}

/// Why a pod that has not started has not: the pod's and its claim's state and events.
async fn why_not_started(c: &Cluster, p: &Pod, name: &str) -> Result<String, KubeError> {
    let uid = p.metadata.uid.clone().unwrap_or_default();
    let pod_events = c
        .events_of(&format!("pod {name}"), &uid)
        .await
        .map_err(KubeError::Cluster)?;
    let claim_name = p
        .spec
        .as_ref()
        .and_then(|s| s.volumes.as_ref())
        .and_then(|v| v.iter().find_map(|v| v.persistent_volume_claim.as_ref()))
        .map(|c| c.claim_name.clone());
    let claim = match &claim_name {
        Some(n) => c.claim(n).await.map_err(KubeError::Cluster)?,
        None => None,
    };
    let claim_events = match claim.as_ref().and_then(|c| c.metadata.uid.clone()) {
        Some(u) => c.events_of("claim", &u).await.map_err(KubeError::Cluster)?,
        None => Vec::new(),
    };
    let image = p
        .spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.image.clone())
        .unwrap_or_default();
    let d = diagnose(&Observed {
        job: None,
        job_events: &[],
        pod: Some(p),
        pod_events: &pod_events,
        claim: claim.as_ref(),
        claim_events: &claim_events,
        image: &image,
        image_is_default: image == crate::cluster::request::default_image(),
        node_arches: None,
        pod_seen: false,
    });
    Ok(match d {
        Diagnosis::Waiting(s) | Diagnosis::Stuck(s) | Diagnosis::Fatal(s) => s,
    })
}

/// Every pod of canary `name`, each with its latest document or why there is none.
pub(crate) async fn status(c: &Cluster, name: &str) -> Result<Vec<Row>, KubeError> {
    let pods = c.pods(&selector(name)).await.map_err(KubeError::Cluster)?;
    let api: Api<Pod> = Api::namespaced(c.client(), &c.namespace);
    let mut rows = Vec::new();
    for p in &pods {
        let pod = p.metadata.name.clone().unwrap_or_default();
        let node = p.spec.as_ref().and_then(|s| s.node_name.clone());
        let target = p
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(TARGET_ANNOTATION).cloned())
            .unwrap_or_else(|| "(unknown target)".into());
        let mut row = Row {
            target,
            pod: pod.clone(),
            node,
            ready: ready(p),
            document: None,
            current: false,
            problem: None,
        };
        if !started(p) {
            row.problem = Some(why_not_started(c, p, &pod).await?);
            rows.push(row);
            continue;
        }
        let previous = restarting(p);
        let params = LogParams {
            container: Some(CONTAINER.into()),
            tail_lines: Some(TAIL_LINES),
            limit_bytes: Some(LIMIT_BYTES),
            previous: previous.is_some(),
            ..LogParams::default()
        };
        // One pod's log that cannot be read is that pod's row, not the command's failure.
        let log = match api.logs(&pod, &params).await {
            Ok(l) => l,
            Err(e) => {
                row.problem = Some(failed(&format!("reading the log of pod {pod}"), e));
                rows.push(row);
                continue;
            }
        };
        if let Some((reason, code)) = previous {
            row.problem = Some(format!(
                "the canary ended (exit code {code}) and is restarting ({reason}); its last \
                 run's log ends with: {}",
                tail(&log, 3)
            ));
            rows.push(row);
            continue;
        }
        match read_document(&log) {
            Ok(d) => {
                row.problem = not_current(&d, row.ready, super::now());
                row.current = row.problem.is_none();
                row.document = Some(d);
            }
            Err(e) => row.problem = Some(e),
        }
        rows.push(row);
    }
    rows.extend(without_pods(c, name, &pods).await?);
    rows.sort_by(|a, b| (&a.target, &a.node).cmp(&(&b.target, &b.node)));
    Ok(rows)
}

/// A row for each DaemonSet or StatefulSet of the canary that has no pod, saying why: the
/// controller's FailedCreate (admission refused the pod: Pod Security, a webhook, a quota), or
/// that none was made.
async fn without_pods(c: &Cluster, name: &str, pods: &[Pod]) -> Result<Vec<Row>, KubeError> {
    let lp = ListParams::default().labels(&selector(name));
    let list = |e| KubeError::Cluster(failed("listing the canary's workloads", e));
    let ds = Api::<DaemonSet>::namespaced(c.client(), &c.namespace)
        .list(&lp)
        .await
        .map_err(list)?;
    let sts = Api::<StatefulSet>::namespaced(c.client(), &c.namespace)
        .list(&lp)
        .await
        .map_err(list)?;
    let sets = ds
        .items
        .into_iter()
        .map(|d| ("DaemonSet", d.metadata, d.spec.map(|s| s.template)))
        .chain(
            sts.items
                .into_iter()
                .map(|s| ("StatefulSet", s.metadata, s.spec.map(|s| s.template))),
        );
    let mut rows = Vec::new();
    for (kind, meta, template) in sets {
        let uid = meta.uid.clone().unwrap_or_default();
        let owned = |p: &Pod| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.uid == uid)
        };
        if pods.iter().any(owned) {
            continue;
        }
        let set = meta.name.clone().unwrap_or_default();
        let events = c
            .events_of(&format!("{kind} {set}"), &uid)
            .await
            .map_err(KubeError::Cluster)?;
        let refused = events
            .iter()
            .rev()
            .find(|e| e.reason.as_deref() == Some("FailedCreate"))
            .map(|_| {
                let d = diagnose(&Observed {
                    job: None,
                    job_events: &events,
                    pod: None,
                    pod_events: &[],
                    claim: None,
                    claim_events: &[],
                    image: "",
                    image_is_default: false,
                    node_arches: None,
                    pod_seen: false,
                });
                match d {
                    Diagnosis::Waiting(s) | Diagnosis::Stuck(s) | Diagnosis::Fatal(s) => s,
                }
            });
        let target = template
            .and_then(|t| t.metadata?.annotations?.get(TARGET_ANNOTATION).cloned())
            .unwrap_or_else(|| "(unknown target)".into());
        rows.push(Row {
            target,
            pod: format!("none ({} {set})", kind.to_lowercase()),
            node: None,
            ready: false,
            document: None,
            current: false,
            problem: Some(refused.unwrap_or_else(|| {
                match kind {
                    "DaemonSet" => {
                        "no pod: no node matches the selector and tolerates the pod, or \
                                the DaemonSet has not made it yet"
                            .into()
                    }
                    _ => "no pod: the StatefulSet has not made it yet".into(),
                }
            })),
        });
    }
    Ok(rows)
}

#[cfg(test)]
#[path = "status_tests.rs"]
mod tests;
