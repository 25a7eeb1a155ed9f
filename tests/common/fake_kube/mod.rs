//! A fake Kubernetes API server for the integration tests of `iogauge kube`.
//!
//! It stands in for a real cluster (there is none on a test machine): one in-process server on
//! `127.0.0.1`, plain HTTP/1.1 (keep-alive, chunked request bodies, `Connection: close`),
//! answering the few REST paths iogauge uses with JSON shaped as the real API server's
//! (apiVersion/kind, uid, resourceVersion, creationTimestamp; lists with `items` and
//! `metadata.resourceVersion`; errors as `Status` objects worded as Kubernetes words them). It
//! also plays the job controller, the scheduler, the PV controller, the ephemeral-volume
//! controller, the garbage collector and the kubelet, driven by a [`Scenario`]: in
//! [`Scenario::Run`] a pod's container really runs, as the binary the test names, on host
//! directories standing in for its volumes.
//!
//! ```ignore
//! let dir = common::scratch();
//! let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), dir.path())
//!     .storage_class(StorageClassSeed::new("standard", "rancher.io/local-path",
//!         BindingMode::WaitForFirstConsumer).default_class())
//!     .node(NodeSeed::new("worker-1"))
//!     .scenario_for("broken", Scenario::ProvisioningFailed("quota".into()))
//!     .start();
//! let kubeconfig = fake.write_kubeconfig(dir.path());
//! // super::cmd(env!("CARGO_BIN_EXE_iogauge")).env("KUBECONFIG", &kubeconfig)...
//! assert!(fake.unexpected().is_empty());
//! ```
//!
//! Run as root, it also runs each container as its pod's uid, gid and groups, with real
//! permissions on its volumes (identity.rs).
//!
//! DaemonSets, StatefulSets, Services and the prometheus-operator's kinds (with its discovery
//! document) are kube canary's, with the simplest DaemonSet and StatefulSet controllers
//! (canary.rs); a container's `$(VAR)` arguments are expanded from its environment, as the
//! kubelet does.
//!
//! ConfigMaps are stored and projected into a pod's `configMap` volume before its container
//! starts, one file per key (configmaps.rs); a container's `workingDir` under a volume mount is
//! the process's working directory on the host.
//!
//! What it does not model: watches (`watch=true` is answered 404 and recorded as unexpected), RBAC
//! and authentication (any token is fine; admission.rs scripts RBAC, quota and LimitRange refusals
//! of a create), admission beyond [`Scenario::Forbidden`], [`Scenario::LimitRangeCpu`] and the
//! default storage class, validation beyond a Job's restartPolicy/containers and a claim's access
//! modes/size, PersistentVolumes beyond [`volumes`]' (provisioned per claim, reclaimed by policy),
//! namespaces as objects (the context's namespace, `default` and `kube-system` exist), resources
//! and requests, real scheduling and preemption (node selectors, required node affinity and taints
//! are honoured, nothing else; scripted preemption, eviction and drain are in disruption.rs),
//! pagination (`limit`/`continue` are ignored), log follow/timestamps/since, PATCH (but a merge
//! patch of a PersistentVolume, and server-side apply of kube canary's kinds in canary.rs), PUT,
//! DELETE of collections, finalizers and graceful termination (deleted objects vanish at once,
//! except disruption.rs's preempted and drained pods), several containers or init containers
//! (only the first container runs, with no image or entrypoint: the test's binary),
//! `restartPolicy: OnFailure` in-place restarts (a failed pod is replaced, as with `Never`, up to
//! `backoffLimit`, without the real back-off delay), `ttlSecondsAfterFinished`, completions/parallelism above 1, and resourceVersion conflicts.

mod admission;
pub use admission::{Refusal, Refuse};
mod identity;
mod volumes;
pub use identity::honoured as identity_honoured;
mod logs;
pub use logs::LogShape;
mod disruption;
pub use disruption::EVICTION_MESSAGE;
mod canary;
pub use canary::{canary_document, canary_frames};
mod configmaps;
mod pending;

use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What the fake cluster does with a pod (or, for [`Scenario::ProvisioningFailed`], a claim).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Scheduled, Running, then the container runs for real on the host; Succeeded or Failed by
    /// its exit code.
    Run,
    /// Stays Pending with PodScheduled=False, reason Unschedulable, and this message (also a
    /// Warning FailedScheduling event).
    Unschedulable(String),
    /// Scheduled, then waiting in ErrImagePull, then ImagePullBackOff after about a second.
    ImagePull,
    /// Running for ever (until deleted): for timeouts and interrupts.
    Hang,
    /// The Job is admitted but its pods are not: a Warning FailedCreate event on the Job with
    /// `Error creating: pods "<pod>" is forbidden: <this>` (or this verbatim if it already starts
    /// with `Error creating:`), and no pod.
    Forbidden(String),
    /// Claims of the class stay Pending with a Warning ProvisioningFailed event with this
    /// message; pods using them stay Pending (unbound immediate claims).
    ProvisioningFailed(String),
    /// As [`Scenario::Run`], but the pod's log is served split, rotated or cut (logs.rs).
    Logs(LogShape),
    /// The first N pods of each Job are evicted by the kubelet (node pressure) 1.5 s after they
    /// start; later ones run as in `Run` (fake_kube/disruption.rs).
    Evict(usize),
    /// The first N pods of each Job run and are preempted by the scheduler 1.5 s after they
    /// start (once their check has printed its first line), then deleted gracefully: the container gets SIGTERM and ends by itself (SIGKILL after the
    /// grace period); later ones run as in `Run`.
    Preempt(usize),
    /// The first N pods of each Job run and are evicted through the Eviction API (a `kubectl
    /// drain`) as in `Preempt`, then deleted gracefully likewise; later ones run as in `Run`.
    Drain(usize),
    /// Scheduled, then ContainerCreating for ever: the kubelet's Warning FailedMount
    /// `MountVolume.SetUp failed for volume "<pv>" : <this>` (see pending.rs).
    MountFailed(String),
    /// Scheduled, then ContainerCreating for ever: the attach/detach controller's Warning
    /// FailedAttachVolume `AttachVolume.Attach failed for volume "<pv>" : <this>`.
    AttachFailed(String),
    /// The node lacks the directory of the pod's hostPath volume of type Directory: the kubelet's
    /// type check fails (Warning FailedMount), ContainerCreating for ever.
    HostPathMissing,
    /// The ReadWriteOnce volume is attached to another node, for these pods (comma-separated;
    /// empty: none known): Warning FailedAttachVolume `Multi-Attach error ...`.
    MultiAttach(String),
    /// Kueue holds the Job: suspended, a CreatedWorkload event, never admitted, no pod. Decided
    /// from the Job's template when the job controller first sees it, so set it by node (a fresh
    /// claim may not exist yet then).
    QueueSuspended,
    /// The namespace has a LimitRange with this default CPU limit: the LimitRanger admission puts
    /// it on a pod whose container has none (with its annotation); then as [`Scenario::Run`].
    LimitRangeCpu(String),
    /// As [`Scenario::Run`], but the container runs this program instead of the test's binary:
    /// another image (e.g. one whose iogauge is another version).
    Entrypoint(String),
    /// The image's binary is for another CPU: runc fails to exec it, the container's log says
    /// `exec /iogauge: exec format error` and it exits 255 (reason Error).
    ExecFormatError,
    /// As [`Scenario::Evict`], on a cluster before 1.26: the evicted pod has `reason: Evicted`
    /// but no `DisruptionTarget` condition, so the Job's podFailurePolicy fails the Job.
    EvictLegacy(usize),
}

/// A StorageClass's `volumeBindingMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingMode {
    Immediate,
    WaitForFirstConsumer,
}

/// A StorageClass the cluster has from the start.
#[derive(Clone, Debug)]
pub struct StorageClassSeed {
    pub name: String,
    pub provisioner: String,
    pub binding: BindingMode,
    /// Annotated `storageclass.kubernetes.io/is-default-class: "true"`.
    pub default: bool,
    /// `reclaimPolicy` (see [`volumes`]).
    pub reclaim: String,
    pub parameters: Vec<(String, String)>,
    /// Provisioned sizes are multiples of this many bytes.
    pub round_to: Option<u64>,
}

impl StorageClassSeed {
    pub fn new(name: &str, provisioner: &str, binding: BindingMode) -> Self {
        StorageClassSeed {
            name: name.into(),
            provisioner: provisioner.into(),
            binding,
            default: false,
            reclaim: "Delete".into(),
            parameters: Vec::new(),
            round_to: None,
        }
    }

    /// Marks it the cluster's default class.
    pub fn default_class(mut self) -> Self {
        self.default = true;
        self
    }
}

/// A Node the cluster has from the start (always Ready).
#[derive(Clone, Debug)]
pub struct NodeSeed {
    pub name: String,
    /// Besides these, `kubernetes.io/hostname`, `kubernetes.io/os` and `kubernetes.io/arch`.
    pub labels: Vec<(String, String)>,
    /// (key, value, effect), e.g. ("node-role.kubernetes.io/control-plane", "", "NoSchedule").
    pub taints: Vec<(String, String, String)>,
}

impl NodeSeed {
    pub fn new(name: &str) -> Self {
        NodeSeed {
            name: name.into(),
            labels: Vec::new(),
            taints: Vec::new(),
        }
    }

    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.labels.push((key.into(), value.into()));
        self
    }

    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        self.taints.push((key.into(), value.into(), effect.into()));
        self
    }
}

/// One HTTP request as the fake received it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// Percent-decoded path, without the query.
    pub path: String,
    /// The raw query string (without `?`), empty when none.
    pub query: String,
    /// The body, when it was JSON.
    pub body: Option<Value>,
}

impl Request {
    /// The (decoded) value of query parameter `key`.
    pub fn param(&self, key: &str) -> Option<String> {
        parse_query(&self.query).remove(key)
    }
}

/// Sets up a [`FakeKube`]: seed objects and scenarios.
pub struct Builder {
    binary: PathBuf,
    host_dir: PathBuf,
    namespace: String,
    classes: Vec<StorageClassSeed>,
    nodes: Vec<NodeSeed>,
    scenario: Scenario,
    scenarios: BTreeMap<String, Scenario>,
    delete_delay: Duration,
    /// (method, resource) whose answers come late, and how late (see [`Builder::answer_delay`]).
    answer_delays: Vec<(String, String, Duration)>,
    refusals: Vec<Refuse>,
    /// Objects the cluster has from the start besides classes and nodes (see [`volumes`]).
    seed_objects: Vec<Value>,
    owners: BTreeMap<String, u32>,
    /// kube canary's (canary.rs).
    canary: canary::CanaryState,
}

impl Builder {
    /// Refuses matching creates with a 403 as an admission plugin or RBAC would (admission.rs).
    pub fn refuse(mut self, r: Refuse) -> Self {
        self.refusals.push(r);
        self
    }

    /// The volume of pods using a claim of class `target`, or going to node `target`, belongs to
    /// `uid` (mode 0755) and ignores fsGroup: an NFS export or another user's node directory
    /// (see identity.rs; honoured when the tests run as root).
    pub fn volume_owner(mut self, target: &str, uid: u32) -> Self {
        self.owners.insert(target.into(), uid);
        self
    }

    /// Every DELETE waits this long before it is answered (a slow API server), so that a test
    /// can interrupt a client in the middle of its deletions.
    pub fn delete_delay(mut self, d: Duration) -> Self {
        self.delete_delay = d;
        self
    }

    /// Requests `method` on the collection `resource` (e.g. "POST", "configmaps") are done at once
    /// but answered this much later (a slow API server), so that a test can interrupt a client
    /// between a create and its answer.
    pub fn answer_delay(mut self, method: &str, resource: &str, d: Duration) -> Self {
        self.answer_delays.push((method.into(), resource.into(), d));
        self
    }

    /// The namespace of the kubeconfig's context (default `iogauge-test`). It, `default` and
    /// `kube-system` exist; creating in any other is refused as on a real cluster.
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = ns.into();
        self
    }

    pub fn storage_class(mut self, sc: StorageClassSeed) -> Self {
        self.classes.push(sc);
        self
    }

    /// Without any, one node `node-1` exists so that pods have somewhere to go.
    pub fn node(mut self, node: NodeSeed) -> Self {
        self.nodes.push(node);
        self
    }

    /// The scenario for every pod and claim without a more specific one (default [`Scenario::Run`]).
    pub fn scenario(mut self, s: Scenario) -> Self {
        self.scenario = s;
        self
    }

    /// The scenario for pods using a claim of storage class `target`, or going to node `target`
    /// (by `spec.nodeName`, a `kubernetes.io/hostname` selector or required affinity, or the
    /// node the fake scheduler picks); and for claims of class `target`. Classes win over nodes.
    pub fn scenario_for(mut self, target: &str, s: Scenario) -> Self {
        self.scenarios.insert(target.into(), s);
        self
    }

    /// Starts the server (its threads stop when the handle is dropped).
    pub fn start(self) -> FakeKube {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let mut nodes = self.nodes;
        if nodes.is_empty() {
            nodes.push(NodeSeed::new("node-1"));
        }
        let seed = (SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            ^ (u64::from(addr.port()) << 32))
            | 1;
        let mut st = State {
            ns: self.namespace,
            binary: self.binary,
            host_dir: self.host_dir,
            default_scenario: self.scenario,
            scenarios: self.scenarios,
            delete_delay: self.delete_delay,
            answer_delays: self.answer_delays,
            refusals: self.refusals,
            owners: self.owners,
            canary: self.canary,
            objects: Vec::new(),
            created: Vec::new(),
            deleted: Vec::new(),
            requests: Vec::new(),
            unexpected: Vec::new(),
            history: Vec::new(),
            rv: 1000,
            rng: seed,
            pods: HashMap::new(),
            jobs: HashMap::new(),
            emitted: HashSet::new(),
            runners: Vec::new(),
            served: logs::Served::default(),
            disruptions: Default::default(),
            round_to: self
                .classes
                .iter()
                .filter_map(|c| Some((c.name.clone(), c.round_to?)))
                .collect(),
        };
        for sc in &self.classes {
            let mut annotations = Map::new();
            if sc.default {
                annotations.insert(
                    "storageclass.kubernetes.io/is-default-class".into(),
                    json!("true"),
                );
            }
            let mode = match sc.binding {
                BindingMode::Immediate => "Immediate",
                BindingMode::WaitForFirstConsumer => "WaitForFirstConsumer",
            };
            let obj = json!({
                "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": sc.name, "annotations": annotations},
                "provisioner": sc.provisioner, "reclaimPolicy": sc.reclaim,
                "volumeBindingMode": mode, "allowVolumeExpansion": true,
            });
            let mut obj = obj;
            if !sc.parameters.is_empty() {
                let params: Map<String, Value> = sc
                    .parameters
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect();
                obj["parameters"] = Value::Object(params);
            }
            st.insert(obj);
        }
        for n in &nodes {
            let mut labels = Map::new();
            labels.insert("kubernetes.io/arch".into(), json!("amd64"));
            labels.insert("kubernetes.io/hostname".into(), json!(n.name));
            labels.insert("kubernetes.io/os".into(), json!("linux"));
            for (k, v) in &n.labels {
                labels.insert(k.clone(), json!(v));
            }
            let taints: Vec<Value> = n
                .taints
                .iter()
                .map(|(k, v, e)| {
                    if v.is_empty() {
                        json!({"key": k, "effect": e})
                    } else {
                        json!({"key": k, "value": v, "effect": e})
                    }
                })
                .collect();
            let mut spec = json!({"podCIDR": "10.244.0.0/24"});
            if !taints.is_empty() {
                spec["taints"] = json!(taints);
            }
            let now = now_rfc3339();
            let obj = json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": n.name, "labels": labels},
                "spec": spec,
                "status": {
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "kubelet is posting ready status",
                        "lastHeartbeatTime": now, "lastTransitionTime": now}],
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.10"},
                        {"type": "Hostname", "address": n.name}],
                    "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                    "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                    "nodeInfo": {"kubeletVersion": "v1.33.1", "containerRuntimeVersion": "containerd://2.0.5",
                        "kernelVersion": "6.8.0", "osImage": "Ubuntu 24.04 LTS",
                        "operatingSystem": "linux", "architecture": "amd64"},
                },
            });
            st.insert(obj);
        }
        for o in self.seed_objects {
            st.insert(o);
        }
        // Seed objects are not "created" by anyone under test.
        st.created.clear();
        st.history.clear();

        let shared = Arc::new(Shared {
            state: Mutex::new(st),
            shutdown: AtomicBool::new(false),
        });
        let mut threads = Vec::new();
        let sh = shared.clone();
        threads.push(std::thread::spawn(move || accept_loop(listener, sh)));
        let sh = shared.clone();
        threads.push(std::thread::spawn(move || {
            // The controllers: each step of a pod's life takes one tick, as on a real cluster
            // where nothing is instant, yet tests stay fast.
            while !sh.shutdown.load(Ordering::SeqCst) {
                std::thread::sleep(TICK);
                let mut st = lock(&sh.state);
                tick(&sh, &mut st);
            }
        }));
        FakeKube {
            shared,
            addr,
            threads,
        }
    }
}

const TICK: Duration = Duration::from_millis(25);
const PULL_BACKOFF_AFTER: Duration = Duration::from_millis(1000);

/// A running fake API server. Dropping it stops its threads and kills any container processes.
pub struct FakeKube {
    shared: Arc<Shared>,
    addr: SocketAddr,
    threads: Vec<JoinHandle<()>>,
}

impl FakeKube {
    /// `binary` replaces the container's first command word (e.g. `env!("CARGO_BIN_EXE_iogauge")`);
    /// each pod's volumes become directories under `host_dir` (a real disk, e.g. [`super::scratch`]).
    pub fn builder(binary: impl Into<PathBuf>, host_dir: impl Into<PathBuf>) -> Builder {
        Builder {
            binary: binary.into(),
            host_dir: host_dir.into(),
            namespace: "iogauge-test".into(),
            classes: Vec::new(),
            nodes: Vec::new(),
            scenario: Scenario::Run,
            scenarios: BTreeMap::new(),
            delete_delay: Duration::ZERO,
            answer_delays: Vec::new(),
            refusals: Vec::new(),
            seed_objects: Vec::new(),
            owners: BTreeMap::new(),
            canary: Default::default(),
        }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The namespace of the kubeconfig's context.
    pub fn namespace(&self) -> String {
        lock(&self.shared.state).ns.clone()
    }

    /// Writes `<dir>/kubeconfig` (one cluster, user and context, the context with the namespace)
    /// and returns its path, for `KUBECONFIG`.
    pub fn write_kubeconfig(&self, dir: &Path) -> PathBuf {
        let ns = self.namespace();
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\n\
             users:\n- name: fake\n  user:\n    token: fake-token\n\
             contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: {ns}\n\
             current-context: fake\n",
            url = self.url()
        );
        let path = dir.join("kubeconfig");
        std::fs::write(&path, text).expect("write the kubeconfig");
        path
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.shared.state).requests.clone()
    }

    /// Requests the fake does not serve (answered 404): a test asserts this is empty.
    pub fn unexpected(&self) -> Vec<Request> {
        lock(&self.shared.state).unexpected.clone()
    }

    /// Objects of `kind` (e.g. "Job", "Pod", "PersistentVolumeClaim", "Event") as created, by
    /// the client or by the fake's controllers, in order.
    pub fn created(&self, kind: &str) -> Vec<Value> {
        let st = lock(&self.shared.state);
        st.created
            .iter()
            .filter(|o| o["kind"] == kind)
            .cloned()
            .collect()
    }

    /// Names of the objects of `kind` deleted (by the client or garbage collection), in order.
    pub fn deleted(&self, kind: &str) -> Vec<String> {
        let st = lock(&self.shared.state);
        st.deleted
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, n)| n.clone())
            .collect()
    }

    /// The live objects of `kind` now.
    pub fn objects(&self, kind: &str) -> Vec<Value> {
        let st = lock(&self.shared.state);
        st.objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .cloned()
            .collect()
    }

    /// The live object of `kind` named `name` (in any namespace), if any.
    pub fn object(&self, kind: &str, name: &str) -> Option<Value> {
        self.objects(kind)
            .into_iter()
            .find(|o| o["metadata"]["name"] == name)
    }

    /// What happened, in order, one line each: `created Pod/NAME`, `bound
    /// PersistentVolumeClaim/NAME`, `scheduled Pod/NAME on NODE`, `started Pod/NAME`,
    /// `finished Pod/NAME exit N`, `deleted Job/NAME`, ...
    pub fn history(&self) -> Vec<String> {
        lock(&self.shared.state).history.clone()
    }

    /// Whether a history line starting with `a` comes before one starting with `b` (both there).
    pub fn happened_before(&self, a: &str, b: &str) -> bool {
        let h = self.history();
        match (
            h.iter().position(|l| l.starts_with(a)),
            h.iter().position(|l| l.starts_with(b)),
        ) {
            (Some(x), Some(y)) => x < y,
            _ => false,
        }
    }

    /// The host directory standing in for volume `volume` of pod `pod` (whether or not it exists yet).
    pub fn volume_dir(&self, pod: &str, volume: &str) -> PathBuf {
        lock(&self.shared.state).host_dir.join(pod).join(volume)
    }

    /// Polls `f` until it holds or `timeout` passes; whether it held.
    pub fn wait_until(&self, timeout: Duration, f: impl Fn(&FakeKube) -> bool) -> bool {
        let t0 = Instant::now();
        loop {
            if f(self) {
                return true;
            }
            if t0.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for FakeKube {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        // The accept loop blocks in accept(): a connection wakes it up to see the flag.
        let _ = TcpStream::connect(self.addr);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // Container runners kill their process on shutdown; wait so no child outlives the test's
        // directories.
        let runners = std::mem::take(&mut lock(&self.shared.state).runners);
        for t in runners {
            let _ = t.join();
        }
    }
}

struct Shared {
    state: Mutex<State>,
    shutdown: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere (a failed assertion) must not hide the state from the rest of the test.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Clone, Debug, PartialEq)]
enum Stage {
    Unscheduled,
    Scheduled,
    Pulling(Instant),
    BackOff,
    Running,
    Done,
}

struct PodRt {
    stage: Stage,
    log: Arc<Mutex<Vec<u8>>>,
    kill: Arc<AtomicBool>,
    /// Set to have the container process sent SIGTERM (a graceful delete).
    term: Arc<AtomicBool>,
}

#[derive(Default)]
struct JobRt {
    /// Terminal pods seen, by uid: whether each succeeded (kept after the pods are deleted).
    finished: HashMap<String, bool>,
    forbidden_reported: bool,
    started: Option<Instant>,
}

struct State {
    ns: String,
    binary: PathBuf,
    host_dir: PathBuf,
    default_scenario: Scenario,
    scenarios: BTreeMap<String, Scenario>,
    delete_delay: Duration,
    answer_delays: Vec<(String, String, Duration)>,
    refusals: Vec<Refuse>,
    owners: BTreeMap<String, u32>,
    canary: canary::CanaryState,
    objects: Vec<Value>,
    created: Vec<Value>,
    deleted: Vec<(String, String)>,
    requests: Vec<Request>,
    unexpected: Vec<Request>,
    history: Vec<String>,
    rv: u64,
    rng: u64,
    pods: HashMap<String, PodRt>,
    jobs: HashMap<String, JobRt>,
    /// Events already recorded, by (object uid, reason, message): each is reported once.
    emitted: HashSet<(String, String, String)>,
    runners: Vec<JoinHandle<()>>,
    served: logs::Served,
    disruptions: disruption::Disruptions,
    /// Classes whose volumes are provisioned in multiples of this many bytes.
    round_to: HashMap<String, u64>,
}

/// A served resource type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Res {
    kind: &'static str,
    plural: &'static str,
    group: &'static str,
    api_version: &'static str,
    namespaced: bool,
}

const SC: Res = Res {
    kind: "StorageClass",
    plural: "storageclasses",
    group: "storage.k8s.io",
    api_version: "storage.k8s.io/v1",
    namespaced: false,
};
const NODE: Res = Res {
    kind: "Node",
    plural: "nodes",
    group: "",
    api_version: "v1",
    namespaced: false,
};
const PV: Res = Res {
    kind: "PersistentVolume",
    plural: "persistentvolumes",
    group: "",
    api_version: "v1",
    namespaced: false,
};
const JOB: Res = Res {
    kind: "Job",
    plural: "jobs",
    group: "batch",
    api_version: "batch/v1",
    namespaced: true,
};
const PVC: Res = Res {
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
    group: "",
    api_version: "v1",
    namespaced: true,
};
const POD: Res = Res {
    kind: "Pod",
    plural: "pods",
    group: "",
    api_version: "v1",
    namespaced: true,
};
const CONFIGMAP: Res = Res {
    kind: "ConfigMap",
    plural: "configmaps",
    group: "",
    api_version: "v1",
    namespaced: true,
};
const EVENT: Res = Res {
    kind: "Event",
    plural: "events",
    group: "",
    api_version: "v1",
    namespaced: true,
};

impl Res {
    /// As Kubernetes names a resource in messages: `jobs.batch`, `pods`.
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.into()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn name_of(v: &Value) -> &str {
    str_at(v, "/metadata/name")
}

fn uid_of(v: &Value) -> &str {
    str_at(v, "/metadata/uid")
}

fn owned_by(v: &Value, uid: &str) -> bool {
    v["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| refs.iter().any(|r| r["uid"] == uid))
}

impl State {
    fn next_rv(&mut self) -> String {
        self.rv += 1;
        self.rv.to_string()
    }

    fn rand(&mut self) -> u64 {
        // xorshift64*: only names and uids need to look random.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A generateName suffix, from the alphabet Kubernetes uses (no vowels, no confusable digits).
    fn suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..5)
            .map(|_| ALPHABET[(self.rand() % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }

    fn uid(&mut self) -> String {
        let a = self.rand();
        let b = self.rand();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | (b >> 48 & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }

    /// Stores a new object, filling in the server-set metadata.
    fn insert(&mut self, mut obj: Value) -> usize {
        let uid = self.uid();
        let rv = self.next_rv();
        let meta = &mut obj["metadata"];
        meta["uid"] = json!(uid);
        meta["resourceVersion"] = json!(rv);
        meta["creationTimestamp"] = json!(now_rfc3339());
        let line = format!(
            "created {}/{}",
            obj["kind"].as_str().unwrap_or(""),
            name_of(&obj)
        );
        self.history.push(line);
        self.created.push(obj.clone());
        self.objects.push(obj);
        self.objects.len() - 1
    }

    fn find(&self, kind: &str, ns: Option<&str>, name: &str) -> Option<usize> {
        self.objects.iter().position(|o| {
            o["kind"] == kind
                && name_of(o) == name
                && ns.is_none_or(|ns| str_at(o, "/metadata/namespace") == ns)
        })
    }

    fn find_uid(&self, uid: &str) -> Option<usize> {
        self.objects.iter().position(|o| uid_of(o) == uid)
    }

    /// Replaces part of an object through `f`; a new resourceVersion if anything changed.
    fn update(&mut self, idx: usize, f: impl FnOnce(&mut Value)) {
        let before = self.objects[idx].clone();
        f(&mut self.objects[idx]);
        if self.objects[idx] != before {
            let rv = self.next_rv();
            self.objects[idx]["metadata"]["resourceVersion"] = json!(rv);
        }
    }

    /// Records an event about `obj` once (repeats of the same reason and message are dropped).
    fn event(&mut self, obj_idx: usize, typ: &str, reason: &str, message: &str, component: &str) {
        let obj = &self.objects[obj_idx];
        let uid = uid_of(obj).to_string();
        if !self
            .emitted
            .insert((uid.clone(), reason.into(), message.into()))
        {
            return;
        }
        let kind = obj["kind"].as_str().unwrap_or("").to_string();
        let name = name_of(obj).to_string();
        let ns = match str_at(obj, "/metadata/namespace") {
            "" => "default".to_string(),
            ns => ns.to_string(),
        };
        let involved = json!({
            "kind": kind, "namespace": ns, "name": name, "uid": uid,
            "apiVersion": obj["apiVersion"], "resourceVersion": obj["metadata"]["resourceVersion"],
        });
        let now = now_rfc3339();
        let ev_name = format!("{name}.{:016x}", self.rand());
        let ev = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": ev_name, "namespace": ns},
            "involvedObject": involved,
            "reason": reason, "message": message, "type": typ,
            "source": {"component": component},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            "eventTime": null, "reportingComponent": component, "reportingInstance": "",
        });
        let uid = self.uid();
        let rv = self.next_rv();
        let mut ev = ev;
        ev["metadata"]["uid"] = json!(uid);
        ev["metadata"]["resourceVersion"] = json!(rv);
        ev["metadata"]["creationTimestamp"] = json!(now);
        // Events are not "created" by the code under test, nor part of the history of objects.
        self.objects.push(ev);
    }

    fn class(&self, name: &str) -> Option<&Value> {
        self.find("StorageClass", None, name)
            .map(|i| &self.objects[i])
    }

    fn class_scenario(&self, class: &str) -> Option<Scenario> {
        self.scenarios.get(class).cloned()
    }

    /// The scenario for a pod with `spec` in `ns`: its claims' classes first, then its node.
    fn pod_scenario(&self, ns: &str, pod_name: &str, spec: &Value) -> Scenario {
        for claim in claim_names(pod_name, spec) {
            if let Some(i) = self.find("PersistentVolumeClaim", Some(ns), &claim) {
                let class = str_at(&self.objects[i], "/spec/storageClassName");
                if let Some(s) = self.class_scenario(class) {
                    return s;
                }
            }
        }
        // A generic ephemeral volume names its class before its claim exists.
        for v in spec["volumes"].as_array().into_iter().flatten() {
            let class = str_at(v, "/ephemeral/volumeClaimTemplate/spec/storageClassName");
            if let Some(s) = self.class_scenario(class) {
                return s;
            }
        }
        let mut hints = vec![str_at(spec, "/nodeName").to_string()];
        hints.push(str_at(spec, "/nodeSelector/kubernetes.io~1hostname").to_string());
        hints.extend(affinity_hostnames(spec));
        if let Ok(n) = self.pick_node(spec) {
            hints.push(n);
        }
        for h in hints {
            if let Some(s) = self.scenarios.get(&h) {
                return s.clone();
            }
        }
        self.default_scenario.clone()
    }

    fn nodes(&self) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|o| o["kind"] == "Node")
            .collect()
    }

    /// The node a pod goes to: the first that matches its selector/affinity and whose taints it
    /// tolerates; else the scheduler's message.
    fn pick_node(&self, spec: &Value) -> Result<String, String> {
        let nodes = self.nodes();
        if !str_at(spec, "/nodeName").is_empty() {
            return Ok(str_at(spec, "/nodeName").into());
        }
        let mut why: BTreeMap<String, usize> = BTreeMap::new();
        for n in &nodes {
            match node_fits(spec, n) {
                Ok(()) => return Ok(name_of(n).into()),
                Err(r) => *why.entry(r).or_default() += 1,
            }
        }
        let total = nodes.len();
        let reasons: Vec<String> = why.iter().map(|(r, c)| format!("{c} {r}")).collect();
        Err(format!(
            "0/{total} nodes are available: {}. preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling.",
            reasons.join(", ")
        ))
    }
}

/// The claims a pod's volumes use (generic ephemeral volumes' claims are `<pod>-<volume>`).
fn claim_names(pod_name: &str, spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for v in spec["volumes"].as_array().into_iter().flatten() {
        if let Some(c) = v
            .pointer("/persistentVolumeClaim/claimName")
            .and_then(Value::as_str)
        {
            out.push(c.to_string());
        } else if v.get("ephemeral").is_some() {
            out.push(format!("{pod_name}-{}", str_at(v, "/name")));
        }
    }
    out
}

fn affinity_terms(spec: &Value) -> Vec<&Value> {
    spec.pointer(
        "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms",
    )
    .and_then(Value::as_array)
    .map(|a| a.iter().collect())
    .unwrap_or_default()
}

fn affinity_hostnames(spec: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for t in affinity_terms(spec) {
        for e in t["matchExpressions"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(t["matchFields"].as_array().into_iter().flatten())
        {
            if (e["key"] == "kubernetes.io/hostname" || e["key"] == "metadata.name")
                && e["operator"] == "In"
            {
                for v in e["values"].as_array().into_iter().flatten() {
                    out.push(v.as_str().unwrap_or("").to_string());
                }
            }
        }
    }
    out
}

fn node_fits(spec: &Value, node: &Value) -> Result<(), String> {
    let labels = &node["metadata"]["labels"];
    let label = |k: &str| labels[k].as_str().map(String::from);
    const MISMATCH: &str = "node(s) didn't match Pod's node affinity/selector";
    if let Some(sel) = spec["nodeSelector"].as_object() {
        if sel.iter().any(|(k, v)| label(k).as_deref() != v.as_str()) {
            return Err(MISMATCH.into());
        }
    }
    let terms = affinity_terms(spec);
    if !terms.is_empty() {
        let term_ok = |t: &Value| {
            let exprs = t["matchExpressions"].as_array().into_iter().flatten();
            let fields = t["matchFields"].as_array().into_iter().flatten();
            exprs
                .map(|e| (e, label(str_at(e, "/key"))))
                .chain(fields.map(|e| {
                    let v = (e["key"] == "metadata.name").then(|| name_of(node).to_string());
                    (e, v)
                }))
                .all(|(e, have)| {
                    let values: Vec<&str> = e["values"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .collect();
                    match str_at(e, "/operator") {
                        "In" => have.is_some_and(|h| values.contains(&h.as_str())),
                        "NotIn" => !have.is_some_and(|h| values.contains(&h.as_str())),
                        "Exists" => have.is_some(),
                        "DoesNotExist" => have.is_none(),
                        "Gt" | "Lt" => {
                            let h: Option<i64> = have.and_then(|h| h.parse().ok());
                            let v: Option<i64> = values.first().and_then(|v| v.parse().ok());
                            match (h, v, str_at(e, "/operator")) {
                                (Some(h), Some(v), "Gt") => h > v,
                                (Some(h), Some(v), _) => h < v,
                                _ => false,
                            }
                        }
                        _ => false,
                    }
                })
        };
        if !terms.iter().any(|t| term_ok(t)) {
            return Err(MISMATCH.into());
        }
    }
    for t in node["spec"]["taints"].as_array().into_iter().flatten() {
        let effect = str_at(t, "/effect");
        if effect != "NoSchedule" && effect != "NoExecute" {
            continue;
        }
        let tolerated = spec["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|tol| {
                let key_ok = match str_at(tol, "/key") {
                    "" => tol["operator"] == "Exists",
                    k => k == str_at(t, "/key"),
                };
                let value_ok =
                    tol["operator"] == "Exists" || str_at(tol, "/value") == str_at(t, "/value");
                let effect_ok = matches!(str_at(tol, "/effect"), "") || tol["effect"] == effect;
                key_ok && value_ok && effect_ok
            });
        if !tolerated {
            return Err(format!(
                "node(s) had untolerated taint {{{}: {}}}",
                str_at(t, "/key"),
                str_at(t, "/value")
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// HTTP

struct Resp {
    code: u16,
    ctype: &'static str,
    body: Vec<u8>,
}

impl Resp {
    fn json(code: u16, v: &Value) -> Resp {
        Resp {
            code,
            ctype: "application/json",
            body: serde_json::to_vec(v).unwrap_or_default(),
        }
    }

    fn text(code: u16, t: Vec<u8>) -> Resp {
        Resp {
            code,
            ctype: "text/plain",
            body: t,
        }
    }
}

/// A `Status` failure as the API server words it.
fn status(code: u16, reason: &str, message: &str, details: Value) -> Resp {
    let mut v = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "reason": reason,
    });
    if !details.is_null() {
        v["details"] = details;
    }
    v["code"] = json!(code);
    Resp::json(code, &v)
}

fn details(res: &Res, name: &str) -> Value {
    let mut d = json!({"name": name});
    if !res.group.is_empty() {
        d["group"] = json!(res.group);
    }
    d["kind"] = json!(res.plural);
    d
}

fn not_found(res: &Res, name: &str) -> Resp {
    status(
        404,
        "NotFound",
        &format!("{} \"{name}\" not found", res.qualified()),
        details(res, name),
    )
}

fn no_such_path() -> Resp {
    status(
        404,
        "NotFound",
        "the server could not find the requested resource",
        json!({}),
    )
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for conn in listener.incoming() {
        if shared.shutdown.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = conn else { continue };
        let sh = shared.clone();
        std::thread::spawn(move || serve_conn(stream, sh));
    }
}

/// Reads up to and including `\n`, riding out read timeouts (which exist only so that idle
/// keep-alive connections notice the shutdown). None at EOF, on error, or on shutdown.
fn read_line(r: &mut impl BufRead, shared: &Shared) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    loop {
        match r.read_until(b'\n', &mut buf) {
            Ok(0) => return None,
            Ok(_) if buf.ends_with(b"\n") => return Some(buf),
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if shared.shutdown.load(Ordering::SeqCst) {
                    return None;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

fn read_exact(r: &mut impl Read, n: usize, shared: &Shared) -> Option<Vec<u8>> {
    let mut buf = vec![0; n];
    let mut got = 0;
    while got < n {
        match r.read(&mut buf[got..]) {
            Ok(0) => return None,
            Ok(k) => got += k,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                if shared.shutdown.load(Ordering::SeqCst) {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
    Some(buf)
}

fn serve_conn(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let _ = stream.set_nodelay(true);
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut r = BufReader::new(read_half);
    let mut w = stream;
    loop {
        let Some(line) = read_line(&mut r, &shared) else {
            return;
        };
        let line = String::from_utf8_lossy(&line).trim().to_string();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("/").to_string();
        let version = parts.next().unwrap_or("HTTP/1.1").to_string();
        let mut headers: HashMap<String, String> = HashMap::new();
        loop {
            let Some(h) = read_line(&mut r, &shared) else {
                return;
            };
            let h = String::from_utf8_lossy(&h).trim_end().to_string();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        if headers
            .get("expect")
            .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
        {
            let _ = w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        let chunked = headers
            .get("transfer-encoding")
            .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
        let body = if chunked {
            let mut body = Vec::new();
            loop {
                let Some(size) = read_line(&mut r, &shared) else {
                    return;
                };
                let size = String::from_utf8_lossy(&size);
                let size = size.trim().split(';').next().unwrap_or("0");
                let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
                    return;
                };
                if n == 0 {
                    // Trailers, up to the blank line.
                    loop {
                        let Some(t) = read_line(&mut r, &shared) else {
                            return;
                        };
                        if t.trim_ascii().is_empty() {
                            break;
                        }
                    }
                    break;
                }
                let Some(chunk) = read_exact(&mut r, n, &shared) else {
                    return;
                };
                body.extend_from_slice(&chunk);
                if read_line(&mut r, &shared).is_none() {
                    return;
                }
            }
            body
        } else {
            let n: usize = headers
                .get("content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let Some(b) = read_exact(&mut r, n, &shared) else {
                return;
            };
            b
        };
        let conn_hdr = headers
            .get("connection")
            .map(|c| c.to_ascii_lowercase())
            .unwrap_or_default();
        let close = conn_hdr.contains("close")
            || (version == "HTTP/1.0" && !conn_hdr.contains("keep-alive"));
        let resp = handle(&shared, &method, &target, &body);
        answer_late(&shared, &method, &target);
        let reason = match resp.code {
            200 => "OK",
            201 => "Created",
            400 => "Bad Request",
            404 => "Not Found",
            409 => "Conflict",
            422 => "Unprocessable Entity",
            _ => "Status",
        };
        let head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-cache, private\r\n{}\r\n",
            resp.code,
            resp.ctype,
            resp.body.len(),
            if close { "Connection: close\r\n" } else { "" }
        );
        let mut out = head.into_bytes();
        if method != "HEAD" {
            out.extend_from_slice(&resp.body);
        }
        if w.write_all(&out).and_then(|_| w.flush()).is_err() || close {
            return;
        }
    }
}

fn percent_decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k, true), percent_decode(v, true))
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    List,
    Get,
    Create,
    Delete,
    Log,
    /// A merge patch (PersistentVolumes only, see [`volumes::patch`]).
    Patch,
}

/// The resource, namespace, name and operation a request addresses, if the fake serves it.
fn route(method: &str, path: &str) -> Option<(Res, Option<String>, Option<String>, Op)> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (res, ns, name, sub) = match segs.as_slice() {
        ["api", "v1", "nodes"] => (NODE, None, None, None),
        ["api", "v1", "nodes", n] => (NODE, None, Some(*n), None),
        ["api", "v1", "persistentvolumes"] => (PV, None, None, None),
        ["api", "v1", "persistentvolumes", n] => (PV, None, Some(*n), None),
        ["apis", "storage.k8s.io", "v1", "storageclasses"] => (SC, None, None, None),
        ["apis", "storage.k8s.io", "v1", "storageclasses", n] => (SC, None, Some(*n), None),
        ["apis", "batch", "v1", "namespaces", ns, "jobs"] => (JOB, Some(*ns), None, None),
        ["apis", "batch", "v1", "namespaces", ns, "jobs", n] => (JOB, Some(*ns), Some(*n), None),
        ["api", "v1", "namespaces", ns, plural, rest @ ..] => {
            let res = [PVC, POD, EVENT, CONFIGMAP]
                .into_iter()
                .find(|r| r.plural == *plural)?;
            match rest {
                [] => (res, Some(*ns), None, None),
                [n] => (res, Some(*ns), Some(*n), None),
                [n, sub] => (res, Some(*ns), Some(*n), Some(*sub)),
                _ => return None,
            }
        }
        _ => return None,
    };
    let op = match (method, name.is_some(), sub) {
        ("GET", false, None) => Op::List,
        ("GET", true, None) => Op::Get,
        ("POST", false, None) => Op::Create,
        ("DELETE", true, None) => Op::Delete,
        ("GET", true, Some("log")) if res == POD => Op::Log,
        ("PATCH", true, None) => Op::Patch,
        _ => return None,
    };
    let allowed = match res.kind {
        "StorageClass" | "Node" | "Event" => matches!(op, Op::List | Op::Get),
        "Job" | "PersistentVolumeClaim" | "ConfigMap" => {
            matches!(op, Op::List | Op::Get | Op::Create | Op::Delete)
        }
        "Pod" => matches!(op, Op::List | Op::Get | Op::Delete | Op::Log),
        "PersistentVolume" => matches!(op, Op::List | Op::Get | Op::Delete | Op::Patch),
        _ => false,
    };
    allowed.then(|| (res, ns.map(String::from), name.map(String::from), op))
}

/// Waits as [`Builder::answer_delay`] says for this request, once it is done.
fn answer_late(shared: &Arc<Shared>, method: &str, target: &str) {
    let path = target
        .split('?')
        .next()
        .unwrap_or(target)
        .trim_end_matches('/');
    let delay = lock(&shared.state)
        .answer_delays
        .iter()
        .find(|(m, r, _)| m == method && path.ends_with(&format!("/{r}")))
        .map(|(_, _, d)| *d);
    if let Some(d) = delay {
        std::thread::sleep(d);
    }
}

fn handle(shared: &Arc<Shared>, method: &str, target: &str, body: &[u8]) -> Resp {
    if method == "DELETE" {
        let delay = {
            let mut st = lock(&shared.state);
            st.history.push(format!("delete requested {target}"));
            st.delete_delay
        };
        std::thread::sleep(delay);
    }
    let (raw_path, query) = target.split_once('?').unwrap_or((target, ""));
    let path = percent_decode(raw_path, false);
    let json_body: Option<Value> = serde_json::from_slice(body).ok();
    let req = Request {
        method: method.into(),
        path: path.clone(),
        query: query.into(),
        body: json_body.clone(),
    };
    let mut st = lock(&shared.state);
    st.requests.push(req.clone());
    if method == "GET" && path.trim_end_matches('/') == "/version" {
        return Resp::json(
            200,
            &json!({
                "major": "1", "minor": "33", "emulationMajor": "1", "emulationMinor": "33",
                "minCompatibilityMajor": "1", "minCompatibilityMinor": "32",
                "gitVersion": "v1.33.1", "gitCommit": "8adc0f041b8e7ad1d30e29cc59c6ae7a15e19828",
                "gitTreeState": "clean", "buildDate": "2025-05-15T08:19:08Z",
                "goVersion": "go1.24.2", "compiler": "gc", "platform": "linux/amd64",
            }),
        );
    }
    let q = parse_query(query);
    // The code under test polls; a watch is as unexpected as an unknown path.
    let watch = q.get("watch").is_some_and(|w| w == "true" || w == "1");
    if let Some(r) = canary::discovery(&st, method, &path) {
        return r;
    }
    if !watch {
        if let Some(r) = canary::handle(&mut st, method, &path, json_body.clone(), &q) {
            return r;
        }
    }
    let Some((res, ns, name, op)) = route(method, &path).filter(|_| !watch) else {
        st.unexpected.push(req);
        return no_such_path();
    };
    match op {
        Op::List => list(&st, &res, ns.as_deref(), &q),
        Op::Get => {
            let name = name.unwrap_or_default();
            match st.find(res.kind, ns.as_deref(), &name) {
                Some(i) => Resp::json(200, &st.objects[i]),
                None => not_found(&res, &name),
            }
        }
        Op::Create => create(&mut st, &res, &ns.unwrap_or_default(), json_body, &q),
        Op::Delete => delete_req(
            &mut st,
            &res,
            &ns.unwrap_or_default(),
            &name.unwrap_or_default(),
            json_body,
            &q,
        ),
        Op::Log => pod_log(&st, &ns.unwrap_or_default(), &name.unwrap_or_default(), &q),
        Op::Patch => volumes::patch(&mut st, &res, &name.unwrap_or_default(), json_body),
    }
}

fn list(st: &State, res: &Res, ns: Option<&str>, q: &HashMap<String, String>) -> Resp {
    let labels = match parse_label_selector(q.get("labelSelector").map_or("", |s| s.as_str())) {
        Ok(s) => s,
        Err(m) => return status(400, "BadRequest", &m, Value::Null),
    };
    let fields = match parse_field_selector(q.get("fieldSelector").map_or("", |s| s.as_str())) {
        Ok(s) => s,
        Err(m) => return status(400, "BadRequest", &m, Value::Null),
    };
    let items: Vec<Value> = st
        .objects
        .iter()
        .filter(|o| o["kind"] == res.kind)
        .filter(|o| ns.is_none_or(|ns| str_at(o, "/metadata/namespace") == ns))
        .filter(|o| labels.iter().all(|r| r.matches(&o["metadata"]["labels"])))
        .filter(|o| fields.iter().all(|f| f.matches(o)))
        .map(|o| {
            // Items in a list carry no apiVersion/kind on the wire.
            let mut o = o.clone();
            if let Some(m) = o.as_object_mut() {
                m.remove("apiVersion");
                m.remove("kind");
            }
            o
        })
        .collect();
    Resp::json(
        200,
        &json!({
            "kind": format!("{}List", res.kind), "apiVersion": res.api_version,
            "metadata": {"resourceVersion": st.rv.to_string()},
            "items": items,
        }),
    )
}

fn invalid(res: &Res, name: &str, causes: &[(&str, &str, &str)]) -> Resp {
    let msgs: Vec<String> = causes
        .iter()
        .map(|(field, typ, detail)| format!("{field}: {typ}: {detail}"))
        .collect();
    let joined = if msgs.len() == 1 {
        msgs[0].clone()
    } else {
        format!("[{}]", msgs.join(", "))
    };
    let group = if res.group.is_empty() {
        String::new()
    } else {
        format!(".{}", res.group)
    };
    let causes: Vec<Value> = causes
        .iter()
        .map(|(field, typ, detail)| {
            json!({"reason": format!("Field{}", typ.replace(' ', "")), "message": format!("{typ}: {detail}"), "field": field})
        })
        .collect();
    status(
        422,
        "Invalid",
        &format!("{}{group} \"{name}\" is invalid: {joined}", res.kind),
        json!({"name": name, "group": res.group, "kind": res.kind, "causes": causes}),
    )
}

fn create(
    st: &mut State,
    res: &Res,
    ns: &str,
    body: Option<Value>,
    q: &HashMap<String, String>,
) -> Resp {
    let Some(mut obj) = body.filter(Value::is_object) else {
        return status(
            400,
            "BadRequest",
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            Value::Null,
        );
    };
    if ![st.ns.as_str(), "default", "kube-system"].contains(&ns) {
        return status(
            404,
            "NotFound",
            &format!("namespaces \"{ns}\" not found"),
            json!({"name": ns, "kind": "namespaces"}),
        );
    }
    let body_ns = str_at(&obj, "/metadata/namespace");
    if !body_ns.is_empty() && body_ns != ns {
        return status(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
            Value::Null,
        );
    }
    if obj["metadata"].is_null() {
        obj["metadata"] = json!({});
    }
    let mut name = name_of(&obj).to_string();
    if name.is_empty() {
        let gen = str_at(&obj, "/metadata/generateName").to_string();
        if gen.is_empty() {
            return invalid(
                res,
                "",
                &[(
                    "metadata.name",
                    "Required value",
                    "name or generateName is required",
                )],
            );
        }
        name = format!("{gen}{}", st.suffix());
    }
    if st.find(res.kind, Some(ns), &name).is_some() {
        return status(
            409,
            "AlreadyExists",
            &format!("{} \"{name}\" already exists", res.qualified()),
            details(res, &name),
        );
    }
    obj["apiVersion"] = json!(res.api_version);
    obj["kind"] = json!(res.kind);
    obj["metadata"]["name"] = json!(name);
    obj["metadata"]["namespace"] = json!(ns);
    if let Some(m) = obj.as_object_mut() {
        // The server owns status on create.
        m.remove("status");
    }
    match res.kind {
        "Job" => {
            let rp = str_at(&obj, "/spec/template/spec/restartPolicy");
            if rp != "Never" && rp != "OnFailure" {
                return invalid(
                    res,
                    &name,
                    &[(
                        "spec.template.spec.restartPolicy",
                        "Required value",
                        "valid values: \"OnFailure\", \"Never\"",
                    )],
                );
            }
            if obj
                .pointer("/spec/template/spec/containers")
                .and_then(Value::as_array)
                .is_none_or(|c| c.is_empty())
            {
                return invalid(
                    res,
                    &name,
                    &[("spec.template.spec.containers", "Required value", "")],
                );
            }
        }
        "PersistentVolumeClaim" => {
            let mut causes = Vec::new();
            if obj["spec"]["accessModes"]
                .as_array()
                .is_none_or(|a| a.is_empty())
            {
                causes.push((
                    "spec.accessModes",
                    "Required value",
                    "at least 1 access mode is required",
                ));
            }
            if str_at(&obj, "/spec/resources/requests/storage").is_empty() {
                causes.push(("spec.resources[storage]", "Required value", ""));
            }
            if !causes.is_empty() {
                return invalid(res, &name, &causes);
            }
        }
        _ => {}
    }
    if let Some(refused) = admission::check(st, res, ns, &name, &obj) {
        return refused;
    }
    let dry_run = q.get("dryRun").is_some_and(|d| d == "All");
    // Defaults the API server (and its admission) fills in.
    match res.kind {
        "Job" => {
            let spec = &mut obj["spec"];
            for (k, v) in [
                ("backoffLimit", json!(6)),
                ("completions", json!(1)),
                ("parallelism", json!(1)),
                ("completionMode", json!("NonIndexed")),
                ("suspend", json!(false)),
                ("manualSelector", json!(false)),
                ("podReplacementPolicy", json!("TerminatingOrFailed")),
            ] {
                if spec[k].is_null() {
                    spec[k] = v;
                }
            }
            obj["metadata"]["generation"] = json!(1);
            obj["status"] = json!({});
        }
        "PersistentVolumeClaim" => {
            if obj["spec"]["storageClassName"].is_null() {
                let default = st
                    .objects
                    .iter()
                    .find(|o| {
                        o["kind"] == "StorageClass"
                            && str_at(
                                o,
                                "/metadata/annotations/storageclass.kubernetes.io~1is-default-class",
                            ) == "true"
                    })
                    .map(|o| name_of(o).to_string());
                if let Some(d) = default {
                    obj["spec"]["storageClassName"] = json!(d);
                }
            }
            if obj["spec"]["volumeMode"].is_null() {
                obj["spec"]["volumeMode"] = json!("Filesystem");
            }
            obj["status"] = json!({"phase": "Pending"});
        }
        _ => {}
    }
    if dry_run {
        obj["metadata"]["uid"] = json!(st.uid());
        obj["metadata"]["creationTimestamp"] = json!(now_rfc3339());
        return Resp::json(201, &obj);
    }
    let idx = st.insert(obj);
    if res.kind == "Job" {
        // The job controller's own labels and selector, as the API server defaults them.
        let uid = uid_of(&st.objects[idx]).to_string();
        let job_name = name.clone();
        st.update(idx, |o| {
            let tl = &mut o["spec"]["template"]["metadata"]["labels"];
            if tl.is_null() {
                *tl = json!({});
            }
            tl["batch.kubernetes.io/controller-uid"] = json!(uid);
            tl["batch.kubernetes.io/job-name"] = json!(job_name);
            tl["controller-uid"] = json!(uid);
            tl["job-name"] = json!(job_name);
            let l = &mut o["metadata"]["labels"];
            if l.is_null() {
                *l = json!({});
            }
            l["batch.kubernetes.io/controller-uid"] = json!(uid);
            l["batch.kubernetes.io/job-name"] = json!(job_name);
            l["controller-uid"] = json!(uid);
            l["job-name"] = json!(job_name);
            if o["spec"]["selector"].is_null() {
                o["spec"]["selector"] =
                    json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}});
            }
        });
        // What `created` reports is the object as the server stored it.
        if let Some(last) = st.created.last_mut() {
            *last = st.objects[idx].clone();
        }
        st.jobs.insert(uid, JobRt::default());
    }
    Resp::json(201, &st.objects[idx])
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Propagation {
    Orphan,
    Background,
    Foreground,
}

fn delete_req(
    st: &mut State,
    res: &Res,
    ns: &str,
    name: &str,
    body: Option<Value>,
    q: &HashMap<String, String>,
) -> Resp {
    let Some(idx) = st.find(res.kind, Some(ns), name) else {
        return not_found(res, name);
    };
    let policy = body
        .as_ref()
        .and_then(|b| b["propagationPolicy"].as_str().map(String::from))
        .or_else(|| q.get("propagationPolicy").cloned());
    let orphan = body
        .as_ref()
        .and_then(|b| b["orphanDependents"].as_bool())
        .or_else(|| q.get("orphanDependents").map(|v| v == "true"));
    let prop = match (policy.as_deref(), orphan) {
        (Some("Foreground"), _) => Propagation::Foreground,
        (Some("Background"), _) => Propagation::Background,
        (Some("Orphan"), _) | (None, Some(true)) => Propagation::Orphan,
        (None, Some(false)) => Propagation::Background,
        // batch/v1 Jobs keep the legacy default of orphaning their pods.
        (None, None) if res.kind == "Job" => Propagation::Orphan,
        _ => Propagation::Background,
    };
    let dry_run = body.as_ref().is_some_and(|b| {
        b["dryRun"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "All"))
    }) || q.get("dryRun").is_some_and(|d| d == "All");
    let mut obj = st.objects[idx].clone();
    if !dry_run {
        delete_object(st, idx, prop);
    }
    let now = now_rfc3339();
    match res.kind {
        "Job" if prop != Propagation::Foreground => Resp::json(
            200,
            &json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "details": {"name": name, "group": "batch", "kind": "jobs", "uid": uid_of(&obj)},
            }),
        ),
        _ => {
            obj["metadata"]["deletionTimestamp"] = json!(now);
            obj["metadata"]["deletionGracePeriodSeconds"] =
                json!(if res.kind == "Pod" { 30 } else { 0 });
            if prop == Propagation::Foreground {
                obj["metadata"]["finalizers"] = json!(["foregroundDeletion"]);
            }
            Resp::json(200, &obj)
        }
    }
}

/// Removes an object at once, and its dependents unless orphaned (the garbage collector).
fn delete_object(st: &mut State, idx: usize, prop: Propagation) {
    let obj = st.objects.remove(idx);
    let kind = obj["kind"].as_str().unwrap_or("").to_string();
    let name = name_of(&obj).to_string();
    let uid = uid_of(&obj).to_string();
    st.history.push(format!("deleted {kind}/{name}"));
    if kind == "PersistentVolumeClaim" {
        volumes::claim_deleted(st, &obj);
    }
    st.deleted.push((kind, name));
    if let Some(rt) = st.pods.get_mut(&uid) {
        // The kubelet stops the container.
        rt.kill.store(true, Ordering::SeqCst);
        rt.stage = Stage::Done;
    }
    let dependents: Vec<String> = st
        .objects
        .iter()
        .filter(|o| o["kind"] != "Event" && owned_by(o, &uid))
        .map(|o| uid_of(o).to_string())
        .collect();
    for d in dependents {
        let Some(i) = st.find_uid(&d) else { continue };
        if prop == Propagation::Orphan {
            st.update(i, |o| {
                if let Some(refs) = o["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"] != uid.as_str());
                }
            });
        } else {
            delete_object(st, i, Propagation::Background);
        }
    }
}

fn pod_log(st: &State, ns: &str, name: &str, q: &HashMap<String, String>) -> Resp {
    let Some(idx) = st.find("Pod", Some(ns), name) else {
        return not_found(&POD, name);
    };
    let pod = &st.objects[idx];
    let uid = uid_of(pod);
    let container = q
        .get("container")
        .cloned()
        .unwrap_or_else(|| str_at(pod, "/spec/containers/0/name").to_string());
    let Some(rt) = st.pods.get(uid) else {
        return Resp::text(200, Vec::new());
    };
    let waiting = match &rt.stage {
        // Not on a node: the API server has nowhere to ask, and answers empty.
        Stage::Unscheduled => return Resp::text(200, Vec::new()),
        Stage::Scheduled => Some("ContainerCreating"),
        Stage::Pulling(_) | Stage::BackOff => Some("trying and failing to pull image"),
        Stage::Running | Stage::Done => None,
    };
    if let Some(w) = waiting {
        return status(
            400,
            "BadRequest",
            &format!("container \"{container}\" in pod \"{name}\" is waiting to start: {w}"),
            Value::Null,
        );
    }
    let mut log = lock(&rt.log).clone();
    if let Scenario::Logs(shape) = st.pod_scenario(ns, name, &pod["spec"]) {
        let served = shape.serve(&log);
        st.served.record(name, &log, &served);
        log = served;
    }
    if let Some(n) = q.get("tailLines").and_then(|n| n.parse::<usize>().ok()) {
        let text = String::from_utf8_lossy(&log).into_owned();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        log = lines[lines.len().saturating_sub(n)..].concat().into_bytes();
    }
    if let Some(n) = q.get("limitBytes").and_then(|n| n.parse::<usize>().ok()) {
        log.truncate(n);
    }
    Resp::text(200, log)
}

// ---------------------------------------------------------------------------------------------
// Selectors

#[derive(Debug)]
enum LabelReq {
    Exists(String),
    NotExists(String),
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

impl LabelReq {
    fn matches(&self, labels: &Value) -> bool {
        let get = |k: &str| labels.get(k).and_then(Value::as_str);
        match self {
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
            LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
        }
    }
}

/// Splits on commas outside parentheses (`a in (x,y),b`).
fn split_terms(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn parse_label_selector(s: &str) -> Result<Vec<LabelReq>, String> {
    let mut out = Vec::new();
    for t in split_terms(s) {
        let bad = || format!("unable to parse requirement: invalid label selector: {t:?}");
        if let Some(k) = t.strip_prefix('!') {
            out.push(LabelReq::NotExists(k.trim().into()));
        } else if let Some(open) = t.find('(') {
            let head: Vec<&str> = t[..open].split_whitespace().collect();
            let inner = t[open + 1..].strip_suffix(')').ok_or_else(bad)?;
            let vals: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
            match head.as_slice() {
                [k, "in"] => out.push(LabelReq::In(k.to_string(), vals)),
                [k, "notin"] => out.push(LabelReq::NotIn(k.to_string(), vals)),
                _ => return Err(bad()),
            }
        } else if let Some((k, v)) = t.split_once("!=") {
            out.push(LabelReq::NotEq(k.trim().into(), v.trim().into()));
        } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
            out.push(LabelReq::Eq(k.trim().into(), v.trim().into()));
        } else if t.contains(char::is_whitespace) {
            return Err(bad());
        } else {
            out.push(LabelReq::Exists(t));
        }
    }
    Ok(out)
}

struct FieldReq {
    path: String,
    value: String,
    negate: bool,
}

impl FieldReq {
    fn matches(&self, obj: &Value) -> bool {
        let mut v = obj;
        for part in self.path.split('.') {
            v = &v[part];
        }
        let have = match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        (have == self.value) != self.negate
    }
}

fn parse_field_selector(s: &str) -> Result<Vec<FieldReq>, String> {
    let mut out = Vec::new();
    for t in split_terms(s) {
        let (path, value, negate) = if let Some((k, v)) = t.split_once("!=") {
            (k, v, true)
        } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
            (k, v, false)
        } else {
            return Err(format!("invalid selector: '{t}'; can't understand '{t}'"));
        };
        out.push(FieldReq {
            path: path.trim().into(),
            value: value.trim().into(),
            negate,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Controllers

fn tick(shared: &Arc<Shared>, st: &mut State) {
    job_controller(st);
    canary::controller(st);
    pv_controller(st);
    disruption::tick(st);
    let pods: Vec<(String, Stage)> = st
        .pods
        .iter()
        .filter(|(_, rt)| rt.stage != Stage::Done)
        .map(|(uid, rt)| (uid.clone(), rt.stage.clone()))
        .collect();
    for (uid, stage) in pods {
        let Some(idx) = st.find_uid(&uid) else {
            continue;
        };
        match stage {
            Stage::Unscheduled => schedule(st, idx),
            Stage::Scheduled => start(shared, st, idx),
            Stage::Pulling(t) if t.elapsed() >= PULL_BACKOFF_AFTER => pull_backoff(st, idx),
            _ => {}
        }
    }
}

fn is_finished(job: &Value) -> bool {
    job["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
}

fn job_controller(st: &mut State) {
    let jobs: Vec<String> = st
        .objects
        .iter()
        .filter(|o| o["kind"] == "Job" && !is_finished(o))
        .map(|o| uid_of(o).to_string())
        .collect();
    for uid in jobs {
        let Some(idx) = st.find_uid(&uid) else {
            continue;
        };
        let job = st.objects[idx].clone();
        let ns = str_at(&job, "/metadata/namespace").to_string();
        let job_name = name_of(&job).to_string();
        let tspec = job["spec"]["template"]["spec"].clone();
        let now = now_rfc3339();
        let rt = st.jobs.entry(uid.clone()).or_default();
        let first = rt.started.is_none();
        if first {
            rt.started = Some(Instant::now());
        }
        // The scenario is keyed by the claims' class: iogauge creates the claim right after the
        // Job, so a tick that sees the Job first waits for it (a real job controller would
        // create the pod at once; admission here needs the class to play its scenario).
        let missing_claim = tspec["volumes"].as_array().into_iter().flatten().any(|v| {
            let claim = str_at(v, "/persistentVolumeClaim/claimName");
            !claim.is_empty() && st.find("PersistentVolumeClaim", Some(&ns), claim).is_none()
        });
        let waited = st
            .jobs
            .get(&uid)
            .and_then(|r| r.started)
            .map(|t| t.elapsed());
        if missing_claim && waited.is_some_and(|w| w < Duration::from_secs(2)) {
            continue;
        }
        // A pod name for the scenario lookup of ephemeral claims does not exist yet: claims of
        // the template are what count.
        let scenario = st.pod_scenario(&ns, "", &tspec);
        if pending::held(st, idx, &scenario) {
            continue;
        }
        if let Scenario::Forbidden(msg) = scenario {
            if !st.jobs.get(&uid).is_some_and(|r| r.forbidden_reported) {
                let message = if msg.starts_with("Error creating:") {
                    msg
                } else {
                    let pod = format!("{job_name}-{}", st.suffix());
                    format!("Error creating: pods \"{pod}\" is forbidden: {msg}")
                };
                st.event(idx, "Warning", "FailedCreate", &message, "job-controller");
                if let Some(r) = st.jobs.get_mut(&uid) {
                    r.forbidden_reported = true;
                }
                st.update(idx, |o| {
                    o["status"]["startTime"] = json!(now);
                    o["status"]["ready"] = json!(0);
                    o["status"]["terminating"] = json!(0);
                    o["status"]["uncountedTerminatedPods"] = json!({});
                });
            }
            continue;
        }
        let owned: Vec<(String, String)> = st
            .objects
            .iter()
            .filter(|o| o["kind"] == "Pod" && owned_by(o, &uid))
            .map(|o| {
                (
                    uid_of(o).to_string(),
                    str_at(o, "/status/phase").to_string(),
                )
            })
            .collect();
        // The podFailurePolicy's reading of each Failed pod (fake_kube/disruption.rs).
        let mut ignored = HashSet::new();
        let mut fail_job = None;
        for o in st
            .objects
            .iter()
            .filter(|o| o["kind"] == "Pod" && owned_by(o, &uid) && o["status"]["phase"] == "Failed")
        {
            match disruption::judge(&job, o) {
                disruption::Judged::Ignore => {
                    ignored.insert(uid_of(o).to_string());
                }
                disruption::Judged::FailJob(m) => fail_job = fail_job.or(Some(m)),
                disruption::Judged::Count => {}
            }
        }
        let Some(rt) = st.jobs.get_mut(&uid) else {
            continue;
        };
        let mut active = 0;
        for (puid, phase) in &owned {
            match phase.as_str() {
                "Succeeded" => {
                    rt.finished.insert(puid.clone(), true);
                }
                "Failed" if ignored.contains(puid) => {}
                "Failed" => {
                    rt.finished.insert(puid.clone(), false);
                }
                _ => active += 1,
            }
        }
        let succeeded = rt.finished.values().filter(|s| **s).count();
        let failed = rt.finished.values().filter(|s| !**s).count();
        let started = rt.started;
        let backoff_limit = job["spec"]["backoffLimit"].as_u64().unwrap_or(6) as usize;
        let deadline = job["spec"]["activeDeadlineSeconds"].as_u64();
        let over_deadline = match (deadline, started) {
            (Some(d), Some(t)) => t.elapsed() >= Duration::from_secs(d),
            _ => false,
        };
        let terminal = if succeeded > 0 {
            Some((
                "SuccessCriteriaMet",
                "Complete",
                "CompletionsReached",
                "Reached expected number of succeeded pods",
            ))
        } else if let Some(m) = &fail_job {
            Some(("FailureTarget", "Failed", "PodFailurePolicy", m.as_str()))
        } else if failed > backoff_limit {
            Some((
                "FailureTarget",
                "Failed",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            ))
        } else if over_deadline {
            Some((
                "FailureTarget",
                "Failed",
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            ))
        } else {
            None
        };
        if let Some((interim, kind, reason, message)) = terminal {
            if kind == "Failed" {
                // The controller removes what is still running.
                for (puid, phase) in &owned {
                    if phase != "Succeeded" && phase != "Failed" {
                        if let Some(i) = st.find_uid(puid) {
                            delete_object(st, i, Propagation::Background);
                        }
                    }
                }
            }
            let cond = |t: &str| {
                json!({"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
                    "reason": reason, "message": message})
            };
            let conds = json!([cond(interim), cond(kind)]);
            st.update(idx, |o| {
                let s = &mut o["status"];
                if let Some(m) = s.as_object_mut() {
                    m.remove("active");
                }
                s["conditions"] = conds;
                if succeeded > 0 {
                    s["succeeded"] = json!(succeeded);
                    s["completionTime"] = json!(now);
                }
                if failed > 0 {
                    s["failed"] = json!(failed);
                }
                s["ready"] = json!(0);
                s["terminating"] = json!(0);
            });
            let typ = if kind == "Complete" {
                "Normal"
            } else {
                "Warning"
            };
            let ev_reason = if kind == "Complete" {
                "Completed"
            } else {
                reason
            };
            let ev_msg = if kind == "Complete" {
                "Job completed"
            } else {
                message
            };
            st.event(idx, typ, ev_reason, ev_msg, "job-controller");
            st.history
                .push(format!("{} Job/{job_name}", kind.to_lowercase()));
            continue;
        }
        if active == 0 {
            create_pod(st, idx);
            active = 1;
        }
        let running = st
            .objects
            .iter()
            .filter(|o| {
                o["kind"] == "Pod" && owned_by(o, &uid) && o["status"]["phase"] == "Running"
            })
            .count();
        st.update(idx, |o| {
            let s = &mut o["status"];
            if s["startTime"].is_null() {
                s["startTime"] = json!(now);
            }
            s["active"] = json!(active);
            s["ready"] = json!(running);
            s["terminating"] = json!(0);
            s["uncountedTerminatedPods"] = json!({});
            if failed > 0 {
                s["failed"] = json!(failed);
            }
        });
    }
}

fn create_pod(st: &mut State, job_idx: usize) {
    let job = st.objects[job_idx].clone();
    let job_name = name_of(&job).to_string();
    let ns = str_at(&job, "/metadata/namespace").to_string();
    let name = format!("{job_name}-{}", st.suffix());
    let tmpl = &job["spec"]["template"];
    let mut labels = tmpl["metadata"]["labels"].clone();
    if labels.is_null() {
        labels = json!({});
    }
    labels["job-name"] = json!(job_name);
    labels["batch.kubernetes.io/job-name"] = json!(job_name);
    let mut spec = tmpl["spec"].clone();
    for (k, v) in [
        ("schedulerName", json!("default-scheduler")),
        ("serviceAccountName", json!("default")),
        ("serviceAccount", json!("default")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("dnsPolicy", json!("ClusterFirst")),
        ("enableServiceLinks", json!(true)),
        ("securityContext", json!({})),
    ] {
        if spec[k].is_null() {
            spec[k] = v;
        }
    }
    let mut meta = json!({
        "name": name, "generateName": format!("{job_name}-"), "namespace": ns, "labels": labels,
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
            "uid": uid_of(&job), "controller": true, "blockOwnerDeletion": true}],
    });
    if !tmpl["metadata"]["annotations"].is_null() {
        meta["annotations"] = tmpl["metadata"]["annotations"].clone();
    }
    let scenario = st.pod_scenario(&ns, &name, &spec);
    pending::limit_range(&scenario, &mut spec, &mut meta);
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    });
    let idx = st.insert(pod);
    let pod = st.objects[idx].clone();
    let puid = uid_of(&pod).to_string();
    st.pods.insert(
        puid.clone(),
        PodRt {
            stage: Stage::Unscheduled,
            log: Arc::new(Mutex::new(Vec::new())),
            kill: Arc::new(AtomicBool::new(false)),
            term: Arc::new(AtomicBool::new(false)),
        },
    );
    st.event(
        job_idx,
        "Normal",
        "SuccessfulCreate",
        &format!("Created pod: {name}"),
        "job-controller",
    );
    // The ephemeral-volume controller: one claim per generic ephemeral volume, owned by the pod.
    for v in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let Some(t) = v.pointer("/ephemeral/volumeClaimTemplate") else {
            continue;
        };
        let claim = format!("{name}-{}", str_at(v, "/name"));
        let mut meta = t["metadata"].clone();
        if meta.is_null() {
            meta = json!({});
        }
        meta["name"] = json!(claim);
        meta["namespace"] = json!(ns);
        meta["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "Pod", "name": name,
            "uid": puid, "controller": true, "blockOwnerDeletion": true}]);
        let mut pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": t["spec"].clone(), "status": {"phase": "Pending"}});
        if pvc["spec"]["storageClassName"].is_null() {
            if let Some(d) = st.objects.iter().find(|o| {
                o["kind"] == "StorageClass"
                    && str_at(
                        o,
                        "/metadata/annotations/storageclass.kubernetes.io~1is-default-class",
                    ) == "true"
            }) {
                pvc["spec"]["storageClassName"] = json!(name_of(d));
            }
        }
        if pvc["spec"]["volumeMode"].is_null() {
            pvc["spec"]["volumeMode"] = json!("Filesystem");
        }
        st.insert(pvc);
    }
}

fn bind_pvc(st: &mut State, idx: usize, node: Option<&str>) {
    let uid = uid_of(&st.objects[idx]).to_string();
    let name = name_of(&st.objects[idx]).to_string();
    let class = str_at(&st.objects[idx], "/spec/storageClassName").to_string();
    let provisioner = st
        .class(&class)
        .map(|c| str_at(c, "/provisioner").to_string())
        .unwrap_or_default();
    let premade = volumes::bind_available(st, idx);
    let volume = premade.clone().unwrap_or_else(|| format!("pvc-{uid}"));
    st.update(idx, |o| {
        let ann = &mut o["metadata"]["annotations"];
        if ann.is_null() {
            *ann = json!({});
        }
        ann["pv.kubernetes.io/bind-completed"] = json!("yes");
        ann["pv.kubernetes.io/bound-by-controller"] = json!("yes");
        ann["volume.beta.kubernetes.io/storage-provisioner"] = json!(provisioner);
        ann["volume.kubernetes.io/storage-provisioner"] = json!(provisioner);
        if let Some(n) = node {
            ann["volume.kubernetes.io/selected-node"] = json!(n);
        }
        o["spec"]["volumeName"] = json!(volume);
        let storage = match &o["status"]["capacity"]["storage"] {
            Value::Null => o["spec"]["resources"]["requests"]["storage"].clone(),
            bound => bound.clone(),
        };
        o["status"] = json!({"phase": "Bound", "accessModes": o["spec"]["accessModes"],
            "capacity": {"storage": storage}});
    });
    st.history
        .push(format!("bound PersistentVolumeClaim/{name}"));
    if premade.is_some() {
        return;
    }
    volumes::provision(st, idx, &volume);
    st.event(
        idx,
        "Normal",
        "ProvisioningSucceeded",
        &format!("Successfully provisioned volume {volume}"),
        &provisioner,
    );
}

fn pv_controller(st: &mut State) {
    let pending: Vec<String> = st
        .objects
        .iter()
        .filter(|o| o["kind"] == "PersistentVolumeClaim" && o["status"]["phase"] == "Pending")
        .map(|o| uid_of(o).to_string())
        .collect();
    for uid in pending {
        let Some(idx) = st.find_uid(&uid) else {
            continue;
        };
        let class = str_at(&st.objects[idx], "/spec/storageClassName").to_string();
        if class.is_empty() {
            st.event(
                idx,
                "Normal",
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set",
                "persistentvolume-controller",
            );
            continue;
        }
        let Some(sc) = st.class(&class).cloned() else {
            st.event(
                idx,
                "Warning",
                "ProvisioningFailed",
                &format!("storageclass.storage.k8s.io \"{class}\" not found"),
                "persistentvolume-controller",
            );
            continue;
        };
        let scenario = st
            .class_scenario(&class)
            .unwrap_or_else(|| st.default_scenario.clone());
        if let Scenario::ProvisioningFailed(msg) = scenario {
            st.event(
                idx,
                "Warning",
                "ProvisioningFailed",
                &msg,
                str_at(&sc, "/provisioner"),
            );
            continue;
        }
        if sc["volumeBindingMode"] == "WaitForFirstConsumer" {
            st.event(
                idx,
                "Normal",
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding",
                "persistentvolume-controller",
            );
        } else {
            bind_pvc(st, idx, None);
        }
    }
}

fn unschedulable(st: &mut State, idx: usize, msg: &str) {
    let now = now_rfc3339();
    let cond = json!([{"type": "PodScheduled", "status": "False", "lastProbeTime": null,
        "lastTransitionTime": now, "reason": "Unschedulable", "message": msg}]);
    st.update(idx, |o| {
        // Keep the first transition time while the reason stays the same.
        if o["status"]["conditions"][0]["message"] != msg {
            o["status"]["conditions"] = cond;
        }
    });
    st.event(idx, "Warning", "FailedScheduling", msg, "default-scheduler");
}

fn schedule(st: &mut State, idx: usize) {
    let pod = st.objects[idx].clone();
    let ns = str_at(&pod, "/metadata/namespace").to_string();
    let name = name_of(&pod).to_string();
    let spec = &pod["spec"];
    let n = st.nodes().len();
    let mut to_bind = Vec::new();
    for claim in claim_names(&name, spec) {
        let Some(ci) = st.find("PersistentVolumeClaim", Some(&ns), &claim) else {
            let msg =
                format!("0/{n} nodes are available: persistentvolumeclaim \"{claim}\" not found.");
            return unschedulable(st, idx, &msg);
        };
        let pvc = &st.objects[ci];
        if pvc["status"]["phase"] == "Bound" {
            continue;
        }
        let class = str_at(pvc, "/spec/storageClassName");
        let wffc = st
            .class(class)
            .is_some_and(|c| c["volumeBindingMode"] == "WaitForFirstConsumer");
        let failing = matches!(
            st.class_scenario(class)
                .unwrap_or_else(|| st.default_scenario.clone()),
            Scenario::ProvisioningFailed(_)
        );
        if !wffc || failing {
            let msg = format!(
                "0/{n} nodes are available: pod has unbound immediate PersistentVolumeClaims."
            );
            return unschedulable(st, idx, &msg);
        }
        to_bind.push(uid_of(pvc).to_string());
    }
    if let Scenario::Unschedulable(msg) = st.pod_scenario(&ns, &name, spec) {
        return unschedulable(st, idx, &msg);
    }
    let node = match st.pick_node(spec) {
        Ok(n) => n,
        Err(msg) => return unschedulable(st, idx, &msg),
    };
    let now = now_rfc3339();
    let node2 = node.clone();
    st.update(idx, |o| {
        o["spec"]["nodeName"] = json!(node2);
        o["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "True",
            "lastProbeTime": null, "lastTransitionTime": now}]);
    });
    st.history.push(format!("scheduled Pod/{name} on {node}"));
    for uid in to_bind {
        if let Some(ci) = st.find_uid(&uid) {
            bind_pvc(st, ci, Some(&node));
        }
    }
    st.event(
        idx,
        "Normal",
        "Scheduled",
        &format!("Successfully assigned {ns}/{name} to {node}"),
        "default-scheduler",
    );
    if let Some(rt) = st.pods.get_mut(uid_of(&pod)) {
        rt.stage = Stage::Scheduled;
    }
}

fn conditions(now: &str, ready: bool, reason: Option<&str>) -> Value {
    let c = |t: &str, ok: bool| {
        let mut v = json!({"type": t, "status": if ok { "True" } else { "False" },
            "lastProbeTime": null, "lastTransitionTime": now});
        if !ok {
            if let Some(r) = reason {
                v["reason"] = json!(r);
            }
        }
        v
    };
    json!([
        c("PodReadyToStartContainers", true),
        c("Initialized", true),
        c("Ready", ready),
        c("ContainersReady", ready),
        c("PodScheduled", true),
    ])
}

fn container_status(pod: &Value, state: Value, ready: bool) -> Value {
    let c = &pod["spec"]["containers"][0];
    let image = str_at(c, "/image");
    let mut s = json!({"name": c["name"], "state": state, "lastState": {}, "ready": ready,
        "restartCount": 0, "image": image, "imageID": "", "started": ready});
    if ready || state.get("terminated").is_some() {
        s["imageID"] = json!(format!("{image}@sha256:{:064x}", 0x10));
        s["containerID"] = json!(format!("containerd://{:064x}", 0x20));
    }
    s
}

fn start(shared: &Arc<Shared>, st: &mut State, idx: usize) {
    let pod = st.objects[idx].clone();
    let name = name_of(&pod).to_string();
    let ns = str_at(&pod, "/metadata/namespace").to_string();
    let uid = uid_of(&pod).to_string();
    let image = str_at(&pod, "/spec/containers/0/image").to_string();
    let now = now_rfc3339();
    let scenario = st.pod_scenario(&ns, &name, &pod["spec"]);
    if pending::stuck_creating(st, idx, &scenario) {
        return;
    }
    if scenario == Scenario::ImagePull {
        let msg = format!(
            "failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
        );
        let cs = container_status(
            &pod,
            json!({"waiting": {"reason": "ErrImagePull", "message": msg}}),
            false,
        );
        st.update(idx, |o| {
            o["status"]["conditions"] = conditions(&now, false, Some("ContainersNotReady"));
            o["status"]["hostIP"] = json!("10.0.0.10");
            o["status"]["podIP"] = json!("10.244.0.17");
            o["status"]["startTime"] = json!(now);
            o["status"]["containerStatuses"] = json!([cs]);
        });
        st.event(
            idx,
            "Normal",
            "Pulling",
            &format!("Pulling image \"{image}\""),
            "kubelet",
        );
        st.event(
            idx,
            "Warning",
            "Failed",
            &format!("Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": not found"),
            "kubelet",
        );
        st.event(idx, "Warning", "Failed", "Error: ErrImagePull", "kubelet");
        if let Some(rt) = st.pods.get_mut(&uid) {
            rt.stage = Stage::Pulling(Instant::now());
        }
        return;
    }
    let cs = container_status(&pod, json!({"running": {"startedAt": now}}), true);
    st.update(idx, |o| {
        o["status"]["phase"] = json!("Running");
        o["status"]["conditions"] = conditions(&now, true, None);
        o["status"]["hostIP"] = json!("10.0.0.10");
        o["status"]["podIP"] = json!("10.244.0.17");
        o["status"]["startTime"] = json!(now);
        o["status"]["containerStatuses"] = json!([cs]);
    });
    st.event(
        idx,
        "Normal",
        "Pulled",
        &format!("Container image \"{image}\" already present on machine"),
        "kubelet",
    );
    let cname = str_at(&pod, "/spec/containers/0/name").to_string();
    st.event(
        idx,
        "Normal",
        "Created",
        &format!("Created container: {cname}"),
        "kubelet",
    );
    st.event(
        idx,
        "Normal",
        "Started",
        &format!("Started container {cname}"),
        "kubelet",
    );
    st.history.push(format!("started Pod/{name}"));
    let Some(rt) = st.pods.get_mut(&uid) else {
        return;
    };
    rt.stage = Stage::Running;
    if scenario == Scenario::Hang || disruption::hold(st, &pod, &scenario) {
        return;
    }
    let Some(rt) = st.pods.get(&uid) else {
        return;
    };
    let (log, kill) = (rt.log.clone(), (rt.kill.clone(), rt.term.clone()));
    let cmd = container_command(st, &pod);
    let sh = shared.clone();
    let handle = std::thread::spawn(move || run_container(sh, uid, cmd, log, kill));
    st.runners.push(handle);
}

fn pull_backoff(st: &mut State, idx: usize) {
    let pod = st.objects[idx].clone();
    let image = str_at(&pod, "/spec/containers/0/image").to_string();
    let msg = format!("Back-off pulling image \"{image}\"");
    let cs = container_status(
        &pod,
        json!({"waiting": {"reason": "ImagePullBackOff", "message": msg}}),
        false,
    );
    st.update(idx, |o| o["status"]["containerStatuses"] = json!([cs]));
    // The kubelet reports the back-off itself as a Normal event, the error as a Warning.
    st.event(idx, "Normal", "BackOff", &msg, "kubelet");
    st.event(
        idx,
        "Warning",
        "Failed",
        "Error: ImagePullBackOff",
        "kubelet",
    );
    if let Some(rt) = st.pods.get_mut(uid_of(&pod)) {
        rt.stage = Stage::BackOff;
    }
}

struct ContainerCmd {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
    spawn_error: Option<String>,
    /// [`Scenario::ExecFormatError`]: runc's line instead of a process.
    exec_format_error: bool,
}

/// The container's command on the host: the test's binary for the image's, host directories for
/// the volume mounts, the container's env (downward-API fields resolved).
fn container_command(st: &State, pod: &Value) -> ContainerCmd {
    let c = &pod["spec"]["containers"][0];
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|x| x.as_str().unwrap_or("").to_string())
            .collect()
    };
    let command = strs(&c["command"]);
    let mut args: Vec<String> = command.iter().skip(1).cloned().collect();
    // Without a command the image's entrypoint runs, which is the iogauge binary.
    args.extend(strs(&c["args"]));
    let name = name_of(pod);
    let pod_dir = st.host_dir.join(name);
    let mut spawn_error = std::fs::create_dir_all(&pod_dir)
        .err()
        .map(|e| format!("{}: {e}", pod_dir.display()));
    let mut mounts: Vec<(String, PathBuf)> = Vec::new();
    for m in c["volumeMounts"].as_array().into_iter().flatten() {
        let dir = pod_dir.join(str_at(m, "/name"));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            spawn_error = Some(format!("{}: {e}", dir.display()));
        }
        // A configMap volume holds its keys as files (configmaps.rs).
        if let Err(e) = configmaps::project(st, pod, str_at(m, "/name"), &dir) {
            spawn_error = Some(e);
        }
        mounts.push((str_at(m, "/mountPath").to_string(), dir));
    }
    // Longest first, so that /data/x is mapped before /data.
    mounts.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    for a in &mut args {
        for (from, to) in &mounts {
            *a = replace_path(a, from, &to.to_string_lossy());
        }
    }
    // No KUBERNETES_SERVICE_* variables: nothing on the host answers at a cluster address.
    let mut env = vec![("HOSTNAME".to_string(), name.to_string())];
    for e in c["env"].as_array().into_iter().flatten() {
        let value = if let Some(v) = e["value"].as_str() {
            v.to_string()
        } else {
            match str_at(e, "/valueFrom/fieldRef/fieldPath") {
                "metadata.name" => name.to_string(),
                "metadata.namespace" => str_at(pod, "/metadata/namespace").to_string(),
                "metadata.uid" => uid_of(pod).to_string(),
                "spec.nodeName" => str_at(pod, "/spec/nodeName").to_string(),
                "spec.serviceAccountName" => str_at(pod, "/spec/serviceAccountName").to_string(),
                "status.hostIP" => "10.0.0.10".to_string(),
                "status.podIP" => "10.244.0.17".to_string(),
                _ => String::new(),
            }
        };
        env.push((str_at(e, "/name").to_string(), value));
    }
    // The kubelet's $(VAR) expansion, and a port of the pod's own (canary.rs).
    let args = canary::kubelet_args(st, name, &env, args);
    let scenario = st.pod_scenario(str_at(pod, "/metadata/namespace"), name, &pod["spec"]);
    let binary = match &scenario {
        Scenario::Entrypoint(p) => PathBuf::from(p),
        _ => st.binary.clone(),
    };
    let (program, args) =
        match identity::as_pod_user(st, pod, &mounts, binary.clone(), args.clone()) {
            Ok(c) => c,
            Err(e) => {
                spawn_error = spawn_error.or(Some(e));
                (binary, args)
            }
        };
    // The container's workingDir, where a volume is mounted there (else the pod's directory).
    let cwd = match c["workingDir"].as_str() {
        Some(w) => PathBuf::from(mounts.iter().fold(w.to_string(), |p, (from, to)| {
            replace_path(&p, from, &to.to_string_lossy())
        })),
        None => pod_dir,
    };
    ContainerCmd {
        program,
        args,
        env,
        cwd,
        spawn_error,
        exec_format_error: scenario == Scenario::ExecFormatError,
    }
}

/// Replaces `from` in `s` where it stands as a whole path (`/data`, `/data/f`, `--dir=/data`),
/// not inside another (`/database`).
fn replace_path(s: &str, from: &str, to: &str) -> String {
    if from.is_empty() {
        return s.to_string();
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(pos) = rest.find(from) {
        let before_ok = out.is_empty() && pos == 0
            || rest[..pos]
                .chars()
                .last()
                .or_else(|| out.chars().last())
                .is_none_or(|c| !(c.is_alphanumeric() || "/._-".contains(c)));
        let after = &rest[pos + from.len()..];
        let after_ok = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || "._-".contains(c)));
        out.push_str(&rest[..pos]);
        if before_ok && after_ok {
            out.push_str(to);
        } else {
            out.push_str(from);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The kubelet's part: runs the process, both output streams into the pod's log line by line,
/// then the pod's terminal state from its exit.
fn run_container(
    shared: Arc<Shared>,
    uid: String,
    cmd: ContainerCmd,
    log: Arc<Mutex<Vec<u8>>>,
    (kill, term): (Arc<AtomicBool>, Arc<AtomicBool>),
) {
    let started = now_rfc3339();
    let spawned = match cmd.spawn_error {
        Some(e) => Err(e),
        None if cmd.exec_format_error => Ok(None),
        None => super::cmd(&cmd.program)
            .args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            // The test's own KUBECONFIG is not the pod's.
            .env_remove("KUBECONFIG")
            .current_dir(&cmd.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map(Some)
            .map_err(|e| format!("{}: {e}", cmd.program.display())),
    };
    let (code, reason, message) = match spawned {
        Err(e) => (128, "StartError", Some(e)),
        Ok(None) => {
            // runc's init process writes this to the container's stderr (runc 1.1+).
            lock(&log).extend_from_slice(b"exec /iogauge: exec format error\n");
            (255, "Error", None)
        }
        Ok(Some(mut child)) => {
            let mut readers = Vec::new();
            let out: Option<Box<dyn Read + Send>> = child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>);
            let err: Option<Box<dyn Read + Send>> = child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>);
            for stream in [out, err].into_iter().flatten() {
                let log = log.clone();
                readers.push(std::thread::spawn(move || {
                    let mut r = BufReader::new(stream);
                    let mut line = Vec::new();
                    while r.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
                        lock(&log).extend_from_slice(&line);
                        line.clear();
                    }
                }));
            }
            let status = loop {
                match child.try_wait() {
                    Ok(Some(s)) => break Some(s),
                    Ok(None) => {}
                    Err(_) => break None,
                }
                if kill.load(Ordering::SeqCst) || shared.shutdown.load(Ordering::SeqCst) {
                    let _ = child.kill();
                    break child.wait().ok();
                }
                if term.swap(false, Ordering::SeqCst) {
                    disruption::terminate(&child);
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            for r in readers {
                let _ = r.join();
            }
            let code = status.map_or(128, |s| {
                use std::os::unix::process::ExitStatusExt;
                s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
            });
            (code, if code == 0 { "Completed" } else { "Error" }, None)
        }
    };
    let mut st = lock(&shared.state);
    let Some(idx) = st.find_uid(&uid) else {
        return;
    };
    let pod = st.objects[idx].clone();
    let name = name_of(&pod).to_string();
    let now = now_rfc3339();
    let mut term = json!({"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": now,
        "containerID": format!("containerd://{:064x}", 0x20)});
    if let Some(m) = message {
        term["message"] = json!(m);
    }
    let cs = container_status(&pod, json!({"terminated": term}), false);
    let phase = if code == 0 { "Succeeded" } else { "Failed" };
    let why = if code == 0 {
        "PodCompleted"
    } else {
        "PodFailed"
    };
    let mut conds = conditions(&now, false, Some(why));
    disruption::keep_condition(&pod, &mut conds);
    st.update(idx, |o| {
        o["status"]["phase"] = json!(phase);
        o["status"]["conditions"] = conds;
        o["status"]["containerStatuses"] = json!([cs]);
    });
    st.history.push(format!("finished Pod/{name} exit {code}"));
    if let Some(rt) = st.pods.get_mut(&uid) {
        rt.stage = Stage::Done;
    }
}

// ---------------------------------------------------------------------------------------------
// Time

fn now_rfc3339() -> String {
    rfc3339(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    )
}

/// Seconds since the epoch as RFC 3339 UTC.
fn rfc3339(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
