//! Issue 21, the run history: a database iogauge refuses is left byte for byte as it was; a
//! read-only database can be listed by who may only read it; a damaged or oversized row is
//! skipped and named instead of breaking `history`, `rm`, `show` and `compare`; twenty processes
//! creating a fresh database at once lose no run; devices and empty files are never made into
//! databases.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_iogauge");

/// iogauge with saving on and nothing from the developer's environment: the default history
/// location is inside `home` (each test names its database anyway).
fn iogauge(home: &Path) -> Command {
    let mut c = cmd(BIN);
    c.env_remove("IOGAUGE_NO_HISTORY")
        .env_remove("IOGAUGE_HISTORY")
        .env("XDG_DATA_HOME", home)
        .env("HOME", home)
        .current_dir(home);
    c
}

/// The same, as user nobody (`setpriv`), for the tests that need someone without root's
/// powers; `None` (after saying so) when the tests do not run as root.
fn as_nobody(home: &Path) -> Option<Command> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping the unprivileged part: the tests do not run as root");
        return None;
    }
    let mut c = cmd("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .env_remove("IOGAUGE_NO_HISTORY")
        .env_remove("IOGAUGE_HISTORY")
        .env("XDG_DATA_HOME", home)
        .env("HOME", home)
        .current_dir(home);
    Some(c)
}

/// A 64 KiB null-engine fio run (no disk I/O) saving to `db`, JSON on stdout.
fn fio(home: &Path, db: &Path) -> Command {
    let mut c = iogauge(home);
    c.args(["fio", "--ioengine=null", "--size=64k", "--name=a"])
        .args(["--output-format=json", "--history-db"])
        .arg(db);
    c
}

fn history(home: &Path, db: &Path, args: &[&str]) -> Output {
    iogauge(home)
        .arg("history")
        .args(args)
        .arg("--history-db")
        .arg(db)
        .output()
        .unwrap()
}

/// Runs `c`, killing it after 20 s (a FIFO must not hang iogauge).
fn run_bounded(c: &mut Command) -> Output {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("iogauge hung: {c:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A scratch directory others may enter (the tests' nobody runs inside it).
fn open_scratch() -> (tempfile::TempDir, PathBuf) {
    let d = scratch();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = d.path().to_path_buf();
    (d, home)
}

fn saved_ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "", "saved without a word");
}

fn not_saved(o: &Output, db: &Path, reason: &str) {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("the result is printed");
    assert_eq!(doc["jobs"][0]["jobname"], "a");
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge: history not saved: {}: {reason}; the result above is complete \
             (--no-history to skip saving)\n",
            db.display()
        )
    );
}

#[test]
fn a_foreign_database_is_refused_and_left_byte_for_byte_as_it_was() {
    let (_d, home) = open_scratch();
    let db = home.join("app.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES ('precious');")
        .unwrap();
    drop(c);
    let before = std::fs::read(&db).unwrap();
    let why = "is an SQLite database, but not an iogauge history (it has other tables and no \
               history schema version); name another file";

    // Saving into it: the run stands, one line says why nothing was saved.
    not_saved(&fio(&home, &db).output().unwrap(), &db, why);
    // Reading, removing, comparing: bad input, the same words.
    for args in [
        &[][..],
        &["show", "1"],
        &["rm", "1"],
        &["prune", "--keep", "0"],
    ] {
        let o = history(&home, &db, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert_eq!(
            text(&o.stderr),
            format!("iogauge history: {}: {why}\n", db.display())
        );
        assert_eq!(text(&o.stdout), "");
    }
    let o = iogauge(&home)
        .args(["compare", "1", "2", "--history-db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge compare: {}: {why}\n", db.display())
    );

    assert_eq!(std::fs::read(&db).unwrap(), before, "the file is unchanged");
    let mut left = files_in(&home);
    left.sort();
    assert_eq!(left, ["app.db"], "no journal, -wal or -shm beside it");
}

#[test]
fn a_read_only_database_is_listed_and_shown_by_who_may_only_read_it() {
    let (_d, home) = open_scratch();
    let dir = home.join("ro");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("history.db");
    saved_ok(&fio(&home, &db).output().unwrap());
    saved_ok(&fio(&home, &db).output().unwrap());
    // Read-only for everyone, in a directory only root may write (no -shm can be made there).
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = std::fs::read(&db).unwrap();
    let Some(_) = as_nobody(&home) else { return };
    let nobody = |args: &[&str]| {
        as_nobody(&home)
            .unwrap()
            .args(args)
            .arg("--history-db")
            .arg(&db)
            .output()
            .unwrap()
    };

    let o = nobody(&["history", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [2, 1]);

    let o = nobody(&["history", "show", "1", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["jobname"], "a");

    let o = nobody(&["compare", "1", "2"]);
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "{}",
        text(&o.stderr)
    );
    assert!(!o.stdout.is_empty());

    // Removing needs to write: an error (1) in SQLite's words, and nothing changed.
    let o = nobody(&["history", "rm", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge history: {}: attempt to write a readonly database\n",
            db.display()
        )
    );
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(files_in(&dir), ["history.db"]);
}

#[test]
fn a_damaged_row_is_skipped_and_named_and_can_be_removed() {
    let (_d, home) = open_scratch();
    let db = home.join("history.db");
    for _ in 0..4 {
        saved_ok(&fio(&home, &db).output().unwrap());
    }
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "UPDATE runs SET profiles = 'not json' WHERE id = 2;
         UPDATE runs SET document = '{' WHERE id = 3;",
    )
    .unwrap();
    drop(c);
    let skipped = "iogauge history: skipped run 2: its profiles is not a JSON list of strings \
                   (expected ident at line 1 column 2); 'iogauge history rm 2' removes it\n";

    // The list: the others, and one line for the damaged row.
    let o = history(&home, &db, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), skipped);
    let listed = text(&o.stdout);
    let ids: Vec<&str> = listed
        .lines()
        .skip(1)
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(ids, ["4", "3", "1"]);

    // Showing it: an error naming the run and what is wrong; the others show.
    for (id, problem) in [
        (
            "2",
            "its profiles is not a JSON list of strings (expected ident at line 1 column 2)",
        ),
        (
            "3",
            "its document is not JSON (EOF while parsing an object at line 1 column 1)",
        ),
    ] {
        let o = history(&home, &db, &["show", id]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        assert_eq!(
            text(&o.stderr),
            format!(
                "iogauge history: {}: run {id}: {problem}; 'iogauge history rm {id}' removes it\n",
                db.display()
            )
        );
        assert_eq!(text(&o.stdout), "");
    }
    let o = history(&home, &db, &["show", "1", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    // compare: the sound runs compare; the damaged one is named.
    let compare = |a: &str, b: &str| {
        iogauge(&home)
            .args(["compare", a, b, "--history-db"])
            .arg(&db)
            .output()
            .unwrap()
    };
    let o = compare("1", "4");
    assert!(
        matches!(o.status.code(), Some(0 | 3 | 4)),
        "{}",
        text(&o.stderr)
    );
    let o = compare("1", "3");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge compare: {}: run 3: its document is not JSON (EOF while parsing an object \
             at line 1 column 1); 'iogauge history rm 3' removes it\n",
            db.display()
        )
    );

    // rm removes damaged rows like any other; then nothing is skipped.
    let o = history(&home, &db, &["rm", "2", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "iogauge history: removed 2 runs\n");
    let o = history(&home, &db, &[]);
    assert_eq!(text(&o.stderr), "");
    assert_eq!(text(&o.stdout).lines().count(), 3);
}

#[test]
fn an_oversized_row_is_not_read_into_memory() {
    let (_d, home) = open_scratch();
    let db = home.join("history.db");
    for _ in 0..3 {
        saved_ok(&fio(&home, &db).output().unwrap());
    }
    // hex() of a zeroblob: text of '0's, 1.2 MB of host name and 70 MB of document.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "UPDATE runs SET host = hex(zeroblob(600000)) WHERE id = 1;
         UPDATE runs SET document = hex(zeroblob(35000000)) WHERE id = 2;",
    )
    .unwrap();
    drop(c);
    let o = history(&home, &db, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        "iogauge history: skipped run 1: its host is 1200000 bytes, more than the 1048576 bytes \
         a history row may hold; 'iogauge history rm 1' removes it\n"
    );
    assert_eq!(text(&o.stdout).lines().count(), 3, "runs 3 and 2");
    let o = history(&home, &db, &["show", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge history: {}: run 2: its document is 70000000 bytes, more than the 67108864 \
             bytes a history row may hold; 'iogauge history rm 2' removes it\n",
            db.display()
        )
    );
}

#[test]
fn twenty_processes_creating_a_fresh_database_at_once_lose_no_run() {
    use std::io::Write;
    let (_d, home) = open_scratch();
    let job = "[a]\nioengine=null\nsize=64k\n";
    let t0 = Instant::now();
    let mut rounds = 0;
    // Rounds of twenty processes racing to create a fresh database and save in it, for up to
    // 15 s. Each reads its job file from stdin, so all wait until the job is written, then
    // run and save at the same moment. (Before the fix this lost a save in about one round of
    // ten, in the journal-mode switch on the shared file; a race, so not caught every time.)
    while rounds < 3 || (t0.elapsed() < Duration::from_secs(15) && rounds < 40) {
        let db = home.join(format!("fresh{rounds}.db"));
        let mut children: Vec<_> = (0..20)
            .map(|_| {
                iogauge(&home)
                    .args(["fio", "-", "--output-format=json", "--history-db"])
                    .arg(&db)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in &mut children {
            c.stdin.take().unwrap().write_all(job.as_bytes()).unwrap();
        }
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
            assert_eq!(text(&o.stderr), "", "round {rounds}: every save succeeded");
        }
        let c = rusqlite::Connection::open(&db).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 20, "round {rounds}: every run saved");
        rounds += 1;
    }
    // Only the databases are left: no temporary file of the processes that lost the race.
    let left: Vec<String> = files_in(&home)
        .into_iter()
        .filter(|f| !(f.starts_with("fresh") && f.ends_with(".db")))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn devices_fifos_and_empty_files_are_never_made_databases() {
    let (_d, home) = open_scratch();
    let journal = Path::new("/dev/full-journal");
    let had_journal = journal.exists();
    let full = Path::new("/dev/full");
    let why = "is not a regular file (a character device); name a file for the history";

    // As --history-db: refused before anything runs.
    let o = fio(&home, full).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(
        text(&o.stderr),
        format!("iogauge fio: --history-db /dev/full: '/dev/full' {why}\n")
    );
    // From $IOGAUGE_HISTORY, found out when saving: the run stands.
    let o = iogauge(&home)
        .args(["fio", "--ioengine=null", "--size=64k", "--name=a"])
        .arg("--output-format=json")
        .env("IOGAUGE_HISTORY", full)
        .output()
        .unwrap();
    not_saved(&o, full, why);
    let o = history(&home, full, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge history: /dev/full: {why}\n")
    );
    if !had_journal {
        assert!(!journal.exists(), "SQLite made /dev/full-journal");
    }

    // A FIFO: refused, not waited on.
    let fifo = home.join("fifo.db");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let o = run_bounded(iogauge(&home).arg("history").arg("--history-db").arg(&fifo));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "iogauge history: {}: is not a regular file (a FIFO); name a file for the history\n",
            fifo.display()
        )
    );

    // An empty file the user made: not turned into a database.
    let empty = home.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let why = "is an empty file, not an iogauge history; name another file, or remove this one";
    not_saved(&fio(&home, &empty).output().unwrap(), &empty, why);
    let o = history(&home, &empty, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge history: {}: {why}\n", empty.display())
    );
    assert_eq!(std::fs::read(&empty).unwrap(), b"");
    let mut left = files_in(&home);
    left.sort();
    assert_eq!(left, ["empty.db", "fifo.db"]);
}

#[test]
fn a_named_place_is_not_made_only_the_default_one() {
    let (_d, home) = open_scratch();
    let db = home.join("missing/dir/h.db");
    let why = format!(
        "directory '{}' does not exist; create it or choose another place",
        home.join("missing/dir").display()
    );
    // --history-db: refused before the run, as --report is.
    let o = fio(&home, &db).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge fio: --history-db {}: {why}\n", db.display())
    );
    // $IOGAUGE_HISTORY: found out when saving; the run stands.
    let o = iogauge(&home)
        .args(["fio", "--ioengine=null", "--size=64k", "--name=a"])
        .arg("--output-format=json")
        .env("IOGAUGE_HISTORY", &db)
        .output()
        .unwrap();
    not_saved(&o, &db, &why);
    assert!(!home.join("missing").exists());
    // The default place ($XDG_DATA_HOME/iogauge) is made.
    let o = iogauge(&home)
        .args(["fio", "--ioengine=null", "--size=64k", "--name=a"])
        .arg("--output-format=json")
        .output()
        .unwrap();
    saved_ok(&o);
    assert!(home.join("iogauge/history.db").is_file());
}

#[test]
fn control_characters_in_a_saved_run_are_escaped_in_the_listing() {
    let (_d, home) = open_scratch();
    let db = home.join("history.db");
    saved_ok(&fio(&home, &db).output().unwrap());
    // A host and target as a forged or odd run could have them.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "UPDATE runs SET host = 'h' || char(27) || '[2J', target = 'a' || char(10) || 'b';",
    )
    .unwrap();
    drop(c);
    let o = history(&home, &db, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert_eq!(out.lines().count(), 2, "one header, one run: {out:?}");
    assert!(out.contains(" h\\x1b[2J "), "{out:?}");
    assert!(out.contains(" a\\nb "), "{out:?}");
}
