//! The run history end to end: real `check` and `fio` runs saved to a database in a temporary
//! directory (every call names it with --history-db), listed, shown, removed and pruned; runs
//! that cannot save (read-only, damaged, unwritable) still print their result and keep their
//! exit code; eight processes saving at once.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use iogauge::report::document::CheckDocument;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

/// iogauge with saving on (tests/common turns it off for every other test) and nothing taken
/// from the developer's environment: XDG_DATA_HOME points at `home`, which must stay empty.
fn iogauge(home: &Path) -> Command {
    let mut c = cmd(env!("CARGO_BIN_EXE_iogauge"));
    c.env_remove("IOGAUGE_NO_HISTORY")
        .env_remove("IOGAUGE_HISTORY")
        .env("XDG_DATA_HOME", home)
        .env("HOME", home);
    c
}

fn run(c: &mut Command) -> Output {
    c.output().expect("spawn iogauge")
}

fn history(home: &Path, db: &Path, args: &[&str]) -> Output {
    run(iogauge(home)
        .arg("history")
        .arg("--history-db")
        .arg(db)
        .args(args))
}

/// A 1 MiB null-engine fio run (no disk I/O), JSON on stdout.
fn fio(home: &Path, db: &Path, extra: &[&str]) -> Command {
    let mut c = iogauge(home);
    c.args([
        "fio",
        "--ioengine=null",
        "--size=1m",
        "--name=a",
        "--rw=randwrite",
    ])
    .args(["--output-format=json", "--history-db"])
    .arg(db)
    .args(extra)
    .current_dir(home);
    c
}

fn rows(home: &Path, db: &Path) -> Vec<Value> {
    let o = history(home, db, &["--format", "json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice::<Value>(&o.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

struct Env {
    _dir: tempfile::TempDir,
    home: std::path::PathBuf,
    db: std::path::PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = scratch();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".local/share")).unwrap();
        // The database's directory: iogauge makes only the default place's.
        std::fs::create_dir(dir.path().join("db")).unwrap();
        let db = dir.path().join("db/history.db");
        Env {
            home,
            db,
            _dir: dir,
        }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // Nothing went to the default location.
        if !std::thread::panicking() {
            assert_empty(&self.home.join(".local").join("share"));
        }
    }
}

#[test]
fn a_check_is_saved_listed_and_shown_as_it_was_printed() {
    let e = Env::new();
    let dir = e.home.join("scratch");
    std::fs::create_dir(&dir).unwrap();
    let check = |format: &str| {
        let o = run(iogauge(&e.home)
            .args([
                "check", "etcd", "--scale", "0.05", "--format", format, "--dir",
            ])
            .arg(&dir)
            .arg("--history-db")
            .arg(&e.db));
        assert!(
            matches!(o.status.code(), Some(0 | 3 | 4)),
            "{}",
            text(&o.stderr)
        );
        assert!(
            !text(&o.stderr).contains("history not saved"),
            "{}",
            text(&o.stderr)
        );
        o
    };
    let json_run = check("json");
    let text_run = check("text");
    assert_empty(&dir);

    let r = rows(&e.home, &e.db);
    assert_eq!(r.len(), 2);
    let (text_id, json_id) = (r[0]["id"].as_i64().unwrap(), r[1]["id"].as_i64().unwrap());
    assert!(text_id > json_id, "newest first: {r:?}");
    let printed: CheckDocument = serde_json::from_slice(&json_run.stdout).unwrap();
    let p = &printed.profiles[0];
    let value = &p.metrics[0].value_text;
    assert_eq!(r[1]["kind"], "check");
    assert_eq!(r[1]["target"], dir.to_str().unwrap());
    assert_eq!(r[1]["profiles"], serde_json::json!(["etcd"]));
    // A verdict reached early is marked so.
    let early = if p.sequential.as_ref().is_some_and(|s| s.stopped_early) {
        " (stopped early)"
    } else {
        ""
    };
    assert_eq!(
        r[1]["verdicts"][0],
        format!("etcd {}{early}", verdict_word(&json_run))
    );
    assert_eq!(r[1]["key_values"][0], format!("etcd {value}"));

    // The table: the run's id, kind, target and its verdict with its value.
    let o = history(&e.home, &e.db, &[]);
    assert!(o.status.success());
    let table = text(&o.stdout);
    assert!(table.starts_with("ID  WHEN"), "{table}");
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("{json_id} ")))
        .unwrap();
    assert!(line.contains(" check "), "{line}");
    assert!(line.contains(dir.to_str().unwrap()), "{line}");
    assert!(
        line.ends_with(&format!("etcd {} {value}", verdict_word(&json_run))),
        "{line}"
    );

    // show --format json is the document check printed.
    let o = history(
        &e.home,
        &e.db,
        &["show", &json_id.to_string(), "--format", "json"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stored: CheckDocument = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(stored, printed);
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap(),
        serde_json::from_slice::<Value>(&json_run.stdout).unwrap()
    );

    // show's text is check's text (neither on a terminal: no colour).
    let o = history(&e.home, &e.db, &["show", &text_id.to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), text(&text_run.stdout));
}

fn verdict_word(o: &Output) -> &'static str {
    match o.status.code() {
        Some(0) => "PASS",
        Some(3) => "FAIL",
        Some(4) => "WARN",
        c => panic!("exit {c:?}"),
    }
}

#[test]
fn a_fio_run_is_saved_with_each_jobs_iops() {
    let e = Env::new();
    let o = run(&mut fio(&e.home, &e.db, &["--name=b", "--rw=read"]));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = rows(&e.home, &e.db);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["kind"], "fio");
    assert_eq!(r[0]["profiles"], serde_json::json!(["a", "b"]));
    assert_eq!(r[0]["verdicts"], serde_json::json!([]));
    let kv: Vec<&str> = r[0]["key_values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let iops = |job: usize, dir: &str| printed["jobs"][job][dir]["iops"].as_f64().unwrap();
    assert_eq!(
        kv,
        vec![
            format!("a write {:.0} IOPS", iops(0, "write")),
            format!("b read {:.0} IOPS", iops(1, "read"))
        ]
    );
    // The stored document is fio's JSON output of the run, both jobs in one document, with the
    // per-interval data (`iogauge` per direction) the printed one has only with
    // --json-intervals: compare and report need it.
    let o = history(&e.home, &e.db, &["show", "1", "--format", "json"]);
    let mut stored = serde_json::from_slice::<Value>(&o.stdout).unwrap();
    for job in stored["jobs"].as_array_mut().unwrap() {
        for dir in ["read", "write", "trim"] {
            let ig = job[dir].as_object_mut().unwrap().remove("iogauge").unwrap();
            assert!(ig.get("iops_series").is_some(), "{ig}");
        }
    }
    assert_eq!(stored, printed);

    // A text-output run is stored as JSON too.
    let o = run(iogauge(&e.home)
        .args([
            "fio",
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--history-db",
        ])
        .arg(&e.db)
        .current_dir(&e.home));
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("Run status group 0"));
    let o = history(&e.home, &e.db, &["show", "2", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["jobname"], "t");
}

#[test]
fn no_history_and_its_variable_save_nothing() {
    let e = Env::new();
    let o = run(&mut fio(&e.home, &e.db, &["--no-history"]));
    assert!(o.status.success());
    let o = run(fio(&e.home, &e.db, &[]).env("IOGAUGE_NO_HISTORY", "1"));
    assert!(o.status.success());
    assert!(!e.db.exists());
    assert_eq!(files_in(e.db.parent().unwrap()), Vec::<String>::new());
    // --parse-only runs nothing and saves nothing.
    let o = run(&mut fio(&e.home, &e.db, &["--parse-only"]));
    assert!(o.status.success());
    assert!(!e.db.exists());
    // Bad input (exit 2) is not a run.
    let o = run(&mut fio(&e.home, &e.db, &["--bs=banana"]));
    assert_eq!(o.status.code(), Some(2));
    assert!(!e.db.exists());
    // Reading an empty history: a note, nothing on stdout.
    let o = history(&e.home, &e.db, &[]);
    assert!(o.status.success());
    assert_eq!(text(&o.stdout), "");
    assert_eq!(
        text(&o.stderr),
        format!("iogauge history: no runs saved in {}\n", e.db.display())
    );
    assert!(!e.db.exists(), "reading creates no database");
}

/// The run as someone who cannot write `path` (root ignores file modes, so as nobody then).
fn unprivileged(c: &mut Command, path: &Path, dir_too: bool) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        c.uid(65534).gid(65534);
    } else {
        let mode = if path.is_dir() { 0o555 } else { 0o444 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        if dir_too {
            let d = path.parent().unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o555)).unwrap();
        }
    }
}

fn assert_saved_nothing_but_ran(o: &Output, db: &Path, reason: &str) {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the result is printed");
    assert_eq!(doc["jobs"][0]["jobname"], "a");
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let want = format!(
        "iogauge: history not saved: {}: {reason}; the result above is complete (--no-history to skip saving)\n",
        db.display()
    );
    assert_eq!(err, want);
}

#[test]
fn a_history_that_cannot_be_written_costs_one_line() {
    let e = Env::new();
    let top = e.db.parent().unwrap().parent().unwrap().to_path_buf();
    // Others (nobody, when the tests run as root) may enter the test's directories.
    for d in [&top, &e.home] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    // Damaged: garbage bytes.
    let bad = top.join("garbage.db");
    std::fs::write(&bad, vec![0x5a_u8; 8192]).unwrap();
    let o = run(&mut fio(&e.home, &bad, &[]));
    assert_saved_nothing_but_ran(&o, &bad, "file is not a database");
    assert_eq!(
        std::fs::read(&bad).unwrap(),
        vec![0x5a_u8; 8192],
        "left as it was"
    );

    // A location under a regular file: given as --history-db, refused before anything runs…
    let under = top.join("garbage.db/history.db");
    let o = run(&mut fio(&e.home, &under, &[]));
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge fio: --history-db {}: '{}' is a file, not a directory\n",
            under.display(),
            bad.display()
        )
    );
    // …and from $IOGAUGE_HISTORY, found out only when saving: one line, the run stands.
    let o = run(iogauge(&e.home)
        .args([
            "fio",
            "--ioengine=null",
            "--size=1m",
            "--name=a",
            "--rw=randwrite",
        ])
        .arg("--output-format=json")
        .env("IOGAUGE_HISTORY", &under)
        .current_dir(&e.home));
    assert_saved_nothing_but_ran(
        &o,
        &under,
        &format!("'{}' is a file, not a directory", bad.display()),
    );

    // A read-only database.
    let ro = top.join("ro/history.db");
    std::fs::create_dir(top.join("ro")).unwrap();
    assert!(run(&mut fio(&e.home, &ro, &[])).status.success());
    std::fs::set_permissions(ro.parent().unwrap(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = fio(&e.home, &ro, &[]);
    unprivileged(&mut c, &ro, true);
    let o = run(&mut c);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("iogauge: history not saved: {}: ", ro.display()))
            && err.ends_with("; the result above is complete (--no-history to skip saving)\n"),
        "{err}"
    );
    assert_eq!(rows(&e.home, &ro).len(), 1, "the earlier run is intact");

    // An unwritable directory.
    let locked = top.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let inside = locked.join("history.db");
    let mut c = fio(&e.home, &inside, &[]);
    unprivileged(&mut c, &locked, false);
    let o = run(&mut c);
    assert_saved_nothing_but_ran(
        &o,
        &inside,
        &format!(
            "cannot create a file in {}: Permission denied",
            locked.display()
        ),
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn eight_processes_saving_at_once_all_land_intact() {
    let e = Env::new();
    let children: Vec<_> = (0..8)
        .map(|_| {
            fio(&e.home, &e.db, &[])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        assert_eq!(text(&o.stderr), "", "every save succeeded");
    }
    assert_eq!(rows(&e.home, &e.db).len(), 8);
    let c = rusqlite::Connection::open(&e.db).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    let n: i64 = c
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 8);
}

#[test]
fn rm_and_prune_remove_what_they_say() {
    let e = Env::new();
    for _ in 0..4 {
        assert!(run(&mut fio(&e.home, &e.db, &[])).status.success());
    }
    let ids = |e: &Env| -> Vec<i64> {
        rows(&e.home, &e.db)
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&e), vec![4, 3, 2, 1]);

    let o = history(&e.home, &e.db, &["rm", "1", "3"]);
    assert!(o.status.success());
    assert_eq!(text(&o.stderr), "iogauge history: removed 2 runs\n");
    assert_eq!(ids(&e), vec![4, 2]);

    // An unknown id: exit 2, the exact message, and nothing removed.
    let unknown = format!(
        "iogauge history: no run with id 42 in {}; 'iogauge history' lists them\n",
        e.db.display()
    );
    for args in [&["rm", "2", "42"][..], &["show", "42"]] {
        let o = history(&e.home, &e.db, args);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(text(&o.stderr), unknown);
        assert_eq!(text(&o.stdout), "");
    }
    assert_eq!(ids(&e), vec![4, 2]);

    // Both are from just now: none is a day old.
    let left = |removed: &str, n: usize| {
        format!(
            "iogauge history: removed {removed}; {n} left in {}\n",
            e.db.display()
        )
    };
    let o = history(&e.home, &e.db, &["prune", "--older-than", "1d"]);
    assert_eq!(text(&o.stderr), left("0 runs", 2));
    // Age one of them.
    let c = rusqlite::Connection::open(&e.db).unwrap();
    c.execute(
        "UPDATE runs SET started = '2001-01-01T00:00:00Z' WHERE id = 2",
        [],
    )
    .unwrap();
    drop(c);
    let o = history(
        &e.home,
        &e.db,
        &["prune", "--older-than", "30d", "--keep", "2"],
    );
    assert_eq!(text(&o.stderr), left("0 runs", 2));
    let o = history(&e.home, &e.db, &["prune", "--older-than", "30d"]);
    assert_eq!(text(&o.stderr), left("1 run", 1));
    assert_eq!(ids(&e), vec![4]);
    // Emptying the history needs --all.
    let o = history(&e.home, &e.db, &["prune", "--keep", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(ids(&e), vec![4]);
    let o = history(&e.home, &e.db, &["prune", "--keep", "0", "--all"]);
    assert_eq!(text(&o.stderr), left("1 run", 0));
    assert!(ids(&e).is_empty());
    let o = history(&e.home, &e.db, &["prune"]);
    assert_eq!(o.status.code(), Some(2));
}
