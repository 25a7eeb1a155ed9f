//! strace helpers for the fio_breadth_io* cross-checks: a fixture run under strace by fio or
//! iogauge, and its calls as text.

use super::{assert_empty, cmd, run_fixture, scratch, Out};

const IOGAUGE: &str = env!("CARGO_BIN_EXE_iogauge");

pub fn have_strace() -> bool {
    let ok = cmd("strace")
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("strace is not installed, and CI=true requires the check: apt-get install -y strace");
        }
        eprintln!("skipping the strace check: strace is not installed (apt-get install -y strace)");
    }
    ok
}

/// The fixture under `program` ("fio" or "iogauge") traced by strace for `calls`, in a fresh
/// directory: the run and the traced calls (pid and fd removed: `name(args) = result`).
pub fn traced(
    program: &str,
    fixture: &str,
    subst: &[(&str, &str)],
    calls: &str,
) -> (Out, Vec<String>) {
    let (out, lines) = traced_raw(program, fixture, subst, calls);
    (
        out,
        lines.iter().filter_map(|l| drop_first_arg(l)).collect(),
    )
}

/// As `traced`, with every argument kept (pid removed: `name(args) = result`).
pub fn traced_raw(
    program: &str,
    fixture: &str,
    subst: &[(&str, &str)],
    calls: &str,
) -> (Out, Vec<String>) {
    let d = scratch();
    let log = d.path().join("strace.log");
    let log_s = log.to_str().unwrap().to_string();
    let mut pre = vec!["-f", "-qq", "-e", calls, "-o", &log_s];
    pre.extend(if program == "fio" {
        vec!["fio"]
    } else {
        vec![IOGAUGE, "fio"]
    });
    let out = run_fixture("strace", &pre, fixture, subst, d.path());
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    if program != "fio" {
        assert_empty(d.path());
    }
    let lines = text
        .lines()
        .map(|l| {
            l.split_once(' ')
                .map_or(l, |(_, rest)| rest)
                .trim()
                .to_string()
        })
        .collect();
    (out, lines)
}

/// `name(fd, args) = result` as `name(args) = result`.
pub fn drop_first_arg(l: &str) -> Option<String> {
    let (name, rest) = l.split_once('(')?;
    let args = rest.split_once(", ").map_or(rest, |(_, a)| a);
    Some(format!("{name}({args}"))
}
