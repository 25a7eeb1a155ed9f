//! What `iogauge fio` prints and writes: fio's output formats, the `--status-interval` dumps,
//! `--output` and the `--report` page.

use crate::cli::report::write_report;
use crate::cli::stdout;
use crate::cli::{with_output, Error, Kind, Outcome};
use crate::input::fio::{FioOutput, OutputFormat};
use crate::output_file::{append, write_file, OutputError};
use crate::report::html::render_fio_html;
use crate::report::json::{render_json_with, Detail};
use crate::report::{normal::render_normal, terse::render_terse, Report};
use std::sync::atomic::{AtomicBool, Ordering};

fn render(how: &FioOutput, report: &Report) -> String {
    let mut out = String::new();
    for f in &how.formats {
        out.push_str(&match f {
            // Under --status-interval the header lines went out with the first dump, as fio's.
            OutputFormat::Normal if PREAMBLE_SHOWN.load(Ordering::Relaxed) => {
                crate::report::normal::render_normal_status(report)
            }
            OutputFormat::Normal => render_normal(report),
            OutputFormat::Json => render_json_with(report, false, detail(how)),
            OutputFormat::JsonPlus => render_json_with(report, true, detail(how)),
            OutputFormat::Terse => render_terse(report),
            OutputFormat::KubeFrames => crate::report::frames::render_fio_frames(
                &render_json_with(report, false, Detail::Lean),
                &render_normal(report),
            ),
        });
    }
    out
}

/// The printed JSON's per-interval data: only with `--json-intervals` (the history's copy and
/// the `--report` page always have it).
fn detail(out: &FioOutput) -> Detail {
    if out.json_intervals {
        Detail::Intervals
    } else {
        Detail::Lean
    }
}

/// The text output's header lines were printed with a `--status-interval` dump.
static PREAMBLE_SHOWN: AtomicBool = AtomicBool::new(false);

/// `--status-interval`: each report so far in every selected format, as fio (a whole JSON
/// document per interval, the text results block without the header), to stdout or appended to
/// `--output` (which is emptied first; the end report is then appended too).
pub(super) fn status_interval(
    out: &FioOutput,
    stop: &std::sync::Arc<AtomicBool>,
) -> Option<crate::run::status::StatusInterval> {
    let every = out.status_interval?;
    if let Some(p) = &out.path {
        // Created empty, as a new file (see output_file); the dumps are then appended.
        if let Err(e) = write_file(p, b"") {
            eprintln!("iogauge fio: --status-interval: {e}");
        }
    }
    let how = out.clone();
    let stop = stop.clone();
    let sink = move |r: &Report| {
        let mut text = String::new();
        for f in &how.formats {
            text.push_str(&match f {
                // fio prints the job header lines once, before the first dump.
                OutputFormat::Normal if !PREAMBLE_SHOWN.swap(true, Ordering::Relaxed) => {
                    render_normal(r)
                }
                OutputFormat::Normal => crate::report::normal::render_normal_status(r),
                OutputFormat::Json => render_json_with(r, false, detail(&how)),
                OutputFormat::JsonPlus => render_json_with(r, true, detail(&how)),
                OutputFormat::Terse => render_terse(r),
                // The pod's result is the end report only.
                OutputFormat::KubeFrames => String::new(),
            });
        }
        let _ = emit(&how, &text);
        // Nobody reads the dumps any more (`| head`): the run stops as on Ctrl-C, cleaning up.
        if stdout::closed() {
            stop.store(true, Ordering::Relaxed);
        }
    };
    Some(crate::run::status::StatusInterval {
        every,
        sink: std::sync::Arc::new(sink),
    })
}

/// Writes `text` to `--output` (appended under `--status-interval`) or stdout.
fn emit(out: &FioOutput, text: &str) -> Result<(), OutputError> {
    match &out.path {
        Some(path) if out.status_interval.is_some() => append(path, text.as_bytes()),
        Some(path) => write_file(path, text.as_bytes()),
        None => {
            stdout::write(text.as_bytes());
            Ok(())
        }
    }
}

/// The results to `--output` or stdout, and the `--report` page; Err (already said) when one
/// was not written. Results that cannot be written to `--output` (a full disk, a link planted
/// there during the run) are printed on stdout instead: a run may have taken hours, and its
/// numbers exist nowhere else. The error (a run error, or bad input for a refused destination)
/// says the file is missing.
pub(super) fn write_output(out: &FioOutput, report: &Report) -> Result<(), Error> {
    let text = render(out, report);
    let written = match emit(out, &text) {
        Ok(()) => Ok(()),
        Err(e) if out.path.is_some() => {
            eprintln!("iogauge fio: the results were not written: {e}; they follow on stdout");
            stdout::write(text.as_bytes());
            Err(Error::said(Kind::of_output(&e)))
        }
        Err(e) => {
            eprintln!("iogauge fio: {e}");
            Err(Error::said(Kind::Run))
        }
    };
    let Some(path) = &out.report else {
        return written;
    };
    // The page is drawn from fio's JSON document, the same one `iogauge report` reads.
    let html = render_fio_html(&crate::report::json::json_value(report, false));
    let page = write_report("iogauge fio", path, &html);
    with_output(written.map(|()| Outcome::Pass), page).map(|_| ())
}
