//! fio's `numa_cpu_nodes` and `numa_mem_policy` (fio builds them with libnuma; iogauge reads
//! the node's CPUs from sysfs and sets the memory policy with set_mempolicy(2) itself).

/// `numa_mem_policy`: set_mempolicy(2)'s mode and nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemPolicy {
    /// `default`: the policy is left alone (fio makes no call).
    Default,
    /// `prefer:N`: MPOL_PREFERRED on one node.
    Prefer(usize),
    /// `bind:NODES`: MPOL_BIND.
    Bind(Vec<usize>),
    /// `interleave[:NODES]`: MPOL_INTERLEAVE (every node with memory when none is given).
    Interleave(Vec<usize>),
    /// `local`: MPOL_LOCAL.
    Local,
}

impl MemPolicy {
    /// The kernel's mode number (linux/mempolicy.h).
    pub fn mode(&self) -> i32 {
        match self {
            MemPolicy::Default => 0,
            MemPolicy::Prefer(_) => 1,
            MemPolicy::Bind(_) => 2,
            MemPolicy::Interleave(_) => 3,
            MemPolicy::Local => 4,
        }
    }

    /// The nodes of the policy's mask.
    pub fn nodes(&self) -> Vec<usize> {
        match self {
            MemPolicy::Prefer(n) => vec![*n],
            MemPolicy::Bind(v) | MemPolicy::Interleave(v) => v.clone(),
            MemPolicy::Default | MemPolicy::Local => Vec::new(),
        }
    }
}

/// Where the host's NUMA nodes are described.
pub const NODE_DIR: &str = "/sys/devices/system/node";

/// The host's NUMA nodes in `state` (`online`, `has_memory`), from sysfs; node 0 alone when
/// the kernel has no NUMA support.
pub fn host_nodes(state: &str) -> Vec<usize> {
    std::fs::read_to_string(format!("{NODE_DIR}/{state}"))
        .ok()
        .and_then(|s| parse_list(s.trim(), usize::MAX, "node").ok())
        .unwrap_or_else(|| vec![0])
}

/// A node or CPU list (`0-2,5`), each below `limit`; `what` names the items in errors.
pub fn parse_list(v: &str, limit: usize, what: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{part}' is not a {what} number or range"))
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if hi < lo {
            return Err(format!("{what} range '{part}' ends before it starts"));
        }
        if hi >= limit {
            return Err(format!("{what} {hi} does not exist"));
        }
        out.extend(lo..=hi);
    }
    if out.is_empty() {
        return Err(format!("no {what} given"));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// fio's `numa_mem_policy=MODE[:NODES]` against the host's `online` nodes.
pub fn parse_mem_policy(v: &str, online: &[usize]) -> Result<MemPolicy, String> {
    const HINT: &str = "expected default, prefer:NODE, bind:NODES, interleave[:NODES] or local, \
                        e.g. numa_mem_policy=bind:0";
    let (mode, nodes) = match v.split_once(':') {
        Some((m, n)) => (m, Some(n)),
        None => (v, None),
    };
    let list = |n: &str| -> Result<Vec<usize>, String> {
        let l = parse_list(n, usize::MAX, "node").map_err(|e| format!("{e}; {HINT}"))?;
        match l.iter().find(|x| !online.contains(x)) {
            Some(x) => Err(format!(
                "NUMA node {x} is not online on this host (online: {}); {HINT}",
                online
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            )),
            None => Ok(l),
        }
    };
    Ok(match (mode, nodes) {
        ("default", None) => MemPolicy::Default,
        ("local", None) => MemPolicy::Local,
        ("default" | "local", Some(_)) => return Err(format!("{mode} takes no node list; {HINT}")),
        ("prefer", Some(n)) if n.trim().bytes().all(|b| b.is_ascii_digit()) => {
            MemPolicy::Prefer(list(n)?[0])
        }
        ("prefer", _) => return Err(format!("prefer needs exactly one node; {HINT}")),
        ("bind", Some(n)) => MemPolicy::Bind(list(n)?),
        ("bind", None) => return Err(format!("bind needs a node list; {HINT}")),
        ("interleave", Some(n)) => MemPolicy::Interleave(list(n)?),
        ("interleave", None) => MemPolicy::Interleave(host_nodes("has_memory")),
        _ => return Err(format!("'{mode}' is not a memory policy; {HINT}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_lists() {
        let on = [0, 1];
        assert_eq!(
            parse_mem_policy("bind:0-1", &on),
            Ok(MemPolicy::Bind(vec![0, 1]))
        );
        assert_eq!(parse_mem_policy("prefer:1", &on), Ok(MemPolicy::Prefer(1)));
        assert!(parse_mem_policy("prefer:0,1", &on).is_err());
        assert!(parse_mem_policy("prefer", &on).is_err());
        assert!(parse_mem_policy("bind", &on).is_err());
        assert!(parse_mem_policy("local:0", &on).is_err());
        assert_eq!(parse_mem_policy("local", &on), Ok(MemPolicy::Local));
        assert!(parse_mem_policy("bind:2", &on)
            .unwrap_err()
            .starts_with("NUMA node 2 is not online"));
        assert!(parse_mem_policy("spread", &on).is_err());
        assert_eq!(MemPolicy::Interleave(vec![0]).mode(), 3);
        assert_eq!(parse_list("3,0-1", 8, "node"), Ok(vec![0, 1, 3]));
        assert!(parse_list("", 8, "node").is_err());
    }
}
