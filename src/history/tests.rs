//! The store against real files in a temporary directory.
#![allow(clippy::unwrap_used)]

use super::*;

fn run(kind: RunKind, started: &str, n: usize) -> NewRun {
    NewRun {
        kind,
        started: started.into(),
        host: "h".into(),
        target: "/d".into(),
        profiles: vec!["etcd".into()],
        verdicts: vec!["etcd PASS".into()],
        key_values: vec![format!("etcd 0.{n} ms")],
        document: serde_json::json!({"n": n, "x": 0.1 + 0.2}),
        command: vec!["iogauge".into(), "check".into()],
    }
}

fn db() -> (tempfile::TempDir, History) {
    let d = tempfile::tempdir().unwrap();
    let h = History::open(Some(&d.path().join("h.db"))).unwrap();
    (d, h)
}

#[test]
fn save_get_list_remove_prune() {
    let (_d, h) = db();
    let a = h
        .save(&run(RunKind::Check, "2020-01-01T00:00:00Z", 1))
        .unwrap();
    let b = h
        .save(&run(RunKind::Fio, "2030-01-01T00:00:00Z", 2))
        .unwrap();
    let c = h
        .save(&run(RunKind::Check, "2025-01-01T00:00:00Z", 3))
        .unwrap();
    let got = h.get(a).unwrap().unwrap();
    assert_eq!(got.document, serde_json::json!({"n": 1, "x": 0.1 + 0.2}));
    assert_eq!(got.key_values, vec!["etcd 0.1 ms"]);
    assert_eq!(got.summary(), "etcd PASS 0.1 ms");
    assert_eq!(h.get(999).unwrap(), None);
    let ids = |f: ListFilter| -> Vec<i64> { h.list(&f).unwrap().0.iter().map(|r| r.id).collect() };
    assert_eq!(ids(ListFilter::default()), vec![b, c, a]);
    assert_eq!(
        ids(ListFilter {
            kind: Some(RunKind::Check),
            without: None,
            limit: Some(1)
        }),
        vec![c]
    );
    assert!(h.list(&ListFilter::default()).unwrap().0[0]
        .document
        .is_null());
    // Older than a year, but the newest two are kept anyway: only `a` goes.
    assert_eq!(
        h.prune(Duration::from_secs(365 * 86400), Some(2), false)
            .unwrap(),
        Pruned::Removed {
            removed: 1,
            left: 2
        }
    );
    assert_eq!(ids(ListFilter::default()), vec![b, c]);
    assert_eq!(h.remove(&[c, 12345]).unwrap(), 1);
    // Emptying the history needs `every`; without it nothing goes.
    assert_eq!(
        h.prune(Duration::ZERO, Some(0), false).unwrap(),
        Pruned::WouldEmpty(1)
    );
    assert_eq!(ids(ListFilter::default()), vec![b]);
    assert_eq!(
        h.prune(Duration::ZERO, Some(0), true).unwrap(),
        Pruned::Removed {
            removed: 1,
            left: 0
        }
    );
    assert!(ids(ListFilter::default()).is_empty());
}

#[test]
fn summaries_pair_verdicts_with_values_by_name() {
    let (_d, h) = db();
    let mut r = run(RunKind::Check, "2020-01-01T00:00:00Z", 0);
    r.verdicts = vec![
        "etcd PASS".into(),
        "etcd-large WARN".into(),
        "small-files ERROR".into(),
    ];
    r.key_values = vec!["etcd-large 12 ms".into(), "etcd 0.27 ms".into()];
    let id = h.save(&r).unwrap();
    assert_eq!(
        h.get(id).unwrap().unwrap().summary(),
        "etcd PASS 0.27 ms, etcd-large WARN 12 ms, small-files ERROR"
    );
}

#[test]
fn a_newer_schema_or_a_foreign_database_is_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.db");
    drop(History::open(Some(&p)).unwrap());
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch("PRAGMA user_version = 7").unwrap();
    drop(c);
    let e = History::open(Some(&p)).err().unwrap().message;
    assert!(
        e.starts_with(&format!(
            "{}: written by a newer iogauge (history schema 7; this iogauge reads up to 1)",
            p.display()
        )),
        "{e}"
    );

    let q = d.path().join("other.db");
    rusqlite::Connection::open(&q)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    assert!(History::open(Some(&q))
        .err()
        .unwrap()
        .message
        .contains("not an iogauge history"));

    let g = d.path().join("garbage.db");
    std::fs::write(&g, vec![0x5a; 4096]).unwrap();
    let e = History::open(Some(&g)).err().unwrap().message;
    assert_eq!(e, format!("{}: file is not a database", g.display()));
}

#[test]
fn threads_saving_at_once_all_land() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.db");
    std::thread::scope(|s| {
        for t in 0..8 {
            let p = &p;
            s.spawn(move || {
                // Each thread opens its own connection, as separate processes do.
                let h = History::open(Some(p)).unwrap();
                for i in 0..10 {
                    h.save(&run(RunKind::Fio, "2024-01-01T00:00:00Z", t * 10 + i))
                        .unwrap();
                }
            });
        }
    });
    let h = History::open(Some(&p)).unwrap();
    assert_eq!(h.list(&ListFilter::default()).unwrap().0.len(), 80);
    let ok: String = h
        .conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[test]
fn the_canary_prunes_only_its_own_old_runs() {
    let (_d, h) = db();
    let now = std::time::SystemTime::now();
    let ago = |s: u64| rfc3339(now - Duration::from_secs(s));
    let old_check = h.save(&run(RunKind::Check, &ago(7200), 1)).unwrap();
    let old_probe = h.save(&run(RunKind::Canary, &ago(7200), 2)).unwrap();
    let recent_probe = h.save(&run(RunKind::Canary, &ago(60), 3)).unwrap();
    // A canary that has run for two hours with --keep 1h: its recent probes stay, the old one
    // goes, and another command's run of the same age is the user's to prune.
    assert_eq!(
        h.prune_kind(RunKind::Canary, Duration::from_secs(3600))
            .unwrap(),
        1
    );
    assert_eq!(
        h.existing(&[old_check, old_probe, recent_probe]).unwrap(),
        vec![old_check, recent_probe]
    );
}
