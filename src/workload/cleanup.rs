//! The list of files (and the directory engines' directories) iogauge created in one run. Everything listed is removed at the end, on
//! error and on SIGINT/SIGTERM (unless the user keeps files), so no test file is left behind.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct CreatedFiles {
    paths: Mutex<Vec<PathBuf>>,
    /// What the run is about to create, on disk, for after a SIGKILL (`marker.rs`).
    markers: super::marker::RunMarkers,
}

impl CreatedFiles {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        // A panic elsewhere must not stop cleanup: take the list even if poisoned.
        self.paths.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Record, synced to disk in a marker in each file's directory, that these files are about
    /// to be created: a run killed before its cleanup leaves the list for the next one.
    pub fn intend<'a>(&self, paths: impl IntoIterator<Item = &'a Path>) -> std::io::Result<()> {
        self.markers.intend(paths)
    }

    /// Remember a file iogauge just created.
    pub fn register(&self, path: &Path) {
        let mut v = self.lock();
        if !v.iter().any(|p| p == path) {
            v.push(path.to_path_buf());
        }
    }

    /// Whether iogauge created `path` in this run (and so may overwrite it).
    pub fn contains(&self, path: &Path) -> bool {
        self.lock().iter().any(|p| p == path)
    }

    /// Stop tracking `path`: it stays on disk (the user asked to keep it).
    pub fn forget(&self, path: &Path) {
        self.lock().retain(|p| p != path);
    }

    /// Keep every file (they are the user's now) and remove the run's markers.
    pub fn release(&self) {
        self.lock().clear();
        self.markers.remove_all();
    }

    pub fn list(&self) -> Vec<PathBuf> {
        self.lock().clone()
    }

    /// Remove every listed file; returns the ones that could not be removed, with the error.
    pub fn remove_all(&self) -> Vec<(PathBuf, std::io::Error)> {
        let paths = std::mem::take(&mut *self.lock());
        let mut failed = Vec::new();
        for p in paths {
            match super::marker::remove(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => failed.push((p, e)),
            }
        }
        // A file that could not be removed (a filesystem shut down by an I/O error) keeps the
        // markers, so that `iogauge cleanup` or the next run can remove it later.
        if failed.is_empty() {
            self.markers.remove_all();
        }
        failed
    }
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

/// Files in `dir` that an earlier `check` left because it was killed: named
/// `iogauge-<profile>.<pid>.<token>[.<n>]` by a process that no longer runs.
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
    fn registered_files_are_removed_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("cleanup-a.0.0");
        std::fs::write(&a, b"x").unwrap();
        let files = CreatedFiles::new();
        files.register(&a);
        files.register(&a);
        assert!(files.contains(&a));
        assert_eq!(files.list().len(), 1);
        assert!(files.remove_all().is_empty());
        assert!(!a.exists());
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
