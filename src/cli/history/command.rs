//! `iogauge history [show|rm|prune]`: its arguments, the listing, one run shown again, removal
//! and pruning.

use super::*;
use crate::cli::{stdout, Ended, Error, Kind, Outcome};

/// Lists saved runs; `show`, `rm` and `prune` act on them.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Every check, preflight, fio, kube check and kube fio (one entry per target) run is saved (--no-history or IOGAUGE_NO_HISTORY=1 on
those commands skips it). The database is --history-db FILE, else $IOGAUGE_HISTORY, else
$XDG_DATA_HOME/iogauge/history.db (~/.local/share/iogauge/history.db).")]
pub(crate) struct HistoryArgs {
    #[command(subcommand)]
    command: Option<HistoryCommand>,
    /// Show at most N runs, the newest
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = parse_count)]
    limit: usize,
    /// Only runs of this command
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    kind: Option<RunKind>,
    /// Output format (json: one object per run, without documents)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The history database [default: $IOGAUGE_HISTORY, else
    /// $XDG_DATA_HOME/iogauge/history.db, ~/.local/share/iogauge/history.db]
    #[arg(long, value_name = "FILE", global = true)]
    history_db: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum HistoryCommand {
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
enum Format {
    Text,
    Json,
}

fn parse_kind(v: &str) -> Result<RunKind, String> {
    v.parse()
}

pub(crate) fn main(a: HistoryArgs) -> Ended {
    let path = location(a.history_db.as_deref()).map_err(Error::bad_input)?;
    // Reading never creates a database: a path that does not exist yet holds no runs. Listing
    // and showing open it read-only; removing needs to write.
    let write = matches!(
        a.command,
        Some(HistoryCommand::Rm { .. } | HistoryCommand::Prune { .. })
    );
    let history = if path.exists() {
        let opened = if write {
            History::open(Some(&path))
        } else {
            History::open_read(&path)
        };
        Some(opened.map_err(|e| refused(&e))?)
    } else {
        None
    };
    match a.command {
        None => list(history.as_ref(), &path, &a),
        Some(HistoryCommand::Show { id, format }) => show(history.as_ref(), &path, id, format),
        Some(HistoryCommand::Rm { ids }) => rm(history.as_ref(), &path, &ids),
        Some(HistoryCommand::Prune {
            older_than,
            keep,
            all,
        }) => prune(history.as_ref(), &path, older_than, keep, all),
    }
}

/// A database that cannot be opened: bad input when it is not an iogauge history this
/// iogauge reads, else an error while running.
fn refused(e: &OpenError) -> Error {
    let kind = if e.refused { Kind::BadInput } else { Kind::Run };
    Error::new(kind, e.to_string())
}

fn unknown(id: i64, path: &Path) -> Error {
    Error::bad_input(format!(
        "no run with id {id} in {}; 'iogauge history' lists them",
        path.display()
    ))
}

fn list(h: Option<&History>, path: &Path, a: &HistoryArgs) -> Ended {
    // One more than shown says whether there are more.
    let filter = ListFilter {
        kind: a.kind,
        limit: Some(a.limit.saturating_add(1)),
    };
    let (mut runs, bad) = match h {
        Some(h) => h.list(&filter).map_err(Error::run)?,
        None => (Vec::new(), Vec::new()),
    };
    // A damaged row costs its line only.
    for b in &bad {
        eprintln!(
            "iogauge history: skipped {b}; 'iogauge history rm {}' removes it",
            b.id
        );
    }
    let more = runs.len() > a.limit;
    runs.truncate(a.limit);
    if a.format == Format::Json {
        let rows: Vec<Row> = runs.iter().map(Row::from).collect();
        stdout::println(&serde_json::to_string_pretty(&rows).unwrap_or_default());
    }
    if runs.is_empty() {
        let kind = a.kind.map(|k| format!("{k} ")).unwrap_or_default();
        let path = h.map_or(path, History::path);
        eprintln!("iogauge history: no {kind}runs saved in {}", path.display());
        return Ok(Outcome::Pass);
    }
    if a.format == Format::Text {
        stdout::print(&table(&runs));
    }
    if more {
        eprintln!(
            "iogauge history: the newest {} shown; --limit N for more",
            a.limit
        );
    }
    Ok(Outcome::Pass)
}

fn show(h: Option<&History>, path: &Path, id: i64, format: Format) -> Ended {
    let Some(run) = h
        .map(|h| h.get(id))
        .transpose()
        .map_err(Error::run)?
        .flatten()
    else {
        return Err(unknown(id, path));
    };
    eprintln!(
        "iogauge history: run {} ({}, {} on {}): {}",
        run.id,
        run.kind,
        term(&run.started),
        term(&run.host),
        term(&run.command.join(" "))
    );
    let pretty = || serde_json::to_string_pretty(&run.document).unwrap_or_default();
    if format == Format::Json {
        stdout::println(&pretty());
        return Ok(Outcome::Pass);
    }
    let color = crate::cli::color();
    let doc = run.document.clone();
    let text = match run.kind {
        RunKind::Check | RunKind::Canary => serde_json::from_value::<CheckDocument>(doc)
            .map(|d| render_check_text(&d, color))
            .map_err(|e| e.to_string()),
        RunKind::Kube => serde_json::from_value::<KubeDocument>(doc)
            .map(|d| render_kube_text(&d, color))
            .map_err(|e| e.to_string()),
        RunKind::Preflight => serde_json::from_value::<PreflightDocument>(doc)
            .map(|d| preflight_text(&d))
            .map_err(|e| e.to_string()),
        RunKind::Fio => {
            // fio's text output comes from the run's in-memory report, which is not stored.
            eprintln!(
                "iogauge history: a fio run is stored as its JSON output (--output-format=json); here it is"
            );
            Ok(format!("{}\n", pretty()))
        }
    };
    match text {
        Ok(t) => {
            stdout::print(&t);
            Ok(Outcome::Pass)
        }
        // Refused, not guessed at: `--format json` prints it as stored.
        Err(e) => Err(Error::bad_input(format!(
            "run {id}'s document does not read as this iogauge's {} document ({e}); 'iogauge history show {id} --format json' prints it as stored",
            run.kind
        ))),
    }
}

/// troubleshoot's human output; a run that only collected has no outcomes, so its collectors.
fn preflight_text(d: &PreflightDocument) -> String {
    if !d.outcomes.is_empty() {
        return render_human(&d.name, &d.outcomes);
    }
    let mut out = String::new();
    for c in &d.collectors {
        let status = serde_json::to_value(c.status)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let reason = c
            .reason
            .as_ref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        out.push_str(&format!("{}: {status}{reason}\n", c.name));
    }
    out
}

fn rm(h: Option<&History>, path: &Path, ids: &[i64]) -> Ended {
    // All or nothing: a mistyped id removes none of the others. Only whether each id is
    // there is asked, so that a damaged row can be removed.
    let there = h
        .map(|h| h.existing(ids))
        .transpose()
        .map_err(Error::run)?
        .unwrap_or_default();
    if let Some(&id) = ids.iter().find(|id| !there.contains(id)) {
        return Err(unknown(id, path));
    }
    let Some(h) = h else {
        return Ok(Outcome::Pass);
    };
    let n = h.remove(ids).map_err(Error::run)?;
    eprintln!("iogauge history: removed {n} run{}", plural(n));
    Ok(Outcome::Pass)
}

fn prune(
    h: Option<&History>,
    path: &Path,
    older_than: Option<Duration>,
    keep: Option<usize>,
    all: bool,
) -> Ended {
    if older_than.is_none() && keep.is_none() && !all {
        return Err(Error::whole(
            Kind::BadInput,
            "iogauge history prune: say what to remove: --older-than AGE (e.g. 30d), --keep N, or both (--all: every run)",
        ));
    }
    let done = match h {
        Some(h) => h
            .prune(older_than.unwrap_or(Duration::ZERO), keep, all)
            .map_err(Error::run)?,
        None => Pruned::Removed {
            removed: 0,
            left: 0,
        },
    };
    match done {
        Pruned::Removed { removed, left } => {
            eprintln!(
                "iogauge history: removed {removed} run{}; {left} left in {}",
                plural(removed),
                path.display()
            );
            Ok(Outcome::Pass)
        }
        Pruned::WouldEmpty(n) => Err(Error::whole(
            Kind::BadInput,
            format!(
                "iogauge history prune: this would remove every run ({n}) in {}; nothing was \
                 removed. Add --all to empty the history, or --keep N to keep the newest N",
                path.display()
            ),
        )),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
