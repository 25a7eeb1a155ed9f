//! The container image that `iogauge kube` runs (Containerfile, scripts/build-image): FROM
//! scratch with only the static binary, small, non-root; and `check` run in it as a pod runs
//! it under Pod Security "restricted" (uid/gid 65532, read-only root, no capabilities, no
//! privilege escalation, the runtime's default seccomp profile, the volume at /data), its log
//! read back as Kubernetes returns it (stdout and stderr in one stream) with
//! `iogauge::cluster::log::parse_check_log`.
//!
//! Needs a Docker engine: without one the tests are skipped, unless CI=true, where they fail
//! (`.ci/run` starts one with scripts/start-docker).
//!
//! The image: the static release build takes minutes, so `.ci/run` builds it once before
//! `cargo test` and names it in IOGAUGE_TEST_IMAGE, which these tests then use as it is (and
//! fail if it is missing). Without that variable they run scripts/build-image themselves, once
//! per test binary: cargo's incremental build makes that quick when nothing changed, and an
//! image from an older checkout is never tested by mistake.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use iogauge::report::document::CheckVerdict;
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

/// The tag scripts/build-image gives the image when IOGAUGE_TEST_IMAGE does not name one.
const TEST_TAG: &str = "iogauge-test:ci";

/// The pod's user and group (Containerfile's USER, and the pod's runAsUser/runAsGroup).
pub(crate) const POD_UID: u32 = 65532;

pub(crate) fn docker(args: &[&str]) -> Output {
    common::cmd("docker")
        .args(args)
        .output()
        .expect("spawn docker")
}

/// Whether a Docker engine answers; with CI=true one that does not fails the test instead of
/// skipping it.
pub(crate) fn have_docker() -> bool {
    let ok = common::cmd("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("no Docker engine answers (docker info failed), and CI=true requires the image tests: run scripts/start-docker");
        }
        eprintln!("skipping the container image test: no Docker engine answers (docker info failed); scripts/start-docker starts one (as root)");
    }
    ok
}

/// The image under test: IOGAUGE_TEST_IMAGE's, or one scripts/build-image builds for this test
/// binary (once, whichever test asks first; the others wait for it).
pub(crate) fn image() -> &'static str {
    static IMAGE: OnceLock<String> = OnceLock::new();
    IMAGE.get_or_init(|| {
        if let Ok(tag) = std::env::var("IOGAUGE_TEST_IMAGE") {
            let o = docker(&["image", "inspect", "--format", "{{.Id}}", &tag]);
            assert!(
                o.status.success(),
                "IOGAUGE_TEST_IMAGE={tag} is not an image here (run scripts/build-image {tag}): {}",
                text(&o.stderr)
            );
            return tag;
        }
        let t0 = std::time::Instant::now();
        let o = common::cmd(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/build-image"))
            .arg(TEST_TAG)
            .output()
            .expect("spawn scripts/build-image");
        assert!(
            o.status.success(),
            "scripts/build-image {TEST_TAG} failed: {}",
            text(&o.stderr)
        );
        eprintln!("built {TEST_TAG} in {:.0} s", t0.elapsed().as_secs_f64());
        TEST_TAG.to_string()
    })
}

pub(crate) fn inspect(image: &str) -> Value {
    let o = docker(&["image", "inspect", image]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v[0].clone()
}

/// Removes the named container when dropped, so a failed assertion leaves none behind.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = docker(&["rm", "--force", &self.0]);
    }
}

/// What a pod's run leaves: its exit code and its log, stdout and stderr in one stream.
pub(crate) struct PodRun {
    pub(crate) code: i32,
    pub(crate) log: String,
}

/// `check` with `args` in the image, as a pod under Pod Security "restricted" runs it, with
/// `volume` (a `-v` argument) at /data. Run detached and not removed, then `docker wait` and
/// `docker logs`, as the controller will read the pod's log after it ends.
fn run_pod(name: &str, volume: &str, args: &[&str]) -> PodRun {
    let uid = format!("{POD_UID}:{POD_UID}");
    run_container(name, &uid, &["-v", volume], args)
}

/// [`run_pod`] with another user and other docker options for the volume (`--device` for a
/// Block claim's pod, which runs as uid 0).
fn run_container(name: &str, uid: &str, volume: &[&str], args: &[&str]) -> PodRun {
    run_in(image(), name, uid, volume, args)
}

/// [`run_container`] in another image (tests/kube_image_registry.rs: the pushed and the
/// exported image).
pub(crate) fn run_in(image: &str, name: &str, uid: &str, volume: &[&str], args: &[&str]) -> PodRun {
    let name = format!("iogauge-test-{}-{name}", std::process::id());
    let _ = docker(&["rm", "--force", &name]);
    let guard = Container(name.clone());
    let mut run = vec![
        "run",
        "--detach",
        "--name",
        &name,
        "--network",
        "none",
        "--user",
        uid,
        "--read-only",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        // No seccomp option: the engine's default profile applies, which is what the pod's
        // seccompProfile RuntimeDefault asks for (the_engine_applies_its_default_seccomp
        // checks that the engine has one).
    ];
    run.extend_from_slice(volume);
    run.extend_from_slice(&[image, "check"]);
    run.extend_from_slice(args);
    let o = docker(&run);
    assert!(o.status.success(), "docker run: {}", text(&o.stderr));

    let o = docker(&["wait", &guard.0]);
    assert!(o.status.success(), "docker wait: {}", text(&o.stderr));
    let code: i32 = text(&o.stdout).trim().parse().unwrap();

    // One pipe for both of docker logs' streams: the merged log that `kubectl logs` (and the
    // log API the controller reads) returns, with stderr's lines among stdout's.
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut child = {
        let mut c = common::cmd("docker");
        c.args(["logs", &guard.0])
            .stdout(writer.try_clone().unwrap())
            .stderr(writer);
        c.spawn().expect("spawn docker logs")
        // `c` and its copies of the pipe's write end are dropped here, so the read ends.
    };
    let mut log = String::new();
    reader.read_to_string(&mut log).unwrap();
    assert!(child.wait().unwrap().success(), "docker logs: {log}");
    PodRun { code, log }
}

/// A directory on the project's disk (not a tmpfs) that the pod's user can write, as a
/// volume with fsGroup or a chowned hostPath is for the pod.
pub(crate) fn pod_volume() -> tempfile::TempDir {
    let d = scratch();
    if let Err(e) = std::os::unix::fs::chown(d.path(), Some(POD_UID), Some(POD_UID)) {
        // Not root: a developer in the docker group. World-writable does as well for the test.
        eprintln!("chown to {POD_UID} failed ({e}); making the directory world-writable");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    d
}

pub(crate) fn volume_arg(d: &Path, opts: &str) -> String {
    format!("{}:/data{opts}", d.to_str().unwrap())
}

#[test]
fn the_image_is_scratch_small_and_non_root() {
    common::serial();
    if !have_docker() {
        return;
    }
    let tag = image();
    let v = inspect(tag);

    let layers = v["RootFS"]["Layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "FROM scratch and one COPY: {v}");
    let size = v["Size"].as_u64().unwrap();
    eprintln!(
        "{tag}: {size} bytes ({:.1} MiB), {} layer",
        size as f64 / 1048576.0,
        layers.len()
    );
    assert!(size < 30_000_000, "{size} bytes");
    // The binary is most of it: an image without it would be a few bytes.
    assert!(size > 1_000_000, "{size} bytes");

    let cfg = &v["Config"];
    assert_eq!(cfg["User"], "65532:65532");
    assert_eq!(cfg["Entrypoint"], serde_json::json!(["/iogauge"]));
    assert_eq!(
        cfg["Labels"]["org.opencontainers.image.licenses"],
        "Apache-2.0"
    );
    for l in [
        "org.opencontainers.image.source",
        "org.opencontainers.image.description",
        "org.opencontainers.image.version",
    ] {
        assert!(
            !cfg["Labels"][l].as_str().unwrap_or("").is_empty(),
            "label {l}: {}",
            cfg["Labels"]
        );
    }

    // The one layer holds /iogauge and nothing else: no shell, no libc.
    let d = scratch();
    let tar = d.path().join("image.tar");
    let o = docker(&["save", "-o", tar.to_str().unwrap(), tag]);
    assert!(o.status.success(), "docker save: {}", text(&o.stderr));
    let untar = |args: &[&str]| {
        let o = common::cmd("tar")
            .args(args)
            .current_dir(d.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "tar {args:?}: {}", text(&o.stderr));
        text(&o.stdout)
    };
    untar(&["-xf", "image.tar", "manifest.json"]);
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("manifest.json")).unwrap()).unwrap();
    let layer = manifest[0]["Layers"][0].as_str().unwrap();
    untar(&["-xf", "image.tar", layer]);
    let listing = untar(&["--numeric-owner", "-tvf", layer]);
    let entries: Vec<&str> = listing.lines().collect();
    assert_eq!(entries.len(), 1, "{listing}");
    assert!(entries[0].starts_with("-rwxr-xr-x 0/0 "), "{listing}");
    assert!(entries[0].ends_with(" iogauge"), "{listing}");
}

#[test]
fn the_engine_applies_its_default_seccomp() {
    common::serial();
    if !have_docker() {
        return;
    }
    // The pod test runs with the engine's default profile (RuntimeDefault); an engine built
    // without seccomp would run it unconfined and prove nothing about that.
    let o = docker(&["info", "--format", "{{json .SecurityOptions}}"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let opts = text(&o.stdout);
    assert!(
        opts.contains("name=seccomp,profile=default")
            || opts.contains("name=seccomp,profile=builtin"),
        "{opts}"
    );
}

#[test]
fn check_runs_in_a_restricted_pod_and_its_log_parses() {
    common::serial();
    if !have_docker() {
        return;
    }
    let d = pod_volume();
    let t0 = std::time::Instant::now();
    let run = run_pod(
        "etcd",
        &volume_arg(d.path(), ""),
        &[
            "etcd",
            "--dir",
            "/data",
            "--format",
            "kube-frames",
            "--scale",
            "0.05",
        ],
    );
    eprintln!(
        "check etcd in the container: exit {} in {:.1} s",
        run.code,
        t0.elapsed().as_secs_f64()
    );
    let doc = iogauge::cluster::log::parse_check_log(&run.log)
        .unwrap_or_else(|e| panic!("exit {}: {e}\n{}", run.code, run.log));

    // The log is stdout and stderr together: the plan line (stderr) is there too, and the
    // document was still found among them.
    assert!(
        run.log
            .lines()
            .any(|l| l.starts_with("iogauge check: etcd: ")),
        "{}",
        run.log
    );

    assert_eq!(doc.profiles.len(), 1, "{}", run.log);
    let p = &doc.profiles[0];
    assert_eq!(p.profile, "etcd");
    // Whatever this disk earns, it is a verdict on it.
    // Whatever the verdict, the pod printed its document: exit 0 (a Complete Job).
    assert!(
        matches!(
            p.verdict,
            CheckVerdict::Pass | CheckVerdict::Warn | CheckVerdict::Fail
        ),
        "etcd's verdict is {:?}: {:?}\n{}",
        p.verdict,
        p.reason,
        run.log
    );
    assert_eq!(run.code, 0, "{}", run.log);
    assert_eq!(
        (
            doc.summary.passed + doc.summary.warned + doc.summary.failed,
            doc.summary.errors
        ),
        (1, 0)
    );

    let m = p.metrics.iter().find(|m| m.metric == "sync_p99").unwrap();
    assert!(m.value > 0.0, "sync_p99 = {}", m.value);
    assert!(p.shortened, "--scale 0.05 is a shortened run");

    // Where it ran, as seen inside the pod: /data, the bind-mounted volume, not the image's
    // read-only root (an overlay), and no warning that it measured a container layer.
    assert_eq!(doc.context.directory.as_deref(), Some("/data"));
    let fs = doc.context.filesystem.as_ref().unwrap();
    assert!(!fs.fs_type.is_empty());
    assert_ne!(fs.fs_type, "overlay", "{fs:?}");
    assert_eq!(fs.mount_point, "/data", "{fs:?}");
    assert!(
        !p.warnings.iter().any(|w| w.contains("writable layer")),
        "{:?}",
        p.warnings
    );

    // check removed its files from the volume.
    assert_empty(d.path());
}

#[test]
fn a_read_only_volume_is_refused_and_the_log_says_why() {
    common::serial();
    if !have_docker() {
        return;
    }
    let d = pod_volume();
    let run = run_pod(
        "ro",
        &volume_arg(d.path(), ":ro"),
        &["etcd", "--dir", "/data", "--format", "kube-frames"],
    );
    assert_eq!(run.code, 2, "a refused --dir is bad input: {}", run.log);
    let e = iogauge::cluster::log::parse_check_log(&run.log).unwrap_err();
    assert!(
        e.starts_with("no result in the pod's log; it ends with: "),
        "{e}"
    );
    assert!(e.contains("'/data' is not writable"), "{e}");
    assert!(e.contains("Read-only file system"), "{e}");
    assert_empty(d.path());
}

/// A Block claim's pod: uid 0 (the device node is root's), every other restriction kept, the
/// claim's device at /dev/iogauge, `check --device --allow-overwrite` as the manifest runs it.
/// A loop device stands in for the claim's volume.
#[test]
fn check_runs_on_a_block_device_in_the_pod() {
    common::serial();
    if !have_docker() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must run the block device test: it needs root for losetup"
        );
        eprintln!("skipping: the block device test needs root (losetup)");
        return;
    }
    let d = scratch();
    let img = d.path().join("claim.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let o = common::cmd("losetup")
        .args(["-f", "--show", img.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "losetup: {}", text(&o.stderr));
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = common::cmd("losetup").args(["-d", &self.0]).status();
        }
    }
    let dev = Detach(text(&o.stdout).trim().to_string());
    let device = format!("{}:/dev/iogauge", dev.0);
    let run = run_container(
        "block",
        "0:0",
        &["--device", &device],
        &[
            "etcd",
            "--device",
            "/dev/iogauge",
            "--allow-overwrite",
            "--format",
            "kube-frames",
            "--scale",
            "0.05",
        ],
    );
    let doc = iogauge::cluster::log::parse_check_log(&run.log)
        .unwrap_or_else(|e| panic!("exit {}: {e}\n{}", run.code, run.log));
    assert!(doc.device);
    assert_eq!(doc.dir, "/dev/iogauge");
    let p = &doc.profiles[0];
    // Whatever the verdict, the pod printed its document: exit 0 (a Complete Job).
    assert!(
        matches!(
            p.verdict,
            CheckVerdict::Pass | CheckVerdict::Warn | CheckVerdict::Fail
        ),
        "etcd's verdict is {:?}: {:?}\n{}",
        p.verdict,
        p.reason,
        run.log
    );
    assert_eq!(run.code, 0, "{}", run.log);
    assert!(p.value.unwrap() > 0.0);
    // It wrote to the device: the image's first block is no longer zeros.
    let mut first = [0u8; 4096];
    std::io::Read::read_exact(&mut std::fs::File::open(&img).unwrap(), &mut first).unwrap();
    assert!(first.iter().any(|b| *b != 0));
}
