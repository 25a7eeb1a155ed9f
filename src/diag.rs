//! The diagnostics sink: the warnings and notes raised below `cli/` (a log file that could not be
//! written, fio's verify-failure lines, a file that could not be removed) travel to the
//! command's face through this, never straight to stderr, so that `cli/` decides where they go
//! (stderr, drawn above its progress bar) and in whose name ("iogauge check:" under check).
//!
//! Used on rare paths only (setup, an error, the end of a run), never per I/O: a call costs a
//! virtual call, and the sink the CLI installs takes a lock.

use std::sync::Arc;

type Out = Arc<dyn Fn(&str) + Send + Sync>;

/// Where diagnostics go; cheap to clone (one `Arc`). [`Diag::default`] drops them (library
/// callers and tests that do not look).
#[derive(Clone)]
pub struct Diag {
    /// The command's prefix, e.g. `iogauge fio`.
    command: &'static str,
    out: Option<Out>,
}

impl Diag {
    /// Lines for `command` (its prefix, e.g. `iogauge check`) go to `out`, one call a line.
    pub fn new(command: &'static str, out: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Diag {
            command,
            out: Some(Arc::new(out)),
        }
    }

    /// A line exactly as given: fio's own lines, and warnings that carry their own prefix.
    #[cold]
    pub fn line(&self, text: &str) {
        if let Some(out) = &self.out {
            out(text);
        }
    }

    /// A line in the command's name: `iogauge CMD: text`.
    #[cold]
    pub fn note(&self, text: &str) {
        if self.out.is_some() {
            self.line(&format!("{}: {text}", self.command));
        }
    }

    /// A sink that keeps the lines, for tests.
    #[cfg(test)]
    pub(crate) fn collect(command: &'static str) -> (Diag, Arc<std::sync::Mutex<Vec<String>>>) {
        let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
        let l = lines.clone();
        let d = Diag::new(command, move |s: &str| {
            l.lock().unwrap().push(s.to_string());
        });
        (d, lines)
    }
}

impl Default for Diag {
    fn default() -> Self {
        Diag {
            command: "iogauge",
            out: None,
        }
    }
}

impl std::fmt::Debug for Diag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Diag")
            .field("command", &self.command)
            .field("out", &self.out.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_go_as_given_and_notes_in_the_commands_name() {
        let (d, lines) = Diag::collect("iogauge check");
        d.line("iogauge: warning: x");
        d.note("fio: io_u error on file f");
        assert_eq!(
            *lines.lock().unwrap(),
            [
                "iogauge: warning: x",
                "iogauge check: fio: io_u error on file f"
            ]
        );
        // The default drops them.
        Diag::default().note("nowhere");
    }

    /// Nothing below `cli/` writes to stderr itself: its lines go through a `Diag` (tests and
    /// `main.rs` aside). Fails on any `eprintln!`/`eprint!` outside `#[cfg(test)]` code.
    #[test]
    fn no_direct_stderr_below_cli() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(&src).unwrap().to_path_buf();
                if p.is_dir() {
                    if rel != std::path::Path::new("cli") {
                        stack.push(p);
                    }
                    continue;
                }
                if p.extension().is_none_or(|x| x != "rs") || rel == std::path::Path::new("main.rs")
                {
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap();
                for (n, line) in direct_stderr(&text) {
                    found.push(format!("src/{}:{n}: {}", rel.display(), line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "write through crate::diag::Diag instead:\n{}",
            found.join("\n")
        );
    }

    /// The numbered lines of `text` that write to stderr themselves, outside test code.
    fn direct_stderr(text: &str) -> Vec<(usize, &str)> {
        outside_tests(text)
            .into_iter()
            .filter(|(_, line)| {
                let code = line.split("//").next().unwrap_or("");
                code.contains("eprintln!") || code.contains("eprint!")
            })
            .collect()
    }

    #[test]
    fn a_direct_write_to_stderr_is_found() {
        let t = "fn f() {\n    eprintln!(\"x\"); // said\n    // eprintln!(\"a comment\")\n}\n\
                 #[cfg(test)]\nmod tests {\n    fn g() { eprint!(\"y\") }\n}\nfn h() { eprint!(\"z\") }\n";
        let found: Vec<usize> = direct_stderr(t).into_iter().map(|l| l.0).collect();
        assert_eq!(found, [2, 9]);
    }

    /// The numbered lines of `text` outside `#[cfg(test)]` items (an item ends where its
    /// braces balance again).
    fn outside_tests(text: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        let mut skip = false;
        let mut depth = 0i64;
        let mut opened = false;
        for (i, line) in text.lines().enumerate() {
            if !skip && line.trim_start().starts_with("#[cfg(test)]") {
                skip = true;
                depth = 0;
                opened = false;
                continue;
            }
            if skip {
                for c in line.chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                // An item without braces (`use`, `fn f();`) ends at its semicolon.
                if (opened && depth <= 0) || (!opened && line.trim_end().ends_with(';')) {
                    skip = false;
                }
                continue;
            }
            out.push((i + 1, line));
        }
        out
    }

    #[test]
    fn cfg_test_items_are_skipped() {
        let t = "a\n#[cfg(test)]\nmod t {\n  x\n}\nb\n#[cfg(test)]\nuse y;\nc\n";
        let lines: Vec<&str> = outside_tests(t).into_iter().map(|l| l.1).collect();
        assert_eq!(lines, ["a", "b", "c"]);
    }
}
