//! Free space for the new files, per filesystem (pseudo filesystems refused first), the
//! filesystem's whole size (fill_device's region), and the directory a planned file lives in.

use super::error::io_err;
use super::LayoutError;
use std::ffi::CString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Check that every filesystem has room for the new files: `need` is (directory, bytes) pairs.
pub(crate) fn check_free_space(need: &[(PathBuf, u64)]) -> Result<(), LayoutError> {
    // Group by filesystem (st_dev) so two jobs in one directory add up.
    let mut by_dev: Vec<(u64, PathBuf, u64)> = Vec::new();
    for (dir, bytes) in need {
        let md = std::fs::metadata(dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LayoutError::MissingDir { dir: dir.clone() },
            _ => io_err("cannot stat directory", dir)(e),
        })?;
        // Before free space: /proc reports none, and "no space" would send the user astray.
        if let Some(fs) = crate::workload::fs::pseudo(dir) {
            return Err(LayoutError::PseudoFilesystem {
                dir: dir.clone(),
                fs,
            });
        }
        match by_dev.iter_mut().find(|(d, _, _)| *d == md.dev()) {
            Some(e) => e.2 += bytes,
            None => by_dev.push((md.dev(), dir.clone(), *bytes)),
        }
    }
    for (_, dir, bytes) in by_dev {
        let avail = free_bytes(&dir)?;
        if bytes > avail {
            return Err(LayoutError::NoSpace {
                dir,
                need: bytes,
                avail,
            });
        }
    }
    Ok(())
}

pub(crate) fn free_bytes(dir: &Path) -> Result<u64, LayoutError> {
    statvfs(dir).map(|s| blocks_bytes(s.f_bavail, s.f_frsize))
}

// The field types differ between targets (u32 on some 32-bit ones).
#[allow(clippy::unnecessary_cast)]
fn blocks_bytes(blocks: libc::fsblkcnt_t, size: libc::c_ulong) -> u64 {
    blocks as u64 * size as u64
}

/// The whole size of the filesystem holding `dir`: more than any file in it can hold.
pub(super) fn fs_bytes(dir: &Path) -> Result<u64, LayoutError> {
    statvfs(dir).map(|s| blocks_bytes(s.f_blocks, s.f_frsize))
}

fn statvfs(dir: &Path) -> Result<libc::statvfs, LayoutError> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|_| LayoutError::Io {
        op: "invalid path",
        path: dir.to_path_buf(),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    // SAFETY: statvfs is plain data; all zeroes is a valid value.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string, s a valid out pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return Err(io_err("statvfs", dir)(std::io::Error::last_os_error()));
    }
    Ok(s)
}

/// Directory in which a planned file lives (for the free-space check).
pub(crate) fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_filesystems_are_refused_before_free_space() {
        let e = check_free_space(&[(PathBuf::from("/proc"), 1 << 20)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "'/proc' is on proc, a pseudo filesystem the kernel generates, not storage; choose a --directory on a real filesystem"
        );
    }

    #[test]
    fn free_space_check_names_the_numbers() {
        let d = tempfile::tempdir().unwrap();
        let e = check_free_space(&[(d.path().to_path_buf(), u64::MAX / 2)]).unwrap_err();
        assert!(e.to_string().starts_with("not enough free space in"), "{e}");
        assert!(check_free_space(&[(d.path().to_path_buf(), 4096)]).is_ok());
    }
}
