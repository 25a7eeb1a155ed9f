//! Every byte a command prints on stdout goes through here. A reader that went away
//! (`iogauge history show 3 | head`) is not this command's failure: the rest of the output is
//! dropped quietly and the command ends as it would have, having cleaned up. Any other write
//! error (a full disk behind `> file`) is said once on stderr and makes the exit code 1, since
//! the results the user asked for are missing.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

const OPEN: u8 = 0;
/// The reader closed the pipe (EPIPE): later writes are skipped.
const CLOSED: u8 = 1;
/// Another write error, already reported on stderr.
const FAILED: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(OPEN);

/// Writes `text` (nothing more); see the module doc for what a failed write does.
pub(crate) fn print(text: &str) {
    write(text.as_bytes());
}

/// Writes `text` and a newline.
pub(crate) fn println(text: &str) {
    if STATE.load(Ordering::Relaxed) != OPEN {
        return;
    }
    let mut out = std::io::stdout().lock();
    let r = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    settle(r);
}

/// Writes `bytes`, flushed, so that an error shows here and not at exit.
pub(crate) fn write(bytes: &[u8]) {
    if STATE.load(Ordering::Relaxed) != OPEN {
        return;
    }
    let mut out = std::io::stdout().lock();
    let r = out.write_all(bytes).and_then(|()| out.flush());
    settle(r);
}

fn settle(r: std::io::Result<()>) {
    match r {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STATE.store(CLOSED, Ordering::Relaxed);
        }
        Err(e) => {
            if STATE.swap(FAILED, Ordering::Relaxed) != FAILED {
                eprintln!("iogauge: cannot write the output to stdout: {e}");
            }
        }
    }
}

/// Whether the reader of stdout went away: a long `--status-interval` stream stops its run.
pub(crate) fn closed() -> bool {
    STATE.load(Ordering::Relaxed) == CLOSED
}

/// The command's end, a run error (already said) if output it printed was lost to a write
/// error (not to a closed pipe, which the reader chose) after it passed.
pub(crate) fn lost(end: super::Ended) -> super::Ended {
    match end {
        Ok(super::Outcome::Pass) if STATE.load(Ordering::Relaxed) == FAILED => {
            Err(super::Error::said(super::Kind::Run))
        }
        end => end,
    }
}
