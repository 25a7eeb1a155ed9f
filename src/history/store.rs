//! The SQLite side: opening with WAL and a busy timeout (several iogauge processes may save at
//! once), the schema and its version (`PRAGMA user_version`), and one statement per operation.
//! List columns are JSON arrays; the document is JSON text.

use super::{ListFilter, NewRun, RunKind, SavedRun};
use crate::report::units::strerror;
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::path::Path;
use std::time::Duration;

/// The schema this iogauge writes. Raise it with a migration step in [`migrate`].
pub(super) const SCHEMA: i64 = 1;

const CREATE: &str = "
CREATE TABLE runs (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL,
    started    TEXT NOT NULL,
    host       TEXT NOT NULL,
    target     TEXT NOT NULL,
    profiles   TEXT NOT NULL,
    verdicts   TEXT NOT NULL,
    key_values TEXT NOT NULL,
    command    TEXT NOT NULL,
    iogauge    TEXT NOT NULL,
    document   TEXT NOT NULL
);
CREATE INDEX runs_started ON runs (started, id);
CREATE INDEX runs_kind_started ON runs (kind, started, id);
";

/// Waits this long for another process's write to finish before giving up ("database is locked").
const BUSY: Duration = Duration::from_secs(5);

/// Opens or creates the file (and its directory), in WAL mode, at [`SCHEMA`].
pub(super) fn open(path: &Path) -> Result<Connection, String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            // create_dir_all says "File exists" when the directory's name is a file.
            let errno = match e.kind() {
                std::io::ErrorKind::AlreadyExists => Some(libc::ENOTDIR),
                _ => e.raw_os_error(),
            };
            format!(
                "cannot create the directory {}: {}",
                dir.display(),
                errno.map_or_else(|| e.to_string(), strerror)
            )
        })?;
    }
    if path.is_dir() {
        return Err("is a directory; name a file".into());
    }
    let conn = Connection::open(path).map_err(words)?;
    conn.busy_timeout(BUSY).map_err(words)?;
    // WAL: readers never block the writer and a killed writer cannot damage the file. The first
    // statement is also where a file that is not a database is found out.
    conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
        .map_err(words)?;
    migrate(&conn)?;
    Ok(conn)
}

fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

fn migrate(conn: &Connection) -> Result<(), String> {
    let v = version(conn).map_err(words)?;
    if v == SCHEMA {
        return Ok(());
    }
    if v > SCHEMA {
        return Err(newer(v));
    }
    // IMMEDIATE: two processes creating the schema at once take turns (the busy timeout) instead
    // of both reading version 0 and one failing on CREATE.
    conn.execute_batch("BEGIN IMMEDIATE").map_err(words)?;
    let r = (|| {
        let v = version(conn).map_err(words)?;
        if v > SCHEMA {
            return Err(newer(v));
        }
        if v == 0 {
            let tables: i64 = conn
                .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
                .map_err(words)?;
            if tables > 0 {
                return Err(
                    "is an SQLite database, but not an iogauge history (it has other \
                            tables and no history schema version); name another file"
                        .into(),
                );
            }
            conn.execute_batch(CREATE).map_err(words)?;
        }
        // Migrations from older versions go here, one step at a time.
        conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA}"))
            .map_err(words)
    })();
    let end = if r.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let e = conn.execute_batch(end).map_err(words);
    r.and(e)
}

fn newer(v: i64) -> String {
    format!(
        "written by a newer iogauge (history schema {v}; this iogauge reads up to {SCHEMA}); use \
         that iogauge, or another file with --history-db"
    )
}

/// SQLite's own words ("file is not a database", "attempt to write a readonly database").
fn words(e: rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(f, Some(msg)) => {
            if msg.is_empty() {
                f.to_string()
            } else {
                msg
            }
        }
        e => e.to_string(),
    }
}

fn list_json(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

pub(super) fn insert(conn: &Connection, run: &NewRun) -> Result<i64, String> {
    // One INSERT in autocommit mode is one transaction: the row is all there or not at all.
    conn.execute(
        "INSERT INTO runs (kind, started, host, target, profiles, verdicts, key_values, command, \
         iogauge, document) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            run.kind.as_str(),
            run.started,
            run.host,
            run.target,
            list_json(&run.profiles),
            list_json(&run.verdicts),
            list_json(&run.key_values),
            list_json(&run.command),
            env!("CARGO_PKG_VERSION"),
            serde_json::to_string(&run.document).map_err(|e| e.to_string())?,
        ],
    )
    .map_err(words)?;
    Ok(conn.last_insert_rowid())
}

const COLUMNS: &str = "id, kind, started, host, target, profiles, verdicts, key_values, command";

/// A row of [`COLUMNS`], then the document if `with_document`.
fn row(r: &Row, with_document: bool) -> rusqlite::Result<SavedRun> {
    let bad = |i: usize, e: String| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    };
    let list = |i: usize| -> rusqlite::Result<Vec<String>> {
        let t: String = r.get(i)?;
        serde_json::from_str(&t).map_err(|e| bad(i, e.to_string()))
    };
    let kind: String = r.get(1)?;
    Ok(SavedRun {
        id: r.get(0)?,
        kind: kind.parse::<RunKind>().map_err(|e| bad(1, e))?,
        started: r.get(2)?,
        host: r.get(3)?,
        target: r.get(4)?,
        profiles: list(5)?,
        verdicts: list(6)?,
        key_values: list(7)?,
        command: list(8)?,
        document: if with_document {
            let t: String = r.get(9)?;
            serde_json::from_str(&t).map_err(|e| bad(9, e.to_string()))?
        } else {
            serde_json::Value::Null
        },
    })
}

pub(super) fn get(conn: &Connection, id: i64) -> Result<Option<SavedRun>, String> {
    conn.query_row(
        &format!("SELECT {COLUMNS}, document FROM runs WHERE id = ?1"),
        [id],
        |r| row(r, true),
    )
    .optional()
    .map_err(words)
}

pub(super) fn list(conn: &Connection, f: &ListFilter) -> Result<Vec<SavedRun>, String> {
    let limit = f.limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let mut st = conn
        .prepare(&format!(
            "SELECT {COLUMNS} FROM runs WHERE (?1 IS NULL OR kind = ?1) \
             ORDER BY started DESC, id DESC LIMIT ?2"
        ))
        .map_err(words)?;
    let rows = st
        .query_map(params![f.kind.map(RunKind::as_str), limit], |r| {
            row(r, false)
        })
        .map_err(words)?;
    rows.collect::<rusqlite::Result<Vec<_>>>().map_err(words)
}

pub(super) fn remove(conn: &Connection, ids: &[i64]) -> Result<usize, String> {
    let ids = serde_json::to_string(ids).map_err(|e| e.to_string())?;
    // The ids as one JSON array parameter: one statement, one transaction, any count.
    conn.execute(
        "DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?1))",
        [ids],
    )
    .map_err(words)
}

pub(super) fn prune(
    conn: &Connection,
    cutoff: Option<&str>,
    keep: Option<usize>,
) -> Result<usize, String> {
    let keep = keep.map(|k| i64::try_from(k).unwrap_or(i64::MAX));
    conn.execute(
        "DELETE FROM runs WHERE (?1 IS NULL OR started < ?1) AND (?2 IS NULL OR id NOT IN \
         (SELECT id FROM runs ORDER BY started DESC, id DESC LIMIT ?2))",
        params![cutoff, keep],
    )
    .map_err(words)
}
