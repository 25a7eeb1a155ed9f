//! What a command tells its user while it runs: one trait for `check`, `preflight` and `kube`
//! (they had one each, all the same method). `cli/` implements it (lines on stderr, around the
//! progress bar); `app/` and `cluster/` only call it, so that nothing below `cli/` prints.
//! `app::check::Observer` adds the progress bar of a running job.

/// Receives a command's notes: plan lines, engine fallbacks, a profile's or target's error.
pub(crate) trait Observer {
    /// One line for the user, without a trailing newline.
    fn note(&mut self, line: &str);
}
