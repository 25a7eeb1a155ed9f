//! GitLab's small-files test: create N small files, then read them all back, each phase timed and
//! each file's open+write+close (or open+read+close) recorded. Buffered, no fsync, as the shell
//! loop GitLab documents. Every file is registered for cleanup the moment it exists.

use super::clock::now_ns;
use super::RunError;
use crate::report::small_files::SmallFilesReport;
use crate::stats::LatRecorder;
use crate::workload::cleanup::CreatedFiles;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

const PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

fn io_error(op: &'static str, path: &Path, e: std::io::Error) -> RunError {
    RunError::Io {
        failure: super::instance::IoFailure {
            op,
            path: path.to_path_buf(),
            offset: 0,
            len: 0,
            errno: e.raw_os_error().unwrap_or(0),
            message: match e.raw_os_error() {
                Some(n) => crate::report::units::strerror(n),
                None => e.to_string(),
            },
        },
        partial: None,
    }
}

/// Runs the test in `dir` with `count` files of `size` bytes named `<name>.<n>`; removes them
/// unless `keep` (`--keep-files`), which names the kept files there.
pub(crate) fn run_small_files(
    dir: &Path,
    name: &str,
    count: u32,
    size: usize,
    keep: Option<&crate::diag::Diag>,
    stop: &AtomicBool,
) -> Result<SmallFilesReport, RunError> {
    let created = CreatedFiles::new();
    let res = phases(dir, name, count, size, &created, stop);
    if let Some(diag) = keep {
        super::cleanup::keep_all(&created, diag);
    } else {
        created.remove_all();
    }
    if stop.load(Ordering::Relaxed) {
        return Err(RunError::Interrupted);
    }
    res
}

fn phases(
    dir: &Path,
    name: &str,
    count: u32,
    size: usize,
    created: &CreatedFiles,
    stop: &AtomicBool,
) -> Result<SmallFilesReport, RunError> {
    let paths: Vec<_> = (0..count)
        .map(|i| dir.join(format!("{name}.{i}")))
        .collect();
    let data = vec![b'x'; size];
    let mut buf = vec![0u8; size];
    let mut create = LatRecorder::new(count as usize);
    let mut read = LatRecorder::new(count as usize);

    // The list goes to disk before the timed creates, so a SIGKILL leaves it for the next run.
    created
        .intend(paths.iter().map(|p| p.as_path()))
        .map_err(|e| io_error("create", dir, e))?;
    let t0 = now_ns();
    // Recording each file's identity for a later cleanup is not part of the test: its time is
    // left out of the file's latency and of the phase's.
    let mut untimed = 0;
    for p in &paths {
        if stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let s = now_ns();
        // A new file only, relative to the directory's handle: never through what is there.
        let mut f = created
            .create_file(p, 0o644)
            .map_err(|e| io_error("create", p, e))?;
        f.write_all(&data).map_err(|e| io_error("write", p, e))?;
        let e = now_ns();
        created
            .record(p, &f, Some(size as u64), false)
            .map_err(|e| io_error("create", p, e))?;
        let s2 = now_ns();
        drop(f);
        let e2 = now_ns();
        create.record((e - s) + (e2 - s2));
        untimed += s2 - e;
    }
    let t1 = now_ns();
    created
        .sync_markers()
        .map_err(|e| io_error("create", dir, e))?;
    let t1r = now_ns();
    let mut untimed_reads = 0;
    for p in &paths {
        if stop.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let s = now_ns();
        // Opened without following a symlink; that it is still the file made is checked
        // before the read, outside the timed part (one statx the test does not measure).
        let (mut f, check) = created
            .reopen_unchecked(p, libc::O_RDONLY)
            .ok_or_else(|| std::io::Error::other("not created by this run"))
            .and_then(|r| r)
            .map_err(|e| io_error("open", p, e))?;
        let e = now_ns();
        check.verify(p, &f).map_err(|e| io_error("open", p, e))?;
        let s2 = now_ns();
        f.read_exact(&mut buf).map_err(|e| io_error("read", p, e))?;
        drop(f);
        let e2 = now_ns();
        read.record((e - s) + (e2 - s2));
        untimed_reads += s2 - e;
    }
    let t2 = now_ns();
    Ok(SmallFilesReport {
        files: count,
        file_size: size as u64,
        create_ns: (t1 - t0).saturating_sub(untimed),
        read_ns: (t2 - t1r).saturating_sub(untimed_reads),
        create: create.summary(&PERCENTILES, true, false),
        read: read.summary(&PERCENTILES, true, false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_reads_and_removes_every_file() {
        let d = tempfile::tempdir().unwrap();
        let r = run_small_files(
            d.path(),
            "iogauge-t.1.1",
            200,
            5,
            None,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!((r.files, r.create.n, r.read.n), (200, 200, 200));
        assert!(r.create.min <= r.create.max && r.read.min <= r.read.max);
        let p99 = r
            .create
            .percentiles
            .iter()
            .find(|(q, _)| *q == 99.0)
            .unwrap()
            .1;
        assert!(r.create.min <= p99 && p99 <= r.create.max);
        // Each phase takes at least the sum of its per-file times.
        assert!(r.create_ns as f64 >= r.create.mean * 200.0);
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
        let (diag, said) = crate::diag::Diag::collect("iogauge check");
        let kept = run_small_files(
            d.path(),
            "iogauge-t.1.2",
            3,
            5,
            Some(&diag),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(kept.files, 3);
        // The kept files are named through the run's diagnostics, not on stderr directly.
        let said = said.lock().unwrap().join("\n");
        assert!(said.starts_with("iogauge: kept "), "{said}");
        // The files, and the marker that records them as kept (for `iogauge cleanup --kept`).
        let mut names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 4, "{names:?}");
        assert!(names[0].starts_with(".iogauge-run."), "{names:?}");
        let marker = std::fs::read_to_string(d.path().join(&names[0])).unwrap();
        assert!(
            marker.ends_with("kept iogauge-t.1.2.2 keep-files\n"),
            "{marker}"
        );
    }

    #[test]
    fn stop_removes_what_was_created() {
        let d = tempfile::tempdir().unwrap();
        let e = run_small_files(
            d.path(),
            "iogauge-t.1.3",
            50,
            5,
            None,
            &AtomicBool::new(true),
        )
        .unwrap_err();
        assert!(matches!(e, RunError::Interrupted));
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
    }
}
