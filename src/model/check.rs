//! A job's options checked against each other once all of them are in: what fio refuses and
//! what iogauge does not cover, each refused by name before anything runs. Every front end's
//! jobs meet the same checks (`run::resolve` runs them for every run; the fio front end, a
//! `check` profile and a troubleshoot spec also when they are read), so a combination
//! `iogauge fio` refuses is refused with the same words whoever wrote it.
//! Pure: nothing here looks at the host or the files (those checks are `run/expand.rs`'s and
//! `run/prepare.rs`'s).

use super::{IoEngine, JobSpec, RunSpec, RwKind};

/// io_uring's most entries in one ring (the kernel's IORING_MAX_ENTRIES): a deeper queue is
/// refused by io_uring_setup with EINVAL, after its buffers were allocated.
const IO_URING_MAX_DEPTH: u32 = 32768;

impl JobSpec {
    /// Every check of one job's options, in the order the fio front end ran them before they
    /// moved here. fio's value fix-ups (`input::fio::settle`, including the opendir expansion)
    /// now run first, so a job with a bad opendir and another fault is refused for the opendir.
    /// Expects the job settled, but holds for any job.
    pub(crate) fn check(&self) -> Result<(), String> {
        check_rates(self)?;
        check_files(self)?;
        check_uring_only(self)?;
        super::verify::check_job(self).map_err(|e| format!("job '{}': {e}", self.name))?;
        self.check_blocks()?;
        if self.hipri && !self.direct && self.ioengine == IoEngine::IoUring {
            return Err(format!(
                "job '{}': hipri (polled I/O) needs direct=1",
                self.name
            ));
        }
        super::check_engine::check_options(self)
            .map_err(|e| format!("job '{}': {e}", self.name))?;
        super::check_engine::check_offload(self)?;
        check_queue(self)?;
        super::check_engine::check_loop_features(self)?;
        check_cmdprio(self)
    }
}

impl RunSpec {
    /// The checks between the jobs of a run (each job's own: [`JobSpec::check`]): wait_for
    /// names one earlier job, and --readonly holds only jobs that read.
    pub(crate) fn check_between_jobs(&self) -> Result<(), String> {
        for (i, j) in self.jobs.iter().enumerate() {
            check_wait_for(j, &self.jobs[..i])?;
        }
        if self.readonly {
            if let Some(j) = self.jobs.iter().find(|j| j.rw.kind != RwKind::Read) {
                return Err(format!(
                    "job '{}' has write or trim bit set, but iogauge is in read-only mode (--readonly); \
                     use a read-only rw= such as rw=randread, or drop --readonly",
                    j.name
                ));
            }
        }
        Ok(())
    }
}

/// fio's checks of the rates once a job is complete (init.c's fixup_options).
fn check_rates(j: &JobSpec) -> Result<(), String> {
    let t = &j.timing;
    if t.rate_min.iter().any(|r| r.is_some()) && t.rate_iops_min.iter().any(|r| r.is_some()) {
        return Err(format!(
            "job '{}': rate_min and rate_iops_min are mutually exclusive; keep one",
            j.name
        ));
    }
    for d in 0..3 {
        let over =
            |max: Option<u64>, min: Option<u64>| matches!((max, min), (Some(a), Some(b)) if a < b);
        if over(j.rate[d], t.rate_min[d]) || over(j.rate_iops[d], t.rate_iops_min[d]) {
            let dir = ["read", "write", "trim"][d];
            return Err(format!(
                "job '{}': the minimum rate exceeds the rate for {dir} (fio: minimum rate exceeds \
                 rate, ddir {d}); lower rate_min/rate_iops_min or raise rate/rate_iops",
                j.name
            ));
        }
    }
    Ok(())
}

/// The file options: pre_read against direct, file_append and fill_device, openfiles below the
/// number of files (fio lowers openfiles to that number, and 0 means all of them), and
/// unlink_each_loop.
fn check_files(j: &JobSpec) -> Result<(), String> {
    if j.files.pre_read && j.direct {
        return Err(format!(
            "job '{}': pre_read fills the page cache, which direct=1 bypasses; drop one of them",
            j.name
        ));
    }
    check_write_modes(j)?;
    let files = j.file_count();
    if j.files.open_files != 0 && (j.files.open_files as u64) < files {
        check_open_files(j, files)?;
    }
    if j.files.unlink_each_loop {
        check_unlink_each_loop(j)?;
    }
    Ok(())
}

/// io_uring's own options on another engine.
fn check_uring_only(job: &JobSpec) -> Result<(), String> {
    let uring_only = [
        ("fixedbufs", job.fixedbufs),
        ("registerfiles", job.registerfiles),
        ("sqthread_poll", job.sqthread_poll),
        ("hipri", job.hipri),
        ("force_async", job.io.force_async != 0),
    ];
    if let Some((opt, _)) = uring_only.iter().find(|(_, on)| *on) {
        // hipri is also pvsync2's option (RWF_HIPRI).
        let also = *opt == "hipri" && job.ioengine == IoEngine::Pvsync2;
        if job.ioengine != IoEngine::IoUring && !also {
            return Err(format!(
                "job '{}': {opt} is an io_uring option, but ioengine={}; set ioengine=io_uring",
                job.name,
                job.ioengine.fio_name()
            ));
        }
    }
    Ok(())
}

/// Limits of the engine's queue that fail only after the run allocated for it.
fn check_queue(job: &JobSpec) -> Result<(), String> {
    if job.ioengine == IoEngine::IoUring && job.iodepth > IO_URING_MAX_DEPTH {
        return Err(format!(
            "job '{}': iodepth={}: an io_uring queue holds at most {IO_URING_MAX_DEPTH} entries \
             (the kernel's IORING_MAX_ENTRIES); use iodepth={IO_URING_MAX_DEPTH} or less",
            job.name, job.iodepth
        ));
    }
    Ok(())
}

/// Per-I/O priorities need a queueing engine, and take one of their two forms (as in fio).
fn check_cmdprio(job: &JobSpec) -> Result<(), String> {
    if job.ioprio.cmd_active() && !job.ioengine.is_async() {
        return Err(format!(
            "job '{}': {} needs a queueing engine (ioengine=io_uring or libaio), \
             as in fio; {} has no per-I/O priority",
            job.name,
            if job.ioprio.bssplit_active() {
                "cmdprio_bssplit"
            } else {
                "cmdprio_percentage"
            },
            job.ioengine.fio_name()
        ));
    }
    if job.ioprio.bssplit_active() && job.ioprio.cmd_percentage.iter().any(|&p| p > 0) {
        return Err(format!(
            "job '{}': cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in \
             fio); use one, e.g. cmdprio_bssplit=4k/10:64k/50",
            job.name
        ));
    }
    Ok(())
}

/// fio's wait_for_ok: the waitee is one earlier job, not the job itself (`earlier` are the jobs
/// defined before `j`).
fn check_wait_for(j: &JobSpec, earlier: &[JobSpec]) -> Result<(), String> {
    let Some(w) = &j.timing.wait_for else {
        return Ok(());
    };
    if *w == j.name {
        return Err(format!(
            "{}: a job cannot wait for itself (wait_for={w})",
            j.name
        ));
    }
    match earlier.iter().filter(|e| e.name == *w).count() {
        0 => Err(format!(
            "{}: waitee job {w} unknown; wait_for names a job defined before this one",
            j.name
        )),
        1 => Ok(()),
        _ => Err(format!(
            "{}: multiple waitees {w} found; give the jobs distinct names when using wait_for",
            j.name
        )),
    }
}

/// What iogauge covers of file_append and fill_device.
fn check_write_modes(j: &JobSpec) -> Result<(), String> {
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

/// What iogauge's openfiles below the number of files covers: the files are closed and
/// reopened under the descriptors the engine holds, which needs nothing in flight and nothing
/// registered or mapped, and every file's end-of-job sync or verify pass to find it open.
fn check_open_files(j: &JobSpec, files: u64) -> Result<(), String> {
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
        super::FileService::RoundRobin
            | super::FileService::Sequential
            | super::FileService::Random
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

/// What iogauge's unlink_each_loop covers: write-only jobs whose loops are whole passes over
/// their own files, on a synchronous engine.
fn check_unlink_each_loop(j: &JobSpec) -> Result<(), String> {
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
    if j.filename.is_some() && !j.files.iogauge_names {
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

impl JobSpec {
    /// The number of files of a job: the names in `filename` (':' separates, '\:' is a colon),
    /// else nrfiles.
    pub(crate) fn file_count(&self) -> u64 {
        match &self.filename {
            Some(list) => list
                .replace("\\:", "")
                .split(':')
                .filter(|n| !n.is_empty())
                .count() as u64,
            None => self.nrfiles.max(1) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str) -> JobSpec {
        JobSpec::named(name)
    }

    #[test]
    fn wait_for_names_one_earlier_job() {
        let waits = |name: &str, w: Option<&str>| {
            let mut j = job(name);
            j.timing.wait_for = w.map(Into::into);
            j
        };
        let a = waits("a", None);
        assert!(check_wait_for(&waits("b", Some("a")), std::slice::from_ref(&a)).is_ok());
        assert_eq!(
            check_wait_for(&waits("b", Some("b")), &[]).unwrap_err(),
            "b: a job cannot wait for itself (wait_for=b)"
        );
        assert_eq!(
            check_wait_for(&waits("b", Some("x")), std::slice::from_ref(&a)).unwrap_err(),
            "b: waitee job x unknown; wait_for names a job defined before this one"
        );
        assert!(check_wait_for(&waits("b", Some("a")), &[a.clone(), a])
            .unwrap_err()
            .contains("multiple waitees a"));
    }

    /// The checks `run/prepare.rs` made as each phase started are the job's own now, so every
    /// front end meets them before anything runs.
    #[test]
    fn the_former_phase_start_checks_are_the_jobs_own() {
        let mut j = job("j");
        j.ioprio.cmd_percentage = [50; 2];
        assert_eq!(
            j.check().unwrap_err(),
            "job 'j': cmdprio_percentage needs a queueing engine (ioengine=io_uring or libaio), \
             as in fio; psync has no per-I/O priority"
        );
        j.ioengine = IoEngine::Libaio;
        assert_eq!(j.check(), Ok(()));
        let mut j = job("j");
        j.ioengine = IoEngine::Cpuio;
        j.engines.cpuload = 50;
        j.runtime = Some(std::time::Duration::from_secs(1));
        j.latency.flow = 1;
        assert_eq!(
            j.check().unwrap_err(),
            "job 'j': flow is not supported by iogauge with ioengine=cpuio yet (only on the \
             engines that read and write data)"
        );
    }

    /// Holds for a job no front end settled: openfiles at or above the number of files is all
    /// of them (fio lowers it), whoever built the job.
    #[test]
    fn openfiles_at_the_file_count_is_not_a_window() {
        let mut j = job("j");
        j.nrfiles = 2;
        j.files.open_files = 2;
        j.end_fsync = true;
        assert_eq!(j.check(), Ok(()));
        j.files.open_files = 1;
        assert!(j.check().unwrap_err().contains("together with end_fsync"));
    }
}
