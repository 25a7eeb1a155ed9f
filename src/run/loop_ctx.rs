//! What every step of the job loops is given (`Ctx`) and what it tells its loop (`Step`): a
//! leaf under the loop core, so that the feature modules the core calls (verify_phase) can take
//! the context without importing the core.

use super::instance::{IoFailure, Published, WorkerInput};
use std::sync::atomic::{AtomicBool, Ordering};

/// What every step needs from the run: the instance's input, the counters it publishes, and the
/// run's stop flag.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub input: &'a WorkerInput,
    pub published: &'a Published,
    pub stop: &'a AtomicBool,
}

impl Ctx<'_> {
    /// The run was told to stop (Ctrl-C, exitall, a runtime in another group).
    #[inline]
    pub(super) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// `op` failed with `errno` on file number `file` at `offset`.
    #[cold]
    pub(super) fn failure(&self, op: &'static str, file: usize, offset: u64, no: i32) -> IoFailure {
        IoFailure::new(self.input, op, file, offset, no)
    }
}

/// What a loop does next after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Go on with this iteration.
    Go,
    /// Start the next iteration (`continue`).
    Again,
    /// Leave the loop (`break`).
    End,
}
