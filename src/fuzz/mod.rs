//! Entry points for fuzzing the parsers of untrusted input: the libFuzzer targets in
//! `fuzz/fuzz_targets/` (cargo fuzz, nightly; docs/FUZZING.md) and the stable-Rust mutator in
//! `engine.rs` (`examples/fuzz.rs`, `tests/fuzz_short.rs`) both call [`TARGETS`].
//! Each target takes arbitrary bytes and must return, never panic, hang or allocate without
//! bound: a bad input is an `Err`. Nothing here writes outside a private temp dir (the
//! history target's database) and nothing reads beyond what the parser itself reads (fio's
//! `include`).

mod engine;
mod run_job;

pub use engine::{fuzz, Outcome};

use crate::compare::{compare, Noise};
use crate::history::{History, ListFilter, RunKind, SavedRun};
use crate::input::fio::parse_fio_args;
use crate::input::{profiles, troubleshoot};
use crate::report::check_csv::render_check_csv;
use crate::report::check_markdown::render_check_markdown;
use crate::report::check_text::render_check_text;
use crate::report::compare_text::{
    render_compare_csv, render_compare_markdown, render_compare_text,
};
use crate::report::document::{CheckDocument, KubeDocument, PreflightDocument};
use crate::report::html::{render_compare_html, render_json_html};
use crate::report::kube_text::render_kube_text;
use crate::report::preflight_text::render_human;
use crate::report::troubleshoot::FsPerfResults;
use crate::verdict::criteria::Tuning;
use crate::verdict::fsperf;
use serde_json::Value;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// A fuzz target: one parser fed arbitrary bytes.
pub struct Target {
    /// Its name on the fuzzer's command line and its corpus directory.
    pub name: &'static str,
    /// What it parses.
    pub about: &'static str,
    /// Feeds it one input.
    pub run: fn(&[u8]),
}

/// Every target.
pub static TARGETS: &[Target] = &[
    Target {
        name: "fio-args",
        about: "iogauge fio's command line (one argument per line; after a line '--', a job file read as '-')",
        run: fio_args,
    },
    Target {
        name: "fio-jobfile",
        about: "fio job files (iogauge fio -)",
        run: fio_jobfile,
    },
    Target {
        name: "fio-run",
        about: "fio job files run for real, each job confined to a private temporary directory, \
                256 KiB and 30 ms (run_job.rs): panics in the job threads",
        run: run_job::fio_run,
    },
    Target {
        name: "troubleshoot-spec",
        about: "troubleshoot specs (iogauge preflight), analyzers evaluated against a fixed result",
        run: troubleshoot_spec,
    },
    Target {
        name: "profile",
        about: "check profiles (iogauge check FILE.yaml), with each workload built",
        run: profile,
    },
    Target {
        name: "result-file",
        about: "collector result files (iogauge preflight --analyze-only)",
        run: result_file,
    },
    Target {
        name: "result-doc",
        about: "saved documents (iogauge report, compare, history show): check, preflight, kube, \
                fio and compare JSON, rendered to HTML, text, Markdown and CSV; compared with \
                themselves and, after a NUL byte, with a second document",
        run: result_doc,
    },
    Target {
        name: "kube-args",
        about: "iogauge kube's command line (one argument per line, after 'kube'); for check, \
                the request and the dry run's manifests when no cluster is needed",
        run: kube_args,
    },
    Target {
        name: "history-row",
        about: "a stored history row (NUL-separated columns kind, started, host, target, \
                profiles, verdicts, key_values, command, iogauge, document), listed and shown",
        run: history_row,
    },
    Target {
        name: "marker",
        about: "a run marker (.iogauge-run.*) as another user could leave it: parsed, then \
                written into a private directory beside a file and reaped as `iogauge cleanup` \
                does",
        run: marker,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// Runs the target called `name` on `data`: what each libFuzzer target in fuzz/fuzz_targets does.
/// Panics on an unknown name, which is a bug in the fuzz target, not in the input.
pub fn run(name: &str, data: &[u8]) {
    match target(name) {
        Some(t) => (t.run)(data),
        None => panic!("no fuzz target {name} in iogauge::fuzz::TARGETS"),
    }
}

/// The corpus of `target` under `root` (`fuzz/corpus/<name>/`): every file, sorted by name.
pub fn corpus(root: &Path, target: &Target) -> std::io::Result<Vec<Vec<u8>>> {
    let mut paths: Vec<_> = std::fs::read_dir(root.join(target.name))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths.iter().map(std::fs::read).collect()
}

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn fio_args(data: &[u8]) {
    let t = text(data);
    let (args, job) = match t.split_once("\n--\n") {
        Some((a, j)) => (a, j),
        None => (&*t, ""),
    };
    let args: Vec<String> = args.lines().map(str::to_string).collect();
    let _ = parse_fio_args(&args, &no_env, &mut job.as_bytes());
}

fn fio_jobfile(data: &[u8]) {
    let args = ["-".to_string()];
    let _ = parse_fio_args(&args, &no_env, &mut &data[..]);
}

fn troubleshoot_spec(data: &[u8]) {
    let mut p = troubleshoot::Preflight::default();
    if troubleshoot::load(&text(data), "fuzz.yaml", &mut p).is_err() {
        return;
    }
    let r = FsPerfResults::from_json(FIXED_RESULT).ok();
    for a in &p.analyzers {
        let _ = fsperf::analyze(a, r.as_ref(), "fuzz");
        let _ = fsperf::analyze(a, None, "fuzz");
    }
}

fn profile(data: &[u8]) {
    let Ok(p) = profiles::from_text(&text(data), "fuzz.yaml") else {
        return;
    };
    let t = Tuning {
        scale: 0.5,
        duration: Some(std::time::Duration::from_secs(1)),
        size: None,
        max_size: Some(1 << 20),
    };
    let _ = p.job(Path::new("/nonexistent"), &t);
    let _ = p.small_files(&t);
}

fn result_file(data: &[u8]) {
    if let Ok(r) = FsPerfResults::from_json(&text(data)) {
        let _ = fsperf::table(&r);
    }
}

/// A saved document as `report`, `compare` and `history show` read it: JSON, then every
/// renderer its kind has. After a NUL byte, a second document to compare with the first.
fn result_doc(data: &[u8]) {
    let (a, b) = match data.iter().position(|&c| c == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let Ok(va) = serde_json::from_slice::<Value>(a) else {
        return;
    };
    render_all(&va);
    let vb = match b.map(serde_json::from_slice::<Value>) {
        Some(Ok(v)) => v,
        Some(Err(_)) => return,
        None => va.clone(),
    };
    let ra = [("a".to_string(), va)];
    let rb = [("b".to_string(), vb)];
    // Interrupted documents too: they must render like any other.
    if let Ok(doc) = compare(&ra, &rb, &Noise::default(), true) {
        let _ = render_compare_text(&doc);
        let _ = render_compare_markdown(&doc);
        let _ = render_compare_csv(&doc);
        let _ = render_compare_html(&doc);
    }
}

/// Every page and text a document can be shown as (report, history show, check's formats).
fn render_all(v: &Value) {
    let _ = render_json_html(v);
    if let Ok(d) = serde_json::from_value::<CheckDocument>(v.clone()) {
        let _ = render_check_text(&d, true);
        let _ = render_check_markdown(&d);
        let _ = render_check_csv(&d);
    }
    if let Ok(d) = serde_json::from_value::<KubeDocument>(v.clone()) {
        let _ = render_kube_text(&d, true);
    }
    if let Ok(d) = serde_json::from_value::<PreflightDocument>(v.clone()) {
        let _ = render_human(&d.name, &d.outcomes);
    }
}

fn kube_args(data: &[u8]) {
    let t = text(data);
    let args: Vec<String> = t.lines().map(str::to_string).collect();
    let _ = crate::cli::kube::fuzz_args(&args);
}

/// One database for the whole run, in a private temp dir, emptied before each row: opening
/// SQLite per input would make the target a benchmark of `open`.
struct Db {
    history: History,
    raw: rusqlite::Connection,
}

fn history_row(data: &[u8]) {
    static DB: OnceLock<Option<Mutex<Db>>> = OnceLock::new();
    let Some(db) = DB.get_or_init(|| Db::new().ok().map(Mutex::new)) else {
        return;
    };
    let db = match db.lock() {
        Ok(d) => d,
        // A panic in an earlier input poisoned it; the data is still a database.
        Err(p) => p.into_inner(),
    };
    let mut cols: Vec<rusqlite::types::Value> =
        data.split(|&c| c == 0).take(10).map(column).collect();
    cols.resize(10, rusqlite::types::Value::Text(String::new()));
    if db.raw.execute("DELETE FROM runs", []).is_err() {
        return;
    }
    let inserted = db.raw.execute(
        "INSERT INTO runs (id, kind, started, host, target, profiles, verdicts, key_values, \
         command, iogauge, document) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        rusqlite::params_from_iter(cols),
    );
    if inserted.is_err() {
        return;
    }
    if let Ok((runs, _bad)) = db.history.list(&ListFilter::default()) {
        let _ = crate::history::listing::table(&runs);
        for r in &runs {
            let _ = r.summary();
        }
    }
    if let Ok(Some(run)) = db.history.get(1) {
        show(&run);
    }
}

/// The marker target's private directory: a marker is written there per input, beside a
/// directory no run made, which must survive every input.
struct MarkerDir {
    dir: std::path::PathBuf,
}

fn marker(data: &[u8]) {
    use crate::workload::marker;
    let _ = marker::parse(data);
    static DIR: OnceLock<Option<Mutex<MarkerDir>>> = OnceLock::new();
    let Some(d) = DIR.get_or_init(|| {
        let dir = private_dir("marker").ok()?;
        // A directory with a file in it: even an entry that guessed its identity (libFuzzer
        // learns compared integers) could only rmdir it, which fails while it is not empty.
        std::fs::create_dir(dir.join("keep")).ok()?;
        std::fs::write(dir.join("keep").join("data"), b"not the run's").ok()?;
        Some(Mutex::new(MarkerDir { dir }))
    }) else {
        return;
    };
    let d = match d.lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    // pid 2^22 + 1 is above pid_max: the marker's run is never alive under this name.
    if std::fs::write(d.dir.join(".iogauge-run.4194305.1"), data).is_err() {
        return;
    }
    let _ = marker::reap(&d.dir).describe();
    let _ = std::fs::remove_file(d.dir.join(".iogauge-run.4194305.1"));
    assert!(
        d.dir.join("keep").join("data").exists(),
        "a marker removed what no run made"
    );
}

/// What `history show` prints for a run.
fn show(run: &SavedRun) {
    let _ = serde_json::to_string_pretty(&run.document);
    let _ = crate::history::listing::table(std::slice::from_ref(run));
    match run.kind {
        RunKind::Check | RunKind::Canary => {
            if let Ok(d) = serde_json::from_value::<CheckDocument>(run.document.clone()) {
                let _ = render_check_text(&d, false);
            }
        }
        RunKind::Kube => {
            if let Ok(d) = serde_json::from_value::<KubeDocument>(run.document.clone()) {
                let _ = render_kube_text(&d, false);
            }
        }
        RunKind::Preflight => {
            if let Ok(d) = serde_json::from_value::<PreflightDocument>(run.document.clone()) {
                let _ = render_human(&d.name, &d.outcomes);
            }
        }
        RunKind::Fio => {}
    }
    let _ = render_json_html(&run.document);
}

/// A column's value: text, or after a leading tag byte another SQLite type (a row written by
/// another program, or a damaged file, need not hold text where iogauge wrote text).
fn column(c: &[u8]) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match c.split_first() {
        Some((1, _)) => V::Null,
        Some((2, rest)) => V::Blob(rest.to_vec()),
        Some((3, rest)) => V::Integer(text(rest).trim().parse().unwrap_or(i64::MIN)),
        Some((4, rest)) => V::Real(text(rest).trim().parse().unwrap_or(f64::NAN)),
        _ => V::Text(text(c).into_owned()),
    }
}

impl Db {
    fn new() -> Result<Db, String> {
        let path = private_dir("history")?.join("history.db");
        let history = History::open(Some(&path))?;
        let raw = rusqlite::Connection::open(&path).map_err(|e| e.to_string())?;
        // Nothing here needs to survive a crash; the fuzzer's speed does matter.
        let _ = raw.execute_batch("PRAGMA synchronous = OFF");
        Ok(Db { history, raw })
    }
}

/// The targets' private temp dirs, removed at exit (libFuzzer ends with `exit`, which drops no
/// static; a crash leaves them, named by pid, in $TMPDIR).
static PRIVATE_DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_private_dirs() {
    let dirs = PRIVATE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    for d in dirs.iter() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A new directory `iogauge-fuzz-WHAT.PID` under $TMPDIR, for one target's files.
fn private_dir(what: &str) -> Result<std::path::PathBuf, String> {
    let path = std::env::temp_dir().join(format!("iogauge-fuzz-{what}.{}", std::process::id()));
    // create_dir, not create_dir_all: a name someone else made first (in a shared /tmp, a
    // symlink to elsewhere) is not ours.
    std::fs::create_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dirs = PRIVATE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    if dirs.is_empty() {
        // SAFETY: registers a plain function with no arguments; it only reads a static.
        unsafe { libc::atexit(remove_private_dirs) };
    }
    dirs.push(path.clone());
    Ok(path)
}

/// A troubleshoot result table, for analyzers to be evaluated against.
const FIXED_RESULT: &str = r#"{"Min":1000,"Max":9000000,"Average":50000,"P1":1100,"P5":1200,"P10":1300,"P20":1400,"P30":1500,"P40":1600,"P50":1700,"P60":1800,"P70":1900,"P80":2000,"P90":3000,"P95":4000,"P99":5000,"P995":6000,"P999":7000,"P9995":8000,"P9999":8500}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_result_parses_and_every_target_takes_garbage() {
        assert!(FsPerfResults::from_json(FIXED_RESULT).is_ok());
        for t in TARGETS {
            (t.run)(b"");
            (t.run)(b"\xff\xfe[\x00");
        }
    }
}
