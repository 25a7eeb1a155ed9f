//! Which block devices hold the jobs' files, and when their counters are read: fio's disk util
//! window (see `stats::disk`). A device's window opens when the first phase using it starts its
//! threads (after that phase's shortest `startdelay`) and, once open, covers every later phase's
//! threads too; it is closed between phases, so layout and cleanup are never in it.

use crate::model::{JobSpec, RunSpec};
use crate::report::DiskReport;
use crate::stats::{resolve_disk, DiskWindow};
use std::path::PathBuf;
use std::time::Duration;

/// Where a job's files live: its directory, the parent of each named file, or the cwd.
pub(super) fn job_locations(job: &JobSpec) -> Vec<PathBuf> {
    match &job.filename {
        Some(list) => crate::workload::layout::split_filenames(list)
            .into_iter()
            .map(|n| {
                let p = PathBuf::from(n);
                let p = match &job.directory {
                    Some(d) if p.is_relative() => d.join(p),
                    _ => p,
                };
                if p.exists() {
                    p
                } else {
                    crate::workload::layout::parent_dir(&p)
                }
            })
            .collect(),
        None => vec![job.directory.clone().unwrap_or_else(|| PathBuf::from("."))],
    }
}

/// One window per device, with the jobs (indices into `RunSpec::jobs`) whose files are on it.
pub(crate) struct Disks {
    windows: Vec<(DiskWindow, Vec<usize>)>,
    /// Whether each window has been opened once (it then stays in every later phase).
    started: Vec<bool>,
}

impl Disks {
    /// The devices of every job that does I/O (the null engine has no files, as in fio) and
    /// reports disk statistics (fio's `disk_util`).
    /// A location on tmpfs or NFS has no block device; that is not an error.
    pub(crate) fn resolve(spec: &RunSpec) -> Disks {
        let mut windows: Vec<(DiskWindow, Vec<usize>)> = Vec::new();
        for (ji, job) in spec.jobs.iter().enumerate() {
            if job.ioengine.diskless() || !job.reporting.disk_util {
                continue;
            }
            for loc in job_locations(job) {
                let Ok(Some(t)) = resolve_disk(&loc) else {
                    continue;
                };
                match windows.iter_mut().find(|(w, _)| w.target == t) {
                    Some((_, jobs)) if !jobs.contains(&ji) => jobs.push(ji),
                    Some(_) => {}
                    None => windows.push((DiskWindow::new(t), vec![ji])),
                }
            }
        }
        let started = vec![false; windows.len()];
        Disks { windows, started }
    }

    /// How long after a phase's threads start its devices' window opens: fio starts a job's
    /// thread, and reads the counters, once its `startdelay` has passed.
    pub(crate) fn open_delay(&self, spec: &RunSpec, phase_jobs: &[usize]) -> Duration {
        phase_jobs
            .iter()
            .filter(|&&j| self.windows.iter().any(|(_, jobs)| jobs.contains(&j)))
            .map(|&j| spec.jobs[j].startdelay)
            .min()
            .unwrap_or(Duration::ZERO)
    }

    /// A phase's threads are starting: open the windows of the devices it uses, and of those
    /// opened by an earlier phase.
    pub(crate) fn open(&mut self, phase_jobs: &[usize]) {
        for ((w, jobs), started) in self.windows.iter_mut().zip(self.started.iter_mut()) {
            if *started || jobs.iter().any(|j| phase_jobs.contains(j)) {
                // A device whose counters cannot be read is left out of the report.
                *started = w.open().is_ok();
            }
        }
    }

    /// The phase's threads have all finished.
    pub(crate) fn close(&mut self) {
        for (w, _) in self.windows.iter_mut() {
            let _ = w.close();
        }
    }

    pub(crate) fn reports(&self) -> Vec<DiskReport> {
        self.windows
            .iter()
            .filter_map(|(w, _)| w.report())
            .collect()
    }
}
