//! The pieces of `iogauge kube preflight` that need no cluster: which node directories a spec's
//! `filesystemPerformance` collectors measure (each becomes a hostPath volume mounted at the same
//! path, so the spec runs in the pod unchanged), reading a pod's preflight document back from its
//! log (`iogauge preflight --format kube-frames`), and laying every node's results out as
//! troubleshoot's support bundle does for host collectors run on several nodes
//! (`host-collectors/filesystemPerformance/<node>/<collectorName>.json`), where the analyzers
//! are evaluated once over all nodes: `<checkName> - Node <node>` per node, as troubleshoot
//! titles them.

use crate::input::troubleshoot::Preflight;
use crate::report::document::{CollectorStatus, DocumentKind, PreflightDocument};
use crate::report::frames::FramesError;
use crate::report::troubleshoot::{results_dir, FsPerfResults, KEYS};
use k8s_openapi::api::core::v1::{HostPathVolumeSource, PodSpec, Volume, VolumeMount};
use std::path::{Component, Path, PathBuf};

use super::pod_document::{cap, document, Words, TAIL_CHARS};

/// The node directories the spec's collectors (those not excluded) write in, each once, in
/// the spec's order. Err: the fix for a directory that cannot be a hostPath (exit 2, before
/// anything is created).
pub(crate) fn node_directories(p: &Preflight) -> Result<Vec<String>, String> {
    let mut dirs: Vec<String> = Vec::new();
    let active: Vec<_> = p.collectors.iter().filter(|c| !c.exclude).collect();
    if active.is_empty() {
        return Err(
            "the spec has no filesystemPerformance collector to run on the nodes \
                    (hostCollectors: - filesystemPerformance: {collectorName: …, directory: …})"
                .into(),
        );
    }
    for c in active {
        let d = &c.directory;
        let plain = d.is_absolute()
            && d.components()
                .all(|x| matches!(x, Component::RootDir | Component::Normal(_)));
        let text = d.to_str().filter(|_| plain && d != Path::new("/"));
        let Some(text) = text else {
            return Err(format!(
                "collector '{}': directory '{}' cannot be a node's hostPath: expected an \
                 absolute path below / without '.' or '..', e.g. /var/lib/etcd",
                c.collector_name,
                d.display()
            ));
        };
        let text = text.trim_end_matches('/').to_string();
        if !dirs.contains(&text) {
            dirs.push(text);
        }
    }
    Ok(dirs)
}

/// Where node directory `i` is mounted in the pod; `--directory-map` moves the spec's
/// collectors there, so the spec runs unchanged.
fn mount_path(i: usize) -> String {
    format!("/host/{i}")
}

/// What each node's pod runs for `kube preflight`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PreflightPod {
    /// The spec's path in the pod (in the run's ConfigMap).
    pub spec: String,
    /// The node directories the collectors write in ([`node_directories`]).
    pub directories: Vec<String>,
    /// How long one node's collectors may take: the sum of their timeouts.
    pub estimate: std::time::Duration,
}

impl PreflightPod {
    /// The pod's command line after the binary.
    pub(crate) fn args(&self) -> Vec<String> {
        let mut a = vec![
            "preflight".to_string(),
            self.spec.clone(),
            "--format".into(),
            "kube-frames".into(),
        ];
        for (i, d) in self.directories.iter().enumerate() {
            a.push(format!("--directory-map={d}={}", mount_path(i)));
        }
        a
    }
}

/// Turns a node target's pod into a preflight pod: the spec's command line, and each node
/// directory as a hostPath volume (type Directory: a node without it is diagnosed by the
/// kubelet's type check, never given an empty directory of root's) in place of the one
/// `--host-path` volume.
pub(crate) fn into_pod(p: &PreflightPod, pod: &mut PodSpec) {
    let volumes: Vec<Volume> = p
        .directories
        .iter()
        .enumerate()
        .map(|(i, d)| Volume {
            name: format!("host-{i}"),
            host_path: Some(HostPathVolumeSource {
                path: d.clone(),
                type_: Some("Directory".into()),
            }),
            ..Volume::default()
        })
        .collect();
    let mounts: Vec<VolumeMount> = (0..p.directories.len())
        .map(|i| VolumeMount {
            name: format!("host-{i}"),
            mount_path: mount_path(i),
            ..VolumeMount::default()
        })
        .collect();
    let others = pod.volumes.take().unwrap_or_default();
    pod.volumes = Some(
        volumes
            .into_iter()
            .chain(others.into_iter().filter(|v| v.name != "data"))
            .collect(),
    );
    if let Some(c) = pod.containers.first_mut() {
        c.args = Some(p.args());
        let others = c.volume_mounts.take().unwrap_or_default();
        c.volume_mounts = Some(
            mounts
                .into_iter()
                .chain(others.into_iter().filter(|m| m.name != "data"))
                .collect(),
        );
    }
}

/// A pod's collectors in a few words: `etcd-perf collected`.
pub(crate) fn collected(doc: &PreflightDocument) -> String {
    let words: Vec<String> = doc
        .collectors
        .iter()
        .map(|c| {
            let how = match c.status {
                CollectorStatus::Collected => "collected",
                CollectorStatus::TimedOut => "timed out",
                _ => "failed",
            };
            format!("{} {how}", c.name)
        })
        .collect();
    if words.is_empty() {
        "no collector ran".into()
    } else {
        words.join(", ")
    }
}

/// The pod's preflight document, from its frames. Err: what went wrong, capped; whether this
/// iogauge reads the document's version is [`DocumentKind`]'s decision, as for every reader.
pub fn parse_preflight_log(log: &str) -> Result<PreflightDocument, String> {
    let no_frames = |log: &str| {
        let tail: String = log.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        Err(cap(&format!(
            "no result in the pod's log; it ends with: {tail}"
        )))
    };
    let damaged = |e: &FramesError| {
        cap(&format!(
            "the pod's result in its log is incomplete: {e}; run the node again"
        ))
    };
    let bad = |e: serde_json::Error| {
        cap(&format!(
            "the pod's result does not parse as a preflight document: {e}"
        ))
    };
    let words = Words {
        no_frames: &no_frames,
        damaged: &damaged,
        bad: &bad,
    };
    document(log, DocumentKind::Preflight, "preflight", &words)
}

/// `node`'s collected results as the files troubleshoot lays out for a host collector run on
/// several nodes under `out`: (path, content), for the caller to write. A collector that did not collect writes
/// nothing: the analyzers then see its file as not collected, as troubleshoot's do.
pub(crate) fn node_results(
    out: &Path,
    node: &str,
    doc: &PreflightDocument,
) -> Result<Vec<(PathBuf, String)>, String> {
    if !is_file_name(node) {
        return Err(format!(
            "node name '{}' cannot be a directory name",
            cap(node)
        ));
    }
    let dir = results_dir(out).join(node);
    let mut wrote = Vec::new();
    for c in &doc.collectors {
        let Some(table) = c.results.as_ref() else {
            continue;
        };
        if c.status != CollectorStatus::Collected || !is_file_name(&c.name) {
            continue;
        }
        let get = |k: &str| {
            table.get(k).copied().ok_or_else(|| {
                format!(
                    "node {node}: collector '{}': the pod's result has no '{k}'",
                    c.name
                )
            })
        };
        let mut p = [0u64; 17];
        for (i, (k, _)) in KEYS.iter().enumerate() {
            p[i] = get(k)?;
        }
        let r = FsPerfResults {
            min: get("Min")?,
            max: get("Max")?,
            average: get("Average")?,
            p,
            iops: None,
        };
        wrote.push((dir.join(format!("{}.json", c.name)), r.to_json()));
    }
    Ok(wrote)
}

/// One path component that stays where it is put: no separator, not `.` or `..`, not empty,
/// and short enough for a message.
fn is_file_name(n: &str) -> bool {
    !n.is_empty() && n != "." && n != ".." && !n.contains(['/', '\0']) && n.len() <= TAIL_CHARS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::troubleshoot::load;
    use crate::report::document::{CollectorOutcome, Context, SCHEMA_VERSION};
    use std::collections::BTreeMap;

    fn spec(dirs: &[&str]) -> Preflight {
        let mut y = String::from(
            "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: t\n\
             spec:\n  hostCollectors:\n",
        );
        for (i, d) in dirs.iter().enumerate() {
            y.push_str(&format!(
                "    - filesystemPerformance:\n        collectorName: c{i}\n        \
                 directory: {d}\n        fileSize: 1Mi\n        datasync: true\n"
            ));
        }
        let mut p = Preflight::default();
        load(&y, "s.yaml", &mut p).expect("spec loads");
        p
    }

    #[test]
    fn each_collector_directory_is_one_host_path() {
        let p = spec(&["/var/lib/etcd", "/var/lib/etcd/", "/data"]);
        assert_eq!(node_directories(&p).unwrap(), ["/var/lib/etcd", "/data"]);
    }

    #[test]
    fn a_directory_that_cannot_be_a_host_path_is_refused_with_the_fix() {
        for d in ["etcd", "/var/../etc", "/"] {
            let e = node_directories(&spec(&[d])).unwrap_err();
            assert_eq!(
                e,
                format!(
                    "collector 'c0': directory '{d}' cannot be a node's hostPath: expected an \
                     absolute path below / without '.' or '..', e.g. /var/lib/etcd"
                )
            );
        }
        assert!(node_directories(&Preflight::default())
            .unwrap_err()
            .starts_with("the spec has no filesystemPerformance collector"));
    }

    fn doc(results: Option<BTreeMap<String, u64>>) -> PreflightDocument {
        PreflightDocument {
            schema_version: SCHEMA_VERSION,
            iogauge: env!("CARGO_PKG_VERSION").into(),
            name: "t".into(),
            collectors: vec![CollectorOutcome {
                name: "etcd-perf".into(),
                status: if results.is_some() {
                    CollectorStatus::Collected
                } else {
                    CollectorStatus::Failed
                },
                reason: None,
                context: Context::default(),
                results,
                sequential: None,
                ran_whole: None,
            }],
            outcomes: Vec::new(),
        }
    }

    fn table() -> BTreeMap<String, u64> {
        let mut t: BTreeMap<String, u64> =
            KEYS.iter().map(|(k, _)| (k.to_string(), 1000)).collect();
        t.insert("Min".into(), 10);
        t.insert("Max".into(), 5000);
        t.insert("Average".into(), 900);
        t
    }

    #[test]
    fn node_results_go_where_troubleshoot_puts_them_and_read_back() {
        let d = tempfile::tempdir().unwrap();
        let files = node_results(d.path(), "node-a", &doc(Some(table()))).unwrap();
        let want = d
            .path()
            .join("host-collectors/filesystemPerformance/node-a/etcd-perf.json");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, want);
        let r = FsPerfResults::from_json(&files[0].1).unwrap();
        assert_eq!((r.min, r.max, r.average, r.p[12]), (10, 5000, 900, 1000));
        // Not collected: no file, so the analyzer says so for that node.
        assert!(node_results(d.path(), "node-b", &doc(None))
            .unwrap()
            .is_empty());
        assert!(node_results(d.path(), "..", &doc(Some(table()))).is_err());
    }

    #[test]
    fn a_pods_frames_give_its_preflight_document_back() {
        let d = doc(Some(table()));
        let log = format!(
            "iogauge preflight: collecting etcd-perf in /var/lib/etcd\n{}",
            crate::report::frames::render_preflight_frames(&d)
        );
        assert_eq!(parse_preflight_log(&log).unwrap(), d);
        let e = parse_preflight_log("exec /iogauge: exec format error\n").unwrap_err();
        assert_eq!(
            e,
            "no result in the pod's log; it ends with: exec /iogauge: exec format error"
        );
        let mut future = serde_json::to_value(&d).unwrap();
        future["schema_version"] = (SCHEMA_VERSION + 1).into();
        let text = future.to_string();
        let e = parse_preflight_log(&crate::report::frames::frames(&text, "00000001")).unwrap_err();
        assert!(
            e.starts_with("the pod's result is a preflight document, but "),
            "{e}"
        );
        assert!(
            e.ends_with("run the image of this iogauge version (--image)"),
            "{e}"
        );
    }
}
