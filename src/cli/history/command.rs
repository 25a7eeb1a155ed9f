//! `iogauge history [show|rm|prune]`: the listing, removal and pruning; the arguments are in
//! `args.rs`, a run shown again in `show.rs`.

use super::args::{Format, HistoryArgs, HistoryCommand};
use super::show::show;
use super::unknown;
use crate::cli::{stdout, Ended, Error, Kind, Outcome};
use crate::history::listing::{table, Row};
use crate::history::{location, History, ListFilter, OpenError, Pruned};
use std::path::Path;
use std::time::Duration;

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

fn list(h: Option<&History>, path: &Path, a: &HistoryArgs) -> Ended {
    // One more than shown says whether there are more.
    let filter = ListFilter {
        kind: a.kind,
        // A canary saves a probe every few minutes: its runs are listed when asked for.
        without: a.kind.is_none().then_some(crate::history::RunKind::Canary),
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
