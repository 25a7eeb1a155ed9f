//! PersistentVolumes, as the PV controller and an external provisioner make them: one per claim
//! when it binds (its capacity what the class rounds the request up to, its
//! `persistentVolumeReclaimPolicy` the class's), removed when its claim is deleted under
//! `Delete`, or kept as `Released` with its `claimRef` under `Retain` (what
//! `pkg/controller/volume/persistentvolume` does: the volume is never reused or deleted until
//! someone deletes it). Also seeded volumes that belong to no claim of the test, so that a test
//! can prove they are left alone.

use super::{
    name_of, not_found, now_rfc3339, status, str_at, uid_of, Builder, Res, Resp, State,
    StorageClassSeed,
};
use serde_json::{json, Value};

impl StorageClassSeed {
    /// The class's `reclaimPolicy` (default `Delete`).
    pub fn reclaim_policy(mut self, policy: &str) -> Self {
        self.reclaim = policy.into();
        self
    }

    /// A class parameter, e.g. ("type", "gp2").
    pub fn parameter(mut self, key: &str, value: &str) -> Self {
        self.parameters.push((key.into(), value.into()));
        self
    }

    /// Volumes are provisioned in multiples of `bytes` (as EBS sc1/st1 or Azure Files' 100 GiB
    /// minimum round up): the bound capacity then differs from the request.
    pub fn rounds_to(mut self, bytes: u64) -> Self {
        self.round_to = Some(bytes);
        self
    }
}

impl Builder {
    /// A PersistentVolume of class `class`, Released from a claim of another namespace long
    /// gone (a Retain volume someone else left): nothing under test may touch it.
    pub fn released_volume(mut self, name: &str, class: &str) -> Self {
        self.seed_objects.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "finalizers": ["kubernetes.io/pv-protection"]},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "8Gi"},
                "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "namespace": "team-a", "name": "data-db-0",
                    "uid": "0b5e3a4c-1d2e-4f60-8a7b-9c0d1e2f3a4b", "resourceVersion": "4711"},
                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": class,
                "volumeMode": "Filesystem"},
            "status": {"phase": "Released"},
        }));
        self
    }
}

impl Builder {
    /// An Available PersistentVolume of class `class` made beforehand (an administrator's, or a
    /// static local volume): a claim of that class binds to it, as the PV controller binds a
    /// matching Available volume before it asks for a new one, with the volume marked
    /// `pv.kubernetes.io/bound-by-controller`.
    pub fn available_volume(mut self, name: &str, class: &str, capacity: &str) -> Self {
        self.seed_objects.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "finalizers": ["kubernetes.io/pv-protection"]},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": capacity},
                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": class,
                "volumeMode": "Filesystem", "hostPath": {"path": format!("/mnt/{name}")}},
            "status": {"phase": "Available"},
        }));
        self
    }
}

/// Binds claim `idx` to an Available volume of its class that holds its request, if there is
/// one (returning the volume's name): the claim then takes the volume's capacity.
pub(super) fn bind_available(st: &mut State, idx: usize) -> Option<String> {
    let pvc = st.objects[idx].clone();
    let class = str_at(&pvc, "/spec/storageClassName").to_string();
    let want = bytes(str_at(&pvc, "/spec/resources/requests/storage"))?;
    let i = st.objects.iter().position(|o| {
        o["kind"] == "PersistentVolume"
            && str_at(o, "/status/phase") == "Available"
            && str_at(o, "/spec/storageClassName") == class
            && bytes(str_at(o, "/spec/capacity/storage")).is_some_and(|c| c >= want)
    })?;
    let name = name_of(&st.objects[i]).to_string();
    let capacity = st.objects[i]["spec"]["capacity"]["storage"].clone();
    st.update(i, |o| {
        o["metadata"]["annotations"] = json!({"pv.kubernetes.io/bound-by-controller": "yes"});
        o["spec"]["claimRef"] = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "namespace": str_at(&pvc, "/metadata/namespace"), "name": name_of(&pvc),
            "uid": uid_of(&pvc), "resourceVersion": pvc["metadata"]["resourceVersion"]});
        o["status"] = json!({"phase": "Bound", "lastPhaseTransitionTime": now_rfc3339()});
    });
    st.update(idx, |o| o["status"]["capacity"]["storage"] = capacity);
    Some(name)
}

/// A quantity's bytes (the forms the tests and iogauge write: plain, Ki/Mi/Gi/Ti, k/M/G/T).
fn bytes(q: &str) -> Option<u64> {
    let units = [
        ("Ki", 1u64 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("k", 1000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
    ];
    for (suffix, mult) in units {
        if let Some(n) = q.strip_suffix(suffix) {
            return n.parse::<u64>().ok().map(|n| n * mult);
        }
    }
    q.parse().ok()
}

/// Bytes as the API server prints a quantity it computed: the largest binary unit that divides.
fn quantity(b: u64) -> String {
    for (suffix, shift) in [("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", b >> shift);
        }
    }
    b.to_string()
}

/// Provisions and binds the volume of claim `idx` (named `volume`, as `bind_pvc` set in the
/// claim's `spec.volumeName`), and sets the claim's `status.capacity` to the volume's.
pub(super) fn provision(st: &mut State, idx: usize, volume: &str) {
    let pvc = st.objects[idx].clone();
    let class = str_at(&pvc, "/spec/storageClassName").to_string();
    let sc = st.class(&class).cloned().unwrap_or(Value::Null);
    let requested = str_at(&pvc, "/spec/resources/requests/storage").to_string();
    let round = st.round_to.get(&class).copied();
    let capacity = match (bytes(&requested), round) {
        (Some(b), Some(r)) if r > 0 => quantity(b.div_ceil(r) * r),
        _ => requested,
    };
    let policy = match str_at(&sc, "/reclaimPolicy") {
        "" => "Delete",
        p => p,
    }
    .to_string();
    let provisioner = str_at(&sc, "/provisioner").to_string();
    let pv = json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": volume, "finalizers": ["kubernetes.io/pv-protection"],
            "annotations": {"pv.kubernetes.io/provisioned-by": provisioner}},
        "spec": {"accessModes": pvc["spec"]["accessModes"], "capacity": {"storage": capacity},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "namespace": str_at(&pvc, "/metadata/namespace"), "name": name_of(&pvc),
                "uid": uid_of(&pvc), "resourceVersion": pvc["metadata"]["resourceVersion"]},
            "persistentVolumeReclaimPolicy": policy, "storageClassName": class,
            "volumeMode": pvc["spec"]["volumeMode"],
            "csi": {"driver": provisioner, "volumeHandle": format!("vol-{}", &uid_of(&pvc)[..8])}},
        "status": {"phase": "Bound", "lastPhaseTransitionTime": now_rfc3339()},
    });
    st.insert(pv);
    st.update(idx, |o| {
        o["status"]["capacity"]["storage"] = json!(capacity)
    });
}

/// The claim `claim` was deleted: its volume goes (Delete) or stays Released (Retain).
pub(super) fn claim_deleted(st: &mut State, claim: &Value) {
    let uid = uid_of(claim);
    let Some(i) = st
        .objects
        .iter()
        .position(|o| o["kind"] == "PersistentVolume" && str_at(o, "/spec/claimRef/uid") == uid)
    else {
        return;
    };
    if str_at(&st.objects[i], "/spec/persistentVolumeReclaimPolicy") == "Retain" {
        let name = name_of(&st.objects[i]).to_string();
        st.update(
            i,
            |o| {
                o["status"] = json!({"phase": "Released", "lastPhaseTransitionTime": now_rfc3339()})
            },
        );
        st.history.push(format!("released PersistentVolume/{name}"));
    } else {
        super::delete_object(st, i, super::Propagation::Background);
    }
}

/// RFC 7386 JSON merge patch: objects merge key by key, `null` removes, anything else replaces.
fn merge(target: &mut Value, patch: &Value) {
    let Some(p) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    for (k, v) in p {
        if v.is_null() {
            if let Some(t) = target.as_object_mut() {
                t.remove(k);
            }
        } else {
            merge(&mut target[k.as_str()], v);
        }
    }
}

/// `PATCH /api/v1/persistentvolumes/NAME` with a merge patch. A Released volume whose policy
/// becomes Delete is reclaimed at once, as the PV controller does (the provisioner deletes the
/// disk, then the object).
pub(super) fn patch(st: &mut State, res: &Res, name: &str, body: Option<Value>) -> Resp {
    let Some(i) = st.find(res.kind, None, name) else {
        return not_found(res, name);
    };
    let Some(body) = body.filter(Value::is_object) else {
        return status(
            400,
            "BadRequest",
            "error decoding patch: invalid character looking for beginning of value",
            Value::Null,
        );
    };
    // metadata.uid and metadata.resourceVersion in a patch are preconditions, as the API
    // server's optimistic concurrency makes them.
    let current = st.objects[i].clone();
    let kind = "persistentvolumes";
    if let Some(uid) = body["metadata"]["uid"].as_str() {
        if uid != uid_of(&current) {
            return status(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on {kind} \"{name}\": Precondition failed: \
                     UID in precondition: {uid}, UID in object meta: {}",
                    uid_of(&current)
                ),
                Value::Null,
            );
        }
    }
    if let Some(rv) = body["metadata"]["resourceVersion"].as_str() {
        if rv != str_at(&current, "/metadata/resourceVersion") {
            return status(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on {kind} \"{name}\": the object has been \
                     modified; please apply your changes to the latest version and try again"
                ),
                Value::Null,
            );
        }
    }
    st.update(i, |o| merge(o, &body));
    st.history.push(format!("patched PersistentVolume/{name}"));
    let obj = st.objects[i].clone();
    if str_at(&obj, "/status/phase") == "Released"
        && str_at(&obj, "/spec/persistentVolumeReclaimPolicy") == "Delete"
    {
        super::delete_object(st, i, super::Propagation::Background);
    }
    Resp::json(200, &obj)
}
