//! Run markers: before iogauge creates a file, it writes the file's path into a small marker in
//! the file's directory (`.iogauge-run.<pid>.<start>`), synced to disk. A run removes its markers
//! with its files; a marker that outlives its run (SIGKILL, power loss, a crash) tells the next
//! run in that directory, or `iogauge cleanup DIR`, which files to remove.
//!
//! A dead run's file is removed only with proof that the run created it: the `user.iogauge` tag
//! holding that run's pid, or, for the files `check` names itself (`iogauge-…`), a birth time
//! after the run started. Anything else listed is left alone and reported.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const PREFIX: &str = ".iogauge-run.";
const MAGIC: &str = "iogauge run marker v1";

/// Who a marker belongs to: this host's boot, a process and its start time (so a reused pid is
/// not mistaken for the run).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    host: String,
    boot: String,
    pid: u32,
    start: u64,
    /// Unix seconds when the run began (files it created were born after).
    time: u64,
}

impl Owner {
    fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            host: hostname(),
            boot: boot_id(),
            pid,
            start: process_start(pid).unwrap_or(0),
            time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }

    fn header(&self) -> String {
        format!(
            "{MAGIC}\nhost {}\nboot {}\npid {}\nstart {}\ntime {}\n",
            self.host, self.boot, self.pid, self.start, self.time
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

/// The markers of this run, one per directory it creates files in.
#[derive(Debug, Default)]
pub(crate) struct RunMarkers {
    open: Mutex<Vec<(PathBuf, File, PathBuf)>>,
}

impl RunMarkers {
    /// Records that `paths` are about to be created, synced before returning so that the record
    /// survives whatever happens to the run.
    pub(crate) fn intend<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a Path>,
    ) -> std::io::Result<()> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let mut touched: Vec<usize> = Vec::new();
        for path in paths {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let i = match open.iter().position(|(d, _, _)| *d == dir) {
                Some(i) => i,
                None => {
                    let (f, name) = create_marker(&dir)?;
                    open.push((dir, f, name));
                    open.len() - 1
                }
            };
            let abs = absolute(path);
            let mut line = Vec::with_capacity(abs.as_os_str().len() + 6);
            line.extend_from_slice(b"file ");
            line.extend_from_slice(abs.as_os_str().as_encoded_bytes());
            line.push(b'\n');
            // O_APPEND: one write per line, whole.
            open[i].1.write_all(&line)?;
            if !touched.contains(&i) {
                touched.push(i);
            }
        }
        for i in touched {
            open[i].1.sync_data()?;
        }
        Ok(())
    }

    /// Removes this run's markers (its files are gone or were kept on purpose).
    pub(crate) fn remove_all(&self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        for (_, _, name) in open.drain(..) {
            let _ = std::fs::remove_file(name);
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

fn create_marker(dir: &Path) -> std::io::Result<(File, PathBuf)> {
    let me = Owner::me();
    let name = dir.join(format!("{PREFIX}{}.{}", me.pid, me.start));
    let mut f = OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o644)
        .open(&name)?;
    f.write_all(me.header().as_bytes())?;
    f.sync_data()?;
    // The marker's name in its directory must survive a power loss too.
    File::open(dir)?.sync_all()?;
    Ok((f, name))
}

/// What cleaning a directory of dead runs' files did.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Reaped {
    /// Files removed, each with the pid of the run that left it.
    pub removed: Vec<(PathBuf, u32)>,
    /// Files a dead run listed but that are left alone, and why.
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
                    "removed '{}', left by iogauge (pid {pid}) when it was killed",
                    f.display()
                )
            })
            .collect();
        out.extend(self.left.iter().map(|(f, why)| {
            format!(
                "note: '{}' is listed by a killed iogauge run but was not removed: {why}",
                f.display()
            )
        }));
        out
    }
}

fn parse(text: &str) -> Option<(Owner, Vec<PathBuf>)> {
    let mut lines = text.lines();
    if lines.next()? != MAGIC {
        return None;
    }
    let mut field = |key: &str| {
        let l = lines.next()?;
        l.strip_prefix(key)?.strip_prefix(' ').map(str::to_string)
    };
    let owner = Owner {
        host: field("host")?,
        boot: field("boot")?,
        pid: field("pid")?.parse().ok()?,
        start: field("start")?.parse().ok()?,
        time: field("time")?.parse().ok()?,
    };
    let files = lines
        .filter_map(|l| l.strip_prefix("file "))
        .map(PathBuf::from)
        .collect();
    Some((owner, files))
}

/// Removes the files that dead iogauge runs left in `dir` (as their markers list them, with
/// proof that each is theirs), then the markers.
pub(crate) fn reap(dir: &Path) -> Reaped {
    let mut out = Reaped::default();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut markers: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .map(|e| e.path())
        .collect();
    markers.sort();
    let host = hostname();
    for m in markers {
        let Some((owner, files)) = std::fs::read_to_string(&m).ok().and_then(|t| parse(&t)) else {
            out.left.push((m, "not a marker iogauge can read".into()));
            continue;
        };
        if owner.host != host {
            out.foreign.push((owner.host, owner.pid));
            continue;
        }
        if owner.alive() {
            out.live.push(owner.pid);
            continue;
        }
        for f in files {
            match theirs(&f, &owner) {
                Ok(true) => match remove(&f) {
                    Ok(()) => out.removed.push((f, owner.pid)),
                    Err(e) => out.left.push((f, e.to_string())),
                },
                Ok(false) => {}
                Err(why) => out.left.push((f, why)),
            }
        }
        let _ = std::fs::remove_file(&m);
    }
    out
}

/// Remove a file, or a directory the directory engines made (rmdir: never what is inside).
pub(crate) fn remove(p: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => std::fs::remove_dir(p),
        _ => std::fs::remove_file(p),
    }
}

/// Whether `f` is provably the file the dead run `owner` created: Ok(false) when it is gone.
fn theirs(f: &Path, owner: &Owner) -> Result<bool, String> {
    let meta = match std::fs::symlink_metadata(f) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e.to_string()),
    };
    // A directory is one a directory engine made (removed with rmdir: only when empty).
    if !meta.file_type().is_file() && !meta.file_type().is_dir() {
        return Err("not a regular file or directory".into());
    }
    if super::layout::tag_pid(f) == Some(owner.pid) {
        return Ok(true);
    }
    let named = f
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("iogauge-"));
    let born = meta.created().ok().and_then(|t| {
        t.duration_since(std::time::UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs())
    });
    match born {
        Some(b) if named && b >= owner.time => Ok(true),
        // Not provably the run's: its tag is missing or names another process.
        _ => Err("no proof the run created it (no iogauge tag with its pid); left in place".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_this_process_is_alive() {
        let me = Owner::me();
        let text = format!("{}file /a/b\nfile /c d\n", me.header());
        let (o, files) = parse(&text).unwrap();
        assert_eq!(o, me);
        assert!(o.alive());
        assert_eq!(files, vec![PathBuf::from("/a/b"), PathBuf::from("/c d")]);
        assert!(parse("something else\n").is_none());
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
    fn a_run_writes_its_marker_first_and_removes_it_last() {
        let d = tempfile::tempdir().unwrap();
        let m = RunMarkers::default();
        let a = d.path().join("a.0.0");
        m.intend([a.as_path()]).unwrap();
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1);
        assert!(names[0].starts_with(PREFIX));
        let text = std::fs::read_to_string(d.path().join(&names[0])).unwrap();
        assert!(text.ends_with(&format!("file {}\n", a.display())));
        // A live run's marker is left alone.
        assert_eq!(reap(d.path()).live, vec![std::process::id()]);
        m.remove_all();
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
