//! `iogauge check [PROFILE…]`: `app::check` with progress on the terminal, the document printed
//! as text or JSON, and the exit code; the arguments are in `args.rs`.

mod args;
pub(crate) use args::CheckArgs;
pub(super) use args::{parse_duration, parse_scale};
use args::{Format, SMALL_FILES};

use super::history::save;
use super::progress::Terminal;
use super::report::write_report;
use super::stdout;
use super::{with_output, Ended, Error, Kind, Outcome, Stop};
use crate::app::check::{check, list_profiles, CheckRequest, Checked, ProfileSource};
use crate::history::{Invocation, NewRun};
use crate::report::check_csv::render_check_csv;
use crate::report::check_markdown::render_check_markdown;
use crate::report::check_text::render_check_text;
use crate::report::document::CheckVerdict;
use crate::report::frames::render_check_frames;
use crate::report::html::render_check_html;
use crate::verdict::check::{overall, strict_reasons};

pub(crate) fn main(a: CheckArgs, stop: &Stop) -> Ended {
    if a.list {
        stdout::print(&list_profiles());
        return Ok(Outcome::Pass);
    }
    let mut terminal = Terminal::default();
    let at = Invocation::now();
    let req = CheckRequest {
        profiles: a.profiles().into_iter().map(ProfileSource::Named).collect(),
        dir: a.device.clone().unwrap_or_else(|| a.dir.clone()),
        device: a.device.is_some(),
        allow_overwrite: a.allow_overwrite,
        tuning: a.tuning(),
        strict: a.strict,
        sequential: !a.full,
        keep_files: a.keep_files,
        // Said once the device is known to be one.
        notes: if a.profiles.is_empty() && a.device.is_some() {
            vec![format!(
                "iogauge check: {SMALL_FILES} is left out of the default suite on a device (it \
                 creates files, so it needs a filesystem: run it with --dir)"
            )]
        } else {
            Vec::new()
        },
        diag: terminal.diag("iogauge check"),
    };
    let Checked { doc, not_run, .. } = check(&req, stop, &mut terminal)?;
    match a.format {
        Format::Json => stdout::println(&serde_json::to_string_pretty(&doc).unwrap_or_default()),
        Format::JsonLine => stdout::println(&serde_json::to_string(&doc).unwrap_or_default()),
        Format::KubeFrames => stdout::print(&render_check_frames(&doc, a.intervals)),
        Format::Markdown => stdout::print(&render_check_markdown(&doc)),
        Format::Csv => stdout::print(&render_check_csv(&doc)),
        Format::Text => stdout::print(&render_check_text(&doc, super::color())),
    }
    let report = a.report.as_ref().map_or(Ok(()), |path| {
        write_report("iogauge check", path, &render_check_html(&doc))
    });
    // What a kube pod prints: the controller saves the whole run, not each pod.
    let pod = matches!(a.format, Format::JsonLine | Format::KubeFrames);
    if !pod {
        save(&a.history, || NewRun::check(&doc, &at));
    }
    let outcome = overall(&doc.profiles, a.strict);
    match outcome {
        Outcome::Interrupted => {
            let during = doc
                .profiles
                .iter()
                .find(|o| o.verdict == CheckVerdict::Interrupted)
                .map(|o| format!(" during {}", o.profile))
                .unwrap_or_default();
            eprintln!(
                "iogauge check: interrupted by {}{during}; the files it created were removed",
                stop.reason()
            );
        }
        Outcome::Fail => {
            // "0 failed" with exit 3: the warnings that --strict turned into a failure.
            if a.strict && doc.summary.failed == 0 && doc.summary.warned > 0 {
                eprintln!(
                    "iogauge check: --strict counts warnings as failures (exit 3): {}",
                    crate::untrusted::term(&strict_reasons(&doc.profiles).join("; "))
                );
            }
        }
        // Profiles that could not run with this input only: bad input, as under `iogauge fio`
        // (their reasons are on stderr and in the document).
        Outcome::Error if not_run == Some(Kind::BadInput) && a.format != Format::KubeFrames => {
            return with_output(Err(Error::said(Kind::BadInput)), report);
        }
        Outcome::Error | Outcome::Warn | Outcome::Pass => {}
    }
    // A kube pod: the verdict travels in the document, so that a finished Job is Complete,
    // not Failed (which trips KubeJobFailed alerts); only a pod without a document fails. And
    // a pod stopped by SIGTERM (preempted, drained, deleted): a pod that Succeeded would
    // complete the Job, while a Failed one with a DisruptionTarget condition gets a new pod.
    if a.format == Format::KubeFrames {
        let pod_outcome = match outcome {
            Outcome::Interrupted => Outcome::Interrupted,
            _ => Outcome::Pass,
        };
        return with_output(Ok(pod_outcome), report);
    }
    with_output(Ok(outcome), report)
}
