//! The fake API server (tests/common/fake_kube/mod.rs) as the real `kube` client sees it: if these
//! pass, tests of `iogauge kube` against the fake talk to something the client accepts.
#![allow(clippy::unwrap_used)]

use crate::common;

use common::fake_kube::{BindingMode, FakeKube, NodeSeed, Scenario, StorageClassSeed};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Node, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde_json::json;
use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

async fn client(fake: &FakeKube, dir: &Path) -> Client {
    let path = fake.write_kubeconfig(dir);
    let kc = Kubeconfig::read_from(&path).unwrap();
    let config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap();
    assert_eq!(config.default_namespace, fake.namespace());
    Client::try_from(config).unwrap()
}

fn fake(dir: &Path) -> FakeKube {
    FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir)
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::WaitForFirstConsumer,
        ))
        .storage_class(
            StorageClassSeed::new("fast", "ebs.csi.aws.com", BindingMode::Immediate)
                .default_class(),
        )
        .node(
            NodeSeed::new("cp-1")
                .label("node-role.kubernetes.io/control-plane", "")
                .taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
        )
        .node(NodeSeed::new("worker-1").label("disk", "nvme"))
        .node(NodeSeed::new("worker-2").label("disk", "sata"))
        .scenario_for("slow", Scenario::Hang)
        .start()
}

/// A Job as iogauge would create it: one container, a claim mounted at /data.
fn job(name: &str, claim: &str, command: &[&str]) -> Job {
    serde_json::from_value(json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "iogauge"}},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "iogauge", "iogauge/run": name}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "iogauge", "image": "registry.example/iogauge:0.1.0",
                        "command": command, "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}],
                },
            },
        },
    }))
    .unwrap()
}

fn pvc(name: &str, class: &str, owner: Option<&Job>) -> PersistentVolumeClaim {
    let mut v = json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
            "resources": {"requests": {"storage": "1Gi"}}},
    });
    if let Some(j) = owner {
        v["metadata"]["ownerReferences"] = json!([{"apiVersion": "batch/v1", "kind": "Job",
            "name": j.metadata.name, "uid": j.metadata.uid, "controller": true}]);
    }
    serde_json::from_value(v).unwrap()
}

async fn poll<T, F: Future<Output = Option<T>>>(what: &str, mut f: impl FnMut() -> F) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(t0.elapsed() < Duration::from_secs(8), "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[test]
fn storage_classes_nodes_and_not_found() {
    let dir = common::scratch();
    let fake = fake(dir.path());
    block_on(async {
        let c = client(&fake, dir.path()).await;
        let info = c.apiserver_version().await.unwrap();
        assert_eq!((info.major.as_str(), info.minor.as_str()), ("1", "33"));

        let scs: Api<StorageClass> = Api::all(c.clone());
        let list = scs.list(&ListParams::default()).await.unwrap();
        let names: Vec<_> = list
            .items
            .iter()
            .map(|s| s.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["standard", "fast"]);
        assert!(list.metadata.resource_version.is_some());
        let fast = scs.get("fast").await.unwrap();
        assert_eq!(fast.volume_binding_mode.as_deref(), Some("Immediate"));
        assert_eq!(
            fast.metadata.annotations.unwrap()["storageclass.kubernetes.io/is-default-class"],
            "true"
        );
        match scs.get("x").await {
            Err(kube::Error::Api(s)) => {
                assert_eq!(s.code, 404);
                assert_eq!(s.reason, "NotFound");
                assert_eq!(s.message, r#"storageclasses.storage.k8s.io "x" not found"#);
            }
            other => panic!("expected a 404, got {other:?}"),
        }

        let nodes: Api<Node> = Api::all(c.clone());
        let names = |l: kube::core::ObjectList<Node>| -> Vec<String> {
            l.items
                .into_iter()
                .map(|n| n.metadata.name.unwrap())
                .collect()
        };
        let all = nodes.list(&ListParams::default()).await.unwrap();
        assert_eq!(names(all), ["cp-1", "worker-1", "worker-2"]);
        let sel = |s: &str| ListParams::default().labels(s);
        assert_eq!(
            names(nodes.list(&sel("disk")).await.unwrap()),
            ["worker-1", "worker-2"]
        );
        assert_eq!(
            names(nodes.list(&sel("disk=nvme")).await.unwrap()),
            ["worker-1"]
        );
        assert_eq!(
            names(nodes.list(&sel("disk!=nvme")).await.unwrap()),
            ["cp-1", "worker-2"]
        );
        assert_eq!(
            names(
                nodes
                    .list(&sel("!node-role.kubernetes.io/control-plane"))
                    .await
                    .unwrap()
            ),
            ["worker-1", "worker-2"]
        );
        assert_eq!(
            names(
                nodes
                    .list(&sel("disk,kubernetes.io/hostname=worker-2"))
                    .await
                    .unwrap()
            ),
            ["worker-2"]
        );
        assert_eq!(
            names(nodes.list(&sel("disk in (sata,ssd)")).await.unwrap()),
            ["worker-2"]
        );
    });
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
}

#[test]
fn a_job_runs_the_binary_and_is_deleted_with_its_pod_and_claim() {
    let dir = common::scratch();
    let fake = fake(dir.path());
    block_on(async {
        let c = client(&fake, dir.path()).await;
        let ns = fake.namespace();
        let jobs: Api<Job> = Api::default_namespaced(c.clone());
        let pods: Api<Pod> = Api::default_namespaced(c.clone());
        let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(c.clone());
        let events: Api<Event> = Api::default_namespaced(c.clone());

        let created = jobs
            .create(
                &PostParams::default(),
                &job("iogauge-a", "iogauge-a-data", &["/iogauge", "--version"]),
            )
            .await
            .unwrap();
        assert!(created.metadata.uid.is_some());
        assert_eq!(created.metadata.namespace.as_deref(), Some(ns.as_str()));
        match jobs
            .create(
                &PostParams::default(),
                &job("iogauge-a", "x", &["/iogauge"]),
            )
            .await
        {
            Err(kube::Error::Api(s)) => {
                assert_eq!((s.code, s.reason.as_str()), (409, "AlreadyExists"));
                assert_eq!(s.message, r#"jobs.batch "iogauge-a" already exists"#);
            }
            other => panic!("expected a 409, got {other:?}"),
        }

        // The pod waits for its claim, which does not exist yet.
        let lp = ListParams::default().labels("job-name=iogauge-a");
        let pod = poll("a pending pod", || async {
            let l = pods.list(&lp).await.unwrap();
            l.items.into_iter().find(|p| {
                p.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| {
                        c.iter()
                            .any(|c| c.reason.as_deref() == Some("Unschedulable"))
                    })
            })
        })
        .await;
        let pod_name = pod.metadata.name.clone().unwrap();
        assert!(pod_name.starts_with("iogauge-a-") && pod_name.len() == "iogauge-a-".len() + 5);
        let cond = &pod.status.unwrap().conditions.unwrap()[0];
        assert_eq!(
            cond.message.as_deref(),
            Some(r#"0/3 nodes are available: persistentvolumeclaim "iogauge-a-data" not found."#)
        );
        let labels = pod.metadata.labels.unwrap();
        assert_eq!(labels["batch.kubernetes.io/job-name"], "iogauge-a");
        assert_eq!(labels["iogauge/run"], "iogauge-a");
        assert_eq!(
            pod.metadata.owner_references.unwrap()[0].uid,
            created.metadata.uid.clone().unwrap()
        );

        // A WaitForFirstConsumer claim, owned by the Job, binds only once the pod is scheduled.
        let claim = claims
            .create(
                &PostParams::default(),
                &pvc("iogauge-a-data", "standard", Some(&created)),
            )
            .await
            .unwrap();
        assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Pending"));

        let done = poll("the job to complete", || async {
            let j = jobs.get("iogauge-a").await.unwrap();
            let st = j.status.clone().unwrap_or_default();
            st.conditions
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Complete" && c.status == "True")
                .then_some(j)
        })
        .await;
        assert_eq!(done.status.unwrap().succeeded, Some(1));
        let pod = pods.get(&pod_name).await.unwrap();
        let spec = pod.spec.unwrap();
        assert!(spec.node_name.unwrap().starts_with("worker-"));
        let status = pod.status.unwrap();
        assert_eq!(status.phase.as_deref(), Some("Succeeded"));
        let term = status.container_statuses.unwrap()[0]
            .state
            .clone()
            .unwrap()
            .terminated
            .unwrap();
        assert_eq!(
            (term.exit_code, term.reason.as_deref()),
            (0, Some("Completed"))
        );
        let log = pods.logs(&pod_name, &LogParams::default()).await.unwrap();
        assert!(log.contains("iogauge 0.1.0"), "log: {log:?}");

        let bound = claims.get("iogauge-a-data").await.unwrap();
        assert_eq!(bound.status.unwrap().phase.as_deref(), Some("Bound"));
        assert!(bound.spec.unwrap().volume_name.unwrap().starts_with("pvc-"));
        let evs = events
            .list(&ListParams::default().fields("involvedObject.name=iogauge-a-data"))
            .await
            .unwrap();
        assert!(evs
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("WaitForFirstConsumer")
                && e.message.as_deref()
                    == Some("waiting for first consumer to be created before binding")));
        assert!(fake.happened_before(
            &format!("created Pod/{pod_name}"),
            "bound PersistentVolumeClaim/iogauge-a-data"
        ));

        let gone = jobs
            .delete("iogauge-a", &DeleteParams::background())
            .await
            .unwrap();
        assert!(gone.is_right(), "a Status for a background delete");
        poll("the pod and claim to go", || async {
            let p = pods.list(&lp).await.unwrap().items.is_empty();
            let c = claims.get_opt("iogauge-a-data").await.unwrap().is_none();
            (p && c).then_some(())
        })
        .await;
        match jobs.delete("iogauge-a", &DeleteParams::background()).await {
            Err(kube::Error::Api(s)) => assert_eq!(s.code, 404),
            other => panic!("expected a 404, got {other:?}"),
        }
    });
    assert_eq!(fake.deleted("Job"), ["iogauge-a"]);
    assert_eq!(fake.deleted("PersistentVolumeClaim"), ["iogauge-a-data"]);
    assert_eq!(fake.deleted("Pod").len(), 1);
    assert!(fake.objects("Pod").is_empty());
    assert_eq!(fake.created("Job").len(), 1);
    assert!(fake.requests().iter().any(|r| r.method == "DELETE"
        && r.body
            .as_ref()
            .is_some_and(|b| b["propagationPolicy"] == "Background")));
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
}

#[test]
fn a_failing_command_fails_the_job_and_mount_paths_are_host_dirs() {
    let dir = common::scratch();
    let fake = fake(dir.path());
    block_on(async {
        let c = client(&fake, dir.path()).await;
        let jobs: Api<Job> = Api::default_namespaced(c.clone());
        let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(c.clone());
        // An Immediate class binds before any pod uses it.
        claims
            .create(&PostParams::default(), &pvc("b-data", "fast", None))
            .await
            .unwrap();
        poll("the claim to bind", || async {
            let p = claims.get("b-data").await.unwrap();
            (p.status.unwrap().phase.as_deref() == Some("Bound")).then_some(())
        })
        .await;
        // iogauge refuses an unknown option: a non-zero exit, and /data was mapped to the host.
        let j = job(
            "iogauge-b",
            "b-data",
            &["/iogauge", "check", "--no-such-option", "/data/f"],
        );
        jobs.create(&PostParams::default(), &j).await.unwrap();
        let failed = poll("the job to fail", || async {
            let j = jobs.get("iogauge-b").await.unwrap();
            let conds = j.status.clone()?.conditions?;
            conds.iter().find(|c| c.type_ == "Failed").cloned()
        })
        .await;
        assert_eq!(failed.reason.as_deref(), Some("BackoffLimitExceeded"));
        let pods: Api<Pod> = Api::default_namespaced(c.clone());
        let pod = pods
            .list(&ListParams::default().labels("job-name=iogauge-b"))
            .await
            .unwrap()
            .items
            .remove(0);
        let st = pod.status.unwrap();
        assert_eq!(st.phase.as_deref(), Some("Failed"));
        let term = st.container_statuses.unwrap()[0]
            .state
            .clone()
            .unwrap()
            .terminated
            .unwrap();
        assert_ne!(term.exit_code, 0);
        assert_eq!(term.reason.as_deref(), Some("Error"));
        let log = pods
            .logs(pod.metadata.name.as_deref().unwrap(), &LogParams::default())
            .await
            .unwrap();
        assert!(!log.is_empty());
        assert!(fake
            .volume_dir(pod.metadata.name.as_deref().unwrap(), "data")
            .is_dir());
    });
    assert!(fake.unexpected().is_empty());
}

#[test]
fn scenarios_unschedulable_image_pull_forbidden() {
    let dir = common::scratch();
    let taint = "0/3 nodes are available: 3 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(StorageClassSeed::new("ok", "p", BindingMode::Immediate))
        .storage_class(StorageClassSeed::new("pull", "p", BindingMode::Immediate))
        .storage_class(StorageClassSeed::new("psa", "p", BindingMode::Immediate))
        .storage_class(StorageClassSeed::new("broken", "p", BindingMode::Immediate))
        .scenario(Scenario::Unschedulable(taint.into()))
        .scenario_for("pull", Scenario::ImagePull)
        .scenario_for("psa", Scenario::Forbidden("violates PodSecurity \"restricted:latest\": restricted volume types (volume \"data\" uses restricted volume type \"hostPath\")".into()))
        .scenario_for("broken", Scenario::ProvisioningFailed("rpc error: code = ResourceExhausted desc = quota".into()))
        .start();
    block_on(async {
        let c = client(&fake, dir.path()).await;
        let jobs: Api<Job> = Api::default_namespaced(c.clone());
        let pods: Api<Pod> = Api::default_namespaced(c.clone());
        let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(c.clone());
        let events: Api<Event> = Api::default_namespaced(c.clone());
        for class in ["ok", "pull", "psa", "broken"] {
            let claim = format!("{class}-data");
            claims
                .create(&PostParams::default(), &pvc(&claim, class, None))
                .await
                .unwrap();
            jobs.create(
                &PostParams::default(),
                &job(&format!("j-{class}"), &claim, &["/iogauge"]),
            )
            .await
            .unwrap();
        }
        let events_of = |name: String| {
            let events = events.clone();
            async move {
                events
                    .list(&ListParams::default().fields(&format!("involvedObject.name={name}")))
                    .await
                    .unwrap()
                    .items
            }
        };
        let pod_of = |job: &'static str| {
            let pods = pods.clone();
            async move {
                pods.list(&ListParams::default().labels(&format!("job-name={job}")))
                    .await
                    .unwrap()
                    .items
                    .into_iter()
                    .next()
            }
        };

        // Unschedulable: the condition and a FailedScheduling event.
        let p = poll("unschedulable", || async {
            let p = pod_of("j-ok").await?;
            let c = p.status.clone()?.conditions?;
            (c[0].message.as_deref() == Some(taint)).then_some(p)
        })
        .await;
        let evs = events_of(p.metadata.name.unwrap()).await;
        assert!(evs
            .iter()
            .any(|e| e.reason.as_deref() == Some("FailedScheduling")
                && e.type_.as_deref() == Some("Warning")
                && e.message.as_deref() == Some(taint)));

        // Image pull: ErrImagePull, then ImagePullBackOff.
        let waiting = |p: &Pod| {
            p.status.clone()?.container_statuses?[0]
                .state
                .clone()?
                .waiting?
                .reason
        };
        let p = poll("ErrImagePull", || async {
            let p = pod_of("j-pull").await?;
            (waiting(&p).as_deref() == Some("ErrImagePull")).then_some(p)
        })
        .await;
        let name = p.metadata.name.unwrap();
        match pods.logs(&name, &LogParams::default()).await {
            Err(kube::Error::Api(s)) => assert_eq!(s.code, 400),
            other => panic!("expected a 400, got {other:?}"),
        }
        poll("ImagePullBackOff", || async {
            let p = pod_of("j-pull").await?;
            (waiting(&p).as_deref() == Some("ImagePullBackOff")).then_some(())
        })
        .await;
        let evs = events_of(name).await;
        assert!(evs.iter().any(|e| e.reason.as_deref() == Some("Failed")
            && e.message.as_deref().is_some_and(|m| m.starts_with("Failed to pull image \"registry.example/iogauge:0.1.0\": rpc error: code = NotFound"))));
        assert!(evs.iter().any(|e| e.reason.as_deref() == Some("BackOff")));

        // Forbidden: no pod, a FailedCreate event on the Job.
        let ev = poll("FailedCreate", || async {
            events_of("j-psa".into())
                .await
                .into_iter()
                .find(|e| e.reason.as_deref() == Some("FailedCreate"))
        })
        .await;
        assert!(ev
            .message
            .unwrap()
            .starts_with("Error creating: pods \"j-psa-"));
        assert!(pod_of("j-psa").await.is_none());

        // Provisioning failed: the claim stays Pending, the pod unschedulable.
        let ev = poll("ProvisioningFailed", || async {
            events_of("broken-data".into())
                .await
                .into_iter()
                .find(|e| e.reason.as_deref() == Some("ProvisioningFailed"))
        })
        .await;
        assert_eq!(ev.type_.as_deref(), Some("Warning"));
        let p = poll("unbound claims", || async {
            let p = pod_of("j-broken").await?;
            let c = p.status.clone()?.conditions?;
            c[0].message.clone()
        })
        .await;
        assert_eq!(
            p,
            "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims."
        );
        let claim = claims.get("broken-data").await.unwrap();
        assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Pending"));
    });
    assert!(fake.unexpected().is_empty());
}

#[test]
fn hang_runs_until_deleted_and_unknown_paths_are_recorded() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(StorageClassSeed::new("slow", "p", BindingMode::Immediate).default_class())
        .scenario_for("slow", Scenario::Hang)
        .start();
    block_on(async {
        let c = client(&fake, dir.path()).await;
        let jobs: Api<Job> = Api::default_namespaced(c.clone());
        let pods: Api<Pod> = Api::default_namespaced(c.clone());
        let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(c.clone());
        let mut claim = pvc("h-data", "slow", None);
        claim.spec.as_mut().unwrap().storage_class_name = None;
        let claim = claims.create(&PostParams::default(), &claim).await.unwrap();
        // The default class is filled in.
        assert_eq!(
            claim.spec.unwrap().storage_class_name.as_deref(),
            Some("slow")
        );
        jobs.create(
            &PostParams::default(),
            &job("h", "h-data", &["/iogauge", "--version"]),
        )
        .await
        .unwrap();
        let lp = ListParams::default().labels("job-name=h");
        let name = poll("running", || async {
            let p = pods.list(&lp).await.unwrap().items.into_iter().next()?;
            (p.status.clone()?.phase.as_deref() == Some("Running"))
                .then(|| p.metadata.name.unwrap())
        })
        .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let p = pods.get(&name).await.unwrap();
        assert_eq!(p.status.unwrap().phase.as_deref(), Some("Running"));
        pods.delete(&name, &DeleteParams::default()).await.unwrap();
        assert!(pods.get_opt(&name).await.unwrap().is_none());

        // Not served: recorded as unexpected.
        let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::default_namespaced(c.clone());
        assert!(matches!(secrets.get("x").await, Err(kube::Error::Api(s)) if s.code == 404));
    });
    let unexpected = fake.unexpected();
    assert_eq!(unexpected.len(), 1);
    assert!(unexpected[0].path.ends_with("/secrets/x"));
}

/// What hyper may send but the kube client above did not: a chunked body, `Connection: close`.
#[test]
fn raw_http_chunked_body_and_connection_close() {
    use std::io::{Read, Write};
    let dir = common::scratch();
    let fake = fake(dir.path());
    let addr = fake.url().trim_start_matches("http://").to_string();
    let ns = fake.namespace();
    let body = serde_json::to_vec(&pvc("raw", "fast", None)).unwrap();
    let (a, b) = body.split_at(body.len() / 2);
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    let mut req = format!(
        "POST /api/v1/namespaces/{ns}/persistentvolumeclaims HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for part in [a, b] {
        req.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        req.extend_from_slice(part);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    // A second request on the same connection, which asks to close it afterwards.
    req.extend_from_slice(b"GET /api/v1/namespaces/x/configmaps?watch=true HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(&req).unwrap();
    let mut out = String::new();
    // Reads to EOF: the server must close after the second answer.
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 201 Created\r\n"), "{out}");
    assert_eq!(out.matches("HTTP/1.1 ").count(), 2, "{out}");
    assert!(out.contains("HTTP/1.1 404 Not Found\r\n"));
    assert!(out.contains("Connection: close\r\n"));
    assert!(fake.object("PersistentVolumeClaim", "raw").is_some());
    assert_eq!(fake.unexpected().len(), 1);
    assert_eq!(fake.unexpected()[0].param("watch").as_deref(), Some("true"));
    assert_eq!(
        fake.created("PersistentVolumeClaim")[0]["metadata"]["name"],
        "raw"
    );
}

/// A generic ephemeral volume: the claim `<pod>-<volume>` appears with the pod and goes with it.
#[test]
fn ephemeral_volume_claims_follow_their_pod_and_foreground_delete() {
    let dir = common::scratch();
    let fake = fake(dir.path());
    block_on(async {
        let c = client(&fake, dir.path()).await;
        let jobs: Api<Job> = Api::default_namespaced(c.clone());
        let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(c.clone());
        let mut j = serde_json::to_value(job("e", "unused", &["/iogauge", "--version"])).unwrap();
        j["spec"]["template"]["spec"]["volumes"] = json!([{"name": "data", "ephemeral": {
            "volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"],
                "storageClassName": "standard", "resources": {"requests": {"storage": "1Gi"}}}}}}]);
        j["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "sata"});
        let j: Job = serde_json::from_value(j).unwrap();
        jobs.create(&PostParams::default(), &j).await.unwrap();
        poll("the job to complete", || async {
            let j = jobs.get("e").await.unwrap();
            (j.status?.succeeded == Some(1)).then_some(())
        })
        .await;
        let pod = fake.objects("Pod").remove(0);
        let pod_name = pod["metadata"]["name"].as_str().unwrap().to_string();
        assert_eq!(pod["spec"]["nodeName"], "worker-2");
        let claim = claims.get(&format!("{pod_name}-data")).await.unwrap();
        assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
        assert!(fake.volume_dir(&pod_name, "data").is_dir());
        let r = jobs.delete("e", &DeleteParams::foreground()).await.unwrap();
        assert!(r.is_left(), "the Job itself for a foreground delete");
        assert!(claims
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty());
    });
    assert_eq!(fake.deleted("Pod").len(), 1);
    assert!(fake.unexpected().is_empty());
}

/// Deleting a Job stops its running container (here `sleep 30` stands in for the binary).
#[test]
fn deleting_a_job_kills_its_running_container() {
    let dir = common::scratch();
    let fake = FakeKube::builder("/bin/sleep", dir.path())
        .storage_class(StorageClassSeed::new("fast", "p", BindingMode::Immediate))
        .start();
    let t0 = Instant::now();
    block_on(async {
        let c = client(&fake, dir.path()).await;
        let jobs: Api<Job> = Api::default_namespaced(c.clone());
        let claims: Api<PersistentVolumeClaim> = Api::default_namespaced(c.clone());
        claims
            .create(&PostParams::default(), &pvc("s-data", "fast", None))
            .await
            .unwrap();
        jobs.create(
            &PostParams::default(),
            &job("s", "s-data", &["/sleep", "30"]),
        )
        .await
        .unwrap();
        poll("started", || async {
            fake.history()
                .iter()
                .any(|l| l.starts_with("started Pod/s-"))
                .then_some(())
        })
        .await;
        // The history says started before the runner thread has spawned the process.
        poll("the container process", || async {
            (!children().is_empty()).then_some(())
        })
        .await;
        jobs.delete("s", &DeleteParams::background()).await.unwrap();
        poll("the container process to go", || async {
            children().is_empty().then_some(())
        })
        .await;
    });
    drop(fake);
    // Dropping waits for the container runners: a process left running would hold it 30 s.
    assert!(t0.elapsed() < Duration::from_secs(5));
}

/// This test process's `sleep` children (other tests' children run alongside).
fn children() -> Vec<String> {
    let mut out = Vec::new();
    for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        out.extend(list.split_whitespace().map(String::from));
    }
    out.retain(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
    });
    out
}
