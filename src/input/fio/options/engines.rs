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

/// What a cpuio or exec job implies once complete (the checks are `JobSpec::check`'s): a
/// placeholder size, since nothing is laid out or opened but the planner still wants one; a
/// cpuio job with exit_on_io_done stops with its phase's other jobs, as background jobs do.
pub(crate) fn settle(j: &mut crate::model::JobSpec) {
    use crate::model::IoEngine;
    let no_io = matches!(j.ioengine, IoEngine::Cpuio | IoEngine::Exec);
    if no_io && j.size.is_none() && j.filesize.is_none() {
        j.size = Some(crate::model::SizeSpec::Bytes(j.min_bs()));
    }
    if j.ioengine == IoEngine::Cpuio {
        j.background = j.engines.exit_on_io_done;
    }
}
