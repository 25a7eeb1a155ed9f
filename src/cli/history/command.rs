//! `iogauge history [show|rm|prune]`: its arguments, the listing, one run shown again, removal
//! and pruning.

use super::*;
use crate::cli::stdout;

/// Lists saved runs; `show`, `rm` and `prune` act on them.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Every check, preflight, fio and kube check run is saved (--no-history or IOGAUGE_NO_HISTORY=1 on
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
    Prune {
        /// Remove runs that started longer ago than this: 30d, 12h, 2w, 1d12h
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Option<Duration>,
        /// Keep the newest N runs whatever their age
        #[arg(long, value_name = "N", value_parser = parse_count)]
        keep: Option<usize>,
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

pub(crate) fn main(a: HistoryArgs) -> i32 {
    let path = match location(a.history_db.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iogauge history: {e}");
            return EXIT_USAGE;
        }
    };
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
        match opened {
            Ok(h) => Some(h),
            Err(e) => return refused(&e),
        }
    } else {
        None
    };
    let r = match a.command {
        None => list(history.as_ref(), &path, &a),
        Some(HistoryCommand::Show { id, format }) => show(history.as_ref(), &path, id, format),
        Some(HistoryCommand::Rm { ids }) => rm(history.as_ref(), &path, &ids),
        Some(HistoryCommand::Prune { older_than, keep }) => {
            prune(history.as_ref(), older_than, keep)
        }
    };
    r.unwrap_or_else(|e| {
        eprintln!("iogauge history: {e}");
        EXIT_ERROR
    })
}

/// A database that cannot be opened: bad input (2) when it is not an iogauge history this
/// iogauge reads, else an error (1).
fn refused(e: &OpenError) -> i32 {
    eprintln!("iogauge history: {e}");
    if e.refused {
        EXIT_USAGE
    } else {
        EXIT_ERROR
    }
}

fn unknown(id: i64, path: &Path) -> i32 {
    eprintln!(
        "iogauge history: no run with id {id} in {}; 'iogauge history' lists them",
        path.display()
    );
    EXIT_USAGE
}

fn list(h: Option<&History>, path: &Path, a: &HistoryArgs) -> Result<i32, String> {
    // One more than shown says whether there are more.
    let filter = ListFilter {
        kind: a.kind,
        limit: Some(a.limit.saturating_add(1)),
    };
    let (mut runs, bad) = match h {
        Some(h) => h.list(&filter)?,
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
        return Ok(EXIT_OK);
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
    Ok(EXIT_OK)
}

fn show(h: Option<&History>, path: &Path, id: i64, format: Format) -> Result<i32, String> {
    let Some(run) = h.map(|h| h.get(id)).transpose()?.flatten() else {
        return Ok(unknown(id, path));
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
        return Ok(EXIT_OK);
    }
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let doc = run.document.clone();
    let text = match run.kind {
        RunKind::Check => serde_json::from_value::<CheckDocument>(doc)
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
            Ok(EXIT_OK)
        }
        Err(e) => {
            // Refused, not guessed at: `--format json` prints it as stored.
            eprintln!(
                "iogauge history: run {id}'s document does not read as this iogauge's {} document ({e}); 'iogauge history show {id} --format json' prints it as stored",
                run.kind
            );
            Ok(EXIT_USAGE)
        }
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

fn rm(h: Option<&History>, path: &Path, ids: &[i64]) -> Result<i32, String> {
    // All or nothing: a mistyped id removes none of the others. Only whether each id is
    // there is asked, so that a damaged row can be removed.
    let there = h.map(|h| h.existing(ids)).transpose()?.unwrap_or_default();
    if let Some(&id) = ids.iter().find(|id| !there.contains(id)) {
        return Ok(unknown(id, path));
    }
    let Some(h) = h else { return Ok(EXIT_OK) };
    let n = h.remove(ids)?;
    eprintln!("iogauge history: removed {n} run{}", plural(n));
    Ok(EXIT_OK)
}

fn prune(
    h: Option<&History>,
    older_than: Option<Duration>,
    keep: Option<usize>,
) -> Result<i32, String> {
    if older_than.is_none() && keep.is_none() {
        eprintln!("iogauge history prune: say what to remove: --older-than AGE (e.g. 30d), --keep N, or both");
        return Ok(EXIT_USAGE);
    }
    let n = match h {
        Some(h) => h.prune(older_than.unwrap_or(Duration::ZERO), keep)?,
        None => 0,
    };
    eprintln!("iogauge history: removed {n} run{}", plural(n));
    Ok(EXIT_OK)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
