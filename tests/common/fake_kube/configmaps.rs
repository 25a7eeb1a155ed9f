//! ConfigMaps: stored as the API server stores them (create, get, list by label, delete), and
//! projected by the kubelet into a pod's `configMap` volume, one file per key, before the
//! container starts.

use super::{name_of, str_at, State};
use serde_json::Value;
use std::path::Path;

/// Writes the keys of the ConfigMap that the pod's volume `volume` refers to into `dir`, as the
/// kubelet's configMap volume plugin does (mode from `defaultMode`, 0644 if unset). Ok(false):
/// the volume is not a configMap volume. Err: the kubelet's `MountVolume.SetUp failed` message.
pub(super) fn project(st: &State, pod: &Value, volume: &str, dir: &Path) -> Result<bool, String> {
    let Some(v) = pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == volume)
    else {
        return Ok(false);
    };
    if v["configMap"].is_null() {
        return Ok(false);
    }
    let cm_name = str_at(v, "/configMap/name");
    let ns = str_at(pod, "/metadata/namespace");
    let Some(cm) = st.objects.iter().find(|o| {
        o["kind"] == "ConfigMap" && name_of(o) == cm_name && str_at(o, "/metadata/namespace") == ns
    }) else {
        return Err(format!(
            "MountVolume.SetUp failed for volume \"{volume}\" : configmap \"{cm_name}\" not found"
        ));
    };
    let mode = v["configMap"]["defaultMode"].as_u64().unwrap_or(0o644) as u32;
    for (key, value) in cm["data"].as_object().into_iter().flatten() {
        let path = dir.join(key);
        std::fs::write(&path, value.as_str().unwrap_or(""))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(true)
}
