//! A private descriptor table for a worker thread of a synchronous engine.
//!
//! In a process with more than one thread the file table is shared, so every pread/pwrite's
//! descriptor lookup (the kernel's `fdget`) takes and drops a reference on the file: two atomic
//! operations on a shared cache line per I/O. fio's jobs are forked processes with one thread,
//! which take the lighter path. `unshare(CLONE_FILES)` gives the worker a copy of the table of
//! its own, so its system calls do what a fio job's do. The descriptor numbers stay the same.
//!
//! The copy is released when the thread ends. A descriptor the worker would close itself would
//! close only in its copy and stay open in the process's table, so the table is only made
//! private for a worker that closes none: one that writes no logs (`write_*_log` and
//! `write_iolog`, whose files it flushes and drops) and swaps no files under its descriptors
//! (unlink_each_loop, openfiles below the number of files).

use super::engines::Engines;
use super::instance::WorkerInput;

/// Whether the worker running `engine` on `input` should have a private descriptor table.
pub(super) fn wanted(engine: &Engines, input: &WorkerInput) -> bool {
    let sync_fd_engine = matches!(
        engine,
        Engines::Sync(_)
            | Engines::Psync(_)
            | Engines::Vsync(_)
            | Engines::Pvsync(_)
            | Engines::Pvsync2(_)
            | Engines::Falloc(_)
            | Engines::Ftruncate(_)
    );
    let closes_descriptors = input.relink.is_some()
        || input.logs.lock().map(|l| l.is_some()).unwrap_or(true)
        || input.iolog.lock().map(|l| l.is_some()).unwrap_or(true)
        || input
            .open_window
            .lock()
            .map(|w| w.is_some())
            .unwrap_or(true);
    sync_fd_engine && !closes_descriptors
}

/// Gives the calling thread a private copy of the descriptor table. A failure (a seccomp
/// filter, say) only leaves the shared table: the I/O is the same, a little dearer.
pub(super) fn make_private() {
    // SAFETY: unshare takes flags only; CLONE_FILES copies the calling thread's descriptor
    // table and touches no memory of ours.
    let _ = unsafe { libc::unshare(libc::CLONE_FILES) };
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::os::unix::io::AsRawFd;

    #[test]
    fn a_private_table_keeps_the_numbers_and_leaves_the_process_table_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"abcdef").unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let fd = f.as_raw_fd();
        let other = std::thread::spawn(move || {
            super::make_private();
            let mut b = [0u8; 3];
            // SAFETY: b is valid for 3 bytes.
            let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), 3, 2) };
            assert_eq!((n, &b), (3, b"cde"));
            // Closing in the private copy leaves the process's descriptor open.
            // SAFETY: fd is this thread's copy.
            assert_eq!(unsafe { libc::close(fd) }, 0);
            // SAFETY: as above; the copy is closed now.
            let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), 3, 0) };
            assert_eq!(n, -1);
        });
        other.join().unwrap();
        let mut b = [0u8; 2];
        // SAFETY: b is valid for 2 bytes; f still owns fd in this thread's table.
        let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), 2, 0) };
        assert_eq!((n, &b), (2, b"ab"));
        drop(f);
    }
}
