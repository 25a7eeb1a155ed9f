//! The resolved run: a [`RunSpec`] from any front end (`iogauge fio`, a `check` profile, a
//! troubleshoot spec, kube's in-pod run, the fuzz targets) checked once, whole, before anything
//! is read from or written to the host, with what the stages after it need decided once:
//! each job's reporting group, phase (stonewall) and fio thread numbers.
//! As ripgrep's `LowArgs` → `HiArgs`: nothing downstream re-derives these or re-checks options.
//!
//! What stays for later, and why: the file plans (`expand.rs`) look at the directory, which
//! the reaping of killed runs' leftovers changes first; the checks that need the host (memory
//! for the buffers, free space, existing files, mounted devices, the job's host settings,
//! `expand.rs`) run for every phase before the first starts; lockmem, logs and the layout run as
//! each phase starts (`prepare.rs`).

use super::{latency_target, plan};
use crate::model::RunSpec;

/// A run whose options were all checked together: the only thing [`super::run`] runs.
#[derive(Debug)]
pub struct ResolvedRun {
    pub(crate) spec: RunSpec,
    /// One per `spec.jobs`, in order.
    pub(crate) jobs: Vec<ResolvedJob>,
    /// Phases of the run (stonewall starts one); instances of a phase start together.
    pub(crate) phases: u32,
}

/// What a job's place in the run decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResolvedJob {
    /// Its reporting group (`stonewall` and `new_group` start one).
    pub groupid: u32,
    /// Its phase: `stonewall` waits for every earlier job.
    pub phase: u32,
    /// Its instances (numjobs, at least one).
    pub instances: u32,
    /// fio's thread number − 1 of its first instance; its clones follow in order
    /// (cpus_allowed_policy=split picks the CPU by it, the logs are named by it).
    pub first_thread: u32,
}

impl ResolvedJob {
    /// fio's thread number − 1 of clone `jobnum`.
    pub(crate) fn thread(&self, jobnum: u32) -> u32 {
        self.first_thread + jobnum
    }
}

/// Why a run was refused before anything happened: bad input, exit 2 in every command (it
/// becomes [`super::RunError::JobSetup`] where a run error is expected, its message unchanged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// A job's options, or two jobs' together, cannot work (the message names them).
    #[error("{0}")]
    Options(String),
}

impl From<ResolveError> for super::RunError {
    fn from(e: ResolveError) -> Self {
        match e {
            ResolveError::Options(m) => super::RunError::JobSetup(m),
        }
    }
}

/// fio's limit on the jobs of one run, numjobs copies counted (FIO_MAX_JOBS). Every front end
/// checks it while parsing; this holds it for any `RunSpec`, before a thread or a file exists.
const MAX_INSTANCES: u64 = 4096;

/// Checks every job and the jobs together, and decides groups, phases, thread numbers and
/// depths. Pure: reads nothing from the host, so a refusal comes before any I/O whatever phase
/// the faulty job is in.
pub fn resolve(spec: RunSpec) -> Result<ResolvedRun, ResolveError> {
    let n: u64 = spec.jobs.iter().map(|j| u64::from(j.numjobs.max(1))).sum();
    if n > MAX_INSTANCES {
        return Err(ResolveError::Options(format!(
            "maximum number of jobs ({MAX_INSTANCES}) reached: the run asks for {n} (numjobs \
             copies counted); lower numjobs or split the run"
        )));
    }
    for j in &spec.jobs {
        j.check().map_err(ResolveError::Options)?;
    }
    spec.check_between_jobs().map_err(ResolveError::Options)?;
    let gp = plan::group_and_phase(&spec.jobs);
    latency_target::check_flow_phases(&spec.jobs, gp.iter().enumerate().map(|(i, g)| (i, g.1)))
        .map_err(ResolveError::Options)?;
    let mut thread = 0u32;
    let jobs = spec
        .jobs
        .iter()
        .zip(&gp)
        .map(|(j, &(groupid, phase))| {
            let r = ResolvedJob {
                groupid,
                phase,
                instances: j.numjobs.max(1),
                first_thread: thread,
            };
            thread += r.instances;
            r
        })
        .collect();
    let phases = gp.last().map_or(0, |g| g.1 + 1);
    Ok(ResolvedRun { spec, jobs, phases })
}

impl ResolvedRun {
    /// The run as the front end described it (every check passed).
    pub fn spec(&self) -> &RunSpec {
        &self.spec
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::JobSpec;

    fn job(name: &str) -> JobSpec {
        JobSpec::named(name)
    }

    #[test]
    fn groups_phases_and_threads_are_decided_once() {
        let mut b = job("b");
        b.numjobs = 3;
        b.stonewall = true;
        let mut c = job("c");
        c.new_group = true;
        let r = resolve(RunSpec {
            jobs: vec![job("a"), b, c],
            ..RunSpec::default()
        })
        .unwrap();
        let got: Vec<_> = r
            .jobs
            .iter()
            .map(|j| (j.groupid, j.phase, j.instances, j.first_thread))
            .collect();
        assert_eq!(got, [(0, 0, 1, 0), (1, 1, 3, 1), (2, 1, 1, 4)]);
        assert_eq!(r.phases, 2);
        assert_eq!(r.jobs[1].thread(2), 3);
    }

    #[test]
    fn a_bad_job_after_a_stonewall_is_refused_whole() {
        let mut b = job("b");
        b.stonewall = true;
        b.ioprio.cmd_percentage = [50; 2];
        let e = resolve(RunSpec {
            jobs: vec![job("a"), b],
            ..RunSpec::default()
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "job 'b': cmdprio_percentage needs a queueing engine (ioengine=io_uring or libaio), \
             as in fio; psync has no per-I/O priority"
        );
    }

    #[test]
    fn flow_groups_split_by_stonewall_and_too_many_jobs_are_refused() {
        let mut a = job("a");
        a.latency.flow = 1;
        let mut b = a.clone();
        b.name = "b".into();
        b.stonewall = true;
        let e = resolve(RunSpec {
            jobs: vec![a, b],
            ..RunSpec::default()
        })
        .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "jobs 'a' and 'b' share flow_id=0 but run one after the other (stonewall)"
            ),
            "{e}"
        );
        let mut many = job("m");
        many.numjobs = 4097;
        assert_eq!(
            resolve(RunSpec {
                jobs: vec![many],
                ..RunSpec::default()
            })
            .unwrap_err()
            .to_string(),
            "maximum number of jobs (4096) reached: the run asks for 4097 (numjobs copies \
             counted); lower numjobs or split the run"
        );
    }
}
