//! fio's `write_iolog`: the same job files under fio 3.33 and iogauge write the same iolog
//! (header, file actions, I/O lines; the time column is checked for order only), appended to
//! an existing file, with one I/O line per I/O of the JSON. fio must be installed for the
//! cross-checks (with CI=true a missing fio fails them).

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;

/// A run in its own directory: data under `DIR/data`, the iologs in `DIR` (the working
/// directory).
struct Run {
    dir: tempfile::TempDir,
    json: Value,
}

/// One instance's part of an iolog: its lines without the time column, the data directory
/// replaced by `@DIR@`.
type Block = Vec<String>;

impl Run {
    /// The iolog `name`: the lines before the first header, then one block per header.
    fn iolog(&self, name: &str) -> (Vec<String>, Vec<Block>) {
        let path = self.dir.path().join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("iolog {} not kept: {e}", path.display()));
        let data = self.dir.path().join("data");
        let data = data.to_str().unwrap();
        let (mut before, mut blocks) = (Vec::new(), Vec::<Block>::new());
        let mut last_us = 0u64;
        for line in text.lines() {
            if line == "fio version 3 iolog" {
                blocks.push(vec![line.to_string()]);
                last_us = 0;
                continue;
            }
            let Some(block) = blocks.last_mut() else {
                before.push(line.to_string());
                continue;
            };
            let (us, rest) = line.split_once(' ').unwrap();
            let us: u64 = us
                .parse()
                .unwrap_or_else(|_| panic!("{name}: no time column in {line:?}"));
            assert!(us >= last_us, "{name}: time goes back at {line:?}");
            last_us = us;
            block.push(rest.replace(data, "@DIR@"));
        }
        (before, blocks)
    }
}

fn run(program: &str, fixture: &str, seed: &[(&str, &str)]) -> Run {
    let (dir, data, job) = job_with_data_dir(fixture);
    for (name, text) in seed {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let pre: &[&str] = if program == "fio" { &[] } else { &["fio"] };
    let json = run_json(
        program,
        pre,
        &[job.to_str().unwrap().to_string()],
        dir.path(),
    );
    std::fs::remove_file(&job).unwrap();
    if program != "fio" {
        // The data files are iogauge's to remove; the iologs (checked by the callers) are not.
        assert_empty(&data);
    }
    std::fs::remove_dir_all(&data).unwrap();
    Run { dir, json }
}

fn both(fixture: &str, seed: &[(&str, &str)]) -> Option<(Run, Run)> {
    if !have_fio() {
        return None;
    }
    let fio = run("fio", fixture, seed);
    let iog = run(env!("CARGO_BIN_EXE_iogauge"), fixture, seed);
    Some((fio, iog))
}

/// Lines of a block whose action (second word) is `action`.
fn count(block: &Block, action: &str) -> u64 {
    block
        .iter()
        .filter(|l| l.split(' ').nth(1) == Some(action))
        .count() as u64
}

/// The JSON's `dir` total_ios summed over the job entries named `job`.
fn total_ios(json: &Value, job: &str, dir: &str) -> u64 {
    json["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobname"] == job)
        .map(|j| u(j, &[dir, "total_ios"]))
        .sum()
}

#[test]
fn sequential_iologs_match_fio_line_for_line() {
    let Some((fio, iog)) = both("logs-iolog.fio", &[]) else {
        return;
    };
    for (log, job, action, dir) in [
        ("w.iolog", "w", "write", "write"),
        ("r.iolog", "r", "read", "read"),
    ] {
        let (f_before, f) = fio.iolog(log);
        let (g_before, g) = iog.iolog(log);
        assert!(f_before.is_empty() && g_before.is_empty());
        assert_eq!(f.len(), 1, "fio: one instance's block in {log}");
        assert_eq!(g, f, "{log}: iogauge's lines differ from fio's");
        // Spelt out, so that a change in both tools shows too.
        let name = format!("@DIR@/{job}.0.0");
        let b = &g[0];
        assert_eq!(
            b[..3],
            [
                "fio version 3 iolog".to_string(),
                format!("{name} add"),
                format!("{name} open")
            ]
        );
        assert_eq!(b[3], format!("{name} {action} 0 4096"));
        assert_eq!(b[18], format!("{name} {action} 61440 4096"));
        assert_eq!(b[19], format!("{name} close"));
        assert_eq!(b.len(), 20);
        for (run, who) in [(&fio, "fio"), (&iog, "iogauge")] {
            let (_, blocks) = run.iolog(log);
            assert_eq!(
                count(&blocks[0], action),
                total_ios(&run.json, job, dir),
                "{who}: {log}'s I/O lines against the JSON's total_ios"
            );
        }
    }
}

#[test]
fn sync_lines_and_a_shared_file_match_fio() {
    // An existing file is appended to (fio opens it with "a"): the seeded line stays first.
    let seed = [("s.iolog", "an earlier run's line\n")];
    let Some((fio, iog)) = both("logs-iolog-fsync.fio", &seed) else {
        return;
    };
    let sorted = |run: &Run| {
        let (before, mut blocks) = run.iolog("s.iolog");
        assert_eq!(before, ["an earlier run's line"]);
        // Instances append in the order they finish: compare them by file name.
        blocks.sort_by(|a, b| a[1].cmp(&b[1]));
        blocks
    };
    let (f, g) = (sorted(&fio), sorted(&iog));
    assert_eq!(f.len(), 2, "fio: one block per instance");
    assert_eq!(g, f, "iogauge's iolog differs from fio's");
    for (run, who) in [(&fio, "fio"), (&iog, "iogauge")] {
        let blocks = sorted(run);
        let writes: u64 = blocks.iter().map(|b| count(b, "write")).sum();
        let syncs: u64 = blocks.iter().map(|b| count(b, "sync")).sum();
        assert_eq!(writes, total_ios(&run.json, "s", "write"), "{who}: writes");
        assert_eq!(syncs, total_ios(&run.json, "s", "sync"), "{who}: syncs");
        assert_eq!(syncs, 10, "{who}: 5 syncs per instance");
    }
    // A sync follows every third write, at that write's offset, of no length.
    let b = &g[0];
    assert_eq!(b[5], "@DIR@/s.0.0 write 8192 4096");
    assert_eq!(b[6], "@DIR@/s.0.0 sync 8192 0");
}

#[test]
fn random_read_iolog_covers_fios_offsets() {
    let Some((fio, iog)) = both("logs-iolog-rand.fio", &[]) else {
        return;
    };
    let split = |run: &Run| {
        let (_, blocks) = run.iolog("rr.iolog");
        assert_eq!(blocks.len(), 1);
        let (mut file_lines, mut offsets) = (Vec::new(), Vec::new());
        for l in &blocks[0] {
            let w: Vec<&str> = l.split(' ').collect();
            if w.len() == 4 && l != "fio version 3 iolog" {
                assert_eq!((w[1], w[3]), ("read", "4096"), "{l}");
                offsets.push(w[2].parse::<u64>().unwrap());
            } else {
                file_lines.push(l.clone());
            }
        }
        (file_lines, offsets)
    };
    let (f_files, mut f_off) = split(&fio);
    let (g_files, mut g_off) = split(&iog);
    assert_eq!(g_files, f_files, "header and file actions");
    assert_eq!(g_off.len() as u64, total_ios(&iog.json, "rr", "read"));
    assert_eq!(f_off.len() as u64, total_ios(&fio.json, "rr", "read"));
    f_off.sort_unstable();
    g_off.sort_unstable();
    assert_eq!(g_off, f_off, "the set of offsets read");
    // The random map: every block exactly once.
    assert_eq!(g_off, (0..16).map(|i| i * 4096).collect::<Vec<u64>>());
}

#[test]
fn unwritable_iolog_is_bad_input_and_writes_nothing() {
    let dir = scratch();
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args([
            "fio",
            "--name=j",
            "--rw=write",
            "--size=64k",
            "--write_iolog=no/such/dir/j.iolog",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("write_iolog file 'no/such/dir/j.iolog'") && err.contains("writable"),
        "{err}"
    );
    assert_empty(dir.path());
    // An empty name is refused while parsing, naming the option.
    let out = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["fio", "--name=j", "--size=64k", "--write_iolog="])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("write_iolog"),
        "{}",
        text(&out.stderr)
    );
    assert_empty(dir.path());
}

#[test]
fn sync_file_range_lines_match_fio() {
    let Some((fio, iog)) = both("logs-iolog-sfr.fio", &[]) else {
        return;
    };
    let (_, f) = fio.iolog("sfr.iolog");
    let (_, g) = iog.iolog("sfr.iolog");
    assert_eq!(g, f, "iogauge's iolog differs from fio's");
    // 16 writes: a call after the 4th, 8th and 12th (none after the last), logged as fio does
    // at the offset of the write before it, with length 0.
    let ranges: Vec<&String> = g[0]
        .iter()
        .filter(|l| l.contains(" sync_file_range "))
        .collect();
    assert_eq!(
        ranges,
        [
            "@DIR@/sfr.0.0 sync_file_range 12288 0",
            "@DIR@/sfr.0.0 sync_file_range 28672 0",
            "@DIR@/sfr.0.0 sync_file_range 45056 0",
        ]
    );
}
