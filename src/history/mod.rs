//! The run history: every `check`, `preflight`, `fio` and `kube check` run saved to a local
//! SQLite database, so that `iogauge history` can list, show and remove runs (and `compare` can
//! read them back). The stored document is the command's own typed document (report/), so a run
//! is shown later exactly as its command printed it.
//!
//! `path.rs` (where the database lives), `store/` (SQLite: schema, versions, queries),
//! `record.rs` (a run's summary columns from its document), `time.rs` (RFC 3339 UTC stamps).

pub(crate) mod listing;
mod path;
mod record;
mod store;
mod time;

pub(crate) use path::location;
pub(crate) use record::Invocation;
pub(crate) use store::{missing_dir, not_regular, BadRow, OpenError};
pub(crate) use time::{parse_age, rfc3339};

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which command saved a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RunKind {
    Check,
    Preflight,
    Fio,
    Kube,
    /// A canary's probe: its document is a check document.
    Canary,
}

impl RunKind {
    pub(crate) const ALL: [RunKind; 5] = [
        RunKind::Check,
        RunKind::Preflight,
        RunKind::Fio,
        RunKind::Kube,
        RunKind::Canary,
    ];

    /// The stored word: `check`, `preflight`, `fio`, `kube`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RunKind::Check => "check",
            RunKind::Preflight => "preflight",
            RunKind::Fio => "fio",
            RunKind::Kube => "kube",
            RunKind::Canary => "canary",
        }
    }
}

impl std::fmt::Display for RunKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RunKind {
    type Err = String;
    fn from_str(s: &str) -> Result<RunKind, String> {
        RunKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("'{s}': expected check, preflight, fio, kube or canary"))
    }
}

/// A run to save: everything but the id the database gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewRun {
    pub kind: RunKind,
    /// When the command started, RFC 3339 UTC to the second (`2026-04-01T10:20:30Z`).
    pub started: String,
    /// The host measured; for `kube`, the cluster's API server.
    pub host: String,
    /// The directory or device; fio's job files (or its directory); kube's targets joined.
    pub target: String,
    /// check/kube profiles; fio job names; preflight collector names.
    pub profiles: Vec<String>,
    /// `etcd PASS` …; for kube `claim data: etcd PASS`; empty for fio.
    pub verdicts: Vec<String>,
    /// `etcd 0.27 ms`, `sync-iops 4573 IOPS`; for fio `job1 write 1234 IOPS` per job and direction.
    pub key_values: Vec<String>,
    /// The full document: `CheckDocument`, `PreflightDocument`, `KubeDocument`, or fio's JSON.
    pub document: serde_json::Value,
    /// The command line (argv).
    pub command: Vec<String>,
}

/// A saved run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SavedRun {
    pub id: i64,
    pub kind: RunKind,
    pub started: String,
    pub host: String,
    pub target: String,
    pub profiles: Vec<String>,
    pub verdicts: Vec<String>,
    pub key_values: Vec<String>,
    /// `Value::Null` in [`History::list`]'s rows (not read, for speed); [`History::get`] has it.
    pub document: serde_json::Value,
    pub command: Vec<String>,
}

impl SavedRun {
    /// Verdicts with their values, one entry per name: `etcd PASS 0.27 ms, sync-iops FAIL 812
    /// IOPS`; fio's key values as they are.
    pub(crate) fn summary(&self) -> String {
        let mut used = vec![false; self.key_values.len()];
        let mut parts: Vec<String> = Vec::new();
        for v in &self.verdicts {
            // A verdict is "<name> <WORD>" and its value "<name> <value>": pair them by name.
            let name = v.rsplit_once(' ').map_or(v.as_str(), |(n, _)| n);
            let prefix = format!("{name} ");
            match self
                .key_values
                .iter()
                .enumerate()
                .find(|(i, k)| !used[*i] && k.starts_with(&prefix))
            {
                Some((i, k)) => {
                    used[i] = true;
                    parts.push(format!("{v} {}", &k[prefix.len()..]));
                }
                None => parts.push(v.clone()),
            }
        }
        parts.extend(
            self.key_values
                .iter()
                .zip(&used)
                .filter(|(_, u)| !**u)
                .map(|(k, _)| k.clone()),
        );
        parts.join(", ")
    }
}

/// Which runs [`History::list`] returns.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListFilter {
    /// Only runs of this kind.
    pub kind: Option<RunKind>,
    /// No runs of this kind (the canary's probes, which would crowd out every other run).
    pub without: Option<RunKind>,
    /// At most this many (the newest).
    pub limit: Option<usize>,
}

/// An open history database.
pub(crate) struct History {
    conn: rusqlite::Connection,
    path: PathBuf,
}

impl History {
    /// Opens the database for saving and removing: `explicit` (from --history-db), else
    /// $IOGAUGE_HISTORY, else $XDG_DATA_HOME/iogauge/history.db (default
    /// ~/.local/share/iogauge/history.db). A missing file is created atomically (with its
    /// directory only at the default place: a directory the user named must exist); an existing one is used only once it is known to be an iogauge history, and
    /// is not changed otherwise. Errors read `<path>: <reason>`.
    pub(crate) fn open(explicit: Option<&Path>) -> Result<History, OpenError> {
        let path = location(explicit).map_err(|message| OpenError {
            refused: true,
            message,
        })?;
        History::at(path, Some(path::is_default(explicit)))
    }

    /// Opens an existing database read-only, for listing, showing and comparing: nothing is
    /// created or written, and a database the user may only read can be read.
    pub(crate) fn open_read(path: &Path) -> Result<History, OpenError> {
        History::at(path.to_path_buf(), None)
    }

    /// `write`: for writing, and whether missing directories may be made.
    fn at(path: PathBuf, write: Option<bool>) -> Result<History, OpenError> {
        match store::open(&path, write) {
            Ok(conn) => Ok(History { conn, path }),
            Err(e) => Err(OpenError {
                refused: e.refused,
                message: format!("{}: {}", path.display(), e.message),
            }),
        }
    }

    /// Saves a run (one transaction); its id.
    pub(crate) fn save(&self, run: &NewRun) -> Result<i64, String> {
        store::insert(&self.conn, run).map_err(|e| self.err(e))
    }

    /// The run; `None` if there is none with this id; an error naming the run and what is
    /// wrong if its row does not read.
    pub(crate) fn get(&self, id: i64) -> Result<Option<SavedRun>, String> {
        match store::get(&self.conn, id).map_err(|e| self.err(e))? {
            None => Ok(None),
            Some(Ok(run)) => Ok(Some(run)),
            Some(Err(bad)) => {
                Err(self.err(format!("{bad}; 'iogauge history rm {}' removes it", bad.id)))
            }
        }
    }

    /// Newest first (by start time, then id); documents are left out (`Value::Null`) for speed:
    /// [`History::get`] reads one. Rows that do not read are skipped and returned apart.
    pub(crate) fn list(&self, filter: &ListFilter) -> Result<(Vec<SavedRun>, Vec<BadRow>), String> {
        store::list(&self.conn, filter).map_err(|e| self.err(e))
    }

    /// Which of these ids are saved runs (whether or not their rows read).
    pub(crate) fn existing(&self, ids: &[i64]) -> Result<Vec<i64>, String> {
        store::existing(&self.conn, ids).map_err(|e| self.err(e))
    }

    /// Removes these runs; how many there were.
    pub(crate) fn remove(&self, ids: &[i64]) -> Result<usize, String> {
        store::remove(&self.conn, ids).map_err(|e| self.err(e))
    }

    /// Removes runs that started more than `older_than` ago (any age when it is zero), except
    /// the newest `keep_last`. Removing every run needs `every`: without it nothing is removed
    /// and the answer says how many runs there are.
    /// Removes the runs of `kind` that started more than `older_than` ago (the canary's own
    /// pruning: other commands' runs are the user's to prune).
    pub(crate) fn prune_kind(&self, kind: RunKind, older_than: Duration) -> Result<usize, String> {
        let cutoff = rfc3339(
            std::time::SystemTime::now()
                .checked_sub(older_than)
                .unwrap_or(std::time::UNIX_EPOCH),
        );
        store::prune_kind(&self.conn, kind.as_str(), &cutoff).map_err(|e| self.err(e))
    }

    pub(crate) fn prune(
        &self,
        older_than: Duration,
        keep_last: Option<usize>,
        every: bool,
    ) -> Result<Pruned, String> {
        let cutoff = (!older_than.is_zero()).then(|| {
            rfc3339(
                std::time::SystemTime::now()
                    .checked_sub(older_than)
                    .unwrap_or(std::time::UNIX_EPOCH),
            )
        });
        store::prune(&self.conn, cutoff.as_deref(), keep_last, every).map_err(|e| self.err(e))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: String) -> String {
        format!("{}: {e}", self.path.display())
    }
}

/// What `History::prune` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pruned {
    /// Removed this many runs; this many are left.
    Removed { removed: usize, left: usize },
    /// Nothing removed: every run (this many) would have gone, and that was not asked for.
    WouldEmpty(usize),
}

#[cfg(test)]
mod tests;
