//! fio's value grammar: sizes, integers, times, booleans and per-direction lists
//! (docs/FIO-OPTIONS.md; fio's parse.c at tag fio-3.33 where that page is silent).
//! Errors are short phrases ("expected …"); the caller adds which option and input they came from.

use super::SizeSpec;
use std::time::Duration;

const SIZE_HINT: &str = "expected a size such as 4096, 4k, 64KiB or 1g";

/// Splits "12.5kib" into ("12.5", "kib"); hex ("0x1f") has no fraction.
fn split_number(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    let end = if s.len() > 2 && (s.starts_with("0x") || s.starts_with("0X")) {
        2 + b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count()
    } else {
        let int = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if b.get(int) == Some(&b'.') {
            int + 1
                + b[int + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count()
        } else {
            int
        }
    };
    if end == 0 || (end == 1 && b[0] == b'.') {
        return None;
    }
    Some((&s[..end], &s[end..]))
}

/// An exact integer or a fraction, so "1.5g" works like fio while large integers stay exact.
enum Number {
    Int(u64),
    Frac(f64),
}

fn parse_number(num: &str) -> Option<Number> {
    if let Some(hex) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(Number::Int);
    }
    if num.contains('.') {
        return num.parse::<f64>().ok().map(Number::Frac);
    }
    num.parse::<u64>().ok().map(Number::Int)
}

fn scale(n: Number, mult: u64) -> Option<u64> {
    match n {
        Number::Int(v) => v.checked_mul(mult),
        Number::Frac(f) => {
            let v = f * mult as f64;
            (v.is_finite() && v < u64::MAX as f64).then_some(v as u64)
        }
    }
}

thread_local! {
    /// fio `kb_base` of the job whose options are being read (1024 or 1000); set around each
    /// option by the fio translator ([`with_kb_base`]), 1024 everywhere else.
    static KB_BASE: std::cell::Cell<u64> = const { std::cell::Cell::new(1024) };
}

/// The `kb_base` sizes are read in now (1024 unless [`with_kb_base`] set another).
fn kb_base() -> u64 {
    KB_BASE.with(|c| c.get())
}

/// Runs `f` with sizes read in fio's `kb_base` = `kb` (1024 or 1000).
pub(crate) fn with_kb_base<R>(kb: u64, f: impl FnOnce() -> R) -> R {
    let before = KB_BASE.with(|c| c.replace(kb));
    let r = f();
    KB_BASE.with(|c| c.set(before));
    r
}

/// Multiplier of a size suffix. With fio's default kb_base=1024, `k`, `kb`, `ki` are 1024 but
/// `kib` is 1000 (fio's documented inversion), likewise for m, g, t, p, e; with kb_base=1000
/// `k` is 1000 and `kib` 1024 (fio's `get_mult_bytes` swaps the base for the `ib` forms).
fn size_multiplier(suffix: &str) -> Option<u64> {
    let s = suffix.to_ascii_lowercase();
    if s.is_empty() || s == "b" {
        return Some(1);
    }
    let mut chars = s.chars();
    let pow = match chars.next()? {
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        'e' => 6,
        _ => return None,
    };
    let kb = KB_BASE.with(|c| c.get());
    let other = if kb == 1000 { 1024 } else { 1000 };
    let base: u64 = match chars.as_str() {
        "" | "b" | "i" => kb,
        "ib" => other,
        _ => return None,
    };
    Some(base.pow(pow))
}

/// A byte count: `4096`, `4k`, `0x1000`, `1.5g`, `4KiB` (= 4000, fio's quirk). Inside
/// [`super::lenient::fio_lenient`], what fio's own parser makes of a value this grammar
/// refuses is taken instead, with a note.
pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    let strict = split_number(s).ok_or(SIZE_HINT).and_then(|(num, suffix)| {
        let n = parse_number(num).ok_or(SIZE_HINT)?;
        let mult = size_multiplier(suffix).ok_or(SIZE_HINT)?;
        scale(n, mult).ok_or("value too large")
    });
    // Only inside `fio_lenient` does a refused value get fio's reading instead.
    strict.or_else(|e| super::lenient::read(s, kb_base()).ok_or_else(|| e.to_string()))
}

/// A size that may also be a percentage of the file or device (`50%`).
pub(crate) fn parse_size(s: &str) -> Result<SizeSpec, String> {
    if let Some(p) = s.strip_suffix('%') {
        let v: f64 = p
            .parse()
            .map_err(|_| "expected a size such as 4k or 1g, or a percentage such as 50%")?;
        if !(v > 0.0 && v <= 100.0) {
            return Err("a percentage must be above 0 and at most 100".into());
        }
        return Ok(SizeSpec::Percent(v));
    }
    parse_bytes(s).map(SizeSpec::Bytes)
}

/// An integer option; fio lets these carry size suffixes too (`iodepth=1k` is 1024).
pub(crate) fn parse_int(s: &str) -> Result<u64, String> {
    let (num, suffix) = split_number(s).ok_or("expected a whole number")?;
    let n = match parse_number(num).ok_or("expected a whole number")? {
        Number::Int(v) => v,
        Number::Frac(_) => return Err("expected a whole number".into()),
    };
    let mult = size_multiplier(suffix).ok_or("expected a whole number")?;
    n.checked_mul(mult)
        .ok_or_else(|| "value too large".to_string())
}

/// An integer in `lo..=hi`.
pub(crate) fn parse_int_in(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let v = parse_int(s)?;
    if v < lo || v > hi {
        return Err(format!("expected a whole number from {lo} to {hi}"));
    }
    Ok(v)
}

/// fio booleans are 0 or 1 only: `direct=true` is an error in fio, and here.
pub(crate) fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err("expected 0 or 1".into()),
    }
}

/// Unit of a bare number for a time option: seconds for runtime, ramp_time, startdelay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeUnit {
    Seconds,
}

/// A duration: `30`, `30s`, `500ms`, `250us`, `2m` (minutes), `1h`, `1d`.
pub(crate) fn parse_time(s: &str, bare: TimeUnit) -> Result<Duration, String> {
    const HINT: &str = "expected a time such as 30, 30s, 500ms, 2m or 1h";
    let (num, suffix) = split_number(s).ok_or(HINT)?;
    let n = parse_number(num).ok_or(HINT)?;
    let ns_per: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => match bare {
            TimeUnit::Seconds => 1_000_000_000,
        },
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return Err(HINT.into()),
    };
    scale(n, ns_per)
        .map(Duration::from_nanos)
        .ok_or_else(|| "value too large".to_string())
}

/// Splits a per-direction value (read,write,trim) the way fio does: one value applies to all;
/// `4k,8k` gives write and trim 8k; an empty part keeps the default (`8k,` or `,8k`).
pub(crate) fn split_per_direction(s: &str) -> Result<[Option<&str>; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    fn some(p: &str) -> Option<&str> {
        (!p.is_empty()).then_some(p)
    }
    match parts.as_slice() {
        [one] => Ok([some(one), some(one), some(one)]),
        [r, w] => Ok([some(r), some(w), some(w)]),
        [r, w, t] => Ok([some(r), some(w), some(t)]),
        _ => Err("expected at most three comma-separated values (read,write,trim)".into()),
    }
}

/// A Go duration (`time.ParseDuration`): `1m`, `2m30s`, `1.5h`, `300ms`, `10us`/`10µs`, `0`.
/// Negative durations are refused: no iogauge setting can use one.
pub(crate) fn parse_go_duration(s: &str) -> Result<Duration, String> {
    const HINT: &str = "expected a Go duration such as 90s, 2m, 1m30s, 500ms or 1.5h";
    let mut rest = s.strip_prefix('+').unwrap_or(s);
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() || rest.starts_with('-') {
        return Err(HINT.into());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or(HINT)?;
        let (num, after) = rest.split_at(n);
        if num.is_empty() || num == "." {
            return Err(HINT.into());
        }
        let v: f64 = num.parse().map_err(|_| HINT)?;
        let u = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(u);
        let ns = match unit {
            "ns" => 1.0,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(HINT.into()),
        };
        total += v * ns;
        rest = next;
    }
    if total > 9.2e18 {
        return Err("value too large".into());
    }
    Ok(Duration::from_nanos(total.round() as u64))
}

/// A size given to iogauge's own flags (`check --size`): fio's grammar, so `1m` is 1 MiB and `1g`
/// 1 GiB as in `iogauge fio --size=1m`, except that `MiB`/`GiB` mean what they say (fio reads
/// `KiB` as 1000).
pub(crate) fn parse_flag_size(s: &str) -> Result<u64, String> {
    const HINT: &str = "expected a size such as 64m, 512MiB or 1g (m = MiB, g = GiB, as in fio)";
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let t = match lower.strip_suffix("ib") {
        Some(head) if head.ends_with(|c: char| c.is_ascii_alphabetic()) => head.to_string(),
        _ => lower,
    };
    let v = parse_bytes(&t).map_err(|_| HINT.to_string())?;
    if v == 0 {
        return Err("must be above 0".into());
    }
    Ok(v)
}

/// A duration given to iogauge's own flags (`check --duration`): fio's time grammar with bare
/// numbers in seconds (`10` = 10 s, as fio's `runtime=10`), or a Go duration such as `1m30s`.
pub(crate) fn parse_flag_duration(s: &str) -> Result<Duration, String> {
    parse_time(s.trim(), TimeUnit::Seconds)
        .or_else(|_| parse_go_duration(s.trim()))
        .map_err(|_| "expected a time such as 10 (seconds), 30s, 500ms, 2m or 1m30s".to_string())
}

/// A byte count in a troubleshoot spec: a Kubernetes quantity (troubleshoot's meaning; read by
/// [`super::quantity`], the grammar's one reader), refusing one that cannot be meant: `22m` is
/// 22 milli-bytes, not a whole number of bytes.
pub(crate) fn parse_k8s_bytes(s: &str) -> Result<u64, String> {
    use super::quantity::NotWhole;
    const HINT: &str = "expected a Kubernetes quantity such as 22Mi, 100M, 1Gi or 4096";
    let t = s.trim();
    let q = super::quantity::parse(t)
        .ok()
        .filter(|q| !q.is_negative())
        .ok_or(HINT)?;
    match q.whole() {
        Ok(v) => u64::try_from(v).map_err(|_| "value too large".to_string()),
        Err(NotWhole::TooLarge) => Err("value too large".into()),
        Err(NotWhole::Fraction) => {
            let head = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            Err(match t.chars().last() {
                Some('m') => format!(
                    "read as {head} milli-bytes (m = 1/1000 in Kubernetes quantities), which is not a whole number of bytes; did you mean {head}Mi ({head} MiB)?"
                ),
                _ => format!(
                    "read as {} bytes, which is not a whole number of bytes; give a size such as 22Mi",
                    q.approx()
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kb_base_1000_swaps_k_and_kib() {
        assert_eq!(with_kb_base(1000, || parse_bytes("10k")), Ok(10_000));
        assert_eq!(with_kb_base(1000, || parse_bytes("1KiB")), Ok(1024));
        assert_eq!(with_kb_base(1000, || parse_bytes("2m")), Ok(2_000_000));
        assert_eq!(parse_bytes("10k"), Ok(10_240));
    }

    #[test]
    fn sizes_follow_fio_including_the_kib_quirk() {
        for (s, v) in [
            ("4096", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4kb", 4096),
            ("4KB", 4096),
            ("4ki", 4096),
            ("4KiB", 4000),
            ("4kib", 4000),
            ("1m", 1 << 20),
            ("1MiB", 1_000_000),
            ("2g", 2 << 30),
            ("1t", 1 << 40),
            ("1p", 1 << 50),
            ("0x1000", 4096),
            ("1.5k", 1536),
            ("2300", 2300),
            ("512b", 512),
            ("0", 0),
        ] {
            assert_eq!(parse_bytes(s), Ok(v), "{s}");
        }
        for bad in [
            "", "k", "4x", "4kk", "-1", "four", " 8k", "4 k", "1.2.3", "0x",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            parse_bytes("99999999999999999999"),
            Err("expected a size such as 4096, 4k, 64KiB or 1g".into())
        );
        assert_eq!(parse_bytes("20000000e"), Err("value too large".into()));
    }

    #[test]
    fn percentages_are_sizes_relative_to_the_file() {
        assert_eq!(parse_size("50%"), Ok(SizeSpec::Percent(50.0)));
        assert_eq!(parse_size("12.5%"), Ok(SizeSpec::Percent(12.5)));
        assert_eq!(parse_size("8m"), Ok(SizeSpec::Bytes(8 << 20)));
        assert!(parse_size("0%").is_err());
        assert!(parse_size("101%").is_err());
        assert!(parse_size("x%").is_err());
        assert!(parse_bytes("50%").is_err());
    }

    #[test]
    fn integers_take_size_suffixes_but_not_fractions() {
        assert_eq!(parse_int("64"), Ok(64));
        assert_eq!(parse_int("1k"), Ok(1024));
        assert!(parse_int("1.5").is_err());
        assert!(parse_int("").is_err());
        assert_eq!(parse_int_in("75", 0, 100), Ok(75));
        assert_eq!(
            parse_int_in("101", 0, 100),
            Err("expected a whole number from 0 to 100".into())
        );
    }

    #[test]
    fn booleans_are_zero_or_one() {
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        for bad in ["true", "yes", "2", ""] {
            assert_eq!(parse_bool(bad), Err("expected 0 or 1".into()), "{bad}");
        }
    }

    #[test]
    fn times_use_the_options_bare_unit() {
        let s = TimeUnit::Seconds;
        assert_eq!(parse_time("10", s), Ok(Duration::from_secs(10)));
        assert_eq!(parse_time("3s", s), Ok(Duration::from_secs(3)));
        assert_eq!(parse_time("500ms", s), Ok(Duration::from_millis(500)));
        assert_eq!(parse_time("500msec", s), Ok(Duration::from_millis(500)));
        assert_eq!(parse_time("250us", s), Ok(Duration::from_micros(250)));
        assert_eq!(parse_time("2m", s), Ok(Duration::from_secs(120)));
        assert_eq!(parse_time("1h", s), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_time("1d", s), Ok(Duration::from_secs(86400)));
        assert_eq!(parse_time("1.5s", s), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_time("60S", s), Ok(Duration::from_secs(60)));
        for bad in ["", "s", "10x", "10 s", "-1"] {
            assert!(parse_time(bad, s).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn per_direction_lists_follow_fio() {
        assert_eq!(
            split_per_direction("4k"),
            Ok([Some("4k"), Some("4k"), Some("4k")])
        );
        assert_eq!(
            split_per_direction("4k,8k"),
            Ok([Some("4k"), Some("8k"), Some("8k")])
        );
        assert_eq!(split_per_direction("8k,"), Ok([Some("8k"), None, None]));
        assert_eq!(
            split_per_direction(",8k"),
            Ok([None, Some("8k"), Some("8k")])
        );
        assert_eq!(
            split_per_direction("1k,2k,3k"),
            Ok([Some("1k"), Some("2k"), Some("3k")])
        );
        assert!(split_per_direction("1,2,3,4").is_err());
    }
    /// troubleshoot's sizes by the one Kubernetes grammar: what the float reader it had took
    /// differently. Whole values are exact (2^53 + 1 was rounded to 2^53), and 2^64 − 1 fits.
    #[test]
    fn kubernetes_quantities() {
        for (s, v) in [
            ("22Mi", 23_068_672),
            ("22M", 22_000_000),
            ("1Gi", 1 << 30),
            ("10Mi", 10 << 20),
            ("4096", 4096),
            ("1.5Ki", 1536),
            ("1e3", 1000),
            ("100k", 100_000),
            ("+2Ki", 2048),
            (" 2Ki ", 2048),
            ("2000m", 2),
            ("9007199254740993", 9_007_199_254_740_993),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(parse_k8s_bytes(s), Ok(v), "{s}");
        }
        for bad in ["", "Mi", "22MB", "22mi", "-1Gi", "1..2", "22 Mi"] {
            assert_eq!(
                parse_k8s_bytes(bad),
                Err("expected a Kubernetes quantity such as 22Mi, 100M, 1Gi or 4096".into()),
                "{bad:?}"
            );
        }
        for big in ["18446744073709551616", "1e400", "16Ei"] {
            assert_eq!(parse_k8s_bytes(big), Err("value too large".into()), "{big}");
        }
    }

    #[test]
    fn go_durations() {
        let ms = Duration::from_millis;
        for (s, v) in [
            ("1m", ms(60_000)),
            ("2m30s", ms(150_000)),
            ("1.5h", ms(5_400_000)),
            ("300ms", ms(300)),
            ("10us", Duration::from_micros(10)),
            ("10\u{b5}s", Duration::from_micros(10)),
            ("10\u{3bc}s", Duration::from_micros(10)),
            ("5ns", Duration::from_nanos(5)),
            ("0", Duration::ZERO),
            ("2.376ms", Duration::from_micros(2376)),
            ("+1s", ms(1000)),
        ] {
            assert_eq!(parse_go_duration(s), Ok(v), "{s}");
        }
        for bad in ["", "10", "1d", "-1s", "1 s", "s", "1.s.", "ms"] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn own_flags_use_fios_size_and_time_grammar() {
        assert_eq!(parse_flag_size("1m"), Ok(1 << 20));
        assert_eq!(parse_flag_size("1G"), Ok(1 << 30));
        assert_eq!(parse_flag_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_flag_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_flag_size("64Mi"), Ok(64 << 20));
        assert_eq!(parse_flag_size("4KiB"), Ok(4096));
        assert_eq!(parse_flag_size("4096"), Ok(4096));
        assert!(parse_flag_size("0").is_err());
        assert!(parse_flag_size("lots").unwrap_err().contains("m = MiB"));
        assert_eq!(parse_flag_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_flag_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_flag_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_flag_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_flag_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert!(parse_flag_duration("soon").is_err());
    }

    #[test]
    fn troubleshoot_sizes_refuse_fractions_of_bytes() {
        assert_eq!(parse_k8s_bytes("22Mi"), Ok(22 << 20));
        assert_eq!(parse_k8s_bytes("100M"), Ok(100_000_000));
        assert_eq!(parse_k8s_bytes("4096"), Ok(4096));
        assert_eq!(parse_k8s_bytes("1.5Ki"), Ok(1536));
        assert_eq!(
            parse_k8s_bytes("22m").unwrap_err(),
            "read as 22 milli-bytes (m = 1/1000 in Kubernetes quantities), which is not a whole number of bytes; did you mean 22Mi (22 MiB)?"
        );
        assert!(parse_k8s_bytes("0.5")
            .unwrap_err()
            .starts_with("read as 0.5 bytes"));
        assert!(parse_k8s_bytes("1500u").is_err());
    }
}
