//! What a newcomer to `iogauge fio` and `iogauge preflight` tripped over (issue 22): value lists
//! in the help and docs written from the parser's own tables, iogauge's own options in `--help`,
//! fio's cap on `per=`, `--status-interval` blocks with the real pid, CPU and depths, a directory
//! where a data file belongs, and preflight's warning text, collector names and format names.

// Tests unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::*;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

fn iogauge(sub: &str, args: &[&str], cwd: &Path) -> Output {
    cmd(env!("CARGO_BIN_EXE_iogauge"))
        .arg(sub)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn iogauge")
}

/// "a, b (b2), c or d" → {a, b, b2, c, d}.
fn listed(list: &str) -> BTreeSet<String> {
    list.replace(" or ", ", ")
        .split(", ")
        .flat_map(|item| {
            item.split(" (")
                .map(|n| n.trim_end_matches(')').to_string())
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// The value list in a help line `  NAME ...  Text: a, b or c[ (...)]`.
fn values_after(line: &str, lead: &str) -> BTreeSet<String> {
    let rest = &line[line
        .find(lead)
        .unwrap_or_else(|| panic!("{lead} in {line}"))
        + lead.len()..];
    // rw's line ends with an example in parentheses after the list.
    let rest = rest.split(" (rw=").next().unwrap();
    listed(rest.trim_end_matches(" |").trim())
}

fn line_starting<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in:\n{text}"))
}

/// Whether `iogauge fio` takes `--OPTION=VALUE` (its parser, not the help, decides).
fn accepts(option: &str, value: &str, cwd: &Path) -> bool {
    let o = iogauge(
        "fio",
        &[
            "--parse-only",
            "--name=j",
            "--size=1m",
            "--cpuload=50",
            "--program=true",
            &format!("--{option}={value}"),
        ],
        cwd,
    );
    let err = text(&o.stderr);
    // A refused value is reported as the option's own error.
    !err.contains(&format!("--{option}={value}: "))
}

#[test]
fn help_cmdhelp_and_docs_list_exactly_the_engines_and_rw_values_iogauge_accepts() {
    let d = scratch();
    let help = text(&iogauge("fio", &["--help"], d.path()).stdout);
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/FIO-OPTIONS.md"))
        .unwrap();
    for (option, help_start, lead, docs_start, fio_values) in [
        (
            "ioengine",
            "  ioengine ",
            "How the job does its I/O: ",
            "| `ioengine` |",
            // fio 3.33's engines (fio --enghelp here adds what this build of fio has).
            vec![
                "sync",
                "psync",
                "vsync",
                "pvsync",
                "pvsync2",
                "mmap",
                "null",
                "libaio",
                "io_uring",
                "io_uring_cmd",
                "posixaio",
                "filecreate",
                "filestat",
                "filedelete",
                "falloc",
                "ftruncate",
                "cpuio",
                "exec",
                "net",
                "netsplice",
                "splice",
                "e4defrag",
                "sg",
                "rdma",
                "rbd",
                "rados",
                "gfapi",
                "gfapi_async",
                "mtd",
                "nbd",
                "pmemblk",
                "dev-dax",
                "libpmem",
                "http",
                "windowsaio",
                "solarisaio",
                "libhdfs",
                "libcufile",
                "nfs",
                "xnvme",
                "libzbc",
                "guasi",
                "external",
                "dircreate",
                "dirstat",
                "dirdelete",
                "bogus",
            ],
        ),
        (
            "rw",
            "  rw (readwrite) ",
            "The I/O pattern: ",
            "| `rw` (also `readwrite`) |",
            vec![
                "read",
                "write",
                "trim",
                "randread",
                "randwrite",
                "randtrim",
                "rw",
                "readwrite",
                "randrw",
                "trimwrite",
                "randtrimwrite",
                "sideways",
            ],
        ),
    ] {
        let in_help = values_after(line_starting(&help, help_start), lead);
        let cmdhelp = text(&iogauge("fio", &[&format!("--cmdhelp={option}")], d.path()).stdout);
        let in_cmdhelp = values_after(line_starting(&cmdhelp, help_start), lead);
        let in_docs = values_after(line_starting(&docs, docs_start), lead);
        assert_eq!(in_help, in_cmdhelp, "--help and --cmdhelp={option} differ");
        assert_eq!(in_help, in_docs, "--help and docs/FIO-OPTIONS.md differ");
        let mut candidates: BTreeSet<String> = fio_values.iter().map(|s| s.to_string()).collect();
        candidates.extend(in_help.iter().cloned());
        if option == "ioengine" && have_fio() {
            let out = std::process::Command::new("fio")
                .arg("--enghelp")
                .output()
                .unwrap();
            candidates.extend(
                text(&out.stdout)
                    .lines()
                    .skip(1)
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty()),
            );
        }
        let accepted: BTreeSet<String> = candidates
            .iter()
            .filter(|v| accepts(option, v, d.path()))
            .cloned()
            .collect();
        assert_eq!(
            in_help, accepted,
            "--help lists {option} values iogauge refuses, or leaves out ones it accepts"
        );
    }
    // The error for a bad value is the same list.
    let o = iogauge("fio", &["--name=j", "--ioengine=bogus"], d.path());
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    let lead = "iogauge fio: --ioengine=bogus: expected ";
    assert!(err.starts_with(lead), "{err}");
    let engines = values_after(
        line_starting(&help, "  ioengine "),
        "How the job does its I/O: ",
    );
    assert_eq!(listed(err[lead.len()..].trim()), engines);
}

#[test]
fn help_lists_iogauges_own_options_and_they_are_taken() {
    let d = scratch();
    let help = text(&iogauge("fio", &["--help"], d.path()).stdout);
    assert!(
        help.contains("\niogauge's own options (fio has none of these):\n"),
        "{help}"
    );
    for line in [
        "  --no-history             do not save this run in the history (or IOGAUGE_NO_HISTORY=1)\n",
        "  --history-db=FILE        the history database to save to (default $IOGAUGE_HISTORY, else\n                           $XDG_DATA_HOME/iogauge/history.db); 'iogauge history' lists the runs\n",
        "  --keep-files             leave the data files in place (iogauge removes them by default)\n",
        "  --report=FILE            also write a self-contained HTML page of the run (charts)\n",
    ] {
        assert!(help.contains(line), "missing {line:?} in:\n{help}");
    }
    // And the options the help names are taken.
    let o = iogauge(
        "fio",
        &["--no-history", "--name=j", "--ioengine=null", "--size=4k"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let db = d.path().join("h.db");
    let o = cmd(env!("CARGO_BIN_EXE_iogauge"))
        .env_remove("IOGAUGE_NO_HISTORY")
        .args(["fio", &format!("--history-db={}", db.display())])
        .args(["--name=j", "--ioengine=null", "--size=4k"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(db.exists(), "--history-db wrote no database");
}

/// Every `per=` value of a text report.
fn per_values(out: &str) -> Vec<f64> {
    out.match_indices("per=")
        .map(|(i, _)| {
            let v = &out[i + 4..];
            v[..v.find('%').unwrap()].parse::<f64>().unwrap()
        })
        .collect()
}

#[test]
fn per_is_at_most_100_for_a_single_job_as_fio_caps_it() {
    let d = scratch();
    // Short bandwidth samples over a run that does not end on a sample boundary: the samples'
    // mean and the run's aggregate differ, and fio caps the share at 100.
    let o = iogauge(
        "fio",
        &[
            "--name=one",
            "--ioengine=null",
            "--size=1g",
            "--rate=64m",
            "--bwavgtime=100",
            "--time_based",
            "--runtime=1250ms",
            "--output-format=normal,json",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let pers = per_values(&out);
    assert!(!pers.is_empty(), "no bw line:\n{out}");
    assert!(pers.iter().all(|&p| p <= 100.0), "{pers:?}\n{out}");
    let json: serde_json::Value = serde_json::from_str(&out[out.find("\n{").unwrap()..]).unwrap();
    let agg = json["jobs"][0]["read"]["bw_agg"].as_f64().unwrap();
    assert!(agg > 0.0 && agg <= 100.0, "{agg}");
}

/// The job blocks of a `--status-interval` text stream, in order.
fn job_blocks<'a>(out: &'a str, job: &str) -> Vec<&'a str> {
    let head = format!("{job}: (groupid=0, jobs=1): err= 0: pid=");
    out.match_indices(&head)
        .map(|(i, _)| {
            let b = &out[i..];
            &b[..b.find("\nRun status group").unwrap_or(b.len())]
        })
        .collect()
}

fn pid_of(block: &str) -> u32 {
    let p = &block[block.find(": pid=").unwrap() + 6..];
    p[..p.find(':').unwrap()].parse().unwrap()
}

#[test]
fn status_interval_blocks_carry_the_pid_cpu_and_depths_so_far() {
    let d = scratch();
    let f = d.path().join("data");
    for (engine, depth, want_depth) in [
        (
            "psync",
            "1",
            "  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%",
        ),
        ("io_uring", "4", "  IO depths    : "),
    ] {
        let o = iogauge(
            "fio",
            &[
                "--name=s",
                &format!("--filename={}", f.display()),
                "--size=8m",
                "--rw=randread",
                &format!("--ioengine={engine}"),
                &format!("--iodepth={depth}"),
                "--time_based",
                "--runtime=2300ms",
                "--status-interval=1",
            ],
            d.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        let blocks = job_blocks(&out, "s");
        assert_eq!(
            blocks.len(),
            3,
            "two reports so far and the end report:\n{out}"
        );
        let end_pid = pid_of(blocks[2]);
        assert_ne!(end_pid, 0);
        for b in &blocks[..2] {
            // The worker's thread id, as the end report prints it.
            assert_eq!(pid_of(b), end_pid, "{b}");
            let cpu = line_starting(b, "  cpu ");
            let ctx: u64 = cpu[cpu.find("ctx=").unwrap() + 4..]
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(ctx > 0, "{cpu}");
            let depths = b.lines().find(|l| l.starts_with("  IO depths")).unwrap();
            assert!(depths.starts_with(want_depth), "{depths}");
            assert!(
                !depths.starts_with("  IO depths    : 1=0.0%, 2=0.0%, 4=0.0%"),
                "{depths}"
            );
        }
    }
    // Reports so far taken before a worker's first snapshot (every 100 ms) leave the CPU and
    // depth lines out rather than print zeros; none prints pid=0.
    let o = iogauge(
        "fio",
        &[
            "--name=s",
            &format!("--filename={}", f.display()),
            "--size=8m",
            "--rw=randread",
            "--ioengine=psync",
            "--time_based",
            "--runtime=400ms",
            "--status-interval=30ms",
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(job_blocks(&out, "s").len() > 3, "{out}");
    assert!(!out.contains("pid=0:"), "{out}");
    assert!(!out.contains("IO depths    : 1=0.0%"), "{out}");
    assert!(
        !out.contains("cpu          : usr=0.00%, sys=0.00%, ctx=0,"),
        "{out}"
    );
}

#[test]
fn a_directory_where_the_data_file_belongs_is_called_a_directory() {
    let d = scratch();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    let sub = d.path().join("sub");
    for rw in ["write", "read"] {
        let o = iogauge(
            "fio",
            &[
                "--name=t",
                "--filename=sub",
                &format!("--rw={rw}"),
                "--size=1m",
            ],
            d.path(),
        );
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            text(&o.stderr),
            "iogauge fio: job 't': 'sub' is a directory, not a data file; fio stops there with \
             'Is a directory' (error 21): to create the job's files inside it, give it as \
             directory= instead of filename=\n"
        );
        // --allow-overwrite does not make a directory a file.
        let o = iogauge(
            "fio",
            &[
                "--allow-overwrite",
                "--name=t",
                "--filename=sub",
                &format!("--rw={rw}"),
                "--size=1m",
            ],
            d.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("'sub' is a directory, not a data file"));
        assert_empty(&sub);
        if have_fio() {
            let f = std::process::Command::new("fio")
                .args([
                    "--name=t",
                    "--filename=sub",
                    &format!("--rw={rw}"),
                    "--size=1m",
                ])
                .current_dir(d.path())
                .output()
                .unwrap();
            assert_eq!(f.status.code(), Some(1));
            assert!(
                text(&f.stderr).contains("error=Is a directory"),
                "{}",
                text(&f.stderr)
            );
        }
    }
    // fio's own file name taken by a directory: not "a data file fio left".
    std::fs::create_dir(sub.join("t.0.0")).unwrap();
    let o = iogauge(
        "fio",
        &["--name=t", "--directory=sub", "--rw=write", "--size=1m"],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge fio: job 't': 'sub/t.0.0' is a directory, not a data file; fio stops there with \
         'Is a directory' (error 21): remove or rename it, or choose another directory=\n"
    );
}

fn spec(bench: &Path, analyzer_collector: &str, outcomes: &str) -> String {
    format!(
        "apiVersion: troubleshoot.sh/v1beta2\nkind: HostPreflight\nmetadata:\n  name: etcd\nspec:\n  \
         hostCollectors:\n    - filesystemPerformance:\n        collectorName: etcd-perf\n        \
         directory: {}\n        fileSize: 1Mi\n        operationSize: 2300\n        datasync: true\n  \
         hostAnalyzers:\n    - filesystemPerformance:\n        checkName: etcd disk\n        \
         collectorName: {analyzer_collector}\n        outcomes:\n{outcomes}",
        bench.display()
    )
}

const WARN: &str = "          - warn: {when: \"max > 0\", message: \"meh\"}\n";

#[test]
fn preflight_a_warning_keeps_troubleshoots_text_and_says_it_is_a_warning() {
    let d = scratch();
    std::fs::write(
        d.path().join("s.yaml"),
        spec(&d.path().join("b"), "etcd-perf", WARN),
    )
    .unwrap();
    // `text` (check's name) and `human` (troubleshoot's) are one format.
    let mut texts = Vec::new();
    for (i, format) in ["human", "text"].iter().enumerate() {
        let o = iogauge(
            "preflight",
            &["--output", &format!("out{i}"), "--format", format, "s.yaml"],
            d.path(),
        );
        assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
        // troubleshoot's own text, unchanged (pkg/preflight/text_results.go).
        assert_eq!(
            text(&o.stdout),
            "\n   --- WARN: etcd disk\n      --- meh\n--- PASS   etcd\nPASS\n"
        );
        assert!(
            text(&o.stderr).ends_with(
                "iogauge preflight: WARN: 1 outcome is a warning and none failed (exit 4); the \
                 text above ends in PASS because troubleshoot's does whenever nothing failed\n"
            ),
            "{}",
            text(&o.stderr)
        );
        texts.push(text(&o.stdout));
    }
    assert_eq!(texts[0], texts[1]);
}

#[test]
fn preflight_an_analyzer_naming_no_collector_is_refused_before_anything_runs() {
    let d = scratch();
    let bench = d.path().join("b");
    std::fs::write(d.path().join("s.yaml"), spec(&bench, "etcd-perff", WARN)).unwrap();
    let t0 = std::time::Instant::now();
    let o = iogauge("preflight", &["--output", "out", "s.yaml"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        "iogauge preflight: s.yaml (document 1): spec.hostAnalyzers[0].filesystemPerformance: \
         analyzer 'etcd disk': collectorName 'etcd-perff' matches no collector; the specs' \
         filesystemPerformance collectors are 'etcd-perf'. Use one of those names, add the \
         collector, or pass --analyze-only DIR to evaluate results collected elsewhere\n"
    );
    assert!(o.stdout.is_empty());
    // Nothing was collected: no benchmark directory, no results.
    assert!(!bench.exists());
    assert!(!d.path().join("out").exists());
    assert!(t0.elapsed() < std::time::Duration::from_secs(5));
    // With --analyze-only the results come from elsewhere: the name is not checked against
    // the spec's collectors (a missing result is the analyzer's fileNotCollected case).
    std::fs::create_dir(d.path().join("empty")).unwrap();
    let o = iogauge(
        "preflight",
        &["--analyze-only", "empty", "s.yaml"],
        d.path(),
    );
    assert_ne!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

/// `--keep-files` keeps the data file as fio does and says so in the results (not on stderr,
/// where fio is silent): text and JSON name the file.
#[test]
fn keep_files_names_the_kept_file_in_the_results() {
    let d = scratch();
    let args = ["--name=j", "--size=64k", "--rw=write", "--keep-files"];
    let out = iogauge(
        "fio",
        &[&args[..], &["--output-format=json"]].concat(),
        d.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let note =
        "kept 'j.0.0' as asked (--keep-files); it is yours now (iogauge no longer tracks it)";
    assert_eq!(json["iogauge"]["notes"], serde_json::json!([note]));
    assert_eq!(
        std::fs::metadata(d.path().join("j.0.0")).unwrap().len(),
        64 << 10
    );
    std::fs::remove_file(d.path().join("j.0.0")).unwrap();
    let out = iogauge("fio", &args, d.path());
    assert!(text(&out.stdout).contains(&format!("iogauge notes:\n  {note}\n")));
}

/// `--json-intervals` changes the printed JSON only: asked for with no JSON output it is bad
/// input (exit 2) with the fix, not silently nothing.
#[test]
fn json_intervals_without_json_output_is_refused_with_the_fix() {
    let d = scratch();
    let out = iogauge(
        "fio",
        &["--name=j", "--size=64k", "--rw=read", "--json-intervals"],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "iogauge fio: --json-intervals adds iogauge's per-interval data to the JSON output, and \
         no JSON was asked for; add --output-format=json (or json+), or drop --json-intervals\n"
    );
    assert_empty(d.path());
    let args = [
        "--name=j",
        "--size=64k",
        "--rw=read",
        "--json-intervals",
        "--output-format=normal,json+",
    ];
    let out = iogauge("fio", &args, d.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
