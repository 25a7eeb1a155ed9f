//! Options of the extra ioengines (pvsync2, filestat, mmap): fio 3.33's engine options.

use super::Opt;
use crate::model::units::{parse_bool, parse_int_in};
use crate::model::{CpuMode, StatType};

pub(super) static OPTIONS: &[Opt] =
    &[
        opt!(
            "hipri_percentage",
            [],
            false,
            "pvsync2: percent of I/Os sent with RWF_HIPRI when hipri is set (default 100)",
            |j, v| {
                j.engines.hipri_percentage = parse_int_in(v, 0, 100)
                    .map_err(|_| "expected a percentage from 0 to 100, e.g. hipri_percentage=50")?
                    as u32;
                Ok(())
            }
        ),
        opt!(
            "nowait",
            [],
            true,
            "pvsync2: RWF_NOWAIT on every I/O (fails with EAGAIN instead of blocking)",
            |j, v| {
                j.engines.nowait = parse_bool(v)?;
                Ok(())
            }
        ),
        opt!(
            "stat_type",
            [],
            false,
            "filestat: the call that is timed, stat (default), lstat or statx",
            |j, v| {
                j.engines.stat_type = match v {
                    "stat" => StatType::Stat,
                    "lstat" => StatType::Lstat,
                    "statx" => StatType::Statx,
                    _ => return Err("expected stat, lstat or statx, e.g. stat_type=statx".into()),
                };
                Ok(())
            }
        ),
        opt!(
            "cpuload",
            [],
            false,
            "cpuio: percent of one CPU to use (required)",
            |j, v| {
                // fio caps values above 100 at 100.
                j.engines.cpuload = parse_int_in(v, 0, u32::MAX as u64)
                    .map_err(|_| "expected a percentage of one CPU, e.g. cpuload=50")?
                    .min(100) as u32;
                Ok(())
            }
        ),
        opt!(
            "cpuchunks",
            [],
            false,
            "cpuio: length of one burn cycle in microseconds (default 50000)",
            |j, v| {
                j.engines.cpuchunks = parse_int_in(v, 1, u32::MAX as u64)
                    .map_err(|_| "expected microseconds above 0, e.g. cpuchunks=10000")?
                    as u32;
                Ok(())
            }
        ),
        opt!(
            "cpumode",
            [],
            false,
            "cpuio: noop (spin, default) or qsort (sort integers)",
            |j, v| {
                j.engines.cpumode = match v {
                    "noop" => CpuMode::Noop,
                    "qsort" => CpuMode::Qsort,
                    _ => return Err("expected noop or qsort, e.g. cpumode=qsort".into()),
                };
                Ok(())
            }
        ),
        opt!(
            "exit_on_io_done",
            [],
            true,
            "cpuio: stop when the other jobs of the phase are done",
            |j, v| {
                j.engines.exit_on_io_done = parse_bool(v)?;
                Ok(())
            }
        ),
        opt!(
            "program",
            [],
            false,
            "exec: the program to run for the job's runtime",
            |j, v| {
                j.engines.program = Some(v.to_string());
                Ok(())
            }
        ),
        opt!(
            "arguments",
            [],
            false,
            "exec: the program's arguments (%r = runtime in seconds, %n = job name)",
            |j, v| {
                j.engines.arguments = Some(v.to_string());
                Ok(())
            }
        ),
        opt!(
            "grace_time",
            [],
            false,
            "exec: seconds from SIGTERM at the runtime to the job's end (default 1)",
            |j, v| {
                j.engines.grace_time = parse_int_in(v, 0, u32::MAX as u64)
                    .map_err(|_| "expected whole seconds, e.g. grace_time=1")?
                    as u32;
                Ok(())
            }
        ),
        opt!(
            "std_redirect",
            [],
            true,
            "exec: the program's stdout/stderr go to NAME.stdout/NAME.stderr (default 1)",
            |j, v| {
                j.engines.std_redirect = parse_bool(v)?;
                Ok(())
            }
        ),
        opt!(
            "uncached",
            [],
            false,
            "Refused: RWF_UNCACHED never reached Linux",
            |_, v| match v {
                "0" => Ok(()),
                _ => Err(
                    "uncached is refused by iogauge: RWF_UNCACHED never reached Linux, and the \
                      flag bit fio 3.33 sets (0x40) now means RWF_ATOMIC; use uncached=0"
                        .into()
                ),
            }
        ),
        opt!(
        "thp",
        [],
        false,
        "Refused: mmap with transparent huge pages maps privately, so writes never reach the file",
        |_, v| match v {
            "0" => Ok(()),
            _ => Err("thp is refused by iogauge: fio's mmap engine then maps the file \
                      MAP_PRIVATE, so writes never reach the file; use thp=0"
                .into()),
        }
    ),
    ];

/// Checks of the engine options against the job's engine, run once the job is complete: an
/// engine option on another engine is an error, as in fio (which does not know the option then).
/// A cpuio job is also given what it implies (a placeholder size, background with
/// exit_on_io_done).
pub(in crate::input::fio) fn finish_job(j: &mut crate::model::JobSpec) -> Result<(), String> {
    use crate::model::IoEngine;
    let d = crate::model::EngineSpec::default();
    let e = &j.engines;
    let only = [
        (
            "hipri_percentage",
            e.hipri_percentage != d.hipri_percentage,
            IoEngine::Pvsync2,
        ),
        ("nowait", e.nowait, IoEngine::Pvsync2),
        ("stat_type", e.stat_type != d.stat_type, IoEngine::Filestat),
        ("cpuload", e.cpuload != d.cpuload, IoEngine::Cpuio),
        ("cpuchunks", e.cpuchunks != d.cpuchunks, IoEngine::Cpuio),
        ("cpumode", e.cpumode != d.cpumode, IoEngine::Cpuio),
        ("exit_on_io_done", e.exit_on_io_done, IoEngine::Cpuio),
        ("program", e.program.is_some(), IoEngine::Exec),
        ("arguments", e.arguments.is_some(), IoEngine::Exec),
        ("grace_time", e.grace_time != d.grace_time, IoEngine::Exec),
        (
            "std_redirect",
            e.std_redirect != d.std_redirect,
            IoEngine::Exec,
        ),
    ];
    for (name, set, engine) in only {
        // fio 3.37's dirstat takes filestat's stat_type too.
        let also = name == "stat_type" && j.ioengine == IoEngine::Dirstat;
        if set && j.ioengine != engine && !also {
            return Err(format!(
                "{name} is an option of ioengine={}, but ioengine={}; set ioengine={}",
                engine.fio_name(),
                j.ioengine.fio_name(),
                engine.fio_name()
            ));
        }
    }
    let trims = matches!(
        j.rw.kind,
        crate::model::RwKind::Trim | crate::model::RwKind::TrimWrite
    );
    let no_data =
        j.ioengine.file_op().is_some() || matches!(j.ioengine, IoEngine::Cpuio | IoEngine::Exec);
    if trims && no_data {
        return Err(format!(
            "rw={} with ioengine={} is not supported by iogauge yet; trims run on the \
             data engines (psync, sync, vsync, pvsync, pvsync2, mmap, falloc, null, libaio, \
             io_uring, posixaio)",
            j.rw.fio_name(),
            j.ioengine.fio_name()
        ));
    }
    // fio repeats the fake I/Os of a time-based metadata job without new opens; not modelled.
    if j.ioengine.file_op().is_some() && j.time_based {
        return Err(format!(
            "time_based with ioengine={} is not supported by iogauge yet; use loops= to repeat \
             the file operations",
            j.ioengine.fio_name()
        ));
    }
    if j.ioengine == IoEngine::Exec {
        if j.engines.program.is_none() {
            return Err("ioengine=exec needs program=, e.g. program=/usr/bin/stress-ng".into());
        }
        // Differs from fio on purpose: fio's exec without a runtime sends SIGTERM at once and
        // then never ends.
        if j.runtime.is_none() {
            return Err(
                "ioengine=exec runs its program for the job's runtime; set runtime=, e.g. \
                 runtime=10s"
                    .into(),
            );
        }
    }
    let no_io = matches!(j.ioengine, IoEngine::Cpuio | IoEngine::Exec);
    if no_io && j.size.is_none() && j.filesize.is_none() {
        // Nothing is laid out or opened; the planner still wants a size.
        j.size = Some(crate::model::SizeSpec::Bytes(j.min_bs()));
    }
    if j.ioengine == IoEngine::Cpuio {
        if j.engines.cpuload == 0 {
            return Err(
                "ioengine=cpuio needs cpuload= (the percent of one CPU to use), e.g. cpuload=50"
                    .into(),
            );
        }
        // Differs from fio on purpose: fio's cpuio without a runtime never ends.
        if j.runtime.is_none() && !j.engines.exit_on_io_done {
            return Err(
                "ioengine=cpuio runs until its runtime (fio's would never end); set \
                        runtime=, e.g. runtime=10s, or exit_on_io_done=1"
                    .into(),
            );
        }
        // Stopped with the phase's other jobs, as the background jobs are.
        j.background = j.engines.exit_on_io_done;
    }
    // fio's ftruncate engine fails any other direction with EINVAL at its first I/O.
    if j.ioengine == IoEngine::Ftruncate && j.rw.kind != crate::model::RwKind::Write {
        return Err(format!(
            "ioengine=ftruncate only writes (each write truncates the file to its offset), but \
             rw={}; use rw=write or rw=randwrite",
            j.rw.fio_name()
        ));
    }
    // fio's mmap engine: direct, fsync and fdatasync work on whole pages.
    if j.ioengine == IoEngine::Mmap
        && (j.direct || j.fsync > 0 || j.fdatasync > 0)
        && !j.min_bs().is_multiple_of(4096)
    {
        return Err(format!(
            "ioengine=mmap with direct, fsync or fdatasync needs a block size that is a multiple \
             of the page size (4096), e.g. bs=4k; got {}",
            j.min_bs()
        ));
    }
    Ok(())
}
