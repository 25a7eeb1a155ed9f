//! How a pod's result comes back (`--format kube-frames`, src/report/frames.rs, read by
//! src/cluster/log.rs) through logs as real clusters serve them: split lines, a rotated log, a
//! log cut short (tests/common/fake_kube/logs.rs); and the pod's exit code, 0 whenever it
//! printed its document.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::kube::{assert_nothing_left, run_json};

use common::fake_kube::{BindingMode, FakeKube, LogShape, Scenario, StorageClassSeed};
use iogauge::report::document::{CheckVerdict, KubeDocument, TargetStatus};
use std::path::Path;

/// A cluster with one class per (name, scenario), all Immediate.
fn cluster(dir: &Path, classes: &[(&str, Scenario)]) -> FakeKube {
    cluster_with(env!("CARGO_BIN_EXE_iogauge"), dir, classes)
}

/// The same, with `binary` as every image's entrypoint.
fn cluster_with(binary: &str, dir: &Path, classes: &[(&str, Scenario)]) -> FakeKube {
    let mut b = FakeKube::builder(binary, dir);
    for (class, s) in classes {
        b = b
            .storage_class(StorageClassSeed::new(
                class,
                "ebs.csi.aws.com",
                BindingMode::Immediate,
            ))
            .scenario_for(class, s.clone());
    }
    b.start()
}

/// A frame line's fields, read here on their own (not with the reader under test):
/// (seq, total, document bytes, payload).
fn frame(line: &str) -> Option<(u32, u32, u64, String)> {
    let f: Vec<&str> = line
        .strip_prefix("iogauge-frame ")?
        .splitn(7, ' ')
        .collect();
    let (seq, total) = f[2].split_once('/')?;
    Some((
        seq.parse().ok()?,
        total.parse().ok()?,
        f[3].parse().ok()?,
        f[6].to_string(),
    ))
}

fn frames(log: &[u8]) -> Vec<(u32, u32, u64, String)> {
    common::text(log).lines().filter_map(frame).collect()
}

/// `1–3`, `4, 6–7`
fn ranges(seqs: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &s in seqs {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == s => *end = s,
            _ => runs.push((s, s)),
        }
    }
    let text: Vec<String> = runs
        .iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect();
    text.join(", ")
}

fn kib(bytes: u64) -> String {
    format!("{:.0} KiB", bytes as f64 / 1024.0)
}

/// `iogauge kube check ARGS --format json`: (exit code, document, stderr).
fn run(fake: &FakeKube, dir: &Path, args: &[&str]) -> (i32, KubeDocument, String) {
    run_json(fake, dir, &[&["check"], args].concat())
}

#[test]
fn a_result_in_split_frames_comes_back_byte_for_byte() {
    let dir = common::scratch();
    // A pipeline that splits at 3000 bytes: every frame line comes in three pieces.
    let fake = cluster(
        dir.path(),
        &[
            ("split", Scenario::Logs(LogShape::split(3000))),
            ("plain", Scenario::Run),
        ],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "sync-iops",
            "--storage-class",
            "split",
            "--storage-class",
            "plain",
            "--scale",
            "0.02",
            "--duration",
            "2s",
            "--intervals",
        ],
    );
    assert!(matches!(code, 0 | 3 | 4), "{err}");
    for t in &doc.targets {
        assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
    }
    let logs = fake.served_logs();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let written = frames(&logs[0].written);
    assert!(written.len() >= 2, "{} frames", written.len());
    // Served split: every frame line but maybe the last (shorter) one came in pieces.
    let long = common::text(&logs[0].written)
        .lines()
        .filter(|l| l.starts_with("iogauge-frame ") && l.len() > 3000)
        .count();
    assert!(long >= written.len() - 1, "{long}");
    assert!(logs[0]
        .served
        .split(|b| *b == b'\n')
        .all(|l| l.len() <= 3000));
    // The pod's document text, from its frames as written, is the document read back.
    let text: String = written.iter().map(|f| f.3.as_str()).collect();
    assert_eq!(text.len() as u64, written[0].2);
    let check = doc.targets[0].check.as_ref().unwrap();
    assert_eq!(serde_json::to_string(check).unwrap(), text);
    // --intervals: the per-interval histograms came along.
    assert!(text.contains("\"lat_intervals\""));
    assert_nothing_left(&fake);
}

#[test]
fn a_rotated_or_cut_log_fails_its_target_clearly_and_the_run_moves_on() {
    let dir = common::scratch();
    // The kubelet's last rotation 9,000 bytes before the end (a 10 MiB file on a real node),
    // and a pipeline keeping the first 10,000 bytes: frame lines are about 8,300 bytes, so the
    // rotated log keeps the last frame only, and the cut one the plan lines, the first frame
    // and part of the second. The document is over two frames whatever this disk does (its
    // per-interval histograms grow with its IOPS and their spread).
    let fake = cluster(
        dir.path(),
        &[
            ("rotated", Scenario::Logs(LogShape::rotate(9_000))),
            ("cut", Scenario::Logs(LogShape::cut(10_000))),
            ("plain", Scenario::Run),
        ],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "sync-iops",
            "--storage-class",
            "rotated",
            "--storage-class",
            "cut",
            "--storage-class",
            "plain",
            "--scale",
            "0.02",
            "--duration",
            "2s",
            "--intervals",
        ],
    );
    let logs = fake.served_logs();
    assert_eq!(logs.len(), 2, "{logs:?}");
    for (t, log) in doc.targets[..2].iter().zip(&logs) {
        assert_eq!(t.job, log.pod.rsplit_once('-').unwrap().0, "{logs:?}");
        let written = frames(&log.written);
        let (total, bytes) = (written[0].1, written[0].2);
        assert!(total >= 2, "{total} frames");
        // Frames served whole; a frame line cut short is a damaged frame.
        let text = common::text(&log.served);
        let served: Vec<&str> = text.lines().collect();
        let whole: Vec<String> = common::text(&log.written)
            .lines()
            .filter(|l| l.starts_with("iogauge-frame "))
            .map(String::from)
            .collect();
        let lost: Vec<u32> = (1..=total)
            .filter(|s| !served.contains(&whole[*s as usize - 1].as_str()))
            .collect();
        let damaged = served
            .iter()
            .filter(|l| l.starts_with("iogauge-frame ") && !whole.iter().any(|w| w == *l))
            .count();
        let class = t.storage_class.as_deref().unwrap();
        let why = if class == "rotated" {
            assert_eq!((lost[0], damaged), (1, 0));
            "the kubelet keeps only the current log file, rotated at containerLogMaxSize, \
             10 MiB by default"
                .to_string()
        } else {
            assert_eq!(*lost.last().unwrap(), total);
            let also = match damaged {
                0 => String::new(),
                n => format!(", {n} of them damaged"),
            };
            format!(
                "the log was cut: the container stopped while printing it, or a log pipeline \
                 capped it{also}"
            )
        };
        let reason = format!(
            "the pod ended (Completed, exit code 0) without a result: the pod's log lost \
             frame{} {} of {total} ({why}); the result was {}: run a shorter --duration, or \
             leave out --intervals",
            if lost.len() == 1 { "" } else { "s" },
            ranges(&lost),
            kib(bytes)
        );
        assert_eq!(t.status, TargetStatus::Failed);
        assert_eq!(t.reason.as_deref(), Some(reason.as_str()));
        assert!(
            err.lines()
                .any(|l| l == format!("iogauge kube: storage class {class}: failed: {reason}")),
            "{err}"
        );
    }
    // The run moved on: the third target was measured.
    let plain = &doc.targets[2];
    assert_eq!(plain.status, TargetStatus::Completed, "{:?}", plain.reason);
    // A failed profile outranks a target without a result (exit 1).
    let failed = plain.check.as_ref().unwrap().profiles[0].verdict == CheckVerdict::Fail;
    assert_eq!(code, if failed { 3 } else { 1 }, "{err}");
    assert_nothing_left(&fake);
}

#[test]
fn a_pod_exits_0_with_a_document_whatever_its_verdict() {
    let dir = common::scratch();
    let fake = cluster(dir.path(), &[("plain", Scenario::Run)]);
    // --strict makes a shortened run at best a warning, and a warning a failure: exit 3 for
    // the run, while the pod printed its document and exits 0.
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--storage-class",
            "plain",
            "--scale",
            "0.02",
            "--strict",
        ],
    );
    assert_eq!(code, 3, "{err}");
    let t = &doc.targets[0];
    assert_eq!(t.status, TargetStatus::Completed, "{:?}", t.reason);
    let check = t.check.as_ref().unwrap();
    assert!(matches!(
        check.profiles[0].verdict,
        CheckVerdict::Warn | CheckVerdict::Fail
    ));
    // Compact by default: no per-interval histograms.
    assert!(!serde_json::to_string(check)
        .unwrap()
        .contains("lat_intervals"));
    let history = fake.history();
    let pod = format!("finished Pod/{}-", t.job);
    let finished: Vec<&String> = history.iter().filter(|l| l.starts_with(&pod)).collect();
    assert_eq!(finished.len(), 1, "{history:#?}");
    assert!(finished[0].ends_with(" exit 0"), "{history:#?}");
    assert!(
        !history.contains(&format!("failed Job/{}", t.job)),
        "{history:#?}"
    );
    assert_nothing_left(&fake);
}

#[test]
fn a_result_printed_on_one_line_is_still_read() {
    let dir = common::scratch();
    // An image whose entrypoint prints the document as one JSON line, as pods did before
    // kube-frames: this build's binary behind a wrapper that asks for json-line.
    let image = dir.path().join("one-line-image");
    std::fs::write(
        &image,
        format!(
            "#!/bin/sh\nfor a do shift; [ \"$a\" = kube-frames ] && a=json-line; set -- \"$@\" \"$a\"; \
             done\nexec '{}' \"$@\"\n",
            env!("CARGO_BIN_EXE_iogauge")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&image, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = cluster_with(
        image.to_str().unwrap(),
        dir.path(),
        // Logs served as written, kept for the test.
        &[
            ("one", Scenario::Logs(LogShape::default())),
            ("two", Scenario::Run),
        ],
    );
    let (code, doc, err) = run(
        &fake,
        dir.path(),
        &[
            "etcd",
            "--storage-class",
            "one",
            "--storage-class",
            "two",
            "--scale",
            "0.02",
        ],
    );
    assert!(matches!(code, 0 | 3 | 4), "{err}");
    for t in &doc.targets {
        assert_eq!(t.status, TargetStatus::Completed, "{:?}\n{err}", t.reason);
        assert_eq!(t.check.as_ref().unwrap().profiles[0].profile, "etcd");
    }
    // It really was one line, no frames.
    let logs = fake.served_logs();
    let log = common::text(&logs[0].written);
    assert!(frames(&logs[0].written).is_empty(), "{log}");
    assert!(
        log.lines().any(|l| l.starts_with("{\"schema_version\"")),
        "{log}"
    );
    assert_nothing_left(&fake);
}

// --- review fixes ---

/// A pod stopped by SIGTERM (preempted, drained, deleted) prints its interrupted document and
/// exits 1, not 0: a pod that Succeeded would complete its Job with no result, while a Failed
/// one with a DisruptionTarget condition gets a replacement from the Job's Ignore rule.
#[test]
fn a_pod_stopped_by_sigterm_prints_its_document_and_exits_1() {
    common::serial();
    let dir = common::scratch();
    let data = dir.path().to_str().unwrap();
    let child = common::cmd(env!("CARGO_BIN_EXE_iogauge"))
        .args(["check", "sync-iops", "--dir", data, "--scale", "0.02"])
        .args(["--duration", "20s", "--format", "kube-frames"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (common::text(&out.stdout), common::text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    let doc = iogauge::cluster::log::parse_check_log(&stdout).unwrap();
    assert_eq!(
        doc.profiles[0].verdict,
        CheckVerdict::Interrupted,
        "{stderr}"
    );
}
