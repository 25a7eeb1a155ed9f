//! The image manifest and the OCI layout's index.json (OCI image spec, manifest.md and
//! image-index.md), with the name the image is known by in the annotations.

use super::Blob;
use serde_json::json;

/// The manifest's media type.
pub const MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The index's media type.
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

fn descriptor(b: &Blob) -> serde_json::Value {
    json!({"mediaType": b.media_type, "digest": b.digest, "size": b.bytes.len()})
}

/// The manifest of a one-layer image.
pub fn manifest(config: &Blob, layer: &Blob) -> String {
    json!({
        "schemaVersion": 2,
        "mediaType": MEDIA_TYPE,
        "config": descriptor(config),
        "layers": [descriptor(layer)],
    })
    .to_string()
}

/// index.json for an OCI layout holding `manifest` as `name` (e.g. iogauge:0.1.0):
/// `org.opencontainers.image.ref.name` is its tag, as the spec has it, and
/// `io.containerd.image.name` the full name, which `ctr images import` (and so
/// `kind load image-archive`) gives the image.
pub fn index(manifest: &Blob, architecture: &str, name: &str) -> String {
    let mut d = descriptor(manifest);
    d["platform"] = json!({"architecture": architecture, "os": "linux"});
    d["annotations"] = json!({
        "io.containerd.image.name": full_name(name),
        "org.opencontainers.image.ref.name": tag_of(name),
    });
    json!({
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [d],
    })
    .to_string()
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
}
