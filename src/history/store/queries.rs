//! The queries on an open history: a run saved, read back (a damaged row as a [`BadRow`]),
//! listed, removed and pruned.

use super::{retry, words, BadRow, ALL_COLUMNS, MAX_DOCUMENT, MAX_FIELD};
use crate::history::{ListFilter, NewRun, RunKind, SavedRun};
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, Row, TransactionBehavior};

/// `f` in one IMMEDIATE transaction (the write lock taken first, so two writers take turns
/// instead of one failing to upgrade), retried whole while the database is busy.
fn write<T>(
    conn: &Connection,
    f: impl Fn(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    retry(|| {
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        let v = f(&tx)?;
        tx.commit()?;
        Ok(v)
    })
}

fn list_json(v: &[String]) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

pub(in crate::history) fn insert(conn: &Connection, run: &NewRun) -> Result<i64, String> {
    let document = serde_json::to_string(&run.document).map_err(|e| e.to_string())?;
    let lists = [
        ("profiles", list_json(&run.profiles)),
        ("verdicts", list_json(&run.verdicts)),
        ("key_values", list_json(&run.key_values)),
        ("command", list_json(&run.command)),
    ];
    let fields = [
        ("host", run.host.as_str()),
        ("target", run.target.as_str()),
        ("started", run.started.as_str()),
    ];
    let too_big = |name: &str, len: usize, cap: i64| {
        format!(
            "the run's {name} is {len} bytes, more than the {cap} bytes a history row may hold; \
             nothing was saved"
        )
    };
    if document.len() as i64 > MAX_DOCUMENT {
        return Err(too_big("document", document.len(), MAX_DOCUMENT));
    }
    for (name, v) in lists
        .iter()
        .map(|(n, v)| (*n, v.as_str()))
        .chain(fields.iter().copied())
    {
        if v.len() as i64 > MAX_FIELD {
            return Err(too_big(name, v.len(), MAX_FIELD));
        }
    }
    write(conn, |c| {
        c.execute(
            "INSERT INTO runs (kind, started, host, target, profiles, verdicts, key_values, \
             command, iogauge, document) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                run.kind.as_str(),
                run.started,
                run.host,
                run.target,
                lists[0].1,
                lists[1].1,
                lists[2].1,
                lists[3].1,
                env!("CARGO_PKG_VERSION"),
                document,
            ],
        )?;
        Ok(c.last_insert_rowid())
    })
    .map_err(words)
}

/// The summary columns a row is read with, in [`row`]'s order: `ALL_COLUMNS` from `kind` to
/// `command` (without `id`, `iogauge` and `document`).
const SUMMARY: &[&str] = ALL_COLUMNS.split_at(1).1.split_at(8).0;

/// `id`, then each column as its value (NULL when over its cap: never read) and its size.
fn select(with_document: bool) -> String {
    let capped = |c: &str, cap: i64| {
        format!("CASE WHEN octet_length({c}) <= {cap} THEN {c} END, octet_length({c})")
    };
    let mut cols = vec!["id".to_string()];
    cols.extend(SUMMARY.iter().map(|c| capped(c, MAX_FIELD)));
    if with_document {
        cols.push(capped("document", MAX_DOCUMENT));
    }
    format!("SELECT {} FROM runs", cols.join(", "))
}

/// A row of [`select`]: the run, or what is wrong with it.
fn row(r: &Row, with_document: bool) -> rusqlite::Result<Result<SavedRun, BadRow>> {
    let id: i64 = r.get(0)?;
    Ok(parse(r, id, with_document).map_err(|problem| BadRow { id, problem }))
}

fn parse(r: &Row, id: i64, with_document: bool) -> Result<SavedRun, String> {
    let text = |i: usize| -> Result<String, String> {
        let name = if i < SUMMARY.len() {
            SUMMARY[i]
        } else {
            "document"
        };
        let cap = if i < SUMMARY.len() {
            MAX_FIELD
        } else {
            MAX_DOCUMENT
        };
        let (v, len) = (1 + 2 * i, 2 + 2 * i);
        match r.get_ref(v).map_err(|e| e.to_string())? {
            ValueRef::Text(t) => {
                String::from_utf8(t.to_vec()).map_err(|_| format!("its {name} is not UTF-8 text"))
            }
            ValueRef::Null => match r.get_ref(len).map_err(|e| e.to_string())? {
                ValueRef::Integer(n) => Err(format!(
                    "its {name} is {n} bytes, more than the {cap} bytes a history row may hold"
                )),
                _ => Err(format!("its {name} is missing (NULL)")),
            },
            ValueRef::Integer(_) => Err(format!("its {name} is a number, not text")),
            ValueRef::Real(_) => Err(format!("its {name} is a number, not text")),
            ValueRef::Blob(_) => Err(format!("its {name} is a blob, not text")),
        }
    };
    let list = |i: usize| -> Result<Vec<String>, String> {
        serde_json::from_str(&text(i)?)
            .map_err(|e| format!("its {} is not a JSON list of strings ({e})", SUMMARY[i]))
    };
    let kind = text(0)?;
    let kind = kind.parse::<RunKind>().map_err(|_| {
        format!(
            "its kind '{}' is not check, preflight, fio, kube or canary",
            kind.escape_debug()
        )
    })?;
    Ok(SavedRun {
        id,
        kind,
        started: text(1)?,
        host: text(2)?,
        target: text(3)?,
        profiles: list(4)?,
        verdicts: list(5)?,
        key_values: list(6)?,
        command: list(7)?,
        document: if with_document {
            serde_json::from_str(&text(8)?)
                .map_err(|e| format!("its document is not JSON ({e})"))?
        } else {
            serde_json::Value::Null
        },
    })
}

/// The run, or what is wrong with its row; `None` if there is no such run.
pub(in crate::history) fn get(
    conn: &Connection,
    id: i64,
) -> Result<Option<Result<SavedRun, BadRow>>, String> {
    retry(|| {
        let mut st = conn.prepare(&format!("{} WHERE id = ?1", select(true)))?;
        let mut rows = st.query([id])?;
        match rows.next()? {
            Some(r) => Ok(Some(row(r, true)?)),
            None => Ok(None),
        }
    })
    .map_err(words)
}

/// The runs, and the rows that do not read (skipped).
pub(in crate::history) fn list(
    conn: &Connection,
    f: &ListFilter,
) -> Result<(Vec<SavedRun>, Vec<BadRow>), String> {
    let limit = f.limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
    retry(|| {
        let mut st = conn.prepare(&format!(
            "{} WHERE (?1 IS NULL OR kind = ?1) AND (?3 IS NULL OR kind != ?3) \
             ORDER BY started DESC, id DESC LIMIT ?2",
            select(false)
        ))?;
        let kinds = (f.kind.map(RunKind::as_str), f.without.map(RunKind::as_str));
        let rows = st.query_map(params![kinds.0, limit, kinds.1], |r| row(r, false))?;
        let (mut runs, mut bad) = (Vec::new(), Vec::new());
        for r in rows {
            match r? {
                Ok(run) => runs.push(run),
                Err(b) => bad.push(b),
            }
        }
        Ok((runs, bad))
    })
    .map_err(words)
}

/// Which of `ids` are in the database (whether or not their rows read).
pub(in crate::history) fn existing(conn: &Connection, ids: &[i64]) -> Result<Vec<i64>, String> {
    let ids = serde_json::to_string(ids).map_err(|e| e.to_string())?;
    retry(|| {
        let mut st = conn.prepare(
            "SELECT id FROM runs WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id",
        )?;
        let rows = st.query_map([&ids], |r| r.get::<_, i64>(0))?;
        rows.collect()
    })
    .map_err(words)
}

pub(in crate::history) fn remove(conn: &Connection, ids: &[i64]) -> Result<usize, String> {
    let ids = serde_json::to_string(ids).map_err(|e| e.to_string())?;
    // The ids as one JSON array parameter: one statement, one transaction, any count.
    write(conn, |c| {
        c.execute(
            "DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?1))",
            [&ids],
        )
    })
    .map_err(words)
}

pub(in crate::history) fn prune_kind(
    conn: &Connection,
    kind: &str,
    cutoff: &str,
) -> Result<usize, String> {
    write(conn, |c| {
        c.execute(
            "DELETE FROM runs WHERE kind = ?1 AND started < ?2",
            params![kind, cutoff],
        )
    })
    .map_err(words)
}

pub(in crate::history) fn prune(
    conn: &Connection,
    cutoff: Option<&str>,
    keep: Option<usize>,
    every: bool,
) -> Result<crate::history::Pruned, String> {
    let keep = keep.map(|k| i64::try_from(k).unwrap_or(i64::MAX));
    const WHERE: &str = "(?1 IS NULL OR started < ?1) AND (?2 IS NULL OR id NOT IN \
         (SELECT id FROM runs ORDER BY started DESC, id DESC LIMIT ?2))";
    // Counted and removed in one transaction, so the refusal to empty the history judges the
    // very rows that would go.
    write(conn, |c| {
        let total: i64 = c.query_row("SELECT count(*) FROM runs", [], |r| r.get(0))?;
        let matched: i64 = c.query_row(
            &format!("SELECT count(*) FROM runs WHERE {WHERE}"),
            params![cutoff, keep],
            |r| r.get(0),
        )?;
        let n = |v: i64| usize::try_from(v).unwrap_or(0);
        if matched == total && total > 0 && !every {
            return Ok(crate::history::Pruned::WouldEmpty(n(total)));
        }
        let removed = c.execute(
            &format!("DELETE FROM runs WHERE {WHERE}"),
            params![cutoff, keep],
        )?;
        Ok(crate::history::Pruned::Removed {
            removed,
            left: n(total).saturating_sub(removed),
        })
    })
    .map_err(words)
}
