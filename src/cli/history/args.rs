//! `iogauge history`'s arguments and subcommands, and their value parsers.

use crate::history::{parse_age, RunKind};
use std::path::PathBuf;
use std::time::Duration;

/// Lists saved runs; `show`, `rm` and `prune` act on them.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Every check, preflight, fio, kube check and kube fio (one entry per target) run is saved (--no-history or IOGAUGE_NO_HISTORY=1 on
those commands skips it). The database is --history-db FILE, else $IOGAUGE_HISTORY, else
$XDG_DATA_HOME/iogauge/history.db (~/.local/share/iogauge/history.db).")]
pub(crate) struct HistoryArgs {
    #[command(subcommand)]
    pub(super) command: Option<HistoryCommand>,
    /// Show at most N runs, the newest
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = parse_count)]
    pub(super) limit: usize,
    /// Only runs of this command (check, preflight, fio, kube, canary); without it, every
    /// command's runs but the canary's probes
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    pub(super) kind: Option<RunKind>,
    /// Output format (json: one object per run, without documents)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(super) format: Format,
    /// The history database [default: $IOGAUGE_HISTORY, else
    /// $XDG_DATA_HOME/iogauge/history.db, ~/.local/share/iogauge/history.db]
    #[arg(long, value_name = "FILE", global = true)]
    pub(super) history_db: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
pub(super) enum HistoryCommand {
    /// Print a saved run as its command printed it (json: the stored document)
    Show {
        /// The run's id ('iogauge history' lists them)
        #[arg(value_parser = parse_id)]
        id: i64,
        /// Output format
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Remove saved runs
    Rm {
        /// The runs' ids
        #[arg(required = true, value_name = "ID", value_parser = parse_id)]
        ids: Vec<i64>,
    },
    /// Remove old runs: those older than --older-than, except the newest --keep
    #[command(after_help = "\
AGE is a number with a unit: 45s, 90m, 12h, 30d, 2w, or combined (1d12h); a bare number is
seconds, as for every other duration. How many runs were removed and how many are left is said
on stderr.

A prune that would remove every run (--older-than 0, --keep 0, or an age that every run is
older than) removes nothing and exits 2 unless --all is given: no typo empties the history.
Exit codes: 0 done, 1 the history could not be written, 2 bad input or an emptying prune
without --all.")]
    Prune {
        /// Remove runs that started longer ago than this: 30d, 12h, 2w, 1d12h (bare number:
        /// seconds)
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Option<Duration>,
        /// Keep the newest N runs whatever their age
        #[arg(long, value_name = "N", value_parser = parse_count)]
        keep: Option<usize>,
        /// Allow removing every run (alone: remove them all)
        #[arg(long)]
        all: bool,
    },
}

/// A run id as 'iogauge history' lists it.
fn parse_id(v: &str) -> Result<i64, String> {
    v.parse::<i64>().ok().filter(|&id| id > 0).ok_or_else(|| {
        format!("'{v}': expected a run id such as 12 ('iogauge history' lists them)")
    })
}

/// A count of runs.
fn parse_count(v: &str) -> Result<usize, String> {
    v.parse::<usize>()
        .map_err(|_| format!("'{v}': expected a whole number of runs, e.g. 20"))
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(super) enum Format {
    Text,
    Json,
}

fn parse_kind(v: &str) -> Result<RunKind, String> {
    v.parse()
}
