//! The files a run finds or leaves: killed runs' leftovers in this run's directories, reaped
//! before anything is created, and the files kept after the run (`--keep-files`, a job's
//! `unlink=0`), recorded as kept in the run's marker.

use crate::diag::Diag;
use crate::model::RunSpec;
use crate::workload::cleanup::CreatedFiles;
use crate::workload::layout;
use crate::workload::marker::{shown, KeptBy};
use std::path::{Path, PathBuf};

/// Before anything is created: the files that killed iogauge runs left in the directories this
/// run uses (their markers list them) are removed, so that they neither fill the disk nor stand
/// in the way (`workload/marker.rs` says what counts as proof that a file is such a leftover).
pub(super) fn reap_dead_runs(spec: &RunSpec, diag: &Diag) {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for job in &spec.jobs {
        for n in 0..job.numjobs {
            // Names only: the files are planned once, after this (the reaping changes what
            // exists). A device's directory holds no run's files.
            for p in layout::plan_paths(job, n) {
                let d = layout::parent_dir(&p);
                let device = std::fs::metadata(&p)
                    .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
                if !device && !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
    }
    for d in dirs {
        let r = crate::workload::marker::reap(&d);
        for line in r.describe() {
            diag.line(&format!("iogauge: {line}"));
        }
    }
}

/// After the run, before the rest is removed: with `--keep-files` every file stays, else those
/// whose job said `unlink=0`. They are the user's now (untagged). With `record` (`check`, whose
/// names the user did not choose) `--keep-files`' files are recorded as kept in the run's
/// marker, which stays, and named on stderr with how to remove them later; `iogauge fio` keeps
/// them as fio does, leaving nothing else in the directory, and returns a note naming them for
/// the report (fio says nothing on stderr there, and scripts read stderr).
pub(super) fn keep(
    spec: &RunSpec,
    created: &CreatedFiles,
    record: bool,
    diag: &Diag,
) -> Vec<String> {
    let (kept, by) = if spec.keep_files {
        (created.list(), KeptBy::KeepFiles)
    } else {
        (kept_by_unlink(spec, created), KeptBy::Unlink)
    };
    let record = record && by == KeptBy::KeepFiles;
    for p in &kept {
        if record {
            created.keep(p, by);
        } else {
            created.forget(p);
        }
        crate::workload::tag::untag(p);
    }
    if record {
        for line in kept_lines(&kept) {
            diag.line(&format!("iogauge: {line}"));
        }
        return Vec::new();
    }
    if by != KeptBy::KeepFiles {
        return Vec::new();
    }
    let mut notes: Vec<String> = kept
        .iter()
        .take(NAMED)
        .map(|p| {
            format!(
                "kept {} as asked (--keep-files); it is yours now (iogauge no longer tracks it)",
                shown(p)
            )
        })
        .collect();
    if kept.len() > NAMED {
        notes.push(format!(
            "kept {} more files as asked (--keep-files)",
            kept.len() - NAMED
        ));
    }
    notes
}

/// `--keep-files` for the small-files test: every file stays.
pub(crate) fn keep_all(created: &CreatedFiles, diag: &Diag) {
    let kept = created.list();
    created.keep_all(KeptBy::KeepFiles);
    for line in kept_lines(&kept) {
        diag.line(&format!("iogauge: {line}"));
    }
}

/// Most files named one per line; more in one directory are counted.
const NAMED: usize = 10;

/// The files kept with `--keep-files`, per directory, and how to remove them later.
pub(crate) fn kept_lines(kept: &[PathBuf]) -> Vec<String> {
    let mut dirs: Vec<(PathBuf, Vec<&Path>)> = Vec::new();
    for p in kept {
        let d = layout::parent_dir(p);
        match dirs.iter_mut().find(|(x, _)| *x == d) {
            Some((_, v)) => v.push(p),
            None => dirs.push((d, vec![p])),
        }
    }
    let mut out = Vec::new();
    for (d, files) in dirs {
        let how = format!(
            "remove it later with `iogauge cleanup --kept {}`",
            shown(&d)
        );
        if files.len() <= NAMED {
            out.extend(
                files
                    .iter()
                    .map(|f| format!("kept {} as asked (--keep-files); {how}", shown(f))),
            );
        } else {
            out.push(format!(
                "kept {} files in {} as asked (--keep-files), e.g. {}; {}",
                files.len(),
                shown(&d),
                shown(files[0]),
                how.replace("remove it", "remove them")
            ));
        }
    }
    out
}

/// Files whose job said `unlink=0`: they stay, as the user asked.
pub(super) fn kept_by_unlink(spec: &RunSpec, created: &CreatedFiles) -> Vec<PathBuf> {
    let listed = created.list();
    let mut keep = Vec::new();
    for job in spec.jobs.iter().filter(|j| !j.unlink) {
        for n in 0..job.numjobs {
            keep.extend(
                layout::plan_paths(job, n)
                    .into_iter()
                    .filter(|p| listed.contains(p)),
            );
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_files_are_named_up_to_ten_per_directory_then_counted() {
        let few: Vec<PathBuf> = (0..2).map(|i| PathBuf::from(format!("/d/f{i}"))).collect();
        assert_eq!(
            kept_lines(&few),
            [
                "kept '/d/f0' as asked (--keep-files); remove it later with `iogauge cleanup --kept '/d'`",
                "kept '/d/f1' as asked (--keep-files); remove it later with `iogauge cleanup --kept '/d'`",
            ]
        );
        let many: Vec<PathBuf> = (0..11).map(|i| PathBuf::from(format!("/d/f{i}"))).collect();
        assert_eq!(
            kept_lines(&many),
            ["kept 11 files in '/d' as asked (--keep-files), e.g. '/d/f0'; remove them later with `iogauge cleanup --kept '/d'`"]
        );
    }
}
