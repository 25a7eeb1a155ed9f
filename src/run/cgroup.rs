//! fio's `cgroup`, `cgroup_weight` and `cgroup_nodelete`, as fio 3.33's cgroup.c: the blkio
//! controller's cgroup v1 hierarchy (or, failing that, cgroup2) found in /proc/mounts, the
//! job's group made under it (its name, created if missing), `blkio.weight` written when a
//! weight is given, the job's threads moved into it, and the groups this run made removed at
//! the end unless `cgroup_nodelete`. fio moves its job process (`tasks`); iogauge's jobs are
//! threads, which cgroup v1 moves one by one through the same file. cgroup2 moves whole
//! processes only (`cgroup.procs`), so there a job cannot have a group of its own: refused.

use crate::model::JobSpec;
use std::path::{Path, PathBuf};

/// The blkio hierarchy: its mount point and whether it is cgroup2, as fio picks it (the first
/// `cgroup` mount with the blkio option, or `cgroup2` mount, in /proc/mounts).
fn mount() -> Result<(PathBuf, bool), String> {
    let mounts = std::fs::read_to_string("/proc/mounts")
        .map_err(|e| format!("cannot read /proc/mounts: {e}"))?;
    for l in mounts.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let blkio_v1 = f[2] == "cgroup" && f[3].split(',').any(|o| o == "blkio");
        if blkio_v1 || f[2] == "cgroup2" {
            return Ok((PathBuf::from(f[1]), f[2] == "cgroup2"));
        }
    }
    Err("no cgroup blkio hierarchy is mounted (fio says the same)".into())
}

/// The job's group directory, when it has one.
pub(super) fn root(job: &JobSpec) -> Option<Result<PathBuf, String>> {
    let name = job.host.cgroup.as_ref()?;
    Some(mount().map(|(m, _)| m.join(name)))
}

/// Moves the calling thread into the job's group (cgroup v1 `tasks` takes a thread id).
pub(super) fn join(job: &JobSpec) -> Result<(), String> {
    let Some(root) = root(job) else {
        return Ok(());
    };
    let tasks = root?.join("tasks");
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    std::fs::write(&tasks, tid.to_string()).map_err(|e| {
        format!(
            "job '{}': cgroup: cannot move the job's thread into {}: {e}",
            job.name,
            tasks.display()
        )
    })
}

/// The groups the run made, removed when dropped (after the job threads ended, which leaves
/// them empty) unless a job said `cgroup_nodelete`.
pub(super) struct Groups {
    made: Vec<PathBuf>,
    /// Where a group that could not be removed is said.
    diag: crate::diag::Diag,
}

impl Groups {
    /// Makes (or finds) every job's group and sets its weight, before any job starts.
    pub(super) fn setup(jobs: &[JobSpec], diag: &crate::diag::Diag) -> Result<Groups, String> {
        let mut g = Groups {
            made: Vec::new(),
            diag: diag.clone(),
        };
        for job in jobs {
            let Some(name) = &job.host.cgroup else {
                continue;
            };
            let fail = |what: String| format!("job '{}': cgroup={name}: {what}", job.name);
            let (mnt, v2) = mount().map_err(fail)?;
            if v2 {
                return Err(fail(format!(
                    "the blkio controller is only on cgroup2 ({}), which moves whole processes; \
                     iogauge's jobs are threads of one process, so a job cannot have a cgroup \
                     of its own there (fio 3.33 moves its job process)",
                    mnt.display()
                )));
            }
            let dir = mnt.join(name);
            match std::fs::create_dir(&dir) {
                Ok(()) if !job.host.cgroup_nodelete => g.made.push(dir.clone()),
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(fail(format!("cannot create {}: {e}", dir.display()))),
            }
            if job.host.cgroup_weight != 0 {
                write_weight(&dir, job.host.cgroup_weight).map_err(fail)?;
            }
        }
        Ok(g)
    }
}

fn write_weight(dir: &Path, weight: u32) -> Result<(), String> {
    let f = dir.join("blkio.weight");
    std::fs::write(&f, weight.to_string()).map_err(|e| {
        format!(
            "cannot write {}: {e} (blkio.weight exists only when the device's I/O scheduler \
             has proportional weights, CFQ or BFQ; fio 3.33 fails the same way)",
            f.display()
        )
    })
}

impl Drop for Groups {
    fn drop(&mut self) {
        for d in &self.made {
            if let Err(e) = std::fs::remove_dir(d) {
                self.diag.line(&format!(
                    "iogauge: cannot remove the cgroup {}: {e}",
                    d.display()
                ));
            }
        }
    }
}
