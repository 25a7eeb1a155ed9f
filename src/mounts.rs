//! `/proc/self/mountinfo`: which mount holds a path, its filesystem type, source and options.
//! One parser for the disk statistics (which device is behind a directory) and the filesystem
//! checks (tmpfs, overlay layers, the documents' context).

use std::path::{Path, PathBuf};

/// One line of /proc/self/mountinfo, the fields iogauge reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mount {
    /// The device number of the mounted filesystem (`major:minor`; `0:N` for filesystems
    /// without one of their own, such as tmpfs, overlay and btrfs).
    pub devnum: String,
    /// Where it is mounted (escapes decoded).
    pub mount_point: PathBuf,
    /// The filesystem type (`ext4`, `tmpfs`, `overlay`, `nfs4`).
    pub fs_type: String,
    /// What is mounted: a device, a server export, or a name.
    pub source: String,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// Per-superblock options (overlay's `upperdir=` is here).
    pub super_options: String,
}

impl Mount {
    /// Both option lists, per mount first, without repeats.
    pub fn options(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for o in self
            .mount_options
            .split(',')
            .chain(self.super_options.split(','))
        {
            if !o.is_empty() && !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen.join(",")
    }

    /// An overlay's writable layer (`upperdir=`), if this is one.
    pub fn overlay_upper(&self) -> Option<PathBuf> {
        (self.fs_type == "overlay")
            .then(|| {
                self.super_options
                    .split(',')
                    .find_map(|o| o.strip_prefix("upperdir="))
                    .map(PathBuf::from)
            })
            .flatten()
    }
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every parsable line of a mountinfo text.
pub(crate) fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (pre, post) = line.split_once(" - ")?;
            let mut pre = pre.split(' ').skip(2);
            let devnum = pre.next()?.to_string();
            let mut pre = pre.skip(1);
            let mount_point = PathBuf::from(unescape(pre.next()?));
            let mount_options = pre.next().unwrap_or("").to_string();
            let mut post = post.split(' ');
            Some(Mount {
                devnum,
                mount_point,
                mount_options,
                fs_type: post.next()?.to_string(),
                source: unescape(post.next()?),
                super_options: post.next().unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// Every mount this process can see (empty when /proc/self/mountinfo cannot be read).
pub(crate) fn all() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse(&t))
        .unwrap_or_default()
}

/// The mount holding `real` (an absolute path without symlinks): the longest mount point that
/// is a prefix of it; among equal ones the last, which hides the earlier (over-mounts).
pub(crate) fn holding(real: &Path) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for m in all() {
        if real.starts_with(&m.mount_point)
            && best.as_ref().is_none_or(|b| {
                m.mount_point.components().count() >= b.mount_point.components().count()
            })
        {
            best = Some(m);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_escapes_and_options() {
        let text = "36 35 98:0 /mnt1 /mnt/my\\040dir rw,noatime master:1 - btrfs /dev/vdb rw,space_cache\n\
                    40 27 0:50 / /var/lib/x rw - overlay overlay rw,lowerdir=/l,upperdir=/u/diff,workdir=/u/work\n\
                    garbage\n";
        let m = parse(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].mount_point, PathBuf::from("/mnt/my dir"));
        assert_eq!(
            (m[0].fs_type.as_str(), m[0].source.as_str()),
            ("btrfs", "/dev/vdb")
        );
        assert_eq!(m[0].mount_options, "rw,noatime");
        assert_eq!(
            (m[0].devnum.as_str(), m[1].devnum.as_str()),
            ("98:0", "0:50")
        );
        assert_eq!(m[0].options(), "rw,noatime,space_cache");
        assert_eq!(m[0].overlay_upper(), None);
        assert_eq!(m[1].fs_type, "overlay");
        assert_eq!(m[1].overlay_upper(), Some(PathBuf::from("/u/diff")));
    }

    #[test]
    fn the_root_holds_this_crate() {
        let here = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).unwrap();
        let m = holding(&here).unwrap();
        assert!(here.starts_with(&m.mount_point));
        assert!(!m.fs_type.is_empty());
    }
}
