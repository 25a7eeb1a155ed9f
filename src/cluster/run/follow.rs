//! Following one target's pod, a round at a time: the disruptions since the last look (counted
//! against the retry budget, never read as a result), the pod's phase, and why a pod that is not
//! running waits (asking for events only then, and by uid: a Job and its claim share a name).

use super::{Active, Controller};
use crate::cluster::diagnose::{diagnose, Diagnosis, Observed};
use crate::cluster::disruption::{disruption, vanished, verdict};
use crate::cluster::targets::TargetKind;
use crate::report::document::{TargetOutcome, TargetStatus};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use std::collections::HashSet;
use std::time::Instant;

impl Controller<'_> {
    /// Looks at a target once, given its pods. true: it has ended (the outcome is filled in).
    pub(super) async fn step(
        &mut self,
        a: &mut Active,
        pods: &[&Pod],
        o: &mut TargetOutcome,
    ) -> bool {
        match self.look(a, pods, o).await {
            Ok(done) => done,
            Err(e) => {
                self.waiting(a, e);
                false
            }
        }
    }

    /// Counts the target's pods disrupted since the last look, including pods seen before and
    /// gone now (a preempted or drained pod is deleted; its events, by uid, say why). true: the
    /// budget is spent and the target has failed.
    async fn disruptions(
        &mut self,
        a: &mut Active,
        pods: &[&Pod],
        o: &mut TargetOutcome,
    ) -> Result<bool, String> {
        let mut found = Vec::new();
        for p in pods {
            let uid = p.metadata.uid.clone().unwrap_or_default();
            if a.disrupted.contains(&uid) {
                continue;
            }
            if let Some(what) = disruption(p) {
                found.push((uid, what));
            }
        }
        let present: HashSet<&str> = pods
            .iter()
            .filter_map(|p| p.metadata.uid.as_deref())
            .collect();
        let gone: Vec<(String, String)> = a
            .seen
            .iter()
            .filter(|(uid, _)| !present.contains(uid.as_str()))
            .map(|(u, n)| (u.clone(), n.clone()))
            .collect();
        for (uid, node) in gone {
            let events = self.cluster.events_of(&format!("pod {uid}"), &uid).await?;
            let what = vanished(&node, &events).unwrap_or_else(|| {
                format!("its pod on node {node} was deleted (no event says by whom)")
            });
            found.push((uid, what));
        }
        for (uid, what) in found {
            a.seen.remove(&uid);
            a.disrupted.insert(uid);
            match verdict(&what, a.disrupted.len()) {
                Ok(line) => {
                    self.say(a.index, &line);
                    a.said = line;
                    a.stuck_since = None;
                }
                Err(why) => {
                    self.say(a.index, &format!("failed: {why}"));
                    o.status = TargetStatus::Failed;
                    o.reason = Some(why);
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    async fn look(
        &mut self,
        a: &mut Active,
        pods: &[&Pod],
        o: &mut TargetOutcome,
    ) -> Result<bool, String> {
        if self.disruptions(a, pods, o).await? {
            return Ok(true);
        }
        let pod = newest(pods.iter().copied().filter(|p| {
            !a.disrupted
                .contains(p.metadata.uid.as_deref().unwrap_or_default())
        }));
        if let Some((uid, node)) =
            pod.and_then(|p| Some((p.metadata.uid.clone()?, p.spec.as_ref()?.node_name.clone()?)))
        {
            a.seen.insert(uid, node);
        }
        let phase = pod
            .and_then(|p| p.status.as_ref()?.phase.clone())
            .unwrap_or_default();
        if let Some(p) = pod {
            if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.clone()) {
                o.node = Some(n);
            }
        }
        match (pod, phase.as_str()) {
            (Some(p), "Succeeded" | "Failed") => {
                self.finish(a, p, o).await;
                Ok(true)
            }
            (Some(_), "Running") => {
                a.ran = true;
                let line = format!(
                    "running on node {}",
                    o.node.as_deref().unwrap_or("(unknown)")
                );
                if a.said != line {
                    self.say(a.index, &line);
                    a.said = line;
                }
                a.stuck_since = None;
                Ok(false)
            }
            _ => self.pending(a, pod, o).await,
        }
    }

    /// A target without a running pod: why, and whether to give up.
    async fn pending(
        &mut self,
        a: &mut Active,
        pod: Option<&Pod>,
        o: &mut TargetOutcome,
    ) -> Result<bool, String> {
        let job: Option<Job> = match pod {
            None => self.cluster.job(&a.job).await?,
            Some(_) => None,
        };
        let job_events = match (pod, &a.job_uid) {
            (None, Some(uid)) => {
                self.cluster
                    .events_of(&format!("job {}", a.job), uid)
                    .await?
            }
            (None, None) => self.cluster.events(&a.job).await?,
            (Some(_), _) => Vec::new(),
        };
        let pod_events = match pod.and_then(|p| Some((p.metadata.name.clone()?, p.metadata.uid.clone()?))) {
            Some((n, uid)) => self.cluster.events_of(&format!("pod {n}"), &uid).await?,
            None => Vec::new(),
        };
        let claim_name = match &self.plan.targets[a.index].kind {
            TargetKind::Claim { name, .. } => Some(name.clone()),
            _ => a.claim.clone(),
        };
        let claim: Option<PersistentVolumeClaim> = match &claim_name {
            Some(n) => self.cluster.claim(n).await?,
            None => None,
        };
        let claim_events = match claim
            .as_ref()
            .and_then(|c| Some((c.metadata.name.clone()?, c.metadata.uid.clone()?)))
        {
            Some((n, uid)) => {
                self.cluster
                    .events_of(&format!("claim {n}"), &uid)
                    .await?
            }
            None => Vec::new(),
        };
        let d = diagnose(&Observed {
            job: job.as_ref(),
            job_events: &job_events,
            pod,
            pod_events: &pod_events,
            claim: claim.as_ref(),
            claim_events: &claim_events,
            image: &self.req.pod.image,
        });
        let (line, give_up) = match d {
            Diagnosis::Fatal(why) => (why, true),
            Diagnosis::Stuck(why) => {
                let since = *a.stuck_since.get_or_insert_with(Instant::now);
                let over = since.elapsed() >= self.req.pending_timeout;
                let why = if over {
                    format!(
                        "{why} (gave up after {} s; --pending-timeout sets how long to wait)",
                        self.req.pending_timeout.as_secs()
                    )
                } else {
                    why
                };
                (why, over)
            }
            Diagnosis::Waiting(why) => {
                a.stuck_since = None;
                (why, false)
            }
        };
        if give_up {
            self.say(a.index, &format!("failed: {line}"));
            o.status = TargetStatus::Failed;
            o.reason = Some(line);
            return Ok(true);
        }
        if a.said != line {
            self.say(a.index, &format!("waiting: {line}"));
            a.said = line;
        }
        Ok(false)
    }
}

/// The most recently created pod (a Job starts another after a disruption, and a deleted pod
/// may linger while it terminates).
pub(super) fn newest<'p>(pods: impl Iterator<Item = &'p Pod>) -> Option<&'p Pod> {
    pods.filter(|p| p.metadata.deletion_timestamp.is_none())
        .max_by_key(|p| p.metadata.creation_timestamp.clone().map(|t| t.0))
}
