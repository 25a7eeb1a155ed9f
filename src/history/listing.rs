//! `iogauge history`'s list: the runs as a text table, or as typed JSON rows (the run without
//! its document, which `history show --format json` gives).

use super::SavedRun;
use serde::Serialize;

/// One listed run, as `--format json` prints it.
#[derive(Serialize)]
pub(crate) struct Row<'a> {
    id: i64,
    kind: &'static str,
    started: &'a str,
    host: &'a str,
    target: &'a str,
    profiles: &'a [String],
    verdicts: &'a [String],
    key_values: &'a [String],
    command: &'a [String],
}

impl<'a> From<&'a SavedRun> for Row<'a> {
    fn from(r: &'a SavedRun) -> Self {
        Row {
            id: r.id,
            kind: r.kind.as_str(),
            started: &r.started,
            host: &r.host,
            target: &r.target,
            profiles: &r.profiles,
            verdicts: &r.verdicts,
            key_values: &r.key_values,
            command: &r.command,
        }
    }
}

/// The text table: columns padded to their widest cell, the last one not padded.
pub(crate) fn table(runs: &[SavedRun]) -> String {
    let mut rows = vec![[
        "ID",
        "WHEN",
        "KIND",
        "HOST",
        "TARGET",
        "VERDICTS / KEY VALUES",
    ]
    .map(String::from)];
    for r in runs {
        // Stored text (host, target, profile names) is shown, never obeyed by the terminal.
        let t = |s: &str| crate::untrusted::term(s).into_owned();
        rows.push([
            r.id.to_string(),
            t(&r.started),
            r.kind.to_string(),
            t(&r.host),
            t(&r.target),
            t(&r.summary()),
        ]);
    }
    let mut width = [0usize; 6];
    for row in &rows {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, c) in row.iter().enumerate() {
            if i + 1 < row.len() {
                line.push_str(&format!("{c:<w$}  ", w = width[i]));
            } else {
                line.push_str(c);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
