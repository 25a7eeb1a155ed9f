//! Jobs expanded into instances before anything is written: the I/O buffers checked against
//! memory, each instance's files planned and checked for safety (created files, read-only mode,
//! existing files and devices, mounted devices), and free space checked per filesystem.

use super::plan::Instance;
use super::{ResolvedRun, RunError};
use crate::model::{IoEngine, JobSpec, RunSpec};
use crate::workload::cleanup::CreatedFiles;
use crate::workload::layout;
use crate::workload::layout::FilePlan;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// Memory a run may take for I/O buffers: half of what the kernel says is available (None when
/// /proc/meminfo cannot be read).
fn buffer_budget() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024 / 2)
}

/// Buffers are allocated per instance before the threads start; a job that asks for more than
/// memory allows (iodepth=256 with bs=1g) is bad input, refused before anything is laid out,
/// instead of an allocation abort that would skip the cleanup.
fn check_buffer_memory(spec: &RunSpec, budget: u64) -> Result<(), RunError> {
    let total: u64 = spec
        .jobs
        .iter()
        .map(|j| j.buffer_bytes().saturating_mul(j.numjobs.max(1) as u64))
        .fold(0, u64::saturating_add);
    if total <= budget {
        return Ok(());
    }
    let big = spec
        .jobs
        .iter()
        .max_by_key(|j| j.buffer_bytes().saturating_mul(j.numjobs.max(1) as u64))
        .expect("a run that needs memory has a job");
    Err(RunError::BufferMemory(format!(
        "job '{}': {} I/O in flight × {} bytes per block × numjobs={} needs {} of I/O buffers \
         ({} for the whole run), more than half of the memory available ({}); lower iodepth, bs \
         or numjobs",
        big.name,
        big.queue_depth(),
        big.max_bs(),
        big.numjobs.max(1),
        crate::report::units::size_str(
            big.buffer_bytes().saturating_mul(big.numjobs.max(1) as u64)
        ),
        crate::report::units::size_str(total),
        crate::report::units::size_str(budget * 2),
    )))
}

/// A new file may be created: allow_file_create and --readonly say so (the null engine
/// creates none).
fn check_creation(spec: &RunSpec, job: &JobSpec, f: &FilePlan) -> Result<(), RunError> {
    if !job.files.allow_file_create && !f.existed && job.ioengine != IoEngine::Null {
        return Err(layout::LayoutError::CreateDisallowed {
            job: job.name.clone(),
            path: f.path.clone(),
        }
        .into());
    }
    if spec.readonly && !f.existed && job.ioengine != IoEngine::Null {
        return Err(layout::LayoutError::ReadOnly {
            path: f.path.clone(),
        }
        .into());
    }
    Ok(())
}

/// unlink_each_loop deletes the job's files after each loop: never one iogauge did not create
/// (planned before anything of the run exists, or, for a deferred instance, as its phase
/// starts, when `created` holds what the earlier phases made).
fn check_unlink_each_loop(
    job: &JobSpec,
    f: &FilePlan,
    created: &CreatedFiles,
) -> Result<(), RunError> {
    if job.files.unlink_each_loop && f.existed && !f.is_block && !created.contains(&f.path) {
        return Err(RunError::JobSetup(format!(
            "job '{}': unlink_each_loop would delete '{}', which iogauge did not create; \
             remove it or use another directory",
            job.name,
            f.path.display()
        )));
    }
    Ok(())
}

/// A data file or device the job may use: not someone else's (`check_safety`), and not a
/// mounted device it would write, which fio refuses unless the job allows it.
fn check_file(
    spec: &RunSpec,
    job: &JobSpec,
    f: &FilePlan,
    created: &CreatedFiles,
) -> Result<(), RunError> {
    layout::check_safety(job, f, spec.allow_overwrite, created)?;
    if f.is_block && layout::job_writes(job) && !job.files.allow_mounted_write {
        if let Some(mounted) = crate::workload::device::mounted_on(&f.path) {
            return Err(layout::LayoutError::MountedDevice {
                path: f.path.clone(),
                job: job.name.clone(),
                mounted,
            }
            .into());
        }
    }
    Ok(())
}

pub(super) fn expand(
    resolved: &ResolvedRun,
    created: &CreatedFiles,
) -> Result<Vec<Instance>, RunError> {
    let spec = &resolved.spec;
    if let Some(budget) = buffer_budget() {
        check_buffer_memory(spec, budget)?;
    }
    let mut out = Vec::new();
    let mut new_bytes: Vec<(PathBuf, u64)> = Vec::new();
    // Paths already checked: a set, so that many instances sharing files stay linear.
    let mut seen: HashSet<PathBuf> = HashSet::new();
    // New files' sizes as planned so far (the largest any job gives them).
    let mut planned: HashMap<PathBuf, u64> = HashMap::new();
    // The phase in which each new file is first planned.
    let mut new_in_phase: HashMap<PathBuf, u32> = HashMap::new();
    for (ji, (job, r)) in spec.jobs.iter().zip(&resolved.jobs).enumerate() {
        for jobnum in 0..r.instances {
            let instance = |files, deferred| Instance {
                job: ji,
                jobnum,
                groupid: r.groupid,
                phase: r.phase,
                thread: r.thread(jobnum),
                files,
                deferred,
            };
            let files = match layout::plan_files(job, jobnum) {
                Ok(f) => f,
                // Sized when its phase starts, from the file an earlier phase made.
                Err(layout::LayoutError::NoSize { path, .. })
                    if new_in_phase.get(&path).is_some_and(|&p| p < r.phase) =>
                {
                    out.push(instance(Vec::new(), true));
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            for f in &files {
                check_creation(spec, job, f)?;
                if let Some(op) = job.ioengine.file_op().filter(|o| o.on_dirs()) {
                    // Directories take no space to speak of; only what exists matters.
                    if f.existed && !seen.contains(&f.path) {
                        layout::check_dir_safety(job, op, f, spec.allow_overwrite)?;
                    }
                    seen.insert(f.path.clone());
                } else if seen.contains(&f.path) {
                    // A later job that needs a new file larger grows it (layout's `grow`).
                    if let Some(m) = planned.get_mut(&f.path) {
                        if f.size > *m {
                            new_bytes.push((layout::parent_dir(&f.path), f.size - *m));
                            *m = f.size;
                        }
                    }
                } else {
                    if !f.existed {
                        new_in_phase.insert(f.path.clone(), r.phase);
                    }
                    check_file(spec, job, f, created)?;
                    // fill_device is asked to fill the filesystem: not counted against it.
                    // Nor are the files no data goes into: a diskless engine (null: fio's
                    // flow tests with size=100g) creates none, filecreate makes them empty.
                    let data = !job.ioengine.diskless()
                        && job.ioengine.file_op() != Some(crate::model::engines::FileOp::Create);
                    if !f.existed && !job.files.fill_device && data {
                        new_bytes.push((layout::parent_dir(&f.path), f.size));
                        planned.insert(f.path.clone(), f.size);
                    }
                    seen.insert(f.path.clone());
                }
            }
            for f in &files {
                check_unlink_each_loop(job, f, created)?;
            }
            out.push(instance(files, false));
        }
    }
    layout::check_free_space(&new_bytes)?;
    Ok(out)
}

/// A deferred instance's files, planned as its phase starts (the earlier phase made them): the
/// same checks as `expand`'s, against files that exist now.
pub(super) fn plan_deferred(
    spec: &RunSpec,
    inst: &mut Instance,
    created: &CreatedFiles,
) -> Result<(), RunError> {
    let job = &spec.jobs[inst.job];
    let files = layout::plan_files(job, inst.jobnum)?;
    for f in &files {
        check_creation(spec, job, f)?;
        check_file(spec, job, f, created)?;
        check_unlink_each_loop(job, f, created)?;
    }
    inst.files = files;
    inst.deferred = false;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{etcd_like, run, RunOptions};
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn buffers_beyond_the_memory_budget_are_refused_before_layout() {
        let d = tempfile::tempdir().unwrap();
        let mut j = etcd_like(d.path());
        j.ioengine = IoEngine::Libaio;
        j.iodepth = 256;
        j.bs = [1 << 30; 3];
        j.numjobs = 2;
        let spec = RunSpec {
            jobs: vec![j],
            ..RunSpec::default()
        };
        assert_eq!(spec.jobs[0].buffer_bytes(), 256 << 30);
        let e = check_buffer_memory(&spec, 8 << 30).unwrap_err();
        assert_eq!(
            crate::app::error::Kind::of_run(&e),
            crate::app::error::Kind::BadInput
        );
        assert_eq!(
            e.to_string(),
            "job 'mytest': 256 I/O in flight × 1073741824 bytes per block × numjobs=2 needs 512GiB of \
             I/O buffers (512GiB for the whole run), more than half of the memory available (16.0GiB); \
             lower iodepth, bs or numjobs"
        );
        assert!(check_buffer_memory(&spec, 512 << 30).is_ok());
        // Through run(): refused before anything is written.
        let e = run(&spec, &RunOptions::default(), &AtomicBool::new(false)).unwrap_err();
        assert!(matches!(e, RunError::BufferMemory(_)), "{e}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    /// unlink_each_loop over a file iogauge did not make was refused as the job's phase
    /// started, after the earlier phases ran; now before the first one.
    #[test]
    fn unlink_each_loop_over_someone_elses_file_is_refused_before_the_first_phase() {
        let d = tempfile::tempdir().unwrap();
        let mut a = etcd_like(d.path());
        a.name = "a".into();
        // Kept: had the first phase run, its file would stay.
        a.unlink = false;
        let mut b = etcd_like(d.path());
        b.name = "b".into();
        b.stonewall = true;
        b.files.unlink_each_loop = true;
        let theirs = d.path().join("b.0.0");
        std::fs::write(&theirs, vec![7u8; 2 << 20]).unwrap();
        let spec = RunSpec {
            jobs: vec![a, b],
            allow_overwrite: true,
            ..RunSpec::default()
        };
        let e = run(&spec, &RunOptions::default(), &AtomicBool::new(false)).unwrap_err();
        assert_eq!(
            crate::app::error::Kind::of_run(&e),
            crate::app::error::Kind::BadInput
        );
        assert_eq!(
            e.to_string(),
            format!(
                "job 'b': unlink_each_loop would delete '{}', which iogauge did not create; \
                 remove it or use another directory",
                theirs.display()
            )
        );
        assert!(!d.path().join("a.0.0").exists(), "the first phase ran");
        assert_eq!(std::fs::read(&theirs).unwrap(), vec![7u8; 2 << 20]);
    }
}
