//! `iogauge report RESULT.json -o FILE.html`: a saved document as an HTML page; `files.rs` reads
//! a saved document and writes the page that `--report FILE` asks of check, preflight, fio and
//! kube check.

mod files;
pub(crate) use files::{output_file, read_document, write_report};

use super::{Ended, Error, Kind, Outcome};
use crate::output_file::write_file;
use crate::report::html::render_json_html;
use std::path::{Path, PathBuf};

/// Renders a saved JSON document as one self-contained HTML file.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Reads what 'check --format json', 'kube check --format json', preflight (preflight.iogauge.json)
or 'fio --output-format=json' wrote; of a '--status-interval' stream (one document per interval,
then the run's), the last. 'iogauge fio' JSON has the charts over time with --json-intervals.
Exit codes: 0 written, 1 cannot write, 2 bad input.")]
pub(crate) struct ReportArgs {
    /// The JSON document; '-' reads stdin
    #[arg(value_name = "RESULT.json")]
    input: PathBuf,
    /// Where to write the page [default: stdout]
    #[arg(short, long, value_name = "FILE.html")]
    output: Option<PathBuf>,
}

pub(crate) fn main(a: ReportArgs) -> Ended {
    let name = if a.input == Path::new("-") {
        "stdin".to_string()
    } else {
        a.input.display().to_string()
    };
    let text = match read_document(&a.input) {
        Ok(t) => t,
        Err(e) => return Err(Error::bad_input(format!("cannot read {name}: {e}"))),
    };
    // fio's --status-interval writes one whole document per interval, then the run's result:
    // the last complete one is what the run measured.
    let (range, found) = match documents(&text) {
        Ok((ranges, cut)) if ranges.len() > 1 || (cut && !ranges.is_empty()) => {
            let n = ranges.len();
            let last = ranges[n - 1].clone();
            let what = if cut {
                format!(
                    "{n} complete JSON documents and an incomplete one after them (a \
                     --status-interval stream cut short?); rendering the last complete one, \
                     the results as of its interval, not the run's end"
                )
            } else {
                format!(
                    "{n} JSON documents, one after another (fio's --status-interval output); \
                     rendering the last, the run's result"
                )
            };
            (last, Some(what))
        }
        // JSON documents, then something else (text output mixed in): say what was found.
        Err((n, e)) if n > 0 => {
            return Err(Error::bad_input(format!(
                "{name} holds {n} JSON document{}, then something that is not \
                 JSON ({e}); expected JSON documents only, as --output-format=json writes them \
                 (with several formats, fio mixes text in: use json alone)",
                if n == 1 { "" } else { "s" }
            )));
        }
        // One document, nothing at all, or not JSON: parsed whole, for its own message.
        _ => (0..text.len(), None),
    };
    if let Some(what) = &found {
        eprintln!("iogauge report: {name} holds {what}");
    }
    let v: serde_json::Value = match crate::report::bounded::parse(&text[range]) {
        Ok(v) => v,
        Err(e) if e.is_data() => {
            return Err(Error::bad_input(format!("cannot render {name}: {e}")));
        }
        Err(e) => {
            return Err(Error::bad_input(format!(
                "{name} is not JSON ({e}); expected a document iogauge wrote with \
                 --format json or fio's --output-format=json"
            )));
        }
    };
    // The text is no longer needed: freed before the page is built, to lower the peak.
    drop(text);
    let html = match render_json_html(&v) {
        Ok(h) => h,
        Err(e) => return Err(Error::bad_input(format!("{name}: {e}"))),
    };
    match &a.output {
        Some(p) if p != Path::new("-") => match write_file(p, html.as_bytes()) {
            Ok(()) => Ok(Outcome::Pass),
            Err(e) => Err(Error::new(Kind::of_output(&e), e.to_string())),
        },
        _ => {
            super::stdout::write(html.as_bytes());
            Ok(Outcome::Pass)
        }
    }
}

/// The byte ranges of the complete JSON documents in a text, and whether an incomplete one
/// follows them.
type Documents = (Vec<std::ops::Range<usize>>, bool);

/// The complete JSON values `text` holds one after another (whitespace between them) and
/// whether an incomplete one follows: the shape of fio's --status-interval JSON output, and of
/// one cut short. Values are skipped, not built, so this costs no memory. Err: something that
/// is not JSON, after how many complete values.
fn documents(text: &str) -> Result<Documents, (usize, serde_json::Error)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    let mut ranges = Vec::new();
    let mut start = 0;
    loop {
        match values.next() {
            None => return Ok((ranges, false)),
            Some(Ok(_)) => {
                let end = values.byte_offset();
                ranges.push(start..end);
                start = end;
            }
            Some(Err(e)) if e.is_eof() => return Ok((ranges, true)),
            Some(Err(e)) => return Err((ranges.len(), e)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn documents_one_after_another_are_found_by_their_ranges() {
        let ok = |t: &str| documents(t).unwrap();
        assert_eq!(ok(""), (vec![], false));
        assert_eq!(ok(" \n"), (vec![], false));
        let one: Vec<std::ops::Range<usize>> = std::iter::once(0..8).collect();
        assert_eq!(ok("{\"a\": 1}\n"), (one.clone(), false));
        let two = "{\"a\": 1}\n{\"b\": [2]}\n";
        let (r, cut) = ok(two);
        assert!(!cut);
        assert_eq!(r.len(), 2);
        assert_eq!(two[r[1].clone()].trim(), "{\"b\": [2]}");
        // Cut short inside the second: one complete, and the rest incomplete.
        assert_eq!(ok("{\"a\": 1}\n{\"b\": [2"), (one, true));
        assert_eq!(ok("{\"a\": "), (vec![], true));
        // Text after a document: not JSON, after one.
        let (n, e) = documents("{\"a\": 1}\nRun status group 0").unwrap_err();
        assert_eq!(n, 1);
        assert_eq!(e.to_string(), "expected value at line 2 column 1");
        assert_eq!(documents("jobs").unwrap_err().0, 0);
    }
}
