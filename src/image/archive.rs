//! The OCI image layout (OCI image spec, image-layout.md) as one tar: `oci-layout`,
//! `index.json` and `blobs/sha256/<hex>`, in sorted order, root-owned, with fixed mtimes.
//! `skopeo copy oci-archive:FILE …`, `ctr images import FILE` and `kind load image-archive FILE`
//! read it.

use super::layer::header;
use super::Image;

/// The `oci-layout` file's content.
const OCI_LAYOUT: &str = r#"{"imageLayoutVersion":"1.0.0"}"#;

/// The archive of `image` named `name` (e.g. iogauge:0.1.0).
pub fn archive(image: &Image, name: &str) -> std::io::Result<Vec<u8>> {
    let index = super::manifest::index(&image.manifest, &image.architecture, name);
    let mut files: Vec<(String, &[u8])> = [&image.config, &image.layer, &image.manifest]
        .iter()
        .map(|b| {
            let hex = b.digest.trim_start_matches("sha256:");
            (format!("blobs/sha256/{hex}"), &b.bytes[..])
        })
        .collect();
    files.push(("index.json".to_string(), index.as_bytes()));
    files.push(("oci-layout".to_string(), OCI_LAYOUT.as_bytes()));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let size = files.iter().map(|f| f.1.len() + 1024).sum::<usize>() + 4096;
    let mut tar = tar::Builder::new(Vec::with_capacity(size));
    for dir in ["blobs/", "blobs/sha256/"] {
        tar.append(&header(dir, 0, 0o755, true)?, std::io::empty())?;
    }
    for (path, bytes) in files {
        tar.append(&header(&path, bytes.len() as u64, 0o644, false)?, bytes)?;
    }
    tar.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::{build, Meta};

    #[test]
    fn the_layout_has_its_files_in_order() {
        let meta = Meta {
            version: "1".into(),
            revision: "r".into(),
            source: "unknown".into(),
            architecture: "amd64".into(),
        };
        let image = build(b"binary", &meta).unwrap();
        let a = archive(&image, "iogauge:1").unwrap();
        assert_eq!(a, archive(&image, "iogauge:1").unwrap());
        let mut t = tar::Archive::new(&a[..]);
        let names: Vec<String> = t
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(names[0], "blobs/");
        assert_eq!(names[1], "blobs/sha256/");
        assert_eq!(names.len(), 7);
        assert_eq!(&names[5..], ["index.json", "oci-layout"]);
        let mut sorted = names[2..5].to_vec();
        sorted.sort();
        assert_eq!(sorted, names[2..5]);
    }
}
