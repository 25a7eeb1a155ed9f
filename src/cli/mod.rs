//! Command-line definition (clap) and dispatch, and the exit codes. Only this module writes to
//! stdout.

pub(crate) mod check;
pub(crate) mod cleanup;
pub(crate) mod compare;
pub(crate) mod fio;
pub(crate) mod history;
pub(crate) mod kube;
pub(crate) mod preflight;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod stdout;

pub(crate) use crate::run::stop::Stop;
use clap::{CommandFactory, Parser, Subcommand};
use std::ffi::OsString;

/// Exit codes shared with troubleshoot's preflight (README.md, "Exit codes").
pub(crate) const EXIT_OK: i32 = 0;
pub(crate) const EXIT_ERROR: i32 = 1;
pub(crate) const EXIT_USAGE: i32 = 2;
pub(crate) const EXIT_FAIL: i32 = 3;
pub(crate) const EXIT_WARN: i32 = 4;

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

/// Parse the command line, run the command and return the process exit code (`EXIT_*`).
pub fn main() -> i32 {
    // Before anything else, so that no file can exist before a signal is handled.
    let stop = match Stop::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iogauge: cannot install signal handlers: {e}");
            return EXIT_ERROR;
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
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    let code = match cli.command {
        Command::Check(a) => check::main(a, &stop),
        Command::Fio { args } => {
            let args: Result<Vec<String>, OsString> =
                args.into_iter().map(OsString::into_string).collect();
            match args {
                Ok(args) => fio::main(args, &stop),
                Err(bad) => {
                    eprintln!(
                        "iogauge fio: argument {bad:?} is not valid UTF-8; fio's grammar takes text (a path can go in a job file's filename= only as text too)"
                    );
                    EXIT_USAGE
                }
            }
        }
        Command::Preflight(a) => preflight::main(a, &stop),
        Command::Kube(a) => kube::main(a, &stop),
        Command::Compare(a) => compare::main(a),
        Command::Report(a) => report::main(a),
        Command::History(a) => history::main(a),
        Command::Cleanup(a) => cleanup::main(a),
        Command::Completions { shell } => {
            // Rendered first: clap_complete panics on a write error, and stdout may be a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "iogauge", &mut script);
            stdout::write(&script);
            EXIT_OK
        }
    };
    stdout::exit_code(code)
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

/// The exit code of a user-named output file that was not written: 2 when the destination was
/// refused, 1 when writing failed.
pub(crate) fn output_exit_code(e: &crate::output_file::OutputError) -> i32 {
    if e.is_bad_input() {
        EXIT_USAGE
    } else {
        EXIT_ERROR
    }
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
