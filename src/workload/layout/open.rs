//! Opening a file for the job's I/O (O_DIRECT, O_SYNC/O_DSYNC, read-write when the job
//! writes) and direct I/O's alignment, checked against the job's sizes and offset.

use super::error::io_err;
use super::{job_reads, job_writes, FilePlan, LayoutError};
use crate::model::{JobSpec, OpenSync};
use crate::workload::cleanup::CreatedFiles;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;

/// Open flags for the job's I/O.
/// A file this run created is reopened only while its name is still that file
/// (`CreatedFiles::reopen`: relative to its directory's handle, never through a symlink); a
/// file the user named (an existing file, a device) is opened as named.
pub(crate) fn open_for_io(
    job: &JobSpec,
    plan: &FilePlan,
    created: &CreatedFiles,
) -> Result<File, LayoutError> {
    let mut flags = 0;
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    match job.open_sync {
        OpenSync::None => {}
        OpenSync::Sync => flags |= libc::O_SYNC,
        OpenSync::Dsync => flags |= libc::O_DSYNC,
    }
    // fio's falloc engine opens its files read-write for every direction.
    let write = job_writes(job) || job.ioengine == crate::model::IoEngine::Falloc;
    let opened = match created.reopen(&plan.path, flags | if write { libc::O_RDWR } else { 0 }) {
        Some(r) => r,
        None => {
            let mut oo = OpenOptions::new();
            oo.read(true).write(write).custom_flags(flags);
            oo.open(&plan.path)
        }
    };
    match opened {
        Ok(f) => Ok(f),
        Err(e) if job.direct && e.raw_os_error() == Some(libc::EINVAL) => {
            Err(LayoutError::DirectRefused {
                path: plan.path.clone(),
                source: e,
            })
        }
        Err(e) => Err(io_err("cannot open", &plan.path)(e)),
    }
}

/// The offset alignment O_DIRECT needs on `f`: statx's STATX_DIOALIGN where the kernel and
/// filesystem report it, else the logical block size of a block device, else 512.
pub(crate) fn direct_alignment(f: &File) -> u64 {
    // SAFETY: statx fills the zeroed struct; an empty path with AT_EMPTY_PATH means the fd.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: as above: a valid empty C string, the fd, and a writable statx.
    let r = unsafe {
        libc::statx(
            f.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if r == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0 {
        return stx.stx_dio_offset_align as u64;
    }
    let mut ssz: libc::c_int = 0;
    // BLKSSZGET = _IO(0x12, 104)
    const BLKSSZGET: libc::c_ulong = 0x1268;
    // SAFETY: the ioctl writes one int; it fails harmlessly on regular files.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKSSZGET, &mut ssz) } == 0 && ssz > 0 {
        return ssz as u64;
    }
    512
}

/// With direct=1, block sizes and the start offset must be multiples of the file's direct I/O
/// alignment; say which value is wrong instead of failing with EINVAL mid-run.
pub(crate) fn check_direct_alignment(
    job: &JobSpec,
    plan: &FilePlan,
    f: &File,
) -> Result<(), LayoutError> {
    let align = direct_alignment(f);
    let mut checks = Vec::new();
    // Every size an I/O can have (min, max, split entries) and the random alignment.
    for (d, on) in [
        (crate::model::DDIR_READ, job_reads(job)),
        (crate::model::DDIR_WRITE, job_writes(job)),
    ] {
        if on {
            let (lo, hi) = job.bs_range(d);
            checks.extend([("bs", lo), ("bs", hi), ("blockalign", job.block_align(d))]);
            checks.extend(job.blocks.split[d].iter().map(|s| ("bssplit", s.bs)));
        }
    }
    checks.push(("offset", plan.offset));
    for (what, value) in checks {
        if value % align != 0 {
            return Err(LayoutError::DirectAlignment {
                job: job.name.clone(),
                what,
                value,
                align,
                path: plan.path.clone(),
            });
        }
    }
    Ok(())
}
