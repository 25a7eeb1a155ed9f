//! The layout writes themselves, as fio's: a new file created (recorded and tagged first), then
//! pre-allocated for a write-only job or written out front to back with fresh data, fsynced
//! and dropped from the cache; and fio's `pre_read` of a file's region before the job.

use super::cache::CacheDrop;
use super::error::io_err;
use super::{job_reads, FilePlan, LayoutError};
use crate::model::{Fallocate, JobSpec, DDIR_WRITE};
use crate::workload::buffers::AlignedBuf;
use crate::workload::cleanup::CreatedFiles;
use crate::workload::rng::Rng;
use crate::workload::tag::tag_created;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// Create (if needed) and lay out one file. Returns true when it was laid out (new file).
pub(crate) fn lay_out(
    job: &JobSpec,
    plan: &FilePlan,
    created: &CreatedFiles,
    stop: &AtomicBool,
) -> Result<bool, LayoutError> {
    if plan.existed {
        return Ok(false);
    }
    if created.contains(&plan.path) {
        grow(job, plan, created, stop)?;
        return Ok(false);
    }
    // Recorded before it exists, so that even a SIGKILL between the two leaves a trace.
    created
        .intend([plan.path.as_path()])
        .map_err(io_err("cannot create", &plan.path))?;
    let f = created
        .create_file(&plan.path, 0o644)
        .map_err(io_err("cannot create", &plan.path))?;
    // The largest size the run gives it, for a later cleanup's proof (growing files: none).
    created
        .record(&plan.path, &f, (!grows(job)).then_some(plan.size), true)
        .map_err(io_err("cannot create", &plan.path))?;
    tag_created(&f);
    if job.files.create_on_open || job.files.fill_device {
        // fio creates the file empty when it opens it: no layout, no preallocation; the
        // writes extend it (reads of a new file are refused in `check_safety`). fill_device
        // neither preallocates nor sets a size: the writes go until the filesystem is full.
        return Ok(false);
    }
    // fio's overwrite=1 lays out a write-only job's files too (reads always need data).
    if job_reads(job) || job.files.overwrite {
        write_out(&f, job, plan, 0, stop)?;
    } else {
        preallocate(&f, plan.size, job.fallocate).map_err(io_err("cannot allocate", &plan.path))?;
    }
    Ok(true)
}

/// Files whose size the run does not set: the writes (or the engine) make it.
fn grows(job: &JobSpec) -> bool {
    job.files.create_on_open
        || job.files.fill_device
        || matches!(
            job.ioengine,
            crate::model::IoEngine::Ftruncate | crate::model::IoEngine::Falloc
        )
}

/// A file an earlier job of this run created, which this job needs larger (two jobs sharing a
/// `filename=` at different offsets, fio's t0002): what is missing is written out with fresh
/// data for a job that reads (preallocated for one that only writes), after the marker records
/// the new size. fio unlinks and lays out the whole file again there (`extend_file`), which
/// destroys what the earlier job wrote (a later verify of it fails) and races with a job
/// still running on it; growing gives the same file size and keeps the earlier job's data.
fn grow(
    job: &JobSpec,
    plan: &FilePlan,
    created: &CreatedFiles,
    stop: &AtomicBool,
) -> Result<(), LayoutError> {
    if grows(job) {
        return Ok(());
    }
    let Some(f) = created.reopen(&plan.path, libc::O_RDWR | libc::O_CLOEXEC) else {
        return Ok(());
    };
    let f = f.map_err(io_err("cannot reopen", &plan.path))?;
    let len = f
        .metadata()
        .map_err(io_err("cannot look at", &plan.path))?
        .len();
    if len >= plan.size {
        return Ok(());
    }
    created
        .record(&plan.path, &f, Some(plan.size), true)
        .map_err(io_err("cannot grow", &plan.path))?;
    if job_reads(job) || job.files.overwrite {
        write_out(&f, job, plan, len, stop)
    } else {
        preallocate(&f, plan.size, job.fallocate).map_err(io_err("cannot allocate", &plan.path))
    }
}

fn preallocate(f: &File, size: u64, how: Fallocate) -> std::io::Result<()> {
    let fd = f.as_raw_fd();
    let r = match how {
        // SAFETY: plain syscalls on an open fd.
        Fallocate::Native => unsafe { libc::fallocate(fd, 0, 0, size as libc::off_t) },
        // SAFETY: as above.
        Fallocate::Keep => unsafe {
            libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, size as libc::off_t)
        },
        Fallocate::Posix => {
            // SAFETY: plain syscall on an open fd.
            let e = unsafe { libc::posix_fallocate(fd, 0, size as libc::off_t) };
            if e != 0 {
                return Err(std::io::Error::from_raw_os_error(e));
            }
            0
        }
        Fallocate::None | Fallocate::Truncate => 0,
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        // Filesystems without fallocate (fio warns and goes on with a sparse file).
        if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(e);
        }
    }
    f.set_len(size)
}

/// Write the whole file out the way fio 3.33 lays out a file that will be read
/// (`extend_file`), so that a recipe's reads start from the same kind of file as under fio:
/// pre-allocate as `fallocate=` says and set the size, then write it front to back in chunks of
/// the job's write block size (fio's `max_bs[write]`: 4 KiB by default, also for a read-only
/// job; `bs=2300` gives 2300-byte writes), fsync (`create_fsync`, 1 by default), and drop the written pages from the cache (fio does that after every
/// layout, whatever `invalidate=` says).
///
/// Every chunk gets fresh data, as fio draws new data for every write: a file that repeats one
/// chunk can be served from the cache of a deduplicating layer below (a VM host, an array), and
/// reads of it would measure that cache instead of the storage. `zero_buffers=1` writes zeros,
/// as fio's layout does then.
fn write_out(
    f: &File,
    job: &JobSpec,
    plan: &FilePlan,
    from: u64,
    stop: &AtomicBool,
) -> Result<(), LayoutError> {
    use std::os::unix::fs::FileExt;
    preallocate(f, plan.size, job.fallocate).map_err(io_err("cannot allocate", &plan.path))?;
    let bs = job.bs_range(DDIR_WRITE).1.clamp(1, plan.size.max(1)) as usize;
    let mut buf = AlignedBuf::new(bs);
    let mut rng = Rng::new(0x1a7e ^ from);
    if job.zero_buffers {
        buf.fill(&mut rng, true);
    }
    let mut at = from;
    let mut left = plan.size - from;
    while left > 0 {
        // One relaxed load per write: a signal stops even a 4 KiB-chunk layout at once.
        if stop.load(Ordering::Relaxed) {
            return Err(LayoutError::Interrupted {
                path: plan.path.clone(),
            });
        }
        let n = left.min(bs as u64) as usize;
        let chunk = &mut buf.as_mut_slice()[..n];
        if !job.zero_buffers {
            rng.fill(chunk);
        }
        f.write_all_at(chunk, at)
            .map_err(io_err("cannot lay out", &plan.path))?;
        at += n as u64;
        left -= n as u64;
    }
    // Written data must reach the disk, or no cache drop could remove it; create_fsync=0
    // skips it as fio does (the dirty pages then stay in the cache).
    if job.files.create_fsync {
        f.sync_all().map_err(io_err("cannot sync", &plan.path))?;
    }
    // Advisory, as in fio, which only logs a failure; with invalidate=1 the open warns anyway.
    let _ = CacheDrop {
        fd: f.as_raw_fd(),
        offset: from,
        len: plan.size - from,
        is_block: false,
    }
    .drop_cache();
    Ok(())
}

/// fio's `pre_read`: read the file's I/O region into the page cache before the job starts,
/// in reads of the job's read block size (buffered; `direct=1` is refused with pre_read).
pub(crate) fn pre_read(
    job: &JobSpec,
    plan: &FilePlan,
    created: &CreatedFiles,
    stop: &AtomicBool,
) -> Result<(), LayoutError> {
    use std::os::unix::fs::FileExt;
    let f = match created.reopen(&plan.path, libc::O_RDONLY) {
        Some(r) => r,
        None => File::open(&plan.path),
    }
    .map_err(io_err("cannot open", &plan.path))?;
    let bs = job.bs[crate::model::DDIR_READ].clamp(1, plan.region.max(1)) as usize;
    let mut buf = vec![0u8; bs];
    let (mut off, end) = (plan.offset, plan.offset + plan.region);
    while off < end && !stop.load(Ordering::Relaxed) {
        let n = (end - off).min(bs as u64) as usize;
        let got = f
            .read_at(&mut buf[..n], off)
            .map_err(io_err("cannot pre-read", &plan.path))?;
        if got == 0 {
            break;
        }
        off += got as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{job, plan::plan_files};
    use super::*;
    use crate::model::{RwKind, SizeSpec};
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    #[test]
    fn write_job_preallocates_read_job_writes_out_and_cleanup_removes() {
        let d = tempfile::tempdir().unwrap();
        let created = CreatedFiles::new();
        let stop = AtomicBool::new(false);
        let mut w = job("w", d.path());
        w.rw.kind = RwKind::Write;
        let pw = &plan_files(&w, 0).unwrap()[0];
        assert!(lay_out(&w, pw, &created, &stop).unwrap());
        let md = std::fs::metadata(&pw.path).unwrap();
        assert_eq!(md.len(), 1 << 20);
        // fallocate reserves blocks (unwritten extents) on ext4.
        assert!(md.blocks() * 512 >= 1 << 20);

        let r = job("r", d.path());
        let pr = &plan_files(&r, 0).unwrap()[0];
        lay_out(&r, pr, &created, &stop).unwrap();
        let data = std::fs::read(&pr.path).unwrap();
        assert_eq!(data.len(), 1 << 20);
        assert!(data.iter().filter(|&&b| b == 0).count() < 10_000);

        assert!(created.remove_all().is_empty());
        assert!(!pw.path.exists() && !pr.path.exists());
    }

    #[test]
    fn laid_out_data_does_not_repeat_from_chunk_to_chunk() {
        // Repeated chunks could be served from a deduplicating layer's cache.
        let d = tempfile::tempdir().unwrap();
        let mut r = job("r", d.path());
        r.size = Some(SizeSpec::Bytes(3 << 20));
        let p = &plan_files(&r, 0).unwrap()[0];
        let created = CreatedFiles::new();
        lay_out(&r, p, &created, &AtomicBool::new(false)).unwrap();
        let data = std::fs::read(&p.path).unwrap();
        let mut blocks: Vec<&[u8]> = data.chunks(4096).collect();
        let n = blocks.len();
        blocks.sort_unstable();
        blocks.dedup();
        assert_eq!(blocks.len(), n, "some 4 KiB blocks repeat");
    }

    /// Pages of `path` in the page cache (mincore on a read-only mapping faults nothing in).
    fn resident_pages(path: &Path) -> usize {
        let f = File::open(path).unwrap();
        let len = f.metadata().unwrap().len() as usize;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let mut vec = vec![0u8; len.div_ceil(page)];
        // SAFETY: a shared read-only mapping of an open file, unmapped before returning;
        // mincore writes one byte per page of the mapping into `vec`, which has room for them.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            let r = libc::mincore(p, len, vec.as_mut_ptr());
            libc::munmap(p, len);
            assert_eq!(r, 0, "mincore: {}", std::io::Error::last_os_error());
        }
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }

    #[test]
    fn layout_with_an_odd_block_size_is_whole_fresh_and_not_left_cached() {
        // Not /tmp, which may be a tmpfs whose pages cannot be dropped.
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut r = job("odd", d.path());
        r.bs = [2300; 3];
        // 1 MiB is no multiple of 2300: the last write is a short one.
        r.size = Some(SizeSpec::Bytes(1 << 20));
        r.invalidate = false;
        let p = &plan_files(&r, 0).unwrap()[0];
        let created = CreatedFiles::new();
        assert!(lay_out(&r, p, &created, &AtomicBool::new(false)).unwrap());
        // As after fio's layout: nothing cached, even with invalidate=0, so the first pass
        // reads the storage.
        assert_eq!(resident_pages(&p.path), 0);
        let data = std::fs::read(&p.path).unwrap();
        assert_eq!(data.len(), 1 << 20);
        for unit in [2300, 4096] {
            let mut blocks: Vec<&[u8]> = data.chunks(unit).collect();
            let n = blocks.len();
            blocks.sort_unstable();
            blocks.dedup();
            assert_eq!(blocks.len(), n, "some {unit}-byte blocks repeat");
        }

        // zero_buffers=1 lays out zeros, as fio's layout does.
        let mut z = job("zero", d.path());
        z.zero_buffers = true;
        let p = &plan_files(&z, 0).unwrap()[0];
        lay_out(&z, p, &created, &AtomicBool::new(false)).unwrap();
        assert!(std::fs::read(&p.path).unwrap().iter().all(|&b| b == 0));
        assert!(created.remove_all().is_empty());
    }

    #[test]
    fn a_stop_ends_layout_at_once_and_cleanup_removes_the_file() {
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut r = job("stop", d.path());
        // Far more than a few milliseconds of writing, in fio's default 4 KiB writes.
        r.size = Some(SizeSpec::Bytes(256 << 20));
        let p = &plan_files(&r, 0).unwrap()[0];
        let created = CreatedFiles::new();
        let stop = AtomicBool::new(false);
        let (res, stopped_at) = std::thread::scope(|s| {
            let t = s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(20));
                stop.store(true, Ordering::Relaxed);
                std::time::Instant::now()
            });
            let res = lay_out(&r, p, &created, &stop);
            (res, t.join().unwrap())
        });
        let lag = stopped_at.elapsed();
        assert!(
            matches!(res, Err(LayoutError::Interrupted { .. })),
            "{res:?}"
        );
        // The written part is in the cache, so only a stalled disk makes one 4 KiB write slow:
        // generous for a shared machine, far below the whole layout.
        assert!(
            lag < std::time::Duration::from_millis(500),
            "stopped {lag:?} after the flag"
        );
        assert!(std::fs::metadata(&p.path).unwrap().len() == 256 << 20);
        assert!(created.remove_all().is_empty());
        assert!(!p.path.exists());
    }
}
