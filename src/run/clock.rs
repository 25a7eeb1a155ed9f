//! Monotonic nanoseconds from CLOCK_MONOTONIC (a vDSO call, no system call, on Linux with a TSC
//! clocksource). One clock for workers, the monitor and the orchestrator.

#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer; CLOCK_MONOTONIC cannot fail on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until `deadline_ns` (CLOCK_MONOTONIC), absolute, so repeated sleeps never drift.
pub(crate) fn sleep_until(deadline_ns: u64) {
    let ts = crate::engine::timespec(deadline_ns);
    loop {
        // SAFETY: valid timespec; TIMER_ABSTIME makes EINTR retries exact.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            return;
        }
    }
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
}
