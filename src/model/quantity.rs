//! Kubernetes quantities (`20Gi`, `500M`, `1e9`, `100m`): the one reader of apimachinery's
//! `resource.Quantity` grammar, used for claim sizes and resource requests (`cluster/quantity.rs`)
//! and troubleshoot's `fileSize` (`units::parse_k8s_bytes`). Each caller decides only what it
//! accepts of the value (whole bytes, a limit, no sign) and how it words a refusal.
//!
//! The grammar (apimachinery `quantity.go`): an optional sign, digits with an optional fraction
//! (`1`, `1.5`, `.5`, `2.`), then nothing, a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal one
//! (n u m k M G T P E) or a decimal exponent (`e3`, `E-2`). No spaces, no other case (`1mi`,
//! `1K`, `1 Gi` are refused, as the API server refuses them). The value is kept exact, as
//! digits and powers of ten and two, so no long integer is rounded through floating point.

/// A quantity as written: ±digits × 10^exp10 × 2^exp2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Quantity {
    negative: bool,
    /// The significant digits, without leading or trailing zeros ("" for zero).
    digits: String,
    exp10: i64,
    exp2: u32,
}

/// Which part of a string is not Kubernetes' grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No number where one must be (`Gi`, `.`, `1.2.3`).
    Number,
    /// A suffix Kubernetes does not have (`GB`, `mi`, ` Gi`, `e`).
    Suffix,
}

/// Why a quantity is not a whole number that fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotWhole {
    /// It has a fractional part (`1500m`, `0.5`).
    Fraction,
    /// It is larger than 2^128 − 1 (or written with more than 38 significant digits above 1).
    TooLarge,
}

/// Exponents beyond this are as good as infinite here, and keep the arithmetic in range.
const MAX_EXPONENT: i64 = 1_000_000;

/// Reads `s` by Kubernetes' grammar (see the module comment).
pub(crate) fn parse(s: &str) -> Result<Quantity, Refused> {
    let (negative, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (num, suffix) = rest.split_at(end);
    let (exp10, exp2): (i64, u32) = match suffix {
        "" => (0, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        _ => (exponent(suffix).ok_or(Refused::Suffix)?, 0),
    };
    // The suffix first: "abc" is a wrong suffix more than a missing number.
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(Refused::Number);
    }
    let all = format!("{int}{frac}");
    let lead = all.trim_start_matches('0');
    let digits = lead.trim_end_matches('0');
    if digits.is_empty() {
        return Ok(Quantity {
            negative: false,
            digits: String::new(),
            exp10: 0,
            exp2: 0,
        });
    }
    // Trailing zeros of the digits move into the exponent; the fraction's length moves out.
    let exp10 = exp10 + (lead.len() - digits.len()) as i64 - frac.len() as i64;
    Ok(Quantity {
        negative,
        digits: digits.to_string(),
        exp10,
        exp2,
    })
}

/// The power of ten of an exponent suffix (`e3`, `E-2`, `e+6`), saturated at ±[`MAX_EXPONENT`].
fn exponent(suffix: &str) -> Option<i64> {
    let e = suffix.strip_prefix(['e', 'E'])?;
    let (neg, digits) = match e.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, e.strip_prefix('+').unwrap_or(e)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v = digits
        .parse::<i64>()
        .unwrap_or(MAX_EXPONENT)
        .min(MAX_EXPONENT);
    Some(if neg { -v } else { v })
}

impl Quantity {
    /// Below zero (`-0` is zero, not negative).
    pub(crate) fn is_negative(&self) -> bool {
        self.negative
    }

    /// The magnitude as a whole number, exactly, or why it is not one.
    pub(crate) fn whole(&self) -> Result<u128, NotWhole> {
        if self.digits.is_empty() {
            return Ok(0);
        }
        let Ok(n) = self.digits.parse::<u128>() else {
            // More than 38 significant digits: huge, unless most of them are a fraction.
            let int_digits = self.digits.len() as i64 + self.exp10;
            return Err(if self.exp10 < 0 && int_digits <= 38 {
                NotWhole::Fraction
            } else {
                NotWhole::TooLarge
            });
        };
        let two = 1u128 << self.exp2;
        if self.exp10 >= 0 {
            let ten = u32::try_from(self.exp10)
                .ok()
                .and_then(|e| 10u128.checked_pow(e))
                .ok_or(NotWhole::TooLarge)?;
            return n
                .checked_mul(ten)
                .and_then(|v| v.checked_mul(two))
                .ok_or(NotWhole::TooLarge);
        }
        // n·2^exp2 / 10^k: n has no factor 10, so 5^k must divide n and 2^k must divide n·2^exp2.
        // 5^56 > 2^128 > n, so beyond k = 55 no n is a multiple.
        let k = u32::try_from(-self.exp10).unwrap_or(u32::MAX);
        if k > 55 || !n.is_multiple_of(5u128.pow(k)) {
            return Err(NotWhole::Fraction);
        }
        let m = n / 5u128.pow(k);
        if self.exp2 >= k {
            m.checked_mul(1u128 << (self.exp2 - k))
                .ok_or(NotWhole::TooLarge)
        } else {
            let shift = k - self.exp2;
            if m.trailing_zeros() < shift {
                return Err(NotWhole::Fraction);
            }
            Ok(m >> shift)
        }
    }

    /// The value as a float, for messages only.
    pub(crate) fn approx(&self) -> f64 {
        let d: f64 = self.digits.parse().unwrap_or(0.0);
        let v = d * 10f64.powi(self.exp10.clamp(-400, 400) as i32) * 2f64.powi(self.exp2 as i32);
        if self.negative {
            -v
        } else {
            v
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn whole(s: &str) -> Result<u128, NotWhole> {
        parse(s).unwrap().whole()
    }

    #[test]
    fn the_grammar_is_kubernetes() {
        for ok in [
            "1", "0", "0.5", ".5", "2.", "+1", "-1", "64Mi", "1Gi", "1e3", "1E-2", "1e+3", "500u",
            "3n", "100m", "1k", "1E", "007Gi",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("", Refused::Number),
            (".", Refused::Number),
            ("Mi", Refused::Number),
            ("1.5.5Gi", Refused::Number),
            ("+-1", Refused::Suffix),
            ("abc", Refused::Suffix),
            ("1 Gi", Refused::Suffix),
            ("1x", Refused::Suffix),
            ("1e", Refused::Suffix),
            ("1e-", Refused::Suffix),
            ("1mi", Refused::Suffix),
            ("1K", Refused::Suffix),
            ("20GB", Refused::Suffix),
            ("1Gi ", Refused::Suffix),
        ] {
            assert_eq!(parse(bad), Err(why), "{bad:?}");
        }
        assert!(parse("-1Gi").unwrap().is_negative());
        assert!(!parse("-0").unwrap().is_negative());
    }

    #[test]
    fn values_are_exact() {
        assert_eq!(whole("20Gi"), Ok(20 << 30));
        assert_eq!(whole("1.5Gi"), Ok(3 << 29));
        assert_eq!(whole("0.25Ki"), Ok(256));
        assert_eq!(whole("500M"), Ok(500_000_000));
        assert_eq!(whole("1e9"), Ok(1_000_000_000));
        assert_eq!(whole("1.5e3"), Ok(1500));
        assert_eq!(whole("1500m"), Err(NotWhole::Fraction));
        assert_eq!(whole("2000m"), Ok(2));
        assert_eq!(whole("2000000000n"), Ok(2));
        assert_eq!(whole("0.5"), Err(NotWhole::Fraction));
        assert_eq!(whole("0.5Ki"), Ok(512));
        assert_eq!(whole("1Ei"), Ok(1 << 60));
        assert_eq!(whole("0"), Ok(0));
        assert_eq!(whole("0.000Gi"), Ok(0));
        // 2^53 + 1 is not a float: read exactly.
        assert_eq!(whole("9007199254740993"), Ok(9_007_199_254_740_993));
        assert_eq!(whole("1e38"), Ok(10u128.pow(38)));
        assert_eq!(whole("1e39"), Err(NotWhole::TooLarge));
        assert_eq!(whole("1e999999999999"), Err(NotWhole::TooLarge));
        assert_eq!(whole("1e-999999999999"), Err(NotWhole::Fraction));
        assert_eq!(whole(&"9".repeat(39)), Err(NotWhole::TooLarge));
        assert_eq!(
            whole(&format!("0.{}", "1".repeat(40))),
            Err(NotWhole::Fraction)
        );
        assert!((parse("1500u").unwrap().approx() - 0.0015).abs() < 1e-15);
        assert_eq!(parse("-2Ki").unwrap().approx(), -2048.0);
    }
}
