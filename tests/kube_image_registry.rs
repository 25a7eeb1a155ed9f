//! `iogauge kube image export|push` for real: the image the static binary makes of itself,
//! pushed to Debian's docker-registry (the reference distribution registry) on a free local
//! port, inspected and read back with skopeo, pulled by Docker and run as a pod runs it
//! (tests/kube_image.rs's restricted container); and the exported OCI archive loaded with
//! skopeo into Docker and run the same way.
//!
//! Needs docker-registry, skopeo and a Docker engine: without them the tests are skipped,
//! unless CI=true, where they fail (`.ci/run` installs and starts them). The static binary is
//! the one scripts/build-image built for IOGAUGE_TEST_IMAGE (target/static), not another build.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::kube_image::{docker, have_docker, image, pod_volume, run_in, volume_arg, POD_UID};
use common::*;

use serde_json::Value;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The static binary scripts/build-image builds (and strips into the image it builds).
const STATIC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/static/x86_64-unknown-linux-gnu/release/iogauge"
);

/// Whether `tool` runs; with CI=true a missing one fails the test instead of skipping it.
fn have(tool: &str, version_arg: &str) -> bool {
    let ok = common::cmd(tool)
        .arg(version_arg)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{tool} is missing, and CI=true requires the image registry tests: apt-get install docker-registry skopeo (.ci/run does)");
        }
        eprintln!("skipping the image registry test: {tool} is missing (apt-get install docker-registry skopeo)");
    }
    ok
}

pub(crate) fn have_all() -> bool {
    have("docker-registry", "--version") && have("skopeo", "--version") && have_docker()
}

/// The static iogauge of this checkout: the one .ci/run built for IOGAUGE_TEST_IMAGE, or,
/// without that variable, the one scripts/build-image (re)builds for tests/kube_image.rs.
pub(crate) fn static_binary() -> &'static str {
    // Builds the image (and so target/static) unless IOGAUGE_TEST_IMAGE names one.
    image();
    assert!(
        Path::new(STATIC).is_file(),
        "{STATIC} is missing: scripts/build-image builds it"
    );
    STATIC
}

pub(crate) fn run(bin: &str, args: &[&str], cwd: &Path) -> Output {
    common::cmd(bin)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge")
}

pub(crate) fn skopeo(args: &[&str]) -> Output {
    let o = common::cmd("skopeo")
        .args(args)
        .output()
        .expect("spawn skopeo");
    assert!(o.status.success(), "skopeo {args:?}: {}", text(&o.stderr));
    o
}

/// A docker-registry on 127.0.0.1, storing in a temporary directory; stopped when dropped.
pub(crate) struct Registry {
    child: Child,
    pub(crate) port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        Registry::start_with(scratch(), "")
    }

    /// A registry whose config ends with `extra` (e.g. an `auth:` section), storing in `dir`.
    pub(crate) fn start_with(dir: tempfile::TempDir, extra: &str) -> Registry {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n\
                 http:\n  addr: 127.0.0.1:{port}\n{extra}",
                dir.path().join("data").display()
            ),
        )
        .unwrap();
        let child = common::cmd("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn docker-registry");
        let r = Registry {
            child,
            port,
            _dir: dir,
        };
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "docker-registry did not listen on 127.0.0.1:{port} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        r
    }

    pub(crate) fn name(&self, repo_tag: &str) -> String {
        format!("127.0.0.1:{}/{repo_tag}", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Removes the named Docker image when dropped.
struct DockerImage(String);

impl Drop for DockerImage {
    fn drop(&mut self) {
        let _ = docker(&["rmi", "--force", &self.0]);
    }
}

/// `check etcd` in `image` as a restricted pod runs it: a verdict, and the document in the log.
fn runs_as_a_pod(image: &str, name: &str) {
    let d = pod_volume();
    let uid = format!("{POD_UID}:{POD_UID}");
    let v = volume_arg(d.path(), "");
    let args = [
        "etcd",
        "--dir",
        "/data",
        "--format",
        "kube-frames",
        "--scale",
        "0.02",
    ];
    let run = run_in(image, name, &uid, &["-v", &v], &args);
    assert!(
        matches!(run.code, 0 | 3 | 4),
        "exit {}: {}",
        run.code,
        run.log
    );
    let doc = iogauge::cluster::log::parse_check_log(&run.log)
        .unwrap_or_else(|e| panic!("exit {}: {e}\n{}", run.code, run.log));
    assert_eq!(doc.profiles[0].profile, "etcd");
}

/// The manifest digest an OCI archive's index.json names.
pub(crate) fn archive_digest(archive: &Path) -> String {
    let out = scratch();
    let o = common::cmd("tar")
        .args([
            "-xf",
            archive.to_str().unwrap(),
            "-C",
            out.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let index: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("index.json")).unwrap()).unwrap();
    index["manifests"][0]["digest"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_exported_archive_is_reproducible_and_runs_in_docker() {
    common::serial();
    if !have_all() {
        return;
    }
    let bin = static_binary();
    let d = scratch();
    let t0 = Instant::now();
    let o = run(
        bin,
        &["kube", "image", "export", "--name", "iogauge-export:t"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty(), "stdout: {}", text(&o.stdout));
    let version = env!("CARGO_PKG_VERSION");
    let first: PathBuf = d.path().join(format!("iogauge-{version}.oci.tar"));
    let o = run(
        bin,
        &[
            "kube",
            "image",
            "export",
            "--name",
            "iogauge-export:t",
            "-o",
            "again.tar",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (a, b) = (
        std::fs::read(&first).unwrap(),
        std::fs::read(d.path().join("again.tar")).unwrap(),
    );
    assert!(a == b, "two exports of one binary differ");
    eprintln!(
        "export: {} bytes ({:.1} MiB) twice in {:.1} s",
        a.len(),
        a.len() as f64 / 1048576.0,
        t0.elapsed().as_secs_f64()
    );

    // skopeo reads the layout and loads it into Docker, which sees the Containerfile's image.
    let tag = format!("iogauge-export-test:{}", std::process::id());
    let _cleanup = DockerImage(tag.clone());
    skopeo(&[
        "copy",
        &format!("oci-archive:{}", first.display()),
        &format!("docker-daemon:{tag}"),
    ]);
    let v = crate::kube_image::inspect(&tag);
    assert_eq!(v["Config"]["User"], "65532:65532", "{v}");
    assert_eq!(v["Config"]["Entrypoint"], serde_json::json!(["/iogauge"]));
    assert_eq!(v["Architecture"], "amd64");
    assert_eq!(v["Os"], "linux");
    assert_eq!(
        v["Config"]["Labels"]["org.opencontainers.image.version"],
        version
    );
    assert_eq!(v["RootFS"]["Layers"].as_array().unwrap().len(), 1);
    runs_as_a_pod(&tag, "export");
}

#[test]
fn a_dynamic_binary_is_refused_with_the_static_build_command() {
    let d = scratch();
    // The test build of iogauge is the ordinary, dynamically linked one.
    let o = run(
        common::IOGAUGE,
        &["kube", "image", "export", "-o", "x.tar"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("iogauge kube image export: ")
            && err.contains("cannot run in the image: it is dynamically linked")
            && err.contains("RUSTFLAGS='-C target-feature=+crt-static' cargo build --release"),
        "{err}"
    );
    assert!(!d.path().join("x.tar").exists());
    // A bad name is said before the binary is read.
    let o = run(
        common::IOGAUGE,
        &["kube", "image", "export", "--name", "IOGAUGE:1"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        "iogauge kube image export: 'IOGAUGE:1' is not an image name (the repository must be \
         lower-case letters, digits, '.', '_' and '-'); expected e.g. iogauge:0.1.0 or \
         registry.example.com/team/iogauge:0.1.0\n"
    );
    let o = run(
        common::IOGAUGE,
        &[
            "kube",
            "image",
            "push",
            "--insecure",
            "127.0.0.1:9/iogauge:t",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
}

#[test]
fn push_gives_the_digest_that_skopeo_and_docker_pull() {
    common::serial();
    if !have_all() {
        return;
    }
    let bin = static_binary();
    let reg = Registry::start();
    let target = reg.name("iogauge:test");
    let d = scratch();
    let t0 = Instant::now();
    let o = run(
        bin,
        &["kube", "image", "push", "--insecure", &target],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let pinned = text(&o.stdout).trim().to_string();
    eprintln!("push: {:.1} s", t0.elapsed().as_secs_f64());

    // The digest printed is the export's: the same bytes wherever the image goes.
    let o = run(bin, &["kube", "image", "export", "-o", "i.tar"], d.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let digest = archive_digest(&d.path().join("i.tar"));
    assert_eq!(pinned, format!("{}@{digest}", reg.name("iogauge")));

    // A second push sends no blob again and names the same digest; by host name this time:
    // the static glibc binary resolves `localhost` without NSS modules of its own.
    let by_name = format!("localhost:{}/iogauge:test", reg.port);
    let o = run(
        bin,
        &["kube", "image", "push", "--insecure", &by_name],
        d.path(),
    );
    assert_eq!(
        text(&o.stdout).trim(),
        format!("localhost:{}/iogauge@{digest}", reg.port),
        "{}",
        text(&o.stderr)
    );

    let docker_ref = format!("docker://{target}");
    let o = skopeo(&["inspect", "--tls-verify=false", &docker_ref]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["Digest"], digest.as_str(), "{v}");
    assert_eq!(v["Architecture"], "amd64");
    assert_eq!(v["Os"], "linux");
    let labels = &v["Labels"];
    assert_eq!(
        labels["org.opencontainers.image.version"],
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(labels["org.opencontainers.image.licenses"], "Apache-2.0");
    assert!(
        labels["org.opencontainers.image.revision"].is_string(),
        "{v}"
    );
    let o = skopeo(&["inspect", "--config", "--tls-verify=false", &docker_ref]);
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["config"]["User"], "65532:65532", "{c}");
    assert_eq!(c["config"]["Entrypoint"], serde_json::json!(["/iogauge"]));

    // skopeo reads it back whole (every blob's digest checked).
    let back = scratch();
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &docker_ref,
        &format!("oci:{}:x", back.path().display()),
    ]);

    // Docker pulls it by the pinned digest (127.0.0.0/8 is an insecure registry to Docker
    // by default) and runs check in it as the pod would.
    let _cleanup = DockerImage(pinned.clone());
    let o = docker(&["pull", &pinned]);
    assert!(o.status.success(), "docker pull: {}", text(&o.stderr));
    runs_as_a_pod(&pinned, "pushed");
}

#[test]
fn push_to_a_registry_that_is_not_there_says_why() {
    common::serial();
    if !have_all() {
        return;
    }
    let bin = static_binary();
    let d = scratch();
    // A port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let target = format!("127.0.0.1:{port}/iogauge:t");
    let o = run(
        bin,
        &["kube", "image", "push", "--insecure", &target],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let said = format!("iogauge kube image push: logging in to 127.0.0.1:{port} failed: ");
    assert!(
        err.contains(&said) && err.contains("Connection refused"),
        "{err}"
    );
    assert!(o.stdout.is_empty());

    // A credentials file that `docker login` did not write: the file, the entry, the fix.
    let conf = scratch();
    std::fs::write(
        conf.path().join("config.json"),
        format!(r#"{{"auths": {{"127.0.0.1:{port}": {{"auth": "bm8tY29sb24="}}}}}}"#),
    )
    .unwrap();
    let o = common::cmd(bin)
        .args(["kube", "image", "push", "--insecure", &target])
        .env("DOCKER_CONFIG", conf.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).ends_with(&format!(
            "iogauge kube image push: cannot read the registry credentials in {}: \
             auths.\"127.0.0.1:{port}\".auth is not base64 of user:password; fix it, or log in \
             again with docker login 127.0.0.1:{port}\n",
            conf.path().join("config.json").display()
        )),
        "{}",
        text(&o.stderr)
    );

    // A plain-HTTP registry without --insecure: the TLS handshake fails, and the fix is named.
    let reg = Registry::start();
    let o = run(
        bin,
        &["kube", "image", "push", &reg.name("iogauge:t")],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.trim_end()
            .ends_with("(for a registry that speaks plain HTTP, add --insecure)"),
        "{err}"
    );
}
