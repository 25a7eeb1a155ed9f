//! The image config (OCI image spec, config.md): Containerfile's USER, ENTRYPOINT and labels,
//! the platform, the layer's diff_id. No `created` date and no history, so that it depends on
//! the binary alone.

use super::Meta;
use serde_json::json;

/// The config's media type.
pub const MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// The OCI labels (Containerfile's LABEL lines).
pub fn labels(meta: &Meta) -> serde_json::Value {
    json!({
        "org.opencontainers.image.title": "iogauge",
        "org.opencontainers.image.description": "Storage benchmark with verdicts: runs 'iogauge check' profiles (etcd, sync IOPS, GitLab, small files) on the volume mounted at /data",
        "org.opencontainers.image.licenses": "Apache-2.0",
        "org.opencontainers.image.source": meta.source,
        "org.opencontainers.image.revision": meta.revision,
        "org.opencontainers.image.version": meta.version,
    })
}

/// The config JSON for a one-layer image whose uncompressed layer is `diff_id`.
pub fn config(meta: &Meta, diff_id: &str) -> String {
    let c = json!({
        "architecture": meta.architecture,
        "os": "linux",
        "config": {
            "User": super::USER,
            "Entrypoint": [format!("/{}", super::BINARY)],
            "Labels": labels(meta),
        },
        "rootfs": {
            "type": "layers",
            "diff_ids": [diff_id],
        },
    });
    c.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
