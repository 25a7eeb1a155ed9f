//! Monotonic nanoseconds: one clock for workers, the monitor and the orchestrator.
//!
//! Where the kernel itself keeps time with the TSC (x86-64, the `tsc` clocksource, which the
//! kernel only keeps when the counter is constant, does not stop and is synchronised across
//! CPUs), the TSC is read directly and scaled: about 9 ns a read here against about 20 ns for
//! `clock_gettime`'s vDSO (bench/clock.c), and the worker loops read the clock twice per I/O.
//! The scale comes from CLOCK_MONOTONIC itself over a 10 ms window when the clock is first used
//! (a relative error of a few parts per million; a 1 ms latency is off by a few ns). fio's
//! default `clocksource=cpu` does the same. Elsewhere every read is `clock_gettime`.

use crate::model::host::ClockSource;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The TSC's scale and origin, so that `now_ns` continues CLOCK_MONOTONIC's count.
#[derive(Debug, Clone, Copy)]
struct Tsc {
    base_tsc: u64,
    base_ns: u64,
    /// Nanoseconds per tick, 32.32 fixed point.
    mult: u64,
}

static TSC: OnceLock<Option<Tsc>> = OnceLock::new();

/// fio's `clocksource=clock_gettime` (or `gettimeofday`) asked for before the first read.
static PREFER_CLOCK_GETTIME: AtomicBool = AtomicBool::new(false);

/// Takes a job's `clocksource` into account; only a choice made before the clock's first read
/// counts (the clock is one for the whole process, as fio's).
pub(crate) fn prefer(source: Option<ClockSource>) {
    if source == Some(ClockSource::ClockGettime) {
        PREFER_CLOCK_GETTIME.store(true, Ordering::Relaxed);
    }
}

#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    match TSC.get_or_init(calibrate) {
        Some(t) => t.now(),
        None => mono_ns(),
    }
}

/// CLOCK_MONOTONIC through the vDSO.
#[inline(always)]
fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer; CLOCK_MONOTONIC cannot fail on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no memory effects; `calibrate` only uses it where the kernel does.
    unsafe { core::arch::x86_64::_rdtsc() }
}

impl Tsc {
    #[inline(always)]
    fn now(&self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        let ticks = rdtsc().wrapping_sub(self.base_tsc);
        #[cfg(not(target_arch = "x86_64"))]
        let ticks = 0u64;
        self.base_ns + ((ticks as u128 * self.mult as u128) >> 32) as u64
    }
}

/// Whether the kernel's own clock is the TSC (so it is invariant and synchronised).
fn kernel_uses_tsc() -> bool {
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    let flags = std::fs::read_to_string("/proc/cpuinfo");
    match (source, flags) {
        (Ok(source), Ok(info)) => {
            let flags = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
            let has = |f: &str| flags.split_whitespace().any(|w| w == f);
            source.trim() == "tsc" && has("constant_tsc") && has("nonstop_tsc")
        }
        _ => false,
    }
}

#[cfg(target_arch = "x86_64")]
fn calibrate() -> Option<Tsc> {
    if std::env::var_os("IOGAUGE_CLOCK").is_some_and(|v| v == "clock_gettime")
        || PREFER_CLOCK_GETTIME.load(Ordering::Relaxed)
        || !kernel_uses_tsc()
    {
        return None;
    }
    // A (tick, ns) pair read as close together as possible: the narrowest of a few tries,
    // with the tick taken as the middle of the two reads around clock_gettime.
    let pair = || {
        (0..8)
            .map(|_| {
                let a = rdtsc();
                let ns = mono_ns();
                let b = rdtsc();
                (b.wrapping_sub(a), a / 2 + b / 2, ns)
            })
            .min_by_key(|p| p.0)
            .map(|(_, t, ns)| (t, ns))
    };
    let (t0, n0) = pair()?;
    std::thread::sleep(std::time::Duration::from_millis(10));
    let (t1, n1) = pair()?;
    let (ticks, ns) = (t1.checked_sub(t0)?, n1.checked_sub(n0)?);
    // 100 MHz .. 10 GHz, or the counter is not what the flags say.
    if ticks < ns / 10 || ticks > ns * 10 {
        return None;
    }
    let mult = ((ns as u128) << 32) / ticks as u128;
    Some(Tsc {
        base_tsc: t1,
        base_ns: n1,
        mult: u64::try_from(mult).ok()?,
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn calibrate() -> Option<Tsc> {
    None
}

/// Sleep until `now_ns()` reaches `deadline_ns`, with an absolute CLOCK_MONOTONIC deadline so
/// repeated sleeps never drift (moved by the few ppm the scaled TSC may differ from it by).
pub(crate) fn sleep_until(deadline_ns: u64) {
    loop {
        let now = now_ns();
        if deadline_ns <= now {
            return;
        }
        let ts = crate::engine::timespec(mono_ns() + (deadline_ns - now));
        // SAFETY: valid timespec; TIMER_ABSTIME makes EINTR retries exact.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != 0 && r != libc::EINTR {
            return;
        }
    }
}

/// Calibrates the clock now (10 ms where the TSC is used), so no worker pays for it mid-run.
pub(crate) fn init() {
    now_ns();
}

/// Thread id as the kernel sees it (what fio prints as `pid=` for threads).
pub(crate) fn gettid() -> u32 {
    // SAFETY: gettid cannot fail.
    unsafe { libc::gettid() as u32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_sleep_reaches_deadline() {
        let a = now_ns();
        let deadline = a + 2_000_000;
        sleep_until(deadline);
        let b = now_ns();
        assert!(b >= deadline, "woke {} ns early", deadline - b);
    }

    #[test]
    fn scaled_tsc_keeps_monotonic_time() {
        init();
        // Over 30 ms the clock may differ from CLOCK_MONOTONIC by its scale error (a few ppm)
        // and the gap between the paired reads; 1e-4 plus 20 us bounds both under load.
        let (a, ma) = (now_ns(), mono_ns());
        std::thread::sleep(std::time::Duration::from_millis(30));
        let (b, mb) = (now_ns(), mono_ns());
        let (d, dm) = (b - a, mb - ma);
        assert!(
            d.abs_diff(dm) <= dm / 10_000 + 20_000,
            "clock moved {d} ns, CLOCK_MONOTONIC {dm} ns"
        );
        // And it continues CLOCK_MONOTONIC's count rather than starting its own.
        assert!(now_ns().abs_diff(mono_ns()) < 1_000_000);
    }
}
