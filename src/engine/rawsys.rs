//! System calls made directly, for the per-I/O calls of the hot path: on x86-64 the `syscall`
//! instruction inline (no call into libc, no errno in thread-local storage), elsewhere through
//! `libc::syscall`. The result is the kernel's: a count, or a negated errno.

use std::io;

/// A system call with up to six arguments. Returns what the kernel returned: ≥ 0, or −errno.
///
/// # Safety
/// The arguments must be valid for system call `nr` (pointers valid for what it reads or
/// writes), as for `libc::syscall`.
#[inline(always)]
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn syscall6(nr: libc::c_long, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the x86-64 Linux system call convention: number in rax, arguments in rdi, rsi,
    // rdx, r10, r8, r9; the kernel clobbers rcx and r11 and returns in rax. Memory the call
    // reads or writes is the caller's to vouch for (# Safety), so no `nomem`/`readonly`.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// A system call with up to six arguments. Returns what the kernel returned: ≥ 0, or −errno.
///
/// # Safety
/// As for `libc::syscall` with these arguments.
#[inline(always)]
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn syscall6(nr: libc::c_long, a: [usize; 6]) -> isize {
    // SAFETY: the caller's (# Safety).
    let r = unsafe { libc::syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) } as isize;
    if r < 0 {
        -(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as isize)
    } else {
        r
    }
}

/// A kernel result as an io::Result.
#[inline(always)]
pub(crate) fn result(r: isize) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::from_raw_os_error(-r as i32))
    } else {
        Ok(r as usize)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::io::AsRawFd;

    #[test]
    fn reads_writes_and_reports_errno_as_libc_does() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create_new(dir.path().join("f")).unwrap();
        let fd = f.as_raw_fd() as usize;
        let data = *b"0123456789";
        // SAFETY: data is valid for 10 bytes.
        let w = unsafe {
            syscall6(
                libc::SYS_pwrite64,
                [fd, data.as_ptr() as usize, 10, 5, 0, 0],
            )
        };
        assert_eq!(result(w).unwrap(), 10);
        let mut back = [0u8; 4];
        // SAFETY: back is valid for 4 bytes.
        let r = unsafe {
            syscall6(
                libc::SYS_pread64,
                [fd, back.as_mut_ptr() as usize, 4, 8, 0, 0],
            )
        };
        assert_eq!(result(r).unwrap(), 4);
        assert_eq!(&back, b"3456");
        // SAFETY: a closed/unused descriptor number; the kernel only looks it up.
        let bad = unsafe {
            syscall6(
                libc::SYS_pread64,
                [9999, back.as_mut_ptr() as usize, 4, 0, 0, 0],
            )
        };
        assert_eq!(result(bad).unwrap_err().raw_os_error(), Some(libc::EBADF));
    }
}
