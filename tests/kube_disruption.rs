//! `iogauge kube` when the cluster takes a pod away (kubelet eviction, scheduler preemption),
//! how often it asks the API server, and which targets run at once: against the fake API server
//! (tests/common/fake_kube/disruption.rs plays the kubelet's and scheduler's side, and the job
//! controller's podFailurePolicy).
#![allow(clippy::unwrap_used)]

use crate::common;
use common::kube::{assert_nothing_left, run_json};

use common::fake_kube::{
    BindingMode, FakeKube, NodeSeed, Scenario, StorageClassSeed, EVICTION_MESSAGE,
};
use iogauge::report::document::{KubeDocument, TargetStatus};
use std::path::Path;

fn cluster(dir: &Path, scenarios: &[(&str, Scenario)], nodes: &[&str]) -> FakeKube {
    let mut b = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .storage_class(StorageClassSeed::new(
            "fast",
            "ebs.csi.aws.com",
            BindingMode::Immediate,
        ))
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::WaitForFirstConsumer,
        ));
    for n in nodes {
        b = b.node(NodeSeed::new(n).label("disk", "local"));
    }
    for (target, s) in scenarios {
        b = b.scenario_for(target, s.clone());
    }
    b.start()
}

/// The eviction message as the controller quotes it (trimmed).
fn evicted() -> String {
    format!("evicted from node node-1 ({})", EVICTION_MESSAGE.trim_end())
}

/// `iogauge kube check ARGS --format json`: (exit code, document, stderr).
fn run(fake: &FakeKube, dir: &Path, args: &[&str]) -> (i32, KubeDocument, String) {
    run_json(fake, dir, &[&["check"], args].concat())
}

#[test]
fn an_evicted_pod_is_replaced_and_its_replacement_gives_the_result() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::Evict(1))], &[]);
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &["etcd", "--storage-class", "fast", "--scale", "0.02"],
    );
    assert_ne!(code, 1, "{err}");
    let t = &doc.targets[0];
    assert_eq!(t.status, TargetStatus::Completed, "{err}");
    assert!(t.check.is_some());
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class fast: {}; the Job starts another pod (1 of 2 retries)\n",
            evicted()
        )),
        "{err}"
    );
    // The evicted pod's log was never read as the result.
    assert!(!err.contains("ContainerStatusUnknown"), "{err}");
    assert_eq!(fake.created("Pod").len(), 2, "{:#?}", fake.history());
    assert_nothing_left(&fake);
}

#[test]
fn a_target_evicted_three_times_fails_saying_so_and_the_next_one_runs() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        &[("fast", Scenario::Evict(3)), ("standard", Scenario::Run)],
        &[],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
        ],
    );
    // 1 for the failed target, or 3 when the other one's etcd FAILs on this disk.
    assert!(code == 1 || code == 3, "{code}: {err}");
    let why = format!(
        "{}; disrupted 3 times, more than the 2 retries allowed (run it again when the node is \
         calmer, or on another node)",
        evicted()
    );
    assert_eq!(doc.targets[0].status, TargetStatus::Failed, "{err}");
    assert_eq!(doc.targets[0].reason.as_deref(), Some(why.as_str()));
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class fast: failed: {why}\n"
        )),
        "{err}"
    );
    assert!(err.contains("(2 of 2 retries)"), "{err}");
    assert_eq!(doc.targets[1].status, TargetStatus::Completed, "{err}");
    assert_nothing_left(&fake);
}

#[test]
fn a_preempted_pod_says_so_and_is_replaced() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        &[("fast", Scenario::Preempt(1)), ("standard", Scenario::Run)],
        &[],
    );
    // A run long enough to be under way when the pod is preempted.
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "sync-iops",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
            "--duration",
            "3s",
        ],
    );
    assert_ne!(code, 1, "{err}");
    assert!(
        err.contains(
            "iogauge kube: storage class fast: preempted on node node-1 by a higher-priority \
             pod; the Job starts another pod (1 of 2 retries)\n"
        ),
        "{err}"
    );
    assert!(
        !err.contains("the Job failed before its pod started"),
        "{err}"
    );
    assert!(doc
        .targets
        .iter()
        .all(|t| t.status == TargetStatus::Completed));
    assert!(fake
        .history()
        .iter()
        .any(|l| l.starts_with("preempted Pod/")));
    assert_nothing_left(&fake);
}

#[test]
fn waiting_targets_cost_about_one_request_a_second_and_events_go_by_uid() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        &[
            ("fast", Scenario::Hang),
            ("standard", Scenario::Unschedulable("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.".into())),
        ],
        &[],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--parallel",
            "2",
            "--timeout",
            "12s",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(doc
        .targets
        .iter()
        .all(|t| t.status == TargetStatus::TimedOut));
    // The unschedulable target never ran: the timeout says what it was waiting for.
    let why = doc.targets[1].reason.as_deref().unwrap();
    assert!(
        why.starts_with("--timeout 12s passed before its pod ran (no node can run the pod: 0/1 nodes are available: 1 Insufficient cpu."),
        "{why}"
    );
    let requests = fake.requests();
    let gets: Vec<_> = requests.iter().filter(|r| r.method == "GET").collect();
    // Before: a pod list per target every second, plus three more calls a second for the
    // waiting one (about 60 GETs in 12 s). Now one list per round for both, and the waiting
    // one's pod events, claim and claim events, the rounds backing off from 1 s to 5 s while
    // nothing changes (30 GETs, 6 rounds, when measured).
    let rate = gets.len() as f64 / 12.0;
    assert!(rate <= 3.0, "{} GETs in 12 s: {:#?}", gets.len(), gets);
    let pod_lists = gets.iter().filter(|r| r.path.ends_with("/pods")).count();
    assert!(pod_lists <= 8, "{pod_lists} pod lists");
    let events: Vec<String> = gets
        .iter()
        .filter(|r| r.path.ends_with("/events"))
        .map(|r| r.param("fieldSelector").unwrap_or_default())
        .collect();
    assert!(!events.is_empty());
    assert!(
        events.iter().all(|f| f.starts_with("involvedObject.uid=")),
        "{events:?}"
    );
    assert_nothing_left(&fake);
}

#[test]
fn node_targets_run_at_once_and_shared_storage_one_at_a_time() {
    common::serial();
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[], &["worker-1", "worker-2", "worker-3"]);
    let host = common::scratch();
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--nodes",
            "disk=local",
            "--host-path",
            host.path().to_str().unwrap(),
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
        ],
    );
    assert_ne!(code, 1, "{err}");
    assert_eq!(doc.targets.len(), 5);
    assert!(
        doc.targets
            .iter()
            .all(|t| t.status == TargetStatus::Completed),
        "{err}"
    );
    assert!(err.contains(
        "5 target(s), node targets at once, shared storage one at a time (--parallel N caps both)"
    ), "{err}");
    let h = fake.history();
    let first_finish = h
        .iter()
        .position(|l| l.starts_with("finished Pod/"))
        .unwrap();
    let started_nodes = h[..first_finish]
        .iter()
        .filter(|l| l.starts_with("started Pod/") && l.contains("worker-"))
        .count();
    assert_eq!(started_nodes, 3, "{h:#?}");
    // The two classes never overlap.
    let job = |class: &str| {
        doc.targets
            .iter()
            .find(|t| t.storage_class.as_deref() == Some(class))
            .unwrap()
            .job
            .clone()
    };
    let (fast, standard) = (job("fast"), job("standard"));
    let fast_done = h
        .iter()
        .position(|l| l.starts_with(&format!("finished Pod/{fast}")))
        .unwrap();
    let standard_start = h
        .iter()
        .position(|l| l.starts_with(&format!("started Pod/{standard}")))
        .unwrap();
    assert!(fast_done < standard_start, "{h:#?}");
    assert_nothing_left(&fake);
}

#[test]
fn a_target_over_its_budget_times_out_and_the_next_one_runs() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        &[("fast", Scenario::Hang), ("standard", Scenario::Run)],
        &[],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
            "--target-timeout",
            "4s",
        ],
    );
    assert!(code == 1 || code == 3, "{code}: {err}");
    let why = "--target-timeout 4s passed while it ran (running on node node-1)";
    assert_eq!(doc.targets[0].status, TargetStatus::TimedOut, "{err}");
    assert_eq!(doc.targets[0].reason.as_deref(), Some(why));
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class fast: timed out: {why}\n"
        )),
        "{err}"
    );
    // Its Job carried the budget too.
    let job = &fake.created("Job")[0];
    assert_eq!(job["spec"]["activeDeadlineSeconds"], 4);
    assert_eq!(doc.targets[1].status, TargetStatus::Completed, "{err}");
    assert_nothing_left(&fake);
}

#[test]
fn the_estimate_is_said_up_front_with_a_warning_when_it_cannot_fit() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::Hang)], &[]);
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--timeout",
            "2s",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "iogauge kube: each target should take about 51 s (21 s of checks, 30 s to start), \
             the run about 102 s; a target is given up after 162 s\n\
             iogauge kube: warning: the run should take about 102 s (2 target(s), node targets \
             at once, shared storage one at a time (--parallel N caps both)), more than \
             --timeout 2s: the targets left when it passes are skipped; raise --timeout or \
             --parallel, or shorten the checks with --duration or --scale\n"
        ),
        "{err}"
    );
    // Said before anything was created.
    let warned = err.find("warning: the run").unwrap();
    assert!(err.find("job iogauge-").unwrap() > warned, "{err}");
    assert_eq!(doc.targets[1].status, TargetStatus::Skipped);
    // The value, as the other --timeout reasons say it.
    assert_eq!(
        doc.targets[1].reason.as_deref(),
        Some("not started: --timeout 2s passed before")
    );
    assert_nothing_left(&fake);
}

#[test]
fn a_drained_pod_says_so_and_is_replaced() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::Drain(1))], &[]);
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "sync-iops",
            "--storage-class",
            "fast",
            "--scale",
            "0.02",
            "--duration",
            "3s",
        ],
    );
    assert_ne!(code, 1, "{err}");
    assert!(
        err.contains(
            "iogauge kube: storage class fast: evicted from node node-1 through the Eviction API \
             (a drain, or a descheduler); the Job starts another pod (1 of 2 retries)\n"
        ),
        "{err}"
    );
    assert_eq!(doc.targets[0].status, TargetStatus::Completed, "{err}");
    assert!(fake.history().iter().any(|l| l.starts_with("drained Pod/")));
    assert_nothing_left(&fake);
}

// --- review fixes ---

/// A kubelet eviction on a cluster before 1.26 (no DisruptionTarget condition): the Job's
/// FailJob rule ends the Job, so the target fails in the eviction's words, not as a Job that
/// "failed before its pod started", and the run moves on.
#[test]
fn a_legacy_eviction_fails_its_target_in_its_own_words_and_the_next_one_runs() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        &[
            ("fast", Scenario::EvictLegacy(1)),
            ("standard", Scenario::Run),
        ],
        &[],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
        ],
    );
    assert!(code == 1 || code == 3, "{code}: {err}");
    let why = format!(
        "{}; the cluster has no DisruptionTarget condition (Kubernetes before 1.26), so the Job \
         cannot retry it",
        evicted()
    );
    assert_eq!(doc.targets[0].status, TargetStatus::Failed, "{err}");
    assert_eq!(doc.targets[0].reason.as_deref(), Some(why.as_str()));
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class fast: failed: {why}\n"
        )),
        "{err}"
    );
    assert!(!err.contains("before its pod started"), "{err}");
    // The Job failed through its podFailurePolicy: one pod, no replacement.
    assert_eq!(
        fake.created("Pod")
            .iter()
            .filter(|p| p["metadata"]["name"].as_str().unwrap().contains("-fast-"))
            .count(),
        1
    );
    assert_eq!(doc.targets[1].status, TargetStatus::Completed, "{err}");
    assert_nothing_left(&fake);
}

/// A drain deletes the pod gracefully: iogauge in it gets SIGTERM and ends by itself, printing
/// an interrupted document and exiting 1, so the pod is Failed with its DisruptionTarget
/// condition, the Job's Ignore rule applies and a new pod gives the result. (A pod that exited
/// 0 would have Succeeded and completed the Job with no result.)
#[test]
fn a_drained_pod_ends_on_sigterm_with_exit_1_and_the_job_starts_another() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        &[("fast", Scenario::Drain(1)), ("standard", Scenario::Run)],
        &[],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "sync-iops",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
            "--duration",
            "3s",
        ],
    );
    assert_ne!(code, 1, "{err}");
    let history = fake.history();
    let drained = history
        .iter()
        .find_map(|l| l.strip_prefix("drained Pod/"))
        .unwrap_or_else(|| panic!("{history:?}"))
        .to_string();
    // Its own process ended it, after the drain: the interrupted check's exit code.
    assert!(
        fake.happened_before(
            &format!("drained Pod/{drained}"),
            &format!("finished Pod/{drained} exit 1")
        ),
        "{history:?}"
    );
    assert!(
        err.contains(
            "iogauge kube: storage class fast: evicted from node node-1 through the Eviction API \
             (a drain, or a descheduler); the Job starts another pod (1 of 2 retries)\n"
        ),
        "{err}"
    );
    assert!(doc
        .targets
        .iter()
        .all(|t| t.status == TargetStatus::Completed));
    assert_nothing_left(&fake);
}
