//! fio's command priorities (cmdprio_percentage/class/level on queueing engines): which I/O
//! gets the command priority, and completion (or total) latency per priority for the
//! `prios` entries of the report. Allocated once per instance, only when a job uses them.

use super::LatRecorder;

/// Per I/O: whether it carries the command priority (index 1) or the job's (index 0).
pub(crate) struct CmdPrio {
    state: u64,
    pct: [u32; 2],
    values: [[u16; 2]; 2],
}

impl CmdPrio {
    /// None unless the job sends some I/Os with a command priority.
    pub(crate) fn new(job: &crate::model::JobSpec, seed: u64) -> Option<CmdPrio> {
        let p = &job.ioprio;
        if !p.cmd_active() {
            return None;
        }
        let default = p.value().unwrap_or(0);
        Some(CmdPrio {
            // Its own stream (fio's prio_state), so offsets are those of the job without it.
            state: seed ^ 0x9e37_79b9_7f4a_7c15 | 1,
            pct: p.cmd_percentage,
            values: [[default, p.cmd_value(0)], [default, p.cmd_value(1)]],
        })
    }

    /// fio's rule: a draw from 0..=99 below the direction's percentage takes the command
    /// priority. Returns the priority index (0 job's, 1 command's).
    #[inline]
    pub(crate) fn pick(&mut self, dir: usize) -> u8 {
        // xorshift64*
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        let r = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % 100;
        u8::from(r < u64::from(self.pct[dir.min(1)]))
    }

    /// The ioprio value of priority index `idx` in direction `dir`.
    #[inline]
    pub(crate) fn value(&self, dir: usize, idx: u8) -> u16 {
        self.values[dir.min(1)][idx as usize]
    }

    /// Latency recorders per direction and priority index, with their ioprio values.
    pub(crate) fn recorders(&self) -> PrioLat {
        let rec = || LatRecorder::new(0);
        PrioLat {
            values: self.values,
            recs: [[rec(), rec()], [rec(), rec()]],
        }
    }
}

/// Latency per direction (read, write) and priority index.
#[derive(Debug, Clone)]
pub struct PrioLat {
    /// The ioprio value of each (direction, index).
    pub values: [[u16; 2]; 2],
    /// Completion latency, or total latency with lat_percentiles (fio's rule).
    pub recs: [[LatRecorder; 2]; 2],
}

impl PrioLat {
    /// Forget everything (end of ramp).
    pub(crate) fn reset(&mut self) {
        for r in self.recs.iter_mut().flatten() {
            r.reset();
        }
    }
}
