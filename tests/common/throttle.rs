//! A slow disk for real: a cgroup-v1 blkio group that limits the disk under a directory to so
//! many I/Os per second for the processes put in it (FACTS.md §10). Needs root; CI has it.

use std::path::{Path, PathBuf};

/// The group (and the disk's major:minor), removed on drop (its processes have ended by then).
pub struct Throttle(PathBuf, String);

impl Throttle {
    /// A group limiting the whole disk under `dir` to `iops` per second through `knob`
    /// (`write_iops_device`, `read_iops_device`). None when this is not root or has no blkio
    /// (then said on stderr); under CI=true that is a failure, since CI must run these tests.
    pub fn new(dir: &Path, knob: &str, iops: u32) -> Option<Throttle> {
        let cg = Path::new("/sys/fs/cgroup/blkio");
        // SAFETY: geteuid has no preconditions.
        if !cg.is_dir() || unsafe { libc::geteuid() } != 0 {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI must run the throttled-disk tests: they need root and /sys/fs/cgroup/blkio"
            );
            eprintln!("skipping: needs root and cgroup v1 blkio");
            return None;
        }
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(dir).unwrap().dev();
        let sys = std::fs::canonicalize(format!(
            "/sys/dev/block/{}:{}",
            libc::major(dev),
            libc::minor(dev)
        ))
        .unwrap();
        // A partition is throttled through its disk.
        let disk = if sys.join("partition").exists() {
            sys.parent().unwrap().to_path_buf()
        } else {
            sys
        };
        let majmin = std::fs::read_to_string(disk.join("dev")).unwrap();
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let group = cg.join(format!("iogauge-test-{}-{n}", std::process::id()));
        std::fs::create_dir(&group).unwrap();
        let t = Throttle(group, majmin.trim().to_string());
        t.set(knob, iops);
        Some(t)
    }

    /// Sets the group's limit through `knob`; 0 lifts it.
    pub fn set(&self, knob: &str, iops: u32) {
        std::fs::write(
            self.0.join(format!("blkio.throttle.{knob}")),
            format!("{} {iops}", self.1),
        )
        .unwrap();
    }

    /// `sh -c SCRIPT` in the group, started and left running (stdout and stderr piped).
    pub fn spawn(&self, script: &str) -> std::process::Child {
        let script = format!(
            "echo $$ > {}/cgroup.procs && exec {script}",
            self.0.display()
        );
        super::cmd("sh")
            .arg("-c")
            .arg(&script)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `sh -c SCRIPT` with the shell moved into the group first (what it execs stays there).
    pub fn sh(&self, script: &str) -> std::process::Output {
        let script = format!("echo $$ > {}/cgroup.procs && {script}", self.0.display());
        super::cmd("sh").arg("-c").arg(&script).output().unwrap()
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}
