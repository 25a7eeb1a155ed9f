//! The user's files for the pod (profile files, fio job files): one ConfigMap per run, created
//! before the Jobs and mounted read-only at `/config` in every pod (a `configMap` volume, which
//! Pod Security "restricted" allows). A ConfigMap shared by several Jobs cannot usefully be owned
//! by them (the garbage collector would keep it until the last one goes, and none exists before
//! it is created), so it carries the run's labels and is deleted with the run; after a killed
//! run, `iogauge kube cleanup` finds and removes it by those labels.

use super::client::Cluster;
use super::labels::{MANAGED_BY, RUN_LABEL};
use super::KubeError;
use crate::input::profiles::{self, Profile};
use crate::observer::Observer;
use crate::run::stop::Stop;
use k8s_openapi::api::core::v1::{ConfigMap, ConfigMapVolumeSource, Volume, VolumeMount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// Where the files appear in the pod.
pub(crate) const CONFIG_PATH: &str = "/config";
/// The pod's volume name for them.
const VOLUME: &str = "config";
/// What one ConfigMap may hold, keys and values together (the API server's
/// `corev1.MaxSecretSize`, which ValidateConfigMap applies to ConfigMaps).
pub(crate) const MAX_BYTES: usize = 1 << 20;
/// The longest key the API server takes (`IsConfigMapKey`: a DNS subdomain's length).
const MAX_KEY: usize = 253;

/// The files a run's pods read: key (the file's name in `/config`) → UTF-8 content.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PodFiles {
    files: BTreeMap<String, String>,
}

impl PodFiles {
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Adds a file named after `name` (its last path component, made a valid key and unique)
    /// and returns its path in the pod, `/config/<key>`. Err: the files would no longer fit
    /// one ConfigMap (with the numbers).
    pub(crate) fn add(&mut self, name: &str, content: String) -> Result<String, String> {
        let base = key_of(name);
        let mut key = base.clone();
        let mut n = 2;
        while self.files.contains_key(&key) {
            key = format!("{n}-{base}");
            n += 1;
        }
        let total = self.bytes() + key.len() + content.len();
        if total > MAX_BYTES {
            return Err(format!(
                "'{name}': the files for the pod would take {total} bytes, more than one \
                 ConfigMap holds ({MAX_BYTES} bytes, 1 MiB); make the file smaller or ship fewer \
                 files"
            ));
        }
        self.files.insert(key.clone(), content);
        Ok(format!("{CONFIG_PATH}/{key}"))
    }

    /// The keys and values' bytes, as the API server counts a ConfigMap's size.
    pub(crate) fn bytes(&self) -> usize {
        self.files.iter().map(|(k, v)| k.len() + v.len()).sum()
    }

    /// The content of the file at `path` in the pod, if it is one of these.
    pub(crate) fn get(&self, path: &str) -> Option<&str> {
        let key = path.strip_prefix(CONFIG_PATH)?.strip_prefix('/')?;
        self.files.get(key).map(String::as_str)
    }

    /// A profile as the pod's `check` names it: a built-in name, or one of these files.
    pub(crate) fn profile(&self, name: &str) -> Result<Profile, String> {
        match self.get(name) {
            Some(text) => profiles::from_text(text, name),
            None => profiles::get(name),
        }
    }
}

/// A ConfigMap key from a file name: its last component, characters other than letters,
/// digits, '-', '_' and '.' replaced by '-' (the API server's `IsConfigMapKey`), never `.` or
/// `..`.
fn key_of(name: &str) -> String {
    let last = name.rsplit('/').find(|s| !s.is_empty()).unwrap_or("file");
    let mut k: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if k.chars().all(|c| c == '.') {
        k = format!("file{k}");
    }
    // Cut at the end but keep the extension, which says what the file is.
    if k.len() > MAX_KEY - 8 {
        let ext = k.rsplit_once('.').map(|(_, e)| e.to_string());
        k.truncate(MAX_KEY - 24);
        if let Some(e) = ext.filter(|e| e.len() < 12) {
            k = format!("{k}.{e}");
        }
    }
    k
}

/// The ConfigMap's name in a run.
pub(crate) fn name(run: &str) -> String {
    format!("iogauge-{run}-files")
}

/// The run's ConfigMap (immutable: the kubelet then need not watch it), with the run's labels
/// and `extra` ones (`PodOptions::labels`).
pub(crate) fn config_map(
    files: &PodFiles,
    extra: &BTreeMap<String, String>,
    run: &str,
    namespace: &str,
) -> ConfigMap {
    let mut labels = extra.clone();
    labels.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    labels.insert("app.kubernetes.io/name".into(), "iogauge".into());
    labels.insert(RUN_LABEL.into(), run.into());
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name(run)),
            namespace: Some(namespace.into()),
            labels: Some(labels),
            ..ObjectMeta::default()
        },
        data: Some(files.files.clone()),
        immutable: Some(true),
        ..ConfigMap::default()
    }
}

/// The pod's volume for the run's ConfigMap.
pub(crate) fn volume(run: &str) -> Volume {
    Volume {
        name: VOLUME.into(),
        config_map: Some(ConfigMapVolumeSource {
            name: name(run),
            // Read by any uid the pod runs as (--run-as-user, platform-assigned).
            default_mode: Some(0o444),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    }
}

/// Its read-only mount at [`CONFIG_PATH`].
pub(crate) fn mount() -> VolumeMount {
    VolumeMount {
        name: VOLUME.into(),
        mount_path: CONFIG_PATH.into(),
        read_only: Some(true),
        ..VolumeMount::default()
    }
}

/// Creates the run's ConfigMap when it has files, before any Job (whose pods would otherwise
/// wait in ContainerCreating for it). Ok(None): no files. Err: nothing was created.
pub(crate) async fn create(
    files: &PodFiles,
    extra: &BTreeMap<String, String>,
    cluster: &Cluster,
    run: &str,
    obs: &mut dyn Observer,
) -> Result<Option<String>, KubeError> {
    if files.is_empty() {
        return Ok(None);
    }
    let cm = config_map(files, extra, run, &cluster.namespace);
    cluster
        .create_config_map(&cm)
        .await
        .map_err(KubeError::Cluster)?;
    let n = name(run);
    obs.note(&format!(
        "iogauge kube: configmap {n} created ({} file(s), {} bytes, at {CONFIG_PATH} in each pod)",
        files.files.len(),
        files.bytes()
    ));
    Ok(Some(n))
}

/// Deletes the run's ConfigMap once every Job is gone; a second signal leaves it, said with the
/// command that removes it.
pub(crate) async fn delete(
    cluster: &Cluster,
    name: &str,
    run: &str,
    stop: &Stop,
    obs: &mut dyn Observer,
) {
    let r = if stop.is_set() {
        Err(format!(
            "configmap {name} not deleted: stopped by {}",
            stop.reason()
        ))
    } else {
        cluster.delete_config_map(name).await
    };
    match r {
        Ok(()) => obs.note(&format!("iogauge kube: configmap {name} deleted")),
        Err(e) => obs.note(&format!(
            "iogauge kube: {e}; delete it with: iogauge kube cleanup --namespace {} --run {run}",
            cluster.namespace
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_gets_a_valid_unique_key_and_its_pod_path() {
        let mut f = PodFiles::default();
        assert_eq!(
            f.add("./dir/my profile.yaml", "a".into()).unwrap(),
            "/config/my-profile.yaml"
        );
        assert_eq!(
            f.add("other/my profile.yaml", "b".into()).unwrap(),
            "/config/2-my-profile.yaml"
        );
        assert_eq!(f.add("..", "c".into()).unwrap(), "/config/file..");
        assert_eq!(f.get("/config/2-my-profile.yaml"), Some("b"));
        assert_eq!(f.get("/configx/2-my-profile.yaml"), None);
        assert_eq!(
            f.bytes(),
            "my-profile.yaml".len() * 2 + 2 + 2 + "file..".len() + 1
        );
    }

    #[test]
    fn more_than_a_config_map_holds_is_refused_with_the_number() {
        let mut f = PodFiles::default();
        f.add("a.fio", "x".repeat(MAX_BYTES - 10)).unwrap();
        let e = f.add("b.fio", "y".repeat(10)).unwrap_err();
        assert_eq!(
            e,
            format!(
                "'b.fio': the files for the pod would take {} bytes, more than one ConfigMap \
                 holds (1048576 bytes, 1 MiB); make the file smaller or ship fewer files",
                MAX_BYTES - 10 + 5 + 5 + 10
            )
        );
        assert_eq!(f.bytes(), MAX_BYTES - 10 + 5);
    }

    #[test]
    fn a_long_name_keeps_its_extension() {
        let k = key_of(&format!("{}.fio", "j".repeat(400)));
        assert!(k.len() <= MAX_KEY && k.ends_with(".fio"), "{k}");
    }
}
