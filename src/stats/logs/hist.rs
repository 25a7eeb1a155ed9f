//! fio's clat histogram log (`NAME_clat_hist`): its 1856 latency bins (fio's io_u_plat layout)
//! counted per direction, one line of the counts since the previous line every log_hist_msec,
//! merged 2^coarseness bins at a time.

use super::file::LogFile;
use std::io::Write;

/// fio's io_u_plat layout: 64 bins per power of two, 29 groups.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// Number of fio latency histogram bins.
pub(crate) const PLAT_NR: usize = 29 * PLAT_VAL as usize;

/// fio's plat_val_to_idx: the histogram bin of a latency in ns.
#[inline]
pub(crate) fn plat_idx(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= PLAT_BITS {
        return v as usize;
    }
    let err = msb - PLAT_BITS;
    let base = ((err + 1) as u64) << PLAT_BITS;
    let off = (PLAT_VAL - 1) & (v >> err);
    ((base + off) as usize).min(PLAT_NR - 1)
}

/// The clat histogram log: fio's bins, cumulative per direction, and the counts at the last
/// line.
pub(super) struct HistLog {
    pub(super) file: LogFile,
    pub(super) msec: u64,
    pub(super) stride: usize,
    pub(super) cum: Box<[[u64; PLAT_NR]; super::DIRS]>,
    pub(super) prev: Box<[[u64; PLAT_NR]; super::DIRS]>,
    pub(super) last: [u64; super::DIRS],
    pub(super) text: Vec<u8>,
    /// As `Format::time_ms`.
    pub(super) time_ms: u64,
}

impl HistLog {
    #[inline]
    pub(super) fn record(&mut self, ms: u64, dir: usize, clat: u64, bs: u64) {
        self.cum[dir][plat_idx(clat)] += 1;
        if self.msec == 0 {
            return;
        }
        if self.last[dir] == 0 {
            self.last[dir] = ms;
        }
        let this = ms - self.last[dir].min(ms);
        if this >= self.msec {
            self.line(ms, dir, bs);
            self.last[dir] = ms - (this - self.msec);
        }
    }

    #[cold]
    fn line(&mut self, ms: u64, dir: usize, bs: u64) {
        let t = &mut self.text;
        t.clear();
        let _ = write!(t, "{}, {dir}, {bs}, ", ms + self.time_ms);
        let (cum, prev) = (&self.cum[dir], &mut self.prev[dir]);
        let mut j = 0;
        while j < PLAT_NR {
            let s: u64 = (j..j + self.stride).map(|k| cum[k] - prev[k]).sum();
            let last = j + self.stride >= PLAT_NR;
            let _ = write!(t, "{s}{}", if last { "\n" } else { ", " });
            j += self.stride;
        }
        prev.copy_from_slice(cum);
        let text = std::mem::take(&mut self.text);
        self.file.write(&text);
        self.text = text;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plat_index_matches_fio() {
        // Exact below 128 ns, then 64 bins per power of two.
        assert_eq!(plat_idx(0), 0);
        assert_eq!(plat_idx(127), 127);
        assert_eq!(plat_idx(128), 128);
        assert_eq!(plat_idx(129), 128);
        assert_eq!(plat_idx(256), 192);
        assert_eq!(plat_idx(u64::MAX), PLAT_NR - 1);
    }
}
