//! `iogauge check [PROFILE…]`: arguments, `app::check` with progress on the terminal, the
//! document printed as text or JSON, and the exit code.

use super::history::{save, HistoryFlags};
use super::progress::Terminal;
use super::report::write_report;
use super::stdout;
use super::{with_output, Ended, Error, Kind, Outcome, Stop};
use crate::app::check::{check, list_profiles, CheckRequest, Checked};
use crate::history::{Invocation, NewRun};
use crate::input::profiles::{Tuning, DEFAULT_SUITE};
use crate::model::units::{parse_flag_duration, parse_flag_size};
use crate::report::check_csv::render_check_csv;
use crate::report::check_markdown::render_check_markdown;
use crate::report::check_text::render_check_text;
use crate::report::document::CheckVerdict;
use crate::report::frames::render_check_frames;
use crate::report::html::render_check_html;
use crate::verdict::check::{overall, strict_reasons};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Runs profiles and says whether the disk under --dir (or the block device --device) is good
/// enough for each.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Profiles: etcd, etcd-large, sync-iops, small-files, gitlab (--list says what each judges), or a
YAML file in the same format (docs/PROFILES.md). fio's own options go to 'iogauge fio'.

Exit codes: 0 all passed, 1 could not run or interrupted, 2 bad input (also a profile that cannot
run with this --dir or --device), 3 a profile failed, 4 the worst was a warning. Interrupted wins;
then a failure, then a profile that could not run.")]
pub(crate) struct CheckArgs {
    /// Built-in profile names or profile files [default: etcd sync-iops small-files gitlab;
    /// with --device: etcd sync-iops gitlab]
    #[arg(value_name = "PROFILE|FILE", value_parser = ProfileArg, hide_possible_values = true)]
    profiles: Vec<OsString>,
    /// Where to write the test files: a directory on the disk you mean
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Run the profiles on this block device instead (an unmounted one; needs --allow-overwrite)
    #[arg(long, value_name = "PATH", conflicts_with = "dir")]
    device: Option<PathBuf>,
    /// With --device: the profiles may write over the device's data
    #[arg(long, requires = "device")]
    allow_overwrite: bool,
    /// Shrink sizes, times and file counts by F (0 < F <= 1) for a quick look; marked as shortened
    #[arg(long, value_name = "F", value_parser = parse_scale, default_value = "1")]
    scale: f64,
    /// Run time-based profiles for D: 10 (seconds), 30s, 2m, 1m30s
    #[arg(long, value_name = "D", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Test file size in fio's grammar: 64m = 64 MiB, 1g = 1 GiB, 512MiB
    #[arg(long, value_name = "S", value_parser = parse_size)]
    size: Option<u64>,
    /// Cap every test file at S (fio's grammar); a capped profile is marked as shortened
    #[arg(long, value_name = "S", value_parser = parse_size)]
    max_size: Option<u64>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// With --format kube-frames: keep the per-interval latency histograms (the other formats
    /// always have them)
    #[arg(long, hide = true)]
    intervals: bool,
    /// Warnings fail too, and a shortened run is at best a warning
    #[arg(long)]
    strict: bool,
    /// Run every profile's full, published recipe instead of stopping once its verdict is
    /// decided at 99.9 % confidence (needed for the rank against published figures)
    #[arg(long)]
    full: bool,
    /// Leave the test files in place (named on stderr; 'iogauge cleanup --kept DIR' removes
    /// them later)
    #[arg(long)]
    keep_files: bool,
    /// Also write the result as a self-contained HTML page (charts, verdicts, the jobs)
    #[arg(long, value_name = "FILE.html", value_parser = super::report::output_file)]
    report: Option<PathBuf>,
    /// List the built-in profiles, one line each
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    history: HistoryFlags,
}

/// A profile argument: any built-in name or file is taken as given (`app::check` resolves it);
/// the built-in names are its possible values, so that `iogauge completions SHELL` completes
/// them.
#[derive(Clone)]
struct ProfileArg;

impl clap::builder::TypedValueParser for ProfileArg {
    type Value = OsString;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<OsString, clap::Error> {
        Ok(value.to_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            crate::input::profiles::names().map(clap::builder::PossibleValue::new),
        ))
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Format {
    /// Also `human`, preflight's (troubleshoot's) name for it.
    #[value(alias = "human")]
    Text,
    Json,
    /// A Markdown table, for tickets and reviews.
    Markdown,
    /// One row per profile and metric.
    Csv,
    /// The JSON document on one line (what `iogauge kube` pods printed before kube-frames).
    #[value(hide = true)]
    JsonLine,
    /// What an `iogauge kube` pod prints: the document as numbered, checksummed lines of at
    /// most 8 KiB (`report::frames`), compact unless --intervals; exit 0 whenever it is
    /// printed, but 1 when a signal stopped it. Hidden: a transport between iogauge's own pod and controller, not a format to
    /// read or keep.
    #[value(hide = true)]
    KubeFrames,
}

pub(super) fn parse_scale(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= 1.0)
        .ok_or_else(|| "expected a number above 0 and at most 1, e.g. 0.1".to_string())
}

pub(super) fn parse_duration(v: &str) -> Result<Duration, String> {
    let d = parse_flag_duration(v)?;
    if d.is_zero() {
        return Err("must be above 0".into());
    }
    Ok(d)
}

fn parse_size(v: &str) -> Result<u64, String> {
    parse_flag_size(v)
}

impl CheckArgs {
    fn tuning(&self) -> Tuning {
        Tuning {
            scale: self.scale,
            duration: self.duration,
            size: self.size,
            max_size: self.max_size,
        }
    }

    /// The profiles named, or the default suite: without small-files on a device, where it can
    /// only be an error (it creates files), as `kube --volume-mode Block` does.
    fn profiles(&self) -> Vec<OsString> {
        if self.profiles.is_empty() {
            DEFAULT_SUITE
                .iter()
                .filter(|p| !(self.device.is_some() && **p == SMALL_FILES))
                .map(OsString::from)
                .collect()
        } else {
            self.profiles.clone()
        }
    }
}

/// The default suite's profile that needs a filesystem.
const SMALL_FILES: &str = "small-files";

pub(crate) fn main(a: CheckArgs, stop: &Stop) -> Ended {
    if a.list {
        stdout::print(&list_profiles());
        return Ok(Outcome::Pass);
    }
    let mut terminal = Terminal::default();
    let at = Invocation::now();
    let req = CheckRequest {
        profiles: a.profiles(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Result<CheckArgs, String> {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            a: CheckArgs,
        }
        T::try_parse_from(std::iter::once("check").chain(v.iter().copied()))
            .map(|t| t.a)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn arguments() {
        let x = a(&[
            "etcd",
            "--dir",
            "/d",
            "--scale=0.5",
            "--duration",
            "10",
            "--size",
            "64m",
            "--format",
            "json",
            "--strict",
        ])
        .unwrap();
        assert_eq!(x.profiles(), vec![OsString::from("etcd")]);
        assert_eq!(x.dir, PathBuf::from("/d"));
        assert_eq!(x.scale, 0.5);
        assert_eq!(x.duration, Some(Duration::from_secs(10)));
        assert_eq!(x.size, Some(64 << 20));
        assert!(x.format == Format::Json && x.strict);
        // fio's grammar: 1m is a MiB and 1G a GiB, never a milli-byte or 10^9 bytes.
        let size = |s: &str| a(&["--size", s]).unwrap().size;
        assert_eq!(size("1m"), Some(1 << 20));
        assert_eq!(size("1G"), Some(1 << 30));
        assert_eq!(size("1GiB"), Some(1 << 30));
        assert_eq!(
            a(&[]).unwrap().profiles(),
            DEFAULT_SUITE.map(OsString::from).to_vec()
        );
        assert!(a(&["--scale", "2"]).unwrap_err().starts_with(
            "error: invalid value '2' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1"
        ));
        assert!(a(&["--duration", "0"])
            .unwrap_err()
            .contains("must be above 0"));
        assert!(a(&["--bs=4k"])
            .unwrap_err()
            .starts_with("error: unexpected argument '--bs' found"));
        assert!(a(&["--list"]).unwrap().list);
        // The pod's format, compact unless asked.
        let pod = a(&["--format", "kube-frames"]).unwrap();
        assert!(pod.format == Format::KubeFrames && !pod.intervals);
        assert!(
            a(&["--format", "kube-frames", "--intervals"])
                .unwrap()
                .intervals
        );
        // preflight's name for the text format is accepted too.
        assert!(a(&["--format", "human"]).unwrap().format == Format::Text);
        // On a device the default suite leaves small-files out; named, it is kept (and is an
        // error there, with its reason).
        assert_eq!(
            a(&["--device", "/dev/sdz", "--allow-overwrite"])
                .unwrap()
                .profiles(),
            ["etcd", "sync-iops", "gitlab"].map(OsString::from).to_vec()
        );
        assert_eq!(
            a(&["small-files", "--device", "/dev/sdz"])
                .unwrap()
                .profiles(),
            [OsString::from("small-files")]
        );
    }
}
