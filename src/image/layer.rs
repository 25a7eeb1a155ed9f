//! The image's one layer: a tar holding the binary as /iogauge (mode 0755, owner 0:0, so the
//! pod's user can run it but not replace it), gzip-compressed, both reproducibly.

use flate2::{Compression, GzBuilder};
use std::io::Write;

/// The layer's media type (OCI image spec, layer.md).
pub const MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// The mtime of every entry: the epoch, or SOURCE_DATE_EPOCH's (reproducible-builds.org) when
/// it is set to a number.
pub fn mtime() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// A layer: its gzip bytes (the blob) and the digest of the uncompressed tar (the config's
/// `rootfs.diff_ids`).
pub struct Layer {
    pub gzip: Vec<u8>,
    pub diff_id: String,
}

/// A tar header for a root-owned entry with fixed times and no user or group names.
pub(crate) fn header(path: &str, size: u64, mode: u32, dir: bool) -> std::io::Result<tar::Header> {
    let mut h = tar::Header::new_ustar();
    h.set_path(path)?;
    h.set_size(size);
    h.set_mode(mode);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(mtime());
    h.set_entry_type(if dir {
        tar::EntryType::Directory
    } else {
        tar::EntryType::Regular
    });
    h.set_cksum();
    Ok(h)
}

/// The layer of `binary`.
pub fn layer(binary: &[u8]) -> std::io::Result<Layer> {
    let mut tar = tar::Builder::new(Vec::with_capacity(binary.len() + 2048));
    let h = header(super::BINARY, binary.len() as u64, 0o755, false)?;
    tar.append(&h, binary)?;
    let tar = tar.into_inner()?;
    let diff_id = super::digest(&tar);
    // No name and mtime 0 in the gzip header: the same tar gives the same blob.
    let mut gz = GzBuilder::new()
        .mtime(0)
        .write(Vec::with_capacity(tar.len() / 2), Compression::default());
    gz.write_all(&tar)?;
    Ok(Layer {
        gzip: gz.finish()?,
        diff_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_binary_is_root_owned_0755_with_a_fixed_mtime() {
        let l = layer(b"hello").unwrap();
        let mut tar = Vec::new();
        flate2::read::GzDecoder::new(&l.gzip[..])
            .read_to_end(&mut tar)
            .unwrap();
        assert_eq!(super::super::digest(&tar), l.diff_id);
        let mut a = tar::Archive::new(&tar[..]);
        let entries: Vec<_> = a.entries().unwrap().map(|e| e.unwrap()).collect();
        assert_eq!(entries.len(), 1);
        let h = entries[0].header();
        assert_eq!(h.path().unwrap().to_str(), Some("iogauge"));
        assert_eq!(h.mode().unwrap(), 0o755);
        assert_eq!((h.uid().unwrap(), h.gid().unwrap()), (0, 0));
        assert_eq!(h.size().unwrap(), 5);
        // The gzip header's MTIME field (bytes 4..8) is zero.
        assert_eq!(&l.gzip[4..8], &[0, 0, 0, 0]);
    }
}
