//! The image manifest and the OCI layout's index.json (OCI image spec, manifest.md and
//! image-index.md), with the name the image is known by in the annotations.

use super::Blob;
use serde::Serialize;

/// The manifest's media type.
pub const MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The index's media type.
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

/// A content descriptor (descriptor.md); the fields in this order, which the digests of the
/// manifest and the index depend on.
#[derive(Serialize)]
struct Descriptor<'a> {
    #[serde(rename = "mediaType")]
    media_type: &'static str,
    digest: &'a str,
    size: usize,
    /// Only in the index's entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    platform: Option<Platform<'a>>,
    /// Only in the index's entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<Annotations<'a>>,
}

/// image-index.md's `platform`.
#[derive(Serialize)]
struct Platform<'a> {
    architecture: &'a str,
    os: &'static str,
}

/// The names the image is known by (see [`index`]).
#[derive(Serialize)]
struct Annotations<'a> {
    #[serde(rename = "io.containerd.image.name")]
    containerd_name: String,
    #[serde(rename = "org.opencontainers.image.ref.name")]
    ref_name: &'a str,
}

/// manifest.md's image manifest.
#[derive(Serialize)]
struct Manifest<'a> {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    #[serde(rename = "mediaType")]
    media_type: &'static str,
    config: Descriptor<'a>,
    layers: [Descriptor<'a>; 1],
}

/// image-index.md's image index.
#[derive(Serialize)]
struct Index<'a> {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    #[serde(rename = "mediaType")]
    media_type: &'static str,
    manifests: [Descriptor<'a>; 1],
}

fn descriptor(b: &Blob) -> Descriptor<'_> {
    Descriptor {
        media_type: b.media_type,
        digest: &b.digest,
        size: b.bytes.len(),
        platform: None,
        annotations: None,
    }
}

/// The manifest of a one-layer image.
pub fn manifest(config: &Blob, layer: &Blob) -> String {
    let m = Manifest {
        schema_version: 2,
        media_type: MEDIA_TYPE,
        config: descriptor(config),
        layers: [descriptor(layer)],
    };
    // Strings and numbers only: serializing them cannot fail.
    serde_json::to_string(&m).unwrap_or_default()
}

/// index.json for an OCI layout holding `manifest` as `name` (e.g. iogauge:0.1.0):
/// `org.opencontainers.image.ref.name` is its tag, as the spec has it, and
/// `io.containerd.image.name` the full name, which `ctr images import` (and so
/// `kind load image-archive`) gives the image.
pub fn index(manifest: &Blob, architecture: &str, name: &str) -> String {
    let entry = Descriptor {
        platform: Some(Platform {
            architecture,
            os: "linux",
        }),
        annotations: Some(Annotations {
            containerd_name: full_name(name),
            ref_name: tag_of(name),
        }),
        ..descriptor(manifest)
    };
    let i = Index {
        schema_version: 2,
        media_type: INDEX_MEDIA_TYPE,
        manifests: [entry],
    };
    // Strings and numbers only: serializing them cannot fail.
    serde_json::to_string(&i).unwrap_or_default()
}

/// The tag of an image name (`latest` when it has none).
pub fn tag_of(name: &str) -> &str {
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.split_once(':') {
        Some((_, tag)) => tag,
        None => "latest",
    }
}

/// An image name as containerd stores it: `iogauge:1` is `docker.io/library/iogauge:1`, a
/// name whose first part has no dot or port (and is not localhost) is on docker.io, and the
/// tag is `latest` when none is given.
pub fn full_name(name: &str) -> String {
    let (first, rest) = match name.split_once('/') {
        Some((f, r)) if f.contains('.') || f.contains(':') || f == "localhost" => {
            (f.to_string(), r.to_string())
        }
        Some(_) => ("docker.io".to_string(), name.to_string()),
        None => ("docker.io".to_string(), format!("library/{name}")),
    };
    let last = rest.rsplit('/').next().unwrap_or(&rest);
    let tag = if last.contains(':') { "" } else { ":latest" };
    format!("{first}/{rest}{tag}")
}

/// What is wrong with an image name for `--name`, if anything: a repository of lower-case
/// letters, digits and separators, then a tag of up to 128 word characters, dots and dashes.
pub fn validate_name(name: &str) -> Result<(), String> {
    let bad = |why: &str| {
        Err(format!(
            "'{name}' is not an image name ({why}); expected e.g. iogauge:0.1.0 or \
             registry.example.com/team/iogauge:0.1.0"
        ))
    };
    if name.is_empty() || name.len() > 255 {
        return bad("empty or over 255 characters");
    }
    if name.contains('@') {
        return bad("a digest is set by the image itself; give a tag");
    }
    let tag = tag_of(name);
    let tag_ok = !tag.is_empty()
        && tag.len() <= 128
        && !tag.starts_with(['.', '-'])
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !tag_ok {
        return bad("a bad tag");
    }
    let full = full_name(name);
    let repo = full
        .split_once('/')
        .map(|(_, r)| r)
        .unwrap_or("")
        .rsplit_once(':')
        .map(|(r, _)| r)
        .unwrap_or("");
    let repo_ok = !repo.is_empty()
        && repo.split('/').all(|p| {
            !p.is_empty()
                && p.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
                })
                && p.starts_with(|c: char| c.is_ascii_alphanumeric())
        });
    if !repo_ok {
        return bad("the repository must be lower-case letters, digits, '.', '_' and '-'");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_completed_as_containerd_does() {
        assert_eq!(full_name("iogauge:1"), "docker.io/library/iogauge:1");
        assert_eq!(full_name("me/iogauge"), "docker.io/me/iogauge:latest");
        assert_eq!(
            full_name("127.0.0.1:5000/iogauge:test"),
            "127.0.0.1:5000/iogauge:test"
        );
        assert_eq!(full_name("localhost/x:y"), "localhost/x:y");
        assert_eq!(tag_of("127.0.0.1:5000/iogauge"), "latest");
        assert_eq!(tag_of("127.0.0.1:5000/iogauge:t1"), "t1");
    }

    #[test]
    fn bad_names_are_refused() {
        assert!(validate_name("iogauge:0.1.0").is_ok());
        assert!(validate_name("reg.example.com:5000/team/iogauge:v1").is_ok());
        assert!(validate_name("IOGAUGE:1").is_err());
        assert!(validate_name("iogauge:").is_err());
        assert!(validate_name("iogauge@sha256:00").is_err());
        assert!(validate_name("").is_err());
    }

    #[test]
    fn the_index_names_the_image() {
        let m = Blob::new(MEDIA_TYPE, b"{}".to_vec());
        let v: serde_json::Value =
            serde_json::from_str(&index(&m, "amd64", "iogauge:0.1.0")).unwrap();
        let a = &v["manifests"][0]["annotations"];
        assert_eq!(a["org.opencontainers.image.ref.name"], "0.1.0");
        assert_eq!(
            a["io.containerd.image.name"],
            "docker.io/library/iogauge:0.1.0"
        );
        assert_eq!(v["manifests"][0]["size"], 2);
    }

    /// The bytes written are the ones iogauge has always written (key order included): an
    /// image's digests depend on them, so a rebuild of the same binary is the same image.
    #[test]
    fn the_json_is_the_same_bytes_as_ever() {
        let meta = super::super::Meta {
            version: "1.2.3".into(),
            revision: "abc".into(),
            source: "https://example.com/iogauge \"q\"".into(),
            architecture: "arm64".into(),
        };
        let c = super::super::config::config(&meta, "sha256:00");
        assert_eq!(
            c,
            r#"{"architecture":"arm64","os":"linux","config":{"User":"65532:65532","Entrypoint":["/iogauge"],"Labels":{"org.opencontainers.image.title":"iogauge","org.opencontainers.image.description":"Storage benchmark with verdicts: runs 'iogauge check' profiles (etcd, sync IOPS, GitLab, small files) on the volume mounted at /data","org.opencontainers.image.licenses":"Apache-2.0","org.opencontainers.image.source":"https://example.com/iogauge \"q\"","org.opencontainers.image.revision":"abc","org.opencontainers.image.version":"1.2.3"}},"rootfs":{"type":"layers","diff_ids":["sha256:00"]}}"#
        );
        let config = Blob::new(super::super::config::MEDIA_TYPE, c.into_bytes());
        let layer = Blob::new(
            "application/vnd.oci.image.layer.v1.tar+gzip",
            b"layer".to_vec(),
        );
        let m = manifest(&config, &layer);
        assert_eq!(
            m,
            r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:820dbaf345871ccb9dd6520c4ae40fe38d12d1aa06dd4d84ce35f02cb809b2a2","size":579},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:dac1d7cfa95021764849fd102524e141488c5e3a90f861dbb5a12d9ac8584f85","size":5}]}"#
        );
        let m = Blob::new(MEDIA_TYPE, m.into_bytes());
        assert_eq!(
            index(&m, "arm64", "reg.example.com:5000/team/iogauge:v1"),
            r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:924d189af5fee2f337dd5d953a770cd1f1052c36823b393b441f0e6631f9fa66","size":399,"platform":{"architecture":"arm64","os":"linux"},"annotations":{"io.containerd.image.name":"reg.example.com:5000/team/iogauge:v1","org.opencontainers.image.ref.name":"v1"}}]}"#
        );
    }
}
