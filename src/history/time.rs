//! Time stamps: RFC 3339 in UTC to the second, so that the stored text sorts as time does; and
//! the ages `prune --older-than` takes.

use crate::report::units::broken_down;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `2026-04-01T10:20:30Z`.
pub(crate) fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    match broken_down(secs, true) {
        Some(tm) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            tm.year,
            tm.mon + 1,
            tm.mday,
            tm.hour,
            tm.min,
            tm.sec
        ),
        None => "1970-01-01T00:00:00Z".into(),
    }
}

/// An age such as `30d`, `12h`, `2w`, `90m`, `45s` or `1d12h`; a bare number is seconds, as in
/// every other duration iogauge takes (`--duration 30`, fio's `runtime=30`).
pub(crate) fn parse_age(s: &str) -> Result<Duration, String> {
    let bad = || format!("'{s}': expected an age such as 30d, 12h, 2w or 1d12h");
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<u64>().map(Duration::from_secs).map_err(|_| bad());
    }
    let mut total = 0u64;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        let unit = rest[digits..].chars().next().ok_or_else(bad)?;
        let secs = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            'w' => 7 * 86400,
            _ => return Err(bad()),
        };
        total = n
            .checked_mul(secs)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
        rest = &rest[digits + 1..];
    }
    if t.is_empty() {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_and_sort_as_time() {
        let at = |s: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(at(1_775_038_830), "2026-04-01T10:20:30Z");
        assert!(at(9) < at(10) && at(59) < at(60));
    }

    #[test]
    fn ages() {
        let d = |s| parse_age(s).map(|d| d.as_secs());
        assert_eq!(d("30d"), Ok(30 * 86400));
        assert_eq!(d("30"), Ok(30));
        assert_eq!(d("600"), Ok(600));
        assert_eq!(d("12h"), Ok(12 * 3600));
        assert_eq!(d("2w"), Ok(14 * 86400));
        assert_eq!(d("1d12h"), Ok(36 * 3600));
        assert_eq!(d("0s"), Ok(0));
        for bad in ["", "d", "3x", "1.5d", "-1d"] {
            assert!(d(bad).is_err(), "{bad}");
        }
    }
}
