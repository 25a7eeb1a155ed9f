//! `iogauge kube image push REGISTRY/REPO:TAG`: the image's blobs and manifest through the OCI
//! distribution API (oci-client), with the credentials `docker login` saved, and the digest the
//! registry now serves it under, to pin in `--image`.

use super::{Blob, Image};
use base64::Engine;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use std::path::PathBuf;

/// The longest registry message quoted in an error: a registry may answer with a whole page.
const CAP: usize = 500;

/// A message from outside, made safe for a terminal and capped.
fn capped(s: &str) -> String {
    let s = crate::untrusted::term(s.trim());
    match s.char_indices().nth(CAP) {
        None => s.into_owned(),
        Some((i, _)) => format!("{}… ({} bytes)", &s[..i], s.len()),
    }
}

/// An error with its causes (reqwest says "error sending request", its sources say why).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let text = c.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        cur = c.source();
    }
    capped(&s)
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

/// The credentials for `registry` in a Docker config file's text: its `auths` entry (keyed by
/// the host, or by a URL of it; Docker Hub's is https://index.docker.io/v1/), as `auth`
/// (base64 of user:password) or `username` and `password`; a bearer-token registry exchanges
/// them for a token in the client. Anonymous when it has no entry. Credential helpers
/// (credsStore, credHelpers) are not run.
pub fn auth_from_docker_config(text: &str, registry: &str) -> Result<RegistryAuth, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
    let hub = matches!(
        registry,
        "docker.io" | "index.docker.io" | "registry-1.docker.io"
    );
    let host_of = |k: &str| {
        let k = k
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        k.split('/').next().unwrap_or(k).to_string()
    };
    let Some(auths) = v.get("auths").and_then(|a| a.as_object()) else {
        return Ok(RegistryAuth::Anonymous);
    };
    let entry = auths.iter().find(|(k, _)| {
        let h = host_of(k);
        h == registry || (hub && matches!(h.as_str(), "docker.io" | "index.docker.io"))
    });
    let Some((key, e)) = entry else {
        return Ok(RegistryAuth::Anonymous);
    };
    let field = |f: &str| e.get(f).and_then(|x| x.as_str()).filter(|x| !x.is_empty());
    if let (Some(u), Some(p)) = (field("username"), field("password")) {
        return Ok(RegistryAuth::Basic(u.to_string(), p.to_string()));
    }
    if let Some(a) = field("auth") {
        let bad = || format!("auths.\"{key}\".auth is not base64 of user:password");
        let raw = base64::engine::general_purpose::STANDARD
            .decode(a.trim())
            .map_err(|_| bad())?;
        let s = String::from_utf8(raw).map_err(|_| bad())?;
        let (u, p) = s.split_once(':').ok_or_else(bad)?;
        return Ok(RegistryAuth::Basic(u.to_string(), p.to_string()));
    }
    // An OAuth refresh token (docker login through a browser or a helper): it would have to be
    // exchanged at the registry's token service, which the client does not do.
    if field("identitytoken").is_some() {
        return Err(format!(
            "auths.\"{key}\" holds only an identitytoken, which iogauge cannot use; log in \
             with a user name and a password or access token: docker login -u USER {registry}"
        ));
    }
    Ok(RegistryAuth::Anonymous)
}

/// The credentials for `registry` from the Docker config file, if there is one.
fn auth_for(registry: &str) -> Result<RegistryAuth, String> {
    let Some(path) = docker_config_path() else {
        return Ok(RegistryAuth::Anonymous);
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => auth_from_docker_config(&text, registry).map_err(|e| {
            format!(
                "cannot read the registry credentials in {}: {e}; fix it, or log in again \
                 with docker login {registry}",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RegistryAuth::Anonymous),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Why a push did not happen.
#[derive(Debug)]
pub enum PushError {
    /// The target or the credentials file is wrong (exit 2).
    Input(String),
    /// The registry could not be reached or refused (exit 1).
    Registry(String),
}

/// Pushes `image` as `target` (REGISTRY/REPO:TAG) over HTTPS, or plain HTTP with `insecure`;
/// returns REGISTRY/REPO@sha256:… of its manifest.
pub fn push(image: &Image, target: &str, insecure: bool) -> Result<String, PushError> {
    let (reference, auth) = reference_and_auth(target).map_err(PushError::Input)?;
    send(image, &reference, &auth, insecure).map_err(PushError::Registry)?;
    Ok(format!(
        "{}/{}@{}",
        reference.registry(),
        reference.repository(),
        image.manifest.digest
    ))
}

/// The target as a reference, and the credentials for its registry.
fn reference_and_auth(target: &str) -> Result<(Reference, RegistryAuth), String> {
    let reference: Reference = target.parse().map_err(|e| {
        format!(
            "'{}' is not an image reference ({e}); expected REGISTRY/REPO:TAG, e.g. \
             registry.example.com/team/iogauge:0.1.0",
            capped(target)
        )
    })?;
    if reference.digest().is_some() {
        return Err(format!(
            "'{target}' names a digest; push to a tag (REGISTRY/REPO:TAG): the digest is the \
             image's own, printed once it is pushed"
        ));
    }
    let auth = auth_for(reference.resolve_registry())?;
    Ok((reference, auth))
}

/// The blobs, then the manifest.
fn send(
    image: &Image,
    reference: &Reference,
    auth: &RegistryAuth,
    insecure: bool,
) -> Result<(), String> {
    // reqwest is built without a crypto provider of its own: ring's, as kube's client uses.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = Client::new(ClientConfig {
        protocol: if insecure {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        },
        connect_timeout: Some(std::time::Duration::from_secs(30)),
        ..Default::default()
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the network runtime: {e}"))?;
    let registry = reference.registry().to_string();
    let said = |what: &str, e: oci_client::errors::OciDistributionError| {
        let hint = if insecure {
            ""
        } else {
            " (for a registry that speaks plain HTTP, add --insecure)"
        };
        format!("{what} {registry} failed: {}{hint}", chain(&e))
    };
    rt.block_on(async {
        client
            .auth(reference, auth, RegistryOperation::Push)
            .await
            .map_err(|e| said("logging in to", e))?;
        for b in [&image.layer, &image.config] {
            push_blob(&client, reference, b)
                .await
                .map_err(|e| said("uploading a blob to", e))?;
        }
        let content_type = http::HeaderValue::from_static(super::manifest::MEDIA_TYPE);
        client
            .push_manifest_raw(reference, image.manifest.bytes.clone(), content_type)
            .await
            .map_err(|e| said("uploading the manifest to", e))?;
        Ok::<(), String>(())
    })
}

/// One blob, unless the registry has it already (a second push of the same binary sends
/// nothing but the manifest).
async fn push_blob(
    client: &Client,
    reference: &Reference,
    b: &Blob,
) -> Result<(), oci_client::errors::OciDistributionError> {
    if client
        .blob_exists(reference, &b.digest)
        .await
        .unwrap_or(false)
    {
        return Ok(());
    }
    client
        .push_blob(reference, b.bytes.clone(), &b.digest)
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_credentials_are_found_by_host() {
        // "user:secret" in base64.
        let c = r#"{"auths": {"https://reg.example.com:5000/v1/": {"auth": "dXNlcjpzZWNyZXQ="},
                    "https://index.docker.io/v1/": {"username": "hub", "password": "pw"},
                    "tok.example.com": {"identitytoken": "t0k"}}}"#;
        assert!(matches!(
            auth_from_docker_config(c, "reg.example.com:5000").unwrap(),
            RegistryAuth::Basic(u, p) if u == "user" && p == "secret"
        ));
        assert!(matches!(
            auth_from_docker_config(c, "index.docker.io").unwrap(),
            RegistryAuth::Basic(u, _) if u == "hub"
        ));
        assert!(auth_from_docker_config(c, "tok.example.com")
            .unwrap_err()
            .contains("only an identitytoken"));
        assert!(matches!(
            auth_from_docker_config(c, "other.example.com").unwrap(),
            RegistryAuth::Anonymous
        ));
        let bad = r#"{"auths": {"r.io": {"auth": "bm8tY29sb24="}}}"#;
        assert!(auth_from_docker_config(bad, "r.io")
            .unwrap_err()
            .contains("not base64 of user:password"));
        assert!(auth_from_docker_config("{", "r.io").is_err());
    }

    #[test]
    fn registry_messages_are_capped() {
        let long = "x".repeat(2000);
        assert!(capped(&long).len() < 600);
        assert_eq!(capped("a\x1b[31m"), "a\\x1b[31m");
    }
}
