//! Run markers: before iogauge creates a file, it writes the file's name into a small marker in
//! the file's directory (`.iogauge-run.<pid>.<start>`), synced to disk, and once the file exists
//! its identity (device, inode, owner, birth time, the size the run gives it). A run removes
//! its markers with its files; a marker that outlives its run (SIGKILL, power loss, a crash)
//! tells the next run in that directory, or `iogauge cleanup DIR`, which files to remove.
//!
//! Other users may write the directory, so nothing in it is believed on its name: a marker is
//! read only if it is a regular file owned by the user cleaning up, writable by no one else,
//! with one link; its entries are bare names in that directory (no `/`); and a listed file is
//! removed only while it is, seen without following symlinks, the very file recorded (device,
//! inode, owner, birth time, and a size the run could have given it). Anything else is left
//! alone and reported. Names are written with every byte outside printable ASCII (and `%`) as
//! `%XX`, so any name survives.
//!
//! A run that keeps files on purpose (`--keep-files`, a job's `unlink=0`) writes `kept NAME WHY`
//! lines and leaves its marker: later runs then call those files kept rather than a killed
//! run's, never remove them, and `iogauge cleanup --kept DIR` removes them, with the same proof.

use super::identity::{self, FileId, Seen};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

const PREFIX: &str = ".iogauge-run.";
const MAGIC: &str = "iogauge run marker v2";
/// The marker format before identities were recorded: never trusted.
const MAGIC_V1: &str = "iogauge run marker v1";
/// A marker is a header and about 110 bytes per file: 256 MiB holds the small-files test's
/// largest run (a million files) twice over. Only a marker already proven to be the cleaning
/// user's own is read, so this bounds accidents, not attacks.
const MAX_MARKER: u64 = 256 << 20;

/// Who a marker belongs to: this host's boot, a process and its start time (so a reused pid is
/// not mistaken for the run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Owner {
    host: String,
    boot: String,
    pid: u32,
    start: u64,
}

impl Owner {
    fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            host: hostname(),
            boot: boot_id(),
            pid,
            start: process_start(pid).unwrap_or(0),
        }
    }

    fn header(&self) -> String {
        format!(
            "{MAGIC}\nhost {}\nboot {}\npid {}\nstart {}\n",
            escape(self.host.as_bytes()),
            escape(self.boot.as_bytes()),
            self.pid,
            self.start
        )
    }

    fn alive(&self) -> bool {
        self.boot == boot_id() && process_start(self.pid) == Some(self.start)
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: count fields after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // A zombie (killed, not yet reaped) or dead process runs nothing any more.
    if matches!(fields.next()?, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// `%XX` for every byte that is not printable ASCII, and for `%` itself.
fn escape(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'%' {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

fn unescape(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut b = s.bytes();
    while let Some(c) = b.next() {
        if c == b'%' {
            let hex = [b.next()?, b.next()?];
            out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else if c.is_ascii_graphic() {
            out.push(c);
        } else {
            return None;
        }
    }
    Some(out)
}

/// A name a marker may list: one entry of its own directory.
fn plain_name(n: &[u8]) -> bool {
    !n.is_empty() && n != b"." && n != b".." && !n.contains(&b'/') && !n.contains(&0)
}

/// One run's marker in one directory, open for appending.
#[derive(Debug)]
pub(crate) struct MarkerFile {
    file: File,
    name: OsString,
    /// What the marker is, to remove only it.
    id: FileId,
}

/// Why a run kept a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeptBy {
    /// `--keep-files`.
    KeepFiles,
    /// The job's `unlink=0`.
    Unlink,
}

impl KeptBy {
    /// As written in the marker.
    fn word(self) -> &'static str {
        match self {
            KeptBy::KeepFiles => "keep-files",
            KeptBy::Unlink => "unlink=0",
        }
    }

    /// As the user gave it.
    pub(crate) fn flag(self) -> &'static str {
        match self {
            KeptBy::KeepFiles => "--keep-files",
            KeptBy::Unlink => "unlink=0",
        }
    }
}

/// Markers this process made so far: a process that runs several times in one directory
/// (`check`'s profiles) and keeps files leaves one marker per run, each under its own name.
static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl MarkerFile {
    /// Creates this run's marker in the directory `dir` (a handle), synced with its name.
    pub(crate) fn create(dir: BorrowedFd<'_>) -> std::io::Result<MarkerFile> {
        let me = Owner::me();
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = OsString::from(match n {
            0 => format!("{PREFIX}{}.{}", me.pid, me.start),
            n => format!("{PREFIX}{}.{}.{n}", me.pid, me.start),
        });
        // 0644 via the mode; the umask may only take bits away. O_EXCL|O_NOFOLLOW: never
        // through something already there.
        let mut file = identity::create_at(dir, &name, 0o644)?;
        let id = identity::seen_fd(file.as_fd())?.id;
        file.write_all(me.header().as_bytes())?;
        file.sync_data()?;
        // The marker's name in its directory must survive a power loss too.
        rustix::fs::fsync(dir)?;
        Ok(MarkerFile { file, name, id })
    }

    /// Records that `names` are about to be created (one write: a line per name).
    pub(crate) fn intend<'a>(
        &mut self,
        names: impl IntoIterator<Item = &'a OsStr>,
    ) -> std::io::Result<()> {
        let mut text = String::new();
        for n in names {
            text.push_str("intend ");
            text.push_str(&escape(n.as_bytes()));
            text.push('\n');
        }
        // The file is at its end: every write appends.
        self.file.write_all(text.as_bytes())
    }

    /// Records what `name` is now that it exists, and the largest size the run gives it (None:
    /// the run lets it grow).
    pub(crate) fn record(
        &mut self,
        name: &OsStr,
        id: &FileId,
        size: Option<u64>,
    ) -> std::io::Result<()> {
        self.file.write_all(file_line(name, id, size).as_bytes())
    }

    pub(crate) fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    /// Records that the run keeps `names` on purpose (one write); the marker then stays.
    pub(crate) fn keep<'a>(
        &mut self,
        names: impl IntoIterator<Item = &'a OsStr>,
        by: KeptBy,
    ) -> std::io::Result<()> {
        let mut text = String::new();
        for n in names {
            text.push_str("kept ");
            text.push_str(&escape(n.as_bytes()));
            text.push(' ');
            text.push_str(by.word());
            text.push('\n');
        }
        self.file.write_all(text.as_bytes())
    }

    /// Removes the marker from `dir` (its files are gone or were kept on purpose).
    pub(crate) fn remove(self, dir: BorrowedFd<'_>) {
        let _ = identity::remove_verified(dir, &self.name, &self.id);
    }
}

/// A marker's line for a file that exists: its name, identity and the size the run gives it.
fn file_line(name: &OsStr, id: &FileId, size: Option<u64>) -> String {
    format!(
        "file {} {} {}:{} {} {} {} {}\n",
        escape(name.as_bytes()),
        if id.is_dir { 'd' } else { 'f' },
        id.dev.0,
        id.dev.1,
        id.ino,
        id.uid,
        id.btime
            .map_or("-".to_string(), |(s, ns)| format!("{s}.{ns:09}")),
        size.map_or("-".to_string(), |s| s.to_string()),
    )
}

/// One file a marker lists, as recorded once it existed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub name: OsString,
    pub id: FileId,
    /// The largest size the run gave it; None when it could grow.
    pub size: Option<u64>,
}

/// A marker as read back.
#[derive(Debug, PartialEq)]
pub(crate) struct Parsed {
    pub owner: Owner,
    /// Files with their identity.
    pub files: Vec<Entry>,
    /// Names that were about to be created but have no identity recorded.
    pub intended: Vec<OsString>,
    /// Names the run kept on purpose, and why.
    pub kept: Vec<(OsString, KeptBy)>,
}

/// Why a marker's text is not read.
#[derive(Debug, PartialEq)]
pub(crate) enum Unreadable {
    /// Written by iogauge before markers recorded identities.
    Old,
    /// Not a marker, with the line that is wrong (1-based).
    Bad(usize),
}

/// Reads a marker's text: strictly, so that anything not written by this iogauge is refused.
pub(crate) fn parse(bytes: &[u8]) -> Result<Parsed, Unreadable> {
    let text = std::str::from_utf8(bytes).map_err(|_| Unreadable::Bad(0))?;
    let mut lines = text.split_terminator('\n').enumerate();
    match lines.next() {
        Some((_, MAGIC)) => {}
        Some((_, MAGIC_V1)) => return Err(Unreadable::Old),
        _ => return Err(Unreadable::Bad(1)),
    }
    let mut field = |key: &str| -> Result<String, Unreadable> {
        let (i, l) = lines.next().ok_or(Unreadable::Bad(0))?;
        l.strip_prefix(key)
            .and_then(|v| v.strip_prefix(' '))
            .map(str::to_string)
            .ok_or(Unreadable::Bad(i + 1))
    };
    let text_of = |v: String| unescape(&v).and_then(|b| String::from_utf8(b).ok());
    let host = text_of(field("host")?).ok_or(Unreadable::Bad(2))?;
    let boot = text_of(field("boot")?).ok_or(Unreadable::Bad(3))?;
    let pid = field("pid")?.parse().map_err(|_| Unreadable::Bad(4))?;
    let start = field("start")?.parse().map_err(|_| Unreadable::Bad(5))?;
    let mut out = Parsed {
        owner: Owner {
            host,
            boot,
            pid,
            start,
        },
        files: Vec::new(),
        intended: Vec::new(),
        kept: Vec::new(),
    };
    let mut latest: std::collections::HashMap<OsString, usize> = std::collections::HashMap::new();
    for (i, l) in lines {
        let bad = Unreadable::Bad(i + 1);
        let mut parts = l.split(' ');
        let kind = parts.next();
        let name = parts
            .next()
            .and_then(unescape)
            .filter(|n| plain_name(n))
            .map(OsString::from_vec)
            .ok_or(Unreadable::Bad(i + 1))?;
        match kind {
            Some("intend") if parts.next().is_none() => out.intended.push(name),
            Some("kept") => {
                let by = match parts.next() {
                    Some("keep-files") => KeptBy::KeepFiles,
                    Some("unlink=0") => KeptBy::Unlink,
                    _ => return Err(bad),
                };
                if parts.next().is_some() {
                    return Err(bad);
                }
                out.kept.push((name, by));
            }
            Some("file") => {
                let entry = file_entry(name, &mut parts).ok_or(Unreadable::Bad(i + 1))?;
                // A later line for the same name supersedes (a file grown by a later job, a
                // file replaced by unlink_each_loop): the marker is appended to, never edited.
                match latest.entry(entry.name.clone()) {
                    std::collections::hash_map::Entry::Occupied(o) => out.files[*o.get()] = entry,
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(out.files.len());
                        out.files.push(entry);
                    }
                }
            }
            _ => return Err(bad),
        }
    }
    Ok(out)
}

fn file_entry<'a>(name: OsString, parts: &mut impl Iterator<Item = &'a str>) -> Option<Entry> {
    let is_dir = match parts.next()? {
        "f" => false,
        "d" => true,
        _ => return None,
    };
    let (major, minor) = parts.next()?.split_once(':')?;
    let dev = (major.parse().ok()?, minor.parse().ok()?);
    let ino = parts.next()?.parse().ok()?;
    let uid = parts.next()?.parse().ok()?;
    let btime = match parts.next()? {
        "-" => None,
        t => {
            let (s, ns) = t.split_once('.')?;
            let ns: u32 = ns.parse().ok()?;
            (ns < 1_000_000_000).then_some(())?;
            Some((s.parse().ok()?, ns))
        }
    };
    let size = match parts.next()? {
        "-" => None,
        s => Some(s.parse().ok()?),
    };
    if parts.next().is_some() {
        return None;
    }
    Some(Entry {
        name,
        id: FileId {
            dev,
            ino,
            uid,
            btime,
            is_dir,
        },
        size,
    })
}

/// What `reap_with` does beyond removing killed runs' files.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReapOptions {
    /// Also remove the files runs kept on purpose (`iogauge cleanup --kept`).
    pub kept: bool,
    /// Remove nothing: say what would be removed (`iogauge cleanup --dry-run`).
    pub dry_run: bool,
}

/// What cleaning a directory of dead runs' files did.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Reaped {
    /// Files removed (or, in a dry run, that would be), each with the pid of the killed run that
    /// left it.
    pub removed: Vec<(PathBuf, u32)>,
    /// Files a run kept on purpose, removed (or that would be) as asked: pid and why kept.
    pub removed_kept: Vec<(PathBuf, u32, KeptBy)>,
    /// Files a run kept on purpose, left in place (not asked to remove them).
    pub kept: Vec<(PathBuf, u32, KeptBy)>,
    /// Files (or markers) left alone, and why.
    pub left: Vec<(PathBuf, String)>,
    /// Markers of runs that are still going (pid), or of other hosts (a shared filesystem).
    pub live: Vec<u32>,
    pub foreign: Vec<(String, u32)>,
}

impl Reaped {
    /// One line per file removed or left, for stderr.
    pub(crate) fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .removed
            .iter()
            .map(|(f, pid)| {
                format!(
                    "removed {}, left by iogauge (pid {pid}) when it was killed",
                    shown(f)
                )
            })
            .collect();
        out.extend(
            self.left
                .iter()
                .map(|(f, why)| format!("note: left {} in place: {why}", shown(f))),
        );
        out
    }

    /// One line per run whose kept files are still there: they are the user's, not a killed
    /// run's (said where a user looks at the directory: `check`, not every fio run).
    pub(crate) fn describe_kept(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut runs: Vec<(u32, KeptBy, &Path, usize)> = Vec::new();
        for (f, pid, by) in &self.kept {
            match runs.iter_mut().find(|r| r.0 == *pid) {
                Some(r) => r.3 += 1,
                None => runs.push((*pid, *by, f, 1)),
            }
        }
        for (pid, by, first, n) in runs {
            let dir = first.parent().unwrap_or(Path::new("."));
            let what = if n == 1 {
                shown(first)
            } else {
                format!("{n} files (e.g. {})", shown(first))
            };
            out.push(format!(
                "note: {what} kept on purpose by an earlier iogauge run (pid {pid}, {}); \
                 `iogauge cleanup --kept {}` removes {}",
                by.flag(),
                shown(dir),
                if n == 1 { "it" } else { "them" }
            ));
        }
        out
    }
}

/// A path for a terminal: quoted, control characters and other odd bytes escaped.
pub(crate) fn shown(p: &Path) -> String {
    format!("'{}'", crate::untrusted::term(&p.to_string_lossy()))
}

/// Why a marker in the directory is not trusted, or its parsed text.
fn read_marker(dir: BorrowedFd<'_>, name: &OsStr) -> Result<(Parsed, Seen), String> {
    use rustix::fs::{Mode, OFlags};
    // O_NOFOLLOW: a symlink is refused; O_NONBLOCK: a FIFO does not hang the open.
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        rustix::io::Errno::LOOP => "a symlink, not a marker iogauge wrote".to_string(),
        e => format!("cannot open it: {}", std::io::Error::from(e)),
    })?;
    let seen = identity::seen_fd(fd.as_fd()).map_err(|e| format!("cannot stat it: {e}"))?;
    let me = identity::euid();
    if !seen.plain || seen.id.is_dir {
        return Err("not a regular file, so not a marker iogauge wrote".into());
    }
    if seen.id.uid != me {
        return Err(format!(
            "the marker belongs to uid {}, not to you (uid {me}); only its owner's cleanup \
             trusts it",
            seen.id.uid
        ));
    }
    if seen.shared_write || seen.links != 1 {
        return Err("the marker is writable by others or has other names; not trusted".into());
    }
    if seen.size > MAX_MARKER {
        return Err(format!(
            "the marker is {} bytes, more than iogauge writes ({MAX_MARKER})",
            seen.size
        ));
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(MAX_MARKER + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    match parse(&bytes) {
        Ok(p) => Ok((p, seen)),
        Err(Unreadable::Old) => Err(
            "written by an older iogauge that did not record file identities; its files are \
             not removed (remove them yourself if they are test data, then the marker)"
                .into(),
        ),
        Err(Unreadable::Bad(line)) => Err(format!(
            "not a marker iogauge can read (line {line}); left in place"
        )),
    }
}

/// Whether `now` is the entry's file, as a reason when it is not.
fn not_theirs(now: &Seen, e: &Entry) -> Option<String> {
    if !now.plain {
        return Some("not a regular file or directory".into());
    }
    if let Some(why) = identity::differs(&now.id, &e.id) {
        return Some(why);
    }
    if now.id.uid != identity::euid() {
        return Some(format!("owned by uid {}, not by you", now.id.uid));
    }
    match e.size {
        // Killed before the layout set its size, or at the size the run gave it.
        Some(s) if !now.id.is_dir && now.size != 0 && now.size != s => Some(format!(
            "its size ({} bytes) is not what the run gave it ({s} bytes): someone wrote it since",
            now.size
        )),
        _ => None,
    }
}

/// Removes the files that dead iogauge runs left in `dir` (as their markers list them, with
/// proof that each is theirs), then the markers; files kept on purpose stay, with their marker.
pub(crate) fn reap(dir: &Path) -> Reaped {
    reap_with(dir, ReapOptions::default())
}

/// [`reap`], also removing kept files (`kept`), or removing nothing (`dry_run`).
pub(crate) fn reap_with(dir: &Path, opts: ReapOptions) -> Reaped {
    let mut out = Reaped::default();
    let Ok(dfd) = identity::open_dir(dir) else {
        return out;
    };
    let Ok(mut markers) = identity::names(dfd.as_fd()) else {
        return out;
    };
    markers.retain(|n| n.as_bytes().starts_with(PREFIX.as_bytes()));
    markers.sort();
    let host = hostname();
    for m in markers {
        let mpath = dir.join(&m);
        let (parsed, mseen) = match read_marker(dfd.as_fd(), &m) {
            Ok(p) => p,
            Err(why) => {
                out.left.push((mpath, why));
                continue;
            }
        };
        let owner = parsed.owner;
        if owner.host != host {
            out.foreign.push((owner.host, owner.pid));
            continue;
        }
        if owner.alive() {
            out.live.push(owner.pid);
            continue;
        }
        let mut keep_marker = false;
        let kept_names: std::collections::HashMap<&OsString, KeptBy> =
            parsed.kept.iter().map(|(n, by)| (n, *by)).collect();
        for e in &parsed.files {
            let path = dir.join(&e.name);
            let now = match identity::seen_at(dfd.as_fd(), &e.name) {
                Ok(Some(s)) => s,
                Ok(None) => continue,
                Err(err) => {
                    out.left.push((path, err.to_string()));
                    continue;
                }
            };
            let kept = kept_names.get(&e.name).copied();
            if let Some(why) = not_theirs(&now, e) {
                // A kept file replaced since is simply not the run's any more.
                if kept.is_none() || opts.kept {
                    out.left.push((path, why));
                }
                continue;
            }
            if let (Some(by), false) = (kept, opts.kept) {
                out.kept.push((path, owner.pid, by));
                keep_marker = true;
                continue;
            }
            if opts.dry_run {
                keep_marker = true;
                match kept {
                    Some(by) => out.removed_kept.push((path, owner.pid, by)),
                    None => out.removed.push((path, owner.pid)),
                }
                continue;
            }
            match identity::unlink(dfd.as_fd(), &e.name, e.id.is_dir) {
                Ok(()) => match kept {
                    Some(by) => out.removed_kept.push((path, owner.pid, by)),
                    None => out.removed.push((path, owner.pid)),
                },
                Err(err) => {
                    // Try again later (a filesystem that failed): the marker stays.
                    keep_marker = true;
                    out.left.push((path, err.to_string()));
                }
            }
        }
        for n in &parsed.intended {
            let recorded = parsed.files.iter().any(|e| e.name == *n);
            if !recorded && matches!(identity::seen_at(dfd.as_fd(), n), Ok(Some(_))) {
                out.left.push((
                    dir.join(n),
                    "the run was killed before it recorded what this file is, so there is no \
                     proof it made it"
                        .into(),
                ));
            }
        }
        if !keep_marker && !opts.dry_run {
            let _ = identity::remove_verified(dfd.as_fd(), &m, &mseen.id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ino: u64) -> FileId {
        FileId {
            dev: (8, 1),
            ino,
            uid: 0,
            btime: Some((1_700_000_000, 5)),
            is_dir: false,
        }
    }

    /// A file grown by a later job of the run is recorded again: the last line is the file.
    #[test]
    fn a_later_line_for_a_name_supersedes_the_earlier_one() {
        let mut text = Owner::me().header();
        text.push_str("file a f 8:1 7 0 - 4096\nfile b f 8:1 8 0 - 10\nfile a f 8:1 7 0 - 8192\n");
        let p = parse(text.as_bytes()).unwrap();
        let got: Vec<_> = p.files.iter().map(|e| (e.name.clone(), e.size)).collect();
        assert_eq!(
            got,
            [
                (OsString::from("a"), Some(8192)),
                (OsString::from("b"), Some(10))
            ]
        );
    }

    #[test]
    fn markers_round_trip_any_name_and_this_process_is_alive() {
        let me = Owner::me();
        let odd = OsString::from_vec(b"a b\n\xff%c".to_vec());
        let mut text = me.header();
        text.push_str(&format!("intend {}\n", escape(odd.as_bytes())));
        text.push_str(&format!(
            "file {} f 8:1 7 0 1700000000.000000005 4096\n",
            escape(odd.as_bytes())
        ));
        text.push_str("file d d 8:1 9 0 - -\n");
        let p = parse(text.as_bytes()).unwrap();
        assert_eq!(p.owner, me);
        assert!(p.owner.alive());
        assert_eq!(p.intended, vec![odd.clone()]);
        assert_eq!(
            p.files[0],
            Entry {
                name: odd,
                id: id(7),
                size: Some(4096)
            }
        );
        assert!(p.files[1].id.is_dir && p.files[1].id.btime.is_none());
        let dead = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        assert!(!dead.alive());
        let rebooted = Owner {
            boot: "other".into(),
            ..me
        };
        assert!(!rebooted.alive());
    }

    #[test]
    fn entries_that_leave_the_directory_or_are_malformed_are_refused() {
        let h = Owner::me().header();
        for bad in [
            "file /etc/shadow f 8:1 7 0 - -",
            "file ../x f 8:1 7 0 - -",
            "file a%2Fb f 8:1 7 0 - -",
            "file .. d 8:1 7 0 - -",
            "file %00 f 8:1 7 0 - -",
            "file a f 8:1 7 0 -",
            "file a x 8:1 7 0 - -",
            "file a f 8:1 7 0 1.1000000000 -",
            "intend a b",
            "time 0",
        ] {
            let r = parse(format!("{h}{bad}\n").as_bytes());
            assert_eq!(r, Err(Unreadable::Bad(6)), "{bad}");
        }
        assert_eq!(
            parse(b"iogauge run marker v1\nhost h\n"),
            Err(Unreadable::Old)
        );
        assert_eq!(parse(b"\xff"), Err(Unreadable::Bad(0)));
    }

    #[test]
    fn kept_files_stay_until_asked_and_a_dry_run_removes_nothing() {
        let d = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let dfd = identity::open_dir(d.path()).unwrap();
        for n in ["kept", "left"] {
            std::fs::write(d.path().join(n), b"data").unwrap();
        }
        let id = |n: &str| {
            identity::seen_at(dfd.as_fd(), OsStr::new(n))
                .unwrap()
                .unwrap()
                .id
        };
        // A dead run (pid above pid_max) that kept one file and was killed with the other.
        let dead = Owner {
            pid: 4_194_305,
            start: 1,
            ..Owner::me()
        };
        let text = format!(
            "{}{}{}kept kept keep-files\n",
            dead.header(),
            file_line(OsStr::new("kept"), &id("kept"), Some(4)),
            file_line(OsStr::new("left"), &id("left"), Some(4)),
        );
        let p = parse(text.as_bytes()).unwrap();
        assert_eq!(p.kept, [(OsString::from("kept"), KeptBy::KeepFiles)]);
        for bad in ["kept a", "kept a why", "kept a unlink=0 x"] {
            assert!(parse(format!("{}{bad}\n", dead.header()).as_bytes()).is_err());
        }
        let marker = d.path().join(".iogauge-run.4194305.1");
        std::fs::write(&marker, &text).unwrap();
        let kept = d.path().join("kept");
        let left = d.path().join("left");
        // A dry run: what would go, and nothing goes.
        let dry = ReapOptions {
            kept: true,
            dry_run: true,
        };
        let r = reap_with(d.path(), dry);
        assert_eq!(r.removed, [(left.clone(), 4_194_305)]);
        assert_eq!(
            r.removed_kept,
            [(kept.clone(), 4_194_305, KeptBy::KeepFiles)]
        );
        assert!(kept.exists() && left.exists() && marker.exists());
        // Unasked, the killed run's file goes; the kept one and the marker stay.
        let r = reap(d.path());
        assert_eq!(r.removed, [(left.clone(), 4_194_305)]);
        assert_eq!(r.kept, [(kept.clone(), 4_194_305, KeptBy::KeepFiles)]);
        assert!(r.describe().iter().all(|l| !l.contains("kept")));
        assert_eq!(
            r.describe_kept(),
            [format!(
                "note: {} kept on purpose by an earlier iogauge run (pid 4194305, --keep-files); \
                 `iogauge cleanup --kept {}` removes it",
                shown(&kept),
                shown(d.path())
            )]
        );
        assert!(kept.exists() && !left.exists() && marker.exists());
        // Asked: it goes, with the marker.
        let r = reap_with(
            d.path(),
            ReapOptions {
                kept: true,
                dry_run: false,
            },
        );
        assert_eq!(
            r.removed_kept,
            [(kept.clone(), 4_194_305, KeptBy::KeepFiles)]
        );
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_run_writes_its_marker_first_and_removes_it_last() {
        let d = tempfile::tempdir().unwrap();
        let dfd = identity::open_dir(d.path()).unwrap();
        let mut m = MarkerFile::create(dfd.as_fd()).unwrap();
        m.intend([OsStr::new("a.0.0")]).unwrap();
        m.sync().unwrap();
        let names = identity::names(dfd.as_fd()).unwrap();
        assert_eq!(names.len(), 1);
        assert!(names[0].as_bytes().starts_with(PREFIX.as_bytes()));
        let text = std::fs::read_to_string(d.path().join(&names[0])).unwrap();
        assert!(text.ends_with("intend a.0.0\n"));
        // A live run's marker is left alone.
        assert_eq!(reap(d.path()).live, vec![std::process::id()]);
        m.remove(dfd.as_fd());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
