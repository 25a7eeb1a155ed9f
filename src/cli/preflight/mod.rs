//! `iogauge preflight SPEC.yaml…`: `app::preflight`, troubleshoot's outputs, and
//! troubleshoot's exit codes; the arguments are in `args.rs`.

mod args;
use args::Format;
pub(crate) use args::PreflightArgs;

use super::history::save;
use super::report::write_report;
use super::stdout;
use super::{with_output, Ended, Error, Kind, Outcome, Stop};
use crate::app::preflight::{
    check_results, load_specs, map_directories, preflight, Observer, PreflightRequest,
};
use crate::history::{Invocation, NewRun};
use crate::report::document::CheckVerdict;
use crate::report::frames::render_preflight_frames;
use crate::report::html::render_preflight_html;
use crate::report::preflight_text::{grouped, render_human_reached, warning_summary};
use crate::run::context::hostname;

struct Stderr;

impl Observer for Stderr {
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

pub(crate) fn main(a: PreflightArgs, stop: &Stop) -> Ended {
    // A spec may be stdin or a FIFO: a signal while reading ends the process.
    let mut p = stop
        .before_anything_exists(|| load_specs(&a.specs))?
        .map_err(Error::bad_input)?;
    if a.format == Format::KubeFrames {
        let other = [
            ("--output", a.output.is_some()),
            ("--analyze-only", a.analyze_only.is_some()),
            ("--report", a.report.is_some()),
        ];
        if let Some((flag, _)) = other.iter().find(|(_, given)| *given) {
            return Err(Error::bad_input(format!(
                "--format kube-frames (what a kube pod prints) writes no files: leave out {flag}"
            )));
        }
    }
    if !a.directory_map.is_empty() {
        if a.analyze_only.is_some() {
            return Err(Error::bad_input(
                "--directory-map moves where collectors run, and --analyze-only runs none: leave \
                 one of them out"
                    .to_string(),
            ));
        }
        for n in map_directories(&mut p, &a.directory_map).map_err(Error::bad_input)? {
            eprintln!("iogauge preflight: {n}");
        }
    }
    if a.sequential && a.analyze_only.is_some() {
        return Err(Error::bad_input(
            "--sequential decides when collectors stop, and --analyze-only runs none: leave one \
             of them out"
                .to_string(),
        ));
    }
    if let Some(dir) = &a.analyze_only {
        if let Err(e) = check_results(&p, dir) {
            return Err(Error::bad_input(format!(
                "--analyze-only {}: {e}",
                dir.display()
            )));
        }
    } else if let Err(e) = p.check_analyzers_have_collectors() {
        // Before any collector runs: a misspelt name costs no benchmark.
        return Err(Error::bad_input(e));
    }
    for n in &p.notices {
        eprintln!("iogauge preflight: note: {n}");
    }
    if !p.skipped.is_empty() {
        eprintln!(
            "iogauge preflight: skipped (iogauge runs filesystemPerformance only): {}",
            p.skipped.join(", ")
        );
    }
    let at = Invocation::now();
    let req = PreflightRequest {
        output: a.output.clone(),
        analyze_only: a.analyze_only.clone(),
        keep_files: a.keep_files,
        files: a.format != Format::KubeFrames,
        diag: super::progress::stderr_diag("iogauge preflight"),
        sequential: a.sequential,
    };
    let r = preflight(&req, &p, stop, &mut Stderr);
    if a.format == Format::KubeFrames {
        return pod_output(&r.document, stop);
    }
    let report = a.report.as_ref().map_or(Ok(()), |path| {
        write_report(
            "iogauge preflight",
            path,
            &render_preflight_html(&r.document),
        )
    });
    let keep = || {
        save(&a.history, || {
            NewRun::preflight(&r.document, &hostname(), &at)
        })
    };
    if stop.is_set() {
        eprintln!("iogauge preflight: interrupted; removed the files iogauge created");
        // What was collected before the signal (its collectors say they did not finish).
        keep();
        return Ok(Outcome::Interrupted);
    }
    if let Some(dir) = &r.wrote {
        eprintln!("iogauge preflight: results in {}", dir.display());
    }
    // Collectors only (troubleshoot's `collect`): the result files are the output; no verdict.
    if !r.analyzed {
        keep();
        let outcome = if r.errors.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Error
        };
        return with_output(not_run(outcome, r.not_run), report);
    }
    let outcomes = &r.document.outcomes;
    match a.format {
        Format::Human => stdout::print(&render_human_reached(
            &r.document.name,
            outcomes,
            &r.reached,
        )),
        Format::Json => {
            stdout::println(&serde_json::to_string_pretty(&grouped(outcomes)).unwrap_or_default())
        }
        Format::Yaml => {
            stdout::print(&yaml_serde::to_string(&grouped(outcomes)).unwrap_or_default())
        }
        // Printed above, before the host's own outputs.
        Format::KubeFrames => {}
    }
    keep();
    if let Some(line) = warning_summary(outcomes) {
        eprintln!("iogauge preflight: {line}");
    }
    // troubleshoot's order: a failed outcome, then a warning (an analyzer's decision, which
    // may already account for a collector that produced nothing), then a collector error.
    let outcome = match outcomes.iter().map(|o| o.verdict).max() {
        Some(CheckVerdict::Fail) => Outcome::Fail,
        Some(CheckVerdict::Warn) => Outcome::Warn,
        _ if !r.errors.is_empty() => Outcome::Error,
        _ => Outcome::Pass,
    };
    with_output(not_run(outcome, r.not_run), report)
}

/// A kube pod's output: the document as frames and exit 0 whenever it was printed, so that a
/// finished Job is Complete (the verdicts travel in the document, and the controller evaluates
/// the analyzers over every node's results); the controller saves the whole run, not each pod.
fn pod_output(doc: &crate::report::document::PreflightDocument, stop: &Stop) -> Ended {
    stdout::print(&render_preflight_frames(doc));
    if stop.is_set() {
        eprintln!("iogauge preflight: interrupted; removed the files iogauge created");
        return Ok(Outcome::Interrupted);
    }
    Ok(Outcome::Pass)
}

/// Collectors whose jobs were all refused (and no worse outcome): bad input, as the same job
/// is under `iogauge fio` (their reasons are on stderr and in the document).
fn not_run(outcome: Outcome, why: Option<Kind>) -> Ended {
    match (outcome, why) {
        (Outcome::Error, Some(Kind::BadInput)) => Err(Error::said(Kind::BadInput)),
        (outcome, _) => Ok(outcome),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::exit_code;

    #[test]
    fn collectors_whose_jobs_were_refused_are_bad_input() {
        let code = |o, k| exit_code(&not_run(o, k));
        assert_eq!(code(Outcome::Error, Some(Kind::BadInput)), 2);
        assert_eq!(code(Outcome::Error, Some(Kind::Run)), 1);
        // troubleshoot's order: a failed or warned outcome outranks a collector error.
        assert_eq!(code(Outcome::Fail, Some(Kind::BadInput)), 3);
        assert_eq!(code(Outcome::Warn, Some(Kind::BadInput)), 4);
        assert_eq!(code(Outcome::Pass, None), 0);
    }
}
