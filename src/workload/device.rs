//! A block device `check --device` may write over, examined before anything is written: it is a
//! block device, neither it nor a partition of it is mounted, nothing (device-mapper, md) is
//! built on it, the kernel does not hold it exclusively (a swap area, a mount in another
//! namespace), and the user said its data may go. Read from /sys/class/block and
//! /proc/self/mountinfo.

use super::layout::device_size;
use crate::mounts::Mount;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const SYS_CLASS_BLOCK: &str = "/sys/class/block";

/// A block device cleared for the check.
#[derive(Debug)]
pub(crate) struct Device {
    /// Its size, bytes (BLKGETSIZE64).
    pub size: u64,
    /// Why results from it describe memory rather than a disk (a zram or RAM disk).
    pub memory: Option<String>,
    /// Held open with O_EXCL until the check ends, so that nothing mounts or claims the device
    /// while the profiles write over it (our own non-exclusive opens are still allowed).
    _claim: File,
}

/// The device itself or one of its partitions: kernel name and `major:minor`.
#[derive(Debug, Clone, PartialEq)]
struct Part {
    name: String,
    devnum: String,
}

/// The sysfs directory's name of a `major:minor`.
fn kernel_name(major: u32, minor: u32) -> Option<String> {
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(dir.file_name()?.to_string_lossy().into_owned())
}

/// The device and its partitions (a partition's sysfs directory, inside its disk's, has a
/// `partition` file).
fn parts(name: &str, devnum: String) -> Vec<Part> {
    let mut out = vec![Part {
        name: name.to_string(),
        devnum,
    }];
    let dir = Path::new(SYS_CLASS_BLOCK).join(name);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return out;
    };
    let mut found: Vec<Part> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("partition").exists())
        .filter_map(|e| {
            let devnum = std::fs::read_to_string(e.path().join("dev")).ok()?;
            Some(Part {
                name: e.file_name().to_string_lossy().into_owned(),
                devnum: devnum.trim().to_string(),
            })
        })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    out.extend(found);
    out
}

/// The kernel name a mount source under /dev stands for (symlinks such as /dev/mapper/x or
/// /dev/disk/by-id/… followed).
fn source_name(source: &str) -> Option<String> {
    if !source.starts_with("/dev/") {
        return None;
    }
    let p = std::fs::canonicalize(source).unwrap_or_else(|_| PathBuf::from(source));
    Some(p.file_name()?.to_string_lossy().into_owned())
}

/// The first of `parts` that a mount uses, and where: by device number, or by source for
/// filesystems that report an anonymous one (btrfs).
fn mounted<'a>(parts: &'a [Part], mounts: &'a [Mount]) -> Option<(&'a Part, &'a Mount)> {
    mounts.iter().find_map(|m| {
        let by_source = source_name(&m.source);
        parts
            .iter()
            .find(|p| m.devnum == p.devnum || by_source.as_deref() == Some(p.name.as_str()))
            .map(|p| (p, m))
    })
}

/// What is built on `name` (`holders/`: device-mapper, md, bcache), sorted.
fn holders(name: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(Path::new(SYS_CLASS_BLOCK).join(name).join("holders"))
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// A zram or RAM disk (brd) holds its data in memory: results from it describe RAM.
fn memory_disk(name: &str) -> Option<String> {
    if name.starts_with("zram") {
        Some(format!("{name}, a compressed RAM disk (zram)"))
    } else if name.starts_with("ram") {
        Some(format!("{name}, a RAM disk"))
    } else {
        None
    }
}

/// "it" for the device given, "its partition sdb1" for a partition of it.
fn which(given: &str, p: &Part) -> String {
    if p.name == given {
        "it".to_string()
    } else {
        format!("its partition {}", p.name)
    }
}

/// Whether the block device `path` or one of its partitions is mounted: "it is mounted on
/// /mnt" or "its partition sdb1 is mounted on /mnt" (fio's allow_mounted_write check, which
/// looks at the device itself only).
pub(crate) fn mounted_on(path: &Path) -> Option<String> {
    let md = std::fs::metadata(path).ok()?;
    if !md.file_type().is_block_device() {
        return None;
    }
    let (major, minor) = (libc::major(md.rdev()), libc::minor(md.rdev()));
    let name = kernel_name(major, minor)?;
    let parts = parts(&name, format!("{major}:{minor}"));
    let mounts = crate::mounts::all();
    let (p, m) = mounted(&parts, &mounts)?;
    Some(format!(
        "{} is mounted on {}",
        which(&name, p),
        m.mount_point.display()
    ))
}

/// Clears `path` for the profiles to write over, or says why not (naming the input and the fix).
/// Nothing is written here.
pub(crate) fn check_device(path: &Path, allow_overwrite: bool) -> Result<Device, String> {
    let d = path.display();
    let md = std::fs::metadata(path).map_err(|e| {
        format!(
            "--device {d}: {e}; give a block device such as /dev/sdb, or a directory with --dir"
        )
    })?;
    if !md.file_type().is_block_device() {
        return Err(format!(
            "--device {d}: not a block device; for a directory use --dir"
        ));
    }
    let (major, minor) = (libc::major(md.rdev()), libc::minor(md.rdev()));
    let name = kernel_name(major, minor).unwrap_or_else(|| {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let parts = parts(&name, format!("{major}:{minor}"));
    if let Some((p, m)) = mounted(&parts, &crate::mounts::all()) {
        let mp = m.mount_point.display();
        return Err(format!(
            "--device {d}: {} is mounted on {mp}; the profiles would destroy that filesystem: \
             unmount it first, or check the filesystem with --dir {mp}",
            which(&name, p)
        ));
    }
    for p in &parts {
        let h = holders(&p.name);
        if !h.is_empty() {
            return Err(format!(
                "--device {d}: {} is in use by {} (device-mapper or md built on it); the profiles \
                 would destroy what that holds: remove {} first or choose a device nothing uses",
                which(&name, p),
                h.join(", "),
                h.join(", ")
            ));
        }
    }
    // O_EXCL on a block device fails with EBUSY while the kernel holds it: a mount in another
    // mount namespace, a swap area, a RAID or LVM member not visible above. Opened for writing,
    // so a read-only device or missing permission shows now rather than mid-run.
    let claim = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => format!(
                "--device {d}: in use: the kernel holds it (mounted in another mount namespace, \
                 a swap area, or part of a RAID or LVM volume); choose a device nothing uses"
            ),
            _ => format!(
                "--device {d}: cannot open it for writing ({e}); the profiles need read and write \
                 access to the device"
            ),
        })?;
    if !allow_overwrite {
        return Err(format!(
            "--device {d}: the profiles write over the device's data; pass --allow-overwrite if \
             it holds nothing you need"
        ));
    }
    let size =
        device_size(&claim).map_err(|e| format!("--device {d}: cannot read its size: {e}"))?;
    Ok(Device {
        memory: memory_disk(&name),
        size,
        _claim: claim,
    })
}

/// `path` as one name in fio's `filename` list, where ':' separates names (device paths such
/// as /dev/disk/by-path/pci-0000:00:1f.2-ata-1 contain colons).
pub(crate) fn as_filename(path: &Path) -> String {
    path.display().to_string().replace(':', "\\:")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::layout::split_filenames;

    fn part(name: &str, devnum: &str) -> Part {
        Part {
            name: name.into(),
            devnum: devnum.into(),
        }
    }

    #[test]
    fn mounts_found_by_number_or_by_source() {
        let mounts = crate::mounts::parse(
            "1 0 259:2 / / rw - ext4 /dev/nvme0n1p2 rw\n\
             2 1 0:40 / /data rw - btrfs /dev/no-such-test-disk rw\n\
             3 1 7:1 / /mnt/x rw - ext4 /dev/loop0p1 rw\n",
        );
        let parts = [part("loop0", "7:0"), part("loop0p1", "7:1")];
        let (p, m) = mounted(&parts, &mounts).unwrap();
        assert_eq!(
            (p.name.as_str(), m.mount_point.as_path()),
            ("loop0p1", Path::new("/mnt/x"))
        );
        assert_eq!(which("loop0", p), "its partition loop0p1");
        // btrfs reports an anonymous 0:N; its source names the disk.
        let btrfs = [part("no-such-test-disk", "8:16")];
        assert_eq!(
            mounted(&btrfs, &mounts).unwrap().1.mount_point,
            Path::new("/data")
        );
        assert!(mounted(&[part("sdz", "8:240")], &mounts).is_none());
        assert_eq!(which("sdz", &part("sdz", "8:240")), "it");
    }

    #[test]
    fn memory_disks() {
        assert_eq!(
            memory_disk("zram0").as_deref(),
            Some("zram0, a compressed RAM disk (zram)")
        );
        assert_eq!(memory_disk("ram1").as_deref(), Some("ram1, a RAM disk"));
        assert_eq!(memory_disk("loop0"), None);
        assert_eq!(memory_disk("nvme0n1"), None);
    }

    #[test]
    fn colons_survive_fio_filename_lists() {
        let p = Path::new("/dev/disk/by-path/pci-0000:00:1f.2-ata-1");
        assert_eq!(
            split_filenames(&as_filename(p)),
            vec![p.display().to_string()]
        );
    }

    #[test]
    fn refuses_what_is_not_a_block_device() {
        assert_eq!(
            check_device(Path::new("/"), true).unwrap_err(),
            "--device /: not a block device; for a directory use --dir"
        );
        assert!(check_device(Path::new("/no/such/dev"), true)
            .unwrap_err()
            .starts_with("--device /no/such/dev: No such file or directory"));
    }
}
