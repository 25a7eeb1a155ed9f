//! A run that an I/O error ended (issue 13): the results so far are still assembled, as fio
//! prints its results after an `io_u error`, and marked as partial. Here: the failure in words
//! (`RunError::Io`'s message), the note that marks the report, and fio's stderr line.

use super::shared::IoFailure;
use crate::report::Report;

/// `write error on 'F' at offset N, length L: Input/output error (errno 5)` (no length for a
/// sync or an operation that moves no data).
pub(crate) fn failure_line(f: &IoFailure) -> String {
    let len = if f.len > 0 {
        format!(", length {}", f.len)
    } else {
        String::new()
    };
    format!(
        "{} error on '{}' at offset {}{len}: {} (errno {})",
        f.op,
        f.path.display(),
        f.offset,
        f.message,
        f.errno
    )
}

/// The note that marks a report as partial: the failure, and that the numbers stop there.
pub(crate) fn note(f: &IoFailure) -> String {
    format!(
        "partial results: an I/O error ended the run before its end: {}; the numbers are what was \
         done until then",
        failure_line(f)
    )
}

/// The report of a run that `f` ended, marked as partial (the failed job's `error` is already
/// set by `assemble`).
pub(crate) fn mark(mut report: Report, f: &IoFailure) -> Report {
    report.notes.push(note(f));
    report
}

/// fio's stderr line for a failed I/O (`io_u error on file F: Input/output error: write
/// offset=N, buflen=L`), without the `fio: ` prefix: the caller puts its own. None for an
/// operation that is no I/O of fio's (open, exec, ...): fio has no such line for them.
pub(crate) fn fio_error_line(f: &IoFailure) -> Option<String> {
    // fio names a sync `sync`, whichever sync it was (`io_ddir_name`).
    let op = match f.op {
        "fsync" | "fdatasync" => "sync",
        o @ ("read" | "write" | "trim" | "sync_file_range") => o,
        _ => return None,
    };
    Some(format!(
        "io_u error on file {}: {}: {op} offset={}, buflen={}",
        f.path.display(),
        f.message,
        f.offset,
        f.len
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn failure(op: &'static str, len: u64, errno: i32) -> IoFailure {
        IoFailure {
            op,
            path: PathBuf::from("mnt/w.0.0"),
            offset: 14487552,
            len,
            errno,
            message: crate::report::units::strerror(errno),
        }
    }

    #[test]
    fn lines_follow_fio_and_name_file_operation_offset_length_errno() {
        // fio 3.33 on the same faults (ext4 on a shrunk loop device, a filled disk).
        assert_eq!(
            fio_error_line(&failure("write", 4096, 5)).unwrap(),
            "io_u error on file mnt/w.0.0: Input/output error: write offset=14487552, buflen=4096"
        );
        assert_eq!(
            fio_error_line(&failure("fsync", 0, 5)).unwrap(),
            "io_u error on file mnt/w.0.0: Input/output error: sync offset=14487552, buflen=0"
        );
        assert_eq!(fio_error_line(&failure("exec", 0, 2)), None);
        assert_eq!(
            failure_line(&failure("write", 4096, 28)),
            "write error on 'mnt/w.0.0' at offset 14487552, length 4096: No space left on device (errno 28)"
        );
        assert_eq!(
            note(&failure("fdatasync", 0, 5)),
            "partial results: an I/O error ended the run before its end: fdatasync error on \
             'mnt/w.0.0' at offset 14487552: Input/output error (errno 5); the numbers are what \
             was done until then"
        );
    }
}
