//! The saving that `check`, `preflight`, `fio` and `kube check` do after printing their result
//! (`--no-history`, `--history-db FILE`); `command.rs` is `iogauge history [show|rm|prune]`
//! (its arguments in `args.rs`, `show` in `show.rs`).

mod args;
mod command;
mod show;
pub(crate) use args::HistoryArgs;
pub(crate) use command::main;

use crate::cli::Error;
use crate::history::{missing_dir, not_regular, History, NewRun};
use std::path::{Path, PathBuf};

/// Where a run is saved, or that it is not.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct HistoryFlags {
    /// Do not save this run in the history (IOGAUGE_NO_HISTORY=1 does the same)
    #[arg(long, help_heading = "History")]
    pub no_history: bool,
    /// The history database [default: $IOGAUGE_HISTORY, else
    /// $XDG_DATA_HOME/iogauge/history.db, ~/.local/share/iogauge/history.db]
    #[arg(long, value_name = "FILE", help_heading = "History", value_parser = db_path)]
    pub history_db: Option<PathBuf>,
}

impl HistoryFlags {
    pub(crate) fn disabled(&self) -> bool {
        // Any value but empty or 0 disables: CI and test suites set IOGAUGE_NO_HISTORY=1.
        self.no_history
            || std::env::var_os("IOGAUGE_NO_HISTORY").is_some_and(|v| !v.is_empty() && v != "0")
    }

    /// `iogauge fio` passes its arguments to fio's grammar untouched, so its history flags are
    /// taken out first: `--no-history`, `--history-db FILE`, `--history-db=FILE`.
    pub(crate) fn take_from(args: &mut Vec<String>) -> Result<HistoryFlags, String> {
        let mut f = HistoryFlags::default();
        let mut rest = Vec::with_capacity(args.len());
        let mut it = std::mem::take(args).into_iter();
        while let Some(a) = it.next() {
            if a == "--no-history" {
                f.no_history = true;
            } else if a == "--history-db" {
                let v = it.next().ok_or("--history-db needs a FILE")?;
                f.history_db = Some(db_file(&v)?);
            } else if let Some(v) = a.strip_prefix("--history-db=") {
                f.history_db = Some(db_file(v)?);
            } else {
                rest.push(a);
            }
        }
        *args = rest;
        Ok(f)
    }
}

fn db_file(v: &str) -> Result<PathBuf, String> {
    db_path(v).map_err(|e| format!("--history-db {v}: {e}"))
}

/// A history database to save into, checked before the run: its directory must exist (iogauge
/// makes only the default place's), and it must be a regular file if it exists.
fn db_path(v: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(v);
    if v.is_empty() {
        return Err("expected a file name, e.g. history.db".into());
    }
    if path.is_dir() {
        return Err(format!("'{v}' is a directory; give a file name in it"));
    }
    // SQLite would make `/dev/full-journal` beside a device; a FIFO would hang.
    if let Ok(m) = std::fs::metadata(&path) {
        if !m.is_file() {
            return Err(format!("'{v}' {}", not_regular(&m)));
        }
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(missing_dir(dir));
    }
    Ok(path)
}

/// Saves a finished run (after its result was printed). A history that cannot be written costs
/// one line on stderr and nothing else: the run's output and exit code stand.
pub(crate) fn save(flags: &HistoryFlags, run: impl FnOnce() -> Result<NewRun, String>) {
    if flags.disabled() {
        return;
    }
    let saved = History::open(flags.history_db.as_deref())
        .map_err(String::from)
        .and_then(|h| h.save(&run()?));
    if let Err(e) = saved {
        eprintln!(
            "iogauge: history not saved: {e}; the result above is complete (--no-history to skip saving)"
        );
    }
}

/// An id that is not in the history: bad input, with where the ids are listed.
fn unknown(id: i64, path: &Path) -> Error {
    Error::bad_input(format!(
        "no run with id {id} in {}; 'iogauge history' lists them",
        path.display()
    ))
}
