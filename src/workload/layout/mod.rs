//! Which files a job instance uses, and getting them ready the way fio does: new files for
//! write-only jobs are pre-allocated with `fallocate` (unwritten extents, which the job then
//! overwrites), files that will be read are written out first; when a file is opened for I/O its
//! cache is dropped (`invalidate=1`) and the access pattern announced (`fadvise_hint`). Safety
//! first: never write into a block device or an existing file iogauge did not create without
//! `--allow-overwrite`, and check free space before laying out.
//!
//! One concept per child: `error` (`LayoutError`), `plan` (files and regions), `safety` (what is
//! refused), `tag` (the xattr marking iogauge's files), `space` (free space), `lay_out` (the
//! layout writes and pre_read), `open` (opening for I/O, direct alignment), `cache` (cache drop
//! and fadvise on open).

mod cache;
mod error;
mod lay_out;
mod open;
mod plan;
mod safety;
mod space;

pub(crate) use cache::{on_open, CacheDrop};
pub use error::LayoutError;
pub(crate) use lay_out::{lay_out, pre_read};
pub(crate) use open::{check_direct_alignment, open_for_io};
pub(crate) use plan::{device_size, plan_files, plan_paths, split_filenames};
pub(crate) use safety::{check_dir_safety, check_safety};
pub(crate) use space::{check_free_space, parent_dir};

use crate::model::{JobSpec, RwKind};
use std::path::PathBuf;

/// One file of one job instance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FilePlan {
    pub path: PathBuf,
    /// Start of the I/O region.
    pub offset: u64,
    /// Length of the I/O region.
    pub region: u64,
    /// The size the file must have (offset + region) when iogauge creates it.
    pub size: u64,
    /// The file existed before the run (iogauge did not create it).
    pub existed: bool,
    pub is_block: bool,
}

/// Whether the job ever writes (so existing data would be overwritten).
pub(crate) fn job_writes(job: &JobSpec) -> bool {
    // verify_only reads back what the write workload would write, and writes nothing.
    job.rw.kind != RwKind::Read && !job.verify.only
}

/// Whether new files must contain data before the job runs (reads need real blocks).
pub(crate) fn job_reads(job: &JobSpec) -> bool {
    job.rw.kind != RwKind::Write
}

/// A job in `dir` writing 1 MiB, for the children's tests.
#[cfg(test)]
fn job(name: &str, dir: &std::path::Path) -> JobSpec {
    JobSpec {
        name: name.into(),
        directory: Some(dir.to_path_buf()),
        size: Some(crate::model::SizeSpec::Bytes(1 << 20)),
        ..JobSpec::default()
    }
}
