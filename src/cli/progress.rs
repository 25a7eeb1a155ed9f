//! What `iogauge check` shows on stderr while it runs: its lines, and a live indicatif bar (the
//! profile, current IOPS, the time per I/O they imply, elapsed time and ETA), drawn only when
//! stderr is a terminal.

use crate::app::check::Observer;
use crate::diag::Diag;
use crate::run::monitor::{ProgressInfo, ProgressSink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};

/// The diagnostics sink of a command that draws no bar of its own: stderr, a line a call.
pub(crate) fn stderr_diag(command: &'static str) -> Diag {
    Diag::new(command, |line: &str| eprintln!("{line}"))
}

/// `iogauge fio`'s diagnostics sink: stderr, a line a call; with fio's progress line on
/// (`--eta=always`, or stderr a terminal), each line clears it first, so that the two never
/// share a line (the monitor draws it again on its next tick).
pub(crate) fn fio_diag(progress: bool) -> Diag {
    if !progress {
        return stderr_diag("iogauge fio");
    }
    Diag::new("iogauge fio", |line: &str| eprintln!("\r\x1b[K{line}"))
}

pub(crate) struct Bar {
    bar: ProgressBar,
}

/// `4573`, `45.7k`, `1.2M`.
fn short(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn duration(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.1} µs", ns / 1e3)
    }
}

/// The text after the bar.
pub(crate) fn message(p: &ProgressInfo) -> String {
    let mut m = format!("{} IOPS", short(p.iops));
    if let Some(ns) = p.op_ns {
        m.push_str(&format!(", ~{} per I/O", duration(ns)));
    }
    m.push_str(&format!(
        ", {}s elapsed, eta {:02}:{:02}",
        p.elapsed_s,
        p.eta_s / 60,
        p.eta_s % 60
    ));
    m
}

impl Bar {
    pub(crate) fn new(target: ProgressDrawTarget, profile: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(1000), target);
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {percent:>3}% {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(profile.to_string());
        Bar { bar }
    }

    pub(crate) fn update(&self, p: &ProgressInfo) {
        self.bar
            .set_position((p.fraction.clamp(0.0, 1.0) * 1000.0) as u64);
        self.bar.set_message(message(p));
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// A sink for [`crate::run::RunOptions`] that updates this bar.
    pub(crate) fn sink(self: &Arc<Self>) -> ProgressSink {
        let me = self.clone();
        Arc::new(move |p: &ProgressInfo| me.update(p))
    }
}

/// Lines on stderr, and an indicatif progress bar when stderr is a terminal.
#[derive(Default)]
pub(crate) struct Terminal {
    /// The bar being drawn, shared with the diagnostics sink (see [`Terminal::diag`]).
    bar: Arc<Mutex<Option<Arc<Bar>>>>,
}

/// `line` on stderr; above the bar while one is drawn, so that the two do not interleave.
fn say(bar: &Mutex<Option<Arc<Bar>>>, line: &str) {
    let bar = bar.lock().unwrap_or_else(PoisonError::into_inner);
    match bar.as_ref() {
        Some(b) => b.bar.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}

impl Terminal {
    /// The diagnostics sink for the runs of `command` (`iogauge check`): lines on stderr,
    /// drawn above the progress bar. Takes a lock: for the rare lines only, never per I/O.
    pub(crate) fn diag(&self, command: &'static str) -> Diag {
        let bar = self.bar.clone();
        Diag::new(command, move |line: &str| say(&bar, line))
    }
}

impl crate::observer::Observer for Terminal {
    fn note(&mut self, line: &str) {
        say(&self.bar, line);
    }
}

impl Observer for Terminal {
    fn progress(&mut self, job: &str) -> Option<ProgressSink> {
        let bar = std::io::stderr()
            .is_terminal()
            .then(|| Arc::new(Bar::new(ProgressDrawTarget::stderr(), job)))?;
        let sink = bar.sink();
        *self.bar.lock().unwrap_or_else(PoisonError::into_inner) = Some(bar);
        Some(sink)
    }

    fn done(&mut self) {
        let bar = self
            .bar
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(b) = bar {
            b.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indicatif::InMemoryTerm;

    fn info(fraction: f64, iops: f64) -> ProgressInfo {
        ProgressInfo {
            running: 1,
            letters: "W".into(),
            fraction,
            elapsed_s: 3,
            eta_s: 65,
            iops,
            op_ns: Some(1e9 / iops),
        }
    }

    #[test]
    fn draws_profile_bar_iops_latency_and_eta() {
        let term = InMemoryTerm::new(4, 120);
        let bar = Arc::new(Bar::new(
            ProgressDrawTarget::term_like(Box::new(term.clone())),
            "etcd",
        ));
        let sink = bar.sink();
        sink(&info(0.25, 4573.0));
        bar.bar.tick();
        let c = term.contents();
        assert!(c.contains("etcd ["), "{c}");
        assert!(
            c.contains(" 25% 4573 IOPS, ~218.7 µs per I/O, 3s elapsed, eta 01:05"),
            "{c}"
        );
        sink(&info(1.0, 45_700.0));
        bar.bar.tick();
        assert!(
            term.contents()
                .contains("100% 45.7k IOPS, ~21.9 µs per I/O"),
            "{}",
            term.contents()
        );
        bar.finish();
        assert_eq!(term.contents().trim(), "");
    }
}
