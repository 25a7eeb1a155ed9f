//! Translator from fio's command line and job files to a [`RunSpec`]. Options apply in the order
//! fio applies them: command-line globals, then each job file's `[global]` sections as they come,
//! then the job's own options.

#[cfg(test)]
mod catalog;
mod cmdline;
mod debug;
mod debug_types;
mod help;
mod jobfile;
mod known;
mod options;
mod unsupported;

use crate::model::{IoEngine, JobSpec, RunSpec, SizeSpec};
use std::fmt;
use std::io::Read;
use std::path::PathBuf;

/// Where an option was written, for error messages and fio's JSON option objects.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Origin {
    CommandLine,
    /// The path is shared by every entry of one file (a line's entry costs no copy of it).
    File {
        path: std::sync::Arc<str>,
        line: usize,
    },
}

/// One `key[=value]` as the user wrote it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub key: String,
    pub value: Option<String>,
    pub origin: Origin,
}

impl fmt::Display for Entry {
    /// `--bs=4x` or `fio.job:3: bs=4x`, the way the user wrote it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::CommandLine => write!(f, "--{}", self.key)?,
            Origin::File { path, line } => write!(f, "{path}:{line}: {}", self.key)?,
        }
        match &self.value {
            Some(v) => write!(f, "={v}"),
            None => Ok(()),
        }
    }
}

/// What `iogauge fio …` was asked to do.
#[derive(Debug)]
pub(crate) enum FioCommand {
    Run(RunSpec, FioOutput),
    Version,
    Help(String),
    /// `--inflate-log=FILE`: print the compressed log's entries (fio ignores any job then).
    Inflate(std::path::PathBuf),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    Normal,
    Json,
    JsonPlus,
    Terse,
    /// iogauge's own: the JSON document and the text output together, as checksummed frames
    /// (an `iogauge kube fio` pod's result, read back from its log).
    KubeFrames,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eta {
    Auto,
    Always,
    Never,
}

/// How `iogauge fio` prints and what it says first; the run itself never needs these.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FioOutput {
    pub formats: Vec<OutputFormat>,
    /// `--output`: a file instead of stdout.
    pub path: Option<PathBuf>,
    pub eta: Eta,
    /// `--parse-only`: check the jobs, run nothing.
    pub parse_only: bool,
    /// `--report`: also write iogauge's HTML page of the run here.
    pub report: Option<PathBuf>,
    /// `--json-intervals`: json/json+ output with iogauge's per-interval data (series and
    /// latency histograms per interval); without it, fio's document and a small `iogauge` part.
    pub json_intervals: bool,
    /// Options accepted that have no effect here, to be said on stderr before the run.
    pub warnings: Vec<String>,
    /// The job files named, as given (what the history calls the run's target).
    pub job_files: Vec<String>,
    /// `--status-interval`: print the results so far this often while the run goes.
    pub status_interval: Option<std::time::Duration>,
}

/// A usage error: the message names the input and what was expected (exit code 2).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FioError(pub String);

impl fmt::Display for FioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FioError {}

/// The longest option name looked at: fio's longest is under 40 bytes.
const MAX_OPTION_NAME: usize = 64;

/// The most options all jobs of a run apply together, the globals once per job: 4096 jobs of
/// 64 options, far beyond real job files (a dozen or two each), a fraction of a second.
const MAX_APPLIED: usize = 1 << 18;

/// fio's limit on jobs in one run (FIO_MAX_JOBS), numjobs copies counted.
pub(crate) const MAX_JOBS: u64 = 4096;

/// Applies one option to `job`, refusing options fio has but iogauge does not, and naming the
/// closest known option for a typo.
/// `lenient`: values are read as fio 3.33 reads them where iogauge's grammar is stricter (for
/// `iogauge fio`'s own input; profiles and specs stay strict).
fn apply(job: &mut JobSpec, e: &Entry, lenient: bool) -> Result<(), FioError> {
    if let Some(opt) = options::find(&e.key) {
        if lenient {
            debug::option(opt.name, e.value.as_deref());
        }
        let kb = job.reporting.kb_base;
        let mut set =
            || crate::model::units::with_kb_base(kb, || opt.apply(job, e.value.as_deref()));
        let (r, notes) = if lenient {
            crate::model::lenient::fio_lenient(set)
        } else {
            (set(), Vec::new())
        };
        let ignored = options::profile_opts::NAMES.contains(&opt.name).then(|| {
            "an option of fio's built-in tiobench/act profiles, which does nothing in a plain \
                 job: ignored, as fio 3.33 ignores it"
                .to_string()
        });
        // Notes only for `iogauge fio`'s own input, which hands them to its results.
        if r.is_ok() && lenient {
            PARSE_NOTES.with(|n| {
                let mut n = n.borrow_mut();
                for note in notes.into_iter().chain(ignored) {
                    // One note per value, not per direction it was applied to.
                    let note = format!("{e}: {note}");
                    if !n.contains(&note) {
                        n.push(note);
                    }
                }
            });
        }
        return r.map_err(|msg| FioError(format!("{e}: {msg}")));
    }
    let at = match &e.origin {
        Origin::CommandLine => String::new(),
        Origin::File { path, line } => format!("{path}:{line}: "),
    };
    let key = &e.key;
    if key.len() > MAX_OPTION_NAME {
        // Long before any "did you mean": a megabyte of name would take a minute to compare.
        return Err(FioError(format!(
            "{at}unknown option '{}': longer than {MAX_OPTION_NAME} bytes, and fio's option \
             names are short; run 'iogauge fio --help' for the options iogauge supports",
            crate::input::shorten(key)
        )));
    }
    Err(FioError(if known::is_fio_option(key) {
        format!("{at}{}", unsupported::option_refusal(key))
    } else if let Some(near) = known::closest(key) {
        format!("{at}unknown option '{key}'; did you mean '{near}'?")
    } else {
        format!(
            "{at}unknown option '{key}'; run 'iogauge fio --help' for the options iogauge supports"
        )
    }))
}

thread_local! {
    /// Values read the way fio reads them where iogauge's grammar is stricter (`65536)`), noted
    /// while one command line is parsed and handed to its output's notes.
    static PARSE_NOTES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Options as written, under their canonical names (fio's JSON says `rw` for `readwrite`).
fn as_written(entries: &[Entry]) -> impl Iterator<Item = (String, String)> + '_ {
    entries.iter().map(|e| {
        let key = options::find(&e.key).map_or(e.key.as_str(), |o| o.name);
        (key.to_string(), e.value.clone().unwrap_or_default())
    })
}

/// Options in the order fio applies them. The command line applies each as it comes; a job
/// file's section is sorted by fio's option priority first, which puts `kb_base` and
/// `unit_base` (priority 1) before the sizes of the same section whatever the order written.
/// Sections are told apart by file (iogauge keeps a file's `[global]` sections together, so two
/// `[global]` sections of one file count as one here).
fn fio_order(entries: &[Entry]) -> impl Iterator<Item = &Entry> + '_ {
    let first =
        |e: &Entry| matches!(e.origin, Origin::File { .. }) && PRIO_FIRST.contains(&e.key.as_str());
    let mut order: Vec<&Entry> = Vec::with_capacity(entries.len());
    let mut start = 0;
    while start < entries.len() {
        let file = |e: &Entry| match &e.origin {
            Origin::File { path, .. } => Some(path.clone()),
            Origin::CommandLine => None,
        };
        let key = file(&entries[start]);
        let end = entries[start..]
            .iter()
            .position(|e| file(e) != key)
            .map_or(entries.len(), |n| start + n);
        let run = &entries[start..end];
        order.extend(run.iter().filter(|e| first(e)));
        order.extend(run.iter().filter(|e| !first(e)));
        start = end;
    }
    order.into_iter()
}

/// Options fio sorts before the rest of a job file section (`prio = 1` in fio's table).
const PRIO_FIRST: [&str; 2] = ["kb_base", "unit_base"];

/// Builds one job: defaults, the globals in force, then its own options.
fn build_job(globals: &[Entry], own: &[Entry], section: Option<&str>) -> Result<JobSpec, FioError> {
    let mut job = JobSpec {
        name: section.unwrap_or_default().to_string(),
        ..JobSpec::default()
    };
    // The globals were traced for --debug=parse when first applied.
    debug::muted(|| fio_order(globals).try_for_each(|e| apply(&mut job, e, true)))?;
    for e in fio_order(own) {
        apply(&mut job, e, true)?;
    }
    if job.name.is_empty() {
        return Err(FioError(
            "--name= needs a job name, e.g. --name=test".into(),
        ));
    }
    if job.name.len() > jobfile::MAX_JOB_NAME {
        return Err(FioError(format!(
            "job name '{}' is longer than {} bytes, the most fio reads (it also names the \
             job's files); use a shorter name",
            crate::input::shorten(&job.name),
            jobfile::MAX_JOB_NAME
        )));
    }
    // Only where the name makes the file names (no filename=, a filename_format with $jobname).
    let named_by_job = |j: &JobSpec| {
        j.files.file_name(&j.name, 0, 0) != j.files.file_name(&j.name.replace('/', "_"), 0, 0)
    };
    if job.name.contains('/') && job.filename.is_none() && named_by_job(&job) {
        return Err(FioError(format!(
            "job '{}': the job name names the job's files ({}), so a '/' in it would put them \
             in another directory; use a name without '/', or set filename=",
            job.name,
            job.files.file_name(&job.name, 0, 0)
        )));
    }
    job.options = as_written(own).collect();
    settle(&mut job, |k| globals.iter().chain(own).any(|e| e.key == k)).map_err(FioError)?;
    job.check().map_err(FioError)?;
    Ok(job)
}

/// fio's fix-ups once all of a job's options are in (init.c's fixup_options): the values some
/// options imply for others. For every front end that applies fio options (`written`: whether
/// an option was given); the checks that follow are [`JobSpec::check`]'s.
pub(crate) fn settle(job: &mut JobSpec, written: impl Fn(&str) -> bool) -> Result<(), String> {
    options::logs::settle(job, written);
    options::stats::settle(job);
    options::timing::settle(job);
    options::files::settle(job)?;
    options::engines::settle(job);
    Ok(())
}

/// Things fio accepts silently that change nothing here; said on stderr so that nothing is
/// silently ignored.
fn warnings(job: &JobSpec) -> Vec<String> {
    let mut w = Vec::new();
    // (Under io_submit_mode=offload, iodepth is the number of submitting threads.)
    let offload = job.io.submit_mode == crate::model::io::SubmitMode::Offload;
    if job.iodepth > 1 && !job.ioengine.is_async() && !offload {
        w.push(format!(
            "job '{}': iodepth={} has no effect with the synchronous engine '{}' (one I/O at a time)",
            job.name,
            job.iodepth,
            job.ioengine.fio_name()
        ));
    }
    if job.ioengine == IoEngine::Null && (job.direct || job.fsync > 0 || job.fdatasync > 0) {
        w.push(format!(
            "job '{}': ioengine=null does no I/O, so direct, fsync and fdatasync have no effect",
            job.name
        ));
    }
    if job.logs.store_compressed && job.logs.hist.is_some() {
        w.push(format!(
            "job '{}': log_store_compressed: the histogram log is written as text \
             (_clat_hist.N.log), since fio 3.33 stores memory addresses in place of its bins",
            job.name
        ));
    }
    w
}

/// Applies one fio option (`key`, value or None for a flag) to `job`, with the same checks and
/// messages as the command line; for translators that describe workloads in fio's terms.
pub(crate) fn apply_option(
    job: &mut JobSpec,
    key: &str,
    value: Option<&str>,
) -> Result<(), FioError> {
    let e = Entry {
        key: key.to_string(),
        value: value.map(str::to_string),
        origin: Origin::CommandLine,
    };
    apply(job, &e, false)
}

/// The canonical name of the supported fio option `key`, which may be an alias (`fill_fs` is
/// `fill_device`); None when iogauge does not support it.
pub(crate) fn canonical_option(key: &str) -> Option<&'static str> {
    options::find(key).map(|o| o.name)
}

/// fio's "maximum number of jobs (4096) reached", checked as the jobs are built so that a run
/// of a million jobs is refused before the millionth is.
fn too_many_jobs(n: u64) -> Result<(), FioError> {
    if n > MAX_JOBS {
        return Err(FioError(format!(
            "maximum number of jobs ({MAX_JOBS}) reached: the jobs ask for {n} in all (numjobs \
             copies counted), more than fio runs; lower numjobs or split the run"
        )));
    }
    Ok(())
}

/// Parses `iogauge fio` arguments. `env` looks up `${NAME}` in job files; `stdin` feeds job file `-`.
pub(crate) fn parse_fio_args(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    stdin: &mut dyn Read,
) -> Result<FioCommand, FioError> {
    PARSE_NOTES.with(|n| n.borrow_mut().clear());
    debug::reset();
    let c = cmdline::parse(args).map_err(FioError)?;
    if c.version {
        return Ok(FioCommand::Version);
    }
    if c.help {
        return Ok(FioCommand::Help(help::usage()));
    }
    if let Some(f) = c.inflate_log {
        return Ok(FioCommand::Inflate(f.into()));
    }
    if let Some(topic) = &c.cmdhelp {
        return help::cmdhelp(topic).map(FioCommand::Help).map_err(FioError);
    }
    match c.debug.as_deref() {
        Some(d) if debug::is_help(d) => return Ok(FioCommand::Help(debug::help())),
        Some(d) => debug::enable(d).map_err(FioError)?,
        None => {}
    }

    // Check every global now, even if no job uses it, so a typo never passes unnoticed.
    let mut scratch = JobSpec::default();
    for e in &c.globals {
        apply(&mut scratch, e, true)?;
    }
    let mut spec = RunSpec {
        global_options: as_written(&c.globals).collect(),
        ..RunSpec::default()
    };
    // Every job applies the globals in force again: bounded, so that a [global] section of
    // 200000 options before 4096 jobs is refused instead of applying 800 million options.
    let mut applied = 0usize;
    let mut apply_more = |globals: usize, own: usize| -> Result<(), FioError> {
        applied = applied.saturating_add(globals + own);
        if applied > MAX_APPLIED {
            return Err(FioError(format!(
                "the jobs apply more than {MAX_APPLIED} options in all (each job its own and the \
                 [global] ones in force); put fewer options in [global] or define fewer jobs"
            )));
        }
        Ok(())
    };
    for (i, own) in c.jobs.iter().enumerate() {
        // --debug=parse: fio copies the defaults for each --name (and frees the job before).
        if i > 0 {
            debug::text("free options");
        }
        debug::text("dup options");
        apply_more(c.globals.len(), own.len())?;
        spec.jobs.push(build_job(&c.globals, own, None)?);
    }
    let mut sections_seen = vec![false; c.sections.len()];
    let mut budget = jobfile::Budget::default();
    let mut jobs_in_all: u64 = spec.jobs.iter().map(|j| u64::from(j.numjobs.max(1))).sum();
    too_many_jobs(jobs_in_all)?;
    for path in &c.job_files {
        let mut globals = c.globals.clone();
        let sections = jobfile::parse(path, env, stdin, &mut budget).map_err(FioError)?;
        debug::text(&format!("Parsing ini file {path}"));
        // --debug=parse: fio applies a section's options when it reads the next header (or the
        // end of the file), so each header is traced before the section above it is applied.
        let mut pending: Option<jobfile::Section> = None;
        for next in sections.into_iter().map(Some).chain([None]) {
            if let Some(n) = &next {
                debug::text(&format!("[{}]", n.name));
            }
            if let Some(s) = pending.take() {
                if s.name == "global" {
                    for e in &s.entries {
                        apply(&mut scratch, e, true)?;
                    }
                    spec.global_options.extend(as_written(&s.entries));
                    globals.extend(s.entries);
                } else if c.sections.is_empty() || c.sections.contains(&s.name) {
                    if let Some(i) = c.sections.iter().position(|n| *n == s.name) {
                        sections_seen[i] = true;
                    }
                    apply_more(globals.len(), s.entries.len())?;
                    let job = build_job(&globals, &s.entries, Some(&s.name))?;
                    jobs_in_all += u64::from(job.numjobs.max(1));
                    too_many_jobs(jobs_in_all)?;
                    spec.jobs.push(job);
                    if next.is_some() {
                        debug::text("free options");
                    }
                }
                if let Some(n) = &next {
                    debug::text(&format!("[{}]", n.name));
                }
            }
            if let Some(n) = &next {
                debug::section(
                    &n.name,
                    n.entries.iter().map(|e| (&*e.key, e.value.as_deref())),
                );
            }
            pending = next;
        }
    }
    if let Some(i) = sections_seen.iter().position(|seen| !seen) {
        return Err(FioError(format!(
            "--section={}: no such section in the job files",
            c.sections[i]
        )));
    }
    // fio --parse-only without a job reads the options and exits 0 (t/steadystate_tests.py).
    if spec.jobs.is_empty() && !c.parse_only {
        return Err(FioError(
            "no jobs defined: give a job file or start a job with --name=NAME (options before the \
             first --name apply to every job)"
                .into(),
        ));
    }
    if c.parse_only {
        // What fio frees as it exits: its defaults, the command line's, and the last job's.
        for _ in 0..2 + usize::from(!spec.jobs.is_empty()) {
            debug::text("free options");
        }
    }
    // It changes the printed JSON only: with no JSON asked for it would do nothing, silently.
    if c.json_intervals
        && !c
            .output_formats
            .iter()
            .any(|f| matches!(f, OutputFormat::Json | OutputFormat::JsonPlus))
    {
        return Err(FioError(
            "--json-intervals adds iogauge's per-interval data to the JSON output, and no JSON \
             was asked for; add --output-format=json (or json+), or drop --json-intervals"
                .into(),
        ));
    }
    cap_jobs(&mut spec, c.max_size, c.max_runtime);
    let output = FioOutput {
        warnings: PARSE_NOTES
            .with(|n| std::mem::take(&mut *n.borrow_mut()))
            .into_iter()
            .chain(spec.jobs.iter().flat_map(warnings))
            .collect(),
        formats: if c.output_formats.is_empty() {
            vec![OutputFormat::Normal]
        } else {
            c.output_formats
        },
        path: c.output.map(Into::into),
        eta: c.eta.unwrap_or(Eta::Auto),
        parse_only: c.parse_only,
        report: c.report.map(Into::into),
        json_intervals: c.json_intervals,
        job_files: c.job_files.clone(),
        status_interval: c.status_interval,
    };
    spec.keep_files = c.keep_files;
    spec.allow_overwrite = c.allow_overwrite;
    spec.readonly = c.readonly;
    // Between the jobs (wait_for, --readonly); each job's own checks ran as it was built.
    spec.check_between_jobs().map_err(FioError)?;
    Ok(FioCommand::Run(spec, output))
}

/// A note for the run's output (its JSON's iogauge notes, the text's "iogauge notes").
fn note(text: String) {
    PARSE_NOTES.with(|n| n.borrow_mut().push(text));
}

/// `--iogauge-max-size`/`--iogauge-max-runtime`: iogauge's own caps, which shrink a job file's
/// run without editing it (as `check --scale` does a profile's); each cap applied is noted.
fn cap_jobs(spec: &mut RunSpec, max_size: Option<u64>, max_runtime: Option<std::time::Duration>) {
    for j in &mut spec.jobs {
        if let Some(cap) = max_size {
            for (key, s) in [("size", &mut j.size), ("filesize", &mut j.filesize)] {
                if let Some(SizeSpec::Bytes(b)) = s {
                    if *b > cap {
                        note(format!(
                            "job '{}': {key} {b} capped to {cap} bytes by --iogauge-max-size",
                            j.name
                        ));
                        *b = cap;
                    }
                }
            }
        }
        if let Some(cap) = max_runtime {
            if j.runtime.is_some_and(|r| r > cap) {
                note(format!(
                    "job '{}': runtime capped to {cap:?} by --iogauge-max-runtime",
                    j.name
                ));
                j.runtime = Some(cap);
            }
            j.ramp_time = j.ramp_time.min(cap);
        }
    }
}

#[cfg(test)]
mod tests;
