//! How a pod's log reaches a reader on a real cluster, replayed for [`Scenario::Logs`] (the
//! container runs as in [`Scenario::Run`]; only what `pods/log` serves differs):
//!
//! - a container runtime or log pipeline that splits long lines: containerd writes a line
//!   longer than 16 KiB as several partial entries, and a pipeline (or a Docker json-file log,
//!   or an older kubelet) serves them as separate lines;
//! - the kubelet's rotation: it rotates a container's log once it passes `containerLogMaxSize`
//!   (10 MiB by default) and `pods/log` serves only the current file, so the head is gone
//!   (here the last rotation falls a given number of bytes before the end);
//! - a log cut short (a pipeline's size cap, `limitBytes`).
//!
//! The log as the container wrote it and as it was served are kept for the test
//! ([`FakeKube::served_logs`]).
//!
//! [`Scenario::Logs`]: super::Scenario::Logs
//! [`Scenario::Run`]: super::Scenario::Run

use super::{lock, FakeKube};
use std::sync::Mutex;

/// What happens to a pod's log on its way to the reader; all sizes in bytes, small in tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogShape {
    /// Lines longer than this come back in pieces of this size, each on a line of its own
    /// (containerd: 16384).
    pub split_at: Option<usize>,
    /// The log was rotated this many bytes before its end, and only the current file is
    /// served, from its first whole line (the kubelet rotates at containerLogMaxSize, 10 MiB).
    pub rotate_at: Option<usize>,
    /// Only the first this many bytes are served.
    pub cut_at: Option<usize>,
}

impl LogShape {
    /// A runtime that splits lines longer than `n` bytes.
    pub fn split(n: usize) -> Self {
        LogShape {
            split_at: Some(n),
            ..LogShape::default()
        }
    }

    /// A kubelet whose last rotation fell `n` bytes before the log's end.
    pub fn rotate(n: usize) -> Self {
        LogShape {
            rotate_at: Some(n),
            ..LogShape::default()
        }
    }

    /// A log served up to its `n`th byte.
    pub fn cut(n: usize) -> Self {
        LogShape {
            cut_at: Some(n),
            ..LogShape::default()
        }
    }

    /// The log as served, from the log as written.
    pub(super) fn serve(&self, written: &[u8]) -> Vec<u8> {
        let mut log = written;
        if let Some(max) = self.rotate_at.filter(|m| *m > 0) {
            log = current_file(log, max);
        }
        if let Some(n) = self.cut_at {
            log = &log[..n.min(log.len())];
        }
        match self.split_at.filter(|n| *n > 0) {
            Some(n) => split_lines(log, n),
            None => log.to_vec(),
        }
    }
}

/// What the current file holds after the kubelet's last rotation, which fell `max` bytes
/// before the log's end (where it falls depends on when the kubelet last checked the size; a
/// fixed distance from the end keeps tests exact): the file starts at the first line after it.
fn current_file(log: &[u8], max: usize) -> &[u8] {
    if log.len() <= max {
        return log;
    }
    let cut = log.len() - max;
    let start = if log[cut - 1] == b'\n' {
        cut
    } else {
        log[cut..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(log.len(), |p| cut + p + 1)
    };
    &log[start..]
}

/// Each line longer than `n` bytes as pieces of `n` bytes (the last shorter), one per line.
fn split_lines(log: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(log.len() + log.len() / n + 1);
    for line in log.split_inclusive(|b| *b == b'\n') {
        let (body, nl) = match line.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (line, false),
        };
        let pieces: Vec<&[u8]> = body.chunks(n).collect();
        for (i, p) in pieces.iter().enumerate() {
            out.extend_from_slice(p);
            if i + 1 < pieces.len() || nl {
                out.push(b'\n');
            }
        }
        if pieces.is_empty() && nl {
            out.push(b'\n');
        }
    }
    out
}

/// A pod's log as written and as served (the last serving of each pod).
#[derive(Clone, Debug)]
pub struct ServedLog {
    pub pod: String,
    pub written: Vec<u8>,
    pub served: Vec<u8>,
}

/// The logs served through a [`LogShape`] so far.
#[derive(Default)]
pub(super) struct Served(Mutex<Vec<ServedLog>>);

impl Served {
    pub(super) fn record(&self, pod: &str, written: &[u8], served: &[u8]) {
        let mut all = lock(&self.0);
        all.retain(|l| l.pod != pod);
        all.push(ServedLog {
            pod: pod.into(),
            written: written.to_vec(),
            served: served.to_vec(),
        });
    }
}

impl FakeKube {
    /// Every pod log served through a [`LogShape`], as written and as served.
    pub fn served_logs(&self) -> Vec<ServedLog> {
        lock(&lock(&self.shared.state).served.0).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let log = b"aaaaaaaaaa\nbb\ncccccc\ndd";
        assert_eq!(
            LogShape::split(4).serve(log),
            b"aaaa\naaaa\naa\nbb\ncccc\ncc\ndd".to_vec()
        );
        // Rotated 8 bytes before the end, inside "cccccc": the file starts with "dd".
        assert_eq!(LogShape::rotate(8).serve(log), b"dd".to_vec());
        assert_eq!(LogShape::rotate(9).serve(log), b"cccccc\ndd".to_vec());
        assert_eq!(LogShape::rotate(100).serve(log), log.to_vec());
        assert_eq!(LogShape::cut(5).serve(log), b"aaaaa".to_vec());
    }
}
