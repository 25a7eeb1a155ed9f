//! File handling settings of one job (fio's filename_format, allow_file_create, pre_read,
//! create_on_open, openfiles, unlink_each_loop, create_fsync, create_serialize, overwrite,
//! file_append, offset_align, fill_device, opendir).
//! `Default` is fio 3.33's defaults.

/// The files group's settings of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct FilesSpec {
    /// The job's `filename` was chosen by iogauge itself (`check`'s unique names per run), not
    /// written by the user: options that refuse a user's file names (unlink_each_loop) allow
    /// it. Never set from a job file or a profile.
    pub iogauge_names: bool,
    /// How files are named when `filename` is not given (fio `filename_format`); None is fio's
    /// `$jobname.$jobnum.$filenum`.
    pub filename_format: Option<String>,
    /// Files that do not exist may be created (fio `allow_file_create`, default 1).
    pub allow_file_create: bool,
    /// Read the files' regions into the page cache before the job starts (fio `pre_read`);
    /// it also turns `invalidate` off, as in fio.
    pub pre_read: bool,
    /// Create new files empty when the job opens them, without laying them out or
    /// preallocating (fio `create_on_open`); only for jobs that do not read new files.
    pub create_on_open: bool,
    /// Upper end of a `filesize=LOW-HIGH` range (the low end is `JobSpec::filesize`): each file
    /// gets a size drawn in [LOW, HIGH), rounded down to the smallest block size.
    pub filesize_high: Option<u64>,
    /// fio `openfiles`: files kept open at once; 0 (fio's default) means all. A value at or
    /// above the number of files is lowered to 0, as fio lowers it to the number of files.
    /// Below it, a file is closed when its region is done and the next one opened
    /// (`workload/openfiles.rs`); synchronous engines only.
    pub open_files: u32,
    /// fio `unlink_each_loop`: before each loop after the first, the job's files are unlinked
    /// and the loop writes new, empty ones (write-only jobs on synchronous engines).
    pub unlink_each_loop: bool,
    /// fio `create_fsync` (default 1): fsync a file after laying it out.
    pub create_fsync: bool,
    /// fio `create_serialize` (default 1): lay out files one job after another. iogauge always
    /// does; 0 is accepted and lays out the same files in the same order.
    pub create_serialize: bool,
    /// fio `overwrite` (default 0): a write-only job lays out its new files with data before
    /// the writes (1), instead of only preallocating them (0). Jobs that read always lay out.
    pub overwrite: bool,
    /// fio `file_append`: I/O starts at the end of the file (offset = its size; 0 when new).
    pub file_append: bool,
    /// fio `offset_align`: what `offset=N%` is rounded up to (None: the smallest block size).
    pub offset_align: Option<u64>,
    /// fio `fill_device`/`fill_fs`: write until the filesystem is full; ENOSPC ends the job
    /// without an error. Without a size, the size is the free space.
    pub fill_device: bool,
    /// fio `opendir`: the directory whose files (recursively) were added to `filename`.
    pub opendir: Option<std::path::PathBuf>,
    /// fio `allow_mounted_write`: a job may write a block device that is mounted (or has a
    /// mounted partition); without it such a job is refused before the run, as fio does. The
    /// device itself still needs `--allow-overwrite`.
    pub allow_mounted_write: bool,
}

impl Default for FilesSpec {
    fn default() -> Self {
        FilesSpec {
            iogauge_names: false,
            filename_format: None,
            allow_file_create: true,
            pre_read: false,
            create_on_open: false,
            filesize_high: None,
            open_files: 0,
            unlink_each_loop: false,
            create_fsync: true,
            create_serialize: true,
            overwrite: false,
            file_append: false,
            offset_align: None,
            fill_device: false,
            opendir: None,
            allow_mounted_write: false,
        }
    }
}

impl FilesSpec {
    /// fio's make_filename: `$jobname`, `$jobnum`, `$filenum` and `$clientuid` (empty outside
    /// fio's client/server mode, which iogauge does not have) replaced, keywords matched
    /// without regard to case.
    pub(crate) fn file_name(&self, job: &str, jobnum: u32, filenum: u32) -> String {
        let Some(fmt) = self.filename_format.as_deref().filter(|f| !f.is_empty()) else {
            return format!("{job}.{jobnum}.{filenum}");
        };
        let mut out = fmt.to_string();
        let subs = [
            ("$jobname", job.to_string()),
            ("$jobnum", jobnum.to_string()),
            ("$filenum", filenum.to_string()),
            ("$clientuid", String::new()),
        ];
        for (key, val) in subs {
            // Replace every occurrence, keyword by keyword, as fio does; the search goes on after
            // the replacement, so a job named "$jobname" cannot make it loop forever.
            let mut from = 0;
            while let Some(at) = out[from..].to_ascii_lowercase().find(key).map(|i| from + i) {
                out.replace_range(at..at + key.len(), &val);
                from = at + val.len();
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_placeholders() {
        let mut f = FilesSpec::default();
        assert_eq!(f.file_name("j", 1, 2), "j.1.2");
        f.filename_format = Some("data-$JOBNAME-$jobnum/$filenum$clientuid.bin".into());
        assert_eq!(f.file_name("j", 1, 2), "data-j-1/2.bin");
        f.filename_format = Some("same".into());
        assert_eq!(f.file_name("j", 0, 0), "same");
    }
}
