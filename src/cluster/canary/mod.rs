//! `iogauge kube canary install|uninstall|status`: `iogauge canary` running for good in a
//! cluster. A DaemonSet measures a directory on every node a selector picks, a StatefulSet per
//! storage class measures a claim of that class, a headless Service lets Prometheus scrape them,
//! and with the prometheus-operator's CRDs a ServiceMonitor and a PrometheusRule tell it to. Every
//! object carries the canary's labels, so that `uninstall` and `status` find exactly what
//! `install` made.

pub(crate) mod api;
mod live;
pub(crate) mod manifests;
pub(crate) mod selector;
pub(crate) mod status;
pub(crate) mod text;

use super::client::Cluster;
use super::request::PodOptions;
use super::KubeError;

/// The `app.kubernetes.io/name` of every canary object (a check's objects say `iogauge`).
pub(crate) const APP: &str = "iogauge-canary";
/// The canary's name (`--name`) on every object it made.
pub(crate) use super::labels::CANARY_LABEL;
/// Which of the canary's targets a pod measures: `nodes`, or a storage class's slug.
pub(crate) use super::manifests::TARGET_LABEL;
/// What a pod measures, in words ("node selector …", "storage class fast"), on the pod template.
pub(crate) const TARGET_ANNOTATION: &str = "iogauge.dev/target";
/// The canary's port, as `iogauge canary --listen` serves it and the Service names it.
pub(crate) const PORT: i32 = 9465;
/// The port's name, which the Service and the ServiceMonitor refer to.
pub(crate) const PORT_NAME: &str = "metrics";
/// The longest `--name`: the StatefulSet's name (`iogauge-canary-NAME-CLASS`) must leave room
/// for the controller's revision hash within Kubernetes' 63 characters.
pub(crate) const NAME_MAX: usize = 12;

/// Whether to make the prometheus-operator's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    /// When the cluster serves `monitoring.coreos.com/v1` (a dry run without a cluster: not).
    Auto,
    /// Always (a cluster without the CRDs refuses them).
    Always,
    /// Never: a Service only, for a Prometheus configured by hand.
    Never,
}

/// What `kube canary install` was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct CanaryRequest {
    /// `--name`: which canary (several may live in one namespace).
    pub name: String,
    /// The built-in profiles each pod's canary runs.
    pub profiles: Vec<String>,
    /// `--every`, `--window`, `--max-busy`, as the pod's canary takes them.
    pub every: String,
    pub window: String,
    /// `--window` in seconds, which the liveness probe waits out.
    pub window_s: u64,
    pub max_busy: String,
    /// `--nodes`: a label selector; with `host_path` one DaemonSet over those nodes.
    pub nodes: Option<String>,
    pub host_path: Option<String>,
    /// `--storage-class`: one StatefulSet per class, each pod with a claim of `claim_size`.
    pub storage_classes: Vec<String>,
    pub claim_size: u64,
    /// How every pod is built (the same flags as `kube check`).
    pub pod: PodOptions,
    pub operator: Operator,
    /// Extra labels on the ServiceMonitor and PrometheusRule, for a Prometheus that selects
    /// them by label (e.g. `release=kube-prometheus-stack`).
    pub monitor_labels: Vec<(String, String)>,
}

/// The labels every object of canary `name` carries, and the selector that finds them.
pub(crate) fn labels(name: &str) -> std::collections::BTreeMap<String, String> {
    std::collections::BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), APP.to_string()),
        (
            super::labels::MANAGED_BY.0.to_string(),
            super::labels::MANAGED_BY.1.to_string(),
        ),
        (CANARY_LABEL.to_string(), name.to_string()),
    ])
}

/// The label selector for every object of canary `name`.
pub(crate) fn selector(name: &str) -> String {
    labels(name)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `--name`: a DNS label short enough for every object name made from it.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let b = name.as_bytes();
    let valid = !b.is_empty()
        && b.len() <= NAME_MAX
        && ok(b[0])
        && ok(b[b.len() - 1])
        && b.iter().all(|&c| ok(c) || c == b'-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "--name '{name}': expected 1 to {NAME_MAX} lowercase letters, digits and '-', \
             starting and ending with a letter or digit, e.g. etcd"
        ))
    }
}

/// A label name or value's part as Kubernetes takes it: at most 63 letters, digits, '-', '_'
/// and '.', starting and ending with a letter or digit (a value may also be empty).
fn label_name(s: &str) -> bool {
    let b = s.as_bytes();
    let end = |c: &u8| c.is_ascii_alphanumeric();
    b.len() <= 63
        && b.first().is_some_and(end)
        && b.last().is_some_and(end)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `--monitor-label KEY=VALUE`: a label Kubernetes takes (`[prefix/]name`, the prefix a DNS
/// subdomain), and none of the canary's own, which uninstall and status find it by.
pub(crate) fn check_monitor_label(key: &str, value: &str) -> Result<(), String> {
    if labels("x").contains_key(key) {
        return Err(format!(
            "--monitor-label {key}={value}: {key} is the canary's own label (uninstall and status \
             find its objects by it); choose another key, e.g. release"
        ));
    }
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let prefix_ok = prefix.is_none_or(|p| {
        p.len() <= 253
            && p.split('.').all(|l| {
                let b = l.as_bytes();
                !b.is_empty()
                    && b.iter()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                    && b[0] != b'-'
                    && b[b.len() - 1] != b'-'
            })
    });
    if !prefix_ok || !label_name(name) {
        return Err(format!(
            "--monitor-label '{key}': expected a label key, [prefix/]name with a name of at most \
             63 letters, digits, '-', '_' or '.', e.g. release or example.com/team"
        ));
    }
    if !value.is_empty() && !label_name(value) {
        return Err(format!(
            "--monitor-label {key}='{value}': expected a label value, at most 63 letters, \
             digits, '-', '_' or '.' starting and ending with a letter or digit, e.g. \
             kube-prometheus-stack"
        ));
    }
    Ok(())
}

/// Which cluster and namespace (`--kubeconfig`, `--context`, `--namespace`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Conn {
    pub kubeconfig: Option<std::path::PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
}

async fn connect(conn: &Conn) -> Result<Cluster, KubeError> {
    Cluster::connect(
        conn.kubeconfig.as_deref(),
        conn.context.as_deref(),
        conn.namespace.as_deref(),
    )
    .await
}

/// The namespace a dry run names without asking the server: `--namespace`, else the
/// kubeconfig context's, else `default`, as kubectl would.
pub(crate) fn offline_namespace(conn: &Conn) -> Result<String, KubeError> {
    if let Some(ns) = &conn.namespace {
        return Ok(ns.clone());
    }
    if super::kubeconfig::nothing_configured(conn.kubeconfig.as_deref()) {
        return Ok("default".into());
    }
    Ok(
        super::kubeconfig::load(conn.kubeconfig.as_deref(), conn.context.as_deref())?
            .and_then(|l| l.namespace)
            .unwrap_or_else(|| "default".into()),
    )
}

/// `install`: applies the canary's objects.
pub(crate) fn install(req: &CanaryRequest, conn: &Conn) -> Result<api::Done, KubeError> {
    super::run::runtime()?.block_on(async {
        let c = connect(conn).await?;
        let mut done = api::install(&c, req).await?;
        done.notes
            .push(format!("canary {} in namespace {}", req.name, c.namespace));
        Ok(done)
    })
}

/// `uninstall`: deletes what carries the canary's labels.
pub(crate) fn uninstall(
    name: &str,
    delete_claims: bool,
    conn: &Conn,
) -> Result<api::Done, KubeError> {
    super::run::runtime()?.block_on(async {
        let c = connect(conn).await?;
        api::uninstall(&c, name, delete_claims).await
    })
}

/// `status`: every canary pod's latest document, and the namespace asked.
pub(crate) fn status(name: &str, conn: &Conn) -> Result<(Vec<status::Row>, String), KubeError> {
    super::run::runtime()?.block_on(async {
        let c = connect(conn).await?;
        Ok((status::status(&c, name).await?, c.namespace.clone()))
    })
}

/// The profiles each pod runs: built-in ones (default etcd), checked as the pod's canary checks
/// them (each once, each judged by a sequential test); a profile file would need a ConfigMap
/// the canary does not make yet.
pub(crate) fn profiles(given: &[String]) -> Result<Vec<String>, String> {
    if given.is_empty() {
        return Ok(vec!["etcd".into()]);
    }
    let mut resolved = Vec::new();
    for p in given {
        if crate::input::profiles::is_path(std::ffi::OsStr::new(p)) {
            return Err(format!(
                "'{p}': kube canary runs built-in profiles only (etcd, etcd-large, sync-iops, \
                 gitlab); a profile file cannot travel to its pods yet"
            ));
        }
        resolved.push(crate::input::profiles::get(p)?);
    }
    crate::input::profiles::canary_checks(&resolved)?;
    Ok(given.to_vec())
}

/// Now in unix seconds, for the ages `status` prints.
pub(crate) fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_labels_are_labels_and_never_the_canarys_own() {
        for (k, v) in [
            ("release", "kube-prometheus-stack"),
            ("example.com/team", "a_b.c"),
            ("x", ""),
        ] {
            assert_eq!(check_monitor_label(k, v), Ok(()), "{k}={v}");
        }
        for k in [
            "app.kubernetes.io/name",
            "app.kubernetes.io/managed-by",
            "iogauge.dev/canary",
        ] {
            let e = check_monitor_label(k, "x").err().unwrap_or_default();
            assert!(e.contains("is the canary's own label"), "{k}: {e}");
        }
        for k in ["-a", "a b", "Ex.com/x", "/x", "x/", &"a".repeat(64)] {
            let e = check_monitor_label(k, "v").err().unwrap_or_default();
            assert!(e.contains("expected a label key"), "{k}: {e}");
        }
        for v in ["-v", "a b", "x\u{1b}", &"v".repeat(64)] {
            let e = check_monitor_label("k", v).err().unwrap_or_default();
            assert!(e.contains("expected a label value"), "{v}: {e}");
        }
    }

    #[test]
    fn names_are_short_dns_labels_and_the_selector_finds_the_labels() {
        assert!(check_name("default").is_ok());
        assert!(check_name("a-1").is_ok());
        for bad in ["", "Default", "-a", "a-", "thirteen-long", "a_b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(
            selector("x"),
            "app.kubernetes.io/managed-by=iogauge,app.kubernetes.io/name=iogauge-canary,\
             iogauge.dev/canary=x"
        );
    }
}
