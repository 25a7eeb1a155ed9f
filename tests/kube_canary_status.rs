//! `iogauge kube canary status` over pods whose logs are real: this build's `iogauge canary
//! --format kube-frames` run for a few seconds on a scratch directory and stopped with SIGTERM,
//! its output served by the fake API server as the pod's log. One canary passes (a profile whose
//! threshold no disk misses), one fails (one every disk misses), and one has a pod without a
//! document yet and a pod the scheduler cannot place.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::fake_kube::{
    canary_document, canary_frames, BindingMode, FakeKube, NodeSeed, Scenario, StorageClassSeed,
};
use common::kube::{assert_rbac_allows, run};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

const FORBIDDEN: &str = "violates PodSecurity \"restricted:latest\": hostPath volumes (volume \"data\"), \
     runAsNonRoot != true (pod or container \"iogauge\" must set securityContext.runAsNonRoot=true)";

/// A sync-latency profile whose p99 must stay below `pass`.
fn profile(dir: &Path, name: &str, pass: &str) -> PathBuf {
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &p,
        format!(
            "name: {name}\ntitle: {name} sync latency\nworkload:\n  - rw=write\n  - ioengine=sync\n  \
             - fdatasync=1\n  - bs=4k\n  - size=16m\nscale: [size]\nmetrics:\n  - key: sync_p99\n    \
             label: p99 fdatasync latency\n    better: lower\n    pass: {pass}\n    source: a test\n"
        ),
    )
    .unwrap();
    p
}

/// A canary on a scratch directory, its stdout and stderr going to files (the pod's log).
struct Canary {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

fn start_canary(dir: &Path, profile: &Path, node: &str) -> Canary {
    let data = dir.join(format!("data-{node}"));
    std::fs::create_dir_all(&data).unwrap();
    let (out, err) = (
        dir.join(format!("{node}.out")),
        dir.join(format!("{node}.err")),
    );
    // No load budget: the probes keep their size, so that the window decides in seconds.
    let child = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .arg("canary")
        .arg(profile)
        .arg("--dir")
        .arg(&data)
        .args(["--every", "1s", "--window", "10m", "--max-busy", "100%"])
        .args([
            "--format",
            "kube-frames",
            "--no-history",
            "--listen",
            "none",
            "--node",
            node,
        ])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    Canary { child, out, err }
}

/// Once its stderr says `verdict` (the canary says each change of verdict) and one more
/// cycle's document followed, SIGTERM; then what the pod's log would hold: stdout, then
/// stderr's lines.
fn log_of(mut c: Canary, verdict: &str) -> Vec<u8> {
    let t = std::time::Instant::now();
    let docs = |c: &Canary| {
        let out = std::fs::read_to_string(&c.out).unwrap_or_default();
        out.lines()
            .filter(|l| l.starts_with("iogauge-frame 1 "))
            .count()
    };
    let mut after = None;
    loop {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no {verdict} in 60 s"
        );
        let err = std::fs::read_to_string(&c.err).unwrap_or_default();
        match after {
            None if err.contains(verdict) => after = Some(docs(&c)),
            Some(n) if docs(&c) > n => break,
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = c.child.id().to_string();
    assert!(common::cmd("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = c.child.wait().unwrap();
    let err = std::fs::read(&c.err).unwrap();
    assert_eq!(status.code(), Some(0), "{}", String::from_utf8_lossy(&err));
    let mut log = std::fs::read(&c.out).unwrap();
    log.extend_from_slice(&err);
    log
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The log with its latest document once more, dated now and as a canary probing every 5 min
/// says it: the real run's (every 1 s) would be older than 3 intervals, so not current, by the
/// time status reads it.
fn current(log: &[u8]) -> Vec<u8> {
    let mut d = canary_document(log);
    assert_eq!(d["kind"], "canary");
    d["at"] = json!(unix_now());
    d["interval_s"] = json!(300.0);
    [log, &canary_frames(&d)].concat()
}

fn status(fake: &FakeKube, dir: &Path, name: &str, json: bool) -> (i32, String, String) {
    let mut args = vec!["canary", "status", "--name", name];
    if json {
        args.extend(["--format", "json"]);
    }
    run(fake, dir, &args)
}

fn install(fake: &FakeKube, dir: &Path, args: &[&str], pods: usize) {
    let (code, _, err) = run(fake, dir, &[&["canary", "install"], args].concat());
    assert_eq!(code, 0, "{err}");
    let name = args[args.iter().position(|a| *a == "--name").unwrap() + 1].to_string();
    assert!(fake.wait_until(Duration::from_secs(10), |f| {
        f.objects("Pod")
            .iter()
            .filter(|p| p["metadata"]["labels"]["iogauge.dev/canary"] == name.as_str())
            .count()
            == pods
    }));
}

#[test]
fn status_reads_each_targets_latest_document_and_exits_with_the_worst() {
    common::serial();
    let dir = common::scratch();
    let d = dir.path();
    // Both canaries at once, each stopped once its verdict is decided and one more cycle ended.
    let lax = start_canary(d, &profile(d, "lax", "10s"), "cp-1");
    let strict = start_canary(d, &profile(d, "strict", "1ns"), "pvc-node");
    let (lax, strict) = (log_of(lax, "lax: PASS"), log_of(strict, "strict: FAIL"));
    assert!(
        String::from_utf8_lossy(&lax)
            .matches("iogauge-frame 1 ")
            .count()
            >= 2
    );

    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), d)
        .storage_class(StorageClassSeed::new(
            "standard",
            "rancher.io/local-path",
            BindingMode::Immediate,
        ))
        .node(NodeSeed::new("cp-1").label("node-role.kubernetes.io/control-plane", ""))
        .node(NodeSeed::new("worker-1"))
        .node(NodeSeed::new("worker-2"))
        .node(NodeSeed::new("worker-3").label("restricted", "yes"))
        .scenario_for("worker-3", Scenario::Forbidden(FORBIDDEN.into()))
        .scenario_for(
            "worker-2",
            Scenario::Unschedulable("0/3 nodes are available: 1 Insufficient memory.".into()),
        )
        .canary_log("cp-1", current(&lax))
        .canary_log("standard", current(&strict))
        .start();
    let nodes = ["--host-path", "/var/lib/etcd", "--nodes"];
    install(
        &fake,
        d,
        &[
            &nodes[..],
            &["node-role.kubernetes.io/control-plane", "--name", "a"],
        ]
        .concat(),
        1,
    );
    install(&fake, d, &["--storage-class", "standard", "--name", "b"], 1);
    install(
        &fake,
        d,
        &[&nodes[..], &["kubernetes.io/os=linux", "--name", "c"]].concat(),
        3,
    );
    install(
        &fake,
        d,
        &[&nodes[..], &["restricted=yes", "--name", "d"]].concat(),
        0,
    );

    let (code, out, err) = status(&fake, d, "a", false);
    assert_eq!(code, 0, "{out}{err}");
    let row = out.lines().nth(1).unwrap();
    assert!(
        row.starts_with(
            "nodes matching node-role.kubernetes.io/control-plane, in /var/lib/etcd  cp-1"
        ),
        "{out}"
    );
    assert!(
        row.contains("lax PASS") && row.contains("sync_p99 ") && row.contains("(pass ≤ 10.00 s)"),
        "{out}"
    );
    assert!(row.contains("s ago") && row.contains(" of 100%"), "{out}");

    let (code, out, _) = status(&fake, d, "a", true);
    assert_eq!(code, 0);
    let rows: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(rows[0]["node"], "cp-1");
    assert_eq!(rows[0]["document"]["kind"], "canary");
    assert_eq!(rows[0]["document"]["profiles"][0]["verdict"], "pass");
    assert!(
        rows[0]["document"]["profiles"][0]["probes"]
            .as_u64()
            .unwrap()
            >= 2
    );

    let (code, out, err) = status(&fake, d, "b", false);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("storage class standard") && out.contains("strict FAIL"),
        "{out}"
    );

    let (code, out, err) = status(&fake, d, "c", false);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("lax PASS"), "{out}");
    assert!(
        out.contains("(worker-1, pod iogauge-canary-c-nodes-"),
        "{out}"
    );
    assert!(
        out.contains("no canary document in the pod's log yet"),
        "{out}"
    );
    assert!(
        out.contains("0/3 nodes are available: 1 Insufficient memory."),
        "{out}"
    );

    // Admission refused the DaemonSet's pods: the controller's event says why.
    let (code, out, err) = status(&fake, d, "d", false);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("NO DOCUMENT") && out.contains("pod none (daemonset iogauge-canary-d-nodes)"),
        "{out}{err}"
    );
    assert!(
        out.contains(
            "Pod Security admission (restricted:latest) refused the pod: hostPath volumes"
        ),
        "{out}"
    );

    let (code, _, err) = status(&fake, d, "none", false);
    assert_eq!(code, 1);
    assert!(err.contains("no pod of canary none in namespace"), "{err}");
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
    assert_rbac_allows(&fake.requests());
    stale_and_hostile_documents(d, &lax);
}

/// A document older than 3 of its intervals counts as none (exit 1, STALE, a note saying
/// why), and what pods print reaches the terminal escaped, never obeyed.
fn stale_and_hostile_documents(d: &Path, lax: &[u8]) {
    let mut old = canary_document(lax);
    old["at"] = json!(unix_now() - 3600.0);
    old["profiles"][0]["profile"] = json!("lax\u{1b}]0;owned\u{7}");
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), d)
        .node(NodeSeed::new("fresh-1").label("e", "yes"))
        .node(NodeSeed::new("old-1").label("e", "yes"))
        .node(NodeSeed::new("raw-1").label("e", "yes"))
        .canary_log("fresh-1", current(lax))
        .canary_log("old-1", canary_frames(&old))
        .canary_log(
            "raw-1",
            b"iogauge canary: probing\n\x1b[31mred\x1b[0m\n".to_vec(),
        )
        .start();
    let args = [
        "--host-path",
        "/var/lib/etcd",
        "--nodes",
        "e=yes",
        "--name",
        "e",
    ];
    install(&fake, d, &args, 3);
    let (code, out, err) = status(&fake, d, "e", false);
    assert_eq!(code, 1, "{out}{err}");
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out}");
    let row = |node: &str| out.lines().find(|l| l.contains(node)).unwrap().to_string();
    assert!(row("fresh-1").contains("  lax PASS"), "{out}");
    assert!(
        row("old-1").contains("STALE lax\\x1b]0;owned\\x07 PASS"),
        "{out}"
    );
    assert!(
        out.contains(", pod iogauge-canary-e-nodes-")
            && out.contains("): its latest document is 36")
            && out.contains("s old, older than 3 intervals of "),
        "{out}"
    );
    assert!(out.contains("it ends with: "), "{out}");
    assert!(out.contains("\\x1b[31mred\\x1b[0m"), "{out}");
    let (_, out, _) = status(&fake, d, "e", true);
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    let current: Vec<bool> = rows.iter().map(|r| r["current"] == true).collect();
    assert_eq!(current.iter().filter(|c| **c).count(), 1, "{out}");
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
}

/// `GET path` on 127.0.0.1:port: (status line, body).
fn http_get(port: u16, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// The DaemonSet's pod runs its container for real: the manifest's command line, with the
/// kubelet's $(NODE_NAME) from the Downward API, is this build's `iogauge canary`; status reads
/// its document from its log, and its /healthz and /metrics answer.
#[test]
fn the_pods_command_line_runs_the_canary_and_status_reads_it_live() {
    common::serial();
    let dir = common::scratch();
    let d = dir.path();
    let fake = FakeKube::builder(env!("CARGO_BIN_EXE_iogauge"), d)
        .node(NodeSeed::new("cp-1").label("node-role.kubernetes.io/control-plane", ""))
        .node(NodeSeed::new("worker-1"))
        .canary_run()
        .start();
    let args = [
        "--nodes",
        "node-role.kubernetes.io/control-plane",
        "--host-path",
        "/var/lib/etcd",
        "--every",
        "1s",
        "--max-busy",
        "100%",
        "--name",
        "live",
    ];
    install(&fake, d, &args, 1);
    let t = std::time::Instant::now();
    let rows = loop {
        let (code, out, err) = status(&fake, d, "live", true);
        let rows: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        if !rows[0]["document"].is_null() {
            assert_ne!(code, 1, "{out}{err}");
            break rows;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no document in 60 s: {out}{err}"
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    let doc = &rows[0]["document"];
    assert_eq!(rows[0]["node"], "cp-1");
    // --node $(NODE_NAME): the Downward API's spec.nodeName, expanded by the kubelet.
    assert_eq!(doc["node"], "cp-1");
    assert_eq!(doc["every_s"], 1.0);
    assert_eq!(doc["window_s"], 3600.0);
    assert_eq!(doc["budget"]["max_busy"], 1.0);
    assert_eq!(doc["profiles"][0]["profile"], "etcd");
    let pod = rows[0]["pod"].as_str().unwrap();
    let port = fake.canary_port(pod).unwrap();
    assert_eq!(
        http_get(port, "/healthz"),
        ("HTTP/1.1 200 OK".into(), "ok\n".into())
    );
    let (_, metrics) = http_get(port, "/metrics");
    assert!(
        metrics.contains("iogauge_canary_info{") && metrics.contains("node=\"cp-1\""),
        "{metrics}"
    );
    // Uninstall stops it: the pod goes with its DaemonSet, its process with the pod.
    let (code, _, err) = run(&fake, d, &["canary", "uninstall", "--name", "live"]);
    assert_eq!(code, 0, "{err}");
    assert!(fake.objects("Pod").is_empty());
    assert!(fake.unexpected().is_empty(), "{:?}", fake.unexpected());
    assert_rbac_allows(&fake.requests());
}
