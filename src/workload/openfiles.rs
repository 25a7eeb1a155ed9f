//! fio's `openfiles` below the number of files: at most N of a job's files are open at once.
//! fio opens a file when its file service first picks it and closes it when the file is done
//! (its region has been covered); a file that is not open waits until another one closes.
//!
//! The engines hold one descriptor number per file for the whole run, so a closed file keeps
//! its number: `dup2` puts a placeholder (`/dev/null`) over it, which releases the data file,
//! and reopening puts the file back under the same number with the flags and position it had.
//! Only synchronous engines use it (nothing is in flight when a file closes).

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::Path;

/// What is needed to reopen a closed file as it was.
#[derive(Debug, Clone, Copy)]
struct Saved {
    flags: libc::c_int,
    pos: libc::off_t,
}

/// The open files of one job instance: which file each of the N slots holds.
#[derive(Debug)]
pub(crate) struct OpenWindow {
    /// The file in each slot (the file service chooses among slots).
    slots: Vec<usize>,
    /// The next file to open when a slot's file is done (files in order, then again).
    next: usize,
    /// Per file: its path and the descriptor number the engine uses.
    paths: Vec<CString>,
    fds: Vec<RawFd>,
    /// Per file, its flags and position when it was closed.
    saved: Vec<Option<Saved>>,
    /// What a closed file's descriptor number points at.
    placeholder: File,
}

impl OpenWindow {
    /// A window of `open` slots over the files at `paths`, the first `open` in the slots. The
    /// caller opens each file and gives its descriptor with [`OpenWindow::add`], closing those
    /// outside the slots at once, so that no more than `open` are ever open together.
    pub(crate) fn new(paths: &[&Path], open: usize) -> io::Result<Self> {
        let cpaths = paths
            .iter()
            .map(|p| CString::new(p.as_os_str().as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(OpenWindow {
            slots: (0..open.min(paths.len())).collect(),
            next: open % paths.len().max(1),
            paths: cpaths,
            fds: vec![-1; paths.len()],
            saved: vec![None; paths.len()],
            placeholder: File::open("/dev/null")?,
        })
    }

    /// File `file` is open as `fd` (the number the engine will use); a file outside the slots
    /// is closed again at once.
    pub(crate) fn add(&mut self, file: usize, fd: RawFd) -> io::Result<()> {
        self.fds[file] = fd;
        if self.slots.contains(&file) {
            Ok(())
        } else {
            self.close(file)
        }
    }

    /// Number of slots (the file service chooses among them).
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The file in slot `slot`.
    #[inline]
    pub(crate) fn file(&self, slot: usize) -> usize {
        self.slots[slot]
    }

    /// Close file `file` (the number stays taken): remember its flags and position, and release it under its number.
    fn close(&mut self, file: usize) -> io::Result<()> {
        let fd = self.fds[file];
        // SAFETY: fcntl and lseek on a descriptor the run keeps open (a data file here).
        let (flags, pos) = unsafe {
            (
                libc::fcntl(fd, libc::F_GETFL),
                libc::lseek(fd, 0, libc::SEEK_CUR),
            )
        };
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        self.saved[file] = Some(Saved {
            flags,
            pos: pos.max(0),
        });
        // SAFETY: dup2 atomically replaces the engine's descriptor with the placeholder.
        if unsafe { libc::dup2(self.placeholder.as_raw_fd(), fd) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reopen file `file` under its descriptor number, with the flags and position it had.
    fn reopen(&mut self, file: usize) -> io::Result<()> {
        let Some(s) = self.saved[file] else {
            return Ok(());
        };
        let keep = libc::O_ACCMODE | libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC | libc::O_APPEND;
        // SAFETY: a valid C string; never O_CREAT: the file was laid out before the run.
        let fd = unsafe {
            libc::open(
                self.paths[file].as_ptr(),
                (s.flags & keep) | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is closed here; dup2 puts it under the engine's
        // number, and the position is the one the engine last left (it skips lseek when the
        // next offset is where the previous I/O ended).
        let r = unsafe {
            libc::lseek(fd, s.pos, libc::SEEK_SET);
            let r = libc::dup2(fd, self.fds[file]);
            libc::close(fd);
            r
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        self.saved[file] = None;
        Ok(())
    }

    /// The file in `slot` is done: close it and open the next file in its place. Returns the
    /// new file, or the one that could not be opened with the error.
    #[cold]
    pub(crate) fn rotate(&mut self, slot: usize) -> Result<usize, (usize, io::Error)> {
        let old = self.slots[slot];
        let n = self.fds.len();
        // The next file that is not in a slot already (files in order, round and round).
        let mut new = self.next;
        while self.slots.contains(&new) && new != old {
            new = (new + 1) % n;
        }
        self.next = (new + 1) % n;
        if new == old {
            return Ok(old);
        }
        self.close(old).map_err(|e| (old, e))?;
        self.reopen(new).map_err(|e| (new, e))?;
        self.slots[slot] = new;
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};

    fn open_fds(dir: &Path) -> usize {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|t| t.starts_with(dir))
            .count()
    }

    #[test]
    fn files_rotate_through_the_slots_under_their_numbers() {
        let d = tempfile::tempdir().unwrap();
        let paths: Vec<_> = (0..3).map(|i| d.path().join(format!("f{i}"))).collect();
        let mut files: Vec<File> = paths
            .iter()
            .map(|p| {
                let mut f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(p)
                    .unwrap();
                f.write_all(p.file_name().unwrap().as_bytes()).unwrap();
                f
            })
            .collect();
        let list: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
        let mut w = OpenWindow::new(&list, 1).unwrap();
        for (i, f) in files.iter().enumerate() {
            w.add(i, f.as_raw_fd()).unwrap();
        }
        assert_eq!(open_fds(d.path()), 1);
        assert_eq!((w.len(), w.file(0)), (1, 0));
        assert_eq!(w.rotate(0).unwrap(), 1);
        assert_eq!(open_fds(d.path()), 1);
        // File 1 is back under its number, at the position it had (after its name).
        let mut s = String::new();
        files[1].seek(SeekFrom::Start(0)).unwrap();
        files[1].read_to_string(&mut s).unwrap();
        assert_eq!(s, "f1");
        assert_eq!(w.rotate(0).unwrap(), 2);
        assert_eq!(w.rotate(0).unwrap(), 0);
        assert_eq!(open_fds(d.path()), 1);
        // The reopened file keeps the position it was closed at.
        assert_eq!(files[0].stream_position().unwrap(), 2);
    }
}
