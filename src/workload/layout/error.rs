//! `LayoutError`: why a job's files cannot be planned, checked or laid out, and which of those
//! failures are bad input (exit 2).

use std::path::{Path, PathBuf};

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
    /// A name that exists without being a file: a dangling symlink.
    #[error("'{path}' is {what}; iogauge creates its files only where nothing is (never through a symlink): remove it or choose another --directory/--filename")]
    InTheWay {
        /// The name in the way.
        path: PathBuf,
        /// What is there.
        what: &'static str,
    },
    /// The directory a job's file should be created in does not exist.
    #[error("directory '{dir}' does not exist; create it first or choose another --directory/--filename")]
    MissingDir {
        /// The missing directory.
        dir: PathBuf,
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
    /// A directory where a job needs its data file.
    #[error("job '{job}': '{path}' is a directory, not a data file; fio stops there with 'Is a directory' (error 21): {fix}")]
    IsADirectory {
        /// The job.
        job: String,
        /// The directory.
        path: PathBuf,
        /// How to get what was meant.
        fix: &'static str,
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

pub(super) fn io_err<'a>(
    op: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> LayoutError + 'a {
    move |source| LayoutError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}
