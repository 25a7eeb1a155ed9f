//! Strings that come from outside (job, profile and target names, hostnames, paths, documents
//! read back) made safe for where they are printed: a terminal, where control characters would
//! be obeyed (ESC sequences retitle the window, clear the screen or rewrite earlier lines), and a
//! CSV file, where a spreadsheet runs a cell that starts like a formula. Every text renderer uses
//! these two functions for such strings; JSON output needs neither (serde escapes controls).
//! `shorten` cuts a long user-written name for a message.

use std::borrow::Cow;
use std::fmt::Write;

/// Characters a terminal would act on instead of showing: C0 and C1 controls and DEL, and the
/// bidirectional overrides that make text display in another order than it reads.
fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` for a terminal: each control character as a visible escape (`\x1b`, `\n`, `\u{9b}`), so
/// it is shown, never obeyed. Ordinary text (any language) is unchanged.
pub(crate) fn term(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if hidden(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A CSV text cell (RFC 4180 quoting), neutralised as OWASP's CSV injection guidance says: a
/// cell starting with `=`, `+`, `-`, `@`, tab or carriage return gets a leading `'` and is
/// quoted, so a spreadsheet shows it as text instead of evaluating it. Only text goes through
/// here: numbers iogauge formats itself (a negative one starts with `-`) are written as they
/// are, since they cannot carry a formula and must stay numbers for the spreadsheet.
pub(crate) fn csv_text(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula {
        format!("\"'{}\"", s.replace('"', "\"\""))
    } else if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A long user-written name shortened for a message (an option name of a megabyte would
/// otherwise be printed whole): its first 40 characters, then how long it was.
pub(crate) fn shorten(s: &str) -> String {
    const SHOWN: usize = 40;
    match s.char_indices().nth(SHOWN) {
        None => s.to_string(),
        Some((i, _)) => format!("{}… ({} bytes)", &s[..i], s.len()),
    }
}

/// A message from outside (a registry, a helper program) made safe for a terminal, trimmed and
/// cut at 500 characters, with its full length said.
pub(crate) fn capped(s: &str) -> String {
    const CAP: usize = 500;
    let s = term(s.trim());
    match s.char_indices().nth(CAP) {
        None => s.into_owned(),
        Some((i, _)) => format!("{}… ({} bytes)", &s[..i], s.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(term("etcd"), "etcd");
        assert_eq!(term("naïve 日本"), "naïve 日本");
        assert_eq!(term("\x1b]0;pwned\x07x"), "\\x1b]0;pwned\\x07x");
        assert_eq!(term("a\nb\tc\r\x7f"), "a\\nb\\tc\\r\\x7f");
        assert_eq!(term("\u{9b}2J \u{202e}abc"), "\\u{9b}2J \\u{202e}abc");
    }

    #[test]
    fn formula_cells_are_neutralised_and_quoted() {
        assert_eq!(
            csv_text("=HYPERLINK(\"http://x\",\"y\")"),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\""
        );
        for s in ["+1", "-1", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(csv_text(s), format!("\"'{s}\""));
        }
        assert_eq!(csv_text("a,b"), "\"a,b\"");
        assert_eq!(csv_text("a=b"), "a=b");
        assert_eq!(csv_text(""), "");
    }
}
