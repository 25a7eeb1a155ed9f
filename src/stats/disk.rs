//! Disk statistics of the block device holding the test files (fio's `Disk stats (read/write)`
//! block, JSON `disk_util`).
//!
//! Resolution of a path to a device:
//! 1. `stat(path).st_dev` (`st_rdev` for a block device node, as fio's disk util) → major:minor → `/sys/dev/block/MAJ:MIN` (a symlink into sysfs);
//! 2. a partition (its sysfs dir has a `partition` file) is reported as its parent disk, as fio
//!    does (`vda`, not `vda1`);
//! 3. a stacked device (device-mapper `dm-N`, md `mdN`: non-empty `slaves/`) is reported itself,
//!    with its slaves (partitions again mapped to their disks) as [`DiskTarget::slaves`], which
//!    fio prints as `aggr*`;
//! 4. loop devices are reported as themselves (their backing file's disk is not followed);
//! 5. a filesystem on an anonymous device (major 0: tmpfs, overlay, NFS, but also btrfs) is
//!    looked up in `/proc/self/mountinfo`: a mount source under `/dev/` that is a block device
//!    is used (this finds btrfs' disk); an overlay mount is followed through its `upperdir=`;
//!    anything else (tmpfs, NFS, overlay on tmpfs) has no disk and gives `None`.
//!
//! Counters come from `/sys/class/block/<name>/stat` (the kernel's Documentation/block/stat.rst):
//! ios, merges, sectors, ticks (ms) per direction, in_flight, io_ticks (ms the device was busy)
//! and time_in_queue (weighted ms). They cover all I/O on the device, not only ours.
//! util = 100 · Δio_ticks / elapsed ms, capped at 100, as fio.
//!
//! The window (`disk_window::DiskWindow`) is fio's (diskutil.c, backend.c `run_threads`): fio reads the
//! counters first in `init_disk_util`, just before it starts the first job thread using the
//! device — after every file was laid out (`create_serialize`) and after that job's
//! `startdelay` — and last in `update_io_ticks` once every thread has been reaped. Its helper
//! thread reads them every 250 ms in between, which only sums the same deltas. So layout,
//! cleanup and the time between runs are not in fio's util; with stonewalled phases, iogauge
//! adds up the periods during which each phase's threads run (it lays out a phase's files when
//! the phase starts, which fio does before any job starts).

use super::summary::DiskReport;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub(crate) enum DiskError {
    #[error("cannot stat {path}: {source}")]
    Stat {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read disk statistics {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("unexpected format of {path}: expected at least 11 numeric fields")]
    Parse { path: PathBuf },
}

/// A block device to report, with the disks under it for dm/md devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiskTarget {
    /// Kernel name (`vda`, `dm-0`, `loop3`, `md127`).
    pub name: String,
    /// Underlying disks of a dm/md device (empty otherwise).
    pub slaves: Vec<String>,
}

const SYS_DEV_BLOCK: &str = "/sys/dev/block";
pub(crate) const SYS_CLASS_BLOCK: &str = "/sys/class/block";

/// The device holding `path` (or, for a block device node, that device), or `None` when the filesystem has no block device.
/// Errors only when `path` itself cannot be examined.
pub(crate) fn resolve(path: &Path) -> Result<Option<DiskTarget>, DiskError> {
    let meta = fs::metadata(path).map_err(|source| DiskError::Stat {
        path: path.to_path_buf(),
        source,
    })?;
    // A device node's own st_dev is devtmpfs; the device it stands for is its st_rdev.
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if let Some(t) = target_from_devnum(major, minor) {
        return Ok(Some(t));
    }
    // Anonymous device (btrfs, overlay, tmpfs, NFS…): look at the mount table.
    let canon = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(resolve_via_mountinfo(&canon, 0))
}

fn target_from_devnum(major: u32, minor: u32) -> Option<DiskTarget> {
    if major == 0 {
        return None;
    }
    let link = Path::new(SYS_DEV_BLOCK).join(format!("{major}:{minor}"));
    let dir = fs::canonicalize(link).ok()?;
    let disk = whole_disk_dir(&dir);
    let name = dir_name(&disk)?;
    let slaves = slaves_of(&name);
    Some(DiskTarget { name, slaves })
}

/// For a partition's sysfs dir, its parent disk's dir; otherwise the dir itself.
fn whole_disk_dir(dir: &Path) -> PathBuf {
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            return parent.to_path_buf();
        }
    }
    dir.to_path_buf()
}

fn dir_name(dir: &Path) -> Option<String> {
    dir.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Slaves of a dm/md device, each mapped to its whole disk, deduplicated and sorted.
fn slaves_of(name: &str) -> Vec<String> {
    let dir = Path::new(SYS_CLASS_BLOCK).join(name).join("slaves");
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let sys = fs::canonicalize(Path::new(SYS_CLASS_BLOCK).join(e.file_name())).ok()?;
            dir_name(&whole_disk_dir(&sys))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn resolve_via_mountinfo(path: &Path, depth: u32) -> Option<DiskTarget> {
    if depth > 4 {
        return None;
    }
    let m = crate::mounts::holding(path)?;
    if let Some(upper) = m.overlay_upper() {
        let meta = fs::metadata(&upper).ok()?;
        return target_from_devnum(libc::major(meta.dev()), libc::minor(meta.dev()))
            .or_else(|| resolve_via_mountinfo(&upper, depth + 1));
    }
    if m.source.starts_with("/dev/") {
        let meta = fs::metadata(&m.source).ok()?;
        if meta.file_type().is_block_device() {
            let rdev = meta.rdev();
            return target_from_devnum(libc::major(rdev), libc::minor(rdev));
        }
    }
    None
}

/// The counters of `/sys/class/block/<dev>/stat` (fields 1–11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks: u64,
    pub in_flight: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
}

impl DiskStat {
    /// Parse the text of a `stat` file (11 or more whitespace-separated numbers).
    pub(crate) fn parse(text: &str) -> Option<DiskStat> {
        let f: Vec<u64> = text
            .split_whitespace()
            .map(|s| s.parse::<u64>())
            .collect::<Result<_, _>>()
            .ok()?;
        if f.len() < 11 {
            return None;
        }
        Some(DiskStat {
            read_ios: f[0],
            read_merges: f[1],
            read_sectors: f[2],
            read_ticks: f[3],
            write_ios: f[4],
            write_merges: f[5],
            write_sectors: f[6],
            write_ticks: f[7],
            in_flight: f[8],
            io_ticks: f[9],
            time_in_queue: f[10],
        })
    }

    /// Read the counters of device `name`.
    pub(crate) fn read(name: &str) -> Result<DiskStat, DiskError> {
        let path = Path::new(SYS_CLASS_BLOCK).join(name).join("stat");
        let text = fs::read_to_string(&path).map_err(|source| DiskError::Read {
            path: path.clone(),
            source,
        })?;
        DiskStat::parse(&text).ok_or(DiskError::Parse { path })
    }

    /// Counters accumulated since `earlier` (saturating: a device reset between the snapshots
    /// gives 0, not a huge number). `in_flight` is a gauge: the later value is kept.
    pub(crate) fn delta(&self, earlier: &DiskStat) -> DiskStat {
        DiskStat {
            read_ios: self.read_ios.saturating_sub(earlier.read_ios),
            read_merges: self.read_merges.saturating_sub(earlier.read_merges),
            read_sectors: self.read_sectors.saturating_sub(earlier.read_sectors),
            read_ticks: self.read_ticks.saturating_sub(earlier.read_ticks),
            write_ios: self.write_ios.saturating_sub(earlier.write_ios),
            write_merges: self.write_merges.saturating_sub(earlier.write_merges),
            write_sectors: self.write_sectors.saturating_sub(earlier.write_sectors),
            write_ticks: self.write_ticks.saturating_sub(earlier.write_ticks),
            in_flight: self.in_flight,
            io_ticks: self.io_ticks.saturating_sub(earlier.io_ticks),
            time_in_queue: self.time_in_queue.saturating_sub(earlier.time_in_queue),
        }
    }

    /// Two deltas one after the other; `in_flight` (a gauge) is the later one's.
    pub(crate) fn plus(&self, later: &DiskStat) -> DiskStat {
        DiskStat {
            read_ios: self.read_ios + later.read_ios,
            read_merges: self.read_merges + later.read_merges,
            read_sectors: self.read_sectors + later.read_sectors,
            read_ticks: self.read_ticks + later.read_ticks,
            write_ios: self.write_ios + later.write_ios,
            write_merges: self.write_merges + later.write_merges,
            write_sectors: self.write_sectors + later.write_sectors,
            write_ticks: self.write_ticks + later.write_ticks,
            in_flight: later.in_flight,
            io_ticks: self.io_ticks + later.io_ticks,
            time_in_queue: self.time_in_queue + later.time_in_queue,
        }
    }

    /// fio's fields for a delta over `elapsed_ms`.
    pub(crate) fn to_report(self, name: &str, elapsed_ms: f64) -> DiskReport {
        let util = if elapsed_ms > 0.0 {
            (100.0 * self.io_ticks as f64 / elapsed_ms).min(100.0)
        } else {
            0.0
        };
        DiskReport {
            name: name.to_string(),
            read_ios: self.read_ios,
            write_ios: self.write_ios,
            read_merges: self.read_merges,
            write_merges: self.write_merges,
            read_ticks: self.read_ticks,
            write_ticks: self.write_ticks,
            in_queue: self.time_in_queue,
            util_pct: util,
            slaves: Vec::new(),
        }
    }
}

/// Counters of a target and its slaves at one instant.
#[derive(Debug, Clone)]
pub(crate) struct DiskSnapshot {
    pub at: Instant,
    pub stat: DiskStat,
    pub slaves: Vec<DiskStat>,
}

impl DiskTarget {
    pub(crate) fn snapshot(&self) -> Result<DiskSnapshot, DiskError> {
        let stat = DiskStat::read(&self.name)?;
        let slaves = self
            .slaves
            .iter()
            .map(|s| DiskStat::read(s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DiskSnapshot {
            at: Instant::now(),
            stat,
            slaves,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn parse_stat_line() {
        let text = "   34600     6733  4500354     9931    12292    11799  1345784     3770        0     4728    14878     3716       52   318352      741     3848      434\n";
        let s = DiskStat::parse(text).expect("parse");
        assert_eq!(s.read_ios, 34600);
        assert_eq!(s.write_merges, 11799);
        assert_eq!(s.io_ticks, 4728);
        assert_eq!(s.time_in_queue, 14878);
        assert!(DiskStat::parse("1 2 3").is_none());
        assert!(DiskStat::parse("1 2 3 4 5 6 7 8 9 x 11").is_none());
    }

    #[test]
    fn delta_and_util() {
        let a = DiskStat {
            read_ios: 10,
            io_ticks: 100,
            time_in_queue: 50,
            ..Default::default()
        };
        let b = DiskStat {
            read_ios: 25,
            write_ios: 4,
            io_ticks: 350,
            time_in_queue: 80,
            in_flight: 2,
            ..Default::default()
        };
        let d = b.delta(&a);
        assert_eq!(
            (d.read_ios, d.write_ios, d.io_ticks, d.in_flight),
            (15, 4, 250, 2)
        );
        let r = d.to_report("vda", 1000.0);
        assert_eq!((r.read_ios, r.in_queue), (15, 30));
        assert!((r.util_pct - 25.0).abs() < 1e-9);
        assert_eq!(d.to_report("vda", 100.0).util_pct, 100.0);
        assert_eq!(a.delta(&b).read_ios, 0);
    }

    #[test]
    fn deltas_add_up() {
        let a = DiskStat {
            read_ios: 3,
            io_ticks: 10,
            in_flight: 4,
            ..Default::default()
        };
        let b = DiskStat {
            read_ios: 5,
            io_ticks: 20,
            in_flight: 1,
            ..Default::default()
        };
        let s = a.plus(&b);
        assert_eq!((s.read_ios, s.io_ticks, s.in_flight), (8, 30, 1));
    }

    #[test]
    fn tmpfs_and_proc_have_no_disk() {
        assert_eq!(resolve(Path::new("/proc/self")).expect("resolve"), None);
        if Path::new("/dev/shm").exists() {
            assert_eq!(resolve(Path::new("/dev/shm")).expect("resolve"), None);
        }
        assert!(resolve(Path::new("/nonexistent/iogauge")).is_err());
    }

    /// Root only: a loop device with a partition table; a file on the partition must resolve to
    /// the loop disk (not `loopNp1`). Everything is torn down in Drop.
    #[test]
    fn loop_partition_resolves_to_parent_disk() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!(
                "skipping loop_partition_resolves_to_parent_disk: needs root (losetup, mount)"
            );
            return;
        }
        let work = tempfile::tempdir().expect("tempdir");
        let img = work.path().join("img");
        if let Err(e) = write_mbr_image(&img) {
            panic!("image: {e}");
        }
        let mut guard = LoopGuard::default();
        let out = Command::new("losetup")
            .args(["-f", "--show", "-P"])
            .arg(&img)
            .output();
        let dev = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Ok(o) => {
                eprintln!(
                    "skipping: losetup failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                return;
            }
            Err(e) => {
                eprintln!("skipping: losetup not runnable: {e}");
                return;
            }
        };
        guard.dev = Some(dev.clone());
        let part = format!("{dev}p1");
        // Kernels built without the MBR parser do not scan the table; `partx -a` adds the
        // partition through the BLKPG ioctl instead.
        if !wait_for(&part) {
            let _ = Command::new("partx").args(["-a", &dev]).status();
        }
        if !wait_for(&part) {
            eprintln!("skipping: {part} did not appear (no partition support for loop devices)");
            return;
        }
        let mkfs = Command::new("mkfs.ext4")
            .args(["-q", &part])
            .status()
            .expect("mkfs");
        assert!(mkfs.success());
        let mnt = work.path().join("mnt");
        fs::create_dir(&mnt).expect("mkdir");
        let st = Command::new("mount")
            .arg(&part)
            .arg(&mnt)
            .status()
            .expect("mount");
        assert!(st.success());
        guard.mnt = Some(mnt.clone());
        let file = mnt.join("f");
        fs::write(&file, b"x").expect("write");
        let t = resolve(&file).expect("resolve").expect("a device");
        let disk = Path::new(&dev)
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        assert_eq!(t.name, disk);
        assert!(t.slaves.is_empty());
        assert!(t.snapshot().is_ok());
        // The mount-table fallback (used for btrfs' anonymous st_dev) finds the same disk.
        let via_mounts = resolve_via_mountinfo(&fs::canonicalize(&file).expect("canon"), 0);
        assert_eq!(via_mounts, Some(t));
    }

    /// Waits up to 1 s for a device node (udev may create it asynchronously).
    fn wait_for(path: &str) -> bool {
        for _ in 0..50 {
            if Path::new(path).exists() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        false
    }

    /// A 32 MiB image with one Linux partition from sector 2048 (MBR written by hand, so the
    /// test needs no partitioning tool).
    fn write_mbr_image(path: &Path) -> io::Result<()> {
        const SIZE: u64 = 32 << 20;
        let f = fs::File::create(path)?;
        f.set_len(SIZE)?;
        let mut mbr = [0u8; 512];
        let e = &mut mbr[446..462];
        e[0] = 0x00; // not bootable
        e[1..4].copy_from_slice(&[0xfe, 0xff, 0xff]); // CHS unused
        e[4] = 0x83; // Linux
        e[5..8].copy_from_slice(&[0xfe, 0xff, 0xff]);
        e[8..12].copy_from_slice(&2048u32.to_le_bytes());
        e[12..16].copy_from_slice(&((SIZE / 512 - 2048) as u32).to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xaa;
        use std::os::unix::fs::FileExt;
        f.write_all_at(&mbr, 0)?;
        f.sync_all()
    }

    #[derive(Default)]
    struct LoopGuard {
        dev: Option<String>,
        mnt: Option<PathBuf>,
    }

    impl Drop for LoopGuard {
        fn drop(&mut self) {
            if let Some(m) = &self.mnt {
                let _ = Command::new("umount").arg(m).status();
            }
            if let Some(d) = &self.dev {
                let _ = Command::new("partx").args(["-d", d]).status();
                let _ = Command::new("losetup").args(["-d", d]).status();
            }
        }
    }
}
