//! fio INI job files: `[sections]`, `key=value` and valueless flags, `;`/`#` comments (inline too),
//! `include FILE` (relative to the including file), `${ENV}` expansion and `-` for stdin.

use super::{Entry, Origin};
use std::io::Read;
use std::path::{Path, PathBuf};

/// One `[section]` of a job file, in file order; `[global]` sections are kept in place because
/// each applies only to the sections after it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Section {
    pub name: String,
    pub entries: Vec<Entry>,
}

const MAX_INCLUDE_DEPTH: usize = 16;

/// The most job file text one run reads: every job file, `-` and include together. Real job
/// files are kilobytes; this bounds what `include /dev/zero`, an endless pipe or a file
/// including a big one a thousand times can cost.
pub(super) const MAX_JOB_TEXT: u64 = 16 << 20;

/// The most sections, option lines and includes one run's job files may hold together: 4096
/// jobs (fio's limit) of 64 options each. Bounds the memory the parsed entries take, which is
/// several times the text's.
pub(super) const MAX_JOB_LINES: usize = 1 << 18;

/// The longest section name: fio reads at most 255 characters of one (`[%255[^\n]]`), and the
/// name names the job's files, within a file name's 255 bytes.
pub(super) const MAX_JOB_NAME: usize = 255;

/// What the job files of one run have used of the limits above.
#[derive(Debug, Default)]
pub(super) struct Budget {
    bytes: u64,
    lines: usize,
}

struct Parser<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    sections: Vec<Section>,
    budget: &'a mut Budget,
}

/// Reads and parses the job file `path` (`-` = stdin), within what `budget` has left.
pub(super) fn parse(
    path: &str,
    env: &dyn Fn(&str) -> Option<String>,
    stdin: &mut dyn Read,
    budget: &mut Budget,
) -> Result<Vec<Section>, String> {
    let text = if path == "-" {
        read_within(stdin, budget, "the job file from stdin")?
    } else {
        read_file(Path::new(path), budget)?
    };
    let display: std::sync::Arc<str> = if path == "-" { "<stdin>" } else { path }.into();
    let mut p = Parser {
        env,
        sections: Vec::new(),
        budget,
    };
    let base = Path::new(path)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    p.lines(&text, &display, &base, 0)?;
    Ok(p.sections)
}

/// Reads text, counting it against the run's budget.
fn read_within(r: impl Read, budget: &mut Budget, what: &str) -> Result<String, String> {
    let left = MAX_JOB_TEXT.saturating_sub(budget.bytes);
    let text = crate::input::read_limited(r, left).map_err(|e| match e {
        crate::input::ReadError::TooLarge(_) => format!(
            "{what}: the job files of one run (with their includes) may hold {} in all, and \
             this one goes beyond it; is it the right file?",
            crate::input::size_words(MAX_JOB_TEXT)
        ),
        e => e.describe(what),
    })?;
    budget.bytes += text.len() as u64;
    Ok(text)
}

fn read_file(path: &Path, budget: &mut Budget) -> Result<String, String> {
    let what = format!("job file '{}'", path.display());
    let file = std::fs::File::open(path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            "; check the path (job files are read relative to the current directory)"
        } else {
            ""
        };
        format!("cannot read {what}: {e}{hint}")
    })?;
    read_within(file, budget, &what)
}

/// Removes a `;` or `#` comment, whole-line or inline, as fio does.
fn strip_comment(line: &str) -> &str {
    match line.find([';', '#']) {
        Some(i) => &line[..i],
        None => line,
    }
}

impl Parser<'_> {
    fn lines(
        &mut self,
        text: &str,
        file: &std::sync::Arc<str>,
        base: &Path,
        depth: usize,
    ) -> Result<(), String> {
        for (i, raw) in text.lines().enumerate() {
            let lineno = i + 1;
            let at = |msg: String| format!("{file}:{lineno}: {msg}");
            let line = self.expand(strip_comment(raw)).map_err(at)?;
            let line = line.trim_end();
            let trimmed = line.trim_start();
            if trimmed.is_empty() {
                continue;
            }
            self.budget.lines += 1;
            if self.budget.lines > MAX_JOB_LINES {
                return Err(at(format!(
                    "the job files of one run may hold at most {MAX_JOB_LINES} sections, options \
                     and includes in all (4096 jobs of 64 options); split the run"
                )));
            }
            if let Some(rest) = trimmed.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| {
                        at(format!(
                            "expected a section header like [job1], found '{trimmed}'"
                        ))
                    })?;
                if name.len() > MAX_JOB_NAME {
                    return Err(at(format!(
                        "section name '{}' is longer than {MAX_JOB_NAME} bytes, the most fio \
                         reads (it also names the job's files); use a shorter name",
                        crate::input::shorten(name)
                    )));
                }
                self.sections.push(Section {
                    name: name.to_string(),
                    entries: Vec::new(),
                });
                continue;
            }
            if let Some(inc) = trimmed.strip_prefix("include ") {
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(at(format!(
                        "includes nested deeper than {MAX_INCLUDE_DEPTH} (a loop?)"
                    )));
                }
                let inc = inc.trim();
                let path: PathBuf = if Path::new(inc).is_absolute() {
                    inc.into()
                } else {
                    base.join(inc)
                };
                let text = read_file(&path, self.budget).map_err(at)?;
                let shown: std::sync::Arc<str> = path.display().to_string().into();
                let inc_base = path.parent().map(Path::to_path_buf).unwrap_or_default();
                self.lines(&text, &shown, &inc_base, depth + 1)?;
                continue;
            }
            let (key, value) = match trimmed.split_once('=') {
                Some((k, v)) => (k.trim_end(), Some(v)),
                None => (trimmed, None),
            };
            if let Some(v) = value {
                // fio keeps the spaces: `bs = 8k` becomes " 8k", which it reads as 8 bytes.
                if v.starts_with([' ', '\t']) {
                    return Err(at(format!(
                        "the value of '{key}' starts with a space, which fio would keep as part of \
                         the value; write '{key}={}'",
                        v.trim_start()
                    )));
                }
            }
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(at(format!(
                    "expected 'option=value' or 'option', found '{trimmed}'"
                )));
            }
            let section = self.sections.last_mut().ok_or_else(|| {
                at(format!(
                    "'{trimmed}' comes before any section; put it under [global] or a [job]"
                ))
            })?;
            section.entries.push(Entry {
                key: key.to_string(),
                value: value.map(str::to_string),
                origin: Origin::File {
                    path: file.clone(),
                    line: lineno,
                },
            });
        }
        Ok(())
    }

    /// Replaces `${NAME}` with the environment variable. fio leaves unknown names as text; here an
    /// unset variable is an error, because a literal `${X}` in a path is never what was meant.
    /// What a line grows by counts against the run's text budget: a line of a million
    /// `${LS_COLORS}` would otherwise expand to gigabytes.
    fn expand(&mut self, line: &str) -> Result<String, String> {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        let left = MAX_JOB_TEXT.saturating_sub(self.budget.bytes);
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| {
                format!(
                    "'${{' without a closing '}}' in '{}'",
                    crate::input::shorten(line)
                )
            })?;
            let name = &after[..end];
            let val = (self.env)(name).ok_or_else(|| {
                let name = crate::input::shorten(name);
                format!("${{{name}}} is not set in the environment; export {name}=… before running")
            })?;
            out.push_str(&val);
            rest = &after[end + 1..];
            if out.len().saturating_sub(line.len()) as u64 > left {
                return Err(format!(
                    "${{{}}} expanded, the job files of one run (with their includes) hold more \
                     than {} in all",
                    crate::input::shorten(name),
                    crate::input::size_words(MAX_JOB_TEXT)
                ));
            }
        }
        out.push_str(rest);
        self.budget.bytes += out.len().saturating_sub(line.len()) as u64;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse_text(text: &str) -> Result<Vec<Section>, String> {
        parse("-", &no_env, &mut text.as_bytes(), &mut Budget::default())
    }

    fn kv(s: &Section) -> Vec<(String, Option<String>)> {
        s.entries
            .iter()
            .map(|e| (e.key.clone(), e.value.clone()))
            .collect()
    }

    #[test]
    fn sections_options_flags_and_comments() {
        let text = "; a comment\n# another\n[global]\nbs=4k ; inline\nsize=8m # inline too\n\n\
                    [seqw]\n  rw=write\ntime_based\n[randr]\nrw=randread\n";
        let s = parse_text(text).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].name, "global");
        assert_eq!(
            kv(&s[0]),
            vec![
                ("bs".into(), Some("4k".into())),
                ("size".into(), Some("8m".into()))
            ]
        );
        assert_eq!(
            kv(&s[1]),
            vec![
                ("rw".into(), Some("write".into())),
                ("time_based".into(), None)
            ]
        );
        assert_eq!(s[2].name, "randr");
        assert_eq!(
            s[1].entries[0].origin,
            Origin::File {
                path: "<stdin>".into(),
                line: 8
            }
        );
    }

    #[test]
    fn a_space_after_the_equals_sign_is_refused() {
        let e = parse_text("[j]\nbs = 8k\n").unwrap_err();
        assert_eq!(
            e,
            "<stdin>:2: the value of 'bs' starts with a space, which fio would keep as part of the \
             value; write 'bs=8k'"
        );
        // A space before '=' only is fine: fio trims the name.
        assert_eq!(
            kv(&parse_text("[j]\nbs =8k\n").unwrap()[0]),
            vec![("bs".into(), Some("8k".into()))]
        );
    }

    #[test]
    fn options_outside_a_section_and_bad_headers_are_errors() {
        assert_eq!(
            parse_text("bs=4k\n[j]\n").unwrap_err(),
            "<stdin>:1: 'bs=4k' comes before any section; put it under [global] or a [job]"
        );
        assert_eq!(
            parse_text("[j\n").unwrap_err(),
            "<stdin>:1: expected a section header like [job1], found '[j'"
        );
        assert_eq!(
            parse_text("[j]\nrw write\n").unwrap_err(),
            "<stdin>:2: expected 'option=value' or 'option', found 'rw write'"
        );
    }

    #[test]
    fn environment_variables_expand_and_unset_ones_are_errors() {
        let env = |k: &str| (k == "DIR").then(|| "/scratch/h1".to_string());
        let s = parse(
            "-",
            &env,
            &mut "[j]\ndirectory=${DIR}/x\n".as_bytes(),
            &mut Budget::default(),
        )
        .unwrap();
        assert_eq!(s[0].entries[0].value.as_deref(), Some("/scratch/h1/x"));
        let e = parse(
            "-",
            &env,
            &mut "[j]\nfilename=${NOPE}\n".as_bytes(),
            &mut Budget::default(),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "<stdin>:2: ${NOPE} is not set in the environment; export NOPE=… before running"
        );
    }

    #[test]
    fn include_is_relative_to_the_including_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/common.fio"), "[global]\nbs=8k\n").unwrap();
        std::fs::write(
            d.path().join("main.fio"),
            "include sub/common.fio\n[j]\nrw=read\n",
        )
        .unwrap();
        let main = d.path().join("main.fio");
        let s = parse(
            main.to_str().unwrap(),
            &no_env,
            &mut std::io::empty(),
            &mut Budget::default(),
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(kv(&s[0]), vec![("bs".into(), Some("8k".into()))]);
        // A file including itself stops at the depth limit instead of recursing forever.
        std::fs::write(d.path().join("loop.fio"), "include loop.fio\n").unwrap();
        let lp = d.path().join("loop.fio");
        let e = parse(
            lp.to_str().unwrap(),
            &no_env,
            &mut std::io::empty(),
            &mut Budget::default(),
        )
        .unwrap_err();
        assert!(e.contains("includes nested deeper than 16"), "{e}");
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let e = parse(
            "/nonexistent/x.fio",
            &no_env,
            &mut std::io::empty(),
            &mut Budget::default(),
        )
        .unwrap_err();
        assert!(
            e.starts_with("cannot read job file '/nonexistent/x.fio': "),
            "{e}"
        );
        assert!(
            e.ends_with("check the path (job files are read relative to the current directory)")
        );
    }
}
