//! The exit codes: how a command's end becomes the process's exit code, the one place that is
//! decided.

use super::{Error, Kind, Outcome};

/// Exit codes shared with troubleshoot's preflight (README.md, "Exit codes").
const EXIT_OK: i32 = 0;
const EXIT_ERROR: i32 = 1;
const EXIT_USAGE: i32 = 2;
const EXIT_FAIL: i32 = 3;
const EXIT_WARN: i32 = 4;

/// How a command ended: the worst outcome of what it ran and judged (`Pass` for commands that
/// judge nothing), or the error that ended it (its line said once by [`super::main`]).
pub(crate) type Ended = Result<Outcome, Error>;

/// The exit code of a command's end: the one place exit codes are decided (the
/// scheme of troubleshoot's preflight; README.md, "Exit codes"), for every command.
///
/// | end | code |
/// |---|---|
/// | `Ok(Pass)`: everything passed, or the command did what was asked | 0 |
/// | `Ok(Interrupted)`: a signal cut the run short (results so far printed) | 1 |
/// | `Ok(Error)`: a profile or collector could not run (the others' results printed) | 1 |
/// | `Ok(Fail)`: a check, analyzer or comparison failed | 3 |
/// | `Ok(Warn)`: the worst outcome was a warning | 4 |
/// | `Err` of [`Kind::BadInput`]: bad input or usage, whatever the command | 2 |
/// | `Err` of [`Kind::Run`]: an error while running (I/O, no space, a lost output) | 1 |
/// | `Err` of [`Kind::Interrupted`] | 1 |
///
/// An outcome outranks a later error only where [`with_output`] says so: a failed output file
/// after results that passed or warned is that file's error.
pub(crate) fn exit_code(end: &Ended) -> i32 {
    match end {
        Ok(Outcome::Pass) => EXIT_OK,
        Ok(Outcome::Warn) => EXIT_WARN,
        Ok(Outcome::Fail) => EXIT_FAIL,
        Ok(Outcome::Error | Outcome::Interrupted) => EXIT_ERROR,
        Err(e) => match e.kind {
            Kind::BadInput => EXIT_USAGE,
            Kind::Run | Kind::Interrupted => EXIT_ERROR,
        },
    }
}

/// A command's end once an output file it was asked for (`--report`, `--output`) was not
/// written: results that passed or warned end with the file's error; a worse outcome stays.
pub(crate) fn with_output(run: Ended, output: Result<(), Error>) -> Ended {
    match (run, output) {
        (Ok(Outcome::Pass | Outcome::Warn), Err(e)) => Err(e),
        (run, _) => run,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_one_mapping() {
        let code = |e: Ended| exit_code(&e);
        assert_eq!(code(Ok(Outcome::Pass)), 0);
        assert_eq!(code(Ok(Outcome::Interrupted)), 1);
        assert_eq!(code(Ok(Outcome::Error)), 1);
        assert_eq!(code(Ok(Outcome::Fail)), 3);
        assert_eq!(code(Ok(Outcome::Warn)), 4);
        assert_eq!(code(Err(Error::bad_input("x"))), 2);
        assert_eq!(code(Err(Error::run("x"))), 1);
        assert_eq!(code(Err(Error::said(Kind::Interrupted))), 1);
        // A lost output file: its error after results that passed or warned, not after worse.
        let lost = || Err(Error::said(Kind::BadInput));
        assert_eq!(code(with_output(Ok(Outcome::Warn), lost())), 2);
        assert_eq!(code(with_output(Ok(Outcome::Fail), lost())), 3);
        assert_eq!(code(with_output(Ok(Outcome::Pass), Ok(()))), 0);
    }
}
