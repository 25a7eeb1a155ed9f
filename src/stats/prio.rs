//! fio's command priorities (cmdprio_percentage/class/level or cmdprio_bssplit on queueing
//! engines): which I/O gets which priority, and completion (or total) latency per priority for
//! the `prios` entries of the report. Allocated once per instance, only when a job uses them;
//! picking a priority allocates nothing.

use super::LatRecorder;

/// One direction's bssplit entries for one block size (fio's cmdprio_bsprio).
struct BsPrio {
    bs: u64,
    tot_perc: u32,
    /// (percentage, priority index), in the order given for that block size.
    prios: Vec<(u32, u8)>,
}

/// Per I/O: the index of its priority in the direction's list (0 = the job's own).
pub(crate) struct CmdPrio {
    state: u64,
    /// cmdprio_percentage mode: the share per direction (index 1 = cmdprio_class/cmdprio).
    pct: [u32; 2],
    /// cmdprio_bssplit mode: entries per direction, sorted by block size.
    bs: [Vec<BsPrio>; 2],
    /// The distinct ioprio values per direction, the job's first (fio's clat_prio order).
    values: [Vec<u16>; 2],
}

impl CmdPrio {
    /// None unless the job sends some I/Os with a command priority.
    pub(crate) fn new(job: &crate::model::JobSpec, seed: u64) -> Option<CmdPrio> {
        let p = &job.ioprio;
        if !p.cmd_active() {
            return None;
        }
        let default = p.value().unwrap_or(0);
        let mut c = CmdPrio {
            // Its own stream (fio's prio_state), so offsets are those of the job without it.
            state: seed ^ 0x9e37_79b9_7f4a_7c15 | 1,
            pct: [0; 2],
            bs: [Vec::new(), Vec::new()],
            values: [vec![default], vec![default]],
        };
        for d in 0..2 {
            let implicit = p.cmd_value(d);
            if !p.bssplit_active() {
                c.pct[d] = p.cmd_percentage[d];
                c.values[d].push(implicit);
                continue;
            }
            for e in &p.cmd_bssplit[d] {
                let v = e.prio.unwrap_or(implicit);
                let vals = &mut c.values[d];
                // fio's assign_clat_prio_index: a value equal to the job's shares index 0.
                let idx = match vals.iter().position(|&x| x == v) {
                    Some(i) => i,
                    None => {
                        vals.push(v);
                        vals.len() - 1
                    }
                } as u8;
                match c.bs[d].last_mut().filter(|b| b.bs == e.bs) {
                    Some(b) => {
                        b.tot_perc += e.perc;
                        b.prios.push((e.perc, idx));
                    }
                    None => c.bs[d].push(BsPrio {
                        bs: e.bs,
                        tot_perc: e.perc,
                        prios: vec![(e.perc, idx)],
                    }),
                }
            }
        }
        Some(c)
    }

    /// fio's fio_cmdprio_set_ioprio: the share for this direction (and, with bssplit, this
    /// block size); no share, no draw. A draw from 0..=99 below it takes a command priority
    /// (with bssplit, the entry whose running share first exceeds the draw). Returns the
    /// priority index (0 the job's).
    #[inline]
    pub(crate) fn pick(&mut self, dir: usize, len: usize) -> u8 {
        let d = dir.min(1);
        let (p, bs) = if self.bs[d].is_empty() {
            (self.pct[d], None)
        } else {
            match self.bs[d].iter().find(|b| b.bs == len as u64) {
                Some(b) => (b.tot_perc, Some(b)),
                None => (0, None),
            }
        };
        if p == 0 {
            return 0;
        }
        // xorshift64*
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        let r = ((x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % 100) as u32;
        if r >= p {
            return 0;
        }
        let Some(b) = bs else {
            return 1;
        };
        let mut run = 0;
        for &(perc, idx) in &b.prios {
            run += perc;
            if r < run {
                return idx;
            }
        }
        0
    }

    /// The ioprio value of priority index `idx` in direction `dir`.
    #[inline]
    pub(crate) fn value(&self, dir: usize, idx: u8) -> u16 {
        self.values[dir.min(1)][idx as usize]
    }

    /// Latency recorders per direction and priority index, with their ioprio values.
    pub(crate) fn recorders(&self) -> PrioLat {
        let recs = |d: usize| self.values[d].iter().map(|_| LatRecorder::new(0)).collect();
        PrioLat {
            values: self.values.clone(),
            recs: [recs(0), recs(1)],
        }
    }
}

/// Latency per direction (read, write) and priority index.
#[derive(Debug, Clone)]
pub struct PrioLat {
    /// The ioprio value of each (direction, index).
    pub values: [Vec<u16>; 2],
    /// Completion latency, or total latency with lat_percentiles (fio's rule).
    pub recs: [Vec<LatRecorder>; 2],
}

impl PrioLat {
    /// Forget everything (end of ramp).
    pub(crate) fn reset(&mut self) {
        for r in self.recs.iter_mut().flatten() {
            r.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CmdPrioSplit, JobSpec};

    #[test]
    fn bssplit_picks_each_entry_by_its_share_and_only_for_its_size() {
        let mut job = JobSpec::default();
        let e = |bs, perc, prio| CmdPrioSplit { bs, perc, prio };
        job.ioprio.cmd_class = [3, 3];
        job.ioprio.cmd_level = [2, 2];
        job.ioprio.cmd_bssplit[0] = vec![
            e(4096, 20, None),
            e(4096, 30, Some((1 << 13) | 1)),
            e(65536, 50, Some(0)),
        ];
        let mut c = CmdPrio::new(&job, 7).unwrap();
        // The job's own priority (0) first; 64k's explicit 0 shares its index.
        assert_eq!(c.values[0], vec![0, 0x6002, 0x2001]);
        let mut n = [0u32; 3];
        for _ in 0..100_000 {
            n[c.pick(0, 4096) as usize] += 1;
        }
        let share = |k: u32| f64::from(k) / 100_000.0;
        assert!((share(n[0]) - 0.5).abs() < 0.01, "{n:?}");
        assert!((share(n[1]) - 0.2).abs() < 0.01, "{n:?}");
        assert!((share(n[2]) - 0.3).abs() < 0.01, "{n:?}");
        assert!((0..1000).all(|_| c.pick(0, 65536) == 0 && c.pick(0, 8192) == 0));
        // No entries for writes: never a command priority.
        assert!((0..1000).all(|_| c.pick(1, 4096) == 0));
    }
}
