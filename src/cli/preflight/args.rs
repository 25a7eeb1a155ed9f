//! `iogauge preflight`'s arguments and their value parsers.

use crate::cli::history::HistoryFlags;
use std::path::PathBuf;

/// Runs troubleshoot.sh filesystemPerformance collectors and analyzers without fio.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Exit codes: 0 all passed, 1 error, 2 spec problem, 3 an outcome failed, 4 the worst was a warning.")]
pub(crate) struct PreflightArgs {
    /// troubleshoot specs (HostPreflight, Preflight, SupportBundle); '-' reads one from stdin
    #[arg(value_name = "SPEC.yaml", required = true)]
    pub(super) specs: Vec<PathBuf>,
    /// Where result files go [default: a new preflight-<unix time> directory]
    #[arg(short, long, value_name = "DIR", value_parser = output_dir)]
    pub(super) output: Option<PathBuf>,
    /// Evaluate the analyzers against results already in DIR (iogauge's or troubleshoot's),
    /// collecting nothing
    #[arg(long, value_name = "DIR", value_parser = results_dir)]
    pub(super) analyze_only: Option<PathBuf>,
    /// Output format (text is another name for human, as `iogauge check` calls its text)
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub(super) format: Format,
    /// Run the collectors whose directory is FROM (or below it) in TO instead, e.g. where a
    /// node's directory is mounted in a container (repeatable; both absolute)
    #[arg(long, value_name = "FROM=TO", value_parser = directory_map)]
    pub(super) directory_map: Vec<(PathBuf, PathBuf)>,
    /// Stop each collector once its analyzers' conditions are decided at 99.9 % confidence
    /// (percentiles and iops; others run whole); its result files then hold the shorter run
    #[arg(long)]
    pub(super) sequential: bool,
    /// Leave the benchmark files in place
    #[arg(long)]
    pub(super) keep_files: bool,
    /// Also write the result as a self-contained HTML page
    #[arg(long, value_name = "FILE.html", value_parser = crate::cli::report::output_file)]
    pub(super) report: Option<PathBuf>,
    /// Accepted for troubleshoot compatibility; iogauge is never interactive
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "true")]
    pub(super) interactive: Option<bool>,
    #[command(flatten)]
    pub(super) history: HistoryFlags,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq)]
pub(super) enum Format {
    #[value(alias = "text")]
    Human,
    Json,
    Yaml,
    /// What an `iogauge kube preflight` pod prints: the preflight document as checksummed
    /// frames (report/frames.rs), read back by the controller from the pod's log.
    #[value(hide = true)]
    KubeFrames,
}

/// `--output`: made by the run (troubleshoot's layout inside), so only a name that can never be a
/// directory is refused, before anything is measured.
fn output_dir(v: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(v);
    if v.is_empty() {
        return Err("expected a directory name, e.g. preflight-results".into());
    }
    if let Some(a) = path.ancestors().find(|a| a.exists()) {
        if !a.is_dir() {
            return Err(format!("'{}' is a file, not a directory", a.display()));
        }
    }
    Ok(path)
}

/// `--directory-map FROM=TO`: two absolute paths.
fn directory_map(v: &str) -> Result<(PathBuf, PathBuf), String> {
    let abs = |s: &str| s.starts_with('/') && !s.split('/').any(|c| c == "..");
    match v.split_once('=') {
        Some((from, to)) if abs(from) && abs(to) => Ok((PathBuf::from(from), PathBuf::from(to))),
        _ => Err(format!(
            "'{v}': expected FROM=TO, two absolute paths without '..', e.g. \
             /var/lib/etcd=/host/0"
        )),
    }
}

/// `--analyze-only`: results that exist.
fn results_dir(v: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(v);
    if !path.is_dir() {
        return Err(format!(
            "no directory '{v}'; give the directory a preflight or troubleshoot run wrote its \
             results to"
        ));
    }
    Ok(path)
}
