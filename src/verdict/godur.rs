//! Go's `time.Duration.String()`, because troubleshoot messages print durations that way:
//! `2.376ms`, `850µs`, `1.5s`, `2m0s`, `1h0m0s`, `0s`.

/// `v / unit` with the remainder as a decimal fraction, trailing zeros trimmed.
fn with_fraction(v: u64, unit: u64) -> String {
    let (int, rem) = (v / unit, v % unit);
    if rem == 0 {
        return int.to_string();
    }
    let digits = unit.ilog10() as usize;
    let frac = format!("{rem:0digits$}");
    format!("{int}.{}", frac.trim_end_matches('0'))
}

pub(crate) fn go_duration(ns: u64) -> String {
    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;
    match ns {
        0 => "0s".into(),
        n if n < US => format!("{n}ns"),
        n if n < MS => format!("{}\u{b5}s", with_fraction(n, US)),
        n if n < S => format!("{}ms", with_fraction(n, MS)),
        n => {
            let (h, m) = (n / (3600 * S), n / (60 * S) % 60);
            let secs = with_fraction(n % (60 * S), S);
            match (h, m) {
                (0, 0) => format!("{secs}s"),
                (0, m) => format!("{m}m{secs}s"),
                (h, m) => format!("{h}h{m}m{secs}s"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::go_duration;

    #[test]
    fn formats_like_go() {
        for (ns, s) in [
            (0, "0s"),
            (5, "5ns"),
            (999, "999ns"),
            (1_000, "1\u{b5}s"),
            (850_000, "850\u{b5}s"),
            (1_500, "1.5\u{b5}s"),
            (2_376_000, "2.376ms"),
            (4_464_537, "4.464537ms"),
            (1_000_000, "1ms"),
            (1_500_000_000, "1.5s"),
            (120_000_000_000, "2m0s"),
            (90_500_000_000, "1m30.5s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_000_000_001, "1h2m3.000000001s"),
        ] {
            assert_eq!(go_duration(ns), s, "{ns}");
        }
    }
}
