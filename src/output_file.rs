//! Files the user names for iogauge to write (`--report`, `report -o`, `fio --output`): written
//! under a temporary name in the destination's directory, flushed to disk, and renamed over the
//! destination only when complete, so that a full disk or a crash never leaves a truncated page,
//! and a symbolic link (or a hard link) planted at the destination is never written through.
//!
//! The directory is opened once and everything after is relative to it (`openat`, `renameat`),
//! so a directory swapped mid-way cannot redirect the write either. Only the last component of
//! the path is protected: directories above it are followed as the user named them.

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file was not written (`app::error::Kind::of_output` says which is bad input).
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutputError {
    /// The destination is something iogauge will not write to (bad input: exit 2).
    #[error("{0}")]
    Refused(String),
    /// Writing failed (exit 1); the destination is as it was.
    #[error("{0}")]
    Failed(String),
}

/// What is at a destination now, checked without following a symbolic link.
pub(crate) fn check_destination(path: &Path) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => kind_allowed(path, &m),
        Err(_) => Ok(()),
    }
}

fn kind_allowed(path: &Path, m: &std::fs::Metadata) -> Result<(), OutputError> {
    let t = m.file_type();
    if t.is_symlink() {
        let to = std::fs::read_link(path)
            .map(|t| format!(" (to {})", t.display()))
            .unwrap_or_default();
        return Err(OutputError::Refused(format!(
            "'{}' is a symbolic link{to}; iogauge does not write through links: name the file \
             itself, or remove the link",
            path.display()
        )));
    }
    if t.is_dir() {
        return Err(OutputError::Refused(format!(
            "'{}' is a directory; give a file name in it",
            path.display()
        )));
    }
    if t.is_block_device() || t.is_socket() {
        return Err(OutputError::Refused(format!(
            "'{}' is a {}, not a regular file; name a file",
            path.display(),
            if t.is_socket() {
                "socket"
            } else {
                "block device"
            }
        )));
    }
    Ok(())
}

/// Writes `bytes` to `path` as described in the module comment. An existing regular file is
/// replaced (its permission bits are kept); a character device or FIFO (`/dev/null`, a named
/// pipe someone reads) is written in place, as it cannot be renamed over; a symbolic link,
/// directory, block device or socket is refused.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let failed = |what: &str, e: std::io::Error| {
        OutputError::Failed(format!(
            "cannot write {}: {what}{}",
            path.display(),
            words(&e)
        ))
    };
    let (dir_path, name) = split(path)?;
    let dir = open_dir(&dir_path).map_err(|e| {
        failed(
            &format!("cannot open its directory {}: ", dir_path.display()),
            e,
        )
    })?;
    let old = stat_at(&dir, &name);
    let mode = match &old {
        Ok(m) => {
            kind_allowed(path, m)?;
            let t = m.file_type();
            if t.is_char_device() || t.is_fifo() {
                return write_in_place(&dir, &name, bytes).map_err(|e| failed("", e));
            }
            // Not the set-id bits: a report never needs them.
            Some(m.mode() & 0o777)
        }
        Err(_) => None,
    };
    let (tmp_name, mut tmp) = create_temporary(&dir).map_err(|e| {
        failed(
            &format!("cannot create a temporary file in {}: ", dir_path.display()),
            e,
        )
    })?;
    let written = (|| {
        if let Some(mode) = mode {
            // fchmod: the mode as it was, whatever the umask.
            tmp.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
        }
        tmp.write_all(bytes)?;
        // Delayed allocation reports a full disk only here.
        tmp.sync_all()?;
        rename_at(&dir, &tmp_name, &name)?;
        Ok(())
    })();
    if let Err(e) = written {
        // SAFETY: unlinkat with a valid directory descriptor and a NUL-terminated name.
        unsafe { libc::unlinkat(dir.as_raw_fd(), tmp_name.as_ptr(), 0) };
        return Err(failed("", e));
    }
    // The new name is durable once the directory is; a filesystem that cannot sync a
    // directory (EINVAL) has nothing more to do.
    let _ = File::from(dir).sync_all();
    Ok(())
}

/// The destination's directory (`.` for a bare name) and its last component.
fn split(path: &Path) -> Result<(PathBuf, CString), OutputError> {
    let name = path.file_name().ok_or_else(|| {
        OutputError::Refused(format!(
            "'{}' does not name a file; give a file name",
            path.display()
        ))
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, c_name(name)?))
}

fn c_name(name: &OsStr) -> Result<CString, OutputError> {
    CString::new(name.as_bytes()).map_err(|_| {
        OutputError::Refused(format!(
            "'{}' contains a NUL byte; name a file",
            name.to_string_lossy()
        ))
    })
}

fn open_dir(dir: &Path) -> std::io::Result<OwnedFd> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(dir)?;
    Ok(OwnedFd::from(f))
}

fn stat_at(dir: &OwnedFd, name: &CStr) -> std::io::Result<std::fs::Metadata> {
    // O_PATH | O_NOFOLLOW opens the link itself (or any file) without reading it or blocking on
    // a FIFO; its metadata is then that of the name as it is now.
    // SAFETY: openat with a valid directory descriptor and a NUL-terminated name.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nothing else.
    let f = unsafe { File::from_raw_fd(fd) };
    f.metadata()
}

/// A character device or FIFO, opened without following a link and without blocking when no
/// one reads the FIFO (ENXIO then).
fn write_in_place(dir: &OwnedFd, name: &CStr, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: openat with a valid directory descriptor and a NUL-terminated name.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nothing else.
    let mut f = unsafe { File::from_raw_fd(fd) };
    let m = f.metadata()?;
    if !(m.file_type().is_char_device() || m.file_type().is_fifo()) {
        // Swapped since it was looked at: write nothing.
        return Err(std::io::Error::from_raw_os_error(libc::EEXIST));
    }
    clear_nonblock(&f)?;
    f.write_all(bytes)
}

fn clear_nonblock(f: &File) -> std::io::Result<()> {
    // SAFETY: fcntl on an open descriptor.
    let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fcntl on an open descriptor.
    let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The system's words for an error, without Rust's "(os error N)".
fn words(e: &std::io::Error) -> String {
    e.raw_os_error()
        .map_or_else(|| e.to_string(), crate::report::units::strerror)
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A new file `.iogauge-out.PID.N.tmp` in `dir`, created exclusively (never an existing file or
/// link), mode 0666 less the umask as any new file.
fn create_temporary(dir: &OwnedFd) -> std::io::Result<(CString, File)> {
    loop {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let name = CString::new(format!(".iogauge-out.{}.{n}.tmp", std::process::id()))
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: openat with a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd >= 0 {
            // SAFETY: fd was just opened and is owned by nothing else.
            return Ok((name, unsafe { File::from_raw_fd(fd) }));
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) || n > 1000 {
            return Err(e);
        }
    }
}

fn rename_at(dir: &OwnedFd, from: &CStr, to: &CStr) -> std::io::Result<()> {
    // SAFETY: renameat with a valid directory descriptor and NUL-terminated names.
    let r = unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `fio --output` under `--status-interval`: the file is appended to during the run, so it is
/// created empty (by [`write_file`]) and then each append opens it again without following a
/// link and only while it is still a regular file with one name.
pub(crate) fn append(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let failed = |e: std::io::Error| {
        OutputError::Failed(format!("cannot write {}: {}", path.display(), words(&e)))
    };
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => OutputError::Refused(format!(
                "'{}' became a symbolic link during the run; nothing more was written to it",
                path.display()
            )),
            _ => failed(e),
        })?;
    let m = f.metadata().map_err(failed)?;
    if !m.file_type().is_file() || m.nlink() != 1 {
        return Err(OutputError::Refused(format!(
            "'{}' was replaced during the run (it is no longer the file iogauge created); \
             nothing more was written to it",
            path.display()
        )));
    }
    f.write_all(bytes).map_err(failed)?;
    f.sync_all().map_err(failed)
}
