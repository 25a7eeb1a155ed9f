//! The credentials `docker login` saved for a registry, found as Docker finds them: the
//! registry's credential helper (`credHelpers`), else the config's store (`credsStore`), else
//! its `auths` entry; each answer says where it came from, for the line that says the
//! registry refused it.

use base64::Engine;
use oci_client::secrets::RegistryAuth;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a credential helper may take (it may ask a keychain or a cloud's API).
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);
/// The most a helper's answer may hold: a user name and a secret, never megabytes.
const HELPER_OUTPUT_CAP: u64 = 64 * 1024;

/// Credentials and where they came from ("auths.\"HOST\" in FILE", "docker-credential-X
/// (credsStore in FILE)"); `None` for anonymous access.
pub struct Credentials {
    pub auth: RegistryAuth,
    pub source: Option<String>,
}

impl Credentials {
    fn anonymous() -> Credentials {
        Credentials {
            auth: RegistryAuth::Anonymous,
            source: None,
        }
    }
}

/// Where `docker login` keeps credentials: $DOCKER_CONFIG/config.json, else
/// ~/.docker/config.json.
pub fn docker_config_path() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("DOCKER_CONFIG").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("config.json"));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".docker/config.json"))
}

fn is_hub(registry: &str) -> bool {
    matches!(
        registry,
        "docker.io" | "index.docker.io" | "registry-1.docker.io"
    )
}

/// What the config says to do for `registry`.
#[derive(Debug, PartialEq)]
pub enum Plan {
    /// Run docker-credential-NAME; `key` is credHelpers or credsStore.
    Helper {
        name: String,
        key: &'static str,
    },
    /// An `auths` entry, under this key.
    Auth {
        auth: AuthEntry,
        key: String,
    },
    Anonymous,
}

/// An `auths` entry's credentials (kept apart from RegistryAuth, which has no PartialEq).
#[derive(Debug, PartialEq)]
pub struct AuthEntry {
    pub user: String,
    pub password: String,
}

/// The plan for `registry` in a Docker config file's text. Precedence as Docker's:
/// credHelpers[registry] > credsStore > auths.
pub fn plan(text: &str, registry: &str) -> Result<Plan, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
    let name = |x: Option<&serde_json::Value>| {
        x.and_then(|n| n.as_str())
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
    };
    let helpers = v.get("credHelpers").and_then(|h| h.as_object());
    let helper = helpers.and_then(|h| {
        h.iter()
            .find(|(k, _)| host_of(k) == registry || (is_hub(registry) && is_hub(&host_of(k))))
            .and_then(|(_, n)| name(Some(n)))
    });
    if let Some(name) = helper {
        return Ok(Plan::Helper {
            name,
            key: "credHelpers",
        });
    }
    if let Some(name) = name(v.get("credsStore")) {
        return Ok(Plan::Helper {
            name,
            key: "credsStore",
        });
    }
    auths_entry(&v, registry)
}

/// "https://host:port/v1/" → "host:port".
fn host_of(k: &str) -> String {
    let k = k
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    k.split('/').next().unwrap_or(k).to_string()
}

/// The `auths` entry (keyed by the host, or by a URL of it; Docker Hub's is
/// https://index.docker.io/v1/), as `auth` (base64 of user:password) or `username` and
/// `password`.
fn auths_entry(v: &serde_json::Value, registry: &str) -> Result<Plan, String> {
    let Some(auths) = v.get("auths").and_then(|a| a.as_object()) else {
        return Ok(Plan::Anonymous);
    };
    let entry = auths
        .iter()
        .find(|(k, _)| host_of(k) == registry || (is_hub(registry) && is_hub(&host_of(k))));
    let Some((key, e)) = entry else {
        return Ok(Plan::Anonymous);
    };
    let key = format!("auths.\"{key}\"");
    let field = |f: &str| e.get(f).and_then(|x| x.as_str()).filter(|x| !x.is_empty());
    let auth = |user: &str, password: &str| Plan::Auth {
        auth: AuthEntry {
            user: user.to_string(),
            password: password.to_string(),
        },
        key: key.clone(),
    };
    if let (Some(u), Some(p)) = (field("username"), field("password")) {
        return Ok(auth(u, p));
    }
    if let Some(a) = field("auth") {
        let bad = || format!("{key}.auth is not base64 of user:password");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(a.trim())
            .map_err(|_| bad())?;
        let s = String::from_utf8(raw).map_err(|_| bad())?;
        let (u, p) = s.split_once(':').ok_or_else(bad)?;
        return Ok(auth(u, p));
    }
    // An OAuth refresh token (docker login through a browser or a helper): it would have to be
    // exchanged at the registry's token service, which the client does not do.
    if field("identitytoken").is_some() {
        return Err(identity_token(&key, registry));
    }
    Ok(Plan::Anonymous)
}

fn identity_token(whose: &str, registry: &str) -> String {
    format!(
        "{whose} holds only an identity token, which iogauge cannot use; log in with a user \
         name and a password or access token: docker login -u USER {registry}"
    )
}

/// The credentials for `registry` from the Docker config file, if there is one.
pub fn lookup(registry: &str) -> Result<Credentials, String> {
    let Some(path) = docker_config_path() else {
        return Ok(Credentials::anonymous());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Credentials::anonymous()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let bad_file = |e: String| {
        format!(
            "cannot read the registry credentials in {}: {e}; fix it, or log in again with \
             docker login {registry}",
            path.display()
        )
    };
    match plan(&text, registry).map_err(bad_file)? {
        Plan::Anonymous => Ok(Credentials::anonymous()),
        Plan::Auth { auth, key } => Ok(Credentials {
            auth: RegistryAuth::Basic(auth.user, auth.password),
            source: Some(format!("{key} in {}", path.display())),
        }),
        Plan::Helper { name, key } => {
            let source = format!("docker-credential-{name} ({key} in {})", path.display());
            match run_helper(&name, registry, &source)? {
                Some(auth) => Ok(Credentials {
                    auth,
                    source: Some(source),
                }),
                // The helper has none for this registry: anonymous, as Docker pulls then.
                None => Ok(Credentials::anonymous()),
            }
        }
    }
}

/// `docker-credential-NAME get`, the registry on stdin: its answer, or None when it has no
/// credentials for it. Bounded in time and size; errors name the helper, the registry and the fix.
fn run_helper(name: &str, registry: &str, source: &str) -> Result<Option<RegistryAuth>, String> {
    // A name with a '/' would run a path instead of a program found in PATH.
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || !name.chars().all(plain) {
        return Err(format!(
            "the credential helper name '{}' ({source}) is not a program name (letters, digits, \
             '.', '_' and '-' only): fix that entry of the config file",
            crate::untrusted::capped(name)
        ));
    }
    let program = format!("docker-credential-{name}");
    // Docker Hub's credentials are stored under its v1 URL.
    let server = if is_hub(registry) {
        "https://index.docker.io/v1/"
    } else {
        registry
    };
    let mut child = Command::new(&program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "the credential helper {source} for {registry} is not in PATH: install \
                 {program}, or remove it from the config file and log in with docker login \
                 {registry}"
            ),
            _ => format!("cannot run the credential helper {source} for {registry}: {e}"),
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that exits without reading is judged by its exit status below.
        let _ = stdin.write_all(server.as_bytes());
    }
    // Each pipe is read on its own thread, which hands back what it read; a grandchild that
    // keeps a pipe open cannot hold the push beyond the helper's time.
    let read = |r: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(r) = r {
                let _ = r.take(HELPER_OUTPUT_CAP + 1).read_to_end(&mut buf);
            }
            let _ = tx.send(buf);
        });
        rx
    };
    let out = read(child.stdout.take().map(|o| Box::new(o) as _));
    let err = read(child.stderr.take().map(|o| Box::new(o) as _));
    let t0 = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if t0.elapsed() < HELPER_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the credential helper {source} did not answer for {registry} within {} s; \
                     check that it works (echo {server} | {program} get), or log in with \
                     docker login {registry}",
                    HELPER_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for {program}: {e}")),
        }
    };
    // The readers end at the pipes' end or at the cap, whichever comes first, within the time
    // the helper had left.
    let left = |t0: Instant| HELPER_TIMEOUT.saturating_sub(t0.elapsed()) + Duration::from_secs(1);
    let out = out.recv_timeout(left(t0)).unwrap_or_default();
    let err = err.recv_timeout(left(t0)).unwrap_or_default();
    parse_helper_answer(&out, &err, status, source, registry, &program, server)
}

fn parse_helper_answer(
    out: &[u8],
    err: &[u8],
    status: std::process::ExitStatus,
    source: &str,
    registry: &str,
    program: &str,
    server: &str,
) -> Result<Option<RegistryAuth>, String> {
    let said = |b: &[u8]| crate::untrusted::capped(&String::from_utf8_lossy(b));
    if !status.success() {
        // docker-credential-helpers' own words for "nothing stored for this registry" (on
        // stdout or stderr).
        let text = [out, err].concat();
        if String::from_utf8_lossy(&text).contains("credentials not found") {
            return Ok(None);
        }
        // Only stderr is quoted: stdout is where a helper writes secrets.
        let words = if err.trim_ascii().is_empty() {
            "no message on stderr".to_string()
        } else {
            said(err)
        };
        return Err(format!(
            "the credential helper {source} failed for {registry} ({status}): {words}; check it \
             (echo {server} | {program} get), or log in again with docker login {registry}"
        ));
    }
    if out.len() as u64 > HELPER_OUTPUT_CAP {
        return Err(format!(
            "the credential helper {source} answered more than {HELPER_OUTPUT_CAP} bytes for \
             {registry}; expected {{\"Username\": …, \"Secret\": …}}"
        ));
    }
    // The answer is never quoted: it may hold the secret.
    let v: serde_json::Value = serde_json::from_slice(out).map_err(|e| {
        format!(
            "the credential helper {source} answered {} bytes for {registry} that are not the \
             JSON expected ({e}); expected {{\"Username\": …, \"Secret\": …}}",
            out.len()
        )
    })?;
    let field = |f: &str| v.get(f).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let (user, secret) = (field("Username"), field("Secret"));
    if user == "<token>" {
        return Err(identity_token(
            &format!("the credential helper {source}'s answer"),
            registry,
        ));
    }
    if user.is_empty() && secret.is_empty() {
        return Ok(None);
    }
    Ok(Some(RegistryAuth::Basic(user, secret)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(user: &str, password: &str, key: &str) -> Plan {
        Plan::Auth {
            auth: AuthEntry {
                user: user.into(),
                password: password.into(),
            },
            key: key.into(),
        }
    }

    #[test]
    fn docker_config_credentials_are_found_by_host() {
        // "user:secret" in base64.
        let c = r#"{"auths": {"https://reg.example.com:5000/v1/": {"auth": "dXNlcjpzZWNyZXQ="},
                    "https://index.docker.io/v1/": {"username": "hub", "password": "pw"},
                    "tok.example.com": {"identitytoken": "t0k"}}}"#;
        assert_eq!(
            plan(c, "reg.example.com:5000").unwrap(),
            auth(
                "user",
                "secret",
                "auths.\"https://reg.example.com:5000/v1/\""
            )
        );
        assert_eq!(
            plan(c, "index.docker.io").unwrap(),
            auth("hub", "pw", "auths.\"https://index.docker.io/v1/\"")
        );
        assert!(plan(c, "tok.example.com")
            .unwrap_err()
            .contains("only an identity token"));
        assert_eq!(plan(c, "other.example.com").unwrap(), Plan::Anonymous);
        let bad = r#"{"auths": {"r.io": {"auth": "bm8tY29sb24="}}}"#;
        assert!(plan(bad, "r.io")
            .unwrap_err()
            .contains("not base64 of user:password"));
        assert!(plan("{", "r.io").is_err());
    }

    #[test]
    fn helper_answers_are_read_and_bounded() {
        use std::os::unix::process::ExitStatusExt;
        let (ok, failed) = (
            std::process::ExitStatus::from_raw(0),
            std::process::ExitStatus::from_raw(256),
        );
        let answer = |out: &[u8], err: &[u8], status| {
            parse_helper_answer(out, err, status, "docker-credential-x", "r.io", "p", "r.io")
        };
        assert!(matches!(
            answer(br#"{"ServerURL":"r.io","Username":"u","Secret":"s"}"#, b"", ok),
            Ok(Some(RegistryAuth::Basic(u, s))) if u == "u" && s == "s"
        ));
        assert!(answer(br#"{"Username":"<token>","Secret":"t"}"#, b"", ok)
            .unwrap_err()
            .contains("identity token"));
        assert!(matches!(
            answer(b"", b"credentials not found in native keychain", failed),
            Ok(None)
        ));
        // An answer that is not JSON is never quoted: it may hold the secret.
        let e = answer(br#"{"Username":"u","Secret":"s3cr3t"} debug"#, b"", ok).unwrap_err();
        assert!(
            e.contains("answered 40 bytes for r.io that are not the JSON expected"),
            "{e}"
        );
        assert!(!e.contains("s3cr3t"), "{e}");
        // A failing helper's stdout is not quoted either; its stderr is.
        let e = answer(b"Secret s3cr3t", b"", failed).unwrap_err();
        assert!(e.contains("(exit status: 1): no message on stderr;"), "{e}");
        assert!(!e.contains("s3cr3t"), "{e}");
        assert!(answer(b"", b"keychain locked", failed)
            .unwrap_err()
            .contains("(exit status: 1): keychain locked;"));
        let big = vec![b' '; HELPER_OUTPUT_CAP as usize + 1];
        assert!(answer(&big, b"", ok).unwrap_err().contains("more than"));
    }

    #[test]
    fn a_helper_name_is_a_program_name_not_a_path() {
        let e = run_helper("x/../../tmp/evil", "r.io", "credsStore in F").unwrap_err();
        assert_eq!(
            e,
            "the credential helper name 'x/../../tmp/evil' (credsStore in F) is not a program \
             name (letters, digits, '.', '_' and '-' only): fix that entry of the config file"
        );
        assert!(run_helper("", "r.io", "credsStore in F").is_err());
    }

    #[test]
    fn helpers_come_first_as_in_docker() {
        let c = r#"{"auths": {"a.io": {"auth": "dXNlcjpzZWNyZXQ="}, "b.io": {"auth": "dXNlcjpzZWNyZXQ="}},
                    "credsStore": "pass", "credHelpers": {"a.io": "ecr-login"}}"#;
        let helper = |name: &str, key| Plan::Helper {
            name: name.into(),
            key,
        };
        assert_eq!(plan(c, "a.io").unwrap(), helper("ecr-login", "credHelpers"));
        assert_eq!(plan(c, "b.io").unwrap(), helper("pass", "credsStore"));
        let no_store = r#"{"auths": {"b.io": {"auth": "dXNlcjpzZWNyZXQ="}}, "credsStore": ""}"#;
        assert_eq!(
            plan(no_store, "b.io").unwrap(),
            auth("user", "secret", "auths.\"b.io\"")
        );
    }
}
