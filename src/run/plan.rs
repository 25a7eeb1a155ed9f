//! Expanding jobs into instances (numjobs) and grouping them: `stonewall` waits for earlier jobs
//! and starts a new reporting group; `new_group` only starts a reporting group.

use crate::model::{JobSpec, SizeSpec};
use crate::workload::layout::FilePlan;
use crate::workload::offsets::holed_pass_bytes;
use crate::workload::rng::Rng;

/// One thread's worth of work.
#[derive(Debug, Clone)]
pub struct Instance {
    /// Index into RunSpec.jobs.
    pub job: usize,
    pub jobnum: u32,
    pub groupid: u32,
    /// Instances of one phase start together; phases run one after another.
    pub phase: u32,
    /// fio's thread number − 1 (cpus_allowed_policy=split picks the CPU by it).
    pub thread: u32,
    pub files: Vec<FilePlan>,
    /// Its files are planned when its phase starts: a job without a size reading a file that a
    /// job of an earlier phase creates (fio's surface scan: fill the disk, then read it all).
    pub deferred: bool,
}

/// (groupid, phase) for each job, in order.
pub(crate) fn group_and_phase(jobs: &[JobSpec]) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(jobs.len());
    let (mut g, mut p) = (0u32, 0u32);
    for (i, j) in jobs.iter().enumerate() {
        if i > 0 {
            if j.stonewall {
                g += 1;
                p += 1;
            } else if j.new_group {
                g += 1;
            }
        }
        out.push((g, p));
    }
    out
}

/// Bytes an instance transfers after ramp: every whole block of every region, `loops` times.
/// None for time-based jobs, which run until their deadline.
pub(crate) fn io_limit(job: &JobSpec, files: &[FilePlan]) -> Option<u64> {
    if job.time_based {
        return None;
    }
    let bs = job.unit_bs();
    let holes = job.blocks.rw_seq_add != 0 && !job.rw.random;
    let mut per_pass: u64 = match job.one_transfer_size() {
        // rw=read:N: fio's pass ends where the next I/O no longer fits in the file.
        Some(bs) if holes => files
            .iter()
            .map(|f| holed_pass_bytes(f.offset, f.region, bs, job.blocks.rw_seq_add))
            .sum(),
        _ => files.iter().map(|f| f.region / bs * bs).sum(),
    };
    // fio: with filesize= setting the files, size= caps the job's I/O when it is smaller than
    // the files together (I/O still goes round the files).
    if let (Some(_), Some(SizeSpec::Bytes(size))) = (job.filesize, job.size) {
        per_pass = per_pass.min(size / bs * bs);
    }
    // trimwrite trims and then writes every block: twice the bytes (as fio counts it).
    let dirs = if job.rw.kind == crate::model::RwKind::TrimWrite {
        2
    } else {
        1
    };
    Some(job.byte_limit(per_pass) * dirs)
}

/// Seed of one instance: repeatable from `randseed` with randrepeat=1 (different per clone, as in
/// fio), fresh entropy otherwise.
/// `allrandrepeat` wins over both: fio then seeds every generator from its fixed base, so
/// iogauge uses the default `randseed` whatever was given.
pub(crate) fn seed_for(job: &JobSpec, jobnum: u32) -> u64 {
    if job.io.allrandrepeat {
        JobSpec::default()
            .randseed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(jobnum as u64 + 1)
    } else if job.randrepeat {
        job.randseed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(jobnum as u64 + 1)
    } else {
        Rng::entropy_seed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RwKind;

    fn j(stonewall: bool, new_group: bool) -> JobSpec {
        JobSpec {
            stonewall,
            new_group,
            ..JobSpec::default()
        }
    }

    #[test]
    fn stonewall_and_new_group() {
        let jobs = [
            j(false, false),
            j(false, false),
            j(true, false),
            j(false, true),
            j(false, false),
        ];
        assert_eq!(
            group_and_phase(&jobs),
            vec![(0, 0), (0, 0), (1, 1), (2, 1), (2, 1)]
        );
    }

    #[test]
    fn first_job_stonewall_changes_nothing() {
        assert_eq!(group_and_phase(&[j(true, true)]), vec![(0, 0)]);
    }

    #[test]
    fn io_limit_counts_whole_blocks() {
        let job = JobSpec {
            bs: [2300; 3],
            rw: crate::model::RwMode {
                kind: RwKind::Write,
                random: false,
            },
            ..JobSpec::default()
        };
        let f = FilePlan {
            path: "x".into(),
            offset: 0,
            region: 22 << 20,
            size: 22 << 20,
            existed: false,
            is_block: false,
        };
        // fio's etcd recipe: 22 MiB / 2300 B = 10029 writes.
        assert_eq!(io_limit(&job, &[f]), Some(10029 * 2300));
    }
}
