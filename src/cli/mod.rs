//! Command-line definition (clap) and dispatch; the exit codes are in `exit.rs`. Only this
//! module writes to stdout.

pub(crate) mod canary;
pub(crate) mod check;
pub(crate) mod cleanup;
pub(crate) mod compare;
mod exit;
pub(crate) mod fio;
pub(crate) mod history;
pub(crate) mod kube;
pub(crate) mod preflight;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod stdout;

pub(crate) use crate::app::error::{Error, Kind};
pub(crate) use crate::run::stop::Stop;
pub(crate) use crate::verdict::check::Overall as Outcome;
use clap::{CommandFactory, Parser, Subcommand};
pub(crate) use exit::{exit_code, with_output, Ended};
use std::ffi::OsString;
use std::io::IsTerminal;

/// Whether to colour what goes to stdout: only on a terminal, and never with NO_COLOR set
/// (no-color.org). The one place this is decided.
pub(crate) fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Measure whether a disk or filesystem is good enough for what runs on it.
#[derive(Parser)]
#[command(name = "iogauge", version, arg_required_else_help = true)]
#[command(
    after_help = "Exit codes: 0 passed, 1 could not run or interrupted, 2 bad input, \
    3 a check failed, 4 the worst outcome was a warning."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Is this disk good enough? Runs profiles (etcd, sync-iops, small-files, gitlab, or your own)
    Check(check::CheckArgs),
    /// Run fio command lines and job files unchanged ('iogauge fio --help' for fio's options;
    /// iogauge's own: --no-history, --history-db FILE)
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Fio {
        /// fio's options and job files, passed through untouched
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<OsString>,
    },
    /// Watch a disk all the time: small probes, verdicts over a window, Prometheus metrics
    Canary(canary::CanaryArgs),
    /// Run troubleshoot.sh filesystemPerformance collectors and analyzers, no fio needed
    Preflight(preflight::PreflightArgs),
    /// Run the checks across a Kubernetes cluster: per storage class, claim and node
    Kube(kube::KubeArgs),
    /// Compare two results (or groups of repeated results): ratios, 95% intervals, verdicts
    Compare(compare::CompareArgs),
    /// Render a saved JSON result (check, kube check, preflight, fio) as a self-contained HTML page
    Report(report::ReportArgs),
    /// List, show and remove the saved runs of check, preflight, fio and kube check
    History(history::HistoryArgs),
    /// Remove the files killed iogauge runs left in directories (after SIGKILL or power loss)
    Cleanup(cleanup::CleanupArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// An unknown option given to `check` is often one of fio's: say where those go.
const CHECK_HINT: &str =
    "note: check takes --dir, --scale, --duration, --size, --format, --strict, \
    --keep-files, --report and --list; fio's options (--rw, --bs, --ioengine, ...) go to 'iogauge fio'";

/// Parse the command line, run the command, say its error (if any) once on stderr, and return
/// the process exit code ([`exit_code`]).
pub fn main() -> i32 {
    // Before anything else, so that no file can exist before a signal is handled.
    let stop = match Stop::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iogauge: cannot install signal handlers: {e}");
            return exit_code(&Err(Error::said(Kind::Run)));
        }
    };
    let args = kubectl_plugin(std::env::args_os().collect());
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            // --help and --version are not errors; clap exits 2 for usage errors.
            let _ = e.print();
            if e.kind() == clap::error::ErrorKind::UnknownArgument
                && args.get(1).is_some_and(|c| c == "check")
            {
                eprintln!("{CHECK_HINT}");
            }
            return exit_code(&if e.use_stderr() {
                Err(Error::said(Kind::BadInput))
            } else {
                Ok(Outcome::Pass)
            });
        }
    };
    let (command, end) = match cli.command {
        Command::Check(a) => ("iogauge check", check::main(a, &stop)),
        Command::Fio { args } => {
            let args: Result<Vec<String>, OsString> =
                args.into_iter().map(OsString::into_string).collect();
            let end = match args {
                Ok(args) => fio::main(args, &stop),
                Err(bad) => Err(Error::bad_input(format!(
                    "argument {bad:?} is not valid UTF-8; fio's grammar takes text (a path can go in a job file's filename= only as text too)"
                ))),
            };
            ("iogauge fio", end)
        }
        Command::Preflight(a) => ("iogauge preflight", preflight::main(a, &stop)),
        Command::Canary(a) => ("iogauge canary", canary::main(a, &stop)),
        Command::Kube(a) => ("iogauge kube", kube::main(a, &stop)),
        Command::Compare(a) => ("iogauge compare", compare::main(a)),
        Command::Report(a) => ("iogauge report", report::main(a)),
        Command::History(a) => ("iogauge history", history::main(a)),
        Command::Cleanup(a) => ("iogauge cleanup", cleanup::main(a)),
        Command::Completions { shell } => {
            // Rendered first: clap_complete panics on a write error, and stdout may be a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "iogauge", &mut script);
            stdout::write(&script);
            ("iogauge completions", Ok(Outcome::Pass))
        }
    };
    if let Some(line) = end.as_ref().err().and_then(|e| e.line(command)) {
        eprintln!("{line}");
    }
    exit_code(&stdout::lost(end))
}

/// Installed as `kubectl-iogauge`, the binary is a kubectl plugin: `kubectl iogauge check …`
/// is `iogauge kube check …`.
fn kubectl_plugin(mut args: Vec<OsString>) -> Vec<OsString> {
    let plugin = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .is_some_and(|n| n == "kubectl-iogauge");
    if plugin {
        args.insert(1, "kube".into());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn as_kubectl_iogauge_it_is_the_kube_command() {
        let os = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            kubectl_plugin(os(&["/usr/local/bin/kubectl-iogauge", "check", "etcd"])),
            os(&["/usr/local/bin/kubectl-iogauge", "kube", "check", "etcd"])
        );
        assert_eq!(
            kubectl_plugin(os(&["iogauge", "check"])),
            os(&["iogauge", "check"])
        );
    }
}
