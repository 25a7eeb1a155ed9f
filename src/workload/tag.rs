//! The `user.iogauge` extended attribute on every file iogauge lays out (the creating
//! process's id), so that a killed run's leftovers are recognised as such later.

use std::ffi::CString;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Extended attribute set on every file iogauge lays out, so that a killed run's leftovers are
/// recognised as such later (the value is the creating process's id).
const XATTR: &std::ffi::CStr = c"user.iogauge";

/// Marks a file iogauge just created. Best effort: a filesystem without user xattrs still gets
/// the file; only the later message is less specific.
pub(crate) fn tag_created(f: &File) {
    let pid = std::process::id().to_string();
    // SAFETY: plain syscall on an open fd with a valid name and buffer.
    unsafe {
        libc::fsetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr(),
            pid.as_ptr().cast(),
            pid.len(),
            0,
        );
    }
}

/// The pid in `path`'s iogauge tag, if it has one (not through a symlink). Only words in a
/// message depend on it: an xattr anyone could have set proves nothing.
pub(crate) fn tag_pid(path: &Path) -> Option<u32> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let mut buf = [0u8; 16];
    // SAFETY: valid C strings and a buffer of the length given.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            XATTR.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).ok()?;
    std::str::from_utf8(&buf[..n]).ok()?.parse().ok()
}

/// A file kept on purpose (`--keep-files`, `unlink=0`) is the user's now, not a leftover
/// (the name itself, never a symlink's target).
pub(crate) fn untag(path: &Path) {
    if let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) {
        // SAFETY: valid C strings; failure only means there was no tag.
        unsafe {
            libc::lremovexattr(c.as_ptr(), XATTR.as_ptr());
        }
    }
}

/// Whether an earlier iogauge run created `path` (its tag, or the `iogauge-` prefix that
/// `check`'s and the small-files test's names carry).
pub(crate) fn created_by_iogauge(path: &Path) -> bool {
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("iogauge-"))
    {
        return true;
    }
    tag_pid(path).is_some()
}
