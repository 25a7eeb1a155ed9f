//! Where and how a job's threads run: cpus_allowed, cpumask, cpus_allowed_policy, nice,
//! lockmem, exec_prerun/exec_postrun, clocksource, mem/iomem, and engine knobs whose effect
//! iogauge always has (userspace_reap, nonvectored) or that are local no-ops
//! (unique_filename). fio 3.33 semantics; the model is `model::host`.

use super::Opt;
use crate::model::host::{parse_cpu_list, parse_cpu_mask, ClockSource, CpusPolicy};
use crate::model::numa::{host_nodes, parse_list, parse_mem_policy};
use crate::model::units::{parse_bool, parse_bytes, parse_int_in};

/// CPUs the host has configured (fio's cpus_configured), for checking CPU numbers.
pub(super) fn ncpus() -> usize {
    // SAFETY: sysconf takes an integer and touches no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// The options of this group.
pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "cpus_allowed",
        [],
        false,
        "CPUs the job's threads may run on, e.g. 0-3,6",
        |j, v| {
            j.host.cpus = Some(parse_cpu_list(v, ncpus())?);
            Ok(())
        }
    ),
    opt!(
        "cpumask",
        [],
        false,
        "CPUs the job's threads may run on, as a bit mask, e.g. 0x3",
        |j, v| {
            j.host.cpus = Some(parse_cpu_mask(v, ncpus())?);
            Ok(())
        }
    ),
    opt!(
        "cpus_allowed_policy",
        [],
        false,
        "shared (default): every thread on every allowed CPU; split: one CPU per thread",
        |j, v| {
            j.host.cpus_policy = match v {
                "shared" => CpusPolicy::Shared,
                "split" => CpusPolicy::Split,
                _ => {
                    return Err("expected shared or split, e.g. cpus_allowed_policy=split".into())
                }
            };
            Ok(())
        }
    ),
    opt!(
        "nice",
        [],
        false,
        "Scheduling niceness of the job's threads, -20 to 19",
        |j, v| {
            let n: i32 = v
                .trim()
                .parse()
                .ok()
                .filter(|n| (-20..=19).contains(n))
                .ok_or("expected a niceness from -20 to 19, e.g. nice=10")?;
            j.host.nice = n;
            Ok(())
        }
    ),
    opt!(
        "lockmem",
        [],
        false,
        "Pin this much memory with mlock while the job runs (as if the host had less)",
        |j, v| {
            j.host.lockmem = parse_bytes(v).map_err(|_| "expected a size, e.g. lockmem=1g")?;
            Ok(())
        }
    ),
    opt!(
        "exec_prerun",
        [],
        false,
        "Shell command run before the job's I/O, output in <name>.prerun.txt",
        |j, v| {
            j.host.exec_prerun = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "exec_postrun",
        [],
        false,
        "Shell command run after the job's I/O, output in <name>.postrun.txt",
        |j, v| {
            j.host.exec_postrun = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "clocksource",
        [],
        false,
        "cpu (the TSC where reliable), clock_gettime or gettimeofday (taken as clock_gettime)",
        |j, v| {
            j.host.clocksource = Some(match v {
                "cpu" => ClockSource::Cpu,
                "clock_gettime" | "gettimeofday" => ClockSource::ClockGettime,
                _ => {
                    return Err(
                        "expected cpu, clock_gettime or gettimeofday, e.g. clocksource=cpu".into(),
                    )
                }
            });
            Ok(())
        }
    ),
    opt!(
        "mem",
        ["iomem"],
        false,
        "How I/O buffers are allocated: malloc, mmap, mmapshared or shm (iogauge: page-aligned memory for all)",
        |_, v| match v {
            // fio's variants differ in where the pages come from, not in what the I/O sees;
            // iogauge's buffers are page-aligned anonymous memory for all of them.
            "malloc" | "mmap" | "mmapshared" | "shm" => Ok(()),
            "shmhuge" | "mmaphuge" => Err(format!(
                "mem={v} (huge pages) is not supported by iogauge yet; use mem=malloc"
            )),
            _ if v.starts_with("mmap:") || v.starts_with("mmaphuge:") => Err(
                "buffers backed by a file (mem=mmap:FILE) are not supported by iogauge yet; use mem=mmap"
                    .into(),
            ),
            "cudamalloc" => Err("mem=cudamalloc cannot work in iogauge: it needs a GPU".into()),
            _ => Err("expected malloc, mmap, mmapshared or shm, e.g. mem=malloc".into()),
        }
    ),
    opt!(
        "sqthread_poll_cpu",
        [],
        false,
        "io_uring: the CPU the submission polling thread runs on (with sqthread_poll)",
        |j, v| {
            let max = ncpus() as u64 - 1;
            j.host.sqthread_poll_cpu = Some(parse_int_in(v, 0, max).map_err(|_| {
                format!("expected a CPU number from 0 to {max}, e.g. sqthread_poll_cpu=1")
            })? as u32);
            Ok(())
        }
    ),
    opt!(
        "numa_cpu_nodes",
        [],
        false,
        "Run the job's threads on the CPUs of these NUMA nodes, e.g. 0-1",
        |j, v| {
            let online = host_nodes("online");
            let nodes = parse_list(v, usize::MAX, "node")
                .map_err(|e| format!("{e}; expected NUMA nodes, e.g. numa_cpu_nodes=0"))?;
            if let Some(n) = nodes.iter().find(|n| !online.contains(n)) {
                return Err(format!(
                    "NUMA node {n} is not online on this host (online: {online:?}); e.g. numa_cpu_nodes=0"
                ));
            }
            j.host.numa_cpu_nodes = Some(nodes);
            Ok(())
        }
    ),
    opt!(
        "numa_mem_policy",
        [],
        false,
        "Memory policy of the job's threads: default, prefer:N, bind:NODES, interleave[:NODES] or local",
        |j, v| {
            j.host.numa_mem = Some(parse_mem_policy(v, &host_nodes("online"))?);
            Ok(())
        }
    ),
    opt!(
        "cgroup",
        [],
        false,
        "Run the job's threads in this blkio cgroup (cgroup v1), made if missing",
        |j, v| {
            let ok = !v.is_empty() && !v.split('/').any(|p| p.is_empty() || p == "..");
            if !ok {
                return Err("expected a cgroup name below the blkio hierarchy, e.g. cgroup=fio-test".into());
            }
            j.host.cgroup = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "cgroup_weight",
        [],
        false,
        "blkio.weight of the job's cgroup, 100 to 1000 (with cgroup)",
        |j, v| {
            j.host.cgroup_weight = parse_int_in(v, 100, 1000)
                .map_err(|_| "expected a weight from 100 to 1000, e.g. cgroup_weight=500")?
                as u32;
            Ok(())
        }
    ),
    opt!(
        "cgroup_nodelete",
        [],
        true,
        "1 = leave the job's cgroup in place after the run",
        |j, v| {
            j.host.cgroup_nodelete = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "uid",
        [],
        false,
        "User id the job's threads switch to before their I/O (needs root)",
        |j, v| {
            j.host.uid = Some(parse_int_in(v, 0, u32::MAX as u64 - 1).map_err(|_| "expected a user id, e.g. uid=1000")? as u32);
            Ok(())
        }
    ),
    opt!(
        "gid",
        [],
        false,
        "Group id the job's threads switch to before their I/O (needs root)",
        |j, v| {
            j.host.gid = Some(parse_int_in(v, 0, u32::MAX as u64 - 1).map_err(|_| "expected a group id, e.g. gid=1000")? as u32);
            Ok(())
        }
    ),
    opt!(
        "userspace_reap",
        [],
        true,
        "libaio: reap completions from the ring in user space (iogauge always does when it can)",
        |_, v| parse_bool(v).map(|_| ())
    ),
    opt!(
        "nonvectored",
        [],
        true,
        "io_uring: non-vectored reads and writes (iogauge always issues them)",
        |_, v| {
            // fio's default is -1 (use them where the kernel has them); any value runs the same.
            match v.trim() {
                "-1" | "0" | "1" => Ok(()),
                _ => Err("expected 0, 1 or -1, e.g. nonvectored=1".into()),
            }
        }
    ),
    opt!(
        "unique_filename",
        [],
        true,
        "Prefix file names with the client's address in client/server mode (no effect locally)",
        |_, v| parse_bool(v).map(|_| ())
    ),
];
