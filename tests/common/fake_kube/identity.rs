//! The kubelet's part in who a container runs as, with real permissions: when the tests run as
//! root, the container's process runs under `setpriv` as the pod's `runAsUser`/`runAsGroup`,
//! with `fsGroup` and `supplementalGroups` as its groups; a claim's directory is given to the
//! fsGroup (root:fsGroup, mode 2775, as the kubelet's volume ownership does), except for a
//! target seeded with [`super::Builder::volume_owner`]: its directory belongs to that uid, mode
//! 0755, and fsGroup is ignored, as on an NFS export or a node directory of another user. A pod
//! without a runAsUser (the platform assigns it) runs as [`PLATFORM_UID`], like OpenShift's
//! namespace range. Not root: everything runs as the test does, and permissions are not
//! modelled (the identity tests skip).

use super::{claim_names, str_at, State};
use serde_json::Value;
use std::os::unix::fs::{chown, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The uid OpenShift would assign from a namespace's range (`openshift.io/sa.scc.uid-range`).
pub const PLATFORM_UID: u32 = 1_000_680_000;

/// Whether the fake can change a container's identity (it runs as root).
pub fn honoured() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn id(pod: &Value, key: &str) -> Option<u32> {
    let spec = &pod["spec"];
    spec["containers"][0]["securityContext"][key]
        .as_u64()
        .or(spec["securityContext"][key].as_u64())
        .map(|n| n as u32)
}

/// The seeded owner of this pod's volume: by its claims' class, else by its node.
fn owner(st: &State, pod: &Value) -> Option<u32> {
    let ns = str_at(pod, "/metadata/namespace");
    let spec = &pod["spec"];
    for claim in claim_names(str_at(pod, "/metadata/name"), spec) {
        if let Some(i) = st.find("PersistentVolumeClaim", Some(ns), &claim) {
            let class = str_at(&st.objects[i], "/spec/storageClassName");
            if let Some(o) = st.owners.get(class) {
                return Some(*o);
            }
        }
    }
    let node = str_at(spec, "/nodeSelector/kubernetes.io~1hostname");
    st.owners.get(node).copied()
}

/// Gives the mounted directories their owners and returns the command to run: `setpriv … --
/// program args` for a non-root pod, else the program as it is. Err: what the kubelet would
/// report for a volume it could not set up.
pub(super) fn as_pod_user(
    st: &State,
    pod: &Value,
    mounts: &[(String, PathBuf)],
    program: PathBuf,
    args: Vec<String>,
) -> Result<(PathBuf, Vec<String>), String> {
    if !honoured() {
        return Ok((program, args));
    }
    // The tests' scratch directories are 0700: the pod's user must reach its volumes.
    set_mode(&st.host_dir, 0o755)?;
    let fs_group = id(pod, "fsGroup");
    let seeded = owner(st, pod);
    for (_, dir) in mounts {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let host = pod["spec"]["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|v| v["name"].as_str() == name.as_deref() && v.get("hostPath").is_some());
        match (seeded, fs_group, host) {
            (Some(o), _, _) => {
                own(dir, o, o)?;
                set_mode(dir, 0o755)?;
            }
            // The kubelet's volume ownership; never for hostPath.
            (None, Some(g), false) => {
                own(dir, 0, g)?;
                set_mode(dir, 0o2775)?;
            }
            // A claim without fsGroup: as local-path and hostpath provisioners create them.
            (None, None, false) => set_mode(dir, 0o777)?,
            // The node's own directory stays as the host has it.
            (None, _, true) => {}
        }
    }
    let uid = id(pod, "runAsUser").unwrap_or(PLATFORM_UID);
    let drops_all = pod["spec"]["containers"][0]["securityContext"]["capabilities"]["drop"]
        .as_array()
        .is_some_and(|d| d.iter().any(|c| c == "ALL"));
    if uid == 0 && !drops_all {
        return Ok((program, args));
    }
    if uid == 0 {
        // Root without capabilities, as the runtime starts it: an empty bounding set leaves
        // the exec'd process none, so only root's own files are writable (no DAC override).
        let mut a: Vec<String> = ["--bounding-set=-all", "--inh-caps=-all", "--"]
            .map(String::from)
            .into();
        a.push(program.to_string_lossy().into_owned());
        a.extend(args);
        return Ok((PathBuf::from("setpriv"), a));
    }
    let gid = id(pod, "runAsGroup").unwrap_or(uid);
    let mut groups: Vec<String> = fs_group.iter().map(u32::to_string).collect();
    for g in pod["spec"]["securityContext"]["supplementalGroups"]
        .as_array()
        .into_iter()
        .flatten()
    {
        groups.push(g.as_u64().unwrap_or(0).to_string());
    }
    let mut a = vec![
        "--reuid".to_string(),
        uid.to_string(),
        "--regid".to_string(),
        gid.to_string(),
    ];
    if groups.is_empty() {
        a.push("--clear-groups".into());
    } else {
        a.push(format!("--groups={}", groups.join(",")));
    }
    a.push("--".into());
    a.push(program.to_string_lossy().into_owned());
    a.extend(args);
    Ok((PathBuf::from("setpriv"), a))
}

fn own(dir: &Path, uid: u32, gid: u32) -> Result<(), String> {
    chown(dir, Some(uid), Some(gid)).map_err(|e| format!("chown {}: {e}", dir.display()))
}

fn set_mode(dir: &Path, mode: u32) -> Result<(), String> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", dir.display()))
}
