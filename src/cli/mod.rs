//! Command-line dispatch and exit codes.

/// Exit codes shared with troubleshoot's preflight (DESIGN.md).
pub const EXIT_OK: i32 = 0;
pub const EXIT_ERROR: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_FAIL: i32 = 3;
pub const EXIT_WARN: i32 = 4;

pub fn main() -> i32 {
    EXIT_OK
}
