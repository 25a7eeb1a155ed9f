//! Admission refusals of a create, as a real API server answers them: a `403 Forbidden`
//! `Status` worded by the ResourceQuota admission plugin (`exceeded quota: …`), the LimitRanger
//! (`minimum storage usage per PersistentVolumeClaim is 5Gi, but request is 2Gi`) or the RBAC
//! authorizer (`… cannot create resource "jobs" in API group "batch" in the namespace "…"`).
//! Also [`FakeKube::seed_run`]: a labelled run's Job and claim created some time ago, for
//! `kube cleanup`'s age rule.

use super::{create, details, lock, status, FakeKube, Res, Resp, State, JOB, PVC};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Why a create is refused.
#[derive(Clone, Debug)]
pub enum Refusal {
    /// ResourceQuota `quota` ran out of `resource` (e.g. `requests.storage`).
    Quota {
        quota: String,
        resource: String,
        requested: String,
        used: String,
        limited: String,
    },
    /// A LimitRange constraint, in LimitRanger's words, e.g. `minimum storage usage per
    /// PersistentVolumeClaim is 5Gi, but request is 2Gi`.
    LimitRange(String),
    /// The authorizer: `user` may not create the kind.
    Rbac { user: String },
}

/// A refusal of creates of one kind ("Job", "PersistentVolumeClaim"), optionally only of
/// objects whose JSON has `value` at pointer `at` (e.g. `/spec/storageClassName`).
#[derive(Clone, Debug)]
pub struct Refuse {
    pub kind: String,
    pub only: Option<(String, String)>,
    pub why: Refusal,
}

impl Refuse {
    pub fn creates_of(kind: &str, why: Refusal) -> Refuse {
        Refuse {
            kind: kind.into(),
            only: None,
            why,
        }
    }

    /// Only objects with `value` at JSON pointer `at`.
    pub fn when(mut self, at: &str, value: &str) -> Refuse {
        self.only = Some((at.into(), value.into()));
        self
    }
}

/// The answer to a create that a refusal matches (checked after validation, as admission is).
pub(super) fn check(st: &mut State, res: &Res, ns: &str, name: &str, obj: &Value) -> Option<Resp> {
    let r = st.refusals.iter().find(|r| {
        r.kind == res.kind
            && r.only
                .as_ref()
                .is_none_or(|(at, v)| obj.pointer(at).and_then(Value::as_str) == Some(v.as_str()))
    })?;
    let q = res.qualified();
    let resp = match &r.why {
        Refusal::Quota {
            quota,
            resource,
            requested,
            used,
            limited,
        } => status(
            403,
            "Forbidden",
            &format!(
                "{q} \"{name}\" is forbidden: exceeded quota: {quota}, requested: \
                 {resource}={requested}, used: {resource}={used}, limited: {resource}={limited}"
            ),
            details(res, name),
        ),
        Refusal::LimitRange(m) => status(
            403,
            "Forbidden",
            &format!("{q} \"{name}\" is forbidden: {m}"),
            details(res, name),
        ),
        // The authorizer runs before the name is known: the message names no object.
        Refusal::Rbac { user } => {
            let mut d = json!({"kind": res.plural});
            if !res.group.is_empty() {
                d["group"] = json!(res.group);
            }
            status(
                403,
                "Forbidden",
                &format!(
                    "{q} is forbidden: User \"{user}\" cannot create resource \"{}\" in API \
                     group \"{}\" in the namespace \"{ns}\"",
                    res.plural, res.group
                ),
                d,
            )
        }
    };
    st.history.push(format!("refused {}/{name}", res.kind));
    Some(resp)
}

/// RFC 3339 for `age` ago.
fn ago(age: Duration) -> String {
    let t = SystemTime::now()
        .checked_sub(age)
        .unwrap_or(UNIX_EPOCH)
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    super::rfc3339(t as i64)
}

impl FakeKube {
    /// Creates run `run`'s Job and claim (labelled as iogauge labels them) as if created `age`
    /// ago; the Job's pod is created by the fake's job controller as usual (now).
    pub fn seed_run(&self, run: &str, age: Duration) {
        self.seed_run_with_class(run, age, None);
    }

    /// As [`Self::seed_run`], its claim of storage class `class` (provisioned by the fake's PV
    /// controller as any claim of the class).
    pub fn seed_run_with_class(&self, run: &str, age: Duration, class: Option<&str>) {
        let mut st = lock(&self.shared.state);
        let ns = st.ns.clone();
        let name = format!("iogauge-{run}-standard");
        let labels = json!({"app.kubernetes.io/managed-by": "iogauge", "iogauge.dev/run": run,
            "iogauge.dev/target": "standard"});
        let job = json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"backoffLimit": 0, "template": {
                "metadata": {"labels": labels},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "iogauge",
                    "image": "iogauge:test", "command": ["/iogauge", "check", "etcd"]}]}}},
        });
        let mut claim = json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}},
        });
        if let Some(c) = class {
            claim["spec"]["storageClassName"] = json!(c);
        }
        let when = ago(age);
        for (res, obj) in [(&JOB, job), (&PVC, claim)] {
            let _ = create(&mut st, res, &ns, Some(obj), &HashMap::new());
            if let Some(i) = st.find(res.kind, Some(&ns), &name) {
                st.objects[i]["metadata"]["creationTimestamp"] = json!(when);
            }
        }
        // Seeds are not what the code under test created.
        st.created.clear();
    }
}
