//! `kube fio`'s results beyond stdout (issue 26): each target's fio document in the HTML page
//! and in the history, so that `iogauge compare` compares a target of two runs. Against the
//! fake API server (tests/common/fake_kube/), whose pods really run this build's binary.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::kube::{assert_nothing_left, cluster, document};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// `iogauge kube fio` with the history on (the test helpers turn it off), saving to `db`.
fn kube_fio(
    fake: &common::fake_kube::FakeKube,
    dir: &Path,
    args: &[&str],
) -> (i32, String, String) {
    let db = dir.join("history.db");
    let out = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .env_remove("IOGAUGE_NO_HISTORY")
        .env_remove("IOGAUGE_HISTORY")
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .env("KUBECONFIG", fake.write_kubeconfig(dir))
        .env("IOGAUGE_IMAGE", "registry.example/iogauge:test")
        .args([
            "kube",
            "fio",
            "--storage-class",
            "fast",
            "--storage-class",
            "standard",
        ])
        .args(["--max-runtime", "1s", "--format", "json", "--history-db"])
        .arg(&db)
        .args(args)
        .args(["--", "--name=seq", "--rw=write", "--bs=4k", "--size=256k"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

fn iogauge(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_iogauge"))
        .env_remove("IOGAUGE_NO_HISTORY")
        .env_remove("IOGAUGE_HISTORY")
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .args(args)
        .arg("--history-db")
        .arg(dir.join("history.db"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

/// The page shows each target's fio numbers (as `iogauge fio --report` does for a host) and
/// the jobs side by side; the history has one fio run per target, named by it, and compare
/// compares a target of two runs.
#[test]
fn each_target_s_fio_document_is_in_the_page_and_the_history() {
    let started = Instant::now();
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[]);
    let page = dir.path().join("kube.html");
    let (code, out, err) = kube_fio(&fake, dir.path(), &["--report", page.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let doc = document(&out);
    assert_eq!(doc.targets.len(), 2, "{out}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h1>iogauge kube fio</h1>"), "{html}");
    assert!(html.contains("<h2>Jobs side by side</h2>"), "{html}");
    for t in &doc.targets {
        let fio = t.fio.as_ref().unwrap();
        let ios = fio["jobs"][0]["write"]["total_ios"].as_u64().unwrap();
        assert_eq!(ios, 64, "{fio}");
        // The job's numbers table, under the target's own heading.
        let section = html
            .split(&format!("<h2 id=\"target-{}\">", t.job))
            .nth(1)
            .unwrap();
        assert!(section.contains("<h3>Job seq</h3>"), "{section}");
        assert!(section.contains("<td class=\"num\">64</td>"), "{section}");
    }
    // The history: one fio run per target, the target and its node saying which.
    let (code, list, err) = iogauge(dir.path(), &["history", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = serde_json::from_str(&list).unwrap();
    let mut targets: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            assert_eq!(r["kind"], "fio", "{r}");
            (
                r["target"].as_str().unwrap().into(),
                r["host"].as_str().unwrap().into(),
            )
        })
        .collect();
    targets.sort();
    let want: Vec<(String, String)> = {
        let mut w: Vec<_> = doc
            .targets
            .iter()
            .map(|t| (t.target.clone(), t.node.clone().unwrap()))
            .collect();
        w.sort();
        w
    };
    assert_eq!(targets, want, "{list}");
    let ids: Vec<String> = rows.iter().map(|r| r["id"].to_string()).collect();
    let (code, cmp, err) = iogauge(dir.path(), &["compare", &ids[0], &ids[1]]);
    // One run per side: compared, but too little to judge (exit 4, a warning), as for two
    // local fio runs.
    assert_eq!(code, 4, "{cmp}{err}");
    assert!(cmp.contains("\nseq: write IOPS "), "{cmp}");
    assert!(
        err.ends_with("iogauge compare: 3 of 3 metrics could not be judged; the notes say why\n"),
        "{err}"
    );
    assert_nothing_left(&fake);
    eprintln!("took {:?}", started.elapsed());
}
