//! Entry points for fuzzing the parsers of untrusted input (`bench/fuzz.sh`, `examples/fuzz.rs`).
//! Each target takes arbitrary bytes and must return, never panic: a bad input is an `Err`.
//! Nothing here touches a disk beyond reading (fio's `include` reads files, as it would).

mod engine;

pub use engine::{fuzz, Outcome};

use crate::input::fio::parse_fio_args;
use crate::input::{profiles, troubleshoot};
use crate::report::troubleshoot::FsPerfResults;
use crate::verdict::criteria::Tuning;
use crate::verdict::fsperf;
use std::path::Path;

/// A fuzz target: one parser fed arbitrary bytes.
pub struct Target {
    /// Its name on the fuzzer's command line and its corpus directory.
    pub name: &'static str,
    /// What it parses.
    pub about: &'static str,
    /// Feeds it one input.
    pub run: fn(&[u8]),
}

/// Every target.
pub static TARGETS: &[Target] = &[
    Target {
        name: "fio-args",
        about: "iogauge fio's command line (one argument per line; after a line '--', a job file read as '-')",
        run: fio_args,
    },
    Target {
        name: "fio-jobfile",
        about: "fio job files (iogauge fio -)",
        run: fio_jobfile,
    },
    Target {
        name: "troubleshoot-spec",
        about: "troubleshoot specs (iogauge preflight), analyzers evaluated against a fixed result",
        run: troubleshoot_spec,
    },
    Target {
        name: "profile",
        about: "check profiles (iogauge check FILE.yaml), with each workload built",
        run: profile,
    },
    Target {
        name: "result-file",
        about: "collector result files (iogauge preflight --analyze-only)",
        run: result_file,
    },
];

/// The corpus of `target` under `root` (`fuzz/corpus/<name>/`): every file, sorted by name.
pub fn corpus(root: &Path, target: &Target) -> std::io::Result<Vec<Vec<u8>>> {
    let mut paths: Vec<_> = std::fs::read_dir(root.join(target.name))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    paths.iter().map(std::fs::read).collect()
}

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn fio_args(data: &[u8]) {
    let t = text(data);
    let (args, job) = match t.split_once("\n--\n") {
        Some((a, j)) => (a, j),
        None => (&*t, ""),
    };
    let args: Vec<String> = args.lines().map(str::to_string).collect();
    let _ = parse_fio_args(&args, &no_env, &mut job.as_bytes());
}

fn fio_jobfile(data: &[u8]) {
    let args = ["-".to_string()];
    let _ = parse_fio_args(&args, &no_env, &mut &data[..]);
}

fn troubleshoot_spec(data: &[u8]) {
    let mut p = troubleshoot::Preflight::default();
    if troubleshoot::load(&text(data), "fuzz.yaml", &mut p).is_err() {
        return;
    }
    let r = FsPerfResults::from_json(FIXED_RESULT).ok();
    for a in &p.analyzers {
        let _ = fsperf::analyze(a, r.as_ref(), "fuzz");
        let _ = fsperf::analyze(a, None, "fuzz");
    }
}

fn profile(data: &[u8]) {
    let Ok(p) = profiles::from_text(&text(data), "fuzz.yaml") else {
        return;
    };
    let t = Tuning {
        scale: 0.5,
        duration: Some(std::time::Duration::from_secs(1)),
        size: None,
        max_size: Some(1 << 20),
    };
    let _ = p.job(Path::new("/nonexistent"), &t);
    let _ = p.small_files(&t);
}

fn result_file(data: &[u8]) {
    if let Ok(r) = FsPerfResults::from_json(&text(data)) {
        let _ = fsperf::table(&r);
    }
}

/// A troubleshoot result table, for analyzers to be evaluated against.
const FIXED_RESULT: &str = r#"{"Min":1000,"Max":9000000,"Average":50000,"P1":1100,"P5":1200,"P10":1300,"P20":1400,"P30":1500,"P40":1600,"P50":1700,"P60":1800,"P70":1900,"P80":2000,"P90":3000,"P95":4000,"P99":5000,"P995":6000,"P999":7000,"P9995":8000,"P9999":8500}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_result_parses_and_every_target_takes_garbage() {
        assert!(FsPerfResults::from_json(FIXED_RESULT).is_ok());
        for t in TARGETS {
            (t.run)(b"");
            (t.run)(b"\xff\xfe[\x00");
        }
    }
}
