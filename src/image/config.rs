//! The image config (OCI image spec, config.md): Containerfile's USER, ENTRYPOINT and labels,
//! the platform, the layer's diff_id. No `created` date and no history, so that it depends on
//! the binary alone.

use super::Meta;
use serde::Serialize;

/// The config's media type.
pub const MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// The OCI labels (Containerfile's LABEL lines), in the order they are written.
#[derive(Serialize)]
pub struct Labels<'a> {
    #[serde(rename = "org.opencontainers.image.title")]
    title: &'static str,
    #[serde(rename = "org.opencontainers.image.description")]
    description: &'static str,
    #[serde(rename = "org.opencontainers.image.licenses")]
    licenses: &'static str,
    #[serde(rename = "org.opencontainers.image.source")]
    source: &'a str,
    #[serde(rename = "org.opencontainers.image.revision")]
    revision: &'a str,
    #[serde(rename = "org.opencontainers.image.version")]
    version: &'a str,
}

/// The config (config.md); its fields in this order, which the image's digest depends on.
#[derive(Serialize)]
struct Config<'a> {
    architecture: &'a str,
    os: &'static str,
    config: Execution<'a>,
    rootfs: RootFs<'a>,
}

/// config.md's `config`: how the container runs.
#[derive(Serialize)]
struct Execution<'a> {
    #[serde(rename = "User")]
    user: &'static str,
    #[serde(rename = "Entrypoint")]
    entrypoint: [String; 1],
    #[serde(rename = "Labels")]
    labels: Labels<'a>,
}

/// config.md's `rootfs`: the layers' uncompressed digests.
#[derive(Serialize)]
struct RootFs<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    diff_ids: [&'a str; 1],
}

/// The OCI labels (Containerfile's LABEL lines).
pub fn labels(meta: &Meta) -> Labels<'_> {
    Labels {
        title: "iogauge",
        description: "Storage benchmark with verdicts: runs 'iogauge check' profiles (etcd, sync IOPS, GitLab, small files) on the volume mounted at /data",
        licenses: "Apache-2.0",
        source: &meta.source,
        revision: &meta.revision,
        version: &meta.version,
    }
}

/// The config JSON for a one-layer image whose uncompressed layer is `diff_id`.
pub fn config(meta: &Meta, diff_id: &str) -> String {
    let c = Config {
        architecture: &meta.architecture,
        os: "linux",
        config: Execution {
            user: super::USER,
            entrypoint: [format!("/{}", super::BINARY)],
            labels: labels(meta),
        },
        rootfs: RootFs {
            kind: "layers",
            diff_ids: [diff_id],
        },
    };
    // Strings and arrays only: serializing them cannot fail.
    serde_json::to_string(&c).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_config_runs_iogauge_as_65532() {
        let meta = Meta {
            version: "1.2.3".into(),
            revision: "abc".into(),
            source: "unknown".into(),
            architecture: "amd64".into(),
        };
        let v: serde_json::Value = serde_json::from_str(&config(&meta, "sha256:00")).unwrap();
        assert_eq!(v["config"]["User"], "65532:65532");
        assert_eq!(v["config"]["Entrypoint"], json!(["/iogauge"]));
        assert_eq!(v["architecture"], "amd64");
        assert_eq!(v["os"], "linux");
        assert_eq!(v["rootfs"]["diff_ids"], json!(["sha256:00"]));
        assert_eq!(
            v["config"]["Labels"]["org.opencontainers.image.version"],
            "1.2.3"
        );
        assert_eq!(
            v["config"]["Labels"]["org.opencontainers.image.revision"],
            "abc"
        );
        assert!(v.get("created").is_none());
    }
}
