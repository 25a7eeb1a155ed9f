//! The time column of fio's logs under `log_unix_epoch` / `log_alternate_epoch`: fio 3.33 reads
//! `log_alternate_epoch_clock_id`'s clock (default CLOCK_REALTIME) when the job's epoch is set,
//! truncated to ms, and adds it to each entry's ms since that epoch. So the column is ms since
//! that clock's own epoch (the Unix epoch for CLOCK_REALTIME, boot for CLOCK_MONOTONIC), as fio's.

use std::io;

/// `clock_id`'s reading in ns (clock_gettime); an error when the host has no such clock.
pub(crate) fn clock_ns(clock_id: i32) -> io::Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    if unsafe { libc::clock_gettime(clock_id as libc::clockid_t, &mut ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// `clock_id`'s reading in ms, as fio's alternate_epoch.
pub(crate) fn epoch_ms(clock_id: i32) -> io::Result<u64> {
    clock_ns(clock_id).map(|ns| ns / 1_000_000)
}

/// What to add to an entry's ms since the measurement epoch: `clock_id`'s reading at that
/// epoch in ms, given that `since_epoch_ns` have passed since it. 0 when the clock fails
/// (it was checked when the option was read).
pub(crate) fn offset_ms(clock_id: i32, since_epoch_ns: u64) -> u64 {
    clock_ns(clock_id).map_or(0, |now| now.saturating_sub(since_epoch_ns) / 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn realtime_is_unix_time_and_bad_clocks_fail() {
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let ms = epoch_ms(libc::CLOCK_REALTIME).unwrap();
        assert!(ms.abs_diff(unix) < 1000, "{ms} vs {unix}");
        // An hour after the epoch was taken: the offset is an hour earlier than now.
        let off = offset_ms(libc::CLOCK_REALTIME, 3_600_000_000_000);
        assert!((ms - 3_600_000).abs_diff(off) < 1000);
        assert!(epoch_ms(12345).is_err());
    }
}
