//! Command-line dispatch and exit codes. Only this module writes to stdout.

pub mod args;
pub mod check;
pub mod fio;
pub mod preflight;
pub mod progress;

/// What SIGINT/SIGTERM set: workers finish their current I/O, the files are removed and the
/// results gathered so far are printed. Every signal only sets the flag, the second one too:
/// `timeout` sends its signal to the process and again to its process group, and exiting at
/// once on the second one left test files behind. (SIGKILL still skips cleanup; the next run
/// names such leftovers.)
pub struct Stop {
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    signal: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Stop {
    /// Installs the handlers. Called first thing in `main`, before anything is created.
    fn install() -> std::io::Result<Stop> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Stop {
            flag: Default::default(),
            signal: Default::default(),
        };
        for sig in [SIGINT, SIGTERM] {
            signal_hook::flag::register_usize(sig, stop.signal.clone(), sig as usize)?;
            signal_hook::flag::register(sig, stop.flag.clone())?;
        }
        Ok(stop)
    }

    pub fn flag(&self) -> &std::sync::Arc<std::sync::atomic::AtomicBool> {
        &self.flag
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The signal that stopped the run, for the one-line reason ("SIGINT").
    pub fn reason(&self) -> &'static str {
        match self.signal.load(std::sync::atomic::Ordering::Relaxed) as i32 {
            libc::SIGINT => "SIGINT",
            libc::SIGTERM => "SIGTERM",
            _ => "a signal",
        }
    }
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
    // Before anything else, so that no file can exist before a signal is handled.
    let stop = match Stop::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iogauge: cannot install signal handlers: {e}");
            return EXIT_ERROR;
        }
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("check") => check::main(&args[1..], &stop),
        Some("fio") => fio::main(&args[1..], &stop),
        Some("preflight") => preflight::main(&args[1..], &stop),
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
