//! Builds each instance's engine before its thread starts, so that an engine that cannot be set
//! up (io_uring blocked by a container, too many AIO contexts) fails the run before any
//! measured I/O (the files are laid out by then; callers that can fall back, like `check`,
//! probe first).

use super::queue_worker::SlotBuffers;
use super::RunError;
use crate::engine::falloc::Falloc;
use crate::engine::ftruncate::Ftruncate;
use crate::engine::io_uring::{unavailable_reason, Uring, UringOptions};
use crate::engine::libaio::Aio;
use crate::engine::mmap::{Mmap, MmapOptions};
use crate::engine::posixaio::PosixAio;
use crate::engine::pvsync::Pvsync;
use crate::engine::pvsync2::Pvsync2;
use crate::engine::vsync::Vsync;
use crate::engine::{null::Null, psync::Psync, sync::Sync};
use crate::model::engines::FileOp;
use crate::model::RwKind;
use crate::model::{IoEngine, JobSpec};
use std::os::unix::io::RawFd;

pub(crate) enum Engines {
    Sync(Sync),
    Psync(Psync),
    Null(Null),
    // Boxed: the ring is much larger than the other engines.
    Uring(Box<Uring>, SlotBuffers),
    Aio(Aio, SlotBuffers),
    Vsync(Vsync),
    Pvsync(Pvsync),
    Pvsync2(Pvsync2),
    Mmap(Mmap),
    Falloc(Falloc),
    Ftruncate(Ftruncate),
    Posix(PosixAio, SlotBuffers),
    /// cpuio: no engine, a loop of its own (`run/cpuio.rs`).
    Cpu,
    /// exec: no engine, a loop of its own (`run/exec.rs`).
    Exec,
    /// filecreate, filestat, filedelete, dircreate, dirstat, dirdelete: no engine, a loop of
    /// their own (`run/fileops.rs`).
    FileOps(FileOp),
    /// io_submit_mode=offload: one engine per submitting thread (`run/offload.rs`).
    Offload(Vec<Engines>),
}

pub(crate) fn make(job: &JobSpec, fds: Vec<RawFd>) -> Result<Engines, RunError> {
    let max_bs = job.max_bs() as usize;
    Ok(match job.ioengine {
        IoEngine::Sync => Engines::Sync(Sync::new(fds)),
        IoEngine::Psync => Engines::Psync(Psync::new(fds)),
        IoEngine::Null => Engines::Null(Null),
        IoEngine::Vsync => Engines::Vsync(Vsync::new(fds)),
        IoEngine::Pvsync => Engines::Pvsync(Pvsync::new(fds)),
        IoEngine::Pvsync2 => Engines::Pvsync2(Pvsync2::new(
            fds,
            job.hipri,
            job.engines.hipri_percentage,
            job.engines.nowait,
        )),
        IoEngine::Mmap => {
            let o = MmapOptions {
                writes: job.rw.kind != RwKind::Read,
                reads: job.rw.kind != RwKind::Write,
                random: job.rw.random,
                advise: job.fadvise_hint != crate::model::FadviseHint::None,
                direct: job.direct,
            };
            Engines::Mmap(Mmap::new(fds, o).map_err(|e| {
                RunError::EngineSetup(format!("job '{}': cannot mmap its files: {e}", job.name))
            })?)
        }
        IoEngine::Falloc => Engines::Falloc(Falloc::new(fds)),
        IoEngine::Ftruncate => Engines::Ftruncate(Ftruncate::new(fds)),
        IoEngine::Posixaio => Engines::Posix(
            PosixAio::new(fds, job.iodepth),
            SlotBuffers::new(job.iodepth, max_bs),
        ),
        IoEngine::Cpuio => Engines::Cpu,
        IoEngine::Exec => Engines::Exec,
        IoEngine::Filecreate
        | IoEngine::Filestat
        | IoEngine::Filedelete
        | IoEngine::Dircreate
        | IoEngine::Dirstat
        | IoEngine::Dirdelete => {
            Engines::FileOps(job.ioengine.file_op().expect("a file operation engine"))
        }
        IoEngine::IoUring => {
            let mut bufs = SlotBuffers::new(job.iodepth, max_bs);
            let opts = UringOptions {
                fixedbufs: job.fixedbufs,
                registerfiles: job.registerfiles,
                sqthread_poll: job.sqthread_poll,
                sqthread_poll_cpu: job.host.sqthread_poll_cpu,
                hipri: job.hipri,
                force_async: job.io.force_async,
            };
            let ring = Uring::new(fds, job.iodepth, opts, &bufs.regions()).map_err(|e| {
                match unavailable_reason(&e) {
                    Some(why) => RunError::EngineUnavailable(why),
                    None => RunError::EngineSetup(format!(
                        "job '{}': cannot set up io_uring with iodepth={}: {e}",
                        job.name, job.iodepth
                    )),
                }
            })?;
            Engines::Uring(Box::new(ring), bufs)
        }
        IoEngine::Libaio => {
            let aio = Aio::new(fds, job.iodepth).map_err(|e| {
                let hint = if e.raw_os_error() == Some(libc::EAGAIN) {
                    " (the AIO context limit fs.aio-max-nr is exhausted; raise it or lower iodepth/numjobs)"
                } else {
                    ""
                };
                RunError::EngineSetup(format!(
                    "job '{}': cannot set up libaio with iodepth={}: {e}{hint}",
                    job.name, job.iodepth
                ))
            })?;
            Engines::Aio(aio, SlotBuffers::new(job.iodepth, max_bs))
        }
    })
}
