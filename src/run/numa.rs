//! fio's `numa_cpu_nodes` and `numa_mem_policy` on a worker thread: the nodes' CPUs (from
//! sysfs) as its affinity, and its memory policy with set_mempolicy(2), both per thread in
//! Linux. fio does the same through libnuma (numa_run_on_node_mask, numa_set_membind, …).

use crate::model::numa::{parse_list, MemPolicy, NODE_DIR};
use crate::model::JobSpec;

/// Bits in the node mask given to set_mempolicy, and its maxnode (libnuma passes the same).
const MASK_WORDS: usize = 16;
const MAXNODE: libc::c_ulong = (MASK_WORDS * 64 + 1) as libc::c_ulong;

/// The CPUs of `nodes`, from /sys/devices/system/node/nodeN/cpulist.
fn node_cpus(nodes: &[usize]) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for n in nodes {
        let path = format!("{NODE_DIR}/node{n}/cpulist");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {path}: {e} (is node {n} online?)"))?;
        if !text.trim().is_empty() {
            cpus.extend(parse_list(text.trim(), usize::MAX, "CPU")?);
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Applies the job's NUMA settings to the calling thread.
pub(super) fn apply(job: &JobSpec) -> Result<(), String> {
    if let Some(nodes) = &job.host.numa_cpu_nodes {
        let cpus =
            node_cpus(nodes).map_err(|e| format!("job '{}': numa_cpu_nodes: {e}", job.name))?;
        // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            // SAFETY: c is below CPU_SETSIZE, the set's size in bits.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: pid 0 is the calling thread; the set is valid for its size.
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
        if r != 0 || cpus.is_empty() {
            return Err(format!(
                "job '{}': numa_cpu_nodes: cannot run on the CPUs of node(s) {nodes:?} ({cpus:?}): {}",
                job.name,
                std::io::Error::last_os_error()
            ));
        }
    }
    match &job.host.numa_mem {
        None | Some(MemPolicy::Default) => Ok(()),
        Some(p) => {
            let mut mask = [0u64; MASK_WORDS];
            for n in p.nodes().into_iter().filter(|&n| n < MASK_WORDS * 64) {
                mask[n / 64] |= 1 << (n % 64);
            }
            // SAFETY: the mask holds MAXNODE - 1 bits and outlives the call.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_set_mempolicy,
                    p.mode() as libc::c_long,
                    mask.as_ptr(),
                    MAXNODE,
                )
            };
            if r != 0 {
                return Err(format!(
                    "job '{}': numa_mem_policy: set_mempolicy failed: {}",
                    job.name,
                    std::io::Error::last_os_error()
                ));
            }
            Ok(())
        }
    }
}
