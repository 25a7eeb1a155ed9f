//! `iogauge kube image push` with credentials, for real: Debian's docker-registry with
//! htpasswd (bcrypt) basic auth (it does not demand TLS for it, so plain HTTP with --insecure),
//! the credentials in a DOCKER_CONFIG directory's config.json (`auths`, `credsStore`,
//! `credHelpers` with fake docker-credential-* scripts first on PATH), read back with
//! `skopeo inspect --creds`; and Ctrl-C while a "registry" never answers.
//!
//! Needs what tests/kube_image_registry.rs needs, and htpasswd (apache2-utils): without them
//! the tests are skipped, unless CI=true, where they fail.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use crate::kube_image_registry::{have_all, skopeo, static_binary, Registry};
use common::*;

use serde_json::Value;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

const USER: &str = "alice";
const PASSWORD: &str = "s3cret";

/// A bcrypt htpasswd line (cost 4: quick), or None (skipped) without htpasswd outside CI.
fn htpasswd_line() -> Option<String> {
    match common::cmd("htpasswd")
        .args(["-Bbn", "-C", "4", USER, PASSWORD])
        .output()
    {
        Ok(o) if o.status.success() => Some(text(&o.stdout).trim().to_string()),
        _ if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("htpasswd is missing, and CI=true requires it: apt-get install apache2-utils (.ci/run does)")
        }
        _ => {
            eprintln!("skipping the registry auth test: htpasswd is missing (apt-get install apache2-utils)");
            None
        }
    }
}

/// `iogauge kube image push --insecure TARGET` with DOCKER_CONFIG=`conf` and `bin_dir` first on PATH.
fn push(bin: &str, target: &str, conf: &Path, bin_dir: &Path) -> Output {
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    common::cmd(bin)
        .args(["kube", "image", "push", "--insecure", target])
        .env("DOCKER_CONFIG", conf)
        .env("PATH", path)
        .output()
        .unwrap()
}

/// A fake docker-credential-NAME in `dir` running `body` (sh).
fn helper(dir: &Path, name: &str, body: &str) {
    let p = dir.join(format!("docker-credential-{name}"));
    std::fs::write(
        &p,
        format!("#!/bin/sh\n[ \"$1\" = get ] || exit 9\n{body}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn config(conf: &Path, json: Value) -> String {
    let path = conf.join("config.json");
    std::fs::write(&path, json.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn push_with_basic_auth_from_the_docker_config_and_its_helpers() {
    common::serial();
    if !have_all() {
        return;
    }
    let Some(line) = htpasswd_line() else { return };
    let bin = static_binary();
    let dir = scratch();
    let htpasswd = dir.path().join("htpasswd");
    std::fs::write(&htpasswd, format!("{line}\n")).unwrap();
    let auth = format!(
        "auth:\n  htpasswd:\n    realm: iogauge-test\n    path: {}\n",
        htpasswd.display()
    );
    let reg = Registry::start_with(dir, &auth);
    let host = format!("127.0.0.1:{}", reg.port);
    let target = reg.name("iogauge:auth");
    let (conf, bins) = (scratch(), scratch());
    let t0 = Instant::now();

    // The right password in `auths`: pushed, and skopeo reads it with the same credentials.
    let b64 = |s: &str| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(s)
    };
    config(
        conf.path(),
        serde_json::json!({"auths": {&host: {"auth": b64(&format!("{USER}:{PASSWORD}"))}}}),
    );
    let o = push(bin, &target, conf.path(), bins.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let pinned = text(&o.stdout).trim().to_string();
    let creds = format!("{USER}:{PASSWORD}");
    let docker_ref = format!("docker://{target}");
    let i = skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--creds",
        &creds,
        &docker_ref,
    ]);
    let v: Value = serde_json::from_slice(&i.stdout).unwrap();
    assert_eq!(
        pinned,
        format!("{}@{}", reg.name("iogauge"), v["Digest"].as_str().unwrap())
    );

    // A wrong password: one line naming the registry, the entry and file, and the fix.
    let file = config(
        conf.path(),
        serde_json::json!({"auths": {&host: {"username": USER, "password": "wrong"}}}),
    );
    let o = push(bin, &target, conf.path(), bins.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let said = format!(
        "iogauge kube image push: the registry {host} refused the credentials from \
         auths.\"{host}\" in {file} ("
    );
    let fix = format!("); log in again with docker login {host}, or fix that entry\n");
    assert!(err.contains(&said) && err.ends_with(&fix), "{err}");
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(o.stdout.is_empty());

    // No credentials at all.
    config(conf.path(), serde_json::json!({"auths": {}}));
    let o = push(bin, &target, conf.path(), bins.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "iogauge kube image push: the registry {host} asks for credentials and there are \
             none for it in {file} ("
        )) && err.ends_with(&format!("); log in with docker login {host}\n")),
        "{err}"
    );

    // credsStore: the helper is asked with the registry host on stdin, and its answer is used.
    helper(
        bins.path(),
        "iogtest",
        &format!(
            "cat > \"$(dirname \"$0\")/asked\"\n\
             echo '{{\"ServerURL\":\"{host}\",\"Username\":\"{USER}\",\"Secret\":\"{PASSWORD}\"}}'"
        ),
    );
    // The wrong `auths` entry is not used: the store comes first.
    let file = config(
        conf.path(),
        serde_json::json!({"credsStore": "iogtest",
                           "auths": {&host: {"username": USER, "password": "wrong"}}}),
    );
    let o = push(bin, &target, conf.path(), bins.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), pinned);
    assert_eq!(
        std::fs::read_to_string(bins.path().join("asked")).unwrap(),
        host
    );

    // credHelpers[host] comes before credsStore: a failing one is named, with its words.
    helper(bins.path(), "iogfail", "echo 'keychain locked' >&2\nexit 1");
    config(
        conf.path(),
        serde_json::json!({"credsStore": "iogtest", "credHelpers": {&host: "iogfail"}}),
    );
    let o = push(bin, &target, conf.path(), bins.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).ends_with(&format!(
            "iogauge kube image push: the credential helper docker-credential-iogfail \
             (credHelpers in {file}) failed for {host} (exit status: 1): keychain locked; \
             check it (echo {host} | docker-credential-iogfail get), or log in again with \
             docker login {host}\n"
        )),
        "{}",
        text(&o.stderr)
    );

    // Said before the image is built.
    assert!(!text(&o.stderr).contains("pushing"), "{}", text(&o.stderr));

    // A helper that is not installed.
    config(conf.path(), serde_json::json!({"credsStore": "iogmissing"}));
    let o = push(bin, &target, conf.path(), bins.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).ends_with(&format!(
            "iogauge kube image push: the credential helper docker-credential-iogmissing \
             (credsStore in {file}) for {host} is not in PATH: install \
             docker-credential-iogmissing, or remove it from the config file and log in with \
             docker login {host}\n"
        )),
        "{}",
        text(&o.stderr)
    );

    // A helper whose password the registry refuses: the helper is named as the source.
    helper(
        bins.path(),
        "iogwrong",
        &format!("echo '{{\"Username\":\"{USER}\",\"Secret\":\"nope\"}}'"),
    );
    config(conf.path(), serde_json::json!({"credsStore": "iogwrong"}));
    let o = push(bin, &target, conf.path(), bins.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains(&format!(
            "iogauge kube image push: the registry {host} refused the credentials from \
             docker-credential-iogwrong (credsStore in {file}) ("
        )),
        "{}",
        text(&o.stderr)
    );
    eprintln!("registry auth cases: {:.1} s", t0.elapsed().as_secs_f64());
}

#[test]
fn ctrl_c_stops_a_push_to_a_registry_that_never_answers() {
    common::serial();
    if !have_all() {
        return;
    }
    let bin = static_binary();
    // Connections are accepted (by the kernel's backlog) and never answered.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let d = scratch();
    let mut child = common::cmd(bin)
        .args([
            "kube",
            "image",
            "push",
            "--insecure",
            &format!("127.0.0.1:{port}/iogauge:t"),
        ])
        .env("DOCKER_CONFIG", d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the image is built and the push has begun (its first line), give it a second.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
    assert!(
        first.starts_with("iogauge kube image push: pushing sha256:"),
        "{first}"
    );
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    std::thread::sleep(Duration::from_millis(1000));
    let t0 = Instant::now();
    // SAFETY: kill(2) on the child's own pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    // Killed after 10 s, so that a push that ignores the signal fails the test, not hangs it.
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = t0.elapsed();
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    let err = rest.join().unwrap();
    assert!(took < Duration::from_secs(3), "took {took:?}: {err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        err,
        "iogauge kube image push: interrupted by SIGINT before the manifest was sent: \
         nothing is tagged; blobs already uploaded may be left, and the registry's garbage \
         collection removes them\n"
    );
    assert!(o.stdout.is_empty());
    drop(silent);
}
