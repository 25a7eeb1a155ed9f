//! File handling: filename_format, allow_file_create, pre_read, create_on_open, openfiles (fio 3.33 semantics; the model
//! is `model::files`).

use super::Opt;
use crate::model::units::{parse_bool, parse_int};
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
