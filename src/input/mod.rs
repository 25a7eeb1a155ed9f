//! Translators from what users write into the job model: fio's command line and job files
//! (`fio/`), troubleshoot specs (`troubleshoot/`) and `check` profiles (`profiles/`). Every
//! translator produces the same `JobSpec`; nothing downstream knows where a job came from.

pub(crate) mod fio;
pub(crate) mod profiles;
pub(crate) mod suggest;
pub(crate) mod troubleshoot;

use std::io::Read;

/// Why [`read_limited`] returned no text.
#[derive(Debug)]
pub(crate) enum ReadError {
    Io(std::io::Error),
    /// More than the limit (the limit).
    TooLarge(u64),
    /// Not UTF-8: the offset of the first bad byte.
    NotText(usize),
}

impl ReadError {
    /// The message, with `what` naming the input ("job file 'x'").
    pub(crate) fn describe(&self, what: &str) -> String {
        match self {
            ReadError::Io(e) => format!("cannot read {what}: {e}"),
            ReadError::TooLarge(limit) => format!(
                "{what} is larger than {}, the most iogauge reads; is it the right file?",
                size_words(*limit)
            ),
            ReadError::NotText(at) => {
                format!("{what} is not UTF-8 text (invalid byte at offset {at})")
            }
        }
    }
}

/// Reads at most `limit` bytes of text from `r`: one byte more than that is an error naming
/// the limit, so `/dev/zero`, an endless pipe or a huge file cost `limit` bytes of memory and
/// the time to read them, never more.
pub(crate) fn read_limited(r: impl Read, limit: u64) -> Result<String, ReadError> {
    let mut buf = Vec::new();
    r.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(ReadError::Io)?;
    if buf.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    String::from_utf8(buf).map_err(|e| ReadError::NotText(e.utf8_error().valid_up_to()))
}

/// [`read_limited`] with its message; `what` names the input ("profile 'x'").
pub(crate) fn read_capped(r: impl Read, limit: u64, what: &str) -> Result<String, String> {
    read_limited(r, limit).map_err(|e| e.describe(what))
}

/// `16 MiB (16777216 bytes)`: a limit as people and scripts both read it.
pub(crate) fn size_words(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB ({bytes} bytes)", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB ({bytes} bytes)", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

pub(crate) use crate::untrusted::shorten;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_limit_and_refuses_one_byte_more() {
        assert_eq!(read_capped(&b"abcd"[..], 4, "x").unwrap(), "abcd");
        assert_eq!(
            read_capped(&b"abcde"[..], 4, "job file 'j'").unwrap_err(),
            "job file 'j' is larger than 4 bytes, the most iogauge reads; is it the right file?"
        );
        assert_eq!(
            read_capped(std::io::repeat(0).take(3 << 20), 1 << 20, "spec 's'").unwrap_err(),
            "spec 's' is larger than 1 MiB (1048576 bytes), the most iogauge reads; is it the \
             right file?"
        );
        assert_eq!(
            read_capped(&b"a\xffb"[..], 4, "x").unwrap_err(),
            "x is not UTF-8 text (invalid byte at offset 1)"
        );
    }
}
