//! `iogauge fio`'s reading of sizes that iogauge's grammar (`units.rs`) refuses but fio 3.33
//! accepts: fio's str_to_decimal takes the leading number and ignores what follows
//! (`filesize=65536)`), so iogauge reads those values alike, with a note for each. Only while
//! [`fio_lenient`] runs; profiles and troubleshoot specs stay strict.

/// The size fio reads in `s` under `kb_base` = `kb`, noted, when inside [`fio_lenient`]; None
/// outside it or when fio refuses `s` too. (`kb` is passed in by `units.rs`, which this module
/// does not import: no cycle.)
pub(super) fn read(s: &str, kb: u64) -> Option<u64> {
    if !LENIENT.with(|l| l.borrow().is_some()) {
        return None;
    }
    let (v, read) = fio_bytes(s, kb)?;
    LENIENT.with(|l| {
        if let Some(notes) = l.borrow_mut().as_mut() {
            notes.push(format!(
                "'{s}' read as {v} bytes ('{read}'), as fio 3.33 reads it: fio ignores what follows"
            ));
        }
    });
    Some(v)
}

/// fio's str_to_decimal for sizes: the leading integer (strtoll), then a unit only if a letter
/// follows it directly, matched by its first letters up to a separator (`:`, `-`, `,`, `/`),
/// and anything else ignored: `65536)` is 65536, `1k:25:2k` is 1024. Returns the value and
/// the part read.
fn fio_bytes(s: &str, kb: u64) -> Option<(u64, &str)> {
    let b = s.as_bytes();
    let sign = usize::from(matches!(b.first(), Some(b'+')));
    let digits = b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let n: u64 = s[sign..sign + digits].parse().ok()?;
    let rest = &s[sign + digits..];
    if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Some((n, &s[..sign + digits]));
    }
    let unit_len = rest.find([':', '-', ',', '/']).unwrap_or(rest.len());
    let unit = rest[..unit_len].to_ascii_lowercase();
    let other = if kb == 1000 { 1024 } else { 1000 };
    // fio compares "kib" over three letters first, then "k" over one: "kx" is k, "kibi" kib.
    let (pow, base, used) = ["p", "t", "g", "m", "k"]
        .iter()
        .zip([5u32, 4, 3, 2, 1])
        .find_map(|(p, pow)| {
            if unit.strip_prefix(p).is_some_and(|r| r.starts_with("ib")) {
                Some((pow, other, 3))
            } else if unit.starts_with(p) {
                Some((pow, kb, 1))
            } else {
                None
            }
        })
        // Any other letter: fio's multiplier 1.
        .unwrap_or((0, 1, 0));
    let v = n.checked_mul(base.checked_pow(pow)?)?;
    let end = sign + digits + used.min(unit_len);
    Some((v, &s[..end]))
}

thread_local! {
    /// Notes of values read leniently, while [`fio_lenient`] runs (None otherwise: strict).
    static LENIENT: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` reading sizes as fio 3.33 does where this grammar is stricter (trailing characters
/// ignored); returns what `f` returned and a note for each value read that way.
pub(crate) fn fio_lenient<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let before = LENIENT.with(|l| l.replace(Some(Vec::new())));
    let r = f();
    let notes = LENIENT.with(|l| l.replace(before)).unwrap_or_default();
    (r, notes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn fio_leniency_reads_what_fio_reads_and_notes_it() {
        use super::fio_lenient;
        use crate::model::units::parse_bytes;
        // Outside fio_lenient: refused, as before.
        assert!(parse_bytes("65536)").is_err());
        let (r, notes) = fio_lenient(|| {
            [
                "65536)", "512/25", "1k:25:2k", "4kx", "2kib/x", "8bytes", "4k", "x1", "1.5g",
            ]
            .map(|s| parse_bytes(s).ok())
        });
        assert_eq!(
            r,
            [
                Some(65536),
                Some(512),
                Some(1024),
                Some(4096),
                Some(2000),
                Some(8),
                Some(4096),
                None,
                Some(1_610_612_736)
            ]
        );
        assert_eq!(notes.len(), 6, "{notes:?}");
        assert_eq!(
            notes[0],
            "'65536)' read as 65536 bytes ('65536'), as fio 3.33 reads it: fio ignores what follows"
        );
        assert!(
            notes[2].contains("'1k:25:2k' read as 1024 bytes ('1k')"),
            "{notes:?}"
        );
    }
}
