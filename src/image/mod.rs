//! The pod's container image, made by iogauge itself (`iogauge kube image export|push`): the
//! running binary as the one file of a FROM-scratch image, the same image that
//! scripts/build-image builds from Containerfile, without Docker. Everything here is pure and
//! reproducible (fixed mtimes, sorted entries, no dates): the same binary gives the same bytes,
//! so the same digest, wherever it is exported or pushed.
//!
//! `elf` refuses a binary that could not run in a scratch image; `layer`, `config` and
//! `manifest` are the OCI blobs; `archive` lays them out as an OCI image layout tar; `push`
//! sends them to a registry through the OCI distribution API.

pub mod archive;
pub mod config;
pub mod credentials;
pub mod elf;
pub mod layer;
pub mod manifest;
pub mod push;

use sha2::{Digest, Sha256};

/// The image's user (Containerfile's USER; the pod's runAsUser and runAsGroup).
pub const USER: &str = "65532:65532";
/// Where the binary is in the image, and the entrypoint.
pub const BINARY: &str = "iogauge";

/// `sha256:<hex>` of `bytes`, as OCI names blobs.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in hash {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// What the image says about the binary in it (its OCI labels and platform).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// iogauge's version (the binary's own, `iogauge --version`).
    pub version: String,
    /// The git revision it was built from, or "unknown".
    pub revision: String,
    /// Where its source is published, or "unknown".
    pub source: String,
    /// The OCI architecture name: amd64, arm64.
    pub architecture: String,
}

impl Meta {
    /// This build's: the revision and source that scripts/build-image passes at build time
    /// (IOGAUGE_GIT_REVISION, IOGAUGE_SOURCE), else "unknown"; the build target's architecture.
    pub fn of_this_build() -> Result<Meta, String> {
        Ok(Meta {
            version: env!("CARGO_PKG_VERSION").to_string(),
            revision: option_env!("IOGAUGE_GIT_REVISION")
                .filter(|r| !r.is_empty())
                .unwrap_or("unknown")
                .to_string(),
            source: option_env!("IOGAUGE_SOURCE")
                .filter(|r| !r.is_empty())
                .unwrap_or("unknown")
                .to_string(),
            architecture: oci_architecture(std::env::consts::ARCH)?.to_string(),
        })
    }
}

/// The OCI (Go) name of a Rust target architecture.
pub fn oci_architecture(rust_arch: &str) -> Result<&'static str, String> {
    match rust_arch {
        "x86_64" => Ok("amd64"),
        "aarch64" => Ok("arm64"),
        other => Err(format!(
            "this iogauge was built for {other}; images are made for x86_64 (amd64) and \
             aarch64 (arm64) builds only"
        )),
    }
}

/// One content-addressed blob.
#[derive(Debug, Clone)]
pub struct Blob {
    pub media_type: &'static str,
    pub digest: String,
    pub bytes: Vec<u8>,
}

impl Blob {
    fn new(media_type: &'static str, bytes: Vec<u8>) -> Blob {
        Blob {
            media_type,
            digest: digest(&bytes),
            bytes,
        }
    }
}

/// The whole image: its layer, config and manifest blobs.
#[derive(Debug, Clone)]
pub struct Image {
    pub layer: Blob,
    pub config: Blob,
    pub manifest: Blob,
    pub architecture: String,
}

/// The image of `binary` (already checked by [`elf::check_static`]).
pub fn build(binary: &[u8], meta: &Meta) -> Result<Image, String> {
    let layer = layer::layer(binary).map_err(|e| format!("cannot build the layer: {e}"))?;
    let config = Blob::new(
        config::MEDIA_TYPE,
        config::config(meta, &layer.diff_id).into_bytes(),
    );
    let layer_blob = Blob::new(layer::MEDIA_TYPE, layer.gzip);
    let manifest = Blob::new(
        manifest::MEDIA_TYPE,
        manifest::manifest(&config, &layer_blob).into_bytes(),
    );
    Ok(Image {
        layer: layer_blob,
        config,
        manifest,
        architecture: meta.architecture.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_sha256_in_hex() {
        assert_eq!(
            digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn architectures_have_their_oci_names() {
        assert_eq!(oci_architecture("x86_64"), Ok("amd64"));
        assert_eq!(oci_architecture("aarch64"), Ok("arm64"));
        assert!(oci_architecture("riscv64").is_err());
    }

    #[test]
    fn the_same_binary_gives_the_same_image() {
        let meta = Meta {
            version: "1.2.3".into(),
            revision: "abc".into(),
            source: "unknown".into(),
            architecture: "amd64".into(),
        };
        let a = build(b"\x7fELF binary", &meta).unwrap();
        let b = build(b"\x7fELF binary", &meta).unwrap();
        assert_eq!(a.manifest.bytes, b.manifest.bytes);
        assert_eq!(a.layer.bytes, b.layer.bytes);
        let c = build(b"\x7fELF other", &meta).unwrap();
        assert_ne!(a.manifest.digest, c.manifest.digest);
    }
}
