//! The files a run finds or leaves: killed runs' leftovers in this run's directories, reaped
//! before anything is created, and the files a job's `unlink=0` keeps after the run.

use crate::model::RunSpec;
use crate::workload::cleanup::CreatedFiles;
use crate::workload::layout;
use std::path::PathBuf;

/// Before anything is created: the files that killed iogauge runs left in the directories this
/// run uses (their markers list them) are removed, so that they neither fill the disk nor stand
/// in the way (`workload/marker.rs` says what counts as proof that a file is such a leftover).
pub(super) fn reap_dead_runs(spec: &RunSpec) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for job in &spec.jobs {
        for n in 0..job.numjobs {
            for p in layout::plan_files(job, n).unwrap_or_default() {
                let d = layout::parent_dir(&p.path);
                if !p.is_block && !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
    }
    for d in dirs {
        let r = crate::workload::marker::reap(&d);
        for line in r.describe() {
            eprintln!("iogauge: {line}");
        }
    }
}

/// Files whose job said `unlink=0`: they stay, as the user asked.
pub(super) fn kept_by_unlink(spec: &RunSpec, created: &CreatedFiles) -> Vec<PathBuf> {
    let listed = created.list();
    let mut keep = Vec::new();
    for job in spec.jobs.iter().filter(|j| !j.unlink) {
        for n in 0..job.numjobs {
            if let Ok(plans) = layout::plan_files(job, n) {
                keep.extend(
                    plans
                        .into_iter()
                        .map(|p| p.path)
                        .filter(|p| listed.contains(p)),
                );
            }
        }
    }
    keep
}
