//! A trim (fio's DDIR_TRIM), done synchronously as fio's do_io_u_trim: BLKDISCARD on a block
//! device; on a regular file, where fio 3.33's BLKDISCARD fails (ENOTTY), a hole is punched
//! instead (fallocate PUNCH_HOLE | KEEP_SIZE), so that trims mean something on files.
//! Differs from fio on purpose: fio 3.33 ends a trim job on a regular file with "Inappropriate
//! ioctl for device" unless the engine is falloc.

use std::io;
use std::os::unix::io::RawFd;

/// `BLKDISCARD`, _IO(0x12, 119) from linux/fs.h (not in the libc crate).
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Trims `len` bytes at `offset` of `fd`; returns `len`. One ioctl on a block device; on a file
/// the ioctl fails at once (ENOTTY) and the hole is punched.
pub(crate) fn trim_fd(fd: RawFd, offset: u64, len: usize) -> io::Result<usize> {
    let range: [u64; 2] = [offset, len as u64];
    // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer, valid for the call.
    let r = unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) };
    if r == 0 {
        return Ok(len);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOTTY) {
        return Err(e);
    }
    punch_hole(fd, offset, len)
}

/// fallocate(PUNCH_HOLE | KEEP_SIZE) of the range (fio's falloc engine's trim); returns `len`.
pub(crate) fn punch_hole(fd: RawFd, offset: u64, len: usize) -> io::Result<usize> {
    // SAFETY: plain syscall on a descriptor the caller owns; no memory is passed.
    let r = unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    if r == 0 {
        Ok(len)
    } else {
        Err(io::Error::last_os_error())
    }
}
