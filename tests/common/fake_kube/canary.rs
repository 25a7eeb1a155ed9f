//! What `iogauge kube canary` needs of the fake: DaemonSets, StatefulSets and Services (apps/v1
//! and v1), the prometheus-operator's ServiceMonitors, PodMonitors and PrometheusRules with their
//! discovery document (`/apis/monitoring.coreos.com/v1`, 404 without the CRDs, as a real API
//! server answers), server-side apply (PATCH with `fieldManager`) creating or updating them, and
//! the two controllers in their simplest form: a DaemonSet gets one pod per node that fits its
//! template (node_fits), a StatefulSet one pod `<name>-0` with the claim `data-<name>-0` from its
//! template. A pod whose target (node, or claim's class) has a log from [`Builder::canary_log`]
//! is Running and Ready with that log; a target scripted [`Scenario::Unschedulable`] stays
//! Pending with the scheduler's message, one scripted [`Scenario::Forbidden`] gets no pod but
//! the DaemonSet's FailedCreate event; with [`Builder::canary_run`] any other runs its container
//! for real (as a Job's pod does), else it is Running and Ready with an empty log (no probe
//! ended yet).

use super::*;

pub(super) const DAEMONSET: Res = Res {
    kind: "DaemonSet",
    plural: "daemonsets",
    group: "apps",
    api_version: "apps/v1",
    namespaced: true,
};
pub(super) const STATEFULSET: Res = Res {
    kind: "StatefulSet",
    plural: "statefulsets",
    group: "apps",
    api_version: "apps/v1",
    namespaced: true,
};
pub(super) const SERVICE: Res = Res {
    kind: "Service",
    plural: "services",
    group: "",
    api_version: "v1",
    namespaced: true,
};
const MONITORING: &str = "monitoring.coreos.com";
pub(super) const MONITORS: [Res; 3] = [
    Res {
        kind: "ServiceMonitor",
        plural: "servicemonitors",
        group: MONITORING,
        api_version: "monitoring.coreos.com/v1",
        namespaced: true,
    },
    Res {
        kind: "PodMonitor",
        plural: "podmonitors",
        group: MONITORING,
        api_version: "monitoring.coreos.com/v1",
        namespaced: true,
    },
    Res {
        kind: "PrometheusRule",
        plural: "prometheusrules",
        group: MONITORING,
        api_version: "monitoring.coreos.com/v1",
        namespaced: true,
    },
];

/// The canary's part of the fake's state.
#[derive(Default)]
pub(super) struct CanaryState {
    /// The prometheus-operator's CRDs are installed.
    pub operator: bool,
    /// Logs served for canary pods, by target (node name, or storage class of the pod's claim).
    pub logs: BTreeMap<String, Vec<u8>>,
    /// Canary pods without a log of their own run their container for real.
    pub run: bool,
    /// The host port each running pod's `--listen` was given, by pod name.
    pub ports: Mutex<BTreeMap<String, u16>>,
    /// The operator's CRDs without PodMonitor (an older or trimmed install): not served.
    pub no_pod_monitor: bool,
}

impl Builder {
    /// The cluster has the prometheus-operator's CRDs (monitoring.coreos.com/v1).
    pub fn prometheus_operator(mut self) -> Self {
        self.canary.operator = true;
        self
    }

    /// The prometheus-operator's CRDs, but not PodMonitor's.
    pub fn prometheus_operator_without_pod_monitors(mut self) -> Self {
        self.canary.operator = true;
        self.canary.no_pod_monitor = true;
        self
    }

    /// Canary pods without a [`Builder::canary_log`] run their container for real, as a Job's
    /// pod does in [`Scenario::Run`]; [`FakeKube::canary_port`] says where each listens.
    pub fn canary_run(mut self) -> Self {
        self.canary.run = true;
        self
    }

    /// Canary pods on node `target`, or with a claim of class `target`, serve `log` as theirs.
    pub fn canary_log(mut self, target: &str, log: Vec<u8>) -> Self {
        self.canary.logs.insert(target.into(), log);
        self
    }
}

impl FakeKube {
    /// `obj` made by someone else (as `kubectl create` would), in the fake's namespace.
    pub fn put(&self, mut obj: Value) {
        let mut st = lock(&self.shared.state);
        obj["metadata"]["namespace"] = json!(st.ns.clone());
        st.insert(obj);
    }

    /// The port on 127.0.0.1 where a running canary pod serves `--listen` (its metrics).
    pub fn canary_port(&self, pod: &str) -> Option<u16> {
        let st = lock(&self.shared.state);
        let ports = lock(&st.canary.ports);
        ports.get(pod).copied()
    }
}

/// A container's arguments as the kubelet passes them: `$(VAR)` replaced by the container's
/// environment (the Downward API's values included). And, since the fake has no network
/// namespaces, a `--listen ADDR` (a pod's own port) becomes a free port on 127.0.0.1.
pub(super) fn kubelet_args(
    st: &State,
    pod: &str,
    env: &[(String, String)],
    args: Vec<String>,
) -> Vec<String> {
    let mut out: Vec<String> = args
        .into_iter()
        .map(|a| {
            env.iter()
                .fold(a, |a, (k, v)| a.replace(&format!("$({k})"), v))
        })
        .collect();
    if let Some(i) = out.iter().position(|a| a == "--listen") {
        if let Some(addr) = out.get_mut(i + 1).filter(|a| *a != "none") {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_or(0, |a| a.port());
            *addr = format!("127.0.0.1:{port}");
            lock(&st.canary.ports).insert(pod.to_string(), port);
        }
    }
    out
}

/// The resource a canary path names: (namespace, plural, rest) within apps/v1, v1 services and
/// monitoring.coreos.com/v1 (only with the CRDs).
pub(super) fn route<'a>(
    st: &CanaryState,
    segs: &'a [&'a str],
) -> Option<(Res, &'a str, &'a [&'a str])> {
    let st_operator = st.operator;
    let (res, ns, rest) = match segs {
        ["apis", "apps", "v1", "namespaces", ns, plural, rest @ ..] => (
            [DAEMONSET, STATEFULSET]
                .into_iter()
                .find(|r| r.plural == *plural)?,
            *ns,
            rest,
        ),
        ["api", "v1", "namespaces", ns, "services", rest @ ..] => (SERVICE, *ns, rest),
        ["apis", MONITORING, "v1", "namespaces", ns, plural, rest @ ..] if st_operator => (
            MONITORS
                .into_iter()
                .filter(|r| !(st.no_pod_monitor && r.kind == "PodMonitor"))
                .find(|r| r.plural == *plural)?,
            *ns,
            rest,
        ),
        _ => return None,
    };
    (rest.len() <= 1).then_some((res, ns, rest))
}

/// GET `/apis/monitoring.coreos.com/v1`: the discovery document, or 404 without the CRDs.
pub(super) fn discovery(st: &State, method: &str, path: &str) -> Option<Resp> {
    if method != "GET" || path.trim_end_matches('/') != "/apis/monitoring.coreos.com/v1" {
        return None;
    }
    if !st.canary.operator {
        return Some(no_such_path());
    }
    let verbs = json!([
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "create",
        "update",
        "watch"
    ]);
    let resources: Vec<Value> = MONITORS
        .iter()
        .filter(|r| !(st.canary.no_pod_monitor && r.kind == "PodMonitor"))
        .map(|r| {
            json!({"name": r.plural, "singularName": r.kind.to_lowercase(), "namespaced": true,
                "kind": r.kind, "verbs": verbs, "categories": ["prometheus-operator"]})
        })
        .collect();
    Some(Resp::json(
        200,
        &json!({"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": "monitoring.coreos.com/v1", "resources": resources}),
    ))
}

/// Server-side apply: the object is created, or its labels, annotations and spec replaced.
pub(super) fn apply(
    st: &mut State,
    res: &Res,
    ns: &str,
    name: &str,
    body: Option<Value>,
    q: &HashMap<String, String>,
) -> Resp {
    if q.get("fieldManager").is_none_or(|m| m.is_empty()) {
        return status(
            422,
            "Invalid",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            Value::Null,
        );
    }
    let Some(obj) = body.filter(Value::is_object) else {
        return status(
            400,
            "BadRequest",
            "error decoding patch: empty body",
            Value::Null,
        );
    };
    if name_of(&obj) != name {
        return status(
            400,
            "BadRequest",
            "the name of the object does not match the name on the URL",
            Value::Null,
        );
    }
    if matches!(res.kind, "DaemonSet" | "StatefulSet") {
        let sel = &obj["spec"]["selector"]["matchLabels"];
        let labels = &obj["spec"]["template"]["metadata"]["labels"];
        let fits = sel
            .as_object()
            .is_some_and(|m| m.iter().all(|(k, v)| &labels[k] == v));
        if !fits {
            return invalid(
                res,
                name,
                &[(
                    "spec.template.metadata.labels",
                    "Invalid value",
                    "`selector` does not match template `labels`",
                )],
            );
        }
    }
    let Some(idx) = st.find(res.kind, Some(ns), name) else {
        st.history
            .push(format!("applied {}/{name} (new)", res.kind));
        return create(st, res, ns, Some(obj), &HashMap::new());
    };
    if res.kind == "StatefulSet" {
        // apps/v1 validation (ValidateStatefulSetUpdate): only these fields may change.
        let fixed = |v: &Value| {
            let mut v = v.clone();
            if let Some(m) = v.as_object_mut() {
                for k in [
                    "replicas",
                    "ordinals",
                    "template",
                    "updateStrategy",
                    "persistentVolumeClaimRetentionPolicy",
                    "minReadySeconds",
                ] {
                    m.remove(k);
                }
            }
            v
        };
        if fixed(&st.objects[idx]["spec"]) != fixed(&obj["spec"]) {
            return invalid(
                res,
                name,
                &[(
                    "spec",
                    "Forbidden",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
                     'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and \
                     'minReadySeconds' are forbidden",
                )],
            );
        }
    }
    st.history
        .push(format!("applied {}/{name} (update)", res.kind));
    st.update(idx, |o| {
        for k in ["labels", "annotations"] {
            o["metadata"][k] = obj["metadata"][k].clone();
        }
        if o["spec"] != obj["spec"] {
            o["spec"] = obj["spec"].clone();
            let g = o["metadata"]["generation"].as_i64().unwrap_or(1);
            o["metadata"]["generation"] = json!(g + 1);
        }
    });
    Resp::json(200, &st.objects[idx])
}

fn owner(ds: &Value) -> Value {
    json!([{"apiVersion": ds["apiVersion"], "kind": ds["kind"], "name": name_of(ds),
        "uid": uid_of(ds), "controller": true, "blockOwnerDeletion": true}])
}

/// Creates a controller's pod with `spec`, running with the target's log, or pending.
fn make_pod(st: &mut State, owner_obj: &Value, name: &str, spec: Value, target: &str) {
    let ns = str_at(owner_obj, "/metadata/namespace").to_string();
    let tmeta = &owner_obj["spec"]["template"]["metadata"];
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": tmeta["labels"],
            "annotations": tmeta["annotations"], "ownerReferences": owner(owner_obj)},
        "spec": spec,
        "status": {"phase": "Pending"},
    });
    let idx = st.insert(pod);
    let scenario = st.scenarios.get(target).cloned();
    if let Some(Scenario::Unschedulable(msg)) = scenario {
        return unschedulable(st, idx, &msg);
    }
    let uid = uid_of(&st.objects[idx]).to_string();
    if st.canary.run && !st.canary.logs.contains_key(target) {
        // The kubelet (tick, start) runs it as it runs a Job's pod.
        let rt = PodRt {
            stage: Stage::Scheduled,
            log: Arc::new(Mutex::new(Vec::new())),
            kill: Arc::new(AtomicBool::new(false)),
            term: Arc::new(AtomicBool::new(false)),
        };
        st.pods.insert(uid, rt);
        return;
    }
    let now = now_rfc3339();
    let p = st.objects[idx].clone();
    let cs = container_status(&p, json!({"running": {"startedAt": now}}), true);
    st.update(idx, |o| {
        o["status"] = json!({"phase": "Running", "conditions": conditions(&now, true, None),
            "hostIP": "10.0.0.10", "podIP": "10.244.0.9", "startTime": now,
            "containerStatuses": [cs]});
    });
    let log = st.canary.logs.get(target).cloned().unwrap_or_default();
    st.pods.insert(
        uid_of(&p).to_string(),
        PodRt {
            stage: Stage::Running,
            log: Arc::new(Mutex::new(log)),
            kill: Arc::new(AtomicBool::new(false)),
            term: Arc::new(AtomicBool::new(false)),
        },
    );
}

fn owns_pod(st: &State, uid: &str) -> bool {
    st.objects
        .iter()
        .any(|o| o["kind"] == "Pod" && owned_by(o, uid))
}

/// The DaemonSet and StatefulSet controllers, once per tick.
pub(super) fn controller(st: &mut State) {
    let sets: Vec<Value> = st
        .objects
        .iter()
        .filter(|o| o["kind"] == "DaemonSet" || o["kind"] == "StatefulSet")
        .cloned()
        .collect();
    for set in sets {
        let uid = uid_of(&set).to_string();
        let template = set["spec"]["template"]["spec"].clone();
        if set["kind"] == "DaemonSet" {
            let nodes: Vec<String> = st
                .nodes()
                .into_iter()
                .filter(|n| node_fits(&template, n).is_ok())
                .map(|n| name_of(n).to_string())
                .collect();
            for node in nodes {
                let exists = st.objects.iter().any(|o| {
                    o["kind"] == "Pod" && owned_by(o, &uid) && str_at(o, "/spec/nodeName") == node
                });
                if exists {
                    continue;
                }
                // Admission refuses the pod (Pod Security, a webhook): the controller's event.
                if let Some(Scenario::Forbidden(msg)) = st.scenarios.get(&node).cloned() {
                    let Some(i) = st.find(
                        "DaemonSet",
                        Some(str_at(&set, "/metadata/namespace")),
                        name_of(&set),
                    ) else {
                        continue;
                    };
                    let pod = format!("{}-{node}", name_of(&set));
                    let m = format!("Error creating: pods \"{pod}\" is forbidden: {msg}");
                    st.event(i, "Warning", "FailedCreate", &m, "daemonset-controller");
                    continue;
                }
                {
                    let mut spec = template.clone();
                    spec["nodeName"] = json!(node);
                    let name = format!("{}-{}", name_of(&set), st.suffix());
                    make_pod(st, &set, &name, spec, &node);
                }
            }
        } else if !owns_pod(st, &uid) {
            stateful_pod(st, &set, template);
        }
    }
}

/// A StatefulSet's pod `<name>-0` and, first, its claim from the template (kept when the
/// StatefulSet goes, as persistentVolumeClaimRetentionPolicy's default Retain says).
fn stateful_pod(st: &mut State, set: &Value, mut spec: Value) {
    let ns = str_at(set, "/metadata/namespace").to_string();
    let pod = format!("{}-0", name_of(set));
    let mut class = String::new();
    let mut volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
    for t in set["spec"]["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let claim = format!("{}-{pod}", name_of(t));
        class = str_at(t, "/spec/storageClassName").to_string();
        if st
            .find("PersistentVolumeClaim", Some(&ns), &claim)
            .is_none()
        {
            let mut labels = t["metadata"]["labels"].clone();
            if let (Some(l), Some(sel)) = (
                labels.as_object_mut(),
                set["spec"]["selector"]["matchLabels"].as_object(),
            ) {
                l.extend(sel.clone());
            }
            st.insert(json!({
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "namespace": ns, "labels": labels},
                "spec": t["spec"], "status": {"phase": "Pending"},
            }));
        }
        volumes.push(json!({"name": name_of(t), "persistentVolumeClaim": {"claimName": claim}}));
    }
    spec["volumes"] = json!(volumes);
    let node = st.pick_node(&spec).unwrap_or_default();
    if !node.is_empty() {
        spec["nodeName"] = json!(node);
    }
    make_pod(st, set, &pod, spec, &class);
}

/// Answers a request for the canary's resources (None: not one of them).
pub(super) fn handle(
    st: &mut State,
    method: &str,
    path: &str,
    body: Option<Value>,
    q: &HashMap<String, String>,
) -> Option<Resp> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (res, ns, rest) = route(&st.canary, &segs)?;
    let ns = ns.to_string();
    Some(match (method, rest) {
        ("GET", []) => list(st, &res, Some(&ns), q),
        ("GET", [name]) => match st.find(res.kind, Some(&ns), name) {
            Some(i) => Resp::json(200, &st.objects[i]),
            None => not_found(&res, name),
        },
        ("POST", []) => create(st, &res, &ns, body, q),
        ("PATCH", [name]) => apply(st, &res, &ns, name, body, q),
        ("DELETE", [name]) => delete_req(st, &res, &ns, name, body, q),
        _ => return None,
    })
}

/// CRC-32C, as src/report/frames.rs checksums frames.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0x82F6_3B78 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// The latest document in a canary pod's log (`--format kube-frames`), as JSON: the frames of
/// the last frame id, joined (checksums not verified: the log is this build's own).
pub fn canary_document(log: &[u8]) -> Value {
    let text = String::from_utf8_lossy(log);
    let frames: Vec<Vec<&str>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("iogauge-frame 1 "))
        .map(|l| l.splitn(6, ' ').collect())
        .collect();
    let last = frames.last().map_or("", |f| f[0]);
    let json: String = frames
        .iter()
        .filter(|f| f[0] == last)
        .map(|f| f.get(5).copied().unwrap_or_default())
        .collect();
    serde_json::from_str(&json).unwrap_or(Value::Null)
}

/// `doc` framed as a canary pod prints it (src/report/frames.rs's layout, fresh checksums), for
/// a log of a document a test shapes: an old one, one with an escape sequence.
pub fn canary_frames(doc: &Value) -> Vec<u8> {
    const PAYLOAD: usize = 8192;
    // ASCII only (serde_json escapes nothing else, so non-ASCII is escaped by hand).
    let raw: String = doc
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                let mut b = [0u16; 2];
                c.encode_utf16(&mut b)
                    .iter()
                    .map(|u| format!("\\u{u:04x}"))
                    .collect()
            }
        })
        .collect();
    let raw = raw.as_bytes();
    let total = raw.len().div_ceil(PAYLOAD);
    let doc_crc = crc32c(raw);
    let mut out = Vec::new();
    for (i, p) in raw.chunks(PAYLOAD).enumerate() {
        let covered = format!("0000beef {}/{total} {} {doc_crc:08x} ", i + 1, raw.len());
        let crc = crc32c(&[covered.as_bytes(), p].concat());
        out.extend_from_slice(format!("iogauge-frame 1 {covered}{crc:08x} ").as_bytes());
        out.extend_from_slice(p);
        out.push(b'\n');
    }
    out
}
