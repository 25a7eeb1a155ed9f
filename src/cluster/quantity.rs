//! Kubernetes quantities for claim sizes (`20Gi`, `500M`, `1073741824`): Kubernetes' own
//! grammar, not fio's, because the value goes into a PersistentVolumeClaim as written and a
//! user reading the manifest must see the claim they asked for.

/// The largest claim `--size` asks for: 1 PiB. The largest single volumes clouds offer are tens
/// of TiB (64 TiB for EBS io2, Azure Ultra, GCP Hyperdisk); a larger request is a typo, and near
/// 8 EiB it would not even fit the API server's 64-bit quantity.
pub(crate) const MAX_CLAIM_BYTES: u64 = 1 << 50;

/// Bytes in a Kubernetes quantity ([`crate::model::quantity`], the one reader of the grammar):
/// binary suffixes Ki Mi Gi Ti Pi Ei, decimal ones (k M G T P E, and m u n where the result is
/// whole bytes), an exponent (`1e9`), or a plain integer. Fractions are allowed where the result
/// is whole bytes (`1.5Gi`). Exact, positive, at most [`MAX_CLAIM_BYTES`].
pub(crate) fn parse_bytes(v: &str) -> Result<u64, String> {
    use crate::model::quantity::{parse, NotWhole, Refused};
    let too_big =
        || format!("'{v}' is larger than 1Pi, the most a claim may ask for here; e.g. 20Gi");
    let not_whole = || format!("'{v}' is not a whole, positive number of bytes; e.g. 20Gi");
    let q = parse(v).map_err(|r| match r {
        Refused::Number => {
            format!("'{v}' is not a Kubernetes quantity: expected a number first, e.g. 20Gi")
        }
        Refused::Suffix => format!(
            "'{v}' is not a Kubernetes quantity: expected a number with Ki, Mi, Gi, Ti \
             (powers of 1024) or k, M, G, T (powers of 1000), e.g. 20Gi"
        ),
    })?;
    if q.is_negative() {
        return Err(not_whole());
    }
    let bytes = q.whole().map_err(|e| match e {
        NotWhole::Fraction => not_whole(),
        NotWhole::TooLarge => too_big(),
    })?;
    if bytes == 0 {
        return Err(not_whole());
    }
    if bytes > u128::from(MAX_CLAIM_BYTES) {
        return Err(too_big());
    }
    u64::try_from(bytes).map_err(|_| too_big())
}

/// Whether `v` is a Kubernetes quantity the API server accepts for a resource request or limit
/// ([`crate::model::quantity`]'s grammar), and not negative: a negative request is refused
/// there too.
pub(crate) fn is_resource_quantity(v: &str) -> bool {
    crate::model::quantity::parse(v).is_ok_and(|q| !q.is_negative())
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
            // Kubernetes takes a plus sign; this check refused it before the grammar was one.
            "+1",
        ] {
            assert!(is_resource_quantity(ok), "{ok}");
        }
        for bad in [
            "", "abc", "1.5.5Gi", "-1", "1 Gi", "1x", "1e", "Mi", ".", "1mi",
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
        assert_eq!(format_bytes(1000), "1000");
    }

    /// What the three readers of the grammar (claim sizes, resource requests, troubleshoot's
    /// fileSize) once accepted differently, now one rule: claim sizes take exponents, a plus
    /// sign and m/u/n where the bytes are whole, as the API server does; a negative size is
    /// refused as not positive, not as an unknown suffix.
    #[test]
    fn claim_sizes_take_all_of_the_grammar() {
        assert_eq!(parse_bytes("1e9").unwrap(), 1_000_000_000);
        assert_eq!(parse_bytes("5E3").unwrap(), 5000);
        assert_eq!(parse_bytes("+20Gi").unwrap(), 20 << 30);
        assert_eq!(parse_bytes("2000m").unwrap(), 2);
        assert_eq!(
            parse_bytes("1500m").unwrap_err(),
            "'1500m' is not a whole, positive number of bytes; e.g. 20Gi"
        );
        assert_eq!(
            parse_bytes("-20Gi").unwrap_err(),
            "'-20Gi' is not a whole, positive number of bytes; e.g. 20Gi"
        );
        assert_eq!(
            parse_bytes("1e16").unwrap_err(),
            "'1e16' is larger than 1Pi, the most a claim may ask for here; e.g. 20Gi"
        );
        assert!(parse_bytes("1e")
            .unwrap_err()
            .contains("expected a number with Ki"));
        assert_eq!(format_bytes(1536 << 20), "1536Mi");
    }
}
