//! The files around a run: a saved document read back (at most [`MAX_DOCUMENT_BYTES`]), an
//! output file checked before the run, and the `--report` page written after it.

use crate::cli::{Error, Kind};
use crate::output_file::{check_destination, write_file};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most a saved document may hold. iogauge's own largest (fio's JSON of many jobs with their
/// per-interval histograms and series, which are bounded as they are recorded) stay well below
/// it; anything larger is refused before it is read, so `/dev/zero` or a huge file cannot grow
/// memory without bound.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// A saved document's text ('-': stdin), at most [`MAX_DOCUMENT_BYTES`]. Err: why not, in words.
pub(crate) fn read_document(input: &Path) -> Result<String, String> {
    let too_big = || {
        format!(
            "larger than {} MiB, the most a result document may be; is it the right file?",
            MAX_DOCUMENT_BYTES >> 20
        )
    };
    let mut bytes = Vec::new();
    let read = if input == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(MAX_DOCUMENT_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        let f = std::fs::File::open(input).map_err(|e| e.to_string())?;
        // A regular file's size says it at once; devices and pipes are read up to the cap.
        match f.metadata() {
            Ok(m) if m.is_file() && m.len() > MAX_DOCUMENT_BYTES => return Err(too_big()),
            // Read into one buffer of the file's size, not a doubling one (twice the peak).
            Ok(m) if m.is_file() => bytes.reserve_exact(usize::try_from(m.len()).unwrap_or(0) + 1),
            _ => {}
        }
        f.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes)
    };
    read.map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {}); expected a JSON document",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A file a command writes after its run (`--report`, `--history-db`, fio's `--output`), checked
/// before the run so that a typo in its directory does not waste a measurement: its directory
/// must exist, and it must not be a directory, a symbolic link (never written through) or a
/// block device. Used as a clap value parser.
pub(crate) fn output_file(v: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(v);
    if v.is_empty() {
        return Err("expected a file name, e.g. result.html".into());
    }
    if path.is_dir() {
        return Err(format!("'{v}' is a directory; give a file name in it"));
    }
    check_destination(&path).map_err(|e| e.to_string())?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "directory '{}' does not exist; create it or choose another place",
            dir.display()
        ));
    }
    Ok(path)
}

/// Writes a `--report` page after a run (see `output_file`: complete or not at all), saying
/// where, or why not, on stderr at once (the error is said even when a worse outcome decides
/// the exit code). [`crate::cli::with_output`] folds it into the run's end.
pub(crate) fn write_report(cmd: &str, path: &Path, html: &str) -> Result<(), Error> {
    match write_file(path, html.as_bytes()) {
        Ok(()) => {
            eprintln!("{cmd}: HTML report in {}", path.display());
            Ok(())
        }
        Err(e) => {
            eprintln!("{cmd}: the HTML report was not written: {e}");
            Err(Error::said(Kind::of_output(&e)))
        }
    }
}
