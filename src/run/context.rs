//! Where a run happens, for the result documents: host, kernel, the filesystem and mount of the
//! directory, and the block device behind it (model, rotational, scheduler) from /sys; or, with
//! `check --device`, that device alone.

use crate::report::document::{Context, DeviceInfo, FilesystemInfo};
use crate::stats::resolve_disk;
use crate::workload::fs::mount_of;
use std::path::Path;

/// This host's name (uname nodename).
pub(crate) fn hostname() -> String {
    uname().0
}

fn uname() -> (String, String) {
    // SAFETY: uname fills the zeroed struct; its fields are NUL-terminated.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (String::new(), String::new());
    }
    let text = |f: &[libc::c_char]| {
        // SAFETY: the kernel NUL-terminates each field within its array.
        unsafe { std::ffi::CStr::from_ptr(f.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    (text(&u.nodename), text(&u.release))
}

fn sys(dev: &str, file: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/block/{dev}/{file}"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The bracketed entry of `queue/scheduler` ("none [mq-deadline] kyber").
fn active_scheduler(line: &str) -> Option<String> {
    let start = line.find('[')? + 1;
    let end = start + line[start..].find(']')?;
    Some(line[start..end].to_string())
}

/// The device behind `path`: the disk under a directory's filesystem, or for a block device
/// node that device (a partition's whole disk, as the disk statistics report it).
fn device(path: &Path) -> Option<DeviceInfo> {
    let t = resolve_disk(path).ok().flatten()?;
    // A dm/md device has no model of its own: take the first disk underneath.
    let model = sys(&t.name, "device/model")
        .or_else(|| t.slaves.first().and_then(|s| sys(s, "device/model")));
    Some(DeviceInfo {
        model,
        rotational: sys(&t.name, "queue/rotational").map(|r| r == "1"),
        scheduler: sys(&t.name, "queue/scheduler").and_then(|s| active_scheduler(&s)),
        slaves: t.slaves.clone(),
        name: t.name,
    })
}

/// Describes the host and, when given, the directory the test files go in.
pub(crate) fn describe(dir: Option<&Path>) -> Context {
    let (hostname, kernel) = uname();
    let mut c = Context {
        iogauge: env!("CARGO_PKG_VERSION").to_string(),
        hostname,
        kernel,
        ..Context::default()
    };
    if let Some(dir) = dir {
        c.directory = Some(
            // Absolute even when it cannot be resolved (a directory gone by the end).
            std::fs::canonicalize(dir)
                .or_else(|_| std::path::absolute(dir))
                .unwrap_or_else(|_| dir.to_path_buf())
                .display()
                .to_string(),
        );
        c.filesystem = mount_of(dir).map(|m| FilesystemInfo {
            options: m.options(),
            fs_type: m.fs_type,
            mount_point: m.mount_point.display().to_string(),
            source: m.source,
        });
        c.device = device(dir);
    }
    c
}

/// Describes the host and the block device `check --device` measures: no directory and no
/// filesystem, since the profiles write to the device itself.
pub(crate) fn describe_device(dev: &Path) -> Context {
    Context {
        device: device(dev),
        ..describe(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_entry() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active_scheduler("none"), None);
    }

    #[test]
    fn describes_this_host_and_a_real_directory() {
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let c = describe(Some(d.path()));
        let (host, kernel) = uname();
        assert_eq!(
            (c.hostname.as_str(), c.kernel.as_str()),
            (host.as_str(), kernel.as_str())
        );
        assert!(!c.kernel.is_empty());
        assert_eq!(
            c.directory.as_deref(),
            Some(d.path().canonicalize().unwrap().to_str().unwrap())
        );
        let fs = c.filesystem.unwrap();
        assert!(c.directory.unwrap().starts_with(&fs.mount_point));
        assert!(
            fs.options.starts_with("rw") || fs.options.starts_with("ro"),
            "{fs:?}"
        );
        // Where the directory has a block device, the kernel's name for it is in /sys.
        if let Some(dev) = c.device {
            assert!(Path::new("/sys/block").join(&dev.name).exists(), "{dev:?}");
        }
        let tmpfs = describe(Some(Path::new("/dev/shm")));
        assert_eq!(tmpfs.filesystem.unwrap().fs_type, "tmpfs");
        assert!(tmpfs.device.is_none());
    }
}
