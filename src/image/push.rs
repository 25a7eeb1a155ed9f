//! `iogauge kube image push REGISTRY/REPO:TAG`: the image's blobs and manifest through the OCI
//! distribution API (oci-client), with the credentials `docker login` saved, and the digest the
//! registry now serves it under, to pin in `--image`.

use super::credentials::{self, Credentials};
use super::{Blob, Image};
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::{Client, Reference, RegistryOperation};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

// A registry may answer with a whole page: what is quoted is made safe and cut.
use crate::untrusted::capped;

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

/// Why a push did not happen.
#[derive(Debug)]
pub enum PushError {
    /// The target or the credentials file is wrong (exit 2).
    Input(String),
    /// The registry could not be reached or failed (exit 1).
    Registry(String),
    /// The registry refused the credentials (exit 2: the user's to fix).
    Refused(String),
    /// `stop` was set (SIGINT/SIGTERM); true when the manifest was on its way already (the
    /// tag may then exist), false when nothing is tagged.
    Interrupted(bool),
}

/// Where to push, and the credentials for it: found before the image is built, so that a
/// wrong target or a broken credential helper is said at once.
pub struct Target {
    reference: Reference,
    creds: Credentials,
}

/// `target` (REGISTRY/REPO:TAG) as a reference, and the credentials for its registry.
pub fn target(target: &str) -> Result<Target, PushError> {
    let reference: Reference = target.parse().map_err(|e| {
        PushError::Input(format!(
            "'{}' is not an image reference ({e}); expected REGISTRY/REPO:TAG, e.g. \
             registry.example.com/team/iogauge:0.1.0",
            capped(target)
        ))
    })?;
    if reference.digest().is_some() {
        return Err(PushError::Input(format!(
            "'{target}' names a digest; push to a tag (REGISTRY/REPO:TAG): the digest is the \
             image's own, printed once it is pushed"
        )));
    }
    let creds = credentials::lookup(reference.resolve_registry()).map_err(PushError::Input)?;
    Ok(Target { reference, creds })
}

/// Pushes `image` to `target` over HTTPS, or plain HTTP with `insecure`; returns
/// REGISTRY/REPO@sha256:… of its manifest. `stop` (set by SIGINT/SIGTERM) ends it at once,
/// whatever the registry is doing.
pub fn push(
    image: &Image,
    target: &Target,
    insecure: bool,
    stop: &AtomicBool,
) -> Result<String, PushError> {
    let reference = &target.reference;
    send(image, reference, &target.creds, insecure, stop)?;
    Ok(format!(
        "{}/{}@{}",
        reference.registry(),
        reference.repository(),
        image.manifest.digest
    ))
}

/// Whether the registry said no to the credentials (or to their absence).
fn refused(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::UnauthorizedError { .. }
        | OciDistributionError::AuthenticationFailure(_) => true,
        OciDistributionError::RegistryError { envelope, .. } => envelope
            .errors
            .iter()
            .any(|x| matches!(x.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)),
        OciDistributionError::ServerError { code, .. } => matches!(code, 401 | 403),
        OciDistributionError::RequestError(e) => {
            matches!(e.status().map(|s| s.as_u16()), Some(401 | 403))
        }
        _ => false,
    }
}

/// The line for refused credentials: the registry, where they came from, and the fix.
fn refusal(registry: &str, creds: &Credentials, e: &OciDistributionError) -> String {
    let why = chain(e);
    match &creds.source {
        Some(source) => format!(
            "the registry {registry} refused the credentials from {source} ({why}); log in \
             again with docker login {registry}, or fix that entry"
        ),
        None => format!(
            "the registry {registry} asks for credentials and there are none for it in \
             {} ({why}); log in with docker login {registry}",
            credentials::docker_config_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "$DOCKER_CONFIG/config.json or ~/.docker/config.json".into())
        ),
    }
}

/// Resolves when `stop` is set (a signal only sets the flag; checked every 50 ms).
async fn stopped(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The blobs, then the manifest; raced against `stop`, so that a registry that never answers
/// can still be left with Ctrl-C (the manifest, the only thing that tags, goes last).
fn send(
    image: &Image,
    reference: &Reference,
    creds: &Credentials,
    insecure: bool,
    stop: &AtomicBool,
) -> Result<(), PushError> {
    // reqwest is built without a crypto provider of its own: ring's, as kube's client uses.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = Client::new(ClientConfig {
        protocol: if insecure {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        },
        connect_timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PushError::Registry(format!("cannot start the network runtime: {e}")))?;
    let registry = reference.registry().to_string();
    let said = |what: &str, e: OciDistributionError| {
        if refused(&e) {
            return PushError::Refused(refusal(&registry, creds, &e));
        }
        let hint = if insecure {
            ""
        } else {
            " (for a registry that speaks plain HTTP, add --insecure)"
        };
        PushError::Registry(format!("{what} {registry} failed: {}{hint}", chain(&e)))
    };
    let tagging = std::cell::Cell::new(false);
    let work = async {
        client
            .auth(reference, &creds.auth, RegistryOperation::Push)
            .await
            .map_err(|e| said("logging in to", e))?;
        for b in [&image.layer, &image.config] {
            push_blob(&client, reference, b)
                .await
                .map_err(|e| said("uploading a blob to", e))?;
        }
        if stop.load(Ordering::Relaxed) {
            return Err(PushError::Interrupted(false));
        }
        tagging.set(true);
        let content_type = http::HeaderValue::from_static(super::manifest::MEDIA_TYPE);
        client
            .push_manifest_raw(reference, image.manifest.bytes.clone(), content_type)
            .await
            .map_err(|e| said("uploading the manifest to", e))?;
        Ok::<(), PushError>(())
    };
    rt.block_on(async {
        tokio::select! {
            r = work => r,
            _ = stopped(stop) => Err(PushError::Interrupted(tagging.get())),
        }
    })
}

/// One blob, unless the registry has it already (a second push of the same binary sends
/// nothing but the manifest).
async fn push_blob(
    client: &Client,
    reference: &Reference,
    b: &Blob,
) -> Result<(), OciDistributionError> {
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
    fn registry_messages_are_capped() {
        let long = "x".repeat(2000);
        assert!(capped(&long).len() < 600);
        assert_eq!(capped("a\x1b[31m"), "a\\x1b[31m");
    }
}
