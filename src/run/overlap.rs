//! fio's `serialize_overlap` on a queueing engine: the byte ranges of the I/Os queued or in
//! flight, by slot, so that an I/O overlapping one of them waits until it completes (fio's
//! `in_flight_overlap`, which answers FIO_Q_BUSY). A synchronous engine has one I/O at a time,
//! so it needs nothing. None without the option: the loop then pays one branch per I/O.

use crate::model::JobSpec;

pub(crate) struct InFlight {
    /// Per slot: (file, start, end) of its I/O while queued or in flight.
    ranges: Vec<Option<(usize, u64, u64)>>,
}

impl InFlight {
    /// For a queue of `depth` slots; None without serialize_overlap or at depth 1.
    pub(crate) fn new(job: &JobSpec, depth: usize) -> Option<Self> {
        (job.io.serialize_overlap && depth > 1).then(|| InFlight {
            ranges: vec![None; depth],
        })
    }

    /// Whether `len` bytes at `offset` of `file` overlap an I/O queued or in flight.
    pub(crate) fn overlaps(&self, file: usize, offset: u64, len: usize) -> bool {
        let end = offset + len as u64;
        self.ranges
            .iter()
            .flatten()
            .any(|&(f, s, e)| f == file && offset < e && s < end)
    }

    /// Slot `slot` now holds that I/O.
    pub(crate) fn add(&mut self, slot: usize, file: usize, offset: u64, len: usize) {
        self.ranges[slot] = Some((file, offset, offset + len as u64));
    }

    /// Slot `slot`'s I/O completed.
    pub(crate) fn remove(&mut self, slot: usize) {
        self.ranges[slot] = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_per_file_and_half_open() {
        let mut j = JobSpec::default();
        assert!(InFlight::new(&j, 8).is_none());
        j.io.serialize_overlap = true;
        assert!(InFlight::new(&j, 1).is_none());
        let mut f = InFlight::new(&j, 4).unwrap();
        f.add(2, 0, 8192, 4096);
        assert!(f.overlaps(0, 8192, 512));
        assert!(f.overlaps(0, 4096, 8192));
        assert!(!f.overlaps(0, 4096, 4096), "touching is not overlapping");
        assert!(!f.overlaps(0, 12288, 4096));
        assert!(!f.overlaps(1, 8192, 4096), "another file");
        f.remove(2);
        assert!(!f.overlaps(0, 8192, 4096));
    }
}
