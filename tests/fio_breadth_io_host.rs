//! The host side of the I/O options (numa_cpu_nodes, numa_mem_policy, cgroup, cgroup_weight,
//! cgroup_nodelete, ioscheduler): fixtures `tests/fixtures/fio/io-numa.fio`, `io-cgroup.fio` and
//! `io-ioscheduler.fio` under fio 3.33 and iogauge, with the system calls (strace), the cgroup's
//! members (/sys/fs/cgroup) and the device's scheduler (/sys/block) each option exists for. fio
//! must be installed (with CI=true a missing fio fails); the strace checks skip without strace,
//! the cgroup and scheduler checks without root (or a cgroup v1 blkio hierarchy, or a device
//! with a choice of schedulers).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::strace::*;
use common::*;

use std::path::Path;

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

#[test]
fn numa_options_make_fios_affinity_and_mempolicy_calls() {
    if !have_fio() || !have_strace() {
        return;
    }
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
    // The job's calls: the thread's own affinity (pid 0) and memory policy; fio's libnuma also
    // probes with MPOL_PREFERRED_MANY and MPOL_DEFAULT at start, which are not the job's.
    let job_calls = |c: &[String]| -> std::collections::BTreeSet<String> {
        c.iter()
            .filter(|l| l.starts_with("sched_setaffinity(") || l.starts_with("set_mempolicy("))
            .filter(|l| !l.contains("MPOL_PREFERRED_MANY") && !l.contains("MPOL_DEFAULT"))
            .filter_map(|l| {
                if let Some(rest) = l.strip_prefix("sched_setaffinity(0, ") {
                    // The calling thread's own affinity: its CPU list.
                    return Some(format!("cpus {}", rest.split_once(", ")?.1));
                }
                // Another thread's (fio's CPU probes) are not the job's.
                (!l.starts_with("sched_setaffinity(")).then(|| l.clone())
            })
            .collect()
    };
    for policy in ["bind:0", "interleave", "prefer:0", "local", "default"] {
        let s = [("@POLICY@", policy)];
        let calls = "trace=set_mempolicy,sched_setaffinity";
        let (f, fc) = traced_raw("fio", "io-numa.fio", &s, calls);
        let (g, gc) = traced_raw("iogauge", "io-numa.fio", &s, calls);
        assert_eq!((f.code, g.code), (0, 0), "{}\n{}", f.stderr, g.stderr);
        assert_counts_equal(&f.json, &g.json);
        assert_keys_superset(&f.json, &g.json);
        let (fj, gj) = (job_calls(&fc), job_calls(&gc));
        let mpol = |s: &std::collections::BTreeSet<String>| -> Vec<String> {
            s.iter()
                .filter(|l| l.starts_with("set_mempolicy"))
                .cloned()
                .collect()
        };
        assert_eq!(
            mpol(&fj),
            mpol(&gj),
            "{policy}: set_mempolicy fio vs iogauge"
        );
        assert_eq!(
            mpol(&gj).len(),
            usize::from(policy != "default"),
            "{policy}: {gj:?}"
        );
        // strace prints the set as its CPUs: `[0 1 2 3]` for a cpulist `0-3`.
        let want_cpus: Vec<String> = node0
            .trim()
            .split(',')
            .flat_map(|r| {
                let (a, b) = r.split_once('-').unwrap_or((r, r));
                a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap()
            })
            .map(|c| c.to_string())
            .collect();
        let want_cpus = want_cpus.join(" ");
        assert!(
            gj.iter()
                .any(|l| l.starts_with("cpus") && l.contains(&format!("[{want_cpus}]"))),
            "{policy}: iogauge's thread on node 0's CPUs ({want_cpus}): {gj:?}"
        );
        assert!(
            fj.iter()
                .any(|l| l.starts_with("cpus") && l.contains(&format!("[{want_cpus}]"))),
            "{policy}: fio's on node 0's CPUs: {fj:?}"
        );
    }
}

/// The blkio cgroup v1 mount fio 3.33 would use, when this host has one and we are root. The
/// calling test is serial from here on: its cgroups are the host's.
fn blkio_v1() -> Option<std::path::PathBuf> {
    serial();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping the cgroup test: it needs root");
        return None;
    }
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let m = mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 3 && f[2] == "cgroup" && f[3].split(',').any(|o| o == "blkio"))
            .then(|| std::path::PathBuf::from(f[1]))
    });
    if m.is_none() {
        eprintln!("skipping the cgroup test: no cgroup v1 blkio hierarchy is mounted");
    }
    m
}

#[test]
fn cgroup_puts_the_job_in_its_blkio_group_as_fio() {
    let Some(mnt) = blkio_v1() else { return };
    if !have_fio() {
        return;
    }
    for program in ["fio", "iogauge"] {
        for keep in ["0", "1"] {
            let name = format!("iogauge-test-{}-{program}-{keep}", std::process::id());
            let dir = mnt.join(&name);
            let d = scratch();
            let job = d.path().join("job.fio");
            let text_ = std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/io-cgroup.fio"),
            )
            .unwrap()
            .replace("@DIR@", d.path().to_str().unwrap())
            .replace("@CG@", &name)
            .replace("@KEEP@", keep);
            std::fs::write(&job, text_).unwrap();
            let child = spawn_job_json(program, IOGAUGE, &job, d.path());
            // Tasks of the group while the job runs: fio's job process, iogauge's job thread.
            let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
            let mut members = Vec::new();
            while members.is_empty() && std::time::Instant::now() < until {
                members = std::fs::read_to_string(dir.join("tasks"))
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let pid = child.id();
            let ours = members.iter().any(|t| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/task/{t}/comm"));
                let ppid = std::fs::read_to_string(format!("/proc/{t}/stat")).unwrap_or_default();
                // iogauge: a thread of the process; fio: a child process of it.
                comm.is_ok() || ppid.split_whitespace().nth(3) == Some(&pid.to_string())
            });
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{program}: {}", text(&out.stderr));
            assert!(
                ours,
                "{program}: its job was not in {}: {members:?}",
                dir.display()
            );
            if program == "iogauge" {
                assert!(
                    members
                        .iter()
                        .all(|t| { std::fs::metadata(format!("/proc/{pid}/task/{t}")).is_ok() })
                        || members.len() == 1,
                    "only the job's thread moved"
                );
            }
            let left = dir.exists();
            if left {
                std::fs::remove_dir(&dir).unwrap();
            }
            assert_eq!(left, keep == "1", "{program}: cgroup_nodelete={keep}");
        }
    }
}

#[test]
fn cgroup_weight_without_blkio_weight_fails_as_fio() {
    let Some(mnt) = blkio_v1() else { return };
    if !have_fio() {
        return;
    }
    let name = format!("iogauge-test-w-{}", std::process::id());
    let has_weight = std::fs::metadata(mnt.join("blkio.weight")).is_ok();
    let (fd, gd) = (scratch(), scratch());
    let args = |p: &str| -> Vec<String> {
        let d = if p == "fio" { &fd } else { &gd };
        let mut v: Vec<String> = if p == "fio" {
            vec![]
        } else {
            vec!["fio".into()]
        };
        v.extend(
            [
                "--name=w",
                "--size=64k",
                "--rw=write",
                &format!("--cgroup={name}"),
                "--cgroup_weight=200",
                "--output-format=json",
            ]
            .map(String::from),
        );
        v.push(format!("--directory={}", d.path().display()));
        v
    };
    let f = cmd("fio").args(args("fio")).output().unwrap();
    let g = cmd(IOGAUGE).args(args("iogauge")).output().unwrap();
    assert!(!mnt.join(&name).exists(), "the group is removed either way");
    assert_empty(gd.path());
    if has_weight {
        assert!(
            f.status.success() && g.status.success(),
            "{}",
            text(&g.stderr)
        );
    } else {
        // fio: the job fails with EACCES (exit 1); iogauge refuses before any I/O (exit 2).
        assert_eq!(f.status.code(), Some(1));
        assert!(
            text(&f.stdout).contains("cgroup open weight")
                || text(&f.stderr).contains("cgroup open weight")
        );
        assert_eq!(g.status.code(), Some(2), "{}", text(&g.stderr));
        assert!(
            text(&g.stderr).contains("blkio.weight: Permission denied"),
            "{}",
            text(&g.stderr)
        );
    }
}

/// The scheduler file of the device holding `dir` and its schedulers (selected first), when
/// we are root and it has a choice.
fn scheduler_of(dir: &Path) -> Option<(std::path::PathBuf, String, Vec<String>)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping the ioscheduler test: it needs root");
        return None;
    }
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).unwrap().dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    // A partition's queue is its disk's.
    let disk = if sys.join("partition").exists() {
        sys.parent()?.to_path_buf()
    } else {
        sys
    };
    let file = disk.join("queue/scheduler");
    let text = std::fs::read_to_string(&file).ok()?;
    let cur = text.split_whitespace().find(|s| s.starts_with('['))?;
    let cur = cur.trim_matches(|c| c == '[' || c == ']').to_string();
    let others: Vec<String> = text
        .split_whitespace()
        .filter(|s| !s.starts_with('['))
        .map(String::from)
        .collect();
    if others.is_empty() {
        eprintln!(
            "skipping the ioscheduler test: {} has no other scheduler",
            file.display()
        );
        return None;
    }
    Some((file, cur, others))
}

fn selected_scheduler(file: &Path) -> String {
    let t = std::fs::read_to_string(file).unwrap();
    let s = t.split_whitespace().find(|s| s.starts_with('[')).unwrap();
    s.trim_matches(|c| c == '[' || c == ']').to_string()
}

/// Puts the scheduler back whatever the test does (fio leaves it switched).
struct Restore(std::path::PathBuf, String);
impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, &self.1);
    }
}

#[test]
fn ioscheduler_switches_the_device_while_the_job_runs_as_fio() {
    let probe = scratch();
    let Some((file, before, others)) = scheduler_of(probe.path()) else {
        return;
    };
    if !have_fio() {
        return;
    }
    let _restore = Restore(file.clone(), before.clone());
    let want = others[0].clone();
    for program in ["fio", "iogauge"] {
        let d = scratch();
        let job = d.path().join("job.fio");
        let text_ = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/io-ioscheduler.fio"),
        )
        .unwrap()
        .replace("@DIR@", d.path().to_str().unwrap())
        .replace("@SCHED@", &want);
        std::fs::write(&job, text_).unwrap();
        let child = spawn_job_json(program, IOGAUGE, &job, d.path());
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut seen = false;
        while !seen && std::time::Instant::now() < until {
            seen = selected_scheduler(&file) == want;
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{program}: {}", text(&out.stderr));
        assert!(seen, "{program}: {} never showed [{want}]", file.display());
        let after = selected_scheduler(&file);
        if program == "fio" {
            assert_eq!(after, want, "fio leaves the scheduler switched");
            std::fs::write(&file, &before).unwrap();
        } else {
            assert_eq!(after, before, "iogauge puts the previous scheduler back");
        }
    }
    // A scheduler the kernel does not have: fio fails the job (EINVAL), iogauge refuses before
    // any I/O; neither changes the device.
    let (fd, gd) = (scratch(), scratch());
    let f = cmd("fio")
        .args([
            "--name=b",
            "--size=64k",
            "--ioscheduler=no-such-sched",
            "--output-format=json",
        ])
        .arg(format!("--directory={}", fd.path().display()))
        .output()
        .unwrap();
    assert!(text(&f.stderr).contains("unable to set io scheduler to no-such-sched"));
    let g = cmd(IOGAUGE)
        .args([
            "fio",
            "--name=b",
            "--size=64k",
            "--ioscheduler=no-such-sched",
        ])
        .arg(format!("--directory={}", gd.path().display()))
        .output()
        .unwrap();
    assert_eq!(g.status.code(), Some(2));
    assert!(
        text(&g.stderr).contains("ioscheduler=no-such-sched: cannot write"),
        "{}",
        text(&g.stderr)
    );
    assert_empty(gd.path());
    assert_eq!(selected_scheduler(&file), before);
}

/// Ids of `pid`'s threads and of its children's threads: (real, effective, saved, fs) per line.
fn identities(pid: u32) -> Vec<(String, String)> {
    let mut pids = vec![pid];
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(c) = std::fs::read_to_string(t.path().join("children")) {
            pids.extend(c.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    let mut out = Vec::new();
    for p in pids {
        for t in std::fs::read_dir(format!("/proc/{p}/task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let st = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let get = |k: &str| {
                st.lines()
                    .find_map(|l| l.strip_prefix(k))
                    .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
                    .unwrap_or_default()
            };
            out.push((get("Uid:"), get("Gid:")));
        }
    }
    out
}

#[test]
fn uid_and_gid_switch_the_jobs_identity_as_fio() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping the uid/gid test: it needs root");
        return;
    }
    if !have_fio() {
        return;
    }
    let nobody = (
        "65534 65534 65534 65534".to_string(),
        "65534 65534 65534 65534".to_string(),
    );
    for program in ["fio", "iogauge"] {
        let d = scratch();
        // The job's new identity must reach its files (fio opens them after switching).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let job = d.path().join("job.fio");
        let text_ = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/io-uid.fio"),
        )
        .unwrap()
        .replace("@DIR@", d.path().to_str().unwrap());
        std::fs::write(&job, text_).unwrap();
        let child = spawn_job_json(program, IOGAUGE, &job, d.path());
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut ids = Vec::new();
        while !ids.contains(&nobody) && std::time::Instant::now() < until {
            ids = identities(child.id());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{program}: {}", text(&out.stderr));
        let s = text(&out.stdout);
        let v: serde_json::Value = serde_json::from_str(&s[s.find('{').unwrap()..]).unwrap();
        assert!(u(&v["jobs"][0], &["read", "total_ios"]) > 0, "{program}");
        assert!(
            ids.contains(&nobody),
            "{program}: no task ran as 65534: {ids:?}"
        );
        // Only the job switched: the process itself (iogauge's main thread) stays root.
        let root = ("0 0 0 0".to_string(), "0 0 0 0".to_string());
        assert!(ids.contains(&root), "{program}: {ids:?}");
    }
}
