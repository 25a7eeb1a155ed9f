//! Refusing what could destroy data iogauge does not own: existing files (a killed run's
//! leftover, fio's data file, or a file of unknown origin) and block devices without
//! `--allow-overwrite`, reads of files create_on_open would leave empty, and directory engines'
//! existing directories.

use super::{job_reads, job_writes, FilePlan, LayoutError};
use crate::model::JobSpec;
use crate::workload::cleanup::CreatedFiles;
use crate::workload::tag::created_by_iogauge;
use std::path::Path;

/// Refuse what could destroy data iogauge does not own. `created` holds files created earlier in
/// this run (numjobs clones share a `filename`).
pub(crate) fn check_safety(
    job: &JobSpec,
    plan: &FilePlan,
    allow_overwrite: bool,
    created: &CreatedFiles,
) -> Result<(), LayoutError> {
    if job.files.create_on_open && job_reads(job) && !plan.existed {
        return Err(LayoutError::CreateOnOpenRead {
            job: job.name.clone(),
            path: plan.path.clone(),
        });
    }
    if !plan.existed && !created.contains(&plan.path) {
        // Nothing there by `stat`, yet a name: a symlink to nothing. iogauge never creates a
        // file through a symlink (O_EXCL|O_NOFOLLOW), so it would only fail later.
        if let Ok(m) = std::fs::symlink_metadata(&plan.path) {
            return Err(LayoutError::InTheWay {
                path: plan.path.clone(),
                what: if m.file_type().is_symlink() {
                    "a symlink to something that does not exist"
                } else {
                    "something iogauge cannot create a file over"
                },
            });
        }
        return Ok(());
    }
    // A directory where the job needs its data file: fio fails there with EISDIR ("Is a
    // directory", error 21); say what is in the way and how to get what was meant.
    let file_op = job.ioengine.file_op();
    if job.ioengine != crate::model::IoEngine::Null
        && file_op != Some(crate::model::engines::FileOp::Stat)
        && std::fs::metadata(&plan.path).is_ok_and(|m| m.is_dir())
    {
        return Err(LayoutError::IsADirectory {
            job: job.name.clone(),
            path: plan.path.clone(),
            fix: if job.filename.is_some() {
                "to create the job's files inside it, give it as directory= instead of filename="
            } else {
                "remove or rename it, or choose another directory="
            },
        });
    }
    if allow_overwrite || created.contains(&plan.path) {
        return Ok(());
    }
    if plan.is_block {
        if job_writes(job) {
            return Err(LayoutError::BlockDevice {
                path: plan.path.clone(),
            });
        }
        return Ok(());
    }
    if job_writes(job) {
        return Err(existing_file_error(job, &plan.path));
    }
    let have = std::fs::metadata(&plan.path).map(|m| m.len()).unwrap_or(0);
    if have < plan.size {
        return Err(LayoutError::ExistingTooSmall {
            path: plan.path.clone(),
            have,
            need: plan.size,
        });
    }
    Ok(())
}

/// A directory engine's path that exists before the run: dircreate makes new directories
/// (fio 3.37's mkdir fails with EEXIST), dirdelete removes them (they are the user's, so only
/// with --allow-overwrite); dirstat only looks at them.
pub(crate) fn check_dir_safety(
    job: &JobSpec,
    op: crate::model::engines::FileOp,
    plan: &FilePlan,
    allow_overwrite: bool,
) -> Result<(), LayoutError> {
    use crate::model::engines::FileOp;
    let why = match op {
        FileOp::DirCreate => {
            "ioengine=dircreate makes new directories (fio's mkdir fails with EEXIST): remove \
             it or use another directory"
        }
        FileOp::DirDelete if !allow_overwrite => {
            "ioengine=dirdelete would remove it, and iogauge did not create it: remove it, use \
             another directory, or pass --allow-overwrite"
        }
        _ => return Ok(()),
    };
    Err(LayoutError::ExistingDir {
        job: job.name.clone(),
        path: plan.path.clone(),
        why,
    })
}

/// fio names its files `<job>.<jobnum>.<filenum>`.
fn looks_like_fio_file(job: &JobSpec, path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let Some(rest) = name.strip_prefix(&format!("{}.", job.name)) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('.').collect();
    parts.len() == 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Why an existing file is not written: a killed run's leftover, fio's data file, or a file of
/// unknown origin.
fn existing_file_error(job: &JobSpec, path: &Path) -> LayoutError {
    let path = path.to_path_buf();
    if created_by_iogauge(&path) {
        LayoutError::LeftOver { path }
    } else if looks_like_fio_file(job, &path) {
        LayoutError::FioDataFile {
            path,
            job: job.name.clone(),
        }
    } else {
        LayoutError::ExistingFile { path }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{job, lay_out::lay_out, plan::plan_files};
    use super::*;
    use crate::model::{RwKind, SizeSpec};
    use std::sync::atomic::AtomicBool;

    #[test]
    fn refuses_existing_file_for_writes_unless_allowed() {
        let d = tempfile::tempdir().unwrap();
        let mut w = job("w", d.path());
        w.rw.kind = RwKind::Write;
        w.filename = Some("precious.db".into());
        std::fs::write(d.path().join("precious.db"), b"precious").unwrap();
        let p = &plan_files(&w, 0).unwrap()[0];
        let created = CreatedFiles::new();
        let e = check_safety(&w, p, false, &created).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "refusing to write into existing file '{}', which iogauge did not create; remove it, choose another --directory/--filename, or pass --allow-overwrite",
                p.path.display()
            )
        );
        assert!(check_safety(&w, p, true, &created).is_ok());
        // fio's own naming (<job>.<n>.<m>) is called fio's data file.
        w.filename = None;
        std::fs::write(d.path().join("w.0.0"), b"fio data").unwrap();
        let p = &plan_files(&w, 0).unwrap()[0];
        assert_eq!(
            check_safety(&w, p, false, &created).unwrap_err().to_string(),
            format!(
                "refusing to write into '{}': it looks like a data file that fio (which keeps its files) or iogauge --keep-files left for job 'w'; remove it, or pass --allow-overwrite to let iogauge lay it out anew",
                p.path.display()
            )
        );
        // Reading an existing file is fine when it is large enough.
        let mut r = job("w", d.path());
        r.size = Some(SizeSpec::Bytes(4));
        r.bs = [4; 3];
        let p = &plan_files(&r, 0).unwrap()[0];
        assert!(check_safety(&r, p, false, &created).is_ok());
    }

    #[test]
    fn a_killed_runs_file_is_called_a_leftover() {
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let mut w = job("left", d.path());
        w.rw.kind = RwKind::Write;
        let p = &plan_files(&w, 0).unwrap()[0];
        // Laid out by one run (tagged), then that run "dies" without cleaning up.
        assert!(lay_out(&w, p, &CreatedFiles::new(), &AtomicBool::new(false)).unwrap());
        let p = &plan_files(&w, 0).unwrap()[0];
        assert_eq!(
            check_safety(&w, p, false, &CreatedFiles::new())
                .unwrap_err()
                .to_string(),
            format!(
                "refusing to write into '{0}': an earlier iogauge run created it and was killed before it could clean up; it holds only test data, so remove it (rm '{0}') and run again",
                p.path.display()
            )
        );
        // check's names carry the prefix even where xattrs are not supported.
        assert!(created_by_iogauge(Path::new("/x/iogauge-etcd.1.2")));
        assert!(!created_by_iogauge(Path::new("/nonexistent/mytest.0.0")));
    }
}
