//! Command-line dispatch and exit codes. Only this module writes to stdout.

pub mod args;
pub mod check;
pub mod fio;
pub mod preflight;
pub mod progress;

/// A flag that SIGINT/SIGTERM set: workers finish their current I/O and the files are removed.
/// A second signal exits at once.
pub(crate) fn stop_on_signals() -> std::io::Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 1, stop.clone())?;
        signal_hook::flag::register(sig, stop.clone())?;
    }
    Ok(stop)
}

/// Exit codes shared with troubleshoot's preflight (DESIGN.md).
pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_FAIL: i32 = 3;
pub const EXIT_WARN: i32 = 4;

const USAGE: &str = "\
iogauge: measure whether a disk or filesystem is good enough for what runs on it.

Usage:
  iogauge check [PROFILE...] [--dir DIR]   is this disk good enough? (etcd, sync-iops, gitlab, ...)
  iogauge fio [FIO OPTIONS] [JOBFILE...]   run fio command lines and job files unchanged
  iogauge preflight [OPTIONS] SPEC.yaml... run troubleshoot filesystemPerformance checks, no fio needed
  iogauge --version
  iogauge --help

Run 'iogauge check --help', 'iogauge fio --help' or 'iogauge preflight --help' for their options.
";

pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("check") => check::main(&args[1..]),
        Some("fio") => fio::main(&args[1..]),
        Some("preflight") => preflight::main(&args[1..]),
        Some("--version") | Some("-V") => {
            println!("iogauge {}", env!("CARGO_PKG_VERSION"));
            EXIT_OK
        }
        Some("--help") | Some("-h") | Some("help") => {
            print!("{USAGE}");
            EXIT_OK
        }
        Some(other) => {
            eprintln!("iogauge: unknown command '{other}'; expected 'check', 'fio' or 'preflight'. Run 'iogauge --help'.");
            EXIT_USAGE
        }
        None => {
            eprint!("{USAGE}");
            EXIT_USAGE
        }
    }
}
