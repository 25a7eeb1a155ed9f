//! Reasons not to trust a `check` result: the directory is memory, the page cache answered the
//! reads, the run was too short to show variation, or throughput varied a lot. A result that is
//! not a disk measurement at all is never a plain PASS.

use super::profile::Measured;
use crate::model::{JobSpec, DDIR_READ, DDIR_WRITE};

/// Buffered reads above this rate cannot have come from a disk.
const PAGE_CACHE_BPS: u64 = 8 << 30;

/// What the directory is on, as far as trust goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Place {
    /// A memory-backed filesystem ("tmpfs (memory)").
    pub memory: Option<String>,
    /// An overlay whose writable layer cannot be seen (a container's own storage).
    pub container_layer: bool,
    /// The place is a block device (`--device`), not a directory: `memory` names the device.
    pub device: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Trust {
    /// Why the numbers describe memory rather than a disk; the verdict is at least WARN.
    pub not_disk: Option<String>,
    /// Everything else worth saying next to the verdict.
    pub warnings: Vec<String>,
}

pub(crate) fn assess(job: Option<&JobSpec>, measured: &Measured, place: &Place) -> Trust {
    let mut t = Trust::default();
    if let Some(what) = &place.memory {
        t.not_disk = Some(if place.device {
            format!(
                "the device is {what}, so this measured RAM; point --device at the disk you mean"
            )
        } else {
            format!("the directory is on {what}, so this measured RAM; point --dir at the disk you mean")
        });
    } else if place.container_layer {
        t.warnings.push(
            "the directory is in a container's writable layer (overlayfs), not on a mounted volume; \
             mount the volume you mean and point --dir at it"
                .into(),
        );
    }
    let (Some(job), Measured::Fio(r)) = (job, measured) else {
        return t;
    };
    let Some(j) = r.jobs.first() else { return t };
    for (d, word) in [(DDIR_READ, "read"), (DDIR_WRITE, "write")] {
        let dir = &j.dirs[d];
        if dir.total_ios == 0 {
            continue;
        }
        let s = &dir.iops_samples;
        // A run that stopped once its verdict was decided has few samples on purpose: its
        // stopping rule weighed the variation.
        let decided = j.sequential.as_ref().is_some_and(|q| q.stopped_early);
        if s.samples < 3 && !decided {
            // A size-bound recipe cannot be run longer with --duration, only made larger.
            let how = if job.time_based {
                "run longer with --duration".to_string()
            } else {
                format!(
                    "this profile transfers a fixed size, done in {:.1} s here; a larger --size runs longer",
                    dir.runtime_ms as f64 / 1000.0
                )
            };
            let n = s.samples;
            t.warnings.push(format!(
                "the {word} run gave {n} periodic sample{} (under 3): too short to show variation; {how}",
                if n == 1 { "" } else { "s" }
            ));
        } else if s.mean > 0.0 && s.stddev / s.mean > 0.3 {
            t.warnings.push(format!(
                "{word} IOPS varied a lot across {} samples (coefficient of variation {:.0}%): the disk \
                 was busy or throttled; repeat the check",
                s.samples,
                100.0 * s.stddev / s.mean
            ));
        }
        if d == DDIR_READ && !job.direct && dir.bw_bytes > PAGE_CACHE_BPS && t.not_disk.is_none() {
            t.not_disk = Some(
                "buffered reads ran faster than a disk could (over 8 GiB/s): the page cache answered them"
                    .into(),
            );
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{JobReport, Report};

    fn report(read_bw: u64, direct: bool) -> (JobSpec, Measured) {
        let mut j = JobReport::default();
        j.dirs[DDIR_READ].total_ios = 1000;
        j.dirs[DDIR_READ].bw_bytes = read_bw;
        j.dirs[DDIR_READ].iops_samples.samples = 10;
        j.dirs[DDIR_READ].iops_samples.mean = 100.0;
        j.dirs[DDIR_READ].iops_samples.stddev = 10.0;
        let r = Report {
            version: String::new(),
            started_at: std::time::SystemTime::UNIX_EPOCH,
            context: None,
            global_options: Vec::new(),
            jobs: vec![j],
            groups: Vec::new(),
            disks: Vec::new(),
            notes: Vec::new(),
            job_lines: Vec::new(),
            interrupted: None,
        };
        let job = JobSpec {
            direct,
            ..JobSpec::default()
        };
        (job, Measured::Fio(r))
    }

    #[test]
    fn memory_and_page_cache_are_not_disk_measurements() {
        let (job, m) = report(1 << 20, false);
        let on_tmpfs = Place {
            memory: Some("tmpfs (memory)".into()),
            container_layer: false,
            device: false,
        };
        let t = assess(Some(&job), &m, &on_tmpfs);
        assert_eq!(
            t.not_disk.as_deref(),
            Some("the directory is on tmpfs (memory), so this measured RAM; point --dir at the disk you mean")
        );
        assert!(t.warnings.is_empty());
        let zram = Place {
            memory: Some("zram0, a compressed RAM disk (zram)".into()),
            container_layer: false,
            device: true,
        };
        assert_eq!(
            assess(Some(&job), &m, &zram).not_disk.as_deref(),
            Some("the device is zram0, a compressed RAM disk (zram), so this measured RAM; point --device at the disk you mean")
        );
        // Just above the page-cache rate, buffered: not a disk; direct I/O at that rate is a disk.
        let (job, m) = report(PAGE_CACHE_BPS + 1, false);
        assert!(assess(Some(&job), &m, &Place::default())
            .not_disk
            .unwrap()
            .starts_with("buffered reads ran faster"));
        let (job, m) = report(PAGE_CACHE_BPS, false);
        assert_eq!(assess(Some(&job), &m, &Place::default()), Trust::default());
        let (job, m) = report(PAGE_CACHE_BPS + 1, true);
        assert_eq!(assess(Some(&job), &m, &Place::default()).not_disk, None);
    }

    #[test]
    fn few_samples_and_variation() {
        let (job, Measured::Fio(mut r)) = report(1 << 20, true) else {
            unreachable!()
        };
        r.jobs[0].dirs[DDIR_READ].iops_samples.samples = 2;
        let t = assess(Some(&job), &Measured::Fio(r.clone()), &Place::default());
        assert_eq!(t.warnings.len(), 1);
        assert!(t.warnings[0].contains("gave 2 periodic samples (under 3)"));
        assert!(
            t.warnings[0].ends_with("; a larger --size runs longer"),
            "{}",
            t.warnings[0]
        );
        let timed = JobSpec {
            time_based: true,
            ..job.clone()
        };
        let t = assess(Some(&timed), &Measured::Fio(r.clone()), &Place::default());
        assert!(
            t.warnings[0].ends_with("; run longer with --duration"),
            "{t:?}"
        );
        // One sample is singular ("1 periodic samples" before).
        r.jobs[0].dirs[DDIR_READ].iops_samples.samples = 1;
        let t = assess(Some(&job), &Measured::Fio(r.clone()), &Place::default());
        assert!(t.warnings[0].contains("gave 1 periodic sample (under 3)"));
        r.jobs[0].dirs[DDIR_READ].iops_samples.samples = 3;
        r.jobs[0].dirs[DDIR_READ].iops_samples.stddev = 31.0;
        let t = assess(Some(&job), &Measured::Fio(r), &Place::default());
        assert!(
            t.warnings[0].contains("coefficient of variation 31%"),
            "{t:?}"
        );
    }
}
