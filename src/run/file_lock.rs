//! fio's `lockfile`: jobs that share a file serialize their I/O to it through one lock per
//! file (fio's `f->lock`/`f->rwlock`, found by file name). `exclusive`: one I/O at a time;
//! `readwrite`: reads together, a write alone. fio holds it from an I/O's prep until the
//! engine took it (`td_io_prep` to `td_io_queue`): for a synchronous engine the whole I/O, for a
//! queueing engine only the queueing. Jobs without the option take no lock (as fio's
//! `lock_file`, which looks at the job's own mode).

use crate::model::io::LockMode;
use crate::model::DDIR_READ;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub(crate) enum FileLock {
    Exclusive(Mutex<()>),
    ReadWrite(RwLock<()>),
}

/// A held lock, released when dropped.
pub(crate) enum Held<'a> {
    Exclusive(#[allow(dead_code)] MutexGuard<'a, ()>),
    Read(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    Write(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

impl FileLock {
    /// Takes the lock for an I/O in direction `dir`. A poisoned lock (a panicked job) still
    /// serializes: the unit it guards holds no data.
    #[inline]
    pub(crate) fn lock(&self, dir: usize) -> Held<'_> {
        match self {
            FileLock::Exclusive(m) => Held::Exclusive(m.lock().unwrap_or_else(|e| e.into_inner())),
            FileLock::ReadWrite(l) if dir == DDIR_READ => {
                Held::Read(l.read().unwrap_or_else(|e| e.into_inner()))
            }
            FileLock::ReadWrite(l) => Held::Write(l.write().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

/// The locks of one phase, one per file name and mode (fio shares a lock between jobs by the
/// file's name).
#[derive(Default)]
pub(crate) struct Registry {
    locks: HashMap<(PathBuf, bool), Arc<FileLock>>,
}

impl Registry {
    /// The locks of a job's files, in file order; None when the job does not lock.
    pub(crate) fn for_files(
        &mut self,
        mode: LockMode,
        paths: &[PathBuf],
    ) -> Option<Vec<Arc<FileLock>>> {
        let exclusive = match mode {
            LockMode::None => return None,
            LockMode::Exclusive => true,
            LockMode::ReadWrite => false,
        };
        Some(
            paths
                .iter()
                .map(|p| {
                    let key = (
                        std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()),
                        exclusive,
                    );
                    self.locks
                        .entry(key)
                        .or_insert_with(|| {
                            Arc::new(if exclusive {
                                FileLock::Exclusive(Mutex::new(()))
                            } else {
                                FileLock::ReadWrite(RwLock::new(()))
                            })
                        })
                        .clone()
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DDIR_WRITE;

    #[test]
    fn shared_by_name_and_mode() {
        let mut r = Registry::default();
        let a = vec![PathBuf::from("/nonexistent/x")];
        assert!(r.for_files(LockMode::None, &a).is_none());
        let l1 = r.for_files(LockMode::Exclusive, &a).unwrap();
        let l2 = r.for_files(LockMode::Exclusive, &a).unwrap();
        assert!(Arc::ptr_eq(&l1[0], &l2[0]));
        let rw = r.for_files(LockMode::ReadWrite, &a).unwrap();
        assert!(!Arc::ptr_eq(&l1[0], &rw[0]));
        // Reads share a readwrite lock; an exclusive lock is held alone.
        let (r1, r2) = (rw[0].lock(DDIR_READ), rw[0].lock(DDIR_READ));
        drop((r1, r2));
        let _w = rw[0].lock(DDIR_WRITE);
        let FileLock::ReadWrite(l) = &*rw[0] else {
            panic!("readwrite")
        };
        assert!(l.try_read().is_err(), "a write excludes reads");
        let _e = l1[0].lock(DDIR_READ);
        let FileLock::Exclusive(m) = &*l1[0] else {
            panic!("exclusive")
        };
        assert!(m.try_lock().is_err());
    }
}
