//! fio's `unlink_each_loop`: before each loop after the first, the job's files are unlinked and
//! the loop's writes go to new, empty files of the same names (fio 3.33 unlinks them in
//! backend.c and its next open creates them; nothing is laid out again).
//!
//! The engines hold the files' descriptors, so a file is replaced under its descriptor: the
//! path is unlinked, a new file is created there with the same open flags and position, tagged
//! as iogauge's, and `dup2` puts it in place of the old one. Only synchronous engines use it
//! (nothing is in flight at that moment, and no engine keeps the old file registered or mapped).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, FromRawFd, RawFd};
use std::path::PathBuf;

/// The files of one job instance that `unlink_each_loop` replaces, by file number.
#[derive(Debug)]
pub(crate) struct Relinker {
    /// Path and the descriptor the engine uses, per file; None for a block device (fio only
    /// unlinks regular files).
    files: Vec<Option<(PathBuf, CString, RawFd)>>,
    /// The run's files: one it created is replaced relative to its directory's handle, and
    /// only while its name is still that file.
    created: super::cleanup::CreatedFiles,
}

impl Relinker {
    /// `files`: each file's path, descriptor and whether it is a block device.
    pub(crate) fn new(
        files: impl Iterator<Item = (PathBuf, RawFd, bool)>,
        created: &super::cleanup::CreatedFiles,
    ) -> Self {
        let files = files
            .map(|(p, fd, block)| {
                (!block)
                    .then(|| CString::new(p.as_os_str().as_bytes()).ok())
                    .flatten()
                    .map(|c| (p, c, fd))
            })
            .collect();
        Relinker {
            files,
            created: created.clone(),
        }
    }

    /// Unlink file `file` and put a new empty file of the same name under its descriptor.
    #[cold]
    pub(crate) fn relink(&self, file: usize) -> io::Result<()> {
        let Some(Some((p, path, fd))) = self.files.get(file) else {
            return Ok(());
        };
        let fd = *fd;
        if self.created.contains(p) {
            return self.created.relink(p, fd);
        }
        // The user's own file (--allow-overwrite), named by the user: as fio does.
        // SAFETY: fcntl and lseek on a descriptor the run keeps open.
        let (flags, pos) = unsafe {
            (
                libc::fcntl(fd, libc::F_GETFL),
                libc::lseek(fd, 0, libc::SEEK_CUR),
            )
        };
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a valid C string.
        if unsafe { libc::unlink(path.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let keep = libc::O_ACCMODE | libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC | libc::O_APPEND;
        // SAFETY: a valid C string; O_EXCL: the name was just freed, anything else there now
        // is not ours to open.
        let new = unsafe {
            libc::open(
                path.as_ptr(),
                (flags & keep) | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
                0o644 as libc::c_uint,
            )
        };
        if new < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `new` was just opened and is owned here (closed when `f` drops).
        let f = unsafe { File::from_raw_fd(new) };
        super::tag::tag_created(&f);
        // SAFETY: plain syscalls; dup2 replaces the engine's descriptor atomically.
        unsafe {
            if pos > 0 {
                libc::lseek(f.as_raw_fd(), pos, libc::SEEK_SET);
            }
            if libc::dup2(f.as_raw_fd(), fd) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_relinked_file_is_new_and_empty_under_the_same_descriptor() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let created = crate::workload::cleanup::CreatedFiles::new();
        created.intend([p.as_path()]).unwrap();
        let mut f = created.create_file(&p, 0o644).unwrap();
        f.write_all(&[7u8; 8192]).unwrap();
        let ino = std::fs::metadata(&p).unwrap().ino();
        let r = Relinker::new([(p.clone(), f.as_raw_fd(), false)].into_iter(), &created);
        r.relink(0).unwrap();
        let md = std::fs::metadata(&p).unwrap();
        assert_ne!(md.ino(), ino, "a new file");
        assert_eq!(md.len(), 0);
        // The descriptor now writes the new file, read-write as before.
        f.seek(SeekFrom::Start(0)).unwrap();
        f.write_all(b"abc").unwrap();
        let mut s = String::new();
        std::fs::File::open(&p)
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "abc");
        assert_eq!(f.metadata().unwrap().ino(), md.ino());
        // The new file is the run's: removed at the end, and the marker with it.
        assert!(created.remove_all().is_empty());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
