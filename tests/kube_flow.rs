//! `iogauge kube` against the fake API server (tests/common/fake_kube/mod.rs), which stands in for a
//! cluster: it stores what iogauge creates and plays the job controller, scheduler and kubelet by
//! script. In `Scenario::Run` the pod's command runs for real, with this build's binary and a real
//! directory for the volume, so the manifest's command line, the log and its parsing are real.
//! What the fake does not model is listed at the top of fake_kube.rs and in docs/KUBERNETES.md.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::fake_kube::{BindingMode, FakeKube, Scenario, StorageClassSeed};
use common::kube::{
    assert_nothing_left, assert_rbac_allows, cluster, deletes, document, run, spawn, wait_running,
    IMAGE,
};
use iogauge::report::document::{CheckVerdict, TargetStatus};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn a_normal_run_measures_each_class_and_deletes_everything() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
    );
    let doc = document(&out);
    assert_eq!(doc.targets.len(), 2, "{err}");
    assert_eq!(doc.namespace, fake.namespace());
    assert_eq!(
        doc.cluster.trim_end_matches('/'),
        fake.url().trim_end_matches('/')
    );
    let mut worst = CheckVerdict::Pass;
    for (t, (class, provisioner, mode)) in doc.targets.iter().zip([
        ("fast", "ebs.csi.aws.com", "Immediate"),
        ("standard", "rancher.io/local-path", "WaitForFirstConsumer"),
    ]) {
        assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
        assert_eq!(t.storage_class.as_deref(), Some(class));
        assert_eq!(t.provisioner.as_deref(), Some(provisioner));
        assert_eq!(t.volume_binding_mode.as_deref(), Some(mode));
        assert_eq!(t.claim_size.as_deref(), Some("1Gi"));
        assert!(t.node.is_some());
        let check = t.check.as_ref().unwrap();
        let etcd = &check.profiles[0];
        assert_eq!(etcd.profile, "etcd");
        // Whatever this disk earns, but a measured verdict with a real p99.
        assert!(
            matches!(
                etcd.verdict,
                CheckVerdict::Pass | CheckVerdict::Warn | CheckVerdict::Fail
            ),
            "{etcd:?}"
        );
        assert!(etcd.value.unwrap() > 0.0);
        assert!(etcd.shortened);
        worst = worst.max(etcd.verdict);
        // The pod's view of its volume: the directory the fake gave it, now empty again.
        let d = Path::new(check.context.directory.as_deref().unwrap());
        assert!(d.starts_with(dir.path()), "{}", d.display());
        common::assert_empty(d);
    }
    let want = match worst {
        CheckVerdict::Pass => 0,
        CheckVerdict::Warn => 4,
        _ => 3,
    };
    assert_eq!(code, want, "{err}");
    assert_eq!(
        doc.summary.passed + doc.summary.warned + doc.summary.failed,
        2
    );
    // WaitForFirstConsumer: the pod existed before its claim bound, and nothing waited for it.
    let standard = &doc.targets[1].job;
    assert!(
        fake.happened_before(
            "created Pod/",
            &format!("bound PersistentVolumeClaim/{standard}")
        ),
        "{:#?}",
        fake.history()
    );
    // Left to the scheduler: no nodeName, no node chosen in advance.
    for job in fake.created("Job") {
        let pod = &job["spec"]["template"]["spec"];
        assert!(pod.get("nodeName").is_none());
        // Only the image's platform (tests/kube_image_use.rs), no node.
        let platform = pod["nodeSelector"].as_object().unwrap();
        assert_eq!(
            platform.keys().collect::<Vec<_>>(),
            ["kubernetes.io/arch", "kubernetes.io/os"]
        );
    }
    // Each claim is owned by its Job, and both were deleted by iogauge, Jobs in the background.
    for claim in fake.created("PersistentVolumeClaim") {
        let owner = &claim["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "Job");
        assert_eq!(owner["name"], claim["metadata"]["name"]);
        assert!(owner["uid"].as_str().is_some_and(|u| !u.is_empty()));
    }
    let sent = deletes(&fake);
    for t in &doc.targets {
        assert!(sent.contains(&format!("jobs/{}", t.job)), "{sent:?}");
        assert!(
            sent.contains(&format!("persistentvolumeclaims/{}", t.job)),
            "{sent:?}"
        );
    }
    for r in fake.requests().iter().filter(|r| r.method == "DELETE") {
        if r.path.contains("/jobs/") {
            assert_eq!(r.body.as_ref().unwrap()["propagationPolicy"], "Background");
        }
    }
    assert!(
        err.contains("iogauge kube: storage class fast: done: etcd "),
        "{err}"
    );
    assert_nothing_left(&fake);
    assert_rbac_allows(&fake.requests());
}

#[test]
fn the_table_shows_targets_by_profile() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "small-files",
            "--storage-class",
            "fast",
            "--scale",
            "0.05",
        ],
    );
    assert!([0, 3, 4].contains(&code), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let head: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(head, ["TARGET", "NODE", "etcd", "small-files"]);
    assert!(
        lines[1].starts_with("storage class fast  worker-1  "),
        "{out}"
    );
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    assert!(["PASS", "WARN", "FAIL"].contains(&cells[4]), "{out}");
    assert!(cells[6] == "ms" || cells[6] == "µs", "{out}");
    assert!(
        out.contains("storage class fast: ebs.csi.aws.com, Immediate, claim iogauge-"),
        "{out}"
    );
    assert!(out.lines().last().unwrap().contains(" passed, "), "{out}");
}

#[test]
fn control_plane_nodes_need_the_toleration_and_say_so() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let host = common::scratch();
    let host_path = host.path().to_str().unwrap();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--nodes",
            "node-role.kubernetes.io/control-plane",
            "--host-path",
            host_path,
            "--pending-timeout",
            "2s",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let doc = document(&out);
    let t = &doc.targets[0];
    assert_eq!(t.node.as_deref(), Some("cp-1"));
    assert_eq!(t.status, TargetStatus::Failed);
    let why = t.reason.as_deref().unwrap();
    assert!(
        why.starts_with("no node can run the pod: 0/2 nodes are available: "),
        "{why}"
    );
    assert!(why.contains("untolerated taint"), "{why}");
    assert!(
        why.ends_with(
            "(add --tolerate-control-plane to run on control-plane nodes) (gave up after 2 s; --pending-timeout sets how long to wait)"
        ),
        "{why}"
    );
    // Said while waiting, before giving up.
    assert!(
        err.contains("node cp-1: waiting: no node can run the pod"),
        "{err}"
    );
    assert!(deletes(&fake).contains(&format!("jobs/{}", t.job)));
    assert_nothing_left(&fake);

    // With the toleration it runs there, selected by its hostname label, never by nodeName.
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--nodes",
            "node-role.kubernetes.io/control-plane",
            "--host-path",
            host_path,
            "--tolerate-control-plane",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
    );
    assert!([0, 3, 4].contains(&code), "{err}");
    let doc = document(&out);
    let t = &doc.targets[0];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}", t.reason);
    assert_eq!(t.host_path.as_deref(), Some(host_path));
    let job = fake
        .created("Job")
        .into_iter()
        .find(|j| j["metadata"]["name"] == t.job.as_str())
        .unwrap();
    let pod = &job["spec"]["template"]["spec"];
    assert!(pod.get("nodeName").is_none());
    assert_eq!(pod["nodeSelector"]["kubernetes.io/hostname"], "cp-1");
    assert_eq!(pod["volumes"][0]["hostPath"]["path"], host_path);
    assert_nothing_left(&fake);
    assert_rbac_allows(&fake.requests());
}

#[test]
fn an_image_that_cannot_be_pulled_fails_fast_and_is_cleaned_up() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::ImagePull)]);
    let t0 = Instant::now();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    // Well before --pending-timeout's 60 s: the back-off is final.
    assert!(t0.elapsed() < Duration::from_secs(20));
    let t = &document(&out).targets[0];
    assert_eq!(t.status, TargetStatus::Failed);
    let why = t.reason.as_deref().unwrap();
    assert!(
        why.starts_with(&format!(
            "cannot pull the image '{IMAGE}' (ImagePullBackOff): "
        )),
        "{why}"
    );
    assert!(why.ends_with("check --image, and --image-pull-secret for a private registry"));
    let sent = deletes(&fake);
    assert!(sent.contains(&format!("jobs/{}", t.job)), "{sent:?}");
    assert!(
        sent.contains(&format!("persistentvolumeclaims/{}", t.job)),
        "{sent:?}"
    );
    assert_nothing_left(&fake);
}

#[test]
fn admission_refusals_and_failed_provisioning_are_named() {
    let dir = common::scratch();
    let host = common::scratch();
    // One cluster each: the fake picks a pod's scenario by its claim's class only once the claim
    // exists, else by its node, so mixing the two in one cluster races on a busy machine.
    let fake = cluster(
        dir.path(),
        &[(
            "worker-1",
            Scenario::Forbidden(
                "violates PodSecurity \"restricted:latest\": restricted volume types (volume \"data\" uses restricted volume type \"hostPath\")".into(),
            ),
        )],
    );
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--nodes",
            "kubernetes.io/hostname=worker-1",
            "--host-path",
            host.path().to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let doc = document(&out);
    assert_eq!(
        doc.targets[0].reason.as_deref(),
        Some("Pod Security admission (restricted:latest) refused the pod: restricted volume types (volume \"data\" uses restricted volume type \"hostPath\")")
    );
    assert_eq!(doc.summary.errors, 1);
    assert_nothing_left(&fake);

    let fake = cluster(
        dir.path(),
        &[(
            "standard",
            Scenario::ProvisioningFailed("no space left in the pool".into()),
        )],
    );
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "standard",
            // Long enough for the provisioner's event to arrive on a busy machine: until it
            // does, the pod's "unbound claims" is all there is to say.
            "--pending-timeout",
            "3s",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let doc = document(&out);
    let class = &doc.targets[0];
    let why = class.reason.as_deref().unwrap();
    assert!(
        why.starts_with(&format!(
            "the claim {} is not provisioned: no space left in the pool",
            class.job
        )),
        "{why}"
    );
    assert_nothing_left(&fake);
}

#[test]
fn a_timeout_ends_the_run_and_deletes_what_it_created() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::Hang)]);
    let t0 = Instant::now();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--timeout",
            "3s",
            "--format",
            "json",
        ],
    );
    assert!(t0.elapsed() < Duration::from_secs(15));
    assert_eq!(code, 1, "{err}");
    let doc = document(&out);
    assert_eq!(doc.targets[0].status, TargetStatus::TimedOut);
    assert!(doc.targets[0]
        .reason
        .as_deref()
        .unwrap()
        .starts_with("--timeout 3s passed while it ran (running on node "));
    // One at a time by default: the second never started.
    assert_eq!(doc.targets[1].status, TargetStatus::Skipped);
    assert_eq!(fake.created("Job").len(), 1);
    assert_eq!(doc.summary.errors, 1);
    assert_eq!(doc.summary.skipped, 1);
    let job = &doc.targets[0].job;
    let activedeadline = &fake.created("Job")[0]["spec"]["activeDeadlineSeconds"];
    assert_eq!(activedeadline, 3);
    assert!(deletes(&fake).contains(&format!("jobs/{job}")));
    assert_nothing_left(&fake);
}

#[test]
fn parallel_targets_run_at_once() {
    let dir = common::scratch();
    let fake = cluster(
        dir.path(),
        &[("fast", Scenario::Hang), ("standard", Scenario::Hang)],
    );
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--all-storage-classes",
            "--parallel",
            "2",
            "--timeout",
            "3s",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let doc = document(&out);
    assert_eq!(doc.targets.len(), 2);
    assert!(doc
        .targets
        .iter()
        .all(|t| t.status == TargetStatus::TimedOut));
    assert_eq!(fake.created("Job").len(), 2);
    assert_nothing_left(&fake);
}

#[test]
fn ctrl_c_in_the_middle_deletes_everything_and_reports_the_interruption() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::Hang)]);
    let child = spawn(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
            "--format",
            "json",
        ],
    );
    wait_running(&fake);
    // SAFETY: kill(2) on our own child's pid, with a valid signal number.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10));
    let err = common::text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "iogauge kube: SIGINT: deleting what this run created (press Ctrl-C again to leave it)"
        ),
        "{err}"
    );
    assert!(err.contains("iogauge kube: interrupted by SIGINT"), "{err}");
    let doc = document(&common::text(&out.stdout));
    assert_eq!(doc.targets[0].status, TargetStatus::Interrupted);
    assert_eq!(doc.targets[1].status, TargetStatus::Skipped);
    let job = &doc.targets[0].job;
    let sent = deletes(&fake);
    assert!(sent.contains(&format!("jobs/{job}")), "{sent:?}");
    assert!(
        sent.contains(&format!("persistentvolumeclaims/{job}")),
        "{sent:?}"
    );
    assert_nothing_left(&fake);
}

#[test]
fn a_second_ctrl_c_leaves_at_once_and_says_what_remains() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(StorageClassSeed::new("fast", "p", BindingMode::Immediate))
        .scenario(Scenario::Hang)
        .delete_delay(Duration::from_secs(30))
        .start();
    let child = spawn(
        &fake,
        dir.path(),
        &["check", "etcd", "--storage-class", "fast"],
    );
    wait_running(&fake);
    // SAFETY: kill(2) on our own child's pid, with a valid signal number.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    assert!(fake.wait_until(Duration::from_secs(10), |f| f
        .history()
        .iter()
        .any(|l| l.starts_with("delete requested "))));
    let t0 = Instant::now();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    // Not the 30 s the API server takes to answer.
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(1));
    let err = common::text(&out.stderr);
    let job = fake.objects("Job")[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let run = fake.objects("Job")[0]["metadata"]["labels"]["iogauge.dev/run"]
        .as_str()
        .unwrap()
        .to_string();
    let ns = fake.namespace();
    assert!(
        err.contains(&format!(
            "iogauge kube: left in namespace {ns}: job/{job}, persistentvolumeclaim/{job}; delete them with: iogauge kube cleanup --namespace {ns} --run {run} (or kubectl delete job,pvc -n {ns} -l iogauge.dev/run={run})"
        )),
        "{err}"
    );
}

#[test]
fn cleanup_removes_what_a_killed_run_left_and_only_that() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("fast", Scenario::Hang)]);
    let mut child = spawn(
        &fake,
        dir.path(),
        &["check", "etcd", "--storage-class", "fast"],
    );
    wait_running(&fake);
    child.kill().unwrap();
    child.wait().unwrap();
    let jobs = fake.objects("Job");
    assert_eq!(jobs.len(), 1, "SIGKILL leaves the Job behind");
    let run_id = jobs[0]["metadata"]["labels"]["iogauge.dev/run"]
        .as_str()
        .unwrap()
        .to_string();
    let name = jobs[0]["metadata"]["name"].as_str().unwrap().to_string();
    // Another run's id finds nothing.
    let (code, out, err) = run(&fake, dir.path(), &["cleanup", "--run", "zzzzzz"]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.ends_with(": 0 deleted, 0 failed\n"), "{err}");
    assert_eq!(fake.objects("Job").len(), 1);
    let (code, out, err) = run(&fake, dir.path(), &["cleanup", "--run", &run_id]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("deleted job/{name}\n")), "{out}");
    assert!(
        out.contains(&format!("deleted persistentvolumeclaim/{name}\n")),
        "{out}"
    );
    assert_nothing_left(&fake);
    assert_rbac_allows(&fake.requests());
}

#[test]
fn unknown_classes_and_unmatched_nodes_are_bad_input_and_create_nothing() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &["check", "etcd", "--storage-class", "fsat"],
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "iogauge kube: --storage-class fsat: no such storage class; the cluster has: fast, standard\n"
    );
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--nodes",
            "disk=none",
            "--host-path",
            "/var/lib/etcd",
        ],
    );
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "iogauge kube: --nodes 'disk=none': no node has these labels; see them with kubectl get nodes --show-labels\n"
    );
    let (code, _, err) = run(&fake, dir.path(), &["check", "etcd", "--claim", "nope"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("iogauge kube: --claim nope: no such claim in namespace "),
        "{err}"
    );
    assert!(fake.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn a_dry_run_against_a_cluster_reads_but_never_writes() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &["check", "--all-storage-classes", "--dry-run"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("kind: Job").count(), 2);
    assert_eq!(out.matches("kind: PersistentVolumeClaim").count(), 2);
    // The default suite writes 1 GiB files: 2Gi claims.
    assert_eq!(out.matches("storage: 2Gi").count(), 2);
    assert!(fake.requests().iter().all(|r| r.method == "GET"));
    assert!(fake.created("Job").is_empty());
}

#[test]
fn an_existing_claim_is_used_as_it_is_and_never_deleted() {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    use kube::api::{Api, PostParams};
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let kubeconfig = fake.write_kubeconfig(dir.path());
    let claim: PersistentVolumeClaim = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "etcd-data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                 "resources": {"requests": {"storage": "10Gi"}}}
    }))
    .unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            let client = kube::Client::try_from(config).unwrap();
            let api = Api::<PersistentVolumeClaim>::namespaced(client, &fake.namespace());
            api.create(&PostParams::default(), &claim).await.unwrap();
            let mut block = claim.clone();
            block.metadata.name = Some("raw".into());
            block.spec.as_mut().unwrap().volume_mode = Some("Block".into());
            api.create(&PostParams::default(), &block).await.unwrap();
        });
    // Someone's Block volume is never written over.
    let (code, _, err) = run(&fake, dir.path(), &["check", "etcd", "--claim", "raw"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "iogauge kube: --claim raw: a Block volume: the profiles would write over its data; measure a fresh one with --storage-class CLASS --volume-mode Block\n"
    );
    let before = fake.requests().len();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--claim",
            "etcd-data",
            "--scale",
            "0.05",
            "--format",
            "json",
        ],
    );
    assert!([0, 3, 4].contains(&code), "{err}");
    let t = &document(&out).targets[0];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}", t.reason);
    assert_eq!(t.target, "claim etcd-data");
    assert_eq!(t.claim.as_deref(), Some("etcd-data"));
    assert_eq!(t.storage_class.as_deref(), Some("fast"));
    assert_eq!(t.claim_size.as_deref(), Some("10Gi"));
    let requests = fake.requests()[before..].to_vec();
    assert!(requests
        .iter()
        .all(|r| !(r.path.contains("persistentvolumeclaims") && r.method != "GET")));
    assert!(fake.object("PersistentVolumeClaim", "etcd-data").is_some());
    // The user's volume keeps its ownership: no fsGroup for a claim iogauge did not create.
    let job = &fake.created("Job")[0];
    assert!(job["spec"]["template"]["spec"]["securityContext"]
        .get("fsGroup")
        .is_none());
    assert_nothing_left(&fake);
    assert_rbac_allows(&requests);
}
