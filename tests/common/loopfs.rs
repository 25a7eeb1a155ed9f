//! ext4 on a loop device, for tests that need a full, small or failing
//! filesystem: made in a scratch directory, mounted beside its image, and unmounted, detached and
//! removed when dropped, also when the test panics. Needs root; with CI=true it must work.

use super::{cmd, files_in, scratch, text};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether loop devices can be made here (root, losetup, mkfs.ext4); with CI=true they must.
/// The calling test is [`serial`](super::serial) from here on, as with [`LoopFs::new`].
pub fn can_loop() -> bool {
    super::serial();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let tools = ["losetup", "mkfs.ext4", "mount", "truncate", "blockdev"]
        .iter()
        .all(|t| {
            cmd("sh")
                .args(["-c", &format!("command -v {t}")])
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if root && tools {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must run the loop-device tests: they need root, losetup and mkfs.ext4 (root: {root})"
    );
    eprintln!("skipping: this test needs root, losetup and mkfs.ext4 to make a loop device");
    false
}

/// `program args…`, which must succeed; its stdout, trimmed.
pub fn sh(program: &str, args: &[&str]) -> String {
    let o = cmd(program).args(args).output().expect(program);
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        text(&o.stderr)
    );
    text(&o.stdout).trim().to_string()
}

/// A mounted ext4 on a loop device.
pub struct LoopFs {
    pub dir: tempfile::TempDir,
    pub img: PathBuf,
    pub dev: String,
    pub mnt: PathBuf,
}

impl LoopFs {
    /// `size` as truncate takes it (`32M`), made with `mkfs.ext4 -q MKFS… DEV`. The calling
    /// test is [`serial`](super::serial) from here on: loop devices, mounts and the faults made
    /// on them are the host's, and the thread's guard outlives this value's cleanup.
    pub fn new(size: &str, mkfs: &[&str]) -> LoopFs {
        super::serial();
        let dir = scratch();
        let img = dir.path().join("disk.img");
        sh("truncate", &["-s", size, img.to_str().unwrap()]);
        let dev = sh("losetup", &["-f", "--show", img.to_str().unwrap()]);
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let d = LoopFs { dir, img, dev, mnt };
        let mut args = vec!["-q"];
        args.extend(mkfs);
        args.push(&d.dev);
        sh("mkfs.ext4", &args);
        sh("mount", &[&d.dev, d.mnt.to_str().unwrap()]);
        d
    }

    /// Fills the filesystem with `name` until a write fails with ENOSPC (root's reserved
    /// blocks too).
    pub fn fill(&self, name: &str) {
        let mut f = std::fs::File::create(self.mnt.join(name)).unwrap();
        for chunk in [1 << 20, 4096, 512, 1] {
            let buf = vec![0x5au8; chunk];
            loop {
                match f.write_all(&buf) {
                    Ok(()) => {}
                    Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                    Err(e) => panic!("filling {}: {e}", self.mnt.display()),
                }
            }
        }
        // Delayed allocation may still hold blocks back: the flush also ends at ENOSPC.
        let _ = f.sync_all();
    }

    /// What is in the mount point, but `keep`.
    pub fn left(&self, keep: &[&str]) -> Vec<String> {
        files_in(&self.mnt)
            .into_iter()
            .filter(|f| !keep.contains(&f.as_str()))
            .collect()
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        // Right after an I/O error the kernel may still be finishing work on the filesystem
        // (ext4's unwritten-extent conversion), and umount says busy for a moment: try again,
        // then detach it lazily, so the device never outlives the test.
        let mut unmounted = false;
        for _ in 0..50 {
            let o = cmd("umount").arg(&self.mnt).output();
            if o.as_ref().is_ok_and(|o| o.status.success()) || !is_mounted(&self.mnt) {
                unmounted = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if !unmounted {
            eprintln!(
                "{} still busy after 5 s: unmounting it lazily",
                self.mnt.display()
            );
            let _ = cmd("umount").arg("-l").arg(&self.mnt).status();
        }
        let _ = cmd("losetup").args(["-d", &self.dev]).status();
    }
}

/// Whether something is mounted on `p`.
pub fn is_mounted(p: &Path) -> bool {
    let p = p.to_string_lossy();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(&*p))
}
