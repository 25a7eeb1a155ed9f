//! The stop request every command honours: SIGINT and SIGTERM set it, and runs check it.
//! Before anything exists (input read, jobs planned) they end the process at once instead.

use std::sync::atomic::{AtomicBool, Ordering};

/// What SIGINT/SIGTERM set: workers finish their current I/O, the files are removed and the
/// results gathered so far are printed. Every signal only sets the flag, the second one too:
/// `timeout` sends its signal to the process and again to its process group, and exiting at
/// once on the second one left test files behind. (SIGKILL still skips cleanup; the next run
/// names such leftovers.)
#[derive(Default)]
pub struct Stop {
    flag: std::sync::Arc<std::sync::atomic::AtomicBool>,
    signal: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// Set while nothing iogauge creates can exist yet (reading input, planning): a signal then
/// ends the process at once, even inside a blocking read of a pipe or FIFO, where no run loop
/// would ever look at the flag. Global because the signal handler cannot reach a `Stop`.
static EXIT_AT_ONCE: AtomicBool = AtomicBool::new(false);

/// What the handler writes before it exits (no formatting in a signal handler).
const INTERRUPTED_SIGINT: &[u8] = b"iogauge: interrupted by SIGINT before anything was created\n";
const INTERRUPTED_SIGTERM: &[u8] = b"iogauge: interrupted by SIGTERM before anything was created\n";

/// A signal came before anything was created: the command ends with exit 1 and this line.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {0} before anything was created")]
pub struct Interrupted(&'static str);

impl Stop {
    /// Installs the handlers. Called first thing in `main`, before anything is created.
    pub fn install() -> std::io::Result<Stop> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Stop::default();
        for (sig, line) in [(SIGINT, INTERRUPTED_SIGINT), (SIGTERM, INTERRUPTED_SIGTERM)] {
            signal_hook::flag::register_usize(sig, stop.signal.clone(), sig as usize)?;
            signal_hook::flag::register(sig, stop.flag.clone())?;
            let exit_at_once = move || {
                if EXIT_AT_ONCE.load(Ordering::SeqCst) {
                    // SAFETY: write(2) and _exit(2) are async-signal-safe; `line` is a static
                    // byte string, valid for its length.
                    unsafe {
                        libc::write(2, line.as_ptr().cast(), line.len());
                        libc::_exit(1);
                    }
                }
            };
            // SAFETY: the action only loads an atomic and calls async-signal-safe functions
            // (it allocates nothing, takes no lock, and touches no other state).
            unsafe { signal_hook::low_level::register(sig, exit_at_once) }?;
        }
        Ok(stop)
    }

    /// Runs `f`, which must create nothing (it reads input and plans), so that SIGINT or
    /// SIGTERM ends the process at once with exit 1 and a line on stderr, even while `f` blocks
    /// reading stdin or a FIFO. A signal that came before is returned instead (`f` is not run),
    /// for the command to end the same way. Outside `f`, signals only set the flag, as the run
    /// loops expect.
    pub fn before_anything_exists<T>(&self, f: impl FnOnce() -> T) -> Result<T, Interrupted> {
        EXIT_AT_ONCE.store(true, Ordering::SeqCst);
        // After the store, so a signal between the two is either seen here or exits.
        if self.is_set() {
            EXIT_AT_ONCE.store(false, Ordering::SeqCst);
            return Err(Interrupted(self.reason()));
        }
        let out = f();
        EXIT_AT_ONCE.store(false, Ordering::SeqCst);
        Ok(out)
    }

    pub fn flag(&self) -> &std::sync::Arc<std::sync::atomic::AtomicBool> {
        &self.flag
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Clears the flag once the stop has been acted on, so that a second signal can be told
    /// from the first: `iogauge kube` deletes what it created after the first, and leaves
    /// (saying what remains) on the second.
    pub fn rearm(&self) {
        self.flag.store(false, std::sync::atomic::Ordering::Relaxed);
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
