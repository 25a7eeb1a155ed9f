//! fio's `sync_file_range=FLAGS:N`: after every N-th write, one sync_file_range(2) over the
//! span of the file written since its last sync (fio's `first_write`/`last_write`), made before
//! the job's next I/O, so none follows the job's last write (fio decides it when it picks the
//! next I/O). fsync/fdatasync take precedence at the same write count and also end the span.
//! Absent (None) without the option: the loops then pay one predictable branch per write.

use crate::engine::SyncOp;
use crate::model::JobSpec;

pub(crate) struct SyncRange {
    every: u64,
    flags: u32,
    /// Per file: the start and end of the bytes written since its last sync (start > end:
    /// nothing written).
    spans: Vec<(u64, u64)>,
}

const EMPTY: (u64, u64) = (u64::MAX, 0);

impl SyncRange {
    /// The job's sync_file_range over `files` files; None without it (or with `:0`).
    pub(crate) fn new(job: &JobSpec, files: usize) -> Option<Self> {
        let s = job.io.sync_file_range.filter(|s| s.every > 0)?;
        Some(SyncRange {
            every: s.every as u64,
            flags: s.flags,
            spans: vec![EMPTY; files.max(1)],
        })
    }

    /// A write of `len` bytes at `offset` of `file` was done (or issued, on a queue that
    /// drains before a sync); returns whether the job's `writes`-th write makes a call due.
    #[inline]
    pub(crate) fn wrote(&mut self, file: usize, offset: u64, len: u64, writes: u64) -> bool {
        let s = &mut self.spans[file];
        s.0 = s.0.min(offset);
        s.1 = s.1.max(offset + len);
        writes.is_multiple_of(self.every)
    }

    /// The call for `file` over its span, which starts anew.
    pub(crate) fn take(&mut self, file: usize) -> SyncOp {
        let (start, end) = std::mem::replace(&mut self.spans[file], EMPTY);
        SyncOp::Range {
            offset: if start > end { 0 } else { start },
            len: end.saturating_sub(start),
            flags: self.flags,
        }
    }

    /// An fsync or fdatasync of `file` ended its span too.
    pub(crate) fn synced(&mut self, file: usize) {
        self.spans[file] = EMPTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::io::SyncFileRange;

    #[test]
    fn spans_calls_and_resets() {
        let mut j = JobSpec::default();
        assert!(SyncRange::new(&j, 1).is_none());
        j.io.sync_file_range = Some(SyncFileRange { flags: 2, every: 0 });
        assert!(SyncRange::new(&j, 1).is_none());
        j.io.sync_file_range = Some(SyncFileRange { flags: 2, every: 2 });
        let mut r = SyncRange::new(&j, 2).unwrap();
        assert!(!r.wrote(0, 8192, 4096, 1));
        assert!(r.wrote(0, 0, 4096, 2));
        let want = SyncOp::Range {
            offset: 0,
            len: 12288,
            flags: 2,
        };
        assert_eq!(r.take(0), want);
        // Nothing written since: an empty range (no system call).
        assert!(matches!(r.take(0), SyncOp::Range { len: 0, .. }));
        r.wrote(1, 4096, 4096, 3);
        r.synced(1);
        assert!(matches!(r.take(1), SyncOp::Range { len: 0, .. }));
    }
}
