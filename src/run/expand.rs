//! Jobs expanded into instances before anything is written: the I/O buffers checked against
//! memory, each instance's files planned and checked for safety (created files, read-only mode,
//! existing files and devices, mounted devices), and free space checked per filesystem.

use super::plan::{self, Instance};
use super::RunError;
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

/// fio's limit on the jobs of one run, numjobs copies counted (FIO_MAX_JOBS). Every front end
/// checks it while parsing; this holds it for any `RunSpec`, before a thread or a file exists.
const MAX_INSTANCES: u64 = 4096;

fn check_job_count(spec: &RunSpec) -> Result<(), RunError> {
    let n: u64 = spec.jobs.iter().map(|j| u64::from(j.numjobs.max(1))).sum();
    if n > MAX_INSTANCES {
        return Err(RunError::JobSetup(format!(
            "maximum number of jobs ({MAX_INSTANCES}) reached: the run asks for {n} (numjobs \
             copies counted); lower numjobs or split the run"
        )));
    }
    Ok(())
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

pub(super) fn expand(spec: &RunSpec, created: &CreatedFiles) -> Result<Vec<Instance>, RunError> {
    check_job_count(spec)?;
    if let Some(budget) = buffer_budget() {
        check_buffer_memory(spec, budget)?;
    }
    let gp = plan::group_and_phase(&spec.jobs);
    let mut out = Vec::new();
    let mut new_bytes: Vec<(PathBuf, u64)> = Vec::new();
    // Paths already checked: a set, so that many instances sharing files stay linear.
    let mut seen: HashSet<PathBuf> = HashSet::new();
    // New files' sizes as planned so far (the largest any job gives them).
    let mut planned: HashMap<PathBuf, u64> = HashMap::new();
    // The phase in which each new file is first planned.
    let mut new_in_phase: HashMap<PathBuf, u32> = HashMap::new();
    for (ji, job) in spec.jobs.iter().enumerate() {
        for jobnum in 0..job.numjobs.max(1) {
            let files = match layout::plan_files(job, jobnum) {
                Ok(f) => f,
                // Sized when its phase starts, from the file an earlier phase made.
                Err(layout::LayoutError::NoSize { path, .. })
                    if new_in_phase.get(&path).is_some_and(|&p| p < gp[ji].1) =>
                {
                    out.push(Instance {
                        job: ji,
                        jobnum,
                        groupid: gp[ji].0,
                        phase: gp[ji].1,
                        files: Vec::new(),
                        deferred: true,
                    });
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
                        new_in_phase.insert(f.path.clone(), gp[ji].1);
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
            out.push(Instance {
                job: ji,
                jobnum,
                groupid: gp[ji].0,
                phase: gp[ji].1,
                files,
                deferred: false,
            });
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
}
