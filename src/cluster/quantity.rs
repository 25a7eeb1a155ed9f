//! Kubernetes quantities for claim sizes (`20Gi`, `500M`, `1073741824`): Kubernetes' own
//! grammar, not fio's, because the value goes into a PersistentVolumeClaim as written and a
//! user reading the manifest must see the claim they asked for.

/// Bytes in a Kubernetes quantity: binary suffixes Ki Mi Gi Ti Pi Ei, decimal k M G T P E, or
/// a plain integer. Fractions are allowed where the result is whole bytes (`1.5Gi`).
pub(crate) fn parse_bytes(v: &str) -> Result<u64, String> {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let mult: u64 = match suffix {
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
    let n: f64 = num.parse().map_err(|_| {
        format!("'{v}' is not a Kubernetes quantity: expected a number first, e.g. 20Gi")
    })?;
    let bytes = n * mult as f64;
    if bytes < 1.0 || bytes >= u64::MAX as f64 || bytes.fract() != 0.0 {
        return Err(format!(
            "'{v}' is not a whole, positive number of bytes; e.g. 20Gi"
        ));
    }
    Ok(bytes as u64)
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
        assert_eq!(format_bytes(20 << 30), "20Gi");
        assert_eq!(format_bytes(1536 << 20), "1536Mi");
        assert_eq!(format_bytes(1000), "1000");
    }
}
