//! What fio does to a file's cache: drop a region's pages (`invalidate=1`, on open and at each
//! later pass), and announce the access pattern on open (`fadvise_hint`).

use super::FilePlan;
use crate::model::{FadviseHint, JobSpec};
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::io::{AsRawFd, RawFd};

/// How to drop the cached pages of one file's I/O region, as fio's `invalidate=1` does: on open,
/// and again by the worker at the start of every later pass (a plain copy of the fd, which the
/// orchestrator keeps open until the worker is done).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheDrop {
    pub(super) fd: RawFd,
    pub(super) offset: u64,
    pub(super) len: u64,
    pub(super) is_block: bool,
}

impl CacheDrop {
    pub(crate) fn new(f: &File, plan: &FilePlan) -> Self {
        CacheDrop {
            fd: f.as_raw_fd(),
            offset: plan.offset,
            len: plan.region,
            is_block: plan.is_block,
        }
    }

    /// Drop the region's clean pages. Dirty pages stay cached: DONTNEED only starts their
    /// writeback.
    pub(crate) fn drop_cache(&self) -> std::io::Result<()> {
        if self.is_block {
            // fio flushes a block device with BLKFLSBUF = _IO(0x12, 97), which needs
            // CAP_SYS_ADMIN; fio then gives up, but the region's pages can still be dropped
            // below, which is what the user asked for.
            const BLKFLSBUF: libc::c_ulong = 0x1261;
            // SAFETY: an argument-less ioctl on an open fd.
            if unsafe { libc::ioctl(self.fd, BLKFLSBUF, 0) } == 0 {
                return Ok(());
            }
        }
        // SAFETY: advisory call on an open fd.
        let e = unsafe {
            libc::posix_fadvise(
                self.fd,
                self.offset as libc::off_t,
                self.len as libc::off_t,
                libc::POSIX_FADV_DONTNEED,
            )
        };
        match e {
            0 => Ok(()),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    }
}

/// The posix_fadvise advice for `fadvise_hint`, None for no hint.
fn fadvise_advice(job: &JobSpec) -> Option<libc::c_int> {
    match job.fadvise_hint {
        FadviseHint::None => None,
        FadviseHint::ByPattern if job.rw.random => Some(libc::POSIX_FADV_RANDOM),
        FadviseHint::ByPattern | FadviseHint::Sequential => Some(libc::POSIX_FADV_SEQUENTIAL),
        FadviseHint::Random => Some(libc::POSIX_FADV_RANDOM),
    }
}

/// What fio does to a file's cache when it opens it for I/O: drop the region's cached pages
/// (`invalidate=1`; with direct=1 too, as fio does), then announce the access pattern (`fadvise_hint`), which
/// sets the kernel's readahead for this open file: none for RANDOM, double for SEQUENTIAL.
/// Both are advisory; failures come back as warnings, as fio only logs them.
pub(crate) fn on_open(job: &JobSpec, plan: &FilePlan, f: &File) -> Vec<String> {
    let mut warnings = Vec::new();
    if job.invalidate {
        if let Err(e) = CacheDrop::new(f, plan).drop_cache() {
            warnings.push(format!(
                "cache invalidation of '{}' failed: {e}",
                plan.path.display()
            ));
        }
    }
    // fio advises regular files and block devices only (not pipes or character devices).
    let advisable = f
        .metadata()
        .map(|m| m.file_type().is_file() || m.file_type().is_block_device())
        .unwrap_or(false);
    if let Some(advice) = fadvise_advice(job).filter(|_| advisable) {
        // SAFETY: advisory call on an open fd.
        let e = unsafe {
            libc::posix_fadvise(
                f.as_raw_fd(),
                plan.offset as libc::off_t,
                plan.region as libc::off_t,
                advice,
            )
        };
        if e != 0 {
            warnings.push(format!(
                "fadvise hint on '{}' failed: {}",
                plan.path.display(),
                std::io::Error::from_raw_os_error(e)
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fadvise_hint_follows_the_pattern_by_default() {
        let mut j = JobSpec::default();
        let advice = |j: &JobSpec| fadvise_advice(j);
        assert_eq!(advice(&j), Some(libc::POSIX_FADV_SEQUENTIAL));
        j.rw.random = true;
        assert_eq!(advice(&j), Some(libc::POSIX_FADV_RANDOM));
        j.fadvise_hint = FadviseHint::Sequential;
        assert_eq!(advice(&j), Some(libc::POSIX_FADV_SEQUENTIAL));
        j.rw.random = false;
        j.fadvise_hint = FadviseHint::Random;
        assert_eq!(advice(&j), Some(libc::POSIX_FADV_RANDOM));
        j.fadvise_hint = FadviseHint::None;
        assert_eq!(advice(&j), None);
    }
}
