//! fio's `ioscheduler`: the I/O scheduler of the block device holding a job's files is switched
//! (written to /sys/block/DEV/queue/scheduler and read back, as fio 3.33's set_ioscheduler)
//! before any job starts. Unlike fio, which leaves it switched, iogauge puts the previous
//! scheduler back when the run ends, whatever way it ends.

use super::disks::job_locations;
use crate::model::JobSpec;
use std::path::PathBuf;

/// The schedulers this run switched: (the device's scheduler file, the scheduler before).
pub(super) struct Switched {
    restore: Vec<(PathBuf, String)>,
    /// Where a scheduler that could not be put back is said.
    diag: crate::diag::Diag,
}

/// The selected scheduler in a scheduler file's text (`none [mq-deadline] kyber`).
fn selected(text: &str) -> Option<&str> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(&text[start..end])
}

impl Switched {
    /// Switches the device of every job that names a scheduler. A file on no block device
    /// (tmpfs, NFS) or a device without the sysfs file is left alone, as fio does (it says the
    /// kernel cannot switch); a device whose queue has no scheduler to choose is noted.
    pub(super) fn setup(jobs: &[JobSpec], diag: &crate::diag::Diag) -> Result<Switched, String> {
        let mut s = Switched {
            restore: Vec::new(),
            diag: diag.clone(),
        };
        for job in jobs {
            let Some(want) = &job.io.ioscheduler else {
                continue;
            };
            for loc in job_locations(job) {
                let Ok(Some(disk)) = crate::stats::resolve_disk(&loc) else {
                    continue;
                };
                let file = PathBuf::from(format!("/sys/block/{}/queue/scheduler", disk.name));
                let Ok(before) = std::fs::read_to_string(&file) else {
                    diag.note(&format!(
                        "job '{}': {} cannot switch its I/O scheduler",
                        job.name, disk.name
                    ));
                    continue;
                };
                let Some(old) = selected(&before).map(str::to_string) else {
                    diag.note(&format!(
                        "job '{}': the I/O scheduler of {} is not tunable",
                        job.name, disk.name
                    ));
                    continue;
                };
                let fail = |why: String| {
                    format!(
                        "job '{}': ioscheduler={want}: {why} (available on {}: {})",
                        job.name,
                        disk.name,
                        before.trim()
                    )
                };
                std::fs::write(&file, want)
                    .map_err(|e| fail(format!("cannot write {}: {e}", file.display())))?;
                if !s.restore.iter().any(|(f, _)| *f == file) {
                    s.restore.push((file.clone(), old));
                }
                let now = std::fs::read_to_string(&file).unwrap_or_default();
                if selected(&now) != Some(want.as_str()) {
                    return Err(fail(format!("{} did not take it", file.display())));
                }
            }
        }
        Ok(s)
    }
}

impl Drop for Switched {
    fn drop(&mut self) {
        for (file, old) in self.restore.iter().rev() {
            if let Err(e) = std::fs::write(file, old) {
                self.diag.line(&format!(
                    "iogauge: cannot put the I/O scheduler {old} back in {}: {e}",
                    file.display()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_selected_scheduler() {
        assert_eq!(
            super::selected("none [mq-deadline] kyber bfq\n"),
            Some("mq-deadline")
        );
        assert_eq!(super::selected("none\n"), None);
    }
}
