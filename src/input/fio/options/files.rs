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

/// The number of files of a job: the names in `filename` (':' separates, '\:' is a colon),
/// else nrfiles.
fn file_count(j: &JobSpec) -> u64 {
    match &j.filename {
        Some(list) => list
            .replace("\\:", "")
            .split(':')
            .filter(|n| !n.is_empty())
            .count() as u64,
        None => j.nrfiles.max(1) as u64,
    }
}

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

/// What iogauge's unlink_each_loop covers: write-only jobs whose loops are whole passes over
/// their own files, on a synchronous engine.
fn check_unlink_each_loop(j: &JobSpec) -> Result<(), String> {
    use crate::model::{IoEngine, RwKind};
    let name = &j.name;
    if j.rw.kind != RwKind::Write {
        // Measured with fio 3.33: rw=read stops with ENOENT at the second loop's open, a mixed
        // job with EIO ("full resid") reading the new empty file.
        return Err(format!(
            "job '{name}': unlink_each_loop needs a write-only job (rw=write or randwrite): \
             fio 3.33 unlinks the files after the first loop, so the next loop's reads fail \
             (ENOENT for rw=read, EIO on the new empty file for mixed jobs)"
        ));
    }
    if !matches!(
        j.ioengine,
        IoEngine::Sync | IoEngine::Psync | IoEngine::Vsync | IoEngine::Pvsync | IoEngine::Pvsync2
    ) {
        return Err(format!(
            "job '{name}': unlink_each_loop with ioengine={} is not supported by iogauge yet; \
             use a synchronous engine (psync, sync, vsync, pvsync, pvsync2)",
            j.ioengine.fio_name()
        ));
    }
    if j.filename.is_some() {
        return Err(format!(
            "job '{name}': unlink_each_loop with filename= is not supported by iogauge yet \
             (the files may be another job's or yours); let iogauge name the files"
        ));
    }
    if j.rw.random && !j.uses_random_map() {
        return Err(format!(
            "job '{name}': unlink_each_loop with random offsets needs the random map (loops \
             are passes over every block): drop norandommap, random_distribution, \
             random_generator=lfsr or blockalign"
        ));
    }
    Ok(())
}

/// What iogauge's openfiles below the number of files covers: the files are closed and
/// reopened under the descriptors the engine holds, which needs nothing in flight and nothing
/// registered or mapped, and every file's end-of-job sync or verify pass to find it open.
fn check_open_files(j: &JobSpec, files: u64) -> Result<(), String> {
    use crate::model::{FileService, IoEngine};
    let (name, n) = (&j.name, j.files.open_files);
    let head = format!("job '{name}': openfiles={n} below the job's {files} files");
    let engine_ok = matches!(
        j.ioengine,
        IoEngine::Sync
            | IoEngine::Psync
            | IoEngine::Vsync
            | IoEngine::Pvsync
            | IoEngine::Pvsync2
            | IoEngine::Falloc
            | IoEngine::Ftruncate
    ) || j.ioengine.diskless()
        || j.ioengine.file_op().is_some();
    if !engine_ok {
        return Err(format!(
            "{head} with ioengine={} is not supported by iogauge yet; use a synchronous \
             engine (psync, sync, vsync, pvsync, pvsync2) or drop openfiles",
            j.ioengine.fio_name()
        ));
    }
    let clash = if j.verify.enabled() {
        Some("verify")
    } else if j.end_fsync {
        Some("end_fsync")
    } else if j.fsync_on_close {
        Some("fsync_on_close")
    } else if j.files.unlink_each_loop {
        Some("unlink_each_loop")
    } else if !matches!(
        j.blocks.file_service,
        FileService::RoundRobin | FileService::Sequential | FileService::Random
    ) {
        Some("file_service_type=zipf/pareto/normal")
    } else {
        None
    };
    match clash {
        Some(o) => Err(format!(
            "{head} together with {o} is not supported by iogauge yet; drop one of them"
        )),
        None => Ok(()),
    }
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

/// What iogauge covers of file_append and fill_device.
fn check_write_modes(j: &JobSpec) -> Result<(), String> {
    use crate::model::RwKind;
    let name = &j.name;
    if j.files.file_append && j.rw.kind != RwKind::Write {
        return Err(format!(
            "job '{name}': file_append with a job that reads is not supported by iogauge yet \
             (fio lays out the file past its end first); use rw=write or randwrite"
        ));
    }
    // Writing verify headers until the disk is full is fio's surface scan (a later job reads
    // them back); reading back in the same job is not done here.
    if j.files.fill_device
        && (j.rw.kind != RwKind::Write || (j.verify.enabled() && j.verify.do_verify))
    {
        return Err(format!(
            "job '{name}': fill_device (fill_fs) with a job that reads is not supported by \
             iogauge yet; use rw=write or randwrite (with verify, do_verify=0 and a later \
             job that reads the file back, as fio's surface-scan example)"
        ));
    }
    Ok(())
}

/// fio's fixups of this group once a job is complete.
pub(in crate::input::fio) fn check(j: &mut JobSpec) -> Result<(), String> {
    if j.files.pre_read {
        if j.direct {
            return Err(format!(
                "job '{}': pre_read fills the page cache, which direct=1 bypasses; drop one of them",
                j.name
            ));
        }
        // fio: pre_read clears invalidate, or the cache just filled would be dropped.
        j.invalidate = false;
    }
    if let Some(dir) = j.files.opendir.take() {
        add_dir_files(j, &dir)?;
        j.files.opendir = Some(dir);
    }
    check_write_modes(j)?;
    // fio lowers openfiles to the number of files (and 0 means all of them).
    let files = file_count(j);
    if j.files.open_files as u64 >= files {
        j.files.open_files = 0;
    }
    if j.files.open_files != 0 {
        check_open_files(j, files)?;
    }
    if j.files.unlink_each_loop {
        check_unlink_each_loop(j)?;
    }
    Ok(())
}
