//! README.md's examples, run as a reader would run them: every ```sh block there carries a marker
//! comment, `<!-- example: exit=CODES [exit-SUB=CODES] [append-SUB="ARGS"] -->` or
//! `<!-- example: skip="WHY" -->`, and each command of a runnable block is run with `sh -c` in a
//! fresh directory holding `examples/`, with `iogauge` on PATH, and must exit with a code its
//! marker allows. `append-check="--scale 0.02"` appends those arguments to every `iogauge check`
//! command of the block (before a redirection or pipe), so that the examples run in seconds.
//! The files under examples/ are checked too: each one the README names exists and loads, and
//! the ones whose README command takes minutes run here shortened.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).unwrap()
}

/// One ```sh block of the README with its marker.
#[derive(Debug)]
struct Example {
    /// Line number (1-based) of the marker, for messages.
    line: usize,
    attrs: BTreeMap<String, String>,
    /// The commands, `\` continuations joined, comments and blank lines dropped.
    commands: Vec<String>,
}

/// `exit=0,3 skip="a b"` → {exit: "0,3", skip: "a b"}.
fn parse_attrs(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once('=')
            .expect("marker attributes are key=value");
        let (value, after) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"').expect("a closing quote");
            (&q[..end], &q[end + 1..])
        } else {
            after.split_once(' ').unwrap_or((after, ""))
        };
        out.insert(key.trim().to_string(), value.to_string());
        rest = after.trim();
    }
    out
}

/// Drops a trailing `# comment` (the examples' comments follow the command after spaces).
fn strip_comment(line: &str) -> &str {
    match line.find(" #") {
        Some(i) => line[..i].trim_end(),
        None => line.trim_end(),
    }
}

fn examples(text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        if l.starts_with("```sh") {
            let marker = (0..i)
                .rev()
                .map(|j| lines[j].trim())
                .find(|p| !p.is_empty())
                .and_then(|p| p.strip_prefix("<!-- example:"))
                .and_then(|p| p.strip_suffix("-->"));
            let Some(marker) = marker else {
                panic!(
                    "README.md line {}: a ```sh block without an '<!-- example: ... -->' marker \
                     before it (exit=CODES to run it here, skip=\"WHY\" when it cannot run)",
                    i + 1
                );
            };
            let mut commands = Vec::new();
            let mut current = String::new();
            i += 1;
            while !lines[i].trim_start().starts_with("```") {
                let body = strip_comment(lines[i]);
                if let Some(cont) = body.strip_suffix('\\') {
                    current.push_str(cont.trim_end());
                    current.push(' ');
                } else {
                    current.push_str(body.trim_start());
                    if !current.trim().is_empty() {
                        commands.push(current.trim().to_string());
                    }
                    current.clear();
                }
                i += 1;
            }
            out.push(Example {
                line: i,
                attrs: parse_attrs(marker),
                commands,
            });
        }
        i += 1;
    }
    out
}

/// The `iogauge` subcommand a command line runs (`check`, `fio`, `kube`…), if any.
fn subcommand(command: &str) -> Option<&str> {
    let at = command.find("iogauge ")?;
    command[at + "iogauge ".len()..].split_whitespace().next()
}

/// `command` with `extra` appended to its `iogauge` part: before the first redirection or pipe
/// after it, else at the end.
fn append_args(command: &str, extra: &str) -> String {
    let at = command.find("iogauge ").unwrap();
    let tail = &command[at..];
    match [" > ", " | ", " 2>"]
        .iter()
        .filter_map(|s| tail.find(s))
        .min()
    {
        Some(cut) => format!("{} {extra}{}", &command[..at + cut], &tail[cut..]),
        None => format!("{command} {extra}"),
    }
}

fn codes(s: &str) -> Vec<i32> {
    s.split(',').map(|c| c.trim().parse().unwrap()).collect()
}

/// A fresh working directory with `examples/` in it, and a directory holding `iogauge` for PATH.
struct Sandbox {
    _dir: tempfile::TempDir,
    work: PathBuf,
    path: std::ffi::OsString,
    history: PathBuf,
}

fn sandbox() -> Sandbox {
    let dir = scratch();
    let bin = dir.path().join("bin");
    let work = dir.path().join("work");
    std::fs::create_dir(&bin).unwrap();
    std::fs::create_dir(&work).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_iogauge"), bin.join("iogauge")).unwrap();
    std::os::unix::fs::symlink(repo().join("examples"), work.join("examples")).unwrap();
    let mut path = bin.into_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let history = dir.path().join("history.db");
    Sandbox {
        _dir: dir,
        work,
        path,
        history,
    }
}

impl Sandbox {
    fn sh(&self, command: &str) -> std::process::Output {
        cmd("sh")
            .args(["-c", command])
            .current_dir(&self.work)
            .env("PATH", &self.path)
            // Never the user's history, whatever a command does.
            .env("IOGAUGE_HISTORY", &self.history)
            .output()
            .unwrap()
    }
}

#[test]
fn every_readme_example_that_can_run_here_exits_as_documented() {
    let all = examples(&readme());
    assert!(all.len() >= 5, "too few examples found: {all:?}");
    let sb = sandbox();
    let mut ran = 0;
    for ex in &all {
        if let Some(why) = ex.attrs.get("skip") {
            assert!(
                !why.is_empty(),
                "README.md line {}: skip needs a reason",
                ex.line
            );
            continue;
        }
        let default = ex
            .attrs
            .get("exit")
            .unwrap_or_else(|| panic!("README.md line {}: no exit= in the marker", ex.line));
        assert!(
            !ex.commands.is_empty(),
            "README.md line {}: empty block",
            ex.line
        );
        for c in &ex.commands {
            let sub = subcommand(c);
            let mut run = c.clone();
            if let Some(extra) = sub.and_then(|s| ex.attrs.get(&format!("append-{s}"))) {
                run = append_args(&run, extra);
            }
            let allowed = codes(
                sub.and_then(|s| ex.attrs.get(&format!("exit-{s}")))
                    .unwrap_or(default),
            );
            let o = sb.sh(&run);
            let code = o.status.code();
            assert!(
                code.is_some_and(|c| allowed.contains(&c)),
                "README.md example near line {}: `{run}` exited {code:?}, documented {allowed:?}\n\
                 stdout:\n{}\nstderr:\n{}",
                ex.line,
                text(&o.stdout),
                text(&o.stderr),
            );
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} README commands ran");
    // What the compare/report/completions examples leave is what they promise.
    for f in ["before.json", "after.json", "after.html", "iogauge.bash"] {
        let p = sb.work.join(f);
        assert!(
            std::fs::metadata(&p).is_ok_and(|m| m.len() > 0),
            "{f} missing or empty"
        );
    }
    let page = std::fs::read_to_string(sb.work.join("after.html")).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>"),
        "{}",
        &page[..page.len().min(200)]
    );
    // The test files are gone: only what the examples wrote on purpose stays.
    let mut left = files_in(&sb.work);
    left.sort();
    assert_eq!(
        left,
        [
            "after.html",
            "after.json",
            "before.json",
            "examples",
            "iogauge.bash",
            "test-data"
        ]
    );
    assert_empty(&sb.work.join("test-data"));
}

#[test]
fn markers_are_read_and_arguments_appended_before_redirections() {
    let ex = examples(
        "x\n<!-- example: exit=0,3 append-check=\"--scale 0.02\" -->\n```sh\n\
         iogauge check etcd --format json > a.json   # a comment\n\
         iogauge fio --name=x \\\n    --size=1m\n```\n",
    );
    assert_eq!(ex.len(), 1);
    assert_eq!(ex[0].attrs["exit"], "0,3");
    assert_eq!(ex[0].attrs["append-check"], "--scale 0.02");
    assert_eq!(
        ex[0].commands,
        [
            "iogauge check etcd --format json > a.json",
            "iogauge fio --name=x --size=1m"
        ]
    );
    assert_eq!(
        append_args(&ex[0].commands[0], "--scale 0.02"),
        "iogauge check etcd --format json --scale 0.02 > a.json"
    );
    assert_eq!(
        append_args("mkdir -p d && iogauge fio --name=x", "--size=1k"),
        "mkdir -p d && iogauge fio --name=x --size=1k"
    );
    assert_eq!(
        subcommand("mkdir -p d && iogauge fio --name=x"),
        Some("fio")
    );
}

#[test]
#[should_panic(expected = "without an '<!-- example: ... -->' marker")]
fn a_block_without_a_marker_is_an_error() {
    examples("```sh\niogauge check\n```\n");
}

/// Every `examples/NAME` the README mentions, in order of first mention.
fn example_files(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, _) in text.match_indices("examples/") {
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
            .collect();
        let name = name.trim_end_matches('.').to_string();
        if name.len() > "examples/".len() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[test]
fn every_example_file_the_readme_names_exists_and_loads() {
    let names = example_files(&readme());
    for want in [
        "examples/seq-write.fio",
        "examples/etcd-disk.yaml",
        "examples/vendor-db.yaml",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "README no longer names {want}: {names:?}"
        );
    }
    let sb = sandbox();
    for n in &names {
        assert!(
            repo().join(n).is_file(),
            "README names {n}, which does not exist"
        );
        let (command, allowed): (String, &[i32]) = if n.ends_with(".fio") {
            (format!("iogauge fio --parse-only {n}"), &[0])
        } else if n.ends_with("-disk.yaml") {
            // Loading the spec is all --analyze-only of an empty directory does before its
            // analyzers: a spec problem would be exit 2; here the first outcome,
            // fileNotCollected, is a warning.
            std::fs::create_dir_all(sb.work.join("empty")).unwrap();
            (format!("iogauge preflight --analyze-only empty {n}"), &[4])
        } else {
            // A profile is validated before anything runs: exit 2 for a bad one.
            (format!("iogauge check {n} --scale 0.01"), &[0, 3, 4])
        };
        let o = sb.sh(&command);
        assert!(
            o.status.code().is_some_and(|c| allowed.contains(&c)),
            "`{command}` exited {:?}\n{}{}",
            o.status.code(),
            text(&o.stdout),
            text(&o.stderr)
        );
    }
}

/// Reads an example file with each `(from, to)` replaced (the replacement must apply).
fn shortened(name: &str, edits: &[(&str, &str)]) -> String {
    let mut t = std::fs::read_to_string(repo().join("examples").join(name)).unwrap();
    for (from, to) in edits {
        assert!(t.contains(from), "examples/{name} no longer has {from:?}");
        t = t.replace(from, to);
    }
    t
}

#[test]
fn the_manetu_job_file_runs_shortened_with_one_fdatasync_per_write() {
    let sb = sandbox();
    let job = shortened(
        "seq-write.fio",
        &[
            ("runtime=60s", "runtime=1s"),
            ("ramp_time=2s", "ramp_time=0"),
            ("size=10G", "size=8m"),
        ],
    );
    std::fs::write(sb.work.join("short.fio"), job).unwrap();
    std::fs::create_dir(sb.work.join("disk")).unwrap();
    let o = sb.sh("iogauge fio short.fio --directory=disk --output-format=json");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &doc["jobs"][0];
    assert_eq!(j["jobname"], "sequential_write_iops");
    let writes = j["write"]["total_ios"].as_u64().unwrap();
    assert!(writes > 0, "{j}");
    assert_eq!(
        j["sync"]["total_ios"].as_u64(),
        Some(writes),
        "{}",
        j["sync"]
    );
    assert_empty(&sb.work.join("disk"));
}

#[test]
fn the_etcd_disk_spec_runs_in_a_temporary_directory() {
    let sb = sandbox();
    let dir = sb.work.join("etcd");
    let spec = shortened(
        "etcd-disk.yaml",
        &[
            (
                "directory: /var/lib/etcd",
                &format!("directory: {}", dir.display()),
            ),
            ("fileSize: 22Mi", "fileSize: 256Ki"),
        ],
    );
    std::fs::write(sb.work.join("spec.yaml"), spec).unwrap();
    let o = sb.sh("iogauge preflight --output results spec.yaml");
    let out = text(&o.stdout);
    assert!(
        o.status.code().is_some_and(|c| [0, 3, 4].contains(&c)),
        "exit {:?}\n{out}{}",
        o.status.code(),
        text(&o.stderr)
    );
    assert!(out.contains("etcd disk write latency"), "{out}");
    assert!(out.contains("p99 target < 10ms, actual: "), "{out}");
    let result =
        Path::new(&sb.work).join("results/host-collectors/filesystemPerformance/etcd-disk.json");
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert!(table["P99"].as_u64().is_some_and(|p| p > 0), "{table}");
    assert!(
        !dir.exists(),
        "the test directory iogauge made is removed again"
    );
}

#[test]
fn the_readme_fits_in_12_kib() {
    let n = std::fs::metadata(repo().join("README.md")).unwrap().len();
    assert!(n <= 12 * 1024, "README.md is {n} bytes, over 12 KiB");
}

/// "Seed 001", "the seed's recipe": the project's name for its source documents, which no user
/// has seen. The word stays where it means a random generator's seed (fio's randseed, a fixed
/// bootstrap seed) or a fuzzer's seed inputs.
fn source_document_words(text: &str) -> Vec<String> {
    // ASCII lowercase keeps the byte offsets of `text`.
    let lower = text.to_ascii_lowercase();
    let mut hits = Vec::new();
    for (i, _) in lower.match_indices("seed") {
        let before = lower[..i].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric()) {
            continue; // randseed
        }
        let after = &lower[i + 4..];
        let numbered = after.starts_with(' ')
            && after[1..]
                .chars()
                .take(3)
                .filter(char::is_ascii_digit)
                .count()
                == 3;
        if numbered || after.starts_with("'s") || after.starts_with("s/") {
            let end = (i + 40..text.len())
                .find(|&e| text.is_char_boundary(e))
                .unwrap_or(text.len());
            hits.push(text[i..end].to_string());
        }
    }
    hits
}

#[test]
fn no_seed_numbers_in_what_users_read() {
    let hits = source_document_words("Seed 001, the seed's recipe, reference/seeds/x; randseed=3");
    assert_eq!(hits.len(), 3, "{hits:?}");
    assert!(source_document_words("randseed=3, a fixed seed, seed inputs").is_empty());
    let mut files = vec![repo().join("README.md"), repo().join("bench/README.md")];
    for dir in ["docs", "examples", "profiles"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                files.push(p);
            }
        }
    }
    for f in &files {
        let t = std::fs::read_to_string(f).unwrap();
        let hits = source_document_words(&t);
        assert!(hits.is_empty(), "{}: {hits:?}", f.display());
    }
    for sub in [
        "check",
        "fio",
        "preflight",
        "kube",
        "compare",
        "report",
        "history",
        "cleanup",
    ] {
        let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
            .args([sub, "--help"])
            .output()
            .unwrap();
        let hits = source_document_words(&text(&o.stdout));
        assert!(hits.is_empty(), "iogauge {sub} --help: {hits:?}");
    }
}
