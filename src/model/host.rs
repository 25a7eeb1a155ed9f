//! Where and how a job's threads run on the host (fio's `cpus_allowed`/`cpumask`,
//! `cpus_allowed_policy`, `nice`, `lockmem`, `exec_prerun`/`exec_postrun`, `clocksource`,
//! io_uring's `sqthread_poll_cpu`). `Default` is fio 3.33's defaults.

/// How the CPUs of `cpus_allowed` are shared by the job's threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpusPolicy {
    /// Every thread may run on every CPU of the set (fio `shared`, the default).
    #[default]
    Shared,
    /// Thread N runs on the N-th CPU of the set only, modulo its size (fio `split`).
    Split,
}

/// fio's `clocksource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockSource {
    /// The CPU's time-stamp counter where the kernel keeps time with it (fio `cpu`).
    Cpu,
    /// `clock_gettime(CLOCK_MONOTONIC)` (fio `clock_gettime`; `gettimeofday` is taken as this).
    ClockGettime,
}

/// The host group's settings of one job.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostSpec {
    /// CPUs the job's threads may run on, ascending, no repeats (`cpus_allowed`, `cpumask`);
    /// None: wherever the scheduler puts them.
    pub cpus: Option<Vec<usize>>,
    /// `cpus_allowed_policy`.
    pub cpus_policy: CpusPolicy,
    /// Scheduling niceness of the job's threads, -20..=19 (`nice`; 0 leaves it alone).
    pub nice: i32,
    /// Bytes each thread pins with mlock(2) while the job runs (`lockmem`), so the page cache
    /// and the job have that much less memory, as if the host had less.
    pub lockmem: u64,
    /// Shell command run before the job's I/O, its output in `<name>.prerun.txt`
    /// (`exec_prerun`); a failure means the job does no I/O, as in fio.
    pub exec_prerun: Option<String>,
    /// Shell command run after the job's I/O, its output in `<name>.postrun.txt`
    /// (`exec_postrun`).
    pub exec_postrun: Option<String>,
    /// `clocksource`; None is fio's choice (the TSC where it is reliable).
    pub clocksource: Option<ClockSource>,
    /// io_uring's submission polling thread runs on this CPU (`sqthread_poll_cpu`).
    pub sqthread_poll_cpu: Option<u32>,
    /// `numa_cpu_nodes`: the job's threads run on these nodes' CPUs (after cpus_allowed, which
    /// it replaces, as fio's order).
    pub numa_cpu_nodes: Option<Vec<usize>>,
    /// `numa_mem_policy`, set on each of the job's threads.
    pub numa_mem: Option<super::numa::MemPolicy>,
    /// `cgroup`: the name of the blkio cgroup the job's threads run in.
    pub cgroup: Option<String>,
    /// `cgroup_weight` (100-1000; 0: not set), written to the group's blkio.weight.
    pub cgroup_weight: u32,
    /// `cgroup_nodelete`: leave the group in place after the run.
    pub cgroup_nodelete: bool,
    /// `uid`/`gid`: the identity each job thread switches to before its I/O (after its files
    /// were laid out and opened, as fio's default create_serialize=1 order).
    pub uid: Option<u32>,
    /// See `uid`.
    pub gid: Option<u32>,
}

impl HostSpec {
    /// The CPUs thread `thread` (counted from 0 across the run, fio's thread_number − 1) may
    /// run on, or None when the job does not restrict them.
    pub fn cpus_for(&self, thread: u32) -> Option<Vec<usize>> {
        let cpus = self.cpus.as_ref().filter(|c| !c.is_empty())?;
        Some(match self.cpus_policy {
            CpusPolicy::Shared => cpus.clone(),
            CpusPolicy::Split => vec![cpus[thread as usize % cpus.len()]],
        })
    }
}

/// fio's CPU list grammar (`cpus_allowed`): CPUs and ranges separated by commas,
/// e.g. `0-3,6`. Every CPU must be below `ncpus`.
pub fn parse_cpu_list(v: &str, ncpus: usize) -> Result<Vec<usize>, String> {
    const HINT: &str = "expected CPU numbers and ranges, e.g. cpus_allowed=0-3,6";
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let num = |s: &str| {
            s.parse::<usize>()
                .map_err(|_| format!("'{part}' is not a CPU number or range; {HINT}"))
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if hi < lo {
            return Err(format!("range '{part}' ends before it starts; {HINT}"));
        }
        if hi >= ncpus {
            return Err(format!(
                "CPU {hi} does not exist: this host has CPUs 0-{}; {HINT}",
                ncpus.saturating_sub(1)
            ));
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// fio's `cpumask`: a bit mask of CPUs (decimal or 0x hex); bit N allows CPU N.
pub fn parse_cpu_mask(v: &str, ncpus: usize) -> Result<Vec<usize>, String> {
    const HINT: &str = "expected a CPU bit mask, e.g. cpumask=0x3 for CPUs 0 and 1";
    let t = v.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| format!("'{v}' is not a mask; {HINT}"))?;
    if mask == 0 {
        return Err(format!("the mask allows no CPU; {HINT}"));
    }
    let cpus: Vec<usize> = (0..64).filter(|b| mask >> b & 1 == 1).collect();
    if let Some(&c) = cpus.iter().find(|&&c| c >= ncpus) {
        return Err(format!(
            "CPU {c} does not exist: this host has CPUs 0-{}; {HINT}",
            ncpus.saturating_sub(1)
        ));
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_masks_and_split() {
        assert_eq!(parse_cpu_list("0-2,1,5", 8).unwrap(), vec![0, 1, 2, 5]);
        assert_eq!(
            parse_cpu_list("3-1", 8).unwrap_err(),
            "range '3-1' ends before it starts; expected CPU numbers and ranges, e.g. cpus_allowed=0-3,6"
        );
        assert_eq!(
            parse_cpu_list("0,9", 2).unwrap_err(),
            "CPU 9 does not exist: this host has CPUs 0-1; expected CPU numbers and ranges, e.g. cpus_allowed=0-3,6"
        );
        assert!(parse_cpu_list("x", 2).is_err());
        assert_eq!(parse_cpu_mask("0x5", 4).unwrap(), vec![0, 2]);
        assert_eq!(parse_cpu_mask("3", 4).unwrap(), vec![0, 1]);
        assert!(parse_cpu_mask("0", 4).is_err());
        assert!(parse_cpu_mask("0x10", 4).is_err());
        let h = HostSpec {
            cpus: Some(vec![1, 3]),
            cpus_policy: CpusPolicy::Split,
            ..HostSpec::default()
        };
        assert_eq!(h.cpus_for(0), Some(vec![1]));
        assert_eq!(h.cpus_for(1), Some(vec![3]));
        assert_eq!(h.cpus_for(2), Some(vec![1]));
        let shared = HostSpec {
            cpus_policy: CpusPolicy::Shared,
            ..h
        };
        assert_eq!(shared.cpus_for(5), Some(vec![1, 3]));
        assert_eq!(HostSpec::default().cpus_for(0), None);
    }
}
