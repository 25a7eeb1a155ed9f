//! What a directory is on, before anything is written there: memory-backed filesystems measure
//! RAM rather than a disk, pseudo filesystems (/proc, /sys) hold no data at all, and a directory
//! must exist and take a new file. Read from statfs(2) and /proc/self/mountinfo.

use crate::mounts::Mount;
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The statfs magic of `dir`'s filesystem.
fn fs_magic(dir: &Path) -> Option<u64> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statfs fills the zeroed struct; c is a valid C string.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string and `s` a valid, writable statfs.
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some(s.f_type as u64)
}

const TMPFS: u64 = 0x0102_1994;
const RAMFS: u64 = 0x8584_58f6;
const HUGETLBFS: u64 = 0x9584_58f6;
const OVERLAYFS: u64 = 0x794c_7630;

/// Filesystems the kernel generates: nothing written there reaches storage.
fn pseudo_name(magic: u64) -> Option<&'static str> {
    Some(match magic {
        0x9fa0 => "proc",
        0x6265_6572 => "sysfs",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x7363_6673 => "securityfs",
        0x0027_e0eb => "cgroup",
        0x6367_7270 => "cgroup2",
        0x1cd1 => "devpts",
        0x6265_6570 => "configfs",
        0xcafe_4a11 => "bpf",
        0x6165_676c => "pstore",
        0xde5e_81e4 => "efivarfs",
        0x1980_0202 => "mqueue",
        0x6e73_6673 => "nsfs",
        0x4249_4e4d => "binfmt_misc",
        0x6573_5543 => "fusectl",
        _ => return None,
    })
}

fn memory_name(magic: u64) -> Option<&'static str> {
    Some(match magic {
        TMPFS => "tmpfs",
        RAMFS => "ramfs",
        HUGETLBFS => "hugetlbfs",
        _ => return None,
    })
}

/// The mount that holds `dir`.
pub(crate) fn mount_of(dir: &Path) -> Option<Mount> {
    crate::mounts::holding(&std::fs::canonicalize(dir).ok()?)
}

/// Why results from `dir` would describe memory rather than a disk: tmpfs, ramfs, or an
/// overlay (a container's writable layer) whose upper layer is on tmpfs.
pub(crate) fn memory_backed(dir: &Path) -> Option<String> {
    let magic = fs_magic(dir)?;
    if let Some(name) = memory_name(magic) {
        return Some(format!("{name} (memory)"));
    }
    if magic == OVERLAYFS {
        let upper = overlay_upper(dir)?;
        let name = memory_name(fs_magic(&upper)?)?;
        return Some(format!(
            "overlayfs whose writable layer is on {name} (memory)"
        ));
    }
    None
}

/// The upper directory of the overlay holding `dir`, when this mount namespace can see it.
fn overlay_upper(dir: &Path) -> Option<PathBuf> {
    mount_of(dir)?.overlay_upper().filter(|p| p.exists())
}

/// An overlay whose writable layer cannot be seen from here (inside a container): the result
/// is a disk measurement, but of the container runtime's storage, not of a mounted volume.
pub(crate) fn container_layer(dir: &Path) -> bool {
    fs_magic(dir) == Some(OVERLAYFS) && overlay_upper(dir).is_none()
}

/// The pseudo filesystem `dir` is on, if it is one.
pub(crate) fn pseudo(dir: &Path) -> Option<&'static str> {
    fs_magic(dir).and_then(pseudo_name)
}

/// The directory must exist, be a directory on real storage, and take a new file. `flag` is
/// the option that chose it, for the fix in the message.
pub(crate) fn check_dir(dir: &Path, flag: &str) -> Result<(), String> {
    let d = dir.display();
    match std::fs::metadata(dir) {
        Err(_) => {
            return Err(format!(
                "directory '{d}' does not exist; create it or choose another with {flag}"
            ))
        }
        Ok(m) if !m.is_dir() => {
            return Err(format!(
                "'{d}' is not a directory; {flag} takes the directory to test in (the test files are created there)"
            ))
        }
        Ok(_) => {}
    }
    if let Some(fs) = pseudo(dir) {
        return Err(format!(
            "'{d}' is on {fs}, a pseudo filesystem the kernel generates, not storage; choose a directory on the disk you mean with {flag}"
        ));
    }
    // Create and remove a probe file: permission bits alone say nothing for root, and a
    // read-only mount or a full quota only shows when writing.
    let probe = dir.join(format!(".iogauge-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "directory '{d}' is not writable ({e}); choose another with {flag}"
        )),
    }
}

/// Bytes in binary units a person reads at a glance: `1.0 GiB`, `312.5 MiB`, `12.0 KiB`.
pub(crate) fn human_bytes(b: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (size, unit) in UNITS {
        if b >= size {
            return format!("{:.1} {unit}", b as f64 / size as f64);
        }
    }
    format!("{b} bytes")
}

/// The message when the test files do not fit: the directory (absolute), what is needed and
/// what is free in human units, and the fixes: a `--max-size` that fits (nine tenths of the
/// free space, in whole MiB), or another directory.
pub(crate) fn no_space_message(dir: &Path, need: u64, avail: u64) -> String {
    let shown = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let fits = (avail / 10 * 9) >> 20;
    let fix = if fits > 0 {
        format!(
            "cap the test file with --max-size {fits}m (the run is then marked as shortened), or \
             choose a --dir on a filesystem with more free space"
        )
    } else {
        "choose a --dir on a filesystem with more free space".to_string()
    };
    format!(
        "not enough free space in '{}': the test file needs {}, only {} is free; {fix}",
        shown.display(),
        human_bytes(need),
        human_bytes(avail)
    )
}

/// Opens a file iogauge writes beside the run (fio's logs, exec output) for writing from the
/// start: created if missing, truncated if it is a regular file, and never written through a
/// symlink someone put at its name (O_NOFOLLOW: ELOOP, "Too many levels of symbolic links").
pub(crate) fn create_output(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_real_directories() {
        assert_eq!(
            memory_backed(Path::new("/dev/shm")).as_deref(),
            Some("tmpfs (memory)")
        );
        assert_eq!(pseudo(Path::new("/proc")), Some("proc"));
        assert_eq!(pseudo(Path::new("/sys")), Some("sysfs"));
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        assert_eq!(pseudo(d.path()), None);
        assert_eq!(memory_backed(d.path()), None);
        let m = mount_of(d.path()).unwrap();
        assert!(d.path().canonicalize().unwrap().starts_with(&m.mount_point));
        assert!(!m.fs_type.is_empty());
    }

    #[test]
    fn the_free_space_message_is_in_human_units_with_the_fix() {
        assert_eq!(human_bytes(1 << 30), "1.0 GiB");
        assert_eq!(human_bytes((312 << 20) + (1 << 19)), "312.5 MiB");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(
            no_space_message(Path::new("/nonexistent/d"), 1 << 30, 300 << 20),
            "not enough free space in '/nonexistent/d': the test file needs 1.0 GiB, only 300.0 MiB \
             is free; cap the test file with --max-size 270m (the run is then marked as shortened), \
             or choose a --dir on a filesystem with more free space"
        );
        assert_eq!(
            no_space_message(Path::new("/nonexistent/d"), 1 << 30, 100 << 10),
            "not enough free space in '/nonexistent/d': the test file needs 1.0 GiB, only 100.0 KiB \
             is free; choose a --dir on a filesystem with more free space"
        );
    }

    #[test]
    fn directory_refusals_name_the_problem() {
        assert_eq!(
            check_dir(Path::new("/nonexistent/x"), "--dir").unwrap_err(),
            "directory '/nonexistent/x' does not exist; create it or choose another with --dir"
        );
        assert_eq!(
            check_dir(Path::new("/proc/self"), "--dir").unwrap_err(),
            "'/proc/self' is on proc, a pseudo filesystem the kernel generates, not storage; choose a directory on the disk you mean with --dir"
        );
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file");
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(
            check_dir(&f, "--dir").unwrap_err(),
            format!(
                "'{}' is not a directory; --dir takes the directory to test in (the test files are created there)",
                f.display()
            )
        );
        check_dir(d.path(), "--dir").unwrap();
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
