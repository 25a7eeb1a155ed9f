//! Kubernetes quantities for claim sizes (`20Gi`, `500M`, `1073741824`): Kubernetes' own
//! grammar, not fio's, because the value goes into a PersistentVolumeClaim as written and a
//! user reading the manifest must see the claim they asked for.

/// The largest claim `--size` asks for: 1 PiB. The largest single volumes clouds offer are tens
/// of TiB (64 TiB for EBS io2, Azure Ultra, GCP Hyperdisk); a larger request is a typo, and near
/// 8 EiB it would not even fit the API server's 64-bit quantity.
pub(crate) const MAX_CLAIM_BYTES: u64 = 1 << 50;

/// Bytes in a Kubernetes quantity: binary suffixes Ki Mi Gi Ti Pi Ei, decimal k M G T P E, or
/// a plain integer. Fractions are allowed where the result is whole bytes (`1.5Gi`). Computed
/// exactly (no floating point, so a long integer is not rounded), at most [`MAX_CLAIM_BYTES`].
pub(crate) fn parse_bytes(v: &str) -> Result<u64, String> {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let mult: u128 = match suffix {
        "" => 1,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "Pi" => 1 << 50,
        "Ei" => 1 << 60,
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "P" => 1_000_000_000_000_000,
        "E" => 1_000_000_000_000_000_000,
        _ => {
            return Err(format!(
                "'{v}' is not a Kubernetes quantity: expected a number with Ki, Mi, Gi, Ti \
                 (powers of 1024) or k, M, G, T (powers of 1000), e.g. 20Gi"
            ))
        }
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let not_number =
        || format!("'{v}' is not a Kubernetes quantity: expected a number first, e.g. 20Gi");
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(not_number());
    }
    let too_big =
        || format!("'{v}' is larger than 1Pi, the most a claim may ask for here; e.g. 20Gi");
    let not_whole = || format!("'{v}' is not a whole, positive number of bytes; e.g. 20Gi");
    // value = digits / 10^len(frac) × mult. Trailing zeros of the fraction change nothing;
    // more than 18 other fraction digits never make whole bytes (no suffix has 10^19 in it).
    let frac = frac.trim_end_matches('0');
    if frac.len() > 18 {
        return Err(not_whole());
    }
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > 38 {
        return Err(too_big());
    }
    let n: u128 = if digits.is_empty() {
        0
    } else {
        digits.parse().map_err(|_| not_number())?
    };
    let scale = 10u128.pow(frac.len() as u32);
    // An overflow here means at least 3.4e38 / 1e18 bytes: far above the limit.
    let scaled = n.checked_mul(mult).ok_or_else(too_big)?;
    if scaled == 0 || !scaled.is_multiple_of(scale) {
        return Err(not_whole());
    }
    let bytes = scaled / scale;
    if bytes > u128::from(MAX_CLAIM_BYTES) {
        return Err(too_big());
    }
    u64::try_from(bytes).map_err(|_| too_big())
}

/// Whether `v` is a Kubernetes quantity the API server accepts for a resource request or limit
/// (no sign: a negative request is refused there too): digits with an optional fraction, then
/// nothing, a binary suffix (Ki … Ei), a decimal one (n u m k M G T P E) or an exponent (e3).
pub(crate) fn is_resource_quantity(v: &str) -> bool {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let number = match num.split_once('.') {
        Some((a, b)) => !(b.contains('.') || a.is_empty() && b.is_empty()),
        None => !num.is_empty(),
    };
    let exponent = |e: &str| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    number
        && match suffix {
            "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G"
            | "T" | "P" | "E" => true,
            _ => suffix.strip_prefix(['e', 'E']).is_some_and(exponent),
        }
}

/// The quantity a manifest shows for `bytes`: the largest binary unit that divides it.
pub(crate) fn format_bytes(bytes: u64) -> String {
    for (suffix, shift) in [("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn resource_quantities_follow_the_api_server_grammar() {
        for ok in [
            "100m", "1", "0.5", ".5", "2.", "64Mi", "1Gi", "1e3", "1E-2", "500u",
        ] {
            assert!(is_resource_quantity(ok), "{ok}");
        }
        for bad in [
            "", "abc", "1.5.5Gi", "-1", "+1", "1 Gi", "1x", "1e", "Mi", ".", "1mi",
        ] {
            assert!(!is_resource_quantity(bad), "{bad}");
        }
    }

    #[test]
    fn quantities() {
        assert_eq!(parse_bytes("20Gi").unwrap(), 20 << 30);
        assert_eq!(parse_bytes("1.5Gi").unwrap(), 3 << 29);
        assert_eq!(parse_bytes("500M").unwrap(), 500_000_000);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("1k").unwrap(), 1000);
        assert!(parse_bytes("20GB").unwrap_err().contains("e.g. 20Gi"));
        assert!(parse_bytes("Gi").unwrap_err().contains("a number first"));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("0.5").is_err());
        // Exact: no rounding through floating point; 1 PiB at most.
        assert_eq!(parse_bytes("1125899906842623").unwrap(), (1 << 50) - 1);
        assert_eq!(parse_bytes("1Pi").unwrap(), 1 << 50);
        assert_eq!(parse_bytes("0.25Ki").unwrap(), 256);
        assert_eq!(parse_bytes("007Gi").unwrap(), 7 << 30);
        for big in [
            "1Ei",
            "1025Ti",
            "1125899906842625",
            "8E",
            "99999999999999999999999999999999999Ei",
        ] {
            assert_eq!(
                parse_bytes(big).unwrap_err(),
                format!("'{big}' is larger than 1Pi, the most a claim may ask for here; e.g. 20Gi")
            );
        }
        assert!(parse_bytes("1.2.3Gi")
            .unwrap_err()
            .contains("a number first"));
        assert!(parse_bytes(".").unwrap_err().contains("a number first"));
        assert_eq!(
            parse_bytes("1.000000000000000000000000000Gi").unwrap(),
            1 << 30
        );
        assert!(parse_bytes("1.0000000000000000001Gi")
            .unwrap_err()
            .contains("not a whole"));
        assert!(parse_bytes("0.000Gi").unwrap_err().contains("not a whole"));
        assert_eq!(format_bytes(20 << 30), "20Gi");
        assert_eq!(format_bytes(1536 << 20), "1536Mi");
        assert_eq!(format_bytes(1000), "1000");
    }
}
