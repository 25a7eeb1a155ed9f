//! The one error type every command returns, and its kinds. `cli::exit_code` maps a command's
//! end (this error, or the outcome of a run that finished) to the exit code, in one place.

use crate::output_file::OutputError;
use crate::run::RunError;

/// Why a command ended without its outcome. Each kind has one exit code (see
/// `cli::exit_code`): README.md's "Exit codes", the same scheme as troubleshoot's preflight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Bad input or usage: an unknown option, a malformed value, a missing directory, a
    /// destination iogauge must not write, an engine this host cannot run. Exit 2.
    BadInput,
    /// A failure while running: an I/O error, no space, a deadline, a file that could not be
    /// written. Exit 1.
    Run,
    /// SIGINT or SIGTERM (or a closed stdout under `--status-interval`). Exit 1.
    Interrupted,
}

impl Kind {
    /// The kind of a run that produced no report.
    pub(crate) fn of_run(e: &RunError) -> Kind {
        match e {
            RunError::EngineUnavailable(_) | RunError::BufferMemory(_) | RunError::JobSetup(_) => {
                Kind::BadInput
            }
            RunError::Layout(l) if l.is_bad_input() => Kind::BadInput,
            RunError::Interrupted => Kind::Interrupted,
            _ => Kind::Run,
        }
    }

    /// The kind of a user-named output file that was not written: the destination refused
    /// (bad input) or the writing failed.
    pub(crate) fn of_output(e: &OutputError) -> Kind {
        match e {
            OutputError::Refused(_) => Kind::BadInput,
            OutputError::Failed(_) => Kind::Run,
        }
    }
}

/// What the user is told, once, on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    /// `iogauge COMMAND: <text>`.
    Command(String),
    /// The line as given (it carries its own prefix).
    Whole(String),
    /// Already said on stderr where it happened (before results that follow it).
    Said,
}

/// A command's error: its kind decides the exit code; its line is printed by `cli` once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    pub kind: Kind,
    line: Line,
}

impl Error {
    /// `message` in the command's name (`iogauge fio: message`).
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        Error {
            kind,
            line: Line::Command(message.into()),
        }
    }

    pub(crate) fn bad_input(message: impl Into<String>) -> Self {
        Error::new(Kind::BadInput, message)
    }

    pub(crate) fn run(message: impl Into<String>) -> Self {
        Error::new(Kind::Run, message)
    }

    /// A line that carries its own prefix, printed as given.
    pub(crate) fn whole(kind: Kind, line: impl Into<String>) -> Self {
        Error {
            kind,
            line: Line::Whole(line.into()),
        }
    }

    /// The error was already said on stderr; only its exit code remains.
    pub(crate) fn said(kind: Kind) -> Self {
        Error {
            kind,
            line: Line::Said,
        }
    }

    /// The line for stderr under `command` (`iogauge fio`), if it is not said yet.
    pub(crate) fn line(&self, command: &str) -> Option<String> {
        match &self.line {
            Line::Command(m) => Some(format!("{command}: {m}")),
            Line::Whole(l) => Some(l.clone()),
            Line::Said => None,
        }
    }
}

/// A run that produced no report, in the command's name.
impl From<RunError> for Error {
    fn from(e: RunError) -> Self {
        Error::new(Kind::of_run(&e), e.to_string())
    }
}

/// A signal before anything existed: `iogauge: interrupted by SIGINT before anything was
/// created`, exit 1.
impl From<crate::run::stop::Interrupted> for Error {
    fn from(e: crate::run::stop::Interrupted) -> Self {
        Error::whole(Kind::Interrupted, format!("iogauge: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::layout::LayoutError;

    #[test]
    fn run_errors_have_one_kind_each() {
        let k = |e: RunError| Kind::of_run(&e);
        assert_eq!(k(RunError::JobSetup("x".into())), Kind::BadInput);
        assert_eq!(k(RunError::EngineUnavailable("x".into())), Kind::BadInput);
        assert_eq!(k(RunError::BufferMemory("x".into())), Kind::BadInput);
        assert_eq!(k(RunError::EngineSetup("x".into())), Kind::Run);
        assert_eq!(k(RunError::TimedOut), Kind::Run);
        assert_eq!(k(RunError::Interrupted), Kind::Interrupted);
        let nospace = LayoutError::NoSpace {
            dir: "/d".into(),
            need: 2,
            avail: 1,
        };
        assert_eq!(k(RunError::Layout(nospace)), Kind::Run);
        let ro = LayoutError::ReadOnly {
            path: "/d/f".into(),
        };
        assert_eq!(k(RunError::Layout(ro)), Kind::BadInput);
    }

    #[test]
    fn lines_are_said_once_in_the_commands_name() {
        assert_eq!(
            Error::bad_input("x").line("iogauge fio").as_deref(),
            Some("iogauge fio: x")
        );
        assert_eq!(
            Error::whole(Kind::Run, "iogauge: y")
                .line("iogauge fio")
                .as_deref(),
            Some("iogauge: y")
        );
        assert_eq!(Error::said(Kind::Run).line("iogauge fio"), None);
    }
}
