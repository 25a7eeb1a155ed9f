//! Each command's pipeline from request to typed document, below the command line: resolve the
//! input, run, judge, and gather the result. Nothing here prints; callers observe progress.

pub(crate) mod check;
pub(crate) mod error;
pub(crate) mod preflight;
