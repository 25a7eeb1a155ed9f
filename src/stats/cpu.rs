//! TEMPORARY shim until the stats branch lands.
use crate::report::CpuReport;
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimes {
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub majflt: u64,
    pub minflt: u64,
}
impl CpuTimes {
    pub fn now_thread() -> Self {
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut r) };
        CpuTimes {
            utime_ns: r.ru_utime.tv_sec as u64 * 1_000_000_000 + r.ru_utime.tv_usec as u64 * 1000,
            stime_ns: r.ru_stime.tv_sec as u64 * 1_000_000_000 + r.ru_stime.tv_usec as u64 * 1000,
            nvcsw: r.ru_nvcsw as u64,
            nivcsw: r.ru_nivcsw as u64,
            majflt: r.ru_majflt as u64,
            minflt: r.ru_minflt as u64,
        }
    }
    pub fn delta(&self, e: &CpuTimes) -> CpuTimes {
        CpuTimes {
            utime_ns: self.utime_ns - e.utime_ns,
            stime_ns: self.stime_ns - e.stime_ns,
            nvcsw: self.nvcsw - e.nvcsw,
            nivcsw: self.nivcsw - e.nivcsw,
            majflt: self.majflt - e.majflt,
            minflt: self.minflt - e.minflt,
        }
    }
    pub fn report(&self, wall_ns: u64) -> CpuReport {
        let w = wall_ns.max(1) as f64;
        CpuReport {
            usr_pct: self.utime_ns as f64 * 100.0 / w,
            sys_pct: self.stime_ns as f64 * 100.0 / w,
            ctx: self.nvcsw + self.nivcsw,
            majf: self.majflt,
            minf: self.minflt,
        }
    }
}
