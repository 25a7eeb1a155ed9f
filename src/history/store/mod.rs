//! The SQLite side: finding out whether a file is an iogauge history without changing it,
//! creating a fresh one atomically, opening read-only for reading, the schema and its version
//! (`PRAGMA user_version`, `PRAGMA application_id`), and one statement per operation, retried
//! while another process holds the database. List columns are JSON arrays; the document is JSON
//! text. Rows are read with their sizes capped, and a row that does not read is reported as a
//! [`BadRow`] instead of failing the query. The queries are in `queries.rs`.

mod queries;
pub(super) use queries::{existing, get, insert, list, prune, prune_kind, remove};

use crate::report::units::strerror;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The schema this iogauge writes. Raise it with a migration step where [`open`] checks it.
pub(super) const SCHEMA: i64 = 1;

/// `PRAGMA application_id` of a history: "iogH". Histories made before it was set have 0.
const APP_ID: i64 = 0x696f_6748;

/// The most a row's document may hold (a `check` document with every sample series is well
/// under 10 MiB); larger ones are neither saved nor read, so a damaged or forged row cannot
/// exhaust memory.
pub(crate) const MAX_DOCUMENT: i64 = 64 << 20;
/// The most any other column (host, target, command, the lists) may hold.
pub(crate) const MAX_FIELD: i64 = 1 << 20;

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

/// The columns of `runs`, in order.
const ALL_COLUMNS: [&str; 11] = [
    "id",
    "kind",
    "started",
    "host",
    "target",
    "profiles",
    "verdicts",
    "key_values",
    "command",
    "iogauge",
    "document",
];

/// SQLite's own wait for another connection's lock, per statement.
const BUSY: Duration = Duration::from_secs(5);
/// How long an operation is retried while the database stays busy (20 processes saving at
/// once each wait their turn; none gives up).
const PATIENCE: Duration = Duration::from_secs(60);

/// Why a database was not opened.
#[derive(Debug)]
pub(crate) struct OpenError {
    /// The file is not something iogauge may use as its history (bad input); otherwise it
    /// could not be read or written.
    pub refused: bool,
    pub message: String,
}

impl OpenError {
    fn refused(m: impl Into<String>) -> OpenError {
        OpenError {
            refused: true,
            message: m.into(),
        }
    }
    fn failed(m: impl Into<String>) -> OpenError {
        OpenError {
            refused: false,
            message: m.into(),
        }
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<OpenError> for String {
    fn from(e: OpenError) -> String {
        e.message
    }
}

impl From<rusqlite::Error> for OpenError {
    fn from(e: rusqlite::Error) -> Self {
        OpenError::failed(words(e))
    }
}

/// A row that does not read as a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BadRow {
    pub id: i64,
    /// What is wrong, e.g. "its profiles is not a JSON list of strings (…)".
    pub problem: String,
}

impl std::fmt::Display for BadRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run {}: {}", self.id, self.problem)
    }
}

/// Opens the history at `path` for reading (`write` None: read-only, nothing is created or
/// changed, and a database the user may only read can be listed) or for writing (a missing
/// file is created, and its directory too if `write` is `Some(true)`). Nothing is written to a
/// file before it is known to be an iogauge history.
pub(super) fn open(path: &Path, write: Option<bool>) -> Result<Connection, OpenError> {
    let (make_dir, write) = (write == Some(true), write.is_some());
    match std::fs::metadata(path) {
        // (ENOTDIR: a file in the way, which creating the directory names.)
        Err(e)
            if write
                && (e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR)) =>
        {
            create(path, make_dir)?
        }
        Err(e) => return Err(OpenError::failed(io_words(&e))),
        Ok(_) => {}
    }
    precheck(path)?;
    let ro = open_read_only(path)?;
    identify(&ro)?;
    if !write {
        return Ok(ro);
    }
    drop(ro);
    // No CREATE: the file was just found to be a history; it is not made again if it went.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY)?;
    // The same file still (not swapped since the read-only look).
    identify(&conn)?;
    Ok(conn)
}

/// What the file is, from its metadata and first bytes, before SQLite sees it: a device, FIFO
/// or directory (`/dev/full`, where SQLite would create `/dev/full-journal`), an empty file (which
/// SQLite would silently make a database of) and a file of another format are refused.
fn precheck(path: &Path) -> Result<(), OpenError> {
    let m = std::fs::metadata(path).map_err(|e| OpenError::failed(io_words(&e)))?;
    if m.is_dir() {
        return Err(OpenError::refused("is a directory; name a file"));
    }
    if !m.is_file() {
        return Err(OpenError::refused(not_regular(&m)));
    }
    if m.len() == 0 {
        return Err(OpenError::refused(
            "is an empty file, not an iogauge history; name another file, or remove this one",
        ));
    }
    let mut head = [0u8; 16];
    let n = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| OpenError::failed(io_words(&e)))?;
    if n < head.len() || &head != b"SQLite format 3\0" {
        // SQLite's words for it.
        return Err(OpenError::refused("file is not a database"));
    }
    Ok(())
}

/// "is not a regular file (a character device); name a file", for a history path checked
/// before a run too.
pub(crate) fn not_regular(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    let what = if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    format!("is not a regular file ({what}); name a file for the history")
}

/// A read-only connection. A database in WAL mode needs its `-shm` file; in a directory the
/// user cannot write, and with no writer about (no `-wal` file), it is opened as immutable.
fn open_read_only(path: &Path) -> Result<Connection, OpenError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let plain = Connection::open_with_flags(path, flags).and_then(|c| {
        c.busy_timeout(BUSY)?;
        // The first read is where a missing -shm shows.
        retry(|| c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0)))?;
        Ok(c)
    });
    match plain {
        Ok(c) => Ok(c),
        Err(e) if cannot_open(&e) && !has_wal(path) => {
            let uri = format!("file:{}?immutable=1", uri_path(path)?);
            let c = Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)?;
            Ok(c)
        }
        Err(e) => Err(e.into()),
    }
}

fn cannot_open(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)
    )
}

fn has_wal(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).is_ok_and(|m| m.len() > 0)
}

/// The path as a `file:` URI path: absolute, every byte but the unreserved ones %-encoded.
fn uri_path(path: &Path) -> Result<String, OpenError> {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).map_err(|e| OpenError::failed(io_words(&e)))?;
    let mut s = String::new();
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(s)
}

/// Whether the open database is an iogauge history this iogauge reads; only reads.
fn identify(conn: &Connection) -> Result<(), OpenError> {
    let int = |sql: &str| retry(|| conn.query_row(sql, [], |r| r.get::<_, i64>(0)));
    let app = int("PRAGMA application_id")?;
    let v = int("PRAGMA user_version")?;
    let foreign = |why: &str| {
        OpenError::refused(format!(
            "is an SQLite database, but not an iogauge history ({why}); name another file"
        ))
    };
    if app != 0 && app != APP_ID {
        return Err(foreign(&format!("its application id is {app:#x}")));
    }
    if v > SCHEMA {
        return Err(OpenError::refused(newer(v)));
    }
    if v == 0 {
        let tables = int("SELECT count(*) FROM sqlite_schema")?;
        return Err(foreign(if tables > 0 {
            "it has other tables and no history schema version"
        } else {
            "it is empty and has no history schema version"
        }));
    }
    // Version 1 is the only one there has been: a `runs` table with these columns. Later
    // versions migrate here, one step at a time, when opened for writing.
    let cols: Vec<String> = retry(|| {
        let mut st = conn.prepare("SELECT name FROM pragma_table_info('runs')")?;
        let names = st.query_map([], |r| r.get::<_, String>(0))?;
        names.collect()
    })?;
    if cols != ALL_COLUMNS {
        return Err(foreign(
            "its schema version is iogauge's but not its runs table",
        ));
    }
    Ok(())
}

/// Creates a fresh history at `path`: built complete under a temporary name in the same
/// directory, then linked into place only if nothing is there yet. Any number of processes
/// may do this at once: one wins, the others find its database and use it; none ever sees a
/// half-made one (which is why an empty file at the path is never mistaken for a new history).
fn create(path: &Path, make_dir: bool) -> Result<(), OpenError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !make_dir && !dir.is_dir() {
        return Err(OpenError::refused(missing_dir(&dir)));
    }
    std::fs::create_dir_all(&dir).map_err(|e| {
        // create_dir_all says "File exists" when the directory's name is a file.
        let errno = match e.kind() {
            std::io::ErrorKind::AlreadyExists => Some(libc::ENOTDIR),
            _ => e.raw_os_error(),
        };
        OpenError::failed(format!(
            "cannot create the directory {}: {}",
            dir.display(),
            errno.map_or_else(|| e.to_string(), strerror)
        ))
    })?;
    let (tmp, file) = temporary(&dir)?;
    let r = build(&tmp, &file).and_then(|()| {
        drop(file);
        link_into_place(&tmp, path)
    });
    // Whether linked or not, the temporary name goes (with any -wal/-shm SQLite left).
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = tmp.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    r?;
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Why `dir`, which is not a directory, cannot hold the history: a file in the way, or missing.
pub(crate) fn missing_dir(dir: &Path) -> String {
    match dir.ancestors().find(|a| a.exists()) {
        Some(a) if !a.is_dir() => format!("'{}' is a file, not a directory", a.display()),
        _ => format!(
            "directory '{}' does not exist; create it or choose another place",
            dir.display()
        ),
    }
}

fn temporary(dir: &Path) -> Result<(PathBuf, std::fs::File), OpenError> {
    for n in 0..100u32 {
        let p = dir.join(format!(".iogauge-history.{}.{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(OpenError::failed(format!(
                    "cannot create a file in {}: {}",
                    dir.display(),
                    io_words(&e)
                )))
            }
        }
    }
    Err(OpenError::failed(format!(
        "cannot create a file in {}: too many leftover temporary files",
        dir.display()
    )))
}

/// The schema, in WAL mode (readers never block the writer and a killed writer cannot damage
/// the file), closed so that everything is in the one file, and synced.
fn build(tmp: &Path, file: &std::fs::File) -> Result<(), OpenError> {
    let conn = Connection::open_with_flags(
        tmp,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.execute_batch(&format!(
        "BEGIN; {CREATE} PRAGMA application_id = {APP_ID}; PRAGMA user_version = {SCHEMA}; COMMIT;"
    ))?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))?;
    conn.close().map_err(|(_, e)| OpenError::from(e))?;
    file.sync_all().map_err(|e| OpenError::failed(io_words(&e)))
}

/// `link(2)`: fails with EEXIST instead of replacing. Where hard links are not supported, a
/// rename that does not replace either.
fn link_into_place(tmp: &Path, path: &Path) -> Result<(), OpenError> {
    let e = match std::fs::hard_link(tmp, path) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
        Err(e) => e,
    };
    if !matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP)) {
        return Err(OpenError::failed(io_words(&e)));
    }
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes());
    let (Ok(from), Ok(to)) = (c(tmp), c(path)) else {
        return Err(OpenError::refused(
            "the path has a NUL byte; name another file",
        ));
    };
    // SAFETY: renameat2 with NUL-terminated paths relative to the working directory.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    let e = std::io::Error::last_os_error();
    match r {
        0 => Ok(()),
        _ if e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        _ => Err(OpenError::failed(io_words(&e))),
    }
}

fn io_words(e: &std::io::Error) -> String {
    e.raw_os_error().map_or_else(|| e.to_string(), strerror)
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

/// Runs `f` again while the database is busy or locked by another connection, for up to
/// [`PATIENCE`]: SQLite's busy handler is not called in every case (a lock upgrade, WAL
/// recovery), so a save could otherwise fail, and be lost, when many processes save at once.
fn retry<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = Instant::now() + PATIENCE;
    let mut pause = Duration::from_millis(1);
    loop {
        match f() {
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                ) && Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            r => return r,
        }
    }
}
