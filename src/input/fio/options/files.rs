//! File handling: filename_format, allow_file_create, pre_read, create_on_open, openfiles (fio 3.33 semantics; the model
//! is `model::files`).

use super::Opt;
use crate::model::units::{parse_bool, parse_bytes, parse_int};
use crate::model::JobSpec;

/// The options of this group.
pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "filename_format",
        [],
        false,
        "Names of the job's files: $jobname, $jobnum, $filenum, e.g. $jobname.$jobnum.$filenum",
        |j, v| {
            if v.contains('/') && v.split('/').any(|p| p == "..") {
                return Err(
                    "'..' is not allowed in filename_format; use directory= to place the files"
                        .into(),
                );
            }
            j.files.filename_format = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "allow_file_create",
        [],
        false,
        "1 (default): files that do not exist may be created",
        |j, v| {
            j.files.allow_file_create = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "create_on_open",
        [],
        false,
        "Create new files empty when opened, without laying them out",
        |j, v| {
            j.files.create_on_open = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "pre_read",
        [],
        false,
        "Read the files into the page cache before starting (turns invalidate off)",
        |j, v| {
            j.files.pre_read = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "openfiles",
        [],
        false,
        "Files kept open at once (0: all); a file is closed when done and the next one opened",
        |j, v| {
            j.files.open_files = parse_int(v)
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    format!("expected a number of files, e.g. openfiles=4 (0: all); got '{v}'")
                })?;
            Ok(())
        }
    ),
    opt!(
        "unlink_each_loop",
        [],
        false,
        "Unlink the files before each loop after the first; the loop writes new ones",
        |j, v| {
            j.files.unlink_each_loop = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "create_fsync",
        [],
        false,
        "1 (default): fsync a file after laying it out",
        |j, v| {
            j.files.create_fsync = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "create_serialize",
        [],
        false,
        "1 (default): lay out files one job after another (iogauge always does)",
        |j, v| {
            j.files.create_serialize = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "overwrite",
        [],
        false,
        "1: a write-only job lays out new files with data first (0, default: preallocates)",
        |j, v| {
            j.files.overwrite = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "file_append",
        [],
        false,
        "I/O starts at the end of the file (offset = its size)",
        |j, v| {
            j.files.file_append = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "offset_align",
        [],
        false,
        "What offset=N% is rounded up to (default: the smallest block size)",
        |j, v| {
            let a = parse_bytes(v).ok().filter(|&a| a > 0).ok_or_else(|| {
                format!("expected a size of 1 byte or more, e.g. offset_align=4k; got '{v}'")
            })?;
            j.files.offset_align = Some(a);
            Ok(())
        }
    ),
    opt!(
        "fill_device",
        ["fill_fs"],
        false,
        "Write until the filesystem is full; ENOSPC ends the job without an error",
        |j, v| {
            j.files.fill_device = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "opendir",
        [],
        false,
        "Every file under this directory (recursively) becomes one of the job's files",
        |j, v| {
            j.files.opendir = Some(std::path::PathBuf::from(v));
            Ok(())
        }
    ),
    opt!(
        "allow_mounted_write",
        [],
        false,
        "1: a job may write a mounted block device (still needs --allow-overwrite)",
        |j, v| {
            j.files.allow_mounted_write = parse_bool(v)?;
            Ok(())
        }
    ),
];

/// `filesize=LOW-HIGH`: each file's size is drawn in the range (fio's get_rand_file_size).
pub(super) fn set_filesize_range(j: &mut JobSpec, low: &str, high: &str) -> Result<(), String> {
    const HINT: &str = "expected a size or a range of sizes, e.g. filesize=1m or filesize=1m-4m";
    let low = crate::model::units::parse_bytes(low.trim()).map_err(|_| HINT)?;
    let high = crate::model::units::parse_bytes(high.trim()).map_err(|_| HINT)?;
    if low == 0 || high < low {
        return Err(format!(
            "the range must go from 1 byte or more up to at least its start; {HINT}"
        ));
    }
    j.filesize = Some(crate::model::SizeSpec::Bytes(low));
    j.files.filesize_high = (high > low).then_some(high);
    Ok(())
}

/// fio's opendir: every regular file under `dir` (recursively, in name order) is added to the
/// job's `filename` list, after the names it has.
fn add_dir_files(j: &mut JobSpec, dir: &std::path::Path) -> Result<(), String> {
    fn walk(d: &std::path::Path, out: &mut Vec<String>) -> Result<(), String> {
        let rd = std::fs::read_dir(d).map_err(|e| {
            format!(
                "opendir: cannot read the directory '{}': {e}; name an existing directory",
                d.display()
            )
        })?;
        let mut entries: Vec<_> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            let Ok(md) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if md.is_dir() {
                walk(&p, out)?;
            } else if md.is_file() {
                let name = p.to_str().ok_or_else(|| {
                    format!("opendir: '{}' is not valid UTF-8; rename it", p.display())
                })?;
                // ':' separates names in filename=; '\:' is a literal colon.
                out.push(name.replace(':', "\\:"));
            }
        }
        Ok(())
    }
    let mut names = Vec::new();
    walk(dir, &mut names)?;
    if names.is_empty() {
        return Err(format!(
            "opendir: the directory '{}' holds no files; add some or drop opendir",
            dir.display()
        ));
    }
    let list = names.join(":");
    j.filename = Some(match j.filename.take().filter(|f| !f.is_empty()) {
        Some(f) => format!("{f}:{list}"),
        None => list,
    });
    Ok(())
}

/// fio's fix-ups of this group once a job is complete (the checks are `JobSpec::check`'s):
/// pre_read clears invalidate, opendir's files join the filename list, openfiles at or above
/// the number of files means all of them (0).
pub(crate) fn settle(j: &mut JobSpec) -> Result<(), String> {
    if j.files.pre_read && !j.direct {
        // fio: pre_read clears invalidate, or the cache just filled would be dropped.
        j.invalidate = false;
    }
    if let Some(dir) = j.files.opendir.take() {
        add_dir_files(j, &dir)?;
        j.files.opendir = Some(dir);
    }
    if j.files.open_files as u64 >= j.file_count() {
        j.files.open_files = 0;
    }
    Ok(())
}
