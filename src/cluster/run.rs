//! The controller: find the targets, then for each one create its Job (and fresh claim), follow
//! its pod until it has a result or cannot start, read the result from the pod's log, and delete
//! what was created. Deletion also happens on timeout and on the first SIGINT/SIGTERM; a second
//! signal leaves at once and says what remains.

use super::client::Cluster;
use super::diagnose::{diagnose, imposed_limits, Diagnosis, Observed};
use super::log::parse_check_log;
use super::manifests::{self, CONTAINER, RUN_LABEL, TARGET_LABEL};
use super::plan::{plan, Plan};
use super::quantity::format_bytes;
use super::request::KubeRequest;
use super::targets::{Target, TargetKind};
use super::KubeError;
use crate::report::document::{
    KubeDocument, Summary, TargetOutcome, TargetStatus, TargetType, SCHEMA_VERSION,
};
use crate::run::stop::Stop;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How often a running target's pod is looked at.
const POLL: Duration = Duration::from_millis(1000);

/// What the caller shows while a run goes on (the CLI: lines on stderr).
pub(crate) use crate::observer::Observer;

fn runtime() -> Result<tokio::runtime::Runtime, KubeError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| KubeError::Cluster(format!("cannot start the async runtime: {e}")))
}

/// `--dry-run`: the plan, asking the cluster only to find the targets when it must.
pub(crate) fn dry_run(req: &KubeRequest) -> Result<(Plan, String), KubeError> {
    runtime()?.block_on(async {
        let cluster = if req.targets.needs_discovery() || !req.targets.claims.is_empty() {
            Some(connect(req).await?)
        } else {
            None
        };
        let namespace = match &cluster {
            Some(c) => c.namespace.clone(),
            None => req.namespace.clone().unwrap_or_else(|| "default".into()),
        };
        let plan = plan(req, cluster.as_ref(), namespace).await?;
        let yaml = plan.yaml(req).map_err(KubeError::Cluster)?;
        Ok((plan, yaml))
    })
}

async fn connect(req: &KubeRequest) -> Result<Cluster, KubeError> {
    Cluster::connect(
        req.kubeconfig.as_deref(),
        req.context.as_deref(),
        req.namespace.as_deref(),
    )
    .await
    .map_err(KubeError::Cluster)
}

/// One target while it runs.
struct Active {
    index: usize,
    job: String,
    /// The fresh claim this run created, deleted with the Job.
    claim: Option<String>,
    stuck_since: Option<Instant>,
    said: String,
    /// Whether the pod's limits were compared with those asked for.
    limits_seen: bool,
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
        if plan.targets.is_empty() {
            return Err(KubeError::Usage(
                "no targets: name --storage-class, --all-storage-classes, --claim or --nodes with --host-path".into(),
            ));
        }
        obs.note(&format!(
            "iogauge kube: run {} in namespace {} of {}: {} target(s), {} at a time; delete \
             leftovers with: iogauge kube cleanup --run {}",
            plan.run,
            cluster.namespace,
            cluster.url,
            plan.targets.len(),
            req.parallel,
            plan.run
        ));
        Ok(Controller {
            req,
            cluster: &cluster,
            plan: &plan,
            stop,
            obs,
            created: Created::default(),
            deadline: Instant::now() + req.timeout,
        }
        .run()
        .await)
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
}

impl Controller<'_> {
    async fn run(mut self) -> KubeDocument {
        let deadline = self.deadline;
        let mut outcomes: Vec<TargetOutcome> =
            self.plan.targets.iter().map(|t| self.outcome(t)).collect();
        let mut queue: VecDeque<usize> = (0..self.plan.targets.len()).collect();
        let mut active: Vec<Active> = Vec::new();
        let mut ended: Option<TargetStatus> = None;
        loop {
            if self.stop.is_set() {
                ended = Some(TargetStatus::Interrupted);
            } else if Instant::now() >= deadline {
                ended = Some(TargetStatus::TimedOut);
            }
            if let Some(how) = ended {
                for a in active.drain(..) {
                    let o = &mut outcomes[a.index];
                    o.status = how;
                    o.reason = Some(match how {
                        TargetStatus::TimedOut => format!(
                            "--timeout {}s passed while it ran ({})",
                            self.req.timeout.as_secs(),
                            a.said
                        ),
                        _ => format!("stopped by {} while it ran", self.stop.reason()),
                    });
                }
                for i in queue.drain(..) {
                    outcomes[i].status = TargetStatus::Skipped;
                    outcomes[i].reason = Some(match how {
                        TargetStatus::TimedOut => "not started: --timeout passed before".into(),
                        _ => format!("not started: stopped by {}", self.stop.reason()),
                    });
                }
                break;
            }
            while active.len() < self.req.parallel.max(1) {
                let Some(i) = queue.pop_front() else { break };
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
            let mut still = Vec::with_capacity(active.len());
            for mut a in active.drain(..) {
                let i = a.index;
                match self.step(&mut a, &mut outcomes[i]).await {
                    true => self.remove(&a).await,
                    false => still.push(a),
                }
            }
            active = still;
            if active.is_empty() && queue.is_empty() {
                break;
            }
            self.sleep(POLL).await;
        }
        self.remove_all().await;
        let mut summary = Summary::default();
        for o in &outcomes {
            match &o.check {
                Some(doc) => add(&mut summary, &doc.summary),
                None => {
                    let n = self.req.profiles.len();
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
            targets: outcomes,
            summary,
        }
    }

    /// The outcome as known before the run: the target's description, status Skipped.
    fn outcome(&self, t: &Target) -> TargetOutcome {
        let job = manifests::object_name(&self.plan.run, t);
        let mut o = TargetOutcome {
            target: t.describe(),
            kind: TargetType::StorageClass,
            storage_class: None,
            provisioner: None,
            volume_binding_mode: None,
            claim: None,
            claim_size: None,
            node: None,
            host_path: None,
            job: job.clone(),
            status: TargetStatus::Skipped,
            reason: None,
            check: None,
        };
        match &t.kind {
            TargetKind::StorageClass {
                class,
                provisioner,
                binding_mode,
                claim_bytes,
            } => {
                o.storage_class = Some(class.clone());
                o.provisioner = provisioner.clone();
                o.volume_binding_mode = binding_mode.clone();
                o.claim = Some(job);
                o.claim_size = Some(format_bytes(*claim_bytes));
            }
            TargetKind::Claim {
                name,
                storage_class,
                capacity,
            } => {
                o.kind = TargetType::Claim;
                o.storage_class = storage_class.clone();
                o.claim = Some(name.clone());
                o.claim_size = capacity.map(format_bytes);
            }
            TargetKind::Node {
                name, host_path, ..
            } => {
                o.kind = TargetType::Node;
                o.node = Some(name.clone());
                o.host_path = Some(host_path.clone());
            }
        }
        o
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
        // The Job's own deadline is what remains of the run's, so that a Job outlives a killed
        // iogauge by no more than the run would have lasted.
        if let Some(spec) = job.spec.as_mut() {
            let left = self.deadline.saturating_duration_since(Instant::now());
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
            self.cluster.create_claim(&c).await?;
            self.created.claims.push(name.clone());
            claim = Some(name.clone());
        }
        self.say(index, &format!("job {name} created"));
        Ok(Active {
            index,
            job: name,
            claim,
            stuck_since: None,
            said: String::new(),
            limits_seen: false,
        })
    }

    /// Looks at a target once. true: it has ended (the outcome is filled in).
    async fn step(&mut self, a: &mut Active, o: &mut TargetOutcome) -> bool {
        match self.look(a, o).await {
            Ok(done) => done,
            Err(e) => {
                // One failed call is not the end: the API server may be busy. Said once.
                if a.said != e {
                    self.say(a.index, &format!("waiting: {e}"));
                    a.said = e;
                }
                false
            }
        }
    }

    async fn look(&mut self, a: &mut Active, o: &mut TargetOutcome) -> Result<bool, String> {
        let selector = format!(
            "{},{TARGET_LABEL}={}",
            manifests::selector(Some(&self.plan.run)),
            self.plan.targets[a.index].slug
        );
        let pods = self.cluster.pods(&selector).await?;
        let pod = newest(&pods);
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
                }
            }
        }
        match (pod, phase.as_str()) {
            (Some(p), "Succeeded" | "Failed") => {
                self.finish(a, p, o).await;
                Ok(true)
            }
            (Some(_), "Running") => {
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
        let job_events = match pod {
            None => self.cluster.events(&a.job).await?,
            Some(_) => Vec::new(),
        };
        let pod_events = match pod.and_then(|p| p.metadata.name.clone()) {
            Some(n) => self.cluster.events(&n).await?,
            None => Vec::new(),
        };
        let claim_name = match &self.plan.targets[a.index].kind {
            TargetKind::Claim { name, .. } => Some(name.clone()),
            _ => a.claim.clone(),
        };
        let (claim, claim_events): (Option<PersistentVolumeClaim>, _) = match &claim_name {
            Some(n) => (self.cluster.claim(n).await?, self.cluster.events(n).await?),
            None => (None, Vec::new()),
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
                    Some(t) => format!(
                        "the pod ended ({}, exit code {}) without a result: ",
                        t.reason.as_deref().unwrap_or("terminated"),
                        t.exit_code
                    ),
                    None => "the pod ended without a result: ".into(),
                };
                let why = format!("{how}{e}");
                self.say(a.index, &format!("failed: {why}"));
                o.status = TargetStatus::Failed;
                o.reason = Some(why);
            }
        }
    }

    /// Deletes a finished target's Job (its pod goes with it) and fresh claim.
    async fn remove(&mut self, a: &Active) {
        let mut gone = Vec::new();
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
            return;
        }
        if self.stop.is_set() {
            self.obs.note(&format!(
                "iogauge kube: {}: deleting what this run created (press Ctrl-C again to leave it)",
                self.stop.reason()
            ));
            self.stop.rearm();
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

/// The most recently created pod (a Job with backoffLimit 0 has one, but a deleted pod may
/// linger while it terminates).
fn newest(pods: &[Pod]) -> Option<&Pod> {
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .max_by_key(|p| p.metadata.creation_timestamp.clone().map(|t| t.0))
}

fn add(total: &mut Summary, s: &Summary) {
    total.passed += s.passed;
    total.warned += s.warned;
    total.failed += s.failed;
    total.errors += s.errors;
    total.interrupted += s.interrupted;
    total.skipped += s.skipped;
}
