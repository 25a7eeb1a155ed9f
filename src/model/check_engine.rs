//! The checks of a job's engine against its other options: options that belong to another
//! engine, what io_submit_mode=offload's pool does not do, and what the loops of the file and
//! command engines lack. Part of `JobSpec::check` (`check.rs`).

use crate::model::{IoEngine, JobSpec, RwKind};

/// The engine options against the job's engine: an engine option on another engine is an
/// error, as in fio (which does not know the option then). The message does not name the job.
pub(super) fn check_options(j: &JobSpec) -> Result<(), String> {
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
    let trims = matches!(j.rw.kind, RwKind::Trim | RwKind::TrimWrite);
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
    }
    // fio's ftruncate engine fails any other direction with EINVAL at its first I/O.
    if j.ioengine == IoEngine::Ftruncate && j.rw.kind != RwKind::Write {
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

/// io_submit_mode=offload with what the submitting pool does not do: refused by name. fio
/// itself refuses io_uring there; the rest are iogauge's limits (docs/FIO.md).
pub(super) fn check_offload(j: &JobSpec) -> Result<(), String> {
    if j.io.submit_mode != crate::model::io::SubmitMode::Offload {
        return Ok(());
    }
    let engine = j.ioengine.fio_name();
    if j.ioengine == IoEngine::IoUring {
        return Err(format!(
            "job '{}': io_submit_mode=offload cannot use ioengine=io_uring (fio refuses it too: \
             \"io_uring: can't be used with offloaded submit\"); use a synchronous engine such as \
             psync, or libaio",
            j.name
        ));
    }
    if j.ioengine == IoEngine::Cpuio
        || j.ioengine == IoEngine::Exec
        || j.ioengine.file_op().is_some()
    {
        return Err(format!(
            "job '{}': io_submit_mode=offload hands data I/O to submitting threads, but \
             ioengine={engine} does none; use io_submit_mode=inline",
            j.name
        ));
    }
    let with = [
        ("verify", j.verify.enabled()),
        ("fsync", j.fsync > 0),
        ("fdatasync", j.fdatasync > 0),
        ("sync_file_range", j.io.sync_file_range.is_some()),
        (
            "rw=trim/trimwrite",
            matches!(j.rw.kind, RwKind::Trim | RwKind::TrimWrite),
        ),
        ("thinktime", !j.timing.thinktime.is_zero()),
        (
            "rate_min/rate_iops_min",
            j.timing
                .rate_min
                .iter()
                .chain(&j.timing.rate_iops_min)
                .any(Option::is_some),
        ),
        ("latency_target", j.latency.target_ns > 0),
        ("flow", j.latency.flow != 0),
        ("cmdprio", j.ioprio.cmd_active()),
        (
            "lockfile",
            j.io.lockfile != crate::model::io::LockMode::None,
        ),
        ("write_iolog", j.logs.iolog.is_some()),
    ];
    if let Some((opt, _)) = with.iter().find(|(_, on)| *on) {
        return Err(format!(
            "job '{}': io_submit_mode=offload with {opt} is not supported by iogauge (the \
             submitting threads do plain reads and writes); use io_submit_mode=inline, or \
             drop {opt}",
            j.name
        ));
    }
    Ok(())
}

/// latency_target and flow run in the two I/O loops; the loops of cpuio, exec and the file
/// engines have neither yet, so a job combining them is refused rather than run without them.
pub(super) fn check_loop_features(job: &JobSpec) -> Result<(), String> {
    let other = job.ioengine.file_op().is_some()
        || matches!(job.ioengine, IoEngine::Cpuio | IoEngine::Exec);
    let option = if job.latency.target_on() {
        "latency_target"
    } else if job.latency.flow > 0 {
        "flow"
    } else {
        return Ok(());
    };
    if !other {
        return Ok(());
    }
    Err(format!(
        "job '{}': {option} is not supported by iogauge with ioengine={} yet (only on the \
         engines that read and write data)",
        job.name,
        job.ioengine.fio_name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::io::SubmitMode;

    fn job(name: &str) -> JobSpec {
        JobSpec::named(name)
    }

    #[test]
    fn offload_refuses_what_the_pool_does_not_do_by_name() {
        let mut j = job("j");
        j.fsync = 4;
        assert_eq!(check_offload(&j), Ok(()), "inline: nothing to check");
        j.io.submit_mode = SubmitMode::Offload;
        assert_eq!(
            check_offload(&j).unwrap_err(),
            "job 'j': io_submit_mode=offload with fsync is not supported by iogauge (the \
             submitting threads do plain reads and writes); use io_submit_mode=inline, or drop \
             fsync"
        );
        j.fsync = 0;
        assert_eq!(check_offload(&j), Ok(()));
        j.ioengine = IoEngine::Cpuio;
        assert!(check_offload(&j)
            .unwrap_err()
            .contains("but ioengine=cpuio does none; use io_submit_mode=inline"));
    }
}
