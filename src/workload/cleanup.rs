//! The files (and the directory engines' directories) iogauge created in one run, each with its
//! identity and a handle on its directory. Everything listed is removed at the end, on error and
//! on SIGINT/SIGTERM (unless the user keeps files), so no test file is left behind; and since
//! other users may write those directories, a file is reopened and removed only while its name
//! still is the file iogauge made (`identity.rs`), relative to the directory handle taken when
//! the first file was made there.

use super::identity::{self, FileId, Reopen};
use super::marker::{KeptBy, MarkerFile};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// One directory the run creates files in: its handle and the run's marker there.
#[derive(Debug)]
struct Dir {
    path: PathBuf,
    fd: OwnedFd,
    marker: Option<MarkerFile>,
    /// The run keeps files here on purpose: the marker stays, saying so.
    kept: bool,
    /// Writing that failed: the marker goes, so that no later run takes the kept files for a
    /// killed run's (they are then simply not tracked, as a user's files are not).
    keep_failed: bool,
}

/// One file or directory the run created.
#[derive(Debug)]
struct Made {
    path: PathBuf,
    dir: usize,
    name: OsString,
    /// None until it exists and its identity is recorded (a file a worker creates itself).
    id: Option<FileId>,
    /// Recorded as one that grows (no size to prove it by): it stays so.
    grows: bool,
}

#[derive(Debug)]
struct State {
    dirs: Vec<Dir>,
    made: Vec<Made>,
    /// Each path's latest entry in `made`: lookups stay O(1) with thousands of files (the
    /// small-files test reopens each of them in its timed loop).
    index: std::collections::HashMap<PathBuf, usize>,
    /// When the run began: a file without a recorded identity must be born after it.
    born_after: (i64, u32),
}

/// The run's created files; clones share one list (the workers' `unlink_each_loop` replaces
/// files in it).
#[derive(Debug, Clone)]
pub struct CreatedFiles {
    state: Arc<Mutex<State>>,
}

impl Default for CreatedFiles {
    fn default() -> Self {
        Self::new()
    }
}

/// What a file opened by `reopen_unchecked` must be.
#[derive(Debug)]
pub(crate) struct Check(FileId);

impl Check {
    /// Whether `f` (opened as `path`) is the file iogauge made.
    pub(crate) fn verify(&self, path: &Path, f: &File) -> std::io::Result<()> {
        identity::verify(f, &self.0).map_err(|e| reopen_error(path, e))
    }
}

fn reopen_error(path: &Path, e: Reopen) -> std::io::Error {
    match e {
        Reopen::Replaced(why) => replaced(path, &why),
        Reopen::Io(e) => e,
    }
}

/// A created file's name is not the file iogauge made any more.
fn replaced(path: &Path, why: &str) -> std::io::Error {
    std::io::Error::other(format!(
        "'{}' was replaced while iogauge ran ({why}); nothing was done to what is there now",
        path.display()
    ))
}

impl CreatedFiles {
    pub fn new() -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        CreatedFiles {
            state: Arc::new(Mutex::new(State {
                dirs: Vec::new(),
                made: Vec::new(),
                index: std::collections::HashMap::new(),
                // Filesystems stamp birth with the kernel's coarse clock, a tick behind.
                born_after: (now.as_secs() as i64 - 1, now.subsec_nanos()),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must not stop cleanup: take the list even if poisoned.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record, synced to disk in a marker in each file's directory, that these files are about
    /// to be created: a run killed before its cleanup leaves the list for the next one.
    pub fn intend<'a>(&self, paths: impl IntoIterator<Item = &'a Path>) -> std::io::Result<()> {
        let mut st = self.lock();
        let mut touched: Vec<usize> = Vec::new();
        let mut names: Vec<(usize, OsString)> = Vec::new();
        for path in paths {
            let (d, name) = locate(&mut st, path)?;
            if !touched.contains(&d) {
                touched.push(d);
            }
            names.push((d, name));
        }
        for &d in &touched {
            let dir = &mut st.dirs[d];
            let marker = match dir.marker.as_mut() {
                Some(m) => m,
                None => dir.marker.insert(MarkerFile::create(dir.fd.as_fd())?),
            };
            marker.intend(
                names
                    .iter()
                    .filter(|(i, _)| *i == d)
                    .map(|(_, n)| n.as_os_str()),
            )?;
            marker.sync()?;
        }
        Ok(())
    }

    /// Creates `path` (a new regular file, read-write; never through anything already there),
    /// listed at once so that it is removed on every path. Its identity is taken from the open
    /// file and written to the marker by `record`, which the caller does outside any timed part.
    pub fn create_file(&self, path: &Path, mode: u32) -> std::io::Result<File> {
        let mut st = self.lock();
        let (d, name) = locate(&mut st, path)?;
        let f = identity::create_at(st.dirs[d].fd.as_fd(), &name, mode)?;
        st.push(Made {
            path: path.to_path_buf(),
            dir: d,
            name,
            id: None,
            grows: false,
        });
        Ok(f)
    }

    /// Takes the identity of `path` from `file` (as `create_file` returned it) and writes it
    /// into the marker, with the largest size the run gives the file (None: it may grow);
    /// `sync` puts it on disk now (else `sync_markers` does, later).
    pub fn record(
        &self,
        path: &Path,
        file: &File,
        size: Option<u64>,
        sync: bool,
    ) -> std::io::Result<()> {
        let id = identity::seen_fd(file.as_fd())?.id;
        self.set_id(path, id, size, sync)
    }

    fn set_id(
        &self,
        path: &Path,
        id: FileId,
        size: Option<u64>,
        sync: bool,
    ) -> std::io::Result<()> {
        let mut st = self.lock();
        let Some(m) = st.find(path) else {
            return Ok(());
        };
        st.made[m].id = Some(id);
        // Once recorded without a size (a job whose writes size it), a later record of a
        // size would make a killed run's reap refuse it for a size it outgrew.
        let size = if st.made[m].grows { None } else { size };
        st.made[m].grows |= size.is_none();
        let (d, name) = (st.made[m].dir, st.made[m].name.clone());
        if let Some(marker) = st.dirs[d].marker.as_mut() {
            marker.record(&name, &id, size)?;
            if sync {
                marker.sync()?;
            }
        }
        Ok(())
    }

    /// Puts every marker's records on disk.
    pub fn sync_markers(&self) -> std::io::Result<()> {
        for d in &self.lock().dirs {
            if let Some(m) = &d.marker {
                m.sync()?;
            }
        }
        Ok(())
    }

    /// Makes the directory `path` (a directory engine's), listed and recorded at once.
    pub fn make_dir(&self, path: &Path, mode: u32) -> std::io::Result<()> {
        self.intend([path])?;
        let seen = {
            let mut st = self.lock();
            let (d, name) = locate(&mut st, path)?;
            let seen = identity::mkdir_at(st.dirs[d].fd.as_fd(), &name, mode)?;
            st.push(Made {
                path: path.to_path_buf(),
                dir: d,
                name,
                id: None,
                grows: false,
            });
            seen
        };
        if seen.id.uid != identity::euid() {
            return Err(replaced(path, "another user's directory is there"));
        }
        self.set_id(path, seen.id, None, true)
    }

    /// Lists a file a worker is about to create itself (fio's filecreate): removed at the end
    /// if it is then a file of this user born during the run.
    pub fn register_pending(&self, path: &Path) -> std::io::Result<()> {
        let mut st = self.lock();
        let (d, name) = locate(&mut st, path)?;
        if st.find(path).is_none() {
            st.push(Made {
                path: path.to_path_buf(),
                dir: d,
                name,
                id: None,
                grows: false,
            });
        }
        Ok(())
    }

    /// Whether iogauge created `path` in this run (and so may overwrite it).
    pub fn contains(&self, path: &Path) -> bool {
        self.lock().find(path).is_some()
    }

    /// Opens a file this run created for I/O, with libc open `flags` (access mode included),
    /// only if its name is still that file: None when the run did not create `path`.
    pub fn reopen(&self, path: &Path, flags: i32) -> Option<std::io::Result<File>> {
        self.opening(path, |dir, name, id| {
            identity::open_verified(dir, name, flags, id).map_err(|e| reopen_error(path, e))
        })
    }

    /// `reopen` in two halves for a caller that times the open: the file opened without
    /// following a symlink (O_NONBLOCK left set: for synchronous reads of regular files only),
    /// and the check that must pass before it is used.
    pub(crate) fn reopen_unchecked(
        &self,
        path: &Path,
        flags: i32,
    ) -> Option<std::io::Result<(File, Check)>> {
        self.opening(path, |dir, name, id| {
            identity::open_nofollow(dir, name, flags)
                .map(|f| (f, Check(*id)))
                .map_err(|e| reopen_error(path, e))
        })
    }

    /// Runs `open` on a created file's directory handle, name and identity (under the lock:
    /// no descriptor is duplicated).
    fn opening<T>(
        &self,
        path: &Path,
        open: impl FnOnce(std::os::fd::BorrowedFd<'_>, &OsStr, &FileId) -> std::io::Result<T>,
    ) -> Option<std::io::Result<T>> {
        let st = self.lock();
        let m = &st.made[st.find(path)?];
        Some(match &m.id {
            Some(id) => open(st.dirs[m.dir].fd.as_fd(), &m.name, id),
            None => Err(replaced(path, "its identity was never recorded")),
        })
    }

    /// fio's `unlink_each_loop`: the created file under descriptor `fd` is unlinked (if its
    /// name is still it) and a new empty file of the same name, opened with the same flags,
    /// takes its place under `fd`; the list and the marker follow.
    pub(crate) fn relink(&self, path: &Path, fd: std::os::fd::RawFd) -> std::io::Result<()> {
        use rustix::fs::{Mode, OFlags};
        let mut st = self.lock();
        let Some(i) = st.find(path) else {
            return Err(replaced(path, "iogauge did not create it"));
        };
        let (d, name) = (st.made[i].dir, st.made[i].name.clone());
        let dfd = st.dirs[d].fd.try_clone()?;
        // SAFETY: the engine keeps `fd` open for the run; borrowed only for these calls.
        let cur = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let was = identity::seen_fd(cur)?.id;
        match identity::remove_verified(dfd.as_fd(), &name, &was) {
            Ok(_) => {}
            Err(identity::Remove::NotOurs(why)) => return Err(replaced(path, &why)),
            Err(identity::Remove::Io(e)) => return Err(e),
        }
        let flags = rustix::fs::fcntl_getfl(cur)?;
        let keep = OFlags::ACCMODE | OFlags::DIRECT | OFlags::SYNC | OFlags::DSYNC | OFlags::APPEND;
        // O_EXCL|O_NOFOLLOW: the name was just freed; anything put there since is not ours.
        let new = rustix::fs::openat(
            dfd.as_fd(),
            &name,
            (flags & keep) | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )?;
        let id = identity::seen_fd(new.as_fd())?.id;
        st.made[i].id = Some(id);
        if let Some(marker) = st.dirs[d].marker.as_mut() {
            marker.record(&name, &id, None)?;
        }
        let f = File::from(new);
        super::tag::tag_created(&f);
        let pos = rustix::fs::seek(cur, rustix::fs::SeekFrom::Current(0))?;
        if pos > 0 {
            rustix::fs::seek(&f, rustix::fs::SeekFrom::Start(pos))?;
        }
        // SAFETY: dup2 replaces the engine's descriptor atomically with the new file's.
        if unsafe { libc::dup2(f.as_raw_fd(), fd) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stop tracking `path`: it stays on disk, kept on purpose (`by`). Its marker says so and
    /// stays, so that later runs call it kept rather than a killed run's leftover, and
    /// `iogauge cleanup --kept` can remove it with the same proof as a leftover.
    pub fn keep(&self, path: &Path, by: KeptBy) {
        let mut st = self.lock();
        if let Some(i) = st.find(path) {
            let (d, name) = (st.made[i].dir, st.made[i].name.clone());
            keep_in(&mut st.dirs[d], [name.as_os_str()], by);
        }
        st.made.retain(|m| m.path != path);
        st.index = (0..st.made.len())
            .map(|i| (st.made[i].path.clone(), i))
            .collect();
    }

    /// Stop tracking `path`: it stays on disk (the user asked to keep it), and nothing records
    /// that it was the run's.
    pub fn forget(&self, path: &Path) {
        let mut st = self.lock();
        st.made.retain(|m| m.path != path);
        st.index = (0..st.made.len())
            .map(|i| (st.made[i].path.clone(), i))
            .collect();
    }

    /// Keep every file (they are the user's now, `by`); the markers stay, saying so.
    pub fn keep_all(&self, by: KeptBy) {
        let mut st = self.lock();
        let made = std::mem::take(&mut st.made);
        st.index.clear();
        for d in 0..st.dirs.len() {
            let names = made
                .iter()
                .filter(|m| m.dir == d)
                .map(|m| m.name.as_os_str());
            keep_in(&mut st.dirs[d], names, by);
        }
        remove_markers(&mut st);
    }

    /// Whether a marker is still on disk (after `remove_all` failed to remove a file).
    pub fn markers_left(&self) -> bool {
        self.lock().dirs.iter().any(|d| d.marker.is_some())
    }

    pub fn list(&self) -> Vec<PathBuf> {
        let st = self.lock();
        let mut seen = std::collections::HashSet::new();
        st.made
            .iter()
            .filter(|m| seen.insert(&m.path))
            .map(|m| m.path.clone())
            .collect()
    }

    /// Remove every listed file that still is what the run made; returns the ones that could
    /// not be removed, or were replaced by something else (left in place), with the reason.
    pub fn remove_all(&self) -> Vec<(PathBuf, std::io::Error)> {
        let mut st = self.lock();
        let made = std::mem::take(&mut st.made);
        st.index.clear();
        let mut failed = Vec::new();
        let mut io_failed = false;
        let mut seen: std::collections::HashSet<&Path> = std::collections::HashSet::new();
        // Newest first: a directory engine's files before their directory.
        for m in made.iter().rev() {
            if !seen.insert(&m.path) {
                continue;
            }
            let dir = st.dirs[m.dir].fd.as_fd();
            let r = match m.id {
                Some(id) => identity::remove_verified(dir, &m.name, &id).map(|_| ()),
                None => remove_pending(dir, &m.name, st.born_after),
            };
            match r {
                Ok(()) => {}
                Err(identity::Remove::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(identity::Remove::Io(e)) => {
                    io_failed = true;
                    failed.push((m.path.clone(), e))
                }
                Err(identity::Remove::NotOurs(why)) => {
                    let moved = m.id.and_then(|id| remove_renamed(dir, &id));
                    let why = match moved {
                        Some(n) => format!(
                            "{why}; iogauge's file had been renamed to {} and was removed there",
                            super::marker::shown(Path::new(&n))
                        ),
                        None => why,
                    };
                    failed.push((m.path.clone(), replaced(&m.path, &why)))
                }
            }
        }
        // A file that could not be removed (a filesystem shut down by an I/O error) keeps the
        // markers, so that `iogauge cleanup` or the next run can remove it later; a replaced
        // one is not the run's to remove, now or later.
        if !io_failed {
            remove_markers(&mut st);
        }
        failed
    }
}

/// The directory slot for `path`'s directory (opened on first use) and the file's name.
fn locate(st: &mut State, path: &Path) -> std::io::Result<(usize, OsString)> {
    let (dir, name) = identity::split(path).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("'{}' does not name a file", path.display()),
        )
    })?;
    if let Some(i) = st.dirs.iter().position(|d| d.path == dir) {
        return Ok((i, name));
    }
    let fd = identity::open_dir(&dir)?;
    st.dirs.push(Dir {
        path: dir,
        fd,
        marker: None,
        kept: false,
        keep_failed: false,
    });
    Ok((st.dirs.len() - 1, name))
}

/// A created file renamed within its directory (by someone who can write it): found by its
/// identity and removed under its new name. Only on that rare path: it reads the directory.
fn remove_renamed(dir: std::os::fd::BorrowedFd<'_>, id: &FileId) -> Option<OsString> {
    let names = identity::names(dir).ok()?;
    let name = names.into_iter().find(|n| {
        identity::seen_at(dir, n)
            .ok()
            .flatten()
            .is_some_and(|s| identity::differs(&s.id, id).is_none())
    })?;
    identity::remove_verified(dir, &name, id).ok()?;
    Some(name)
}

impl State {
    fn push(&mut self, m: Made) {
        self.index.insert(m.path.clone(), self.made.len());
        self.made.push(m);
    }

    fn find(&self, path: &Path) -> Option<usize> {
        self.index.get(path).copied()
    }
}

/// Records in `d`'s marker that `names` are kept. If the marker cannot take the lines, it is
/// removed at the end instead, so that its list never makes a kept file look like a leftover.
fn keep_in<'a>(d: &mut Dir, names: impl IntoIterator<Item = &'a OsStr>, by: KeptBy) {
    let mut names = names.into_iter().peekable();
    if names.peek().is_none() {
        return;
    }
    if let Some(m) = d.marker.as_mut() {
        d.kept = true;
        if m.keep(names, by).and_then(|()| m.sync()).is_err() {
            d.keep_failed = true;
        }
    }
}

/// Removes the run's markers, but for those of directories where it kept files: they stay.
fn remove_markers(st: &mut State) {
    for d in &mut st.dirs {
        if let Some(m) = d.marker.take() {
            if !d.kept || d.keep_failed {
                m.remove(d.fd.as_fd());
            }
        }
    }
}

/// A file a worker created without its identity recorded: removed if it is a plain file or
/// directory of this user, born after the run began (where the filesystem records birth).
fn remove_pending(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &OsStr,
    born_after: (i64, u32),
) -> Result<(), identity::Remove> {
    let Some(now) = identity::seen_at(dir, name).map_err(identity::Remove::Io)? else {
        return Ok(());
    };
    if !now.plain || now.id.uid != identity::euid() {
        return Err(identity::Remove::NotOurs(
            "it is not a file or directory of yours".into(),
        ));
    }
    if now.id.btime.is_some_and(|b| b < born_after) {
        return Err(identity::Remove::NotOurs(
            "it is older than the run, so the run did not make it".into(),
        ));
    }
    identity::unlink(dir, name, now.id.is_dir).map_err(identity::Remove::Io)
}

/// A name no other run uses, for `check`'s files: the process id (unique among running
/// processes) and the clock's nanoseconds (apart across hosts sharing a network filesystem).
pub(crate) fn run_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or(0);
    format!("{}.{nanos:08x}", std::process::id())
}

/// Files in `dir` named as an earlier `check`'s (`iogauge-<profile>.<pid>.<token>[.<n>]`) by a
/// process that no longer runs: killed, or kept without a record. Only pointed out to the user:
/// a name proves nothing, so nothing is removed on it.
pub(crate) fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("iogauge-")) else {
                return false;
            };
            let pid = rest.split('.').nth(1).and_then(|p| p.parse::<u32>().ok());
            pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_files_are_removed_once_and_only_while_they_are_ours() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("cleanup-a.0.0");
        let b = dir.path().join("cleanup-b.0.0");
        let files = CreatedFiles::new();
        files.intend([a.as_path(), b.as_path()]).unwrap();
        let fa = files.create_file(&a, 0o644).unwrap();
        files.record(&a, &fa, Some(0), true).unwrap();
        let fb = files.create_file(&b, 0o644).unwrap();
        files.record(&b, &fb, Some(0), false).unwrap();
        assert!(files.contains(&a));
        assert_eq!(files.list().len(), 2);
        // b is swapped for another file: it is left, and named.
        std::fs::remove_file(&b).unwrap();
        std::fs::write(&b, b"someone else's").unwrap();
        let failed = files.remove_all();
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].0, b);
        assert!(failed[0]
            .1
            .to_string()
            .contains("was replaced while iogauge ran"));
        assert!(!a.exists());
        assert_eq!(std::fs::read(&b).unwrap(), b"someone else's");
        assert!(!files.contains(&a));
    }

    #[test]
    fn leftovers_of_dead_runs_only() {
        let dir = tempfile::tempdir().unwrap();
        // pid 2^22 + 1 is above the kernel's pid_max limit, so never running.
        let dead = dir.path().join("iogauge-etcd.4194305.0000abcd");
        let alive = dir
            .path()
            .join(format!("iogauge-etcd.{}.00000001", std::process::id()));
        let other = dir.path().join("mytest.0.0");
        for p in [&dead, &alive, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        assert_eq!(leftovers(dir.path()), vec![dead]);
        let t = run_token();
        assert!(t.starts_with(&format!("{}.", std::process::id())));
        assert_eq!(t.len(), std::process::id().to_string().len() + 9);
    }
}
