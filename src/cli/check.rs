//! `iogauge check [PROFILE…]`: runs profiles in a directory and prints a verdict per profile
//! (`verdict::check` decides it), a summary, and what to do next.

use super::progress::Bar;
use super::{Stop, EXIT_ERROR, EXIT_FAIL, EXIT_OK, EXIT_USAGE, EXIT_WARN};
use crate::report::Report;
use crate::run::small_files::run_small_files;
use crate::run::{run, RunError, RunOptions};
use crate::spec::profiles::{self, Profile, SmallFiles, Tuning, DEFAULT_SUITE};
use crate::spec::units::{parse_flag_duration, parse_flag_size};
use crate::spec::{JobSpec, RunSpec, SizeSpec, DDIR_READ, DDIR_WRITE};
use crate::verdict::check::{
    evaluate, not_measured, overall, CheckVerdict, Judging, Overall, ProfileOutcome, Summary,
};
use crate::verdict::profile::Measured;
use crate::verdict::trust::Place;
use crate::workload::layout::LayoutError;
use crate::workload::{cleanup, fs};
use indicatif::ProgressDrawTarget;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Runs profiles and says whether the disk under --dir is good enough for each.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Profiles: etcd, etcd-large, sync-iops, small-files, gitlab (--list says what each judges), or a
YAML file in the same format (docs/PROFILES.md). fio's own options go to 'iogauge fio'.

Exit codes: 0 all passed, 1 could not run or interrupted, 2 bad input, 3 a profile failed,
4 the worst was a warning. Interrupted wins; then a failure, then a profile that could not run.")]
pub struct CheckArgs {
    /// Built-in profile names or profile files [default: etcd sync-iops small-files gitlab]
    #[arg(value_name = "PROFILE|FILE")]
    profiles: Vec<OsString>,
    /// Where to write the test files: a directory on the disk you mean
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Shrink sizes, times and file counts by F (0 < F <= 1) for a quick look; marked as shortened
    #[arg(long, value_name = "F", value_parser = parse_scale, default_value = "1")]
    scale: f64,
    /// Run time-based profiles for D: 10 (seconds), 30s, 2m, 1m30s
    #[arg(long, value_name = "D", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Test file size in fio's grammar: 64m = 64 MiB, 1g = 1 GiB, 512MiB
    #[arg(long, value_name = "S", value_parser = parse_size)]
    size: Option<u64>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Warnings fail too, and a shortened run is at best a warning
    #[arg(long)]
    strict: bool,
    /// Leave the test files in place
    #[arg(long)]
    keep_files: bool,
    /// List the built-in profiles, one line each
    #[arg(long)]
    list: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Format {
    Text,
    Json,
}

fn parse_scale(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0 && *s <= 1.0)
        .ok_or_else(|| "expected a number above 0 and at most 1, e.g. 0.1".to_string())
}

fn parse_duration(v: &str) -> Result<Duration, String> {
    let d = parse_flag_duration(v)?;
    if d.is_zero() {
        return Err("must be above 0".into());
    }
    Ok(d)
}

fn parse_size(v: &str) -> Result<u64, String> {
    parse_flag_size(v)
}

impl CheckArgs {
    fn tuning(&self) -> Tuning {
        Tuning {
            scale: self.scale,
            duration: self.duration,
            size: self.size,
        }
    }

    fn profiles(&self) -> Vec<OsString> {
        if self.profiles.is_empty() {
            DEFAULT_SUITE.iter().map(OsString::from).collect()
        } else {
            self.profiles.clone()
        }
    }
}

/// `--list`: one line per built-in profile.
fn list() -> String {
    let mut out = String::new();
    for name in profiles::names() {
        let Ok(p) = profiles::get(name) else { continue };
        let t = Tuning {
            scale: 1.0,
            ..Tuning::default()
        };
        let judged: Vec<String> = p
            .metrics
            .iter()
            .map(|m| {
                format!(
                    "{} {}",
                    p.label(&m.label, &t),
                    crate::verdict::profile::threshold_text(m)
                )
            })
            .collect();
        out.push_str(&format!("{name:<12} {}: {}\n", p.title, judged.join("; ")));
    }
    out
}

/// What a profile runs.
enum Work {
    Job(Box<JobSpec>),
    SmallFiles(SmallFiles),
}

struct Planned {
    profile: Profile,
    work: Work,
    shortened: bool,
}

/// The line printed before a profile runs: what it does, and how long it takes when the work
/// says so (a size-bound job takes as long as the disk needs; the progress bar shows the ETA).
fn plan_line(p: &Profile, work: &Work, dir: &Path) -> String {
    let what = match work {
        Work::SmallFiles(s) => format!(
            "{} files of {} bytes, created then read back",
            s.files, s.size
        ),
        Work::Job(job) => {
            let size = match job.size {
                Some(SizeSpec::Bytes(b)) => format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64),
                _ => "?".into(),
            };
            match (job.time_based, job.runtime) {
                (true, Some(r)) => format!(
                    "a {size} file, about {:.0} s",
                    (r + job.ramp_time).as_secs_f64()
                ),
                _ => {
                    let bs = job.bs[DDIR_WRITE].max(job.bs[DDIR_READ]).max(1);
                    let n = match job.size {
                        Some(SizeSpec::Bytes(b)) => b / bs,
                        _ => 0,
                    };
                    let sync = if job.fdatasync > 0 || job.fsync > 0 {
                        ", each synced"
                    } else {
                        ""
                    };
                    format!("a {size} file in {n} writes of {bs} bytes{sync}; as long as the disk takes")
                }
            }
        }
    };
    format!(
        "iogauge check: {}: {} in {}: {what}",
        p.name,
        p.title,
        dir.display()
    )
}

/// A run error in check's words: check has no fio options to point at.
fn reason(e: &RunError) -> String {
    match e {
        RunError::Layout(LayoutError::NoSpace { dir, need, avail }) => format!(
            "not enough free space in '{}': the test file needs {need} bytes, {avail} are available; \
             use a smaller --size or --scale, or another --dir",
            dir.display()
        ),
        RunError::Layout(LayoutError::DirectRefused { source, .. }) => format!(
            "the filesystem under --dir refused direct I/O ({source}), which this profile needs; \
             choose a --dir on a disk filesystem (tmpfs does not support it)"
        ),
        RunError::Layout(LayoutError::DirectAlignment {
            what, value, align, ..
        }) => format!(
            "the filesystem under --dir needs direct I/O aligned to {align} bytes, and this \
             profile's {what} is {value}; choose a --dir on another filesystem"
        ),
        e => e.to_string(),
    }
}

/// Runs a profile's job (the engine was chosen before: see the io_uring probe in `plan`).
fn run_job(job: JobSpec, keep_files: bool, stop: &AtomicBool) -> Result<Report, RunError> {
    // Progress on an indicatif bar, only when stderr is a terminal.
    let bar = std::io::stderr()
        .is_terminal()
        .then(|| Arc::new(Bar::new(ProgressDrawTarget::stderr(), &job.name)));
    let opts = RunOptions {
        progress_sink: bar.as_ref().map(|b| b.sink()),
        ..RunOptions::default()
    };
    let spec = RunSpec {
        jobs: vec![job],
        keep_files,
        ..RunSpec::default()
    };
    let res = run(&spec, &opts, stop);
    if let Some(b) = bar {
        b.finish();
    }
    res
}

/// Profiles resolved and their work built, before anything touches the disk.
fn plan(a: &CheckArgs, token: &str) -> Result<Vec<Planned>, String> {
    let mut plan = Vec::new();
    let tuning = a.tuning();
    for name in a.profiles() {
        let p = profiles::resolve(&name)?;
        let work = match p.small_files(&tuning) {
            Some(s) => Work::SmallFiles(s),
            None => {
                let mut j = p.job(&a.dir, &tuning)?;
                // Names no other run uses, so two checks in one directory never collide.
                j.filename = Some(format!("iogauge-{}.{token}", p.name));
                Work::Job(Box::new(j))
            }
        };
        if let (Work::Job(j), Some(size)) = (&work, a.size) {
            let bs = j.bs[DDIR_READ].max(j.bs[DDIR_WRITE]);
            if size < bs {
                return Err(format!(
                    "--size {size}: smaller than one {bs}-byte block of profile '{}'; use at least \
                     {bs} bytes (e.g. 64m)",
                    p.name
                ));
            }
        }
        // Marked as shortened only if the tuning actually changed this profile's run.
        let published = Tuning {
            scale: 1.0,
            ..Tuning::default()
        };
        let shortened = match &work {
            Work::SmallFiles(s) => Some(s.files) != p.small_files.map(|d| d.files),
            Work::Job(j) => p
                .job(&a.dir, &published)
                .map(|mut pj| {
                    pj.filename = j.filename.clone();
                    pj != **j
                })
                .unwrap_or(true),
        };
        let mut work = work;
        if let Work::Job(j) = &mut work {
            if let Some(why) = crate::engine::io_uring_or_libaio(&mut j.ioengine) {
                eprintln!("iogauge check: {}: {why}", p.name);
            }
        }
        plan.push(Planned {
            profile: p,
            work,
            shortened,
        });
    }
    Ok(plan)
}

/// Runs one planned profile and judges it.
fn run_one(a: &CheckArgs, pl: &Planned, token: &str, place: &Place, stop: &Stop) -> ProfileOutcome {
    let p = &pl.profile;
    let measured = match &pl.work {
        Work::Job(job) => run_job((**job).clone(), a.keep_files, stop.flag()).map(Measured::Fio),
        Work::SmallFiles(s) => run_small_files(
            &a.dir,
            &format!("iogauge-{}.{token}", p.name),
            s.files,
            s.size,
            a.keep_files,
            stop.flag(),
        )
        .map(Measured::SmallFiles),
    };
    let interrupted = || {
        format!(
            "interrupted by {}; its files were removed and its partial numbers are not judged",
            stop.reason()
        )
    };
    match measured {
        _ if stop.is_set() => not_measured(p, CheckVerdict::Interrupted, interrupted()),
        Ok(m) => {
            let how = Judging {
                shortened: pl.shortened,
                strict: a.strict,
                place: place.clone(),
            };
            let job = match &pl.work {
                Work::Job(j) => Some(&**j),
                Work::SmallFiles(_) => None,
            };
            evaluate(p, &a.tuning(), job, &m, &how)
        }
        Err(e) => {
            let why = reason(&e);
            eprintln!("iogauge check: {}: {why}", p.name);
            not_measured(p, CheckVerdict::Error, why)
        }
    }
}

fn print_text(outcomes: &[ProfileOutcome], summary: &Summary) {
    // Colour only on a terminal, and never with NO_COLOR set (no-color.org).
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    for o in outcomes {
        let word = o.verdict.word();
        let code = match o.verdict {
            CheckVerdict::Pass => "32",
            CheckVerdict::Warn => "33",
            CheckVerdict::Fail | CheckVerdict::Error => "31",
            CheckVerdict::Interrupted | CheckVerdict::Skipped => "2",
        };
        let word = if color {
            format!("\x1b[1;{code}m{word}\x1b[0m")
        } else {
            word.to_string()
        };
        println!("{word} {}: {}", o.profile, o.title);
        for m in &o.metrics {
            let label = m
                .verdict_label
                .as_ref()
                .map(|l| format!(": {l}"))
                .unwrap_or_default();
            println!(
                "  {}  {} {} (threshold {}){label}",
                m.verdict.word(),
                m.label,
                m.value_text,
                m.threshold_text
            );
            println!("        source: {}", m.source);
            if let Some(r) = &m.rank {
                println!("        rank: {r}");
            }
        }
        for i in &o.info {
            let g: Vec<String> = i
                .guidance
                .iter()
                .map(|g| {
                    let met = if g.met { "met" } else { "NOT met" };
                    format!("{} {} {met}", g.label, g.value)
                })
                .collect();
            let g = if g.is_empty() {
                String::new()
            } else {
                format!(" ({})", g.join("; "))
            };
            println!("        {}: {}{g}", i.label, i.value_text);
        }
        if let Some(n) = &o.not_disk {
            println!("  WARN  not a disk measurement: {n}");
        }
        if let Some(r) = &o.reason {
            println!("  {r}");
        }
        for w in &o.warnings {
            println!("  warning: {w}");
        }
        for a in &o.advice {
            println!("  next: {a}");
        }
        println!();
    }
    println!("{}", summary.line());
}

pub fn main(a: CheckArgs, stop: &Stop) -> i32 {
    if a.list {
        print!("{}", list());
        return EXIT_OK;
    }
    let token = cleanup::run_token();
    let planned = match plan(&a, &token).and_then(|p| fs::check_dir(&a.dir, "--dir").map(|_| p)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iogauge check: {e}");
            return EXIT_USAGE;
        }
    };
    let left = cleanup::leftovers(&a.dir);
    if !left.is_empty() {
        eprintln!(
            "iogauge check: note: {} file(s) in {} were left by an earlier iogauge run that was killed \
             (e.g. '{}'); they hold only test data: remove them with rm {}/iogauge-*",
            left.len(),
            a.dir.display(),
            left[0].display(),
            a.dir.display()
        );
    }
    let place = Place {
        memory: fs::memory_backed(&a.dir),
        container_layer: fs::container_layer(&a.dir),
    };
    for pl in &planned {
        eprintln!("{}", plan_line(&pl.profile, &pl.work, &a.dir));
    }
    let mut outcomes = Vec::new();
    for pl in &planned {
        outcomes.push(if stop.is_set() {
            not_measured(
                &pl.profile,
                CheckVerdict::Skipped,
                "not run: the check was interrupted before it started".into(),
            )
        } else {
            run_one(&a, pl, &token, &place, stop)
        });
    }
    let summary = Summary::of(&outcomes);
    if a.format == Format::Json {
        let doc = serde_json::json!({
            "iogauge": env!("CARGO_PKG_VERSION"),
            "dir": a.dir.display().to_string(),
            "profiles": outcomes,
            "summary": summary,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        print_text(&outcomes, &summary);
    }
    match overall(&outcomes, a.strict) {
        Overall::Interrupted => {
            let during = outcomes
                .iter()
                .find(|o| o.verdict == CheckVerdict::Interrupted)
                .map(|o| format!(" during {}", o.profile))
                .unwrap_or_default();
            eprintln!(
                "iogauge check: interrupted by {}{during}; the files it created were removed",
                stop.reason()
            );
            EXIT_ERROR
        }
        Overall::Fail => EXIT_FAIL,
        Overall::Error => EXIT_ERROR,
        Overall::Warn => EXIT_WARN,
        Overall::Pass => EXIT_OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Result<CheckArgs, String> {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            a: CheckArgs,
        }
        T::try_parse_from(std::iter::once("check").chain(v.iter().copied()))
            .map(|t| t.a)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn arguments() {
        let x = a(&[
            "etcd",
            "--dir",
            "/d",
            "--scale=0.5",
            "--duration",
            "10",
            "--size",
            "64m",
            "--format",
            "json",
            "--strict",
        ])
        .unwrap();
        assert_eq!(x.profiles(), vec![OsString::from("etcd")]);
        assert_eq!(x.dir, PathBuf::from("/d"));
        assert_eq!(x.scale, 0.5);
        assert_eq!(x.duration, Some(Duration::from_secs(10)));
        assert_eq!(x.size, Some(64 << 20));
        assert!(x.format == Format::Json && x.strict);
        // fio's grammar: 1m is a MiB and 1G a GiB, never a milli-byte or 10^9 bytes.
        let size = |s: &str| a(&["--size", s]).unwrap().size;
        assert_eq!(size("1m"), Some(1 << 20));
        assert_eq!(size("1G"), Some(1 << 30));
        assert_eq!(size("1GiB"), Some(1 << 30));
        assert_eq!(
            a(&[]).unwrap().profiles(),
            DEFAULT_SUITE.map(OsString::from).to_vec()
        );
        assert!(a(&["--scale", "2"]).unwrap_err().starts_with(
            "error: invalid value '2' for '--scale <F>': expected a number above 0 and at most 1, e.g. 0.1"
        ));
        assert!(a(&["--duration", "0"])
            .unwrap_err()
            .contains("must be above 0"));
        assert!(a(&["--bs=4k"])
            .unwrap_err()
            .starts_with("error: unexpected argument '--bs' found"));
        assert!(a(&["--list"]).unwrap().list);
    }

    #[test]
    fn list_has_every_profile_with_its_threshold() {
        let l = list();
        assert_eq!(l.lines().count(), profiles::names().count());
        assert!(
            l.starts_with("etcd         etcd WAL (IBM recipe): p99 fdatasync latency < 10 ms\n")
        );
        assert!(l.contains("\nsmall-files  many small files (GitLab): create 1,000 small files"));
    }

    #[test]
    fn plan_lines_follow_the_work() {
        let t = |scale| Tuning {
            scale,
            ..Tuning::default()
        };
        let p = profiles::get("small-files").unwrap();
        let w = Work::SmallFiles(p.small_files(&t(0.1)).unwrap());
        assert_eq!(
            plan_line(&p, &w, Path::new("/d")),
            "iogauge check: small-files: many small files (GitLab) in /d: 100 files of 5 bytes, created then read back"
        );
        let p = profiles::get("etcd").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(1.0)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/d")),
            "iogauge check: etcd: etcd WAL (IBM recipe) in /d: a 22 MiB file in 10029 writes of 2300 bytes, each synced; as long as the disk takes"
        );
        let p = profiles::get("sync-iops").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(0.1)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/d")),
            "iogauge check: sync-iops: synchronous write IOPS (Manetu) in /d: a 102 MiB file, about 6 s"
        );
    }
}
