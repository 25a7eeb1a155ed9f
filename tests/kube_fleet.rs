//! `iogauge kube` over a fleet: storage classes' reclaim policy and provisioner
//! (`--all-storage-classes` leaves out Retain and no-provisioner classes; a named Retain class
//! runs and its Released volume is deleted), the bound capacity, the size-tier warning, and the
//! zone, region and instance type of each target's node. Against the fake API server, whose
//! PersistentVolumes are tests/common/fake_kube/volumes.rs. The outlier rule itself is unit
//! tested on documents (src/cluster/fleet.rs): here the pods run on one disk.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::kube::{assert_rbac_allows, deletes, document, run};

use common::fake_kube::{BindingMode, FakeKube, NodeSeed, Scenario, StorageClassSeed};
use iogauge::report::document::TargetStatus;
use serde_json::Value;

/// A node with the topology labels a cloud's node controller sets.
/// Nothing iogauge created is left (no Job, claim or pod with its label), no request went
/// unanswered, and deploy/rbac.yaml allows every request made.
fn assert_nothing_left(fake: &FakeKube) {
    common::kube::assert_nothing_left(fake);
    assert_rbac_allows(&fake.requests());
}

fn node(name: &str, zone: &str, instance_type: &str) -> NodeSeed {
    NodeSeed::new(name)
        .label("fleet", "yes")
        .label("topology.kubernetes.io/zone", zone)
        .label("topology.kubernetes.io/region", "eu-west-1")
        .label("node.kubernetes.io/instance-type", instance_type)
}

#[test]
fn all_storage_classes_leaves_out_retain_and_no_provisioner_classes_and_says_why() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(
            StorageClassSeed::new("keep", "ebs.csi.aws.com", BindingMode::Immediate)
                .reclaim_policy("Retain"),
        )
        .storage_class(StorageClassSeed::new(
            "local",
            "kubernetes.io/no-provisioner",
            BindingMode::WaitForFirstConsumer,
        ))
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::WaitForFirstConsumer,
        ))
        .start();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--all-storage-classes",
            "--scale",
            "0.02",
            "--format",
            "json",
        ],
    );
    assert!(matches!(code, 0 | 3 | 4), "{code}: {err}");
    assert!(
        err.contains(
            "iogauge kube: --all-storage-classes: skipping storage class keep: its reclaimPolicy \
             is Retain, so every run would leave a Released PersistentVolume (and its disk) \
             behind; to measure it anyway, name it with --storage-class keep (iogauge then sets \
             its volume's reclaimPolicy to Delete, so that the volume and its disk go with the \
             claim)\n"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "iogauge kube: --all-storage-classes: skipping storage class local: its provisioner \
             is kubernetes.io/no-provisioner, so a fresh claim binds only to a PersistentVolume \
             made beforehand (a local volume) and would wait for ever; to measure it anyway, \
             make a free volume and name the class with --storage-class local, or measure a \
             bound claim with --claim\n"
        ),
        "{err}"
    );
    // Said before the run starts; the class that can run does.
    assert!(
        err.find("skipping storage class local").unwrap() < err.find("iogauge kube: run ").unwrap(),
        "{err}"
    );
    let doc = document(&out);
    let names: Vec<&str> = doc.targets.iter().map(|t| t.target.as_str()).collect();
    assert_eq!(names, ["storage class standard"]);
    assert_eq!(doc.targets[0].status, TargetStatus::Completed, "{err}");
    let classes: Vec<String> = fake
        .created("PersistentVolumeClaim")
        .iter()
        .map(|c| c["spec"]["storageClassName"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(classes, ["standard"]);
    // Its Delete volume went with its claim.
    assert!(fake.objects("PersistentVolume").is_empty());
    assert_nothing_left(&fake);
}

#[test]
fn a_named_retain_class_runs_and_only_its_volume_goes_with_its_claim() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(
            StorageClassSeed::new("keep", "ebs.csi.aws.com", BindingMode::WaitForFirstConsumer)
                .reclaim_policy("Retain")
                .rounds_to(10 << 30),
        )
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::WaitForFirstConsumer,
        ))
        .released_volume("pvc-left-by-team-a", "keep")
        .node(node("worker-1", "eu-west-1a", "m6i.large"))
        .start();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "keep",
            "--storage-class",
            "standard",
            "--scale",
            "0.02",
        ],
    );
    assert!(matches!(code, 0 | 3 | 4), "{code}: {err}");
    // The claim's volume: made when it bound, set to Delete before the claim went, then gone
    // with it (never Released).
    let claims = fake.created("PersistentVolumeClaim");
    let keep = claims
        .iter()
        .find(|c| c["spec"]["storageClassName"] == "keep")
        .unwrap();
    let claim = keep["metadata"]["name"].as_str().unwrap();
    let volume = fake
        .created("PersistentVolume")
        .into_iter()
        .find(|v| v["spec"]["claimRef"]["uid"] == keep["metadata"]["uid"])
        .unwrap();
    let volume = volume["metadata"]["name"].as_str().unwrap().to_string();
    assert!(
        fake.happened_before(
            &format!("patched PersistentVolume/{volume}"),
            &format!("deleted PersistentVolumeClaim/{claim}")
        ) && fake.happened_before(
            &format!("deleted PersistentVolumeClaim/{claim}"),
            &format!("deleted PersistentVolume/{volume}")
        ),
        "{:?}\n{err}",
        fake.history()
    );
    assert!(!fake
        .history()
        .contains(&format!("released PersistentVolume/{volume}")));
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class keep: volume {volume}: reclaimPolicy Retain set to \
             Delete, so that it and its disk go with the claim\niogauge kube: storage class \
             keep: deleted job {claim} and claim {claim}\n"
        )),
        "{err}"
    );
    // Only that volume was asked about and changed, with a merge patch of its policy alone;
    // the other Released volume of the class is as it was, and iogauge deleted no volume.
    let patches: Vec<(String, Value)> = fake
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .map(|r| (r.path.clone(), r.body.clone().unwrap()))
        .collect();
    let made = fake
        .created("PersistentVolume")
        .into_iter()
        .find(|v| v["metadata"]["name"] == volume.as_str())
        .unwrap();
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(patches[0].0, format!("/api/v1/persistentvolumes/{volume}"));
    // The policy alone, with the volume's uid and version as preconditions.
    assert_eq!(
        patches[0].1["spec"],
        serde_json::json!({"persistentVolumeReclaimPolicy": "Delete"})
    );
    assert_eq!(patches[0].1["metadata"]["uid"], made["metadata"]["uid"]);
    assert!(patches[0].1["metadata"]["resourceVersion"].is_string());
    assert!(
        !deletes(&fake)
            .iter()
            .any(|d| d.starts_with("persistentvolumes/")),
        "{:?}",
        deletes(&fake)
    );
    let left = fake.objects("PersistentVolume");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["metadata"]["name"], "pvc-left-by-team-a");
    assert_eq!(left[0]["status"]["phase"], "Released");
    // The text: the bound capacity beside the size asked for, and where the node is.
    assert!(
        out.contains(&format!(
            "storage class keep: ebs.csi.aws.com, WaitForFirstConsumer, claim {claim} (1Gi, \
             bound 10Gi), node worker-1, zone eu-west-1a, region eu-west-1, m6i.large, "
        )),
        "{out}"
    );
    assert!(out.starts_with("TARGET"), "{out}");
    assert!(out.lines().next().unwrap().contains("  ZONE  "), "{out}");
    assert_nothing_left(&fake);
}

#[test]
fn a_small_gp2_claim_is_warned_about_and_bound_capacity_is_recorded() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(
            StorageClassSeed::new("gp2", "ebs.csi.aws.com", BindingMode::WaitForFirstConsumer)
                .parameter("type", "gp2")
                .parameter("fsType", "ext4"),
        )
        .storage_class(
            StorageClassSeed::new("files", "file.csi.azure.com", BindingMode::Immediate)
                .rounds_to(100 << 30),
        )
        .node(node("worker-1", "eu-west-1b", "m6i.xlarge"))
        .start();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "gp2",
            "--storage-class",
            "files",
            "--scale",
            "0.02",
            "--format",
            "json",
        ],
    );
    assert!(matches!(code, 0 | 3 | 4), "{code}: {err}");
    let warning = "a 1Gi gp2 claim measures a small disk's performance, not a production-sized \
                   one: gp2 volumes get 3 IOPS per GiB (at least 100) and reach 3,000 IOPS only \
                   while burst credits last; measure the size you will run with --claim-size \
                   (e.g. --claim-size 1000Gi)";
    assert!(
        err.contains(&format!(
            "iogauge kube: storage class gp2: warning: {warning}\n"
        )),
        "{err}"
    );
    let doc = document(&out);
    let (gp2, files) = (&doc.targets[0], &doc.targets[1]);
    for t in [gp2, files] {
        assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
        assert_eq!(t.claim_size.as_deref(), Some("1Gi"));
        assert_eq!(t.node.as_deref(), Some("worker-1"));
        assert_eq!(t.zone.as_deref(), Some("eu-west-1b"));
        assert_eq!(t.region.as_deref(), Some("eu-west-1"));
        assert_eq!(t.instance_type.as_deref(), Some("m6i.xlarge"));
    }
    assert_eq!(gp2.warnings, [warning]);
    assert!(files.warnings.is_empty());
    assert_eq!(gp2.bound_capacity.as_deref(), Some("1Gi"));
    assert_eq!(files.bound_capacity.as_deref(), Some("100Gi"));
    assert_nothing_left(&fake);
}

#[test]
fn node_targets_carry_their_zone_region_and_instance_type() {
    let dir = common::scratch();
    let host = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .node(node("cp-1", "eu-west-1a", "m6i.large"))
        .node(node("cp-2", "eu-west-1b", "m6i.large"))
        .node(node("cp-3", "eu-west-1c", "i4i.large"))
        .start();
    let page = dir.path().join("fleet.html");
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--nodes",
            "fleet=yes",
            "--host-path",
            host.path().to_str().unwrap(),
            "--scale",
            "0.02",
            "--format",
            "json",
            "--report",
            page.to_str().unwrap(),
        ],
    );
    assert!(matches!(code, 0 | 3 | 4), "{code}: {err}");
    let doc = document(&out);
    let seen: Vec<(&str, &str, &str, &str)> = doc
        .targets
        .iter()
        .map(|t| {
            assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
            (
                t.node.as_deref().unwrap(),
                t.zone.as_deref().unwrap(),
                t.region.as_deref().unwrap(),
                t.instance_type.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("cp-1", "eu-west-1a", "eu-west-1", "m6i.large"),
            ("cp-2", "eu-west-1b", "eu-west-1", "m6i.large"),
            ("cp-3", "eu-west-1c", "eu-west-1", "i4i.large")
        ]
    );
    // Three nodes are enough peers; whatever one disk measured three times, every outlier
    // named is at least twice or at most half the median of the three.
    for o in &doc.outliers {
        assert_eq!(o.peers, 3);
        assert!(o.ratio >= 2.0 || o.ratio <= 0.5, "{o:?}");
        assert!(o.message.ends_with("the median of 3 nodes"), "{o:?}");
    }
    let html = std::fs::read_to_string(&page).unwrap();
    for want in [
        "<dt>Zone</dt><dd>eu-west-1c</dd>",
        "<dt>Region</dt><dd>eu-west-1</dd>",
        "<dt>Instance type</dt><dd>i4i.large</dd>",
    ] {
        assert!(html.contains(want), "{want}");
    }
    assert_nothing_left(&fake);
}

// --- a Retain volume at a timeout, and the dry run's notes ---

#[test]
fn a_retain_volume_of_a_target_still_running_at_the_timeout_goes_with_its_claim() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(
            StorageClassSeed::new("keep", "ebs.csi.aws.com", BindingMode::Immediate)
                .reclaim_policy("Retain"),
        )
        .scenario_for("keep", Scenario::Hang)
        .start();
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "keep",
            "--timeout",
            "4s",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let claim = fake.created("PersistentVolumeClaim")[0].clone();
    let name = claim["metadata"]["name"].as_str().unwrap();
    let volume = fake
        .created("PersistentVolume")
        .into_iter()
        .find(|v| v["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"])
        .unwrap();
    let volume = volume["metadata"]["name"].as_str().unwrap().to_string();
    // Set to Delete before the Job (and through it the claim) went, then gone with the claim.
    assert!(
        fake.happened_before(
            &format!("patched PersistentVolume/{volume}"),
            &format!("deleted Job/{name}")
        ) && fake.happened_before(
            &format!("deleted PersistentVolumeClaim/{name}"),
            &format!("deleted PersistentVolume/{volume}")
        ),
        "{:?}\n{err}",
        fake.history()
    );
    assert!(fake.objects("PersistentVolume").is_empty());
    assert_nothing_left(&fake);
}

#[test]
fn a_dry_run_says_which_classes_a_real_run_would_leave_out() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(
            StorageClassSeed::new("keep", "ebs.csi.aws.com", BindingMode::Immediate)
                .reclaim_policy("Retain"),
        )
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::WaitForFirstConsumer,
        ))
        .start();
    let (code, out, err) = run(
        &fake,
        dir.path(),
        &["check", "etcd", "--all-storage-classes", "--dry-run"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("iogauge kube: --all-storage-classes: skipping storage class keep: its reclaimPolicy is Retain"),
        "{err}"
    );
    assert!(out.contains("storageClassName: standard"), "{out}");
    assert!(!out.contains("storageClassName: keep"), "{out}");
    assert!(fake.created("Job").is_empty());
}

#[test]
fn a_volume_made_beforehand_that_a_retain_claim_binds_to_is_left_alone() {
    let dir = common::scratch();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
        .storage_class(
            StorageClassSeed::new("keep", "ebs.csi.aws.com", BindingMode::Immediate)
                .reclaim_policy("Retain"),
        )
        .available_volume("pv-made-by-admin", "keep", "50Gi")
        .start();
    let (code, _, err) = run(
        &fake,
        dir.path(),
        &[
            "check",
            "etcd",
            "--storage-class",
            "keep",
            "--scale",
            "0.02",
        ],
    );
    assert!(matches!(code, 0 | 3 | 4), "{code}: {err}");
    // Bound to the administrator's volume, which iogauge did not make: never patched; it is
    // Released once the claim goes, as the cluster does with any Retain volume.
    assert!(
        !fake.requests().iter().any(|r| r.method == "PATCH"),
        "{:?}",
        fake.requests()
    );
    assert!(
        err.contains(
            "iogauge kube: storage class keep: volume pv-made-by-admin was not provisioned for \
             this claim (a volume made beforehand, bound to it by the cluster): left as it is, \
             Released once the claim is deleted\n"
        ),
        "{err}"
    );
    let left = fake.objects("PersistentVolume");
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["status"]["phase"], "Released");
    assert_eq!(left[0]["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_nothing_left(&fake);
}
