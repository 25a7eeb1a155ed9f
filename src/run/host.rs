//! A job's host settings put into effect (fio's cpus_allowed, nice, lockmem, exec_prerun and
//! exec_postrun; `model::host`). The thread settings are tried once on a probe thread before
//! the run, so a setting the host refuses (a CPU taken away by a cgroup, a negative nice
//! without CAP_SYS_NICE, an mlock over RLIMIT_MEMLOCK) stops the run with its reason before any
//! I/O; fio instead fails that job and runs the others.

use crate::model::JobSpec;
use std::process::Command;

/// Applies the job's CPU set and niceness to the calling thread.
pub(super) fn apply(job: &JobSpec, thread: u32) -> Result<(), String> {
    if let Some(cpus) = job.host.cpus_for(thread) {
        // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in &cpus {
            // SAFETY: CPU_SET writes bit c of the set, which parse_cpu_list kept in range.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: pid 0 is the calling thread; the set is valid for its size.
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
        if r != 0 {
            let cpus: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
            return Err(format!(
                "job '{}': cpus_allowed: this process may not run on CPU(s) {}: {} (a cgroup \
                 or taskset may restrict it; see /proc/self/status Cpus_allowed_list)",
                job.name,
                cpus.join(","),
                std::io::Error::last_os_error()
            ));
        }
    }
    // numa_cpu_nodes replaces cpus_allowed's set, as fio applies it after.
    super::numa::apply(job)?;
    super::cgroup::join(job)?;
    set_identity(job)?;
    if job.host.nice != 0 {
        // SAFETY: gettid cannot fail; setpriority on a thread id sets that thread's niceness.
        let r = unsafe {
            libc::setpriority(
                libc::PRIO_PROCESS,
                libc::gettid() as libc::id_t,
                job.host.nice,
            )
        };
        if r != 0 {
            return Err(format!(
                "job '{}': nice={}: {} (a negative niceness needs CAP_SYS_NICE or RLIMIT_NICE)",
                job.name,
                job.host.nice,
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// fio's `gid` then `uid` (setgid/setuid in the job process). iogauge's jobs are threads, so
/// the raw system calls are used: glibc's wrappers would switch every thread of the process.
/// Last of the thread's settings, as the others may need the privileges it gives up.
fn set_identity(job: &JobSpec) -> Result<(), String> {
    let h = &job.host;
    for (what, id, nr) in [
        ("gid", h.gid, libc::SYS_setresgid),
        ("uid", h.uid, libc::SYS_setresuid),
    ] {
        let Some(id) = id else { continue };
        // SAFETY: setresgid/setresuid take three ids and touch no memory of ours.
        let r = unsafe { libc::syscall(nr, id, id, id) };
        if r != 0 {
            return Err(format!(
                "job '{}': {what}={id}: {} (switching identity needs root or CAP_SET{})",
                job.name,
                std::io::Error::last_os_error(),
                what[..1].to_uppercase() + "ID"
            ));
        }
    }
    Ok(())
}

/// Tries the job's thread settings on a thread of its own, which then ends.
pub(super) fn probe(job: &JobSpec, thread: u32) -> Result<(), String> {
    let h = &job.host;
    if h.cpus.is_none()
        && h.nice == 0
        && h.numa_cpu_nodes.is_none()
        && h.numa_mem.is_none()
        && h.cgroup.is_none()
        && h.uid.is_none()
        && h.gid.is_none()
    {
        return Ok(());
    }
    std::thread::scope(|s| {
        s.spawn(|| apply(job, thread))
            .join()
            .unwrap_or_else(|_| Err("the probe thread panicked".into()))
    })
}

/// `lockmem` bytes, touched and pinned with mlock(2) until dropped.
pub(super) struct LockedMem {
    mem: Vec<u8>,
}

impl LockedMem {
    /// Pins `job.host.lockmem` bytes (None when the job pins nothing).
    pub(super) fn pin(job: &JobSpec) -> Result<Option<LockedMem>, String> {
        let n = job.host.lockmem as usize;
        if n == 0 {
            return Ok(None);
        }
        let mut mem = Vec::new();
        mem.try_reserve_exact(n).map_err(|_| {
            format!(
                "job '{}': lockmem={n}: cannot allocate that much memory",
                job.name
            )
        })?;
        mem.resize(n, 1u8);
        // SAFETY: the range is this Vec's own, initialised memory.
        let r = unsafe { libc::mlock(mem.as_ptr().cast(), n) };
        if r != 0 {
            return Err(format!(
                "job '{}': lockmem={n}: mlock failed: {} (raise RLIMIT_MEMLOCK, e.g. ulimit -l, \
                 or run as root)",
                job.name,
                std::io::Error::last_os_error()
            ));
        }
        Ok(Some(LockedMem { mem }))
    }
}

impl Drop for LockedMem {
    fn drop(&mut self) {
        // SAFETY: unlocks the range locked in `pin`, still owned by this Vec.
        unsafe { libc::munlock(self.mem.as_ptr().cast(), self.mem.len()) };
    }
}

/// fio's exec_prerun/exec_postrun: `CMD > NAME.MODE.txt 2>&1` through the shell, in the
/// current directory, as fio 3.33's exec_string does. Returns whether it exited 0. fio prints
/// its "Saving output" line on stdout; iogauge keeps stdout for the results and prints it on
/// stderr.
pub(super) fn exec(job: &JobSpec, cmd: &str, mode: &str, diag: &crate::diag::Diag) -> bool {
    let out = format!("{}.{mode}.txt", job.name);
    diag.line(&format!("{} : Saving output of {mode} in {out}", job.name));
    // The output file is opened here, not by a shell redirection: the job's name never reaches
    // the shell, and a symlink planted at that name is not written through.
    let file = match crate::workload::fs::create_output(std::path::Path::new(&out)) {
        Ok(f) => f,
        Err(e) => {
            diag.note(&format!(
                "job '{}': exec_{mode} cannot write its output to '{out}': {e}",
                job.name
            ));
            return false;
        }
    };
    let status = file.try_clone().and_then(|err| {
        Command::new("/bin/sh")
            .arg("-c")
            .arg(cmd)
            .stdout(file)
            .stderr(err)
            .status()
    });
    match status {
        Ok(s) if s.success() => true,
        Ok(s) => {
            diag.note(&format!(
                "job '{}': exec_{mode} exited with {s}{}",
                job.name,
                if mode == "prerun" {
                    "; the job does no I/O, as in fio"
                } else {
                    ""
                }
            ));
            false
        }
        Err(e) => {
            diag.note(&format!(
                "job '{}': exec_{mode} could not run /bin/sh: {e}",
                job.name
            ));
            false
        }
    }
}
