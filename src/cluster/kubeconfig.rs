//! Finding and reading the kubeconfig as kubectl does (`--kubeconfig`, else every file `KUBECONFIG`
//! lists, else `~/.kube/config`), without contacting the cluster: a dry run needs the context's
//! namespace offline, and a missing or wrong file must be named in one line (exit 2: it is the
//! user's input, nothing was asked of a cluster).

use super::KubeError;
use kube::config::Kubeconfig;
use std::path::{Path, PathBuf};

/// A kubeconfig read and its context chosen.
pub(crate) struct Loaded {
    pub config: Kubeconfig,
    /// The files read, for messages and for the `kubectl cluster-info` hint.
    pub files: Vec<PathBuf>,
    /// `--context`, else the file's current-context.
    pub context: String,
    /// The context's namespace, if it names one.
    pub namespace: Option<String>,
}

impl Loaded {
    /// `kubectl cluster-info` with the same kubeconfig and context.
    pub(crate) fn cluster_info(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        format!(
            "kubectl cluster-info --kubeconfig {} --context {}",
            files.join(if cfg!(windows) { ";" } else { ":" }),
            self.context
        )
    }

    /// "context fake of /home/u/.kube/config"
    pub(crate) fn describe(&self) -> String {
        format!("context {} of {}", self.context, list(&self.files))
    }
}

/// Where kubectl would look, in its order.
enum Where {
    Flag(PathBuf),
    Env(Vec<PathBuf>),
    Home(Option<PathBuf>),
}

fn where_to_look(flag: Option<&Path>) -> Where {
    if let Some(p) = flag {
        return Where::Flag(p.to_path_buf());
    }
    if let Some(v) = std::env::var_os("KUBECONFIG") {
        let paths: Vec<PathBuf> = std::env::split_paths(&v)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if !paths.is_empty() {
            return Where::Env(paths);
        }
    }
    Where::Home(home().map(|h| h.join(".kube").join("config")))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

fn list(files: &[PathBuf]) -> String {
    let v: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    v.join(", ")
}

/// Inside a pod, with no kubeconfig, the service account is what kubectl would use.
pub(crate) fn in_pod() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
}

/// Whether no kubeconfig file is there to read (no `--kubeconfig`; none of `KUBECONFIG`'s files,
/// or no `~/.kube/config`) and this is not a pod. An offline dry run then assumes namespace
/// `default`, as `kubectl create --dry-run=client` does.
pub(crate) fn nothing_configured(flag: Option<&Path>) -> bool {
    let none = match where_to_look(flag) {
        Where::Flag(_) => false,
        Where::Env(paths) => paths.iter().all(|p| !p.exists()),
        Where::Home(p) => p.as_ref().is_none_or(|p| !p.exists()),
    };
    none && !in_pod()
}

/// Reads the kubeconfig and picks the context. `Ok(None)`: no kubeconfig, but inside a pod
/// (use the service account).
pub(crate) fn load(
    flag: Option<&Path>,
    context: Option<&str>,
) -> Result<Option<Loaded>, KubeError> {
    let files = match where_to_look(flag) {
        Where::Flag(p) => {
            if !p.exists() {
                return Err(KubeError::Usage(format!(
                    "--kubeconfig {}: no such file; expected a kubeconfig file such as kubectl \
                     uses; pass an existing one, or leave out --kubeconfig to use $KUBECONFIG or \
                     ~/.kube/config",
                    p.display()
                )));
            }
            vec![p]
        }
        Where::Env(paths) => {
            // As kubectl: files of the list that do not exist are skipped, but not all of them.
            let found: Vec<PathBuf> = paths.iter().filter(|p| p.exists()).cloned().collect();
            if found.is_empty() {
                return Err(KubeError::Usage(format!(
                    "KUBECONFIG names {}, which does not exist; expected a kubeconfig file such \
                     as kubectl uses; point KUBECONFIG at yours or pass --kubeconfig FILE",
                    list(&paths)
                )));
            }
            found
        }
        Where::Home(p) => match p.filter(|p| p.exists()) {
            Some(p) => vec![p],
            None if in_pod() => return Ok(None),
            None => {
                let looked = home()
                    .map(|h| h.join(".kube").join("config").display().to_string())
                    .unwrap_or_else(|| "~/.kube/config (HOME is not set)".into());
                return Err(KubeError::Usage(format!(
                    "no kubeconfig: KUBECONFIG is not set and {looked} does not exist, and this \
                     is not a pod with a service account; pass --kubeconfig FILE or set \
                     KUBECONFIG to the file kubectl uses"
                )));
            }
        },
    };
    let mut merged: Option<Kubeconfig> = None;
    for f in &files {
        let kc = Kubeconfig::read_from(f).map_err(|e| {
            KubeError::Usage(format!(
                "kubeconfig {}: {}; expected a kubeconfig file such as kubectl uses (kubectl \
                 config view --kubeconfig {} shows what is wrong)",
                f.display(),
                read_error(&e),
                f.display()
            ))
        })?;
        merged = Some(match merged {
            None => kc,
            Some(m) => m
                .merge(kc)
                .map_err(|e| KubeError::Usage(format!("kubeconfig files {}: {e}", list(&files))))?,
        });
    }
    let config = merged.unwrap_or_default();
    let (context, namespace) = pick(&config, context, &files)?;
    Ok(Some(Loaded {
        config,
        files,
        context,
        namespace,
    }))
}

/// kube-rs words a read error as `failed to read kubeconfig from '"path"': …`: keep the cause.
fn read_error(e: &kube::config::KubeconfigError) -> String {
    use kube::config::KubeconfigError as K;
    match e {
        K::ReadConfig(io, _) => io.to_string(),
        e => e.to_string(),
    }
}

/// The context to use and its namespace, or what is wrong with the choice.
fn pick(
    config: &Kubeconfig,
    context: Option<&str>,
    files: &[PathBuf],
) -> Result<(String, Option<String>), KubeError> {
    let names: Vec<&str> = config.contexts.iter().map(|c| c.name.as_str()).collect();
    let has = if names.is_empty() {
        "it has none".to_string()
    } else {
        format!("it has: {}", names.join(", "))
    };
    let name = match (context, &config.current_context) {
        (Some(c), _) => c.to_string(),
        (None, Some(c)) if !c.is_empty() => c.clone(),
        _ => {
            return Err(KubeError::Usage(format!(
                "kubeconfig {}: no current-context; pass --context NAME ({has})",
                list(files)
            )))
        }
    };
    let Some(found) = config.contexts.iter().find(|c| c.name == name) else {
        let flag = if context.is_some() {
            "--context"
        } else {
            "current-context"
        };
        return Err(KubeError::Usage(format!(
            "{flag} {name}: no such context in {} ({has}); pass --context NAME",
            list(files)
        )));
    };
    let namespace = found
        .context
        .as_ref()
        .and_then(|c| c.namespace.clone())
        .filter(|n| !n.is_empty());
    Ok((name, namespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    \
        server: https://10.0.0.1:6443\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n\
        - name: a\n  context:\n    cluster: c\n    user: u\n    namespace: team-a\n\
        - name: b\n  context:\n    cluster: c\n    user: u\ncurrent-context: a\n";

    #[test]
    fn the_context_and_its_namespace_are_picked_as_kubectl_picks_them() {
        let kc = Kubeconfig::from_yaml(TWO).expect("parses");
        let files = [PathBuf::from("/k")];
        let (c, ns) = pick(&kc, None, &files).expect("current context");
        assert_eq!((c.as_str(), ns.as_deref()), ("a", Some("team-a")));
        let (c, ns) = pick(&kc, Some("b"), &files).expect("named context");
        assert_eq!((c.as_str(), ns), ("b", None));
        let e = pick(&kc, Some("x"), &files).err().map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("--context x: no such context in /k (it has: a, b); pass --context NAME")
        );
    }

    #[test]
    fn a_kubeconfig_without_current_context_asks_for_one() {
        let kc = Kubeconfig::from_yaml(&TWO.replace("current-context: a\n", "")).expect("parses");
        let e = pick(&kc, None, &[PathBuf::from("/k")])
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("kubeconfig /k: no current-context; pass --context NAME (it has: a, b)")
        );
    }
}
