//! The list of files iogauge created in one run. Everything listed is removed at the end, on
//! error and on SIGINT/SIGTERM (unless the user keeps files), so no test file is left behind.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct CreatedFiles {
    paths: Mutex<Vec<PathBuf>>,
}

impl CreatedFiles {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        // A panic elsewhere must not stop cleanup: take the list even if poisoned.
        self.paths.lock().unwrap_or_else(|p| p.into_inner())
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

    pub fn list(&self) -> Vec<PathBuf> {
        self.lock().clone()
    }

    /// Remove every listed file; returns the ones that could not be removed, with the error.
    pub fn remove_all(&self) -> Vec<(PathBuf, std::io::Error)> {
        let paths = std::mem::take(&mut *self.lock());
        let mut failed = Vec::new();
        for p in paths {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => failed.push((p, e)),
            }
        }
        failed
    }
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
}
