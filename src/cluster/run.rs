//! The controller: find the targets, then for each one create its Job (and fresh claim), follow
//! its pod until it has a result or cannot start, read the result from the pod's log, and delete
//! what was created. Deletion also happens on timeout and on the first SIGINT/SIGTERM; a second
//! signal leaves at once and says what remains.

use super::budget;
use super::client::Cluster;
use super::log::parse_check_log;
use super::manifests::{self, CONTAINER, RUN_LABEL};
use super::plan::{plan, Plan};
use super::poll::Backoff;
use super::preflight::{collected, parse_preflight_log};
use super::request::KubeRequest;
use super::targets::TargetKind;
use super::KubeError;
use crate::report::document::{KubeDocument, Summary, TargetOutcome, TargetStatus, SCHEMA_VERSION};
use crate::run::stop::Stop;
use k8s_openapi::api::core::v1::Pod;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

mod follow;
mod outcome;

/// What the caller shows while a run goes on (the CLI: lines on stderr).
pub(crate) use crate::observer::Observer;

/// The one-thread tokio runtime every cluster command (run, dry run, cleanup) runs on: its calls
/// are few and one at a time, so one thread serves them.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, KubeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| KubeError::Cluster(format!("cannot start the async runtime: {e}")))
}

async fn connect(req: &KubeRequest) -> Result<Cluster, KubeError> {
    Cluster::connect(
        req.kubeconfig.as_deref(),
        req.context.as_deref(),
        req.namespace.as_deref(),
    )
    .await
}

/// One target while it runs.
struct Active {
    index: usize,
    job: String,
    /// The fresh claim this run created, deleted with the Job.
    claim: Option<String>,
    /// The Job's uid, for its events (the claim has the same name).
    job_uid: Option<String>,
    stuck_since: Option<Instant>,
    said: String,
    /// Whether a pod of it was seen running (a timeout then interrupted a measurement).
    ran: bool,
    /// Pods seen scheduled and not disrupted, by uid, with their node: one that vanishes was
    /// taken away (preempted, drained) even when its last state was never seen.
    seen: BTreeMap<String, String>,
    /// Pods already counted as disrupted, by uid.
    disrupted: HashSet<String>,
    /// When its budget runs out.
    deadline: Instant,
    /// Whether the pod's limits were compared with those asked for.
    limits_seen: bool,
    /// The last disruption counted: what fails the target if the Job cannot retry it.
    last_disruption: Option<crate::cluster::disruption::Counted>,
}

/// Objects created and not yet deleted: what a stop or a timeout must remove.
#[derive(Default)]
struct Created {
    jobs: Vec<String>,
    claims: Vec<String>,
}

/// Runs the check on every target. Err: nothing was created.
pub(crate) fn check(
    req: &KubeRequest,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> Result<KubeDocument, KubeError> {
    runtime()?.block_on(async {
        let cluster = connect(req).await?;
        let plan = plan(req, Some(&cluster), cluster.namespace.clone()).await?;
        for line in plan.notes() {
            obs.note(&format!("iogauge kube: {line}"));
        }
        if plan.targets.is_empty() {
            return Err(KubeError::Usage(
                "no targets: name --storage-class, --all-storage-classes, --claim or --nodes with --host-path".into(),
            ));
        }
        obs.note(&format!(
            "iogauge kube: run {} in namespace {} of {}: {} target(s), {}; delete leftovers \
             with: iogauge kube cleanup --run {}",
            plan.run,
            cluster.namespace,
            cluster.url,
            plan.targets.len(),
            budget::at_once(req.parallel),
            plan.run
        ));
        let estimate = match (&req.preflight, &req.fio) {
            (Some(p), _) => p.estimate,
            (None, Some(f)) => budget::fio_time(&f.specs),
            (None, None) => budget::check_time(&req.profiles, &req.check, &req.files)
                .map_err(KubeError::Usage)?,
        };
        let budget = budget::budget(estimate, req.target_timeout);
        for line in budget::lines(&plan.targets, req, estimate, budget) {
            obs.note(&line);
        }
        // Stopped while the targets were found: nothing is created.
        let files = if stop.is_set() {
            None
        } else {
            super::configmap::create(&req.files, &req.pod.labels, &cluster, &plan.run, obs)
                .await?
        };
        let doc = Controller {
            req,
            cluster: &cluster,
            plan: &plan,
            stop,
            obs: &mut *obs,
            created: Created::default(),
            deadline: Instant::now() + req.timeout,
            estimate,
            budget,
        }
        .run()
        .await;
        if let Some(name) = files {
            super::configmap::delete(&cluster, &name, &plan.run, stop, obs).await;
        }
        Ok(doc)
    })
}

struct Controller<'a> {
    req: &'a KubeRequest,
    cluster: &'a Cluster,
    plan: &'a Plan,
    stop: &'a Stop,
    obs: &'a mut dyn Observer,
    created: Created,
    /// When the whole run must end (`--timeout`).
    deadline: Instant,
    /// One target's estimated check time, and how long each target may take.
    estimate: Duration,
    budget: Duration,
}

impl Controller<'_> {
    async fn run(mut self) -> KubeDocument {
        let deadline = self.deadline;
        let mut outcomes: Vec<TargetOutcome> =
            self.plan.targets.iter().map(|t| self.outcome(t)).collect();
        let mut queue: VecDeque<usize> = (0..self.plan.targets.len()).collect();
        let mut active: Vec<Active> = Vec::new();
        let mut ended: Option<TargetStatus> = None;
        let mut backoff = Backoff::new();
        loop {
            if self.stop.is_set() {
                ended = Some(TargetStatus::Interrupted);
            } else if Instant::now() >= deadline {
                ended = Some(TargetStatus::TimedOut);
                // A pod that ended just before gives its result; the others time out below.
                (active, _) = self.round(active, &mut outcomes, true).await;
            }
            if let Some(how) = ended {
                self.end_all(how, &mut active, &mut queue, &mut outcomes);
                break;
            }
            while let Some(i) = self.next(&mut queue, &active) {
                match self.start(i).await {
                    Ok(a) => active.push(a),
                    Err(e) => {
                        self.say(i, &format!("could not start: {e}"));
                        outcomes[i].status = TargetStatus::Failed;
                        outcomes[i].reason = Some(e);
                    }
                }
            }
            if active.is_empty() && queue.is_empty() {
                break;
            }
            let fingerprint;
            (active, fingerprint) = self.round(active, &mut outcomes, false).await;
            if active.is_empty() && queue.is_empty() {
                break;
            }
            // Wake for the run's end, or the first target's budget, whichever comes first.
            let soonest = active
                .iter()
                .map(|a| a.deadline)
                .fold(deadline, Instant::min);
            let left = soonest.saturating_duration_since(Instant::now());
            let wait = backoff.next(fingerprint).min(left);
            self.sleep(wait).await;
        }
        self.remove_all().await;
        let mut summary = Summary::default();
        // A kube fio target that ran has no verdicts to count.
        for o in outcomes.iter().filter(|o| o.fio.is_none()) {
            match &o.check {
                Some(doc) => add(&mut summary, &doc.summary),
                None => {
                    // A kube fio target (no profiles) counts as one.
                    let n = self.req.profiles.len().max(1);
                    match o.status {
                        TargetStatus::Interrupted => summary.interrupted += n,
                        TargetStatus::Skipped => summary.skipped += n,
                        _ => summary.errors += n,
                    }
                }
            }
        }
        KubeDocument {
            schema_version: SCHEMA_VERSION,
            iogauge: env!("CARGO_PKG_VERSION").to_string(),
            run_id: self.plan.run.clone(),
            cluster: self.cluster.url.clone(),
            namespace: self.cluster.namespace.clone(),
            profiles: self.req.profiles.clone(),
            outliers: super::fleet::outliers(&outcomes),
            targets: outcomes,
            summary,
        }
    }

    fn say(&mut self, index: usize, what: &str) {
        let t = self.plan.targets[index].describe();
        self.obs.note(&format!("iogauge kube: {t}: {what}"));
    }

    /// Creates the Job, then at once its claim (never waiting for binding: with
    /// WaitForFirstConsumer the claim binds only once the pod is scheduled).
    async fn start(&mut self, index: usize) -> Result<Active, String> {
        let t = &self.plan.targets[index];
        let mut job = manifests::job(
            self.req,
            &self.plan.run,
            t,
            &self.plan.namespace,
            self.plan.footprint,
        );
        // The Job's own deadline is its budget, or what remains of the run's if less, so that a
        // Job outlives a killed iogauge by no more than the run would have lasted.
        if let Some(spec) = job.spec.as_mut() {
            let left = self
                .deadline
                .saturating_duration_since(Instant::now())
                .min(self.budget);
            // Rounded up: a Job must not end before the run's own deadline.
            spec.active_deadline_seconds = Some(left.as_millis().div_ceil(1000).max(1) as i64);
        }
        let created = self.cluster.create_job(&job).await?;
        let name = manifests::object_name(&self.plan.run, t);
        self.created.jobs.push(name.clone());
        let mut claim = None;
        if let Some(c) = manifests::claim(
            self.req,
            &self.plan.run,
            t,
            &self.plan.namespace,
            Some(&created),
        ) {
            if let Err(e) = self.cluster.create_claim(&c).await {
                // The Job's pod would wait for a claim that never comes: delete it at once.
                return Err(match self.cluster.delete_job(&name).await {
                    Ok(()) => {
                        self.created.jobs.retain(|j| j != &name);
                        format!("{e} (job {name} deleted)")
                    }
                    Err(d) => format!("{e}; {d}"),
                });
            }
            self.created.claims.push(name.clone());
            claim = Some(name.clone());
        }
        self.say(index, &format!("job {name} created"));
        Ok(Active {
            index,
            job: name,
            claim,
            job_uid: created.metadata.uid.clone(),
            stuck_since: None,
            said: String::new(),
            ran: false,
            seen: BTreeMap::new(),
            disrupted: HashSet::new(),
            deadline: Instant::now() + self.budget,
            limits_seen: false,
            last_disruption: None,
        })
    }

    /// The next target to start, if one may start now: with `--parallel N`, up to N of any
    /// kind; by default every node target at once (each its own disk) and shared storage
    /// (classes, claims) one at a time, so that they do not measure each other.
    fn next(&self, queue: &mut VecDeque<usize>, active: &[Active]) -> Option<usize> {
        let shared = |i: usize| !matches!(self.plan.targets[i].kind, TargetKind::Node { .. });
        let pos = match self.req.parallel {
            0 => {
                let busy = active.iter().any(|a| shared(a.index));
                queue.iter().position(|&i| !(busy && shared(i)))?
            }
            n if active.len() < n => 0,
            _ => return None,
        };
        queue.remove(pos)
    }

    /// A call failed: said once, and the target goes on waiting.
    fn waiting(&mut self, a: &mut Active, e: String) {
        if a.said != e {
            self.say(a.index, &format!("waiting: {e}"));
            a.said = e;
        }
    }

    /// The pod has ended: its result, from its log.
    async fn finish(&mut self, a: &Active, pod: &Pod, o: &mut TargetOutcome) {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let terminated = pod.status.as_ref().and_then(|s| {
            s.container_statuses
                .as_ref()?
                .first()?
                .state
                .as_ref()?
                .terminated
                .clone()
        });
        let parsed = match self.cluster.log(&name, CONTAINER).await {
            Ok(log) if self.req.preflight.is_some() => match parse_preflight_log(&log) {
                Ok(doc) => {
                    self.say(a.index, &format!("done: {}", collected(&doc)));
                    o.status = TargetStatus::Completed;
                    o.preflight = Some(doc);
                    return;
                }
                Err(e) => Err(e),
            },
            Ok(log) if self.req.fio.is_some() => match super::fio_request::parse_fio_log(&log) {
                Ok((doc, text)) => {
                    let said = super::fio_request::done_line(&doc);
                    self.say(a.index, &format!("done: {said}"));
                    o.status = TargetStatus::Completed;
                    (o.fio, o.fio_text) = (Some(doc), Some(text));
                    return;
                }
                Err(e) => Err(e),
            },
            Ok(log) => parse_check_log(&log),
            Err(e) => Err(e),
        };
        match parsed {
            Ok(doc) => {
                let verdicts: Vec<String> = doc
                    .profiles
                    .iter()
                    .map(|p| format!("{} {}", p.profile, p.verdict.word()))
                    .collect();
                self.say(a.index, &format!("done: {}", verdicts.join(", ")));
                o.status = TargetStatus::Completed;
                o.check = Some(doc);
            }
            Err(e) => {
                let how = match &terminated {
                    // It did print a result, of another version: that is the whole story.
                    _ if super::log::is_other_version(&e) => String::new(),
                    Some(t) => format!(
                        "the pod ended ({}, exit code {}) without a result: ",
                        t.reason.as_deref().unwrap_or("terminated"),
                        t.exit_code
                    ),
                    None => "the pod ended without a result: ".into(),
                };
                let why = super::identity::explain(
                    format!("{how}{e}"),
                    &self.plan.targets[a.index].kind,
                    &self.req.pod.access_mode,
                    &self.req.pod.identity,
                );
                self.say(a.index, &format!("failed: {why}"));
                o.status = TargetStatus::Failed;
                o.reason = Some(why);
            }
        }
    }

    /// Deletes a finished target's Job (its pod goes with it) and fresh claim.
    async fn remove(&mut self, a: &Active) {
        let mut gone = Vec::new();
        // Read first (deleting the Job garbage-collects its claim): the claim's uid proves
        // which volume is ours.
        let bound = match &a.claim {
            Some(c) => self.read_claim(a.index, c).await,
            None => None,
        };
        self.reclaim_retained(a.index, bound.as_ref()).await;
        match self.cluster.delete_job(&a.job).await {
            Ok(()) => {
                self.created.jobs.retain(|j| j != &a.job);
                gone.push(format!("job {}", a.job));
            }
            Err(e) => self.obs.note(&format!("iogauge kube: {e}")),
        }
        if let Some(c) = &a.claim {
            match self.cluster.delete_claim(c).await {
                Ok(()) => {
                    self.created.claims.retain(|x| x != c);
                    gone.push(format!("claim {c}"));
                }
                Err(e) => self.obs.note(&format!("iogauge kube: {e}")),
            }
        }
        if !gone.is_empty() {
            self.say(a.index, &format!("deleted {}", gone.join(" and ")));
        }
    }

    /// Deletes whatever is left (after a stop or a timeout). A second signal leaves at once.
    async fn remove_all(&mut self) {
        if self.created.jobs.is_empty() && self.created.claims.is_empty() {
            // The run's ConfigMap is still to be deleted: only a second signal may leave it.
            self.stop.rearm();
            return;
        }
        if self.stop.is_set() {
            self.obs.note(&format!(
                "iogauge kube: {}: deleting what this run created (press Ctrl-C again to leave it)",
                self.stop.reason()
            ));
            self.stop.rearm();
        }
        // Before any Job goes (its deletion collects its claim): a Retain volume of ours is set
        // to be deleted with the claim, as `remove` does for a finished target.
        for name in self.created.claims.clone() {
            if self.stop.is_set() {
                break;
            }
            let Some(index) = self
                .plan
                .targets
                .iter()
                .position(|t| manifests::object_name(&self.plan.run, t) == name)
            else {
                continue;
            };
            let bound = self.read_claim(index, &name).await;
            self.reclaim_retained(index, bound.as_ref()).await;
        }
        let jobs = std::mem::take(&mut self.created.jobs);
        let claims = std::mem::take(&mut self.created.claims);
        let mut left = Vec::new();
        for (kind, name) in jobs
            .iter()
            .map(|j| ("job", j))
            .chain(claims.iter().map(|c| ("persistentvolumeclaim", c)))
        {
            if self.stop.is_set() {
                left.push(format!("{kind}/{name}"));
                continue;
            }
            let call = async {
                match kind {
                    "job" => self.cluster.delete_job(name).await,
                    _ => self.cluster.delete_claim(name).await,
                }
            };
            let r = tokio::select! {
                r = call => r,
                _ = wait_for(self.stop) => Err("a second signal".into()),
            };
            if let Err(e) = r {
                self.obs.note(&format!("iogauge kube: {e}"));
                left.push(format!("{kind}/{name}"));
            }
        }
        if !left.is_empty() {
            self.obs.note(&format!(
                "iogauge kube: left in namespace {}: {}; delete them with: iogauge kube cleanup \
                 --namespace {} --run {} (or kubectl delete job,pvc -n {} -l {}={})",
                self.plan.namespace,
                left.join(", "),
                self.plan.namespace,
                self.plan.run,
                self.plan.namespace,
                RUN_LABEL,
                self.plan.run
            ));
        }
    }

    /// Sleeps, waking early for a signal.
    async fn sleep(&self, d: Duration) {
        tokio::select! {
            _ = tokio::time::sleep(d) => {},
            _ = wait_for(self.stop) => {},
        }
    }
}

/// Resolves when the stop flag is set (checked every 50 ms: signals only set a flag).
async fn wait_for(stop: &Stop) {
    while !stop.is_set() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn add(total: &mut Summary, s: &Summary) {
    total.passed += s.passed;
    total.warned += s.warned;
    total.failed += s.failed;
    total.errors += s.errors;
    total.interrupted += s.interrupted;
    total.skipped += s.skipped;
}
