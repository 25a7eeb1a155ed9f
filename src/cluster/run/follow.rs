//! Following one target's pod, a round at a time: the disruptions since the last look (counted
//! against the retry budget, never read as a result), the pod's phase, and why a pod that is not
//! running waits (asking for events only then, and by uid: a Job and its claim share a name).

use super::{Active, Controller};
use crate::cluster::budget::{self, secs};
use crate::cluster::diagnose::{
    diagnose, imposed_limits, node_arches, wants_node_arches, Diagnosis, Observed,
};
use crate::cluster::disruption::{disruption, has_condition, unretried, vanished, verdict};
use crate::cluster::manifests::{self, TARGET_LABEL};
use crate::cluster::targets::TargetKind;
use crate::report::document::{TargetOutcome, TargetStatus};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::time::Instant;

impl Controller<'_> {
    /// One round: a single list of the run's pods, however many targets wait, then a look at
    /// each target. The targets still going, and a fingerprint of what was seen (for the
    /// back-off: unchanged rounds wait longer). `last`: the run's --timeout has passed; only
    /// targets whose pod has ended are finished, the others are left for [`Self::end_all`].
    pub(super) async fn round(
        &mut self,
        active: Vec<Active>,
        outcomes: &mut [TargetOutcome],
        last: bool,
    ) -> (Vec<Active>, u64) {
        // One list of the run's pods per round, however many targets wait.
        let pods = self
            .cluster
            .pods(&manifests::selector(Some(&self.plan.run)))
            .await;
        let mut fingerprint = DefaultHasher::new();
        let mut still = Vec::with_capacity(active.len());
        for mut a in active {
            let i = a.index;
            let slug = &self.plan.targets[i].slug;
            let mine: Option<Vec<&Pod>> = pods.as_ref().ok().map(|pods| {
                pods.iter()
                    .filter(|p| {
                        p.metadata.labels.as_ref().and_then(|l| l.get(TARGET_LABEL)) == Some(slug)
                    })
                    .collect()
            });
            let ended = mine.as_deref().is_some_and(|m| has_ended(&a, m));
            match next_step(Instant::now() >= a.deadline, last, ended) {
                Next::Look => {}
                Next::TimedOut => {
                    self.over_budget(&a, &mut outcomes[i]);
                    self.remove(&a).await;
                    continue;
                }
                Next::Leave => {
                    still.push(a);
                    continue;
                }
            }
            let done = match &mine {
                Some(mine) => self.step(&mut a, mine, &mut outcomes[i]).await,
                None => {
                    // One failed call is not the end: the API server may be busy.
                    let e = pods.as_ref().err().cloned().unwrap_or_default();
                    self.waiting(&mut a, e);
                    false
                }
            };
            (i, &a.said, done).hash(&mut fingerprint);
            match done {
                true => self.remove(&a).await,
                false => still.push(a),
            }
        }
        for p in pods.iter().flatten() {
            (&p.metadata.uid, &p.metadata.resource_version).hash(&mut fingerprint);
        }
        (still, fingerprint.finish())
    }

    /// The run's end (a signal, or `--timeout`): what was running and what was still queued.
    pub(super) fn end_all(
        &mut self,
        how: TargetStatus,
        active: &mut Vec<Active>,
        queue: &mut VecDeque<usize>,
        outcomes: &mut [TargetOutcome],
    ) {
        let timeout = self.req.timeout.as_secs();
        for a in active.drain(..) {
            let o = &mut outcomes[a.index];
            o.status = how;
            o.reason = Some(match how {
                TargetStatus::TimedOut if a.ran => {
                    format!("--timeout {timeout}s passed while it ran ({})", a.said)
                }
                TargetStatus::TimedOut if a.said.is_empty() => {
                    format!("--timeout {timeout}s passed before its pod ran")
                }
                TargetStatus::TimedOut => {
                    format!(
                        "--timeout {timeout}s passed before its pod ran ({})",
                        a.said
                    )
                }
                _ => format!("stopped by {} while it ran", self.stop.reason()),
            });
        }
        for i in queue.drain(..) {
            outcomes[i].status = TargetStatus::Skipped;
            outcomes[i].reason = Some(match how {
                TargetStatus::TimedOut => {
                    format!("not started: --timeout {timeout}s passed before")
                }
                _ => format!("not started: stopped by {}", self.stop.reason()),
            });
        }
    }

    /// A target whose budget ran out: timed out, saying whether it was measuring or waiting.
    pub(super) fn over_budget(&mut self, a: &Active, o: &mut TargetOutcome) {
        let what = match self.req.target_timeout {
            Some(t) => format!("--target-timeout {}s", secs(t)),
            None => format!(
                "its budget of {} s (twice the {} s its checks should take, plus {} s to start; \
                 --target-timeout sets it)",
                secs(self.budget),
                secs(self.estimate),
                secs(budget::START_ALLOWANCE)
            ),
        };
        let why = match (a.ran, a.said.is_empty()) {
            (true, _) => format!("{what} passed while it ran ({})", a.said),
            (false, true) => format!("{what} passed before its pod ran"),
            (false, false) => format!("{what} passed before its pod ran ({})", a.said),
        };
        self.say(a.index, &format!("timed out: {why}"));
        o.status = TargetStatus::TimedOut;
        o.reason = Some(why);
    }

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
                found.push((uid, what, Some(has_condition(p))));
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
            found.push((uid, what, None));
        }
        for (uid, what, condition) in found {
            a.seen.remove(&uid);
            a.disrupted.insert(uid);
            a.last_disruption = Some((what.clone(), condition));
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
            // Admission set the pod's limits when it was created: one look is enough, and a
            // short run may end between two.
            if !a.limits_seen {
                a.limits_seen = true;
                if let Some(note) = imposed_limits(p, &self.req.pod.limits) {
                    self.say(a.index, &format!("note: {note}"));
                    // In the document too: it may make the numbers unrepresentative.
                    o.warnings.push(note);
                }
            }
        }
        match (pod, phase.as_str()) {
            (Some(p), "Succeeded" | "Failed") => {
                self.learn(a, o).await;
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
        if let Some(why) = job
            .as_ref()
            .and_then(|j| unretried(j, a.last_disruption.as_ref()))
        {
            self.say(a.index, &format!("failed: {why}"));
            o.status = TargetStatus::Failed;
            o.reason = Some(why);
            return Ok(true);
        }
        let job_events = match (pod, &a.job_uid) {
            (None, Some(uid)) => {
                self.cluster
                    .events_of(&format!("job {}", a.job), uid)
                    .await?
            }
            (None, None) => self.cluster.events(&a.job).await?,
            (Some(_), _) => Vec::new(),
        };
        let pod_events =
            match pod.and_then(|p| Some((p.metadata.name.clone()?, p.metadata.uid.clone()?))) {
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
            Some((n, uid)) => self.cluster.events_of(&format!("claim {n}"), &uid).await?,
            None => Vec::new(),
        };
        // Listing nodes may be forbidden: then the scheduler's words stand alone.
        let node_arches = match wants_node_arches(pod) {
            true => self.cluster.nodes("").await.ok().map(|n| node_arches(&n)),
            false => None,
        };
        let d = diagnose(&Observed {
            job: job.as_ref(),
            job_events: &job_events,
            pod,
            pod_events: &pod_events,
            claim: claim.as_ref(),
            claim_events: &claim_events,
            image: &self.req.pod.image,
            image_is_default: self.req.pod.image_is_default,
            node_arches: node_arches.as_deref(),
            pod_seen: a.ran || !a.seen.is_empty() || !a.disrupted.is_empty(),
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

/// What a round does with a target: look at it, time it out, or leave it to the run's end.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    Look,
    TimedOut,
    Leave,
}

/// A pod that has ended is finished first (its result read), whatever the clock says: a pod
/// that Succeeded just before its deadline is not timed out. Then the run's --timeout
/// (`run_over`: the caller says why), then the target's own budget.
fn next_step(over_budget: bool, run_over: bool, ended: bool) -> Next {
    match (ended, run_over, over_budget) {
        (true, _, _) => Next::Look,
        (false, true, _) => Next::Leave,
        (false, false, true) => Next::TimedOut,
        (false, false, false) => Next::Look,
    }
}

/// Whether the target's current pod (the newest not counted as disrupted) has ended.
fn has_ended(a: &Active, pods: &[&Pod]) -> bool {
    let pod = newest(pods.iter().copied().filter(|p| {
        !a.disrupted
            .contains(p.metadata.uid.as_deref().unwrap_or_default())
    }));
    let phase = pod.and_then(|p| p.status.as_ref()?.phase.as_deref());
    matches!(phase, Some("Succeeded" | "Failed")) && pod.is_some_and(|p| disruption(p).is_none())
}

/// The most recently created pod (a Job starts another after a disruption, and a deleted pod
/// may linger while it terminates).
pub(super) fn newest<'p>(pods: impl Iterator<Item = &'p Pod>) -> Option<&'p Pod> {
    pods.filter(|p| p.metadata.deletion_timestamp.is_none())
        .max_by_key(|p| p.metadata.creation_timestamp.clone().map(|t| t.0))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::BTreeMap;

    fn active() -> Active {
        Active {
            index: 0,
            job: "j".into(),
            claim: None,
            job_uid: None,
            stuck_since: None,
            said: String::new(),
            ran: true,
            seen: BTreeMap::new(),
            disrupted: HashSet::new(),
            deadline: Instant::now(),
            limits_seen: true,
            last_disruption: None,
        }
    }

    fn pod(uid: &str, phase: &str) -> Pod {
        serde_json::from_value(serde_json::json!({"metadata": {"name": uid, "uid": uid,
            "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": phase}}))
        .unwrap()
    }

    #[test]
    fn a_pod_that_ended_by_its_deadline_is_read_not_timed_out() {
        // Over the target's budget, or past the run's --timeout: an ended pod is looked at.
        assert_eq!(next_step(true, false, true), Next::Look);
        assert_eq!(next_step(true, true, true), Next::Look);
        assert_eq!(next_step(true, false, false), Next::TimedOut);
        assert_eq!(next_step(false, true, false), Next::Leave);
        assert_eq!(next_step(false, false, false), Next::Look);
        let mut a = active();
        let done = pod("u1", "Succeeded");
        assert!(has_ended(&a, &[&done]));
        assert!(!has_ended(&a, &[&pod("u1", "Running")]));
        assert!(!has_ended(&a, &[]));
        // A disrupted pod gives no result.
        a.disrupted.insert("u1".into());
        assert!(!has_ended(&a, &[&done]));
    }
}
