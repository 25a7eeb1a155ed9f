//! Number and time formatting shared by the fio-compatible renderers.
//!
//! `num2str` reproduces the behaviour of fio's `num2str()` (lib/num2str.c): fit a number into
//! `maxlen` digits by dividing by 1000 or 1024, keep as many decimals as the remaining width
//! allows, and round the way fio does (including its carry into the integer part, so
//! 999.96k becomes `1000k`). fio users read these strings (`IOPS=23.2k`, `BW=90.7MiB/s`), so
//! matching them digit for digit matters more than "nicer" rounding.

use std::time::{SystemTime, UNIX_EPOCH};

/// What `num2str` appends after the unit prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Nothing (IOPS, latency values).
    None,
    /// `B` (sizes).
    Byte,
    /// `B/s` (bandwidth).
    BytePerSec,
    /// `bit/s` (bandwidth with fio's `unit_base=1`).
    BitPerSec,
}

/// Units of fio's text output from `kb_base` and `unit_base`; the default is fio's (IEC first,
/// bandwidth in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextUnits {
    /// `kb_base=1000`: SI units first, IEC in parentheses (also the job line's block sizes).
    pub si: bool,
    /// `unit_base=1`: bandwidth in bits per second.
    pub bits: bool,
}

impl TextUnits {
    /// A bandwidth in the leading units (`first`) or the other ones, as fio's text prints it.
    pub(crate) fn bw(self, bytes_per_sec: u64, sig: usize, first: bool) -> String {
        let (n, unit) = if self.bits {
            (bytes_per_sec.saturating_mul(8), Unit::BitPerSec)
        } else {
            (bytes_per_sec, Unit::BytePerSec)
        };
        num2str(n, sig, self.si != first, unit)
    }

    /// A byte count in the leading units (`first`) or the other ones.
    pub(crate) fn bytes(self, n: u64, sig: usize, first: bool) -> String {
        num2str(n, sig, self.si != first, Unit::Byte)
    }
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::Byte => "B",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }
}

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// fio's significant-figures default (`sig_figs`, option `significant_figures`).
pub(crate) const SIG_FIGS: usize = 4;

/// Formats `num` in at most `maxlen` digits (the decimal point counts, the prefix does not).
/// `pow2` selects IEC prefixes and steps of 1024, otherwise SI prefixes and steps of 1000.
pub(crate) fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC } else { &SI };
    let mut num = num;
    let mut post = 0usize;
    // None until the first division: then the number is exact and printed as is.
    let mut modulo: Option<u64> = None;
    let mut carry = false;

    while post < SI.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }

    let Some(m) = modulo else {
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    };

    let int_len = digits(num);
    if maxlen <= int_len + 1 {
        // No room for a decimal point and a digit: round the integer part.
        if carry {
            num += 1;
        }
        return format!("{num}{}{}", prefixes[post], unit.suffix());
    }

    let decimals = maxlen - int_len - 1;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    // The fraction rounded up to 1.0…: carry into the integer part and keep the zeros.
    if frac.starts_with('1') {
        num += 1;
    }
    let frac_digits = frac.get(2..).unwrap_or("");
    format!("{num}.{frac_digits}{}{}", prefixes[post], unit.suffix())
}

fn digits(n: u64) -> usize {
    if n == 0 {
        1
    } else {
        n.ilog10() as usize + 1
    }
}

/// A block size as fio's job header prints it (`2300B`, `16.0KiB`).
pub(crate) fn size_str(bytes: u64) -> String {
    num2str(bytes, SIG_FIGS, true, Unit::Byte)
}

/// A block size as fio's job header prints it under `kb_base` (`16.4kB` with 1000).
pub(crate) fn size_str_in(bytes: u64, units: TextUnits) -> String {
    num2str(bytes, SIG_FIGS, !units.si, Unit::Byte)
}

/// A latency-bucket share as fio shows it: a non-empty bucket never shows below 0.01 %.
pub(crate) fn lat_share(pct: f64) -> f64 {
    if pct > 0.0 && pct < 0.01 {
        0.01
    } else {
        pct
    }
}

/// An IO-depth share as fio shows it: a non-empty bucket never shows below 0.1 %.
pub(crate) fn depth_share(pct: f64) -> f64 {
    if pct > 0.0 && pct < 0.1 {
        0.1
    } else {
        pct
    }
}

/// The text of an errno, without Rust's ` (os error N)` suffix.
pub(crate) fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `ctime(3)` layout without the trailing newline, in local time: `Sun Nov 22 07:49:02 2026`.
pub(crate) fn ctime(t: SystemTime) -> String {
    let secs = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(_) => 0,
    };
    match broken_down(secs, false) {
        Some(tm) => format_tm(&tm),
        None => String::from("?"),
    }
}

/// Seconds and milliseconds since the epoch (fio's `timestamp` / `timestamp_ms`).
pub(crate) fn epoch_secs_ms(t: SystemTime) -> (u64, u64) {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => (d.as_secs(), d.as_millis() as u64),
        Err(_) => (0, 0),
    }
}

/// Calendar fields of a time; `utc` selects UTC instead of the local zone (for tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tm {
    pub year: i64,
    /// 0 = January.
    pub mon: usize,
    pub mday: u32,
    /// 0 = Sunday.
    pub wday: usize,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
}

pub(crate) fn broken_down(secs: i64, utc: bool) -> Option<Tm> {
    let tt = secs as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value (plain integers and a nullable pointer).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r/gmtime_r read `tt` and write only into `tm`; both live for the call.
    let res = unsafe {
        if utc {
            libc::gmtime_r(&tt, &mut tm)
        } else {
            libc::localtime_r(&tt, &mut tm)
        }
    };
    if res.is_null() {
        return None;
    }
    Some(Tm {
        year: tm.tm_year as i64 + 1900,
        mon: tm.tm_mon.clamp(0, 11) as usize,
        mday: tm.tm_mday as u32,
        wday: tm.tm_wday.clamp(0, 6) as usize,
        hour: tm.tm_hour as u32,
        min: tm.tm_min as u32,
        sec: tm.tm_sec as u32,
    })
}

pub(crate) fn format_tm(tm: &Tm) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {}{:3} {:02}:{:02}:{:02} {}",
        DAYS[tm.wday], MONTHS[tm.mon], tm.mday, tm.hour, tm.min, tm.sec, tm.year
    )
}

/// `1000` as `1,000`.
pub(crate) fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(n: u64) -> (String, String) {
        (
            num2str(n, SIG_FIGS, true, Unit::BytePerSec),
            num2str(n, SIG_FIGS, false, Unit::BytePerSec),
        )
    }

    #[test]
    fn iops_like_fio() {
        // Values and strings from the reference outputs.
        assert_eq!(num2str(6698, 4, false, Unit::None), "6698");
        assert_eq!(num2str(23228, 4, false, Unit::None), "23.2k");
        assert_eq!(num2str(585142, 4, false, Unit::None), "585k");
        assert_eq!(num2str(3360000, 4, false, Unit::None), "3360k");
        assert_eq!(num2str(66, 4, false, Unit::None), "66");
        assert_eq!(num2str(0, 4, false, Unit::None), "0");
    }

    #[test]
    fn bandwidth_like_fio() {
        // run2: 93606008 B/s → 90.7MiB/s (95.1MB/s)... (run2 text run: bw_bytes 95141xxx)
        assert_eq!(bw(95_141_000).0, "90.7MiB/s");
        assert_eq!(bw(95_141_000).1, "95.1MB/s");
        // seed 002: 7204KiB/s (7377kB/s)
        assert_eq!(bw(7_377_000).0, "7204KiB/s");
        assert_eq!(bw(7_377_000).1, "7377kB/s");
        // run3: 2286MiB/s (2397MB/s)
        assert_eq!(bw(2_396_745_142).0, "2286MiB/s");
        assert_eq!(bw(2_396_745_142).1, "2397MB/s");
    }

    #[test]
    fn sizes_like_fio() {
        assert_eq!(num2str(2_095_300, 4, true, Unit::Byte), "2046KiB");
        assert_eq!(num2str(2_095_300, 4, false, Unit::Byte), "2095kB");
        assert_eq!(num2str(16 << 20, 4, true, Unit::Byte), "16.0MiB");
        assert_eq!(num2str(16 << 20, 4, false, Unit::Byte), "16.8MB");
        assert_eq!(num2str(8 << 20, 4, true, Unit::Byte), "8192KiB");
        assert_eq!(num2str(8 << 20, 4, false, Unit::Byte), "8389kB");
        assert_eq!(size_str(2300), "2300B");
        let si = TextUnits {
            si: true,
            bits: false,
        };
        assert_eq!(size_str_in(16384, si), "16.4kB");
        // Numbers from fio 3.33, kb_base=1000 unit_base=1: BW=1117Gbit/s (1040Gibit/s).
        let bits = TextUnits {
            si: true,
            bits: true,
        };
        assert_eq!(bits.bw(139_625_000_000, 4, true), "1117Gbit/s");
        assert_eq!(bits.bw(139_625_000_000, 4, false), "1040Gibit/s");
        assert_eq!(size_str(4096), "4096B");
        assert_eq!(size_str(16384), "16.0KiB");
        assert_eq!(size_str(1 << 20), "1024KiB");
    }

    #[test]
    fn rounding_carries_like_fio() {
        // 999_960 → 999 + carry (960 ≥ 500), no room for decimals → "1000k".
        assert_eq!(num2str(999_960, 4, false, Unit::None), "1000k");
        // 23_960 → "23." + "%.1f" of 0.96 = "1.0" → carry into 24 → "24.0k".
        assert_eq!(num2str(23_960, 4, false, Unit::None), "24.0k");
        // 99_950 → 99 + 0.95 → "%.1f" = "0.9" (binary 0.95 is below .95) → "99.9k".
        assert_eq!(num2str(99_950, 4, false, Unit::None), "99.9k");
        // Exactly at the limit: no division.
        assert_eq!(num2str(9999, 4, false, Unit::None), "9999");
        assert_eq!(num2str(10_000, 4, false, Unit::None), "10.0k");
        // k → M → G transitions.
        assert_eq!(num2str(1_000_000, 4, false, Unit::None), "1000k");
        assert_eq!(num2str(10_000_000, 4, false, Unit::None), "10.0M");
        assert_eq!(num2str(12_345_678_901, 4, false, Unit::None), "12.3G");
        // KiB vs kB at the same value.
        assert_eq!(num2str(1_048_576, 4, true, Unit::Byte), "1024KiB");
        assert_eq!(num2str(1_048_576, 4, false, Unit::Byte), "1049kB");
        assert_eq!(num2str(1_073_741_824, 4, true, Unit::Byte), "1024MiB");
        assert_eq!(num2str(10_737_418_240, 4, true, Unit::Byte), "10.0GiB");
        // Latency values use 6 digits (display_lat): 1952.7k from seed 004.
        assert_eq!(num2str(1_952_700, 6, false, Unit::None), "1952.7k");
        assert_eq!(num2str(10_499, 6, false, Unit::None), "10499");
        assert_eq!(num2str(12_345_678, 6, false, Unit::None), "12346k");
    }

    #[test]
    fn shares_and_errno() {
        assert_eq!(lat_share(0.004), 0.01);
        assert_eq!(lat_share(0.0), 0.0);
        assert_eq!(lat_share(12.5), 12.5);
        assert_eq!(depth_share(0.02), 0.1);
        assert_eq!(depth_share(0.0), 0.0);
        assert_eq!(strerror(5), "Input/output error");
    }

    #[test]
    fn ctime_layout() {
        // 1795333742 = Sun Nov 22 07:49:02 2026 UTC.
        let tm = broken_down(1_795_333_742, true).expect("gmtime");
        assert_eq!(format_tm(&tm), "Sun Nov 22 07:49:02 2026");
        // Single-digit days are space padded as ctime does.
        let tm = broken_down(1_682_972_668, true).expect("gmtime");
        assert_eq!(format_tm(&tm), "Mon May  1 20:24:28 2023");
    }
}
