//! Helpers shared by the integration tests (the modules of tests/tests.rs use some of them).
#![allow(dead_code)]

pub mod canary;
pub mod canary_names;
pub mod fake_kube;
pub mod kube;
pub mod loopfs;
pub mod strace;
pub mod throttle;

use iogauge::report::LatSummary;
use std::cell::RefCell;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::thread::LocalKey;

/// A fresh directory for a test's files, under the build's target directory: on the project's
/// own filesystem, a real disk, never a tmpfs `/tmp` (which measures memory and refuses
/// O_DIRECT). Removed when dropped.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a directory under target/tmp")
}

/// From here to its end, the calling test runs alone among the tests that call this: all tests
/// share one process and run two at a time, so a disk- or time-sensitive test, or one that uses
/// something of the host's (fio cross-checks, signal timing, loop devices, cgroups, Docker),
/// calls it first. Its thread holds a process-wide lock until it ends (a panic too); a second
/// call in the same test does nothing. It returns no guard, which could be dropped too early.
pub fn serial() {
    hold(&SERIAL, &SERIAL_HELD);
}

static SERIAL: Mutex<()> = Mutex::new(());

/// A guard held by a thread until it ends.
type Held = RefCell<Option<MutexGuard<'static, ()>>>;

thread_local! {
    // libtest runs each test on a thread of its own: the guard is dropped when the test ends.
    static SERIAL_HELD: Held = const { RefCell::new(None) };
}

fn hold(lock: &'static Mutex<()>, held: &'static LocalKey<Held>) {
    held.with(|held| {
        let mut held = held.borrow_mut();
        if held.is_none() {
            // Poison-tolerant: a serialized test that failed must not fail the ones after it.
            *held = Some(lock.lock().unwrap_or_else(|e| e.into_inner()));
        }
    });
}

#[test]
fn serial_holds_until_the_thread_ends_twice_without_deadlock_and_after_a_panic() {
    static LOCK: Mutex<()> = Mutex::new(());
    thread_local! {
        static HELD: Held = const { RefCell::new(None) };
    }
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || {
        hold(&LOCK, &HELD);
        hold(&LOCK, &HELD);
        held_tx.send(()).unwrap();
        end_rx.recv().unwrap();
    });
    held_rx.recv().unwrap();
    assert!(LOCK.try_lock().is_err(), "held while the thread runs");
    end_tx.send(()).unwrap();
    t.join().unwrap();
    assert!(LOCK.try_lock().is_ok(), "released when the thread ended");

    let t = std::thread::spawn(|| {
        hold(&LOCK, &HELD);
        panic!("a failing serialized test");
    });
    assert!(t.join().is_err());
    assert!(
        !matches!(LOCK.try_lock(), Err(std::sync::TryLockError::WouldBlock)),
        "released when the thread panicked"
    );
}

/// `Command::new(program)` for every process a test starts (iogauge, fio, kubectl, docker…), with
/// `IOGAUGE_NO_HISTORY=1`: iogauge runs in tests never save to the developer's history
/// (tests/history.rs removes it and names its own database).
pub fn cmd(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = Command::new(program);
    c.env("IOGAUGE_NO_HISTORY", "1");
    c
}

/// The iogauge binary under test.
pub const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

/// `iogauge ARGS…` in `cwd`, run to its end.
pub fn iogauge(args: &[&str], cwd: &Path) -> Output {
    cmd(IOGAUGE)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge")
}

/// `iogauge fio ARGS…` in `cwd`, run to its end.
pub fn iogauge_fio(args: &[&str], cwd: &Path) -> Output {
    fio_cmd(IOGAUGE)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge fio")
}

/// The fio side of a side-by-side run: `program` "fio" is fio, any other is iogauge (its path)
/// with its `fio` subcommand.
pub fn fio_cmd(program: &str) -> Command {
    let mut c = cmd(program);
    if program != "fio" {
        c.arg("fio");
    }
    c
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub fn files_in(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

pub fn assert_empty(d: &Path) {
    let left = files_in(d);
    assert!(
        left.is_empty(),
        "files left behind in {}: {left:?}",
        d.display()
    );
}

/// Waits (up to 10 s) until `p` exists, e.g. a benchmark file before a signal is sent.
pub fn wait_for_file(p: &Path) {
    let t0 = std::time::Instant::now();
    while !p.exists() {
        assert!(
            t0.elapsed().as_secs() < 10,
            "{} never appeared",
            p.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A fresh directory holding `data/` and `job.fio`: the fixture `tests/fixtures/fio/NAME` with
/// `@DIR@` set to `data/`, so that the job's data files and the logs it leaves in the working
/// directory (the fresh one) are apart. Returns the directory, `data/` and the job file.
pub fn job_with_data_dir(
    fixture: &str,
) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(fixture);
    let text = std::fs::read_to_string(src)
        .unwrap()
        .replace("@DIR@", data.to_str().unwrap());
    let job = dir.path().join("job.fio");
    std::fs::write(&job, text).unwrap();
    (dir, data, job)
}

/// Starts `fio JOB --output-format=json` (`program` "fio") or iogauge's, in `cwd`, with stdout
/// and stderr piped, so that a test can watch the running process before it waits for it.
pub fn spawn_job_json(program: &str, iogauge: &str, job: &Path, cwd: &Path) -> std::process::Child {
    fio_cmd(if program == "fio" { "fio" } else { iogauge })
        .arg(job)
        .arg("--output-format=json")
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The job named `name` of fio's (or iogauge's) JSON document.
pub fn job<'a>(v: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
        .unwrap_or_else(|| panic!("no job {name}"))
}

/// min ≤ mean ≤ max, and any percentiles ordered and inside min..max.
pub fn assert_lat_stats(s: &LatSummary) {
    assert!(s.n > 0);
    assert!(s.min <= s.max);
    assert!(s.min as f64 <= s.mean && s.mean <= s.max as f64);
    let v: Vec<u64> = s.percentiles.iter().map(|p| p.1).collect();
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "unordered {v:?}");
    assert!(
        v.iter().all(|&x| x >= s.min && x <= s.max),
        "outside min..max {v:?}"
    );
}

/// As [`assert_lat_stats`], and the percentiles were reported.
pub fn assert_lat_sane(s: &LatSummary) {
    assert_lat_stats(s);
    assert!(!s.percentiles.is_empty(), "no percentiles");
}

/// Whether `program --version` runs. Without it the calling test skips (said on stderr), but
/// with CI=true it fails instead: CI installs every tool (`.ci/run`), so it cannot pass by
/// skipping. `install` says how to get it (`apt-get install -y fio`).
pub fn have_tool(program: &str, install: &str) -> bool {
    let ok = cmd(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{program} is not installed, and CI=true requires the tests that use it: {install}"
        );
        eprintln!("skipping: {program} is not installed ({install})");
    }
    ok
}

/// Whether fio is installed for a cross-check (see [`have_tool`]). The calling test is
/// [`serial`] from here on: the cross-checks compare what two tools measured on the same disk.
pub fn have_fio() -> bool {
    serial();
    have_tool("fio", "apt-get install -y fio")
}

/// `iogauge preflight ARGS…` in `cwd`, run to its end.
pub fn preflight(args: &[&str], cwd: &Path) -> Output {
    cmd(IOGAUGE)
        .arg("preflight")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge")
}

/// `program` (fio, or iogauge with `pre` = ["fio"]) with `args` and JSON output, in `cwd`;
/// its stdout as one JSON document.
pub fn run_json(program: &str, pre: &[&str], args: &[String], cwd: &Path) -> serde_json::Value {
    let out = cmd(program)
        .args(pre)
        .args(args)
        .arg("--output-format=json")
        .current_dir(cwd)
        .output()
        .expect("spawn");
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{program}: stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// `args` (`@DIR@` in them replaced by each tool's directory) under fio and iogauge, each in a
/// scratch directory of its own; returns (fio, iogauge) JSON. iogauge must leave nothing behind.
pub fn both_args(args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let fd = scratch();
    let gd = scratch();
    let fix = |d: &Path| -> Vec<String> {
        args.iter()
            .map(|a| a.replace("@DIR@", d.to_str().unwrap()))
            .collect()
    };
    let fio = run_json("fio", &[], &fix(fd.path()), fd.path());
    let iog = run_json(IOGAUGE, &["fio"], &fix(gd.path()), gd.path());
    // iogauge cleans up after itself; fio leaves its files in its own temp dir.
    let left: Vec<_> = std::fs::read_dir(gd.path()).unwrap().collect();
    assert!(left.is_empty(), "iogauge left files: {left:?}");
    (fio, iog)
}

// --- JSON of fio and iogauge runs, for the cross-checks

/// Key paths of a JSON document, with array indices folded to `[]`.
pub fn key_paths(
    v: &serde_json::Value,
    prefix: &str,
    out: &mut std::collections::BTreeSet<String>,
) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, val) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                key_paths(val, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for val in a {
                key_paths(val, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// The integer at `path` (object keys, or array indices as numbers); panics naming the path.
pub fn u(v: &serde_json::Value, path: &[&str]) -> u64 {
    let mut cur = v;
    for p in path {
        cur = match p.parse::<usize>() {
            Ok(i) if cur.is_array() => &cur[i],
            _ => &cur[*p],
        };
    }
    cur.as_u64()
        .unwrap_or_else(|| panic!("{path:?} is not an integer: {cur}"))
}

/// Every key path fio's JSON has, iogauge's has too.
pub fn assert_keys_superset(fio: &serde_json::Value, iog: &serde_json::Value) {
    let (mut fk, mut gk) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    key_paths(fio, "", &mut fk);
    key_paths(iog, "", &mut gk);
    let missing: Vec<&String> = fk.difference(&gk).collect();
    assert!(
        missing.is_empty(),
        "keys fio prints but iogauge does not: {missing:?}"
    );
}

// --- fixture runs of fio and iogauge, for the fio_breadth_* cross-checks

/// One run: exit code, the JSON document on stdout (fio prints error lines before it), stderr.
pub struct Out {
    pub code: i32,
    pub json: serde_json::Value,
    pub stderr: String,
}

impl Out {
    /// `program`'s finished run; fails when its stdout holds no JSON document.
    pub fn of(program: &str, out: &Output) -> Out {
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        let start = stdout
            .find('{')
            .unwrap_or_else(|| panic!("{program}: no JSON on stdout: {stdout}\n{stderr}"));
        Out {
            code: out.status.code().unwrap_or(-1),
            json: serde_json::from_str(&stdout[start..])
                .unwrap_or_else(|e| panic!("{program}: {e}\n{stdout}\n{stderr}")),
            stderr,
        }
    }
}

/// One run of `job` (a job file's text) by fio or iogauge (`program`, as [`fio_cmd`]) in `dir`,
/// with JSON output; the job file is written there and removed after.
pub fn run_job(program: &str, job: &str, dir: &Path) -> Out {
    std::fs::write(dir.join("job.fio"), job).unwrap();
    let out = fio_cmd(program)
        .args(["job.fio", "--output-format=json"])
        .current_dir(dir)
        .output()
        .unwrap();
    std::fs::remove_file(dir.join("job.fio")).unwrap();
    Out::of(program, &out)
}

/// The fixture `tests/fixtures/fio/NAME` with `@DIR@` (and `subst`) replaced, written into
/// `dir`, run by `program` (with `pre` before the job file) there with JSON output.
pub fn run_fixture(
    program: &str,
    pre: &[&str],
    name: &str,
    subst: &[(&str, &str)],
    dir: &Path,
) -> Out {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name);
    let mut job_text = std::fs::read_to_string(&src).unwrap();
    job_text = job_text.replace("@DIR@", dir.to_str().unwrap());
    for (k, v) in subst {
        job_text = job_text.replace(k, v);
    }
    let job = dir.join("job.fio");
    std::fs::write(&job, job_text).unwrap();
    let out = cmd(program)
        .args(pre)
        .arg(&job)
        .arg("--output-format=json")
        .current_dir(dir)
        .output()
        .expect("spawn");
    std::fs::remove_file(&job).unwrap();
    Out::of(program, &out)
}

/// The fixture under fio and iogauge, each in its own scratch directory; iogauge must leave
/// nothing behind.
pub fn both(name: &str, subst: &[(&str, &str)]) -> (Out, Out) {
    let fd = scratch();
    let gd = scratch();
    let fio = run_fixture("fio", &[], name, subst, fd.path());
    let iog = run_fixture(IOGAUGE, &["fio"], name, subst, gd.path());
    assert_empty(gd.path());
    (fio, iog)
}

/// fio and iogauge ran the same jobs: equal job names, total_ios and io_bytes per direction.
pub fn assert_counts_equal(fio: &serde_json::Value, iog: &serde_json::Value) {
    let fj = fio["jobs"].as_array().unwrap();
    let gj = iog["jobs"].as_array().unwrap();
    assert_eq!(fj.len(), gj.len(), "number of job entries");
    for (f, g) in fj.iter().zip(gj) {
        for d in ["read", "write", "trim"] {
            assert_eq!(
                (f["jobname"].as_str(), u(f, &[d, "total_ios"])),
                (g["jobname"].as_str(), u(g, &[d, "total_ios"])),
                "{d} total_ios"
            );
            assert_eq!(
                u(f, &[d, "io_bytes"]),
                u(g, &[d, "io_bytes"]),
                "{} {d} io_bytes",
                f["jobname"]
            );
        }
    }
}
