//! `iogauge check [PROFILE…]`: runs built-in profiles in a directory and gives a verdict per
//! profile with the number, its threshold and source, and a rank against reference systems.

use super::args::Flags;
use super::progress::Bar;
use super::{EXIT_ERROR, EXIT_FAIL, EXIT_OK, EXIT_USAGE, EXIT_WARN};
use crate::report::json::render_json;
use crate::report::Report;
use crate::run::small_files::run_small_files;
use crate::run::{run, RunError, RunOptions};
use crate::spec::profiles::SmallFiles;
use crate::spec::profiles::{self, Profile, Tuning, DEFAULT_SUITE};
use crate::spec::troubleshoot::OutcomeKind;
use crate::spec::units::{parse_go_duration, parse_k8s_quantity};
use crate::spec::{IoEngine, JobSpec, RunSpec, SizeSpec, DDIR_READ, DDIR_WRITE};
use crate::verdict::profile::Measured;
use crate::verdict::profile::{judge, metric_value, rank, rank_line, show, threshold_text};
use indicatif::ProgressDrawTarget;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const USAGE: &str = "\
Usage: iogauge check [PROFILE...] [OPTIONS]
Runs built-in profiles and says whether the disk under --dir is good enough for each.
Profiles: etcd, etcd-large, sync-iops, gitlab (default: etcd, sync-iops, gitlab).

Options:
  --dir DIR          where to write the test files (default: the current directory)
  --scale F          shrink sizes and times by F (0 < F <= 1) for a quick look; marked as shortened
  --duration D       run time-based profiles for D (Go duration: 30s, 2m)
  --size S           file size (Kubernetes quantity: 512Mi, 1Gi)
  --format FORMAT    text (default) or json
  --strict           treat warnings as failures
  --keep-files       leave the test files in place
  --help

Exit codes: 0 pass, 1 error, 2 bad input, 3 a profile failed, 4 the worst was a warning.
";

struct Args {
    profiles: Vec<String>,
    dir: PathBuf,
    tuning: Tuning,
    json: bool,
    strict: bool,
    keep_files: bool,
}

fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let mut a = Args {
        profiles: Vec::new(),
        dir: PathBuf::from("."),
        tuning: Tuning {
            scale: 1.0,
            ..Tuning::default()
        },
        json: false,
        strict: false,
        keep_files: false,
    };
    let mut flags = Flags::new(args);
    while let Some(f) = flags.next_flag() {
        let (key, arg) = (f.key, f.arg);
        let mut value = |eg: &str| flags.value(&f, eg);
        match key {
            "--help" | "-h" => return Ok(None),
            "--dir" => a.dir = value("/var/lib/etcd")?.into(),
            "--scale" => {
                let v = value("0.1")?;
                a.tuning.scale = v
                    .parse::<f64>()
                    .ok()
                    .filter(|s| *s > 0.0 && *s <= 1.0)
                    .ok_or_else(|| {
                        format!("--scale {v}: expected a number above 0 and at most 1, e.g. 0.1")
                    })?;
            }
            "--duration" => {
                let v = value("30s")?;
                let d = parse_go_duration(&v).map_err(|e| format!("--duration {v}: {e}"))?;
                if d.is_zero() {
                    return Err(format!("--duration {v}: must be above 0"));
                }
                a.tuning.duration = Some(d);
            }
            "--size" => {
                let v = value("1Gi")?;
                a.tuning.size =
                    Some(parse_k8s_quantity(&v).map_err(|e| format!("--size {v}: {e}"))?);
            }
            "--format" => {
                a.json = match value("json")?.as_str() {
                    "text" => false,
                    "json" => true,
                    f => return Err(format!("--format {f}: expected text or json")),
                }
            }
            "--strict" => a.strict = true,
            "--keep-files" => a.keep_files = true,
            k if k.starts_with('-') => {
                return Err(format!("unknown option '{k}'; run 'iogauge check --help'"))
            }
            _ => a.profiles.push(arg.clone()),
        }
    }
    if a.profiles.is_empty() {
        a.profiles = DEFAULT_SUITE.iter().map(|s| s.to_string()).collect();
    }
    Ok(Some(a))
}

/// The directory must exist and be writable: say so before anything runs.
fn check_dir(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Err(format!(
            "directory '{}' does not exist; create it or choose another with --dir",
            dir.display()
        ));
    }
    // Create and remove a probe file: permission bits alone say nothing for root, and a
    // read-only mount or a full quota only shows when writing.
    let probe = dir.join(format!(".iogauge-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) => {
            return Err(format!(
                "directory '{}' is not writable ({e}); choose another with --dir",
                dir.display()
            ))
        }
    }
    Ok(())
}

/// Filesystems that are probably not the disk the user meant.
fn memory_backed(dir: &Path) -> Option<&'static str> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statfs fills the zeroed struct.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    match s.f_type as u64 {
        0x0102_1994 => Some("tmpfs (memory)"),
        0x8584_58f6 => Some("ramfs (memory)"),
        0x794c_7630 => Some("overlayfs (a container's writable layer)"),
        _ => None,
    }
}

/// What a profile runs.
enum Work {
    Job(Box<JobSpec>),
    SmallFiles(SmallFiles),
}

/// What the run will do, for the line printed before it starts.
fn plan_line(p: &Profile, work: &Work, dir: &Path) -> String {
    let job = match work {
        Work::Job(j) => j,
        Work::SmallFiles(s) => {
            return format!(
                "iogauge check: {}: {}: {} files of {} bytes in {}, created then read back, usually seconds",
                p.name,
                p.title,
                s.files,
                s.size,
                dir.display()
            )
        }
    };
    let size = match job.size {
        Some(SizeSpec::Bytes(b)) => format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64),
        _ => "?".into(),
    };
    let time = match (job.time_based, job.runtime) {
        (true, Some(r)) => format!("about {:.0} s", (r + job.ramp_time).as_secs_f64()),
        _ => "until the file is written (usually under a minute)".into(),
    };
    format!(
        "iogauge check: {}: {} on a {size} file in {}, {time}",
        p.name,
        p.title,
        dir.display()
    )
}

/// Reasons not to trust a result.
fn warnings(job: &JobSpec, r: &Report, fs: Option<&str>) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(fs) = fs {
        w.push(format!(
            "the directory is on {fs}, not on a disk; point --dir at the disk you mean"
        ));
    }
    let Some(j) = r.jobs.first() else { return w };
    for (d, word) in [(DDIR_READ, "read"), (DDIR_WRITE, "write")] {
        let dir = &j.dirs[d];
        if dir.total_ios == 0 {
            continue;
        }
        let s = &dir.iops_samples;
        if s.samples < 3 {
            w.push(format!(
                "the {word} run gave {} periodic samples (under 3): too short to show variation; run longer",
                s.samples
            ));
        } else if s.mean > 0.0 && s.stddev / s.mean > 0.3 {
            w.push(format!(
                "{word} IOPS varied a lot across {} samples (coefficient of variation {:.0}%): the disk \
                 was busy or throttled; repeat the check",
                s.samples,
                100.0 * s.stddev / s.mean
            ));
        }
        if d == DDIR_READ && !job.direct && dir.bw_bytes > 8 << 30 {
            w.push("buffered reads ran faster than a disk could (over 8 GiB/s): the page cache answered them".into());
        }
    }
    w
}

struct Outcome {
    profile: Profile,
    verdict: OutcomeKind,
    metrics: Vec<Value>,
    text: Vec<String>,
    warnings: Vec<String>,
    shortened: bool,
    report: Measured,
}

fn evaluate(
    p: Profile,
    work: &Work,
    report: Measured,
    shortened: bool,
    fs: Option<&str>,
) -> Outcome {
    let mut verdict = OutcomeKind::Pass;
    let mut metrics = Vec::new();
    let mut text = Vec::new();
    for m in &p.metrics {
        let Some(v) = metric_value(&report, m.key) else {
            verdict = OutcomeKind::Fail;
            text.push(format!("  FAIL  {}: not measured", m.label));
            continue;
        };
        let k = judge(m, v);
        verdict = verdict.max(k);
        let word = match k {
            OutcomeKind::Pass => ("PASS", m.pass_label.as_deref()),
            OutcomeKind::Warn => ("WARN", m.warn_label.as_deref()),
            OutcomeKind::Fail => ("FAIL", m.fail_label.as_deref()),
        };
        let label = word.1.map(|l| format!(": {l}")).unwrap_or_default();
        text.push(format!(
            "  {}  {} {} (threshold {}){label}",
            word.0,
            m.label,
            show(m.key, v),
            threshold_text(m)
        ));
        text.push(format!("        source: {}", m.source));
        if let Some(line) = rank_line(&p, m, v) {
            text.push(format!("        rank: {line}"));
        }
        let (refs, _) = rank(&p, m.key, m.better, v);
        metrics.push(json!({
            "metric": m.key.name(),
            "label": m.label,
            "verdict": kind_name(k),
            "value": v,
            "unit": m.key.unit(),
            "threshold": m.pass.value().unwrap_or(f64::NAN),
            "warn_threshold": m.warn.as_ref().and_then(|w| w.value().ok()),
            "better": if m.better == profiles::Better::Lower { "lower" } else { "higher" },
            "source": m.source,
            "references": refs.iter().map(|r| json!({"system": r.system, "value": r.value})).collect::<Vec<_>>(),
        }));
    }
    for i in &p.info {
        if let Some(v) = metric_value(&report, i.key) {
            let g: Vec<String> = i
                .guidance
                .iter()
                .map(|g| {
                    format!(
                        "{} {} {}",
                        g.label,
                        g.value,
                        if v >= g.value { "met" } else { "NOT met" }
                    )
                })
                .collect();
            let guidance = if g.is_empty() {
                String::new()
            } else {
                format!(" ({})", g.join("; "))
            };
            text.push(format!("        {}: {}{guidance}", i.label, show(i.key, v)));
        }
    }
    let mut w = match (work, &report) {
        (Work::Job(job), Measured::Fio(r)) => warnings(job, r, fs),
        _ => fs
            .map(|fs| {
                vec![format!(
                    "the directory is on {fs}, not on a disk; point --dir at the disk you mean"
                )]
            })
            .unwrap_or_default(),
    };
    if shortened {
        w.insert(
            0,
            "shortened run (--scale, --duration or --size): a quick look, not the published recipe"
                .into(),
        );
    }
    Outcome {
        profile: p,
        verdict,
        metrics,
        text,
        warnings: w,
        shortened,
        report,
    }
}

fn kind_name(k: OutcomeKind) -> &'static str {
    match k {
        OutcomeKind::Pass => "pass",
        OutcomeKind::Warn => "warn",
        OutcomeKind::Fail => "fail",
    }
}

/// Runs a profile's job (the engine was chosen before: see the io_uring probe in `main`).
fn run_job(job: JobSpec, keep_files: bool, stop: &AtomicBool) -> Result<Report, RunError> {
    // Progress on an indicatif bar, only when stderr is a terminal.
    // SAFETY: isatty only inspects the descriptor.
    let bar = (unsafe { libc::isatty(2) } == 1)
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

pub fn main(args: &[String]) -> i32 {
    let a = match parse_args(args) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{USAGE}");
            return EXIT_OK;
        }
        Err(e) => {
            eprintln!("iogauge check: {e}");
            return EXIT_USAGE;
        }
    };
    let mut plan = Vec::new();
    for name in &a.profiles {
        let p = match profiles::get(name) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("iogauge check: {e}");
                return EXIT_USAGE;
            }
        };
        let work = match p.small_files(&a.tuning) {
            Some(s) => Work::SmallFiles(s),
            None => match p.job(&a.dir, &a.tuning) {
                Ok(j) => Work::Job(Box::new(j)),
                Err(e) => {
                    eprintln!("iogauge check: {e}");
                    return EXIT_USAGE;
                }
            },
        };
        if let (Work::Job(j), Some(size)) = (&work, a.tuning.size) {
            let bs = j.bs[DDIR_READ].max(j.bs[DDIR_WRITE]);
            if size < bs {
                eprintln!(
                    "iogauge check: --size {size}: smaller than one {bs}-byte block of profile '{}'; \
                     use at least {bs} bytes (e.g. 64Mi)",
                    p.name
                );
                return EXIT_USAGE;
            }
        }
        // Marked as shortened only if the tuning actually changed this profile's run.
        let shortened = match &work {
            Work::SmallFiles(s) => Some(s.files) != p.small_files.map(|d| d.files),
            Work::Job(j) => {
                let published = p.job(
                    &a.dir,
                    &Tuning {
                        scale: 1.0,
                        ..Tuning::default()
                    },
                );
                published.map(|pj| pj != **j).unwrap_or(true)
            }
        };
        // Decide the engine before laying out 1 GiB, not after.
        let work = match work {
            Work::Job(mut j) if j.ioengine == IoEngine::IoUring => {
                if let Some(why) = crate::engine::io_uring::probe() {
                    eprintln!("iogauge check: {}: {why}; using libaio instead", p.name);
                    j.ioengine = IoEngine::Libaio;
                }
                Work::Job(j)
            }
            w => w,
        };
        plan.push((p, work, shortened));
    }
    if let Err(e) = check_dir(&a.dir) {
        eprintln!("iogauge check: {e}");
        return EXIT_USAGE;
    }
    let fs = memory_backed(&a.dir);
    for (p, work, _) in &plan {
        eprintln!("{}", plan_line(p, work, &a.dir));
    }
    let stop = match super::stop_on_signals() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("iogauge check: cannot install signal handlers: {e}");
            return EXIT_ERROR;
        }
    };
    let mut outcomes = Vec::new();
    // A profile that cannot run does not throw away the others' results.
    let mut failed_runs = 0;
    for (p, work, shortened) in plan {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let measured = match &work {
            Work::Job(job) => run_job((**job).clone(), a.keep_files, &stop).map(Measured::Fio),
            Work::SmallFiles(s) => run_small_files(&a.dir, s.files, s.size, a.keep_files, &stop)
                .map(Measured::SmallFiles),
        };
        match measured {
            Ok(r) => outcomes.push(evaluate(p, &work, r, shortened, fs)),
            Err(e) => {
                eprintln!("iogauge check: {}: {e}", p.name);
                failed_runs += 1;
            }
        }
    }
    let worst = outcomes
        .iter()
        .map(|o| o.verdict)
        .max()
        .unwrap_or(OutcomeKind::Pass);
    if a.json {
        let doc = json!({
            "iogauge": env!("CARGO_PKG_VERSION"),
            "dir": a.dir.display().to_string(),
            "profiles": outcomes.iter().map(|o| {
                let first = o.metrics.first().cloned().unwrap_or(Value::Null);
                json!({
                    "profile": o.profile.name,
                    "title": o.profile.title,
                    "verdict": kind_name(o.verdict),
                    "metric": first["metric"],
                    "value": first["value"],
                    "unit": first["unit"],
                    "threshold": first["threshold"],
                    "source": first["source"],
                    "references": first["references"],
                    "metrics": o.metrics,
                    "shortened": o.shortened,
                    "warnings": o.warnings,
                    "report": match &o.report {
                        Measured::Fio(r) => serde_json::from_str::<Value>(&render_json(r, false)).unwrap_or(Value::Null),
                        Measured::SmallFiles(s) => s.to_json(),
                    },
                })
            }).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        // SAFETY: isatty only inspects the descriptor.
        let color = unsafe { libc::isatty(1) == 1 };
        for o in &outcomes {
            let (word, code) = match o.verdict {
                OutcomeKind::Pass => ("PASS", "32"),
                OutcomeKind::Warn => ("WARN", "33"),
                OutcomeKind::Fail => ("FAIL", "31"),
            };
            let word = if color {
                format!("\x1b[1;{code}m{word}\x1b[0m")
            } else {
                word.to_string()
            };
            println!("{word} {}: {}", o.profile.name, o.profile.title);
            for l in &o.text {
                println!("{l}");
            }
            for w in &o.warnings {
                println!("  warning: {w}");
            }
            println!();
        }
    }
    if stop.load(Ordering::Relaxed) || failed_runs > 0 {
        return EXIT_ERROR;
    }
    exit_code(worst, a.strict)
}

/// 0 pass, 3 a fail, 4 the worst was a warning; `--strict` makes a warning a failure.
fn exit_code(worst: OutcomeKind, strict: bool) -> i32 {
    match worst {
        OutcomeKind::Fail => EXIT_FAIL,
        OutcomeKind::Warn if strict => EXIT_FAIL,
        OutcomeKind::Warn => EXIT_WARN,
        OutcomeKind::Pass => EXIT_OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let a = |v: &[&str]| parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let x = a(&[
            "etcd",
            "--dir",
            "/d",
            "--scale=0.5",
            "--duration",
            "10s",
            "--size",
            "64Mi",
            "--format",
            "json",
            "--strict",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(x.profiles, vec!["etcd".to_string()]);
        assert_eq!(x.dir, PathBuf::from("/d"));
        assert_eq!(x.tuning.scale, 0.5);
        assert_eq!(x.tuning.duration, Some(std::time::Duration::from_secs(10)));
        assert_eq!(x.tuning.size, Some(64 << 20));
        assert!(x.json && x.strict);
        assert_eq!(
            a(&[]).unwrap().unwrap().profiles,
            DEFAULT_SUITE.map(String::from).to_vec()
        );
        assert_eq!(
            a(&["--scale", "2"]).err().unwrap(),
            "--scale 2: expected a number above 0 and at most 1, e.g. 0.1"
        );
        assert_eq!(
            a(&["--bogus"]).err().unwrap(),
            "unknown option '--bogus'; run 'iogauge check --help'"
        );
        assert!(a(&["--help"]).unwrap().is_none());
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(OutcomeKind::Pass, false), 0);
        assert_eq!(exit_code(OutcomeKind::Pass, true), 0);
        assert_eq!(exit_code(OutcomeKind::Warn, false), 4);
        assert_eq!(exit_code(OutcomeKind::Warn, true), 3);
        assert_eq!(exit_code(OutcomeKind::Fail, false), 3);
    }

    #[test]
    fn unwritable_and_missing_directories_are_refused() {
        assert_eq!(
            check_dir(Path::new("/nonexistent/x")).unwrap_err(),
            "directory '/nonexistent/x' does not exist; create it or choose another with --dir"
        );
        assert!(check_dir(Path::new("/proc"))
            .unwrap_err()
            .starts_with("directory '/proc' is not writable ("));
        let d = tempfile::tempdir().unwrap();
        check_dir(d.path()).unwrap();
        assert_eq!(memory_backed(Path::new("/dev/shm")), Some("tmpfs (memory)"));
    }
}
