//! `iogauge compare A B` (or `--a RUN… --b RUN…`): loads the results, compares them, prints the
//! table (text, JSON, Markdown or CSV) and exits 3 when something got worse.

use super::stdout;
use super::{Ended, Error, Outcome};
use crate::compare::{compare, Noise};
use crate::history::History;
use crate::report::compare_text::{
    render_compare_csv, render_compare_markdown, render_compare_text,
};
use crate::report::comparison::ChangeVerdict;
use serde_json::Value;
use std::path::Path;

/// Compares two results, or two groups of repeated results, metric by metric.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
A RUN is a history id ('iogauge history' lists them), a saved JSON document (check or kube
--format json, fio --output-format=json), or '-' for stdin.

Each metric leads with one sentence: how B changed from A, both values, the verdict and the runs
behind it. One run per side: the verdict rests on how each run varied within itself (at least 5
intervals each); run-to-run variance is not assessed. Several runs per side (--a, --b): each run
is one sample, and a verdict needs at least 4 runs per side (3 against 3 can never give one).
Interrupted runs are refused unless --include-interrupted. docs/COMPARE.md has the statistics.

Exit codes: 0 nothing worse and every metric judged, 1 the report page could not be written,
2 bad input (or an interrupted run), 3 a metric is worse beyond noise, 4 nothing worse but some
metric could not be judged (too few runs or intervals).")]
pub(crate) struct CompareArgs {
    /// The baseline and the run to compare with it
    // Any number is taken, so that three or more get iogauge's own error pointing at --a/--b
    // rather than clap's "unexpected argument".
    #[arg(value_name = "RUN", num_args = 0..)]
    runs: Vec<String>,
    /// Baseline runs (repeated runs of the same check)
    #[arg(long = "a", value_name = "RUN", num_args = 1.., conflicts_with = "runs")]
    a: Vec<String>,
    /// Runs to compare with the baseline
    #[arg(long = "b", value_name = "RUN", num_args = 1.., conflicts_with = "runs")]
    b: Vec<String>,
    /// Compare runs that were interrupted too (refused otherwise); they are marked
    #[arg(long)]
    include_interrupted: bool,
    /// Relative changes below these are '~' even when significant
    #[arg(long, value_name = "KIND=PCT,…", default_value = "latency=10%,rate=5%")]
    noise: Noise,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also write the comparison as a self-contained HTML page
    #[arg(long, value_name = "FILE.html", value_parser = super::report::output_file)]
    report: Option<std::path::PathBuf>,
    /// The history database the ids are in [default: $IOGAUGE_HISTORY, else the XDG data dir]
    #[arg(long, value_name = "FILE")]
    history_db: Option<std::path::PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Format {
    Text,
    Json,
    Markdown,
    Csv,
}

/// A run named on the command line, read: a file if there is one by that name, else a history
/// id when it is a number.
fn load(run: &str, db: Option<&Path>) -> Result<(String, Value, Option<String>), String> {
    if let (false, Ok(id)) = (Path::new(run).exists(), run.parse::<i64>()) {
        // Reading never creates a database: a path that does not exist holds no runs.
        let path = crate::history::location(db)?;
        if !path.exists() {
            return Err(format!(
                "no run with id {id}: there is no history at {} yet ('{run}' is no file \
                 either)",
                path.display()
            ));
        }
        let h = History::open_read(&path)?;
        let saved = h.get(id)?.ok_or_else(|| {
            format!(
                "no run with id {id} in {}; 'iogauge history' lists them",
                h.path().display()
            )
        })?;
        return Ok((format!("#{id}"), saved.document, Some(saved.started)));
    }
    let text = super::report::read_document(Path::new(run)).map_err(|e| {
        let what = if run == "-" { "stdin" } else { run };
        format!(
            "'{what}': {e}; expected a saved JSON document (check or kube --format json, \
             fio --output-format=json)"
        )
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "'{run}': not JSON ({e}); save results with --format json (fio: --output-format=json)"
        )
    })?;
    Ok((run.to_string(), v, None))
}

pub(crate) fn main(a: CompareArgs) -> Ended {
    let (sa, sb) = match (a.runs.as_slice(), a.a.is_empty(), a.b.is_empty()) {
        ([x, y], true, true) => (vec![x.clone()], vec![y.clone()]),
        ([], false, false) => (a.a.clone(), a.b.clone()),
        (runs, true, true) if runs.len() > 2 => {
            let (half, all) = (runs.len() / 2, runs.join(" "));
            return Err(Error::bad_input(format!(
                "{} runs given ({all}); compare A B takes two. For groups of \
                 repeated runs name each side: compare --a {} --b {}",
                runs.len(),
                runs[..half].join(" "),
                runs[half..].join(" ")
            )));
        }
        _ => {
            return Err(Error::bad_input(
                "expected two runs (compare A B) or groups (--a RUN… --b RUN…)",
            ));
        }
    };
    if sa.iter().chain(&sb).filter(|r| *r == "-").count() > 1 {
        return Err(Error::bad_input("only one run can come from stdin ('-')"));
    }
    let db = a.history_db.as_deref();
    let read = |runs: &[String]| {
        runs.iter()
            .map(|r| load(r, db))
            .collect::<Result<Vec<_>, _>>()
    };
    let compared = read(&sa)
        .and_then(|ra| Ok((ra, read(&sb)?)))
        .and_then(|(ra, rb)| {
            let docs = |r: &[(String, Value, Option<String>)]| -> Vec<(String, Value)> {
                r.iter().map(|(s, v, _)| (s.clone(), v.clone())).collect()
            };
            let mut doc = compare(&docs(&ra), &docs(&rb), &a.noise, a.include_interrupted)?;
            // A history id's start time is the run's own; it beats what the document says.
            for (refs, runs) in [(&mut doc.a, &ra), (&mut doc.b, &rb)] {
                for (r, (_, _, started)) in refs.iter_mut().zip(runs) {
                    if started.is_some() {
                        r.started.clone_from(started);
                    }
                }
            }
            Ok(doc)
        });
    let doc = compared.map_err(Error::bad_input)?;
    match a.format {
        Format::Text => stdout::print(&render_compare_text(&doc)),
        Format::Json => stdout::println(&serde_json::to_string_pretty(&doc).unwrap_or_default()),
        Format::Markdown => stdout::print(&render_compare_markdown(&doc)),
        Format::Csv => stdout::print(&render_compare_csv(&doc)),
    }
    let report = a.report.as_ref().map_or(Ok(()), |path| {
        super::report::write_report(
            "iogauge compare",
            path,
            &crate::report::html::render_compare_html(&doc),
        )
    });
    // The worst outcome decides, as for check: worse, then "cannot tell" (a warning: nothing
    // was shown worse, but not everything could be judged).
    let has = |v: ChangeVerdict| doc.metrics.iter().any(|m| m.verdict == v);
    let outcome = if has(ChangeVerdict::Worse) {
        Outcome::Fail
    } else if has(ChangeVerdict::Unknown) {
        let n = doc
            .metrics
            .iter()
            .filter(|m| m.verdict == ChangeVerdict::Unknown)
            .count();
        eprintln!(
            "iogauge compare: {n} of {} metric{} could not be judged; {}",
            doc.metrics.len(),
            if doc.metrics.len() == 1 { "" } else { "s" },
            if doc.a.len() > 1 || doc.b.len() > 1 {
                "the output says what a verdict needs"
            } else {
                "the notes say why"
            }
        );
        Outcome::Warn
    } else {
        Outcome::Pass
    };
    super::with_output(Ok(outcome), report)
}
