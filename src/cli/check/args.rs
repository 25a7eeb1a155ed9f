//! `iogauge check`'s arguments, their value parsers, and the profiles they name.

use crate::cli::history::HistoryFlags;
use crate::input::profiles::{Tuning, DEFAULT_SUITE};
use crate::model::units::{parse_flag_duration, parse_flag_size};
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
    pub(super) profiles: Vec<OsString>,
    /// Where to write the test files: a directory on the disk you mean
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(super) dir: PathBuf,
    /// Run the profiles on this block device instead (an unmounted one; needs --allow-overwrite)
    #[arg(long, value_name = "PATH", conflicts_with = "dir")]
    pub(super) device: Option<PathBuf>,
    /// With --device: the profiles may write over the device's data
    #[arg(long, requires = "device")]
    pub(super) allow_overwrite: bool,
    /// Shrink sizes, times and file counts by F (0 < F <= 1) for a quick look; marked as shortened
    #[arg(long, value_name = "F", value_parser = parse_scale, default_value = "1")]
    pub(super) scale: f64,
    /// Run time-based profiles for D: 10 (seconds), 30s, 2m, 1m30s
    #[arg(long, value_name = "D", value_parser = parse_duration)]
    pub(super) duration: Option<Duration>,
    /// Test file size in fio's grammar: 64m = 64 MiB, 1g = 1 GiB, 512MiB
    #[arg(long, value_name = "S", value_parser = parse_size)]
    pub(super) size: Option<u64>,
    /// Cap every test file at S (fio's grammar); a capped profile is marked as shortened
    #[arg(long, value_name = "S", value_parser = parse_size)]
    pub(super) max_size: Option<u64>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(super) format: Format,
    /// With --format kube-frames: keep the per-interval latency histograms (the other formats
    /// always have them)
    #[arg(long, hide = true)]
    pub(super) intervals: bool,
    /// Warnings fail too, and a shortened run is at best a warning
    #[arg(long)]
    pub(super) strict: bool,
    /// Run every profile's full, published recipe instead of stopping once its verdict is
    /// decided at 99.9 % confidence (needed for the rank against published figures)
    #[arg(long)]
    pub(super) full: bool,
    /// Leave the test files in place (named on stderr; 'iogauge cleanup --kept DIR' removes
    /// them later)
    #[arg(long)]
    pub(super) keep_files: bool,
    /// Also write the result as a self-contained HTML page (charts, verdicts, the jobs)
    #[arg(long, value_name = "FILE.html", value_parser = crate::cli::report::output_file)]
    pub(super) report: Option<PathBuf>,
    /// List the built-in profiles, one line each
    #[arg(long)]
    pub(super) list: bool,
    #[command(flatten)]
    pub(super) history: HistoryFlags,
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
pub(super) enum Format {
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

pub(crate) fn parse_scale(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= 1.0)
        .ok_or_else(|| "expected a number above 0 and at most 1, e.g. 0.1".to_string())
}

pub(crate) fn parse_duration(v: &str) -> Result<Duration, String> {
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
    pub(super) fn tuning(&self) -> Tuning {
        Tuning {
            scale: self.scale,
            duration: self.duration,
            size: self.size,
            max_size: self.max_size,
        }
    }

    /// The profiles named, or the default suite: without small-files on a device, where it can
    /// only be an error (it creates files), as `kube --volume-mode Block` does.
    pub(super) fn profiles(&self) -> Vec<OsString> {
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
pub(super) const SMALL_FILES: &str = "small-files";

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
