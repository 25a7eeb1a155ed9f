//! fio's `write_hint`: the expected lifetime of a file's writes, given to the kernel with fcntl
//! when the file is opened for the job's I/O.

use crate::model::io::WriteHint;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// fcntl commands (include/uapi/linux/fcntl.h: F_LINUX_SPECIFIC_BASE + 12 and + 14).
const F_SET_RW_HINT: libc::c_int = 1024 + 12;
const F_SET_FILE_RW_HINT: libc::c_int = 1024 + 14;

/// Sets `hint` on `f` as fio 3.33 does: on the open file (F_SET_FILE_RW_HINT) for direct I/O,
/// on the inode (F_SET_RW_HINT) for buffered I/O. Linux 5.17 removed F_SET_FILE_RW_HINT (it
/// fails with EINVAL, which fails fio's job); the inode's hint then applies to direct writes
/// too, so iogauge sets that instead.
pub(crate) fn apply(f: &File, hint: WriteHint, direct: bool) -> io::Result<()> {
    let value: u64 = hint.value();
    let set = |cmd: libc::c_int| {
        // SAFETY: the command reads one u64 from the pointer, which outlives the call.
        let r = unsafe { libc::fcntl(f.as_raw_fd(), cmd, &value as *const u64) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    if direct {
        match set(F_SET_FILE_RW_HINT) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            r => return r,
        }
    }
    set(F_SET_RW_HINT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// F_GET_RW_HINT (F_LINUX_SPECIFIC_BASE + 11).
    fn get(f: &File) -> u64 {
        let mut v: u64 = 0;
        // SAFETY: the command writes one u64 through the pointer.
        let r = unsafe { libc::fcntl(f.as_raw_fd(), 1024 + 11, &mut v as *mut u64) };
        assert_eq!(r, 0, "{}", io::Error::last_os_error());
        v
    }

    #[test]
    fn the_inode_carries_the_hint_buffered_or_direct() {
        let d = tempfile::tempdir().unwrap();
        let f = File::create(d.path().join("f")).unwrap();
        apply(&f, WriteHint::Short, false).unwrap();
        assert_eq!(get(&f), 2);
        apply(&f, WriteHint::Extreme, true).unwrap();
        assert_eq!(get(&f), 5);
    }
}
