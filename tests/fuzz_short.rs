//! The short fuzz run CI does on every change, on stable Rust (the long coverage-guided run is
//! cargo fuzz's: docs/FUZZING.md, bench/fuzz.sh): every input committed in fuzz/corpus/<target>/
//! runs, each within libFuzzer's per-input time limit, and mutations of them never panic. The
//! regressions at the end are the inputs the long run found, each fixed.
//!
//! A test binary of its own (Cargo.toml), not a module of tests/tests.rs: `fuzz` swaps the
//! process-wide panic hook while it runs, which would swallow the messages of other tests
//! failing meanwhile in the same process. It does without tests/common, so that it stays small.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use iogauge::fuzz::{corpus, fuzz, target, TARGETS};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `iogauge` as tests/common's cmd() starts it: a test never saves to the run history.
fn iogauge() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_iogauge"));
    c.env("IOGAUGE_NO_HISTORY", "1");
    c
}

/// A fresh directory under target/tmp, as tests/common's scratch().
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a directory under target/tmp")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// libFuzzer's -timeout in bench/fuzz.sh; a debug build on a loaded machine gets the same.
const PER_INPUT: Duration = Duration::from_secs(5);

/// Runs one input; its panic message, or how long it took.
fn run_one(name: &str, input: &[u8]) -> Result<Duration, String> {
    let t = target(name).unwrap();
    let start = Instant::now();
    panic::catch_unwind(AssertUnwindSafe(|| (t.run)(input)))
        .map(|()| start.elapsed())
        .map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        })
}

#[test]
fn every_target_has_a_libfuzzer_binary_and_a_corpus() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    for t in TARGETS {
        let file = format!("fuzz_targets/{}.rs", t.name.replace('-', "_"));
        let src = std::fs::read_to_string(fuzz_dir().join(&file)).unwrap();
        assert!(
            src.contains(&format!("iogauge::fuzz::run(\"{}\", data)", t.name)),
            "fuzz/{file} must run target {}",
            t.name
        );
        assert!(
            manifest.contains(&format!("name = \"{}\"\npath = \"{file}\"", t.name)),
            "fuzz/Cargo.toml has no [[bin]] {} at {file}",
            t.name
        );
        let c = corpus(&fuzz_dir().join("corpus"), t).unwrap();
        assert!(!c.is_empty(), "fuzz/corpus/{} is empty", t.name);
    }
}

#[test]
fn every_committed_input_runs_without_panic_within_the_time_limit() {
    let mut bad = Vec::new();
    for t in TARGETS {
        let dir = fuzz_dir().join("corpus").join(t.name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let input = std::fs::read(&f).unwrap();
            match run_one(t.name, &input) {
                Ok(took) if took > PER_INPUT => bad.push(format!("{}: took {took:?}", f.display())),
                Ok(_) => {}
                Err(msg) => bad.push(format!("{}: panicked: {msg}", f.display())),
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn no_parser_panics_on_mutated_input() {
    let root = fuzz_dir().join("corpus");
    // A fixed seed keeps CI repeatable; IOGAUGE_FUZZ_SEED explores elsewhere.
    let seed = std::env::var("IOGAUGE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261123);
    let mut found = Vec::new();
    for t in TARGETS {
        let c = corpus(&root, t).unwrap();
        let o = fuzz(t, &c, 2_000, Duration::from_secs(15), seed);
        assert!(o.execs > 0);
        for (msg, (n, input)) in &o.panics {
            found.push(format!(
                "{}: {n} × {msg}\n  input: {:?}",
                t.name,
                String::from_utf8_lossy(input)
            ));
        }
        if o.slowest.0 > PER_INPUT {
            found.push(format!(
                "{}: an input took {:?}\n  input: {:?}",
                t.name,
                o.slowest.0,
                String::from_utf8_lossy(&o.slowest.1)
            ));
        }
    }
    assert!(found.is_empty(), "seed {seed}:\n{}", found.join("\n"));
}

// Regressions: what the long run found, each fixed.

/// Found by fio-args and fio-jobfile (slow units of 0.3 s and more under libFuzzer): the "did you
/// mean" search filled an edit-distance matrix of the unknown name's length times every known
/// name's, for each of about a thousand names, so a 20 kB name took seconds and a 1 MB one a
/// minute. Long names now get no suggestion and candidates too different in length are skipped.
#[test]
fn a_long_unknown_option_is_refused_at_once_and_a_typo_still_gets_its_suggestion() {
    let name = "x".repeat(20_000);
    let job = format!("[j]\nrw=read\n{name}=1\n");
    assert!(run_one("fio-jobfile", job.as_bytes()).unwrap() < Duration::from_secs(1));
    let args = format!("--name=j\n--{name}=1\n");
    assert!(run_one("fio-args", args.as_bytes()).unwrap() < Duration::from_secs(1));

    let dir = scratch();
    let file = dir.path().join("long.fio");
    std::fs::write(&file, &job).unwrap();
    let start = Instant::now();
    let out = iogauge()
        .args(["fio", "--parse-only"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "iogauge fio: {}:3: unknown option 'xxxx",
            file.display()
        )),
        "{err}"
    );
    assert!(!err.contains("did you mean"), "{err}");

    std::fs::write(&file, "[j]\nrw=read\nfilesiz=1m\n").unwrap();
    let out = iogauge()
        .args(["fio", "--parse-only"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).trim_end(),
        format!(
            "iogauge fio: {}:3: unknown option 'filesiz'; did you mean 'filesize'?",
            file.display()
        )
    );
}

/// Found by history-row (six crashes in five minutes): a preflight document whose result table
/// has a key starting with 'P' and a multi-byte character (`P9é99`) panicked the page's
/// percentile parser, which sliced the key by byte: `iogauge report` and `history show` died
/// with "byte index is not a char boundary". Such a key is now just not a percentile.
#[test]
fn a_preflight_document_with_a_non_ascii_percentile_key_renders() {
    let doc = fuzz_dir().join("corpus/result-doc/regress-preflight-percentile-key.json");
    assert!(std::fs::read_to_string(&doc)
        .unwrap()
        .contains("P9\\u00e999"));
    let row = fuzz_dir().join("corpus/history-row/regress-preflight-percentile-key");
    run_one("history-row", &std::fs::read(row).unwrap()).unwrap();

    let dir = scratch();
    let page = dir.path().join("page.html");
    let out = iogauge()
        .arg("report")
        .arg(&doc)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("iogauge preflight: seed"), "{html}");
}

/// The fio-run target runs its job (a parser-only target would return at once), so that a
/// job thread's panic reaches the fuzzer: issue 23's trimwrite panic was in a job thread.
#[test]
fn the_fio_run_target_runs_the_job_for_real() {
    let took = run_one(
        "fio-run",
        b"[t]\nrw=read\nbs=4k\nsize=64k\ntime_based\nruntime=20ms\n",
    )
    .unwrap();
    assert!(took >= Duration::from_millis(20), "{took:?}");
    let took = run_one(
        "fio-run",
        b"[t]\nrw=trimwrite\nbs=4k\nsize=64k\nwrite_bw_log=t\n",
    )
    .unwrap();
    assert!(took < PER_INPUT, "{took:?}");
}

/// Found by fio-run (in 274,944 inputs): `verify=pattern` (no header) on 4-byte blocks
/// panicked in the job thread's read-back, which read a 40-byte header from every block. fio
/// runs the job; so does iogauge now.
#[test]
fn verify_pattern_on_blocks_smaller_than_a_header_reads_back() {
    let job =
        b"[p]\nrw=write\nbs=4\nsize=32k\nverify=pattern\nverify_pattern=0xdeadbeef\ndo_verify=1\n";
    run_one("fio-run", job).unwrap();
}

/// Found by fio-run (41 s for one input): `bsrange=4294967295-16k` over a 128 KiB
/// file zeroed and then filled a 4 GiB I/O buffer before the first I/O (30 s in a debug
/// build); only the bytes an I/O can move are filled now, and large buffers are mappings the
/// kernel zeroes page by page.
#[test]
fn a_block_range_far_larger_than_the_file_starts_at_once() {
    let job = b"[z]\nrw=randrw\nrwmixread=70\nbsrange=4294967295-16k\nsize=128k\nfsync=3\n";
    assert!(run_one("fio-run", job).unwrap() < PER_INPUT);
}
