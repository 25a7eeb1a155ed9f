//! `iogauge compare A B` (or `--a RUN… --b RUN…`): loads the results, compares them, prints the
//! table (text, JSON, Markdown or CSV) and exits 3 when something got worse.

use super::stdout;
use super::{EXIT_FAIL, EXIT_OK, EXIT_USAGE};
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
--format json, fio --output-format=json), or '-' for stdin. One run per side: the interval comes from how each run varied within itself (run-to-run
variance is not assessed). Several runs per side (--a, --b): each run is one sample.

Exit codes: 0 nothing worse, 2 bad input, 3 a metric is worse beyond noise.")]
pub(crate) struct CompareArgs {
    /// The baseline and the run to compare with it
    #[arg(value_name = "RUN", num_args = 0..=2)]
    runs: Vec<String>,
    /// Baseline runs (repeated runs of the same check)
    #[arg(long = "a", value_name = "RUN", num_args = 1.., conflicts_with = "runs")]
    a: Vec<String>,
    /// Runs to compare with the baseline
    #[arg(long = "b", value_name = "RUN", num_args = 1.., conflicts_with = "runs")]
    b: Vec<String>,
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
fn load(run: &str, db: Option<&Path>) -> Result<(String, Value), String> {
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
        return Ok((format!("#{id}"), saved.document));
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
    Ok((run.to_string(), v))
}

pub(crate) fn main(a: CompareArgs) -> i32 {
    let (sa, sb) = match (a.runs.as_slice(), a.a.is_empty(), a.b.is_empty()) {
        ([x, y], true, true) => (vec![x.clone()], vec![y.clone()]),
        ([], false, false) => (a.a.clone(), a.b.clone()),
        _ => {
            eprintln!(
                "iogauge compare: expected two runs (compare A B) or groups (--a RUN… --b RUN…)"
            );
            return EXIT_USAGE;
        }
    };
    if sa.iter().chain(&sb).filter(|r| *r == "-").count() > 1 {
        eprintln!("iogauge compare: only one run can come from stdin ('-')");
        return EXIT_USAGE;
    }
    let db = a.history_db.as_deref();
    let read = |runs: &[String]| {
        runs.iter()
            .map(|r| load(r, db))
            .collect::<Result<Vec<_>, _>>()
    };
    let doc = match read(&sa)
        .and_then(|ra| Ok((ra, read(&sb)?)))
        .and_then(|(ra, rb)| compare(&ra, &rb, &a.noise))
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("iogauge compare: {e}");
            return EXIT_USAGE;
        }
    };
    match a.format {
        Format::Text => stdout::print(&render_compare_text(&doc)),
        Format::Json => stdout::println(&serde_json::to_string_pretty(&doc).unwrap_or_default()),
        Format::Markdown => stdout::print(&render_compare_markdown(&doc)),
        Format::Csv => stdout::print(&render_compare_csv(&doc)),
    }
    let report = a.report.as_ref().map_or(EXIT_OK, |path| {
        super::report::write_report(
            "iogauge compare",
            path,
            &crate::report::html::render_compare_html(&doc),
        )
    });
    let code = if doc
        .metrics
        .iter()
        .any(|m| m.verdict == ChangeVerdict::Worse)
    {
        EXIT_FAIL
    } else {
        EXIT_OK
    };
    super::report::with_output(code, report)
}
