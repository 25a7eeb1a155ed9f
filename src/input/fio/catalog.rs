//! `docs/FIO-OPTIONS.md`: every fio 3.33 option and what iogauge does with it, written from the
//! option tables themselves so that the list cannot drift from the code. A test compares the
//! file with what the tables say; `UPDATE_DOCS=1 cargo test --lib catalog` rewrites it.

use super::{known, options, unsupported};

/// The page, in Markdown.
fn render() -> String {
    let mut supported = Vec::new();
    let mut impossible = Vec::new();
    let mut not_yet = Vec::new();
    for &name in known::FIO_OPTIONS.iter() {
        if let Some(o) = options::find(name) {
            if o.name == name {
                let aliases = if o.aliases.is_empty() {
                    String::new()
                } else {
                    format!(" (also `{}`)", o.aliases.join("`, `"))
                };
                supported.push(format!("| `{name}`{aliases} | {} |", &o.describe()));
            }
        } else if let Some(why) = unsupported::option_reason(name) {
            impossible.push(format!("| `{name}` | {why} |"));
        } else {
            not_yet.push(format!("`{name}`"));
        }
    }
    let total = known::FIO_OPTIONS.len();
    let names_supported = known::FIO_OPTIONS
        .iter()
        .filter(|n| options::find(n).is_some())
        .count();
    let mut s = String::new();
    s.push_str(
        "# fio options in `iogauge fio`\n\n\
         Generated from the option tables (`src/input/fio/`) by \
         `UPDATE_DOCS=1 cargo test --lib catalog`; a test fails when it is out of date.\n\n",
    );
    s.push_str(&format!(
        "Of fio 3.33's {total} option names (aliases counted), iogauge accepts {names_supported}, \
         refuses {} because they cannot work here, and refuses {} as not supported yet. A refused \
         option stops the run with its name (exit 2); nothing is silently ignored.\n\n",
        impossible.len(),
        not_yet.len()
    ));
    s.push_str("## Supported\n\n| option | meaning |\n|---|---|\n");
    for l in &supported {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("\n## Refused: cannot work in iogauge\n\n| option | why |\n|---|---|\n");
    for l in &impossible {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("\n## Refused: not supported yet\n\n");
    s.push_str(&not_yet.join(", "));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn docs_fio_options_md_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FIO-OPTIONS.md");
        let want = super::render();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/FIO-OPTIONS.md is out of date: run UPDATE_DOCS=1 cargo test --lib catalog"
        );
    }
}
