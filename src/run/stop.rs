//! The stop request every command honours: SIGINT and SIGTERM set it, and runs check it.

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

impl Stop {
    /// Installs the handlers. Called first thing in `main`, before anything is created.
    pub fn install() -> std::io::Result<Stop> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let stop = Stop::default();
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
