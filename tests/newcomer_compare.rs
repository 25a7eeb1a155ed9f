//! What a newcomer tripped over in `compare`, interrupted fio runs, `history prune` and the
//! directory shown as "." (issue 22), reproduced on real runs: each test fails on the code as
//! it was.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use iogauge::report::comparison::{ChangeVerdict, CompareDocument};
use serde_json::Value;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_iogauge");

fn iogauge(args: &[&str]) -> Output {
    cmd(BIN).args(args).output().unwrap()
}

/// A null-engine fio run of `secs` seconds at `rate` IOPS, its JSON document saved in `path`
/// (and in the history `db` when given).
fn fio_run(path: &Path, rate: &str, secs: &str, db: Option<&Path>) {
    let mut c = cmd(BIN);
    c.args([
        "fio",
        "--name=n",
        "--ioengine=null",
        "--rw=write",
        "--bs=4k",
        "--size=1g",
        "--time_based",
        &format!("--runtime={secs}"),
        &format!("--rate_iops={rate}"),
        "--output-format=json",
    ]);
    if let Some(db) = db {
        c.env_remove("IOGAUGE_NO_HISTORY")
            .arg("--history-db")
            .arg(db);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(path, &o.stdout).unwrap();
}

/// `iogauge fio` stopped with SIGINT after `ms`, saving into `db`: its output.
fn interrupted_fio(db: &Path, ms: u64) -> Output {
    let child = cmd(BIN)
        .env_remove("IOGAUGE_NO_HISTORY")
        .args([
            "fio",
            "--name=n",
            "--ioengine=null",
            "--rw=write",
            "--bs=4k",
            "--size=1g",
            "--time_based",
            "--runtime=30",
            "--rate_iops=10000",
            "--output-format=json",
            "--history-db",
        ])
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    child.wait_with_output().unwrap()
}

#[test]
fn an_interrupted_fio_run_is_marked_and_compare_refuses_it_unless_asked() {
    let d = scratch();
    let db = d.path().join("h.db");
    let o = interrupted_fio(&db, 1500);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    // The printed document says so, as check's does; fio's own fields stay fio's.
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["iogauge"]["interrupted"], "interrupted by SIGINT");
    let notes: Vec<&str> = v["iogauge"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes.contains(&"interrupted by SIGINT: the results cover the run until then only"),
        "{notes:?}"
    );
    assert_eq!(v["jobs"][0]["error"], 0);
    // So does the history's copy.
    let o = iogauge(&[
        "history",
        "show",
        "1",
        "--format",
        "json",
        "--history-db",
        db.to_str().unwrap(),
    ]);
    let saved: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(saved["iogauge"]["interrupted"], "interrupted by SIGINT");

    // A complete run to compare it with.
    fio_run(&d.path().join("full.json"), "10000", "2", Some(&db));
    let dbs = db.to_str().unwrap();
    let o = iogauge(&["compare", "1", "2", "--history-db", dbs]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(
        text(&o.stderr),
        "iogauge compare: #1 was interrupted by SIGINT, so its numbers cover only part of the \
         run: compare complete runs, or add --include-interrupted to compare it anyway (it is \
         then marked)\n"
    );
    // Two of them are named together.
    let o = iogauge(&["compare", "--a", "1", "2", "--b", "1", "--history-db", dbs]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with(
        "iogauge compare: #1 (interrupted by SIGINT), #1 (interrupted by SIGINT) were interrupted"
    ));
    // Asked for, it is compared and marked.
    let o = iogauge(&[
        "compare",
        "1",
        "2",
        "--history-db",
        dbs,
        "--include-interrupted",
        "--format",
        "json",
    ]);
    assert!(
        [0, 3, 4].contains(&o.status.code().unwrap()),
        "{}",
        text(&o.stderr)
    );
    let doc: CompareDocument = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc.a[0].interrupted.as_deref(),
        Some("interrupted by SIGINT")
    );
    assert_eq!(doc.b[0].interrupted, None);
    assert!(doc.notes.contains(
        &"A's #1 was interrupted by SIGINT: its numbers cover only part of the run \
          (--include-interrupted)"
            .to_string()
    ));
    let t = text(
        &iogauge(&[
            "compare",
            "1",
            "2",
            "--history-db",
            dbs,
            "--include-interrupted",
        ])
        .stdout,
    );
    let first = t.lines().next().unwrap();
    assert!(first.ends_with(" (1 interrupted)"), "{t}");
}

#[test]
fn three_bare_runs_point_at_a_and_b() {
    let o = iogauge(&["compare", "13", "14", "15"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert_eq!(
        text(&o.stderr),
        "iogauge compare: 3 runs given (13 14 15); compare A B takes two. For groups of \
         repeated runs name each side: compare --a 13 --b 14 15\n"
    );
}

/// The value `compare` shows for a metric, as its text does.
fn leading<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(label) && l.contains(" → "))
        .unwrap_or_else(|| panic!("no sentence for {label} in:\n{out}"))
}

#[test]
fn compare_leads_with_a_sentence_says_what_a_verdict_needs_and_exits_4_without_one() {
    let d = scratch();
    let run = |name: &str, rate: &str| {
        let p = d.path().join(name);
        fio_run(&p, rate, "1", None);
        p.to_str().unwrap().to_string()
    };
    let a: Vec<String> = (0..4)
        .map(|i| run(&format!("a{i}.json"), "50000"))
        .collect();
    let b: Vec<String> = (0..4)
        .map(|i| run(&format!("b{i}.json"), "10000"))
        .collect();
    let groups = |n: usize, extra: &[&str]| {
        let mut args = vec!["compare", "--a"];
        args.extend(a[..n].iter().map(String::as_str));
        args.push("--b");
        args.extend(b[..n].iter().map(String::as_str));
        args.extend(extra);
        iogauge(&args)
    };

    // Three runs per side can never give a verdict: said up front, and exit 4, not 0.
    let o = groups(3, &[]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains(
            "\nNo verdict is possible with 3 runs against 3: a difference needs at least 4 runs \
             per side to reach 95 % confidence; run each side again.\n"
        ),
        "{out}"
    );
    let s = leading(&out, "n: write IOPS");
    assert!(s.starts_with("n: write IOPS fell about 5.0× ("), "{s}");
    assert!(s.ends_with(" IOPS): cannot tell, 3 runs each"), "{s}");
    let err = text(&o.stderr);
    assert!(
        err.starts_with("iogauge compare: ")
            && err.ends_with(" could not be judged; the output says what a verdict needs\n"),
        "{err}"
    );

    // Four per side: a verdict, and the numbers shown agree with the ratio.
    let o = groups(4, &["--format", "json"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let doc: CompareDocument = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        doc.needs,
        "A verdict needs at least 4 runs per side; here 4 against 4."
    );
    let m = doc
        .metrics
        .iter()
        .find(|m| m.key == "n/write/iops")
        .unwrap();
    assert_eq!(m.verdict, ChangeVerdict::Worse);
    assert_eq!(m.ratio, m.b / m.a);
    let est = m.estimate.unwrap();
    let [lo, hi] = m.ci.unwrap();
    assert!(lo <= est && est <= hi && hi < 1.0, "{m:?}");
    // fio stamps each document: its date is the run's.
    let started = doc.a[0].started.as_deref().unwrap();
    assert!(
        started.len() == 20 && started.starts_with("20") && started.ends_with('Z'),
        "{started}"
    );
    let out = text(&groups(4, &[]).stdout);
    assert!(
        leading(&out, "n: write IOPS").ends_with(" IOPS): worse, 4 runs each"),
        "{out}"
    );

    // The page: the dates, which direction is worse, the sentence.
    let page = d.path().join("c.html");
    let o = groups(4, &["--report", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<th>worse if</th>"), "{html}");
    assert!(html.contains("<td>n: write IOPS</td>"));
    assert!(html.contains(&format!(", {started}")), "{html}");
    assert!(html.contains("4 runs each</li>"), "{html}");
    assert!(html.contains("A verdict needs at least 4 runs per side; here 4 against 4."));
}

#[test]
fn prune_takes_bare_seconds_says_what_it_removed_and_will_not_empty_without_all() {
    let d = scratch();
    let db = d.path().join("h.db");
    for i in 0..3 {
        fio_run(
            &d.path().join(format!("r{i}.json")),
            "50000",
            "1",
            Some(&db),
        );
    }
    // Run 1 an hour old: 600 is ten minutes, so it goes (as days, nothing went).
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE runs SET started = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 hour') WHERE id = 1",
        [],
    )
    .unwrap();
    drop(c);
    let dbs = db.to_str().unwrap();
    let prune = |args: &[&str]| {
        let mut v = vec!["history", "prune", "--history-db", dbs];
        v.extend(args);
        iogauge(&v)
    };
    let o = prune(&["--older-than", "600"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge history: removed 1 run; 2 left in {dbs}\n")
    );
    // Removing every run is refused without --all, and nothing goes.
    for args in [&["--older-than", "0"][..], &["--keep", "0"]] {
        let o = prune(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(
            text(&o.stderr),
            format!(
                "iogauge history prune: this would remove every run (2) in {dbs}; nothing was \
                 removed. Add --all to empty the history, or --keep N to keep the newest N\n"
            )
        );
    }
    let o = prune(&["--older-than", "0", "--all"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o.stderr),
        format!("iogauge history: removed 2 runs; 0 left in {dbs}\n")
    );
    let help = text(&iogauge(&["history", "prune", "--help"]).stdout);
    assert!(help.contains("a bare number is\nseconds"), "{help}");
    assert!(help.contains("--all"), "{help}");
}

#[test]
fn the_directory_is_shown_absolute_in_every_format_and_in_compare() {
    let d = scratch();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let abs = std::fs::canonicalize(&work).unwrap();
    let abs = abs.to_str().unwrap();
    let check = |format: &str| {
        let o = cmd(BIN)
            .args([
                "check",
                "sync-iops",
                "--dir",
                ".",
                "--duration",
                "1s",
                "--scale",
                "0.05",
                "--format",
                format,
            ])
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(
            [0, 3, 4].contains(&o.status.code().unwrap()),
            "{}",
            text(&o.stderr)
        );
        text(&o.stdout)
    };
    let json = check("json");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["dir"], abs);
    let md = check("markdown");
    assert!(md.contains(&format!("`{abs}` on ")), "{md}");
    let csv = check("csv");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(!rows.is_empty(), "{csv}");
    for r in rows {
        assert!(r.ends_with(&format!(",{abs}")), "{csv}");
    }
    // compare and the page, from the saved document.
    let saved = d.path().join("r.json");
    std::fs::write(&saved, &json).unwrap();
    let s = saved.to_str().unwrap();
    let o = iogauge(&["compare", s, s]);
    let first = text(&o.stdout).lines().next().unwrap().to_string();
    assert_eq!(
        first,
        format!(
            "A: check {s} in {abs} on {}",
            v["context"]["hostname"].as_str().unwrap()
        )
    );
    let page = d.path().join("r.html");
    let o = iogauge(&["report", s, "-o", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(&format!("<dd>{abs}</dd>")), "{html}");
    assert_empty(&work);
}
