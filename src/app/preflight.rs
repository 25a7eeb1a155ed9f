//! `iogauge preflight` from specs to outcomes: run each `filesystemPerformance` collector under
//! its timeout (a run-level deadline), write troubleshoot's result files and iogauge's full
//! report, evaluate the analyzers, and gather everything into a `PreflightDocument`. With
//! `--sequential`, a collector whose analyzers compare only percentiles and iops stops once
//! every condition's value is decided (issue 27).

use crate::app::error::Kind;
use crate::input::read_capped;
use crate::input::troubleshoot::collector::SyncPolicy;
use crate::input::troubleshoot::{load, FsPerfCollector, Preflight};
use crate::model::sequential::SequentialSpec;
use crate::model::RunSpec;
use crate::report::document::{
    CollectorOutcome, CollectorStatus, Context, PreflightDocument, SCHEMA_VERSION,
};
use crate::report::json::render_json;
use crate::report::sequential::SequentialRun;
use crate::report::troubleshoot::{results_dir, FsPerfResults, Measure};
use crate::run::stop::Stop;
use crate::run::{context, run, RunError, RunOptions};
use crate::verdict::fsperf::{analyze_all, Verdict};
use std::path::{Path, PathBuf};

/// What to run and where the results go.
#[derive(Debug, Clone)]
pub(crate) struct PreflightRequest {
    /// Where result files go; None: a new `preflight-<unix time>` directory.
    pub output: Option<PathBuf>,
    /// Evaluate the analyzers against results already here, collecting nothing.
    pub analyze_only: Option<PathBuf>,
    pub keep_files: bool,
    /// Whether result files are written and the analyzers evaluated here. An `iogauge kube
    /// preflight` pod does neither (its root filesystem is read-only, and the controller judges
    /// every node's results at once): its document carries the results.
    pub files: bool,
    /// Where the runs' warnings and notes go.
    pub diag: crate::diag::Diag,
    /// `--sequential`: stop each collector once its analyzers' conditions are decided.
    pub sequential: bool,
}

/// Everything the command line needs to print and to choose the exit code.
pub(crate) struct PreflightResult {
    pub document: PreflightDocument,
    /// Collectors that produced no result here, and why.
    pub errors: Vec<(String, String)>,
    /// Of those, `Run` if any failed while running (or timed out), else `BadInput` if their
    /// jobs were refused (the error `iogauge fio` gives the same job); None without errors.
    pub not_run: Option<Kind>,
    /// The output directory, when a result file was written there.
    pub wrote: Option<PathBuf>,
    /// Whether any analyzer is to be evaluated (a spec with collectors only has none).
    pub analyzed: bool,
    /// With `--sequential`, per outcome of the document: how the result it judged was reached.
    pub reached: Vec<Option<String>>,
}

/// What the caller shows while collectors run.
pub(crate) use crate::observer::Observer;

/// The most one spec file (or stdin) may hold: troubleshoot specs with every collector of a
/// support bundle are tens of kilobytes.
pub(crate) const MAX_SPEC_BYTES: u64 = 16 << 20;

/// Reads every document of every spec (`-` is stdin).
pub(crate) fn load_specs(paths: &[PathBuf]) -> Result<Preflight, String> {
    let mut p = Preflight::default();
    for path in paths {
        let stdin = path.as_os_str() == "-";
        let name = path.display().to_string();
        let text = if stdin {
            read_capped(std::io::stdin(), MAX_SPEC_BYTES, "the spec from stdin")?
        } else {
            let f =
                std::fs::File::open(path).map_err(|e| format!("cannot read spec '{name}': {e}"))?;
            read_capped(f, MAX_SPEC_BYTES, &format!("spec '{name}'"))?
        };
        load(&text, if stdin { "<stdin>" } else { &name }, &mut p)?;
    }
    Ok(p)
}

/// `--directory-map FROM=TO`: each collector whose directory is FROM or below it measures the
/// same place under TO instead, so that a spec written for a node runs unchanged where that
/// node's directory is mounted elsewhere (an `iogauge kube preflight` pod mounts each node
/// directory by hostPath). Returns a note per collector moved. Err: a map that moves no
/// collector (a misspelt FROM would otherwise measure the wrong disk in silence).
pub(crate) fn map_directories(
    p: &mut Preflight,
    maps: &[(PathBuf, PathBuf)],
) -> Result<Vec<String>, String> {
    let dirs: Vec<String> = p
        .collectors
        .iter()
        .filter(|c| !c.exclude)
        .map(|c| c.directory.display().to_string())
        .collect();
    let mut notes = Vec::new();
    let mut used = vec![false; maps.len()];
    for c in p.collectors.iter_mut().filter(|c| !c.exclude) {
        // The most specific map wins: /var/lib/etcd/wal may be a mount of its own.
        let best = maps
            .iter()
            .enumerate()
            .filter(|(_, (from, _))| c.directory.starts_with(from))
            .max_by_key(|(_, (from, _))| from.components().count());
        let Some((i, (from, to))) = best else {
            continue;
        };
        let rest = c.directory.strip_prefix(from).unwrap_or(Path::new(""));
        let moved = if rest.as_os_str().is_empty() {
            to.clone()
        } else {
            to.join(rest)
        };
        notes.push(format!(
            "collector '{}': directory {} is measured in {} (--directory-map)",
            c.collector_name,
            c.directory.display(),
            moved.display()
        ));
        c.directory = moved;
        used[i] = true;
    }
    if let Some(i) = used.iter().position(|u| !u) {
        let (from, to) = &maps[i];
        return Err(format!(
            "--directory-map {}={}: no collector's directory is {} or below it; the spec's \
             directories: {}",
            from.display(),
            to.display(),
            from.display(),
            if dirs.is_empty() {
                "none".to_string()
            } else {
                dirs.join(", ")
            }
        ));
    }
    Ok(notes)
}

/// The most one result file may hold for `--analyze-only` (troubleshoot's table is a few
/// hundred bytes, a fio JSON document some kilobytes).
const MAX_RESULT_BYTES: u64 = 16 << 20;

/// `--analyze-only`: the result files are the input, so each one an analyzer would read must be
/// a result (troubleshoot's table or fio's JSON), or the whole run is refused as bad input
/// (exit 2) naming the file and what is wrong, instead of a failed outcome.
pub(crate) fn check_results(p: &Preflight, dir: &Path) -> Result<(), String> {
    for an in p.analyzers.iter().filter(|x| !x.exclude) {
        for (_, path) in crate::report::troubleshoot::find_results(dir, &an.collector_name) {
            let what = format!("result file '{}'", path.display());
            let text = std::fs::File::open(&path)
                .map_err(|e| format!("cannot read {what}: {e}"))
                .and_then(|f| read_capped(f, MAX_RESULT_BYTES, &what))?;
            FsPerfResults::from_json(&text).map_err(|e| {
                format!(
                    "{what}: {e}; expected the result of collector '{}' (troubleshoot's \
                     latency table or fio's JSON output)",
                    an.collector_name
                )
            })?;
        }
    }
    Ok(())
}

/// Runs the collectors (unless analyze-only) and the analyzers.
pub(crate) fn preflight(
    req: &PreflightRequest,
    p: &Preflight,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> PreflightResult {
    let out = match (&req.analyze_only, &req.output) {
        (Some(d), _) | (None, Some(d)) => d.clone(),
        (None, None) => {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            PathBuf::from(format!("preflight-{secs}"))
        }
    };
    let mut errors = Vec::new();
    let mut not_run = None;
    let mut collectors = Vec::new();
    let mut wrote = None;
    if req.analyze_only.is_none() {
        for c in p.collectors.iter().filter(|c| !c.exclude) {
            if stop.is_set() {
                break;
            }
            obs.note(&format!(
                "iogauge preflight: collecting {} in {}",
                c.collector_name,
                c.directory.display()
            ));
            let watch = req.sequential.then(|| watch_of(c, p));
            if let Some(Err(why)) = &watch {
                obs.note(&format!(
                    "iogauge preflight: collector '{}' runs whole: {why}",
                    c.collector_name
                ));
            }
            let (res, where_) =
                collect(c, watch.clone().and_then(Result::ok), &out, req, stop, obs);
            let mut sequential = None;
            let (status, reason, results) = match res {
                Ok((r, seq)) => {
                    if req.files {
                        wrote = Some(out.clone());
                    }
                    sequential = seq;
                    (CollectorStatus::Collected, None, Some(r))
                }
                Err(Failure::TimedOut) => {
                    not_run = Some(Kind::Run);
                    (
                        CollectorStatus::TimedOut,
                        Some(format!(
                            "collector '{}' timed out after {:?}; its files were removed",
                            c.collector_name, c.timeout
                        )),
                        None,
                    )
                }
                Err(Failure::Refused(kind, e)) => {
                    // A failure while running outranks bad input: it is not the user's to fix.
                    if not_run != Some(Kind::Run) {
                        not_run = Some(kind);
                    }
                    (CollectorStatus::Failed, Some(e), None)
                }
                Err(Failure::Other(e)) => {
                    not_run = Some(Kind::Run);
                    (CollectorStatus::Failed, Some(e), None)
                }
            };
            if let Some(why) = &reason {
                obs.note(&format!("iogauge preflight: {why}"));
                errors.push((c.collector_name.clone(), why.clone()));
            }
            collectors.push(CollectorOutcome {
                name: c.collector_name.clone(),
                status,
                reason,
                context: where_,
                results: results.map(|r: FsPerfResults| {
                    r.pairs()
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect()
                }),
                sequential,
                ran_whole: watch.and_then(Result::err),
            });
        }
    }
    let analyzed = req.analyze_only.is_some() || p.analyzers.iter().any(|x| !x.exclude);
    let verdicts = if analyzed && req.files && !stop.is_set() {
        analyze_all(&p.analyzers, &out, &errors)
    } else {
        Vec::new()
    };
    let document = PreflightDocument {
        schema_version: SCHEMA_VERSION,
        iogauge: env!("CARGO_PKG_VERSION").to_string(),
        name: p.name.clone().unwrap_or_else(|| "preflight".into()),
        collectors,
        outcomes: verdicts.iter().map(Verdict::outcome).collect(),
    };
    let reached = verdicts
        .iter()
        .map(|v| {
            let c = document.collectors.iter().find(|c| c.name == v.collector)?;
            c.how_reached()
        })
        .collect();
    if let Some(dir) = &wrote {
        // The typed document beside troubleshoot's files; a failure to write it is only noted.
        let path = dir.join("preflight.iogauge.json");
        let text = serde_json::to_string_pretty(&document).unwrap_or_default() + "\n";
        // Complete or not at all, never through a symlink planted in the results directory.
        if let Err(e) = crate::output_file::write_file(&path, text.as_bytes()) {
            obs.note(&format!("iogauge preflight: warning: {e}"));
        }
    }
    PreflightResult {
        document,
        errors,
        not_run,
        wrote,
        analyzed,
        reached,
    }
}

/// `--sequential`: what collector `c`'s measuring job watches, from the `when` of every
/// analyzer that reads it; Err says why it runs whole instead.
fn watch_of(c: &FsPerfCollector, p: &Preflight) -> Result<SequentialSpec, String> {
    if c.background.is_some() {
        return Err("it runs background IOPS jobs, whose load is part of what it measures".into());
    }
    if !crate::app::check::watchable(&c.job()) {
        return Err("its job has options a sequential run cannot watch".into());
    }
    let readers: Vec<_> = p
        .analyzers
        .iter()
        .filter(|a| !a.exclude && a.collector_name == c.collector_name)
        .collect();
    if readers.is_empty() {
        return Err("no analyzer reads it (its result files are the output)".into());
    }
    let sync = match c.sync {
        SyncPolicy::Fsync => Some("fsync"),
        SyncPolicy::Fdatasync => Some("fdatasync"),
        SyncPolicy::None => None,
    };
    crate::verdict::sequential::spec_of_conditions(
        readers
            .iter()
            .flat_map(|a| a.outcomes.iter().map(|o| &o.when)),
        sync,
    )
}

enum Failure {
    TimedOut,
    /// The run produced no report, for a reason of this kind (its job refused: bad input).
    Refused(Kind, String),
    Other(String),
}

/// `dir` and those of its parents that do not exist yet, deepest first.
fn missing_ancestors(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect()
}

/// Runs one collector under its timeout and writes its result files; also says where it ran
/// (read while its directory exists).
fn collect(
    c: &FsPerfCollector,
    watch: Option<SequentialSpec>,
    out: &Path,
    req: &PreflightRequest,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> (Result<Collected, Failure>, Context) {
    // Directories made for the test go again afterwards (if empty), whatever happens.
    let made = missing_ancestors(&c.directory);
    if !made.is_empty() {
        if let Err(e) = std::fs::create_dir_all(&c.directory) {
            let why = format!("cannot create directory '{}': {e}", c.directory.display());
            return (Err(Failure::Other(why)), context::describe(None));
        }
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&c.directory, std::fs::Permissions::from_mode(0o700));
    }
    let where_ = context::describe(Some(&c.directory));
    let res = collect_in(c, watch, out, req, stop, obs);
    for d in &made {
        let _ = std::fs::remove_dir(d);
    }
    (res, where_)
}

/// A collector's result, and with `--sequential` how its run reached it.
type Collected = (FsPerfResults, Option<SequentialRun>);

fn collect_in(
    c: &FsPerfCollector,
    watch: Option<SequentialSpec>,
    out: &Path,
    req: &PreflightRequest,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> Result<Collected, Failure> {
    let name = &c.collector_name;
    let mut jobs = c.jobs();
    // The measuring job is the first; background jobs are never watched (see `watch_of`).
    jobs[0].timing.sequential = watch;
    let spec = RunSpec {
        jobs,
        keep_files: req.keep_files,
        ..RunSpec::default()
    };
    // A result from an earlier run in the same directory must not stand in for this one.
    let dir = results_dir(out);
    for file in req
        .files
        .then(|| [format!("{name}.json"), format!("{name}.iogauge.json")])
        .into_iter()
        .flatten()
    {
        let _ = std::fs::remove_file(dir.join(file));
    }
    // The timeout covers setup, warmup and run: whatever stage it hits, it is a timeout.
    let opts = RunOptions {
        deadline: Some(std::time::Instant::now() + c.timeout),
        diag: req.diag.clone(),
        ..RunOptions::default()
    };
    let res = run(&spec, &opts, stop.flag());
    if stop.is_set() {
        return Err(Failure::Other(format!("collector '{name}': interrupted")));
    }
    let mut report = match res {
        Ok(r) => r,
        Err(RunError::TimedOut) => return Err(Failure::TimedOut),
        Err(e) => {
            return Err(Failure::Refused(
                Kind::of_run(&e),
                format!("collector '{name}': {e}"),
            ))
        }
    };
    let measure = match c.sync {
        SyncPolicy::None => Measure::Write,
        _ => Measure::Sync,
    };
    // Say what the numbers in <collectorName>.json are, in the full report beside it.
    let op = if c.sync == SyncPolicy::Fsync {
        "fsync"
    } else {
        "fdatasync"
    };
    report.notes.push(match c.sync {
        SyncPolicy::None => format!(
            "{name}: neither sync nor datasync is set, so {name}.json holds the latency of plain \
             buffered writes (no sync after them)"
        ),
        _ => format!(
            "{name}: {name}.json holds the latency of the {op} after each write \
             (jobs[0].sync.lat_ns), as troubleshoot's fio-based collector reads it; each write \
             together with its {op} is jobs[0].sync.iogauge.write_and_sync_lat_ns, as \
             troubleshoot's original collector timed it"
        ),
    });
    let sequential = report.jobs.first().and_then(|j| j.sequential.clone());
    if let Some(s) = &sequential {
        // The result files then hold the numbers of a shorter run: the full report says so.
        let how = s.line(&crate::report::document::metric_label);
        report.notes.push(format!("{name}: --sequential: {how}"));
    }
    if c.sync == SyncPolicy::None {
        obs.note(&format!(
            "iogauge preflight: note: collector '{name}' sets neither sync nor datasync: its \
             result is plain write latency"
        ));
    }
    let r = FsPerfResults::from_report(&report, measure)
        .ok_or_else(|| Failure::Other(format!("collector '{name}': no latency was measured")))?;
    // Show that the background load was real: what each kind achieved against its target.
    if let Some(b) = &c.background {
        for (word, target, d) in [("write", b.write_iops, 1), ("read", b.read_iops, 0)] {
            let got: f64 = report
                .jobs
                .iter()
                .filter(|j| j.name.starts_with(&format!("background-{word}-")))
                .map(|j| j.dirs[d].iops)
                .sum();
            obs.note(&format!(
                "iogauge preflight: background {word}: {got:.1} IOPS achieved (target {target})"
            ));
        }
    }
    if !req.files {
        return Ok((r, sequential));
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Other(format!("cannot create '{}': {e}", dir.display())))?;
    let write = |file: String, text: String| {
        let p = dir.join(file);
        crate::output_file::write_file(&p, text.as_bytes())
            .map_err(|e| Failure::Other(e.to_string()))
    };
    write(format!("{name}.json"), r.to_json())?;
    write(format!("{name}.iogauge.json"), render_json(&report, false))?;
    Ok((r, sequential))
}

#[cfg(test)]
#[path = "preflight_tests.rs"]
mod tests;
