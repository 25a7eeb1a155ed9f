//! CPU use of a worker thread: `getrusage(RUSAGE_THREAD)` snapshots, as fio (`usr_cpu`,
//! `sys_cpu`, `ctx`, `majf`, `minf`).
//!
//! The worker takes a snapshot at measurement start (after ramp_time) and at its end, outside the
//! I/O loop; `delta` of the two, summed over a job's threads with `add`, gives the job's usage.

use super::summary::CpuReport;
use std::ops::{Add, AddAssign};

#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    #[error("getrusage(RUSAGE_THREAD) failed: {0}")]
    Getrusage(#[source] std::io::Error),
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub utime_ns: u64,
    pub stime_ns: u64,
    /// Voluntary context switches.
    pub nvcsw: u64,
    /// Involuntary context switches.
    pub nivcsw: u64,
    pub majflt: u64,
    pub minflt: u64,
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1_000_000_000 + (tv.tv_usec.max(0) as u64) * 1000
}

impl CpuTimes {
    /// Usage of the calling thread so far.
    pub fn now_thread() -> Result<CpuTimes, CpuError> {
        // SAFETY: getrusage only writes into the zeroed struct we pass.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a valid, writable rusage.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        if rc != 0 {
            return Err(CpuError::Getrusage(std::io::Error::last_os_error()));
        }
        Ok(CpuTimes {
            utime_ns: timeval_ns(ru.ru_utime),
            stime_ns: timeval_ns(ru.ru_stime),
            nvcsw: ru.ru_nvcsw.max(0) as u64,
            nivcsw: ru.ru_nivcsw.max(0) as u64,
            majflt: ru.ru_majflt.max(0) as u64,
            minflt: ru.ru_minflt.max(0) as u64,
        })
    }

    /// Usage between `earlier` and `self` (saturating, so a bogus order gives 0, not garbage).
    pub fn delta(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            utime_ns: self.utime_ns.saturating_sub(earlier.utime_ns),
            stime_ns: self.stime_ns.saturating_sub(earlier.stime_ns),
            nvcsw: self.nvcsw.saturating_sub(earlier.nvcsw),
            nivcsw: self.nivcsw.saturating_sub(earlier.nivcsw),
            majflt: self.majflt.saturating_sub(earlier.majflt),
            minflt: self.minflt.saturating_sub(earlier.minflt),
        }
    }

    /// usr/sys as a percentage of `wall_ns` (the job's measured wall time; fio divides by the
    /// job runtime, so a job with several threads can exceed 100 %), ctx = voluntary +
    /// involuntary switches. `wall_ns` = 0 gives 0 %.
    pub fn report(&self, wall_ns: u64) -> CpuReport {
        let pct = |ns: u64| {
            if wall_ns == 0 {
                0.0
            } else {
                100.0 * ns as f64 / wall_ns as f64
            }
        };
        CpuReport {
            usr_pct: pct(self.utime_ns),
            sys_pct: pct(self.stime_ns),
            ctx: self.nvcsw + self.nivcsw,
            majf: self.majflt,
            minf: self.minflt,
        }
    }
}

impl Add for CpuTimes {
    type Output = CpuTimes;
    fn add(self, o: CpuTimes) -> CpuTimes {
        CpuTimes {
            utime_ns: self.utime_ns + o.utime_ns,
            stime_ns: self.stime_ns + o.stime_ns,
            nvcsw: self.nvcsw + o.nvcsw,
            nivcsw: self.nivcsw + o.nivcsw,
            majflt: self.majflt + o.majflt,
            minflt: self.minflt + o.minflt,
        }
    }
}

impl AddAssign for CpuTimes {
    fn add_assign(&mut self, o: CpuTimes) {
        *self = *self + o;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_thread_uses_user_time() {
        let handle = std::thread::spawn(|| -> Result<(CpuTimes, u64), CpuError> {
            let start = CpuTimes::now_thread()?;
            let t0 = std::time::Instant::now();
            let mut x = 0u64;
            while t0.elapsed() < std::time::Duration::from_millis(200) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            let end = CpuTimes::now_thread()?;
            Ok((end.delta(&start), t0.elapsed().as_nanos() as u64))
        });
        let (d, wall) = handle.join().expect("thread").expect("getrusage");
        let r = d.report(wall);
        // Busy loop: mostly user time. The machine is shared, so keep the bound loose.
        assert!(r.usr_pct + r.sys_pct > 20.0, "{r:?}");
        assert!(r.usr_pct + r.sys_pct <= 101.0, "{r:?}");
    }

    #[test]
    fn arithmetic_and_report() {
        let a = CpuTimes {
            utime_ns: 300,
            stime_ns: 100,
            nvcsw: 5,
            nivcsw: 2,
            majflt: 1,
            minflt: 9,
        };
        let z = CpuTimes::default();
        assert_eq!(a.delta(&z), a);
        assert_eq!(z.delta(&a), z);
        let mut s = a;
        s += a;
        assert_eq!(s, a + a);
        let r = s.report(1000);
        assert_eq!(
            (r.usr_pct, r.sys_pct, r.ctx, r.majf, r.minf),
            (60.0, 20.0, 14, 2, 18)
        );
        assert_eq!(a.report(0).usr_pct, 0.0);
    }
}
