//! Which files a job instance uses, and getting them ready the way fio does: new files for
//! write-only jobs are pre-allocated with `fallocate` (unwritten extents, which the job then
//! overwrites), files that will be read are written out first; when a file is opened for I/O its
//! cache is dropped (`invalidate=1`) and the access pattern announced (`fadvise_hint`). Safety
//! first: never write into a block device or an existing file iogauge did not create without
//! `--allow-overwrite`, and check free space before laying out.

use super::buffers::AlignedBuf;
use super::cleanup::CreatedFiles;
use super::rng::Rng;
use crate::model::{FadviseHint, Fallocate, JobSpec, OpenSync, RwKind, SizeSpec, DDIR_WRITE};
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a job's files cannot be planned, checked or laid out. Each message names the file and
/// what to change.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// No size given and the file does not exist to take its size from.
    #[error("job '{job}': no size given and '{path}' does not exist; set size= (e.g. --size=1g) or filesize=")]
    NoSize {
        /// The job's name.
        job: String,
        /// The missing file.
        path: PathBuf,
    },
    /// A size given as a percentage of a file or device that does not exist.
    #[error("job '{job}': size={pct}% needs an existing file or device, but '{path}' does not exist; give an absolute size such as --size=1g")]
    PercentOfMissing {
        /// The job's name.
        job: String,
        /// The percentage asked for (0 < pct <= 100).
        pct: f64,
        /// The missing file or device.
        path: PathBuf,
    },
    /// The start offset lies past the end of the file (fio: "you need to specify valid offset=").
    #[error("job '{job}': offset {offset} is past the end of '{path}' ({size} bytes); lower offset= or raise filesize=")]
    OffsetBeyondFile {
        /// The job's name.
        job: String,
        /// The file.
        path: PathBuf,
        /// The start offset, bytes.
        offset: u64,
        /// The file's size, bytes.
        size: u64,
    },
    /// The I/O region after the offset holds less than one block.
    #[error("job '{job}': the I/O region of '{path}' ({region} bytes after offset {offset}) is smaller than one block of {bs} bytes; raise size= or lower bs=/offset=")]
    RegionTooSmall {
        /// The job's name.
        job: String,
        /// The file.
        path: PathBuf,
        /// Bytes of the region after `offset`.
        region: u64,
        /// Where the region starts in the file, bytes.
        offset: u64,
        /// The job's block size, bytes.
        bs: u64,
    },
    /// A write into an existing file iogauge did not create, without --allow-overwrite.
    #[error("refusing to write into existing file '{path}', which iogauge did not create; remove it, choose another --directory/--filename, or pass --allow-overwrite")]
    ExistingFile {
        /// The existing file.
        path: PathBuf,
    },
    /// A file an earlier, killed iogauge run created and could not remove.
    #[error("refusing to write into '{path}': an earlier iogauge run created it and was killed before it could clean up; it holds only test data, so remove it (rm '{path}') and run again")]
    LeftOver {
        /// The left-over file.
        path: PathBuf,
    },
    /// A file that looks like a data file fio or `--keep-files` left for this job.
    #[error("refusing to write into '{path}': it looks like a data file that fio (which keeps its files) or iogauge --keep-files left for job '{job}'; remove it, or pass --allow-overwrite to let iogauge lay it out anew")]
    FioDataFile {
        /// The data file.
        path: PathBuf,
        /// The job's name.
        job: String,
    },
    /// The directory is on a pseudo filesystem (proc, sysfs, ...), not storage.
    #[error("'{dir}' is on {fs}, a pseudo filesystem the kernel generates, not storage; choose a --directory on a real filesystem")]
    PseudoFilesystem {
        /// The directory.
        dir: PathBuf,
        /// The pseudo filesystem's name.
        fs: &'static str,
    },
    /// A write to a block device without --allow-overwrite.
    #[error("refusing to write into block device '{path}'; this destroys its data. Pass --allow-overwrite if that is really what you want")]
    BlockDevice {
        /// The device node.
        path: PathBuf,
    },
    /// A write to a mounted block device (or one with a mounted partition) without the job's
    /// allow_mounted_write=1, as fio refuses it.
    #[error("refusing to write into block device '{path}': {mounted}; job '{job}' would corrupt that filesystem. Unmount it first, or set allow_mounted_write=1 in the job (with --allow-overwrite) if that is really what you want")]
    MountedDevice {
        /// The device node.
        path: PathBuf,
        /// The job.
        job: String,
        /// What is mounted where ("it is mounted on /mnt").
        mounted: String,
    },
    /// A directory engine's path exists: dircreate makes new ones; dirdelete would remove the
    /// user's without --allow-overwrite.
    #[error("job '{job}': '{path}' already exists; {why}")]
    ExistingDir {
        /// The job.
        job: String,
        /// The path.
        path: PathBuf,
        /// Why that stops the job, and the fix.
        why: &'static str,
    },
    /// An existing file iogauge did not create is smaller than offset + size.
    #[error("'{path}' is {have} bytes, but the job needs {need} bytes (offset + size); iogauge will not extend a file it did not create: lower size=/offset= or pass --allow-overwrite")]
    ExistingTooSmall {
        /// The file.
        path: PathBuf,
        /// Its size, bytes.
        have: u64,
        /// offset + size, bytes.
        need: u64,
    },
    /// The new files would not fit in the filesystem's free space.
    #[error("not enough free space in '{dir}': the jobs need {need} bytes for new files, {avail} bytes are available; lower size= or choose another --directory")]
    NoSpace {
        /// The directory the files go to.
        dir: PathBuf,
        /// Bytes the new files need.
        need: u64,
        /// Bytes available to an unprivileged user.
        avail: u64,
    },
    /// The job's directory does not exist.
    #[error("directory '{dir}' does not exist; create it first or choose another --directory")]
    NoDirectory {
        /// The missing directory.
        dir: PathBuf,
    },
    /// The filesystem refused to open the file with O_DIRECT.
    #[error("the filesystem holding '{path}' refused O_DIRECT ({source}); use --direct=0 or a directory on a filesystem that supports direct I/O (tmpfs does not)")]
    DirectRefused {
        /// The file.
        path: PathBuf,
        /// The open error.
        source: std::io::Error,
    },
    /// With direct=1, a block size or offset is not a multiple of the file's direct I/O alignment.
    #[error("job '{job}': direct=1 needs {what}={value} to be a multiple of {align} bytes, the direct I/O alignment of '{path}'; use a multiple of {align} or direct=0")]
    DirectAlignment {
        /// The job's name.
        job: String,
        /// The option at fault (`bs` or `offset`).
        what: &'static str,
        /// Its value, bytes.
        value: u64,
        /// The alignment direct I/O needs, bytes.
        align: u64,
        /// The file.
        path: PathBuf,
    },
    /// A system call failed while planning or laying out.
    #[error("{op} '{path}': {source}")]
    Io {
        /// What was being done (`cannot open`, `cannot allocate`, `statvfs`, ...).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A signal arrived while a file was being laid out.
    #[error("stopped while laying out '{path}'")]
    Interrupted {
        /// The file being laid out.
        path: PathBuf,
    },
    /// `create_on_open=1` for a job that reads a file that does not exist yet.
    #[error("job '{job}': create_on_open=1 would leave '{path}' empty, and the job reads it (fio fails such a job with EIO); drop create_on_open or use an existing file")]
    CreateOnOpenRead {
        /// The job's name.
        job: String,
        /// The missing file.
        path: PathBuf,
    },
    /// `allow_file_create=0` and a file that does not exist (fio: file creation disallowed by
    /// allow_file_create=0).
    #[error("job '{job}': '{path}' does not exist and file creation is disallowed by allow_file_create=0; create the file first or drop allow_file_create=0")]
    CreateDisallowed {
        /// The job's name.
        job: String,
        /// The missing file.
        path: PathBuf,
    },
    /// `--readonly`: a file would have to be created and laid out (fio: refusing extend of
    /// file due to read-only).
    #[error("refusing to lay out '{path}' in read-only mode (--readonly): it does not exist; read an existing file or drop --readonly")]
    ReadOnly {
        /// The missing file.
        path: PathBuf,
    },
}

impl LayoutError {
    /// The input asks for something that cannot or must not be done (exit 2), as opposed to a
    /// failure while doing it (no space, an I/O error, a signal: exit 1).
    pub(crate) fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            LayoutError::NoSpace { .. } | LayoutError::Io { .. } | LayoutError::Interrupted { .. }
        )
    }
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> LayoutError + 'a {
    move |source| LayoutError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

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

/// Split fio's `filename` list: ':' separates names, '\:' is a literal colon.
pub(crate) fn split_filenames(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|n| !n.is_empty());
    out
}

fn block_device_size(path: &Path) -> std::io::Result<u64> {
    device_size(&File::open(path)?)
}

/// The size of the open block device `f`, bytes.
pub(crate) fn device_size(f: &File) -> std::io::Result<u64> {
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the ioctl writes one u64 into `size`.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size as *mut u64) };
    if r == 0 {
        Ok(size)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Size of an existing file or block device (and whether it is a device), None when it does
/// not exist.
fn existing_size(path: &Path) -> Result<Option<(u64, bool)>, LayoutError> {
    let Ok(md) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if md.file_type().is_block_device() {
        let size = block_device_size(path).map_err(io_err("cannot open block device", path))?;
        Ok(Some((size, true)))
    } else {
        Ok(Some((md.len(), false)))
    }
}

/// fio's start offset of instance `jobnum` in a file of `real_size` bytes (0 when it does not
/// exist yet): offset= plus offset_increment per instance. A percentage is rounded up to a
/// whole block as fio does; iogauge also rounds an absolute offset down to a block.
/// With file_append the offset is the file's size (fio's get_start_offset); offset_align
/// replaces the block size a percentage is rounded up to.
fn start_offset(job: &JobSpec, real_size: u64, jobnum: u32, min_bs: u64) -> u64 {
    if job.files.file_append {
        return real_size;
    }
    let inc = job.blocks.offset_increment * jobnum as u64;
    match job.offset {
        SizeSpec::Bytes(b) => {
            let o = b + inc;
            o - o % min_bs
        }
        SizeSpec::Percent(p) => {
            let o = (real_size as f64 * p / 100.0) as u64 + inc;
            let align = job.files.offset_align.unwrap_or(min_bs);
            o.div_ceil(align) * align
        }
    }
}

/// The files of instance `jobnum` of `job`, with regions and sizes resolved.
pub(crate) fn plan_files(job: &JobSpec, jobnum: u32) -> Result<Vec<FilePlan>, LayoutError> {
    let dir = job.directory.clone();
    let names: Vec<PathBuf> = match &job.filename {
        Some(list) => split_filenames(list)
            .into_iter()
            .map(|n| {
                let p = PathBuf::from(&n);
                match &dir {
                    Some(d) if p.is_relative() => d.join(p),
                    _ => p,
                }
            })
            .collect(),
        None => (0..job.nrfiles.max(1))
            .map(|i| {
                let n = job.files.file_name(&job.name, jobnum, i);
                dir.as_ref()
                    .map(|d| d.join(&n))
                    .unwrap_or_else(|| PathBuf::from(n))
            })
            .collect(),
    };
    if let Some(d) = &dir {
        if !d.is_dir() {
            return Err(LayoutError::NoDirectory { dir: d.clone() });
        }
    }
    let nfiles = names.len() as u64;
    let min_bs = job.min_bs();
    // fio 3.33 (filesetup.c, setup_files): without filesize=, each file's region is
    // size/nrfiles, and when that leaves a whole block or more over, the first files get one
    // more block each. A size= percentage sets no bytes here: it scales each file below.
    // fill_device without a size: fio writes until ENOSPC, so the region is more than the
    // filesystem can hold (its whole size), shared by the files in whole blocks.
    let size = match (job.size, job.filesize, names.first()) {
        (None, None, Some(first))
            if job.files.fill_device && !matches!(existing_size(first)?, Some((_, true))) =>
        {
            let all = fs_bytes(&parent_dir(first))?;
            Some(SizeSpec::Bytes(
                (all / nfiles.max(1) / min_bs * min_bs * nfiles).max(min_bs),
            ))
        }
        (s, _, _) => s,
    };
    let per_size = match (job.filesize, size) {
        (None, Some(SizeSpec::Bytes(b))) => b / nfiles,
        _ => 0,
    };
    let mut extra = match (job.filesize, size) {
        (None, Some(SizeSpec::Bytes(b))) => (b - per_size * nfiles) / min_bs,
        _ => 0,
    };
    let size_pct = match job.size {
        Some(SizeSpec::Percent(p)) if p < 100.0 => Some(p),
        _ => None,
    };
    // filesize=LOW-HIGH: sizes drawn per file from a generator seeded by the job and instance
    // (the same on every call, so planning twice gives the same files).
    let mut size_rng = Rng::new(job.randseed ^ 0xF11E ^ ((jobnum as u64) << 32));
    let mut plans = Vec::with_capacity(names.len());
    for path in names {
        let existing = existing_size(&path)?;
        let ex_size = existing.map(|(s, _)| s);
        // fio: the start offset is taken against the file's real size, which is 0 for a file
        // that does not exist yet (so offset=N% of a new file is 0).
        let offset = start_offset(job, ex_size.unwrap_or(0), jobnum, min_bs);
        let bad_offset = |size: u64| LayoutError::OffsetBeyondFile {
            job: job.name.clone(),
            path: path.clone(),
            offset,
            size,
        };
        // The region (fio's io_size): with filesize= the file is that size and the region is
        // what follows the offset in it; without, the region is size=/nrfiles after the offset.
        let mut region = match job.filesize {
            None => {
                let bonus = if extra > 0 && per_size > 0 {
                    extra -= 1;
                    min_bs
                } else {
                    0
                };
                match (per_size + bonus, ex_size) {
                    // file_append: the size after the file's end, or nothing to do.
                    (0, Some(_)) if job.files.file_append => {
                        return Err(LayoutError::NoSize {
                            job: job.name.clone(),
                            path,
                        })
                    }
                    (0, Some(s)) if offset > s => return Err(bad_offset(s)),
                    // No size= in bytes: the existing file after the offset.
                    (0, Some(s)) => s - offset,
                    (0, None) => {
                        return Err(match job.size {
                            Some(SizeSpec::Percent(pct)) => LayoutError::PercentOfMissing {
                                job: job.name.clone(),
                                pct,
                                path,
                            },
                            _ => LayoutError::NoSize {
                                job: job.name.clone(),
                                path,
                            },
                        })
                    }
                    (b, _) => b,
                }
            }
            // file_append: filesize= is what is written after the file's end.
            Some(SizeSpec::Bytes(low)) if job.files.file_append => low,
            Some(SizeSpec::Bytes(low)) => {
                let high = job.files.filesize_high.unwrap_or(low);
                // fio: an existing file already inside the range keeps its size.
                let file_size = match ex_size {
                    Some(s) if (low..=high).contains(&s) => s,
                    _ if high > low => {
                        let r = size_rng.unit_f64();
                        let s = low + ((high - low) as f64 * r) as u64;
                        s - s % min_bs
                    }
                    _ => low,
                };
                // fio checks the offset against the range's low end (or the kept size).
                let limit = match ex_size {
                    Some(s) if (low..=high).contains(&s) => s,
                    _ => low,
                };
                if offset > limit || offset > file_size {
                    return Err(bad_offset(file_size));
                }
                file_size - offset
            }
            Some(SizeSpec::Percent(pct)) => match ex_size {
                Some(s) => {
                    let file_size = (s as f64 * pct / 100.0) as u64;
                    if offset > file_size {
                        return Err(bad_offset(file_size));
                    }
                    file_size - offset
                }
                None => {
                    return Err(LayoutError::PercentOfMissing {
                        job: job.name.clone(),
                        pct,
                        path,
                    })
                }
            },
        };
        // fio: size=N% takes N% of the whole file (offset included), at most what follows
        // the offset, in whole blocks.
        if let Some(pct) = size_pct {
            let share = (((region + offset) as f64 * pct / 100.0) as u64).min(region);
            region = share - share % min_bs;
        }
        if region < min_bs {
            return Err(LayoutError::RegionTooSmall {
                job: job.name.clone(),
                path,
                region,
                offset,
                bs: min_bs,
            });
        }
        plans.push(FilePlan {
            size: offset + region,
            offset,
            region,
            existed: existing.is_some(),
            is_block: existing.map(|(_, b)| b).unwrap_or(false),
            path,
        });
    }
    Ok(plans)
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

/// Refuse what could destroy data iogauge does not own. `created` holds files created earlier in
/// this run (numjobs clones share a `filename`).
pub(crate) fn check_safety(
    job: &JobSpec,
    plan: &FilePlan,
    allow_overwrite: bool,
    created: &CreatedFiles,
) -> Result<(), LayoutError> {
    if job.files.create_on_open && job_reads(job) && !plan.existed {
        return Err(LayoutError::CreateOnOpenRead {
            job: job.name.clone(),
            path: plan.path.clone(),
        });
    }
    if allow_overwrite || !plan.existed || created.contains(&plan.path) {
        return Ok(());
    }
    if plan.is_block {
        if job_writes(job) {
            return Err(LayoutError::BlockDevice {
                path: plan.path.clone(),
            });
        }
        return Ok(());
    }
    if job_writes(job) {
        return Err(existing_file_error(job, &plan.path));
    }
    let have = std::fs::metadata(&plan.path).map(|m| m.len()).unwrap_or(0);
    if have < plan.size {
        return Err(LayoutError::ExistingTooSmall {
            path: plan.path.clone(),
            have,
            need: plan.size,
        });
    }
    Ok(())
}

/// A directory engine's path that exists before the run: dircreate makes new directories
/// (fio 3.37's mkdir fails with EEXIST), dirdelete removes them (they are the user's, so only
/// with --allow-overwrite); dirstat only looks at them.
pub(crate) fn check_dir_safety(
    job: &JobSpec,
    op: crate::model::engines::FileOp,
    plan: &FilePlan,
    allow_overwrite: bool,
) -> Result<(), LayoutError> {
    use crate::model::engines::FileOp;
    let why = match op {
        FileOp::DirCreate => {
            "ioengine=dircreate makes new directories (fio's mkdir fails with EEXIST): remove \
             it or use another directory"
        }
        FileOp::DirDelete if !allow_overwrite => {
            "ioengine=dirdelete would remove it, and iogauge did not create it: remove it, use \
             another directory, or pass --allow-overwrite"
        }
        _ => return Ok(()),
    };
    Err(LayoutError::ExistingDir {
        job: job.name.clone(),
        path: plan.path.clone(),
        why,
    })
}

/// Extended attribute set on every file iogauge lays out, so that a killed run's leftovers are
/// recognised as such later (the value is the creating process's id).
const XATTR: &std::ffi::CStr = c"user.iogauge";

/// Marks a file iogauge just created. Best effort: a filesystem without user xattrs still gets
/// the file; only the later message is less specific.
pub(crate) fn tag_created(f: &File) {
    let pid = std::process::id().to_string();
    // SAFETY: plain syscall on an open fd with a valid name and buffer.
    unsafe {
        libc::fsetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr(),
            pid.as_ptr().cast(),
            pid.len(),
            0,
        );
    }
}

/// The pid in `path`'s iogauge tag, if it has one.
pub(crate) fn tag_pid(path: &Path) -> Option<u32> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    let mut buf = [0u8; 16];
    // SAFETY: valid C strings and a buffer of the length given.
    let n = unsafe {
        libc::getxattr(
            c.as_ptr(),
            XATTR.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).ok()?;
    std::str::from_utf8(&buf[..n]).ok()?.parse().ok()
}

/// A file kept on purpose (`--keep-files`, `unlink=0`) is the user's now, not a leftover.
pub(crate) fn untag(path: &Path) {
    if let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) {
        // SAFETY: valid C strings; failure only means there was no tag.
        unsafe {
            libc::removexattr(c.as_ptr(), XATTR.as_ptr());
        }
    }
}

/// Whether an earlier iogauge run created `path` (its tag, or the `iogauge-` prefix that
/// `check`'s and the small-files test's names carry).
pub(crate) fn created_by_iogauge(path: &Path) -> bool {
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("iogauge-"))
    {
        return true;
    }
    tag_pid(path).is_some()
}

/// fio names its files `<job>.<jobnum>.<filenum>`.
fn looks_like_fio_file(job: &JobSpec, path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some(rest) = name.strip_prefix(&format!("{}.", job.name)) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('.').collect();
    parts.len() == 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Why an existing file is not written: a killed run's leftover, fio's data file, or a file of
/// unknown origin.
fn existing_file_error(job: &JobSpec, path: &Path) -> LayoutError {
    let path = path.to_path_buf();
    if created_by_iogauge(&path) {
        LayoutError::LeftOver { path }
    } else if looks_like_fio_file(job, &path) {
        LayoutError::FioDataFile {
            path,
            job: job.name.clone(),
        }
    } else {
        LayoutError::ExistingFile { path }
    }
}

/// Check that every filesystem has room for the new files: `need` is (directory, bytes) pairs.
pub(crate) fn check_free_space(need: &[(PathBuf, u64)]) -> Result<(), LayoutError> {
    // Group by filesystem (st_dev) so two jobs in one directory add up.
    let mut by_dev: Vec<(u64, PathBuf, u64)> = Vec::new();
    for (dir, bytes) in need {
        let md = std::fs::metadata(dir).map_err(io_err("cannot stat directory", dir))?;
        // Before free space: /proc reports none, and "no space" would send the user astray.
        if let Some(fs) = super::fs::pseudo(dir) {
            return Err(LayoutError::PseudoFilesystem {
                dir: dir.clone(),
                fs,
            });
        }
        match by_dev.iter_mut().find(|(d, _, _)| *d == md.dev()) {
            Some(e) => e.2 += bytes,
            None => by_dev.push((md.dev(), dir.clone(), *bytes)),
        }
    }
    for (_, dir, bytes) in by_dev {
        let avail = free_bytes(&dir)?;
        if bytes > avail {
            return Err(LayoutError::NoSpace {
                dir,
                need: bytes,
                avail,
            });
        }
    }
    Ok(())
}

pub(crate) fn free_bytes(dir: &Path) -> Result<u64, LayoutError> {
    statvfs(dir).map(|s| blocks_bytes(s.f_bavail, s.f_frsize))
}

// The field types differ between targets (u32 on some 32-bit ones).
#[allow(clippy::unnecessary_cast)]
fn blocks_bytes(blocks: libc::fsblkcnt_t, size: libc::c_ulong) -> u64 {
    blocks as u64 * size as u64
}

/// The whole size of the filesystem holding `dir`: more than any file in it can hold.
fn fs_bytes(dir: &Path) -> Result<u64, LayoutError> {
    statvfs(dir).map(|s| blocks_bytes(s.f_blocks, s.f_frsize))
}

fn statvfs(dir: &Path) -> Result<libc::statvfs, LayoutError> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|_| LayoutError::Io {
        op: "invalid path",
        path: dir.to_path_buf(),
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    })?;
    // SAFETY: statvfs is plain data; all zeroes is a valid value.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string, s a valid out pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return Err(io_err("statvfs", dir)(std::io::Error::last_os_error()));
    }
    Ok(s)
}

/// Directory in which a planned file lives (for the free-space check).
pub(crate) fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Create (if needed) and lay out one file. Returns true when it was laid out (new file).
pub(crate) fn lay_out(
    job: &JobSpec,
    plan: &FilePlan,
    created: &CreatedFiles,
    stop: &AtomicBool,
) -> Result<bool, LayoutError> {
    if plan.existed || created.contains(&plan.path) {
        return Ok(false);
    }
    // Recorded before it exists, so that even a SIGKILL between the two leaves a trace.
    created
        .intend([plan.path.as_path()])
        .map_err(io_err("cannot create", &plan.path))?;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&plan.path)
        .map_err(io_err("cannot create", &plan.path))?;
    created.register(&plan.path);
    tag_created(&f);
    if job.files.create_on_open || job.files.fill_device {
        // fio creates the file empty when it opens it: no layout, no preallocation; the
        // writes extend it (reads of a new file are refused in `check_safety`). fill_device
        // neither preallocates nor sets a size: the writes go until the filesystem is full.
        return Ok(false);
    }
    // fio's overwrite=1 lays out a write-only job's files too (reads always need data).
    if job_reads(job) || job.files.overwrite {
        write_out(&f, job, plan, stop)?;
    } else {
        preallocate(&f, plan.size, job.fallocate).map_err(io_err("cannot allocate", &plan.path))?;
    }
    Ok(true)
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
    stop: &AtomicBool,
) -> Result<(), LayoutError> {
    use std::io::Write;
    preallocate(f, plan.size, job.fallocate).map_err(io_err("cannot allocate", &plan.path))?;
    let bs = job.bs_range(DDIR_WRITE).1.clamp(1, plan.size.max(1)) as usize;
    let mut buf = AlignedBuf::new(bs);
    let mut rng = Rng::new(0x1a7e);
    if job.zero_buffers {
        buf.fill(&mut rng, true);
    }
    let mut out = f;
    let mut left = plan.size;
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
        out.write_all(chunk)
            .map_err(io_err("cannot lay out", &plan.path))?;
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
        offset: 0,
        len: plan.size,
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
    stop: &AtomicBool,
) -> Result<(), LayoutError> {
    use std::os::unix::fs::FileExt;
    let f = File::open(&plan.path).map_err(io_err("cannot open", &plan.path))?;
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

/// Open flags for the job's I/O.
pub(crate) fn open_for_io(job: &JobSpec, plan: &FilePlan) -> Result<File, LayoutError> {
    let mut flags = 0;
    if job.direct {
        flags |= libc::O_DIRECT;
    }
    match job.open_sync {
        OpenSync::None => {}
        OpenSync::Sync => flags |= libc::O_SYNC,
        OpenSync::Dsync => flags |= libc::O_DSYNC,
    }
    let mut oo = OpenOptions::new();
    oo.read(true).custom_flags(flags);
    // fio's falloc engine opens its files read-write for every direction.
    if job_writes(job) || job.ioengine == crate::model::IoEngine::Falloc {
        oo.write(true);
    }
    match oo.open(&plan.path) {
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

/// How to drop the cached pages of one file's I/O region, as fio's `invalidate=1` does: on open,
/// and again by the worker at the start of every later pass (a plain copy of the fd, which the
/// orchestrator keeps open until the worker is done).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheDrop {
    fd: RawFd,
    offset: u64,
    len: u64,
    is_block: bool,
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

    fn job(name: &str, dir: &Path) -> JobSpec {
        JobSpec {
            name: name.into(),
            directory: Some(dir.to_path_buf()),
            size: Some(SizeSpec::Bytes(1 << 20)),
            ..JobSpec::default()
        }
    }

    #[test]
    fn regions_follow_fio_setup_files() {
        let d = tempfile::tempdir().unwrap();
        let k = 1024u64;
        let plan = |f: &dyn Fn(&mut JobSpec)| {
            let mut j = job("t", d.path());
            j.size = None;
            j.bs = [16 * k; 3];
            f(&mut j);
            let p = &plan_files(&j, 0).unwrap()[0];
            (p.offset, p.region, p.size)
        };
        // filesize=256k offset=128k: the file is 256 KiB, the region its second half.
        assert_eq!(
            plan(&|j| {
                j.filesize = Some(SizeSpec::Bytes(256 * k));
                j.offset = SizeSpec::Bytes(128 * k);
            }),
            (128 * k, 128 * k, 256 * k)
        );
        // size= without filesize=: the region follows the offset.
        assert_eq!(
            plan(&|j| {
                j.size = Some(SizeSpec::Bytes(256 * k));
                j.offset = SizeSpec::Bytes(128 * k);
            }),
            (128 * k, 256 * k, 384 * k)
        );
        // offset=N% of a file that does not exist yet is 0 (fio takes it of the real size).
        assert_eq!(
            plan(&|j| {
                j.size = Some(SizeSpec::Bytes(256 * k));
                j.offset = SizeSpec::Percent(50.0);
            }),
            (0, 256 * k, 256 * k)
        );
        // size=50% with filesize=: half the whole file, at most what follows the offset.
        assert_eq!(
            plan(&|j| {
                j.filesize = Some(SizeSpec::Bytes(256 * k));
                j.size = Some(SizeSpec::Percent(50.0));
                j.offset = SizeSpec::Bytes(64 * k);
            }),
            (64 * k, 128 * k, 192 * k)
        );
        // An offset past filesize is refused as fio does.
        let mut j = job("t", d.path());
        j.filesize = Some(SizeSpec::Bytes(256 * k));
        j.offset = SizeSpec::Bytes(512 * k);
        assert!(matches!(
            plan_files(&j, 0),
            Err(LayoutError::OffsetBeyondFile { .. })
        ));
        // On an existing file, offset=N% is of its size, rounded up to a block.
        let path = d.path().join("t.0.0");
        std::fs::write(&path, vec![1u8; (100 * k) as usize]).unwrap();
        let (o, r, _) = plan(&|j| j.offset = SizeSpec::Percent(30.0));
        assert_eq!((o, r), (32 * k, 68 * k));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn names_follow_fio() {
        let d = tempfile::tempdir().unwrap();
        let mut j = job("mytest", d.path());
        j.nrfiles = 2;
        let p = plan_files(&j, 3).unwrap();
        assert_eq!(p[0].path, d.path().join("mytest.3.0"));
        assert_eq!(p[1].path, d.path().join("mytest.3.1"));
        assert_eq!(p[0].region, 512 * 1024);
    }

    #[test]
    fn filename_list_with_escaped_colon() {
        assert_eq!(split_filenames("a:b\\:c"), vec!["a", "b:c"]);
    }

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

    #[test]
    fn refuses_existing_file_for_writes_unless_allowed() {
        let d = tempfile::tempdir().unwrap();
        let mut w = job("w", d.path());
        w.rw.kind = RwKind::Write;
        w.filename = Some("precious.db".into());
        std::fs::write(d.path().join("precious.db"), b"precious").unwrap();
        let p = &plan_files(&w, 0).unwrap()[0];
        let created = CreatedFiles::new();
        let e = check_safety(&w, p, false, &created).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "refusing to write into existing file '{}', which iogauge did not create; remove it, choose another --directory/--filename, or pass --allow-overwrite",
                p.path.display()
            )
        );
        assert!(check_safety(&w, p, true, &created).is_ok());
        // fio's own naming (<job>.<n>.<m>) is called fio's data file.
        w.filename = None;
        std::fs::write(d.path().join("w.0.0"), b"fio data").unwrap();
        let p = &plan_files(&w, 0).unwrap()[0];
        assert_eq!(
            check_safety(&w, p, false, &created).unwrap_err().to_string(),
            format!(
                "refusing to write into '{}': it looks like a data file that fio (which keeps its files) or iogauge --keep-files left for job 'w'; remove it, or pass --allow-overwrite to let iogauge lay it out anew",
                p.path.display()
            )
        );
        // Reading an existing file is fine when it is large enough.
        let mut r = job("w", d.path());
        r.size = Some(SizeSpec::Bytes(4));
        r.bs = [4; 3];
        let p = &plan_files(&r, 0).unwrap()[0];
        assert!(check_safety(&r, p, false, &created).is_ok());
    }

    #[test]
    fn a_killed_runs_file_is_called_a_leftover() {
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut w = job("left", d.path());
        w.rw.kind = RwKind::Write;
        let p = &plan_files(&w, 0).unwrap()[0];
        // Laid out by one run (tagged), then that run "dies" without cleaning up.
        assert!(lay_out(&w, p, &CreatedFiles::new(), &AtomicBool::new(false)).unwrap());
        let p = &plan_files(&w, 0).unwrap()[0];
        assert_eq!(
            check_safety(&w, p, false, &CreatedFiles::new())
                .unwrap_err()
                .to_string(),
            format!(
                "refusing to write into '{0}': an earlier iogauge run created it and was killed before it could clean up; it holds only test data, so remove it (rm '{0}') and run again",
                p.path.display()
            )
        );
        // check's names carry the prefix even where xattrs are not supported.
        assert!(created_by_iogauge(Path::new("/x/iogauge-etcd.1.2")));
        assert!(!created_by_iogauge(Path::new("/nonexistent/mytest.0.0")));
    }

    #[test]
    fn pseudo_filesystems_are_refused_before_free_space() {
        let e = check_free_space(&[(PathBuf::from("/proc"), 1 << 20)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "'/proc' is on proc, a pseudo filesystem the kernel generates, not storage; choose a --directory on a real filesystem"
        );
    }

    #[test]
    fn free_space_check_names_the_numbers() {
        let d = tempfile::tempdir().unwrap();
        let e = check_free_space(&[(d.path().to_path_buf(), u64::MAX / 2)]).unwrap_err();
        assert!(e.to_string().starts_with("not enough free space in"), "{e}");
        assert!(check_free_space(&[(d.path().to_path_buf(), 4096)]).is_ok());
    }

    #[test]
    fn missing_size_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let mut j = job("nosize", d.path());
        j.size = None;
        let e = plan_files(&j, 0).unwrap_err();
        assert!(matches!(e, LayoutError::NoSize { .. }));
    }
}
