//! `iogauge preflight SPEC.yaml…`: runs troubleshoot `filesystemPerformance` collectors with
//! iogauge's engine, writes troubleshoot's result files, evaluates the analyzers, prints the
//! outcomes as troubleshoot's `preflight` does, and exits with its codes.

use super::{EXIT_ERROR, EXIT_FAIL, EXIT_OK, EXIT_USAGE, EXIT_WARN};
use crate::report::json::render_json;
use crate::report::troubleshoot::{FsPerfResults, Measure};
use crate::run::{run, RunOptions};
use crate::spec::troubleshoot::collector::SyncPolicy;
use crate::spec::troubleshoot::{load, FsPerfCollector, OutcomeKind, Preflight};
use crate::spec::RunSpec;
use crate::verdict::fsperf::{analyze, Verdict};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Runs troubleshoot.sh filesystemPerformance collectors and analyzers without fio.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Exit codes: 0 all passed, 1 error, 2 spec problem, 3 an outcome failed, 4 the worst was a warning.")]
pub struct PreflightArgs {
    /// troubleshoot specs (HostPreflight, Preflight, SupportBundle); '-' reads one from stdin
    #[arg(value_name = "SPEC.yaml", required = true)]
    specs: Vec<PathBuf>,
    /// Where result files go [default: a new preflight-<unix time> directory]
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// Evaluate the analyzers against results already in DIR (iogauge's or troubleshoot's),
    /// collecting nothing
    #[arg(long, value_name = "DIR")]
    analyze_only: Option<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Leave the benchmark files in place
    #[arg(long)]
    keep_files: bool,
    /// Accepted for troubleshoot compatibility; iogauge is never interactive
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "true")]
    interactive: Option<bool>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq)]
enum Format {
    #[value(alias = "text")]
    Human,
    Json,
    Yaml,
}

fn load_specs(paths: &[PathBuf]) -> Result<Preflight, String> {
    let mut p = Preflight::default();
    for path in paths {
        let stdin = path.as_os_str() == "-";
        let name = path.display().to_string();
        let text = if stdin {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("cannot read the spec from stdin: {e}"))?;
            s
        } else {
            std::fs::read_to_string(path).map_err(|e| format!("cannot read spec '{name}': {e}"))?
        };
        load(&text, if stdin { "<stdin>" } else { &name }, &mut p)?;
    }
    Ok(p)
}

fn results_dir(out: &Path) -> PathBuf {
    out.join("host-collectors").join("filesystemPerformance")
}

/// Runs one collector under its timeout. Ok(None): timed out (files removed).
fn collect(
    c: &FsPerfCollector,
    out: &Path,
    keep_files: bool,
    stop: &Arc<AtomicBool>,
) -> Result<Option<FsPerfResults>, String> {
    // Directories made for the test go again afterwards (if empty), whatever happens.
    let made = missing_ancestors(&c.directory);
    if !made.is_empty() {
        std::fs::create_dir_all(&c.directory)
            .map_err(|e| format!("cannot create directory '{}': {e}", c.directory.display()))?;
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&c.directory, std::fs::Permissions::from_mode(0o700));
    }
    let res = collect_in(c, out, keep_files, stop);
    for d in &made {
        let _ = std::fs::remove_dir(d);
    }
    res
}

/// `dir` and those of its parents that do not exist yet, deepest first.
fn missing_ancestors(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect()
}

fn collect_in(
    c: &FsPerfCollector,
    out: &Path,
    keep_files: bool,
    stop: &Arc<AtomicBool>,
) -> Result<Option<FsPerfResults>, String> {
    let spec = RunSpec {
        jobs: c.jobs(),
        keep_files,
        ..RunSpec::default()
    };
    // A result from an earlier run in the same directory must not stand in for this one.
    let dir = results_dir(out);
    for name in [
        format!("{}.json", c.collector_name),
        format!("{}.iogauge.json", c.collector_name),
    ] {
        let _ = std::fs::remove_file(dir.join(name));
    }
    // The run stops on a signal or when the timeout (setup, warmup and run) expires; the two
    // are told apart afterwards, and the signal flag is never touched by the timer.
    let run_stop = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (stop, run_stop, timed_out, done) = (
            stop.clone(),
            run_stop.clone(),
            timed_out.clone(),
            done.clone(),
        );
        let deadline = std::time::Instant::now() + c.timeout;
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let now = std::time::Instant::now();
                if stop.load(Ordering::Relaxed) {
                    run_stop.store(true, Ordering::Relaxed);
                } else if now >= deadline {
                    timed_out.store(true, Ordering::Relaxed);
                    run_stop.store(true, Ordering::Relaxed);
                }
                if run_stop.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep((deadline - now).min(Duration::from_millis(20)));
            }
        })
    };
    let res = run(&spec, &RunOptions::default(), &run_stop);
    done.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    if stop.load(Ordering::Relaxed) {
        return Err(format!("collector '{}': interrupted", c.collector_name));
    }
    let mut report = match res {
        // Whatever stage the timeout hit (layout, warmup, run), it is a timeout.
        _ if timed_out.load(Ordering::Relaxed) => return Ok(None),
        Ok(r) => r,
        Err(e) => return Err(format!("collector '{}': {e}", c.collector_name)),
    };
    let measure = match c.sync {
        SyncPolicy::None => Measure::Write,
        _ => Measure::Sync,
    };
    // Say what the numbers in <collectorName>.json are, in the full report beside it.
    report.notes.push(match c.sync {
        SyncPolicy::None => format!(
            "{}: neither sync nor datasync is set, so {}.json holds the latency of plain buffered \
             writes (no sync after them)",
            c.collector_name, c.collector_name
        ),
        policy => format!(
            "{}: {}.json holds the latency of the {} after each write (jobs[0].sync.lat_ns), as \
             troubleshoot's fio-based collector reads it; each write together with its {} is \
             jobs[0].sync.iogauge.write_and_sync_lat_ns, as troubleshoot's original collector timed it",
            c.collector_name,
            c.collector_name,
            if policy == SyncPolicy::Fsync { "fsync" } else { "fdatasync" },
            if policy == SyncPolicy::Fsync { "fsync" } else { "fdatasync" },
        ),
    });
    if c.sync == SyncPolicy::None {
        eprintln!(
            "iogauge preflight: note: collector '{}' sets neither sync nor datasync: its result is \
             plain write latency",
            c.collector_name
        );
    }
    let r = FsPerfResults::from_report(&report, measure)
        .ok_or_else(|| format!("collector '{}': no latency was measured", c.collector_name))?;
    // Show that the background load was real: what each kind achieved against its target.
    if let Some(b) = &c.background {
        for (word, target, d) in [("write", b.write_iops, 1), ("read", b.read_iops, 0)] {
            let got: f64 = report
                .jobs
                .iter()
                .filter(|j| j.name.starts_with(&format!("background-{word}-")))
                .map(|j| j.dirs[d].iops)
                .sum();
            eprintln!(
                "iogauge preflight: background {word}: {got:.1} IOPS achieved (target {target})"
            );
        }
    }
    let dir = results_dir(out);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create '{}': {e}", dir.display()))?;
    let write = |name: String, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write '{}': {e}", p.display()))
    };
    write(format!("{}.json", c.collector_name), r.to_json())?;
    write(
        format!("{}.iogauge.json", c.collector_name),
        render_json(&report, false),
    )?;
    Ok(Some(r))
}

/// Result files for `collector` in `out`: the host's own, then one per node subdirectory.
fn find_results(out: &Path, collector: &str) -> Vec<(Option<String>, PathBuf)> {
    let dir = results_dir(out);
    let file = format!("{collector}.json");
    let mut found = Vec::new();
    if dir.join(&file).is_file() {
        found.push((None, dir.join(&file)));
    }
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut nodes: Vec<(String, PathBuf)> = rd
            .filter_map(Result::ok)
            .filter(|e| e.path().join(&file).is_file())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.path().join(&file),
                )
            })
            .collect();
        nodes.sort();
        found.extend(nodes.into_iter().map(|(n, p)| (Some(n), p)));
    }
    found
}

/// troubleshoot's non-interactive `human` format.
fn print_human(name: &str, verdicts: &[Verdict]) {
    println!();
    for v in verdicts {
        let label = match v.kind {
            OutcomeKind::Pass => "PASS",
            OutcomeKind::Warn => "WARN:",
            OutcomeKind::Fail => "FAIL:",
        };
        println!("   --- {label} {}", v.title);
        println!("      --- {}", v.message);
        if v.strict {
            println!("      --- Strict: true");
        }
    }
    if verdicts.iter().any(|v| v.kind == OutcomeKind::Fail) {
        println!("--- FAIL   {name}\nFAILED");
    } else {
        println!("--- PASS   {name}\nPASS");
    }
}

/// An analyzer that could not decide fails, as in troubleshoot ("Analyzer Failed: …").
fn failed(title: &str, why: String, strict: bool) -> Verdict {
    Verdict {
        title: title.to_string(),
        kind: OutcomeKind::Fail,
        message: why,
        uri: None,
        strict,
    }
}

fn structured(verdicts: &[Verdict]) -> serde_json::Value {
    let group = |k: OutcomeKind| -> Vec<serde_json::Value> {
        verdicts
            .iter()
            .filter(|v| v.kind == k)
            .map(|v| {
                let mut o = serde_json::json!({"title": v.title, "message": v.message});
                if let Some(u) = &v.uri {
                    o["uri"] = u.clone().into();
                }
                if v.strict {
                    o["strict"] = true.into();
                }
                o
            })
            .collect()
    };
    let mut o = serde_json::Map::new();
    for (k, kind) in [
        ("pass", OutcomeKind::Pass),
        ("warn", OutcomeKind::Warn),
        ("fail", OutcomeKind::Fail),
    ] {
        let g = group(kind);
        if !g.is_empty() {
            o.insert(k.into(), g.into());
        }
    }
    o.into()
}

pub fn main(a: PreflightArgs, stop: &super::Stop) -> i32 {
    let p = match load_specs(&a.specs) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("iogauge preflight: {e}");
            return EXIT_USAGE;
        }
    };
    for n in &p.notices {
        eprintln!("iogauge preflight: note: {n}");
    }
    if !p.skipped.is_empty() {
        eprintln!(
            "iogauge preflight: skipped (iogauge runs filesystemPerformance only): {}",
            p.skipped.join(", ")
        );
    }
    // Collectors that produced no result, and why.
    let mut errors: Vec<(String, String)> = Vec::new();
    let out = match (&a.analyze_only, &a.output) {
        (Some(d), _) => d.clone(),
        (None, Some(d)) => d.clone(),
        (None, None) => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            PathBuf::from(format!("preflight-{secs}"))
        }
    };
    if a.analyze_only.is_none() {
        let mut wrote = false;
        for c in p.collectors.iter().filter(|c| !c.exclude) {
            eprintln!(
                "iogauge preflight: collecting {} in {}",
                c.collector_name,
                c.directory.display()
            );
            let why = match collect(c, &out, a.keep_files, stop.flag()) {
                Ok(Some(_)) => {
                    wrote = true;
                    None
                }
                Ok(None) => Some(format!(
                    "collector '{}' timed out after {:?}; its files were removed",
                    c.collector_name, c.timeout
                )),
                Err(e) => Some(e),
            };
            if let Some(why) = why {
                eprintln!("iogauge preflight: {why}");
                errors.push((c.collector_name.clone(), why));
            }
            if stop.is_set() {
                eprintln!("iogauge preflight: interrupted; removed the files iogauge created");
                return EXIT_ERROR;
            }
        }
        if wrote {
            eprintln!("iogauge preflight: results in {}", out.display());
        }
    }
    // Collectors only (troubleshoot's `collect`): the result files are the output; no verdict.
    if p.analyzers.iter().all(|x| x.exclude) && a.analyze_only.is_none() {
        return if errors.is_empty() {
            EXIT_OK
        } else {
            EXIT_ERROR
        };
    }
    let mut verdicts = Vec::new();
    for an in p.analyzers.iter().filter(|x| !x.exclude) {
        let found = find_results(&out, &an.collector_name);
        let runs: Vec<(String, Option<FsPerfResults>)> = if found.is_empty() {
            vec![(an.check_name.clone(), None)]
        } else {
            let mut v = Vec::new();
            for (node, path) in found {
                let title = match node {
                    Some(n) => format!("{} - Node {n}", an.check_name),
                    None => an.check_name.clone(),
                };
                match std::fs::read_to_string(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|t| FsPerfResults::from_json(&t))
                {
                    Ok(r) => v.push((title, Some(r))),
                    Err(e) => verdicts.push(failed(
                        &title,
                        format!("{}: {e}", path.display()),
                        an.strict,
                    )),
                }
            }
            v
        };
        let not_collected_first = an.outcomes.first().map(|o| &o.when)
            == Some(&crate::spec::troubleshoot::Condition::FileNotCollected);
        for (title, r) in runs {
            // A collector that failed here: its reason is the verdict, unless the spec says what
            // to do without a result.
            if let (None, false) = (&r, not_collected_first) {
                if let Some((_, why)) = errors.iter().find(|(n, _)| *n == an.collector_name) {
                    verdicts.push(failed(&title, why.clone(), an.strict));
                    continue;
                }
            }
            match analyze(an, r.as_ref(), &title) {
                Ok(Some(v)) => verdicts.push(v),
                Ok(None) => {}
                Err(e) => verdicts.push(failed(&title, format!("Analyzer Failed: {e}"), an.strict)),
            }
        }
    }
    let name = p.name.as_deref().unwrap_or("preflight");
    match a.format {
        Format::Human => print_human(name, &verdicts),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&structured(&verdicts)).unwrap_or_default()
        ),
        Format::Yaml => print!(
            "{}",
            yaml_serde::to_string(&structured(&verdicts)).unwrap_or_default()
        ),
    }
    match verdicts.iter().map(|v| v.kind).max() {
        Some(OutcomeKind::Fail) => EXIT_FAIL,
        Some(OutcomeKind::Warn) => EXIT_WARN,
        _ if !errors.is_empty() => EXIT_ERROR,
        _ => EXIT_OK,
    }
}
