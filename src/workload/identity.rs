//! Files known by identity, not by name. iogauge runs as root in directories other users can
//! write, where a name can be swapped for a symlink or another file between two system calls.
//! So every file iogauge creates is created relative to a handle on its directory (`openat`
//! with `O_EXCL|O_NOFOLLOW`), its identity (device, inode, owner, birth time) is taken from the
//! open descriptor, and every later open or unlink of that name happens relative to the same
//! directory handle and only after the name is seen (without following symlinks) to still be
//! that identity. docs/SECURITY.md says what this guarantees and what it cannot.

use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What identifies one file for as long as it exists: a new file at the same name (even one
/// reusing the inode number) differs in birth time where the filesystem records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    pub dev: (u32, u32),
    pub ino: u64,
    pub uid: u32,
    /// Birth time (seconds, nanoseconds) when the filesystem reports one.
    pub btime: Option<(i64, u32)>,
    pub is_dir: bool,
}

/// A file's identity and the things about it that can change while it is iogauge's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    pub id: FileId,
    /// Regular file or directory (anything else is never iogauge's).
    pub plain: bool,
    pub size: u64,
    /// Group- or other-writable.
    pub shared_write: bool,
    pub links: u32,
}

fn seen(stx: &rustix::fs::Statx) -> Seen {
    let kind = u32::from(stx.stx_mode) & libc::S_IFMT;
    let btime = (stx.stx_mask & libc::STATX_BTIME != 0)
        .then_some((stx.stx_btime.tv_sec, stx.stx_btime.tv_nsec));
    Seen {
        id: FileId {
            dev: (stx.stx_dev_major, stx.stx_dev_minor),
            ino: stx.stx_ino,
            uid: stx.stx_uid,
            btime,
            is_dir: kind == libc::S_IFDIR,
        },
        plain: kind == libc::S_IFREG || kind == libc::S_IFDIR,
        size: stx.stx_size,
        shared_write: u32::from(stx.stx_mode) & 0o022 != 0,
        links: stx.stx_nlink,
    }
}

fn mask() -> StatxFlags {
    StatxFlags::TYPE
        | StatxFlags::MODE
        | StatxFlags::NLINK
        | StatxFlags::UID
        | StatxFlags::INO
        | StatxFlags::SIZE
        | StatxFlags::BTIME
}

/// What `name` in `dir` is now, without following a symlink; None when nothing is there.
pub(crate) fn seen_at(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Option<Seen>> {
    match rustix::fs::statx(dir, name, AtFlags::SYMLINK_NOFOLLOW, mask()) {
        Ok(stx) => Ok(Some(seen(&stx))),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// What an open descriptor is.
pub(crate) fn seen_fd(fd: BorrowedFd<'_>) -> io::Result<Seen> {
    Ok(seen(&rustix::fs::statx(
        fd,
        c"",
        AtFlags::EMPTY_PATH,
        mask(),
    )?))
}

/// The effective user: whose files and markers count as iogauge's own.
pub(crate) fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Why a name no longer is the file iogauge made, in words; None when it still is.
pub(crate) fn differs(now: &FileId, made: &FileId) -> Option<String> {
    if now.dev != made.dev || now.ino != made.ino || now.is_dir != made.is_dir {
        return Some(format!(
            "it is another file now (device {}:{} inode {}, iogauge made device {}:{} inode {})",
            now.dev.0, now.dev.1, now.ino, made.dev.0, made.dev.1, made.ino
        ));
    }
    if now.uid != made.uid {
        return Some(format!(
            "its owner changed (uid {}, iogauge made it as uid {})",
            now.uid, made.uid
        ));
    }
    if let (Some(a), Some(b)) = (now.btime, made.btime) {
        if a != b {
            return Some(
                "it is another file now (the same inode number, born at another time)".into(),
            );
        }
    }
    None
}

/// A directory's name split off a path: the directory (`.` for a bare name) and the last part.
/// None for paths without a last part (`/`, `..`).
pub(crate) fn split(path: &Path) -> Option<(PathBuf, OsString)> {
    let name = path.file_name()?.to_os_string();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some((dir, name))
}

/// A handle on a directory, for everything done in it afterwards.
pub(crate) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// A new regular file `name` in `dir`, read-write; fails if anything (a symlink too) is there.
pub(crate) fn create_at(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<File> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )?;
    Ok(File::from(fd))
}

/// A new directory `name` in `dir`, with its identity.
pub(crate) fn mkdir_at(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<Seen> {
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(mode))?;
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    seen_fd(fd.as_fd())
}

/// Opens `name` in `dir` with `flags` (libc `O_*`, access mode included) only if it is still
/// the file `made`: never through a symlink, and never blocking on a FIFO put in its place.
pub(crate) fn open_verified(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    flags: i32,
    made: &FileId,
) -> Result<File, Reopen> {
    let f = open_nofollow(dir, name, flags)?;
    verify(&f, made)?;
    // Back to blocking I/O: O_NONBLOCK was only for the open (io_uring would return EAGAIN).
    let fl = rustix::fs::fcntl_getfl(&f).map_err(|e| Reopen::Io(e.into()))?;
    rustix::fs::fcntl_setfl(&f, fl.difference(OFlags::NONBLOCK))
        .map_err(|e| Reopen::Io(e.into()))?;
    Ok(f)
}

/// The first half of `open_verified`, for a caller that times the open itself: `name` opened
/// with `O_NOFOLLOW|O_NONBLOCK` (left set), to be checked with `verify` before any use.
pub(crate) fn open_nofollow(dir: BorrowedFd<'_>, name: &OsStr, flags: i32) -> Result<File, Reopen> {
    let flags = OFlags::from_bits_retain(flags as u32)
        | OFlags::NOFOLLOW
        | OFlags::NONBLOCK
        | OFlags::NOCTTY
        | OFlags::CLOEXEC;
    match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(File::from(fd)),
        // A symlink where the file was (O_NOFOLLOW), or a socket.
        Err(rustix::io::Errno::LOOP) | Err(rustix::io::Errno::NXIO) => Err(Reopen::Replaced(
            "a symlink or special file is there now".into(),
        )),
        Err(rustix::io::Errno::NOENT) => {
            Err(Reopen::Replaced("it is gone (renamed or removed)".into()))
        }
        Err(e) => Err(Reopen::Io(e.into())),
    }
}

/// The second half: whether an opened file is `made`.
pub(crate) fn verify(f: &File, made: &FileId) -> Result<(), Reopen> {
    let now = seen_fd(f.as_fd()).map_err(Reopen::Io)?;
    match differs(&now.id, made) {
        Some(why) => Err(Reopen::Replaced(why)),
        None => Ok(()),
    }
}

/// Why a reopen of a created file failed.
#[derive(Debug)]
pub(crate) enum Reopen {
    /// The name is no longer the file iogauge made: nothing was opened.
    Replaced(String),
    Io(io::Error),
}

/// Removes `name` from `dir` if it is still `made` (a directory with rmdir: only when empty).
/// Ok(false) when nothing is there; Err with the reason when it is something else.
pub(crate) fn remove_verified(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    made: &FileId,
) -> Result<bool, Remove> {
    let Some(now) = seen_at(dir, name).map_err(Remove::Io)? else {
        return Ok(false);
    };
    if let Some(why) = differs(&now.id, made) {
        return Err(Remove::NotOurs(why));
    }
    unlink(dir, name, made.is_dir).map_err(Remove::Io)?;
    Ok(true)
}

/// Why a removal was not done.
#[derive(Debug)]
pub(crate) enum Remove {
    /// The name is something iogauge did not make: left in place.
    NotOurs(String),
    Io(io::Error),
}

impl std::fmt::Display for Remove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Remove::NotOurs(why) => write!(f, "left in place: {why}"),
            Remove::Io(e) => e.fmt(f),
        }
    }
}

/// unlinkat (rmdir for a directory) of one name in `dir`.
pub(crate) fn unlink(dir: BorrowedFd<'_>, name: &OsStr, is_dir: bool) -> io::Result<()> {
    let flags = if is_dir {
        AtFlags::REMOVEDIR
    } else {
        AtFlags::empty()
    };
    Ok(rustix::fs::unlinkat(dir, name, flags)?)
}

/// The names in a directory (not `.` and `..`), read from its handle.
pub(crate) fn names(dir: BorrowedFd<'_>) -> io::Result<Vec<OsString>> {
    use std::os::unix::ffi::OsStrExt;
    let mut rd = rustix::fs::Dir::read_from(dir)?;
    let mut out = Vec::new();
    while let Some(e) = rd.read() {
        let e = e?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            out.push(OsStr::from_bytes(n).to_os_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_created_file_reopens_only_while_it_is_the_same_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = open_dir(d.path()).unwrap();
        let f = create_at(dir.as_fd(), OsStr::new("a"), 0o644).unwrap();
        let made = seen_fd(f.as_fd()).unwrap();
        assert!(made.plain && !made.id.is_dir);
        assert_eq!(made.id.ino, f.metadata().unwrap().ino());
        // A second create of the name fails: nothing is opened through what is there.
        assert!(create_at(dir.as_fd(), OsStr::new("a"), 0o644).is_err());
        open_verified(dir.as_fd(), OsStr::new("a"), libc::O_RDWR, &made.id).unwrap();

        // Renamed away and a symlink put in its place: refused, the target untouched.
        let target = d.path().join("target");
        std::fs::write(&target, b"precious").unwrap();
        std::fs::rename(d.path().join("a"), d.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&target, d.path().join("a")).unwrap();
        let e = open_verified(dir.as_fd(), OsStr::new("a"), libc::O_RDWR, &made.id);
        assert!(matches!(e, Err(Reopen::Replaced(_))), "{e:?}");
        assert!(matches!(
            remove_verified(dir.as_fd(), OsStr::new("a"), &made.id),
            Err(Remove::NotOurs(_))
        ));
        // Another regular file in its place: refused too.
        std::fs::remove_file(d.path().join("a")).unwrap();
        std::fs::write(d.path().join("a"), b"other").unwrap();
        let e = open_verified(dir.as_fd(), OsStr::new("a"), libc::O_RDONLY, &made.id);
        assert!(matches!(e, Err(Reopen::Replaced(_))), "{e:?}");
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
        // Back under its name, it is removed.
        std::fs::rename(d.path().join("moved"), d.path().join("a")).unwrap();
        assert!(remove_verified(dir.as_fd(), OsStr::new("a"), &made.id).unwrap());
        assert!(!remove_verified(dir.as_fd(), OsStr::new("a"), &made.id).unwrap());
    }

    #[test]
    fn a_fifo_in_place_of_a_file_does_not_block_the_reopen() {
        let d = tempfile::tempdir().unwrap();
        let dir = open_dir(d.path()).unwrap();
        let f = create_at(dir.as_fd(), OsStr::new("a"), 0o644).unwrap();
        let made = seen_fd(f.as_fd()).unwrap();
        std::fs::remove_file(d.path().join("a")).unwrap();
        let c = std::ffi::CString::new(d.path().join("a").into_os_string().into_encoded_bytes())
            .unwrap();
        // SAFETY: a valid C path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
        let e = open_verified(dir.as_fd(), OsStr::new("a"), libc::O_RDONLY, &made.id);
        assert!(matches!(e, Err(Reopen::Replaced(_))), "{e:?}");
    }
}
