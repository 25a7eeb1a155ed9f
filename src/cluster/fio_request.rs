//! `iogauge kube fio`: the user's fio job files and options, checked here as `iogauge fio` would
//! check them (a bad job is exit 2 before anything is created), the job files shipped in the
//! run's ConfigMap, and the pod's command line. The pod's working directory is the volume
//! (`workingDir: /data`), so a job's relative `directory`/`filename` land in it; an absolute one
//! would land in the pod's read-only root filesystem or outside the volume, and is refused.

use super::configmap::PodFiles;
use super::pod_document::{value, Words};
use crate::input::fio::{parse_fio_args, FioCommand};
use crate::model::{JobSpec, RunSpec, SizeSpec};
use crate::report::frames::{FramesError, FIO_RESULT};
use serde_json::Value;

/// What of a pod's log goes into a message at most, in characters.
const TAIL_CHARS: usize = 500;

/// The most a job file may hold (a ConfigMap holds 1 MiB in all).
const MAX_JOB_FILE: u64 = 1 << 20;

/// Program flags the pod sets itself: the result goes back through the pod's log.
const POD_FLAGS: [&str; 5] = [
    "output",
    "output-format",
    "report",
    "minimal",
    "status-interval",
];

/// What each pod runs, and what its claim must hold.
#[derive(Debug, Clone)]
pub(crate) struct FioJob {
    /// The arguments after `iogauge fio`: the options as given, then the job files at their
    /// paths in the pod, then iogauge's own flags.
    pub args: Vec<String>,
    /// The bytes the jobs' files take at most, all at once: what a fresh claim must hold.
    pub footprint: u64,
    /// The jobs as checked, for the time estimate (budget.rs fio_time).
    pub specs: Vec<JobSpec>,
}

/// Where the pod's volume is mounted, and its working directory (request.rs MOUNT_PATH, which
/// a test keeps equal).
const MOUNT_PATH: &str = "/data";

/// Reads and checks the job files and options. `files` receives the job files. `block`: the
/// claims would be raw devices (`--volume-mode Block`).
pub(crate) fn fio_job(
    job_files: &[String],
    options: &[String],
    block: bool,
    files: &mut PodFiles,
) -> Result<FioJob, String> {
    if block {
        return Err(
            "--volume-mode Block: kube fio runs jobs on a filesystem claim; leave \
                    --volume-mode out"
                .into(),
        );
    }
    if job_files.is_empty() && options.is_empty() {
        return Err(
            "no job: name a job file (kube fio JOBFILE …) or give fio's options after \
                    '--', e.g. kube fio --storage-class standard -- --name=w --rw=write --size=1g"
                .into(),
        );
    }
    for o in options {
        let key = o.trim_start_matches('-').split('=').next().unwrap_or("");
        if o.starts_with('-') && POD_FLAGS.contains(&key) {
            return Err(format!(
                "'{o}': the pod's output is iogauge's to choose (it comes back through the pod's \
                 log); use kube fio's --format and --report instead"
            ));
        }
    }
    for o in options {
        not_in_the_pod("the command line", o)?;
    }
    let mut pod_paths = Vec::new();
    for f in job_files {
        let file =
            std::fs::File::open(f).map_err(|e| format!("cannot read job file '{f}': {e}"))?;
        let text = crate::input::read_capped(file, MAX_JOB_FILE, &format!("job file '{f}'"))?;
        for line in text.lines() {
            not_in_the_pod(&format!("job file '{f}'"), line.trim())?;
        }
        pod_paths.push(files.add(f, text)?);
    }
    let mut local: Vec<String> = options.to_vec();
    local.extend(job_files.iter().cloned());
    // The pod's fio sees none of this machine's environment: checked as it will run there.
    let env = |_: &str| None;
    let spec = match parse_fio_args(&local, &env, &mut std::io::empty()) {
        Ok(FioCommand::Run(spec, _)) => spec,
        Ok(_) => {
            return Err(
                "the options ask for no run (--version, --help, --cmdhelp or \
                        --inflate-log); give a job"
                    .into(),
            )
        }
        Err(e) => return Err(e.to_string()),
    };
    check_paths(&spec)?;
    let mut args: Vec<String> = options.to_vec();
    args.extend(pod_paths);
    args.extend(["--output-format=kube-frames", "--eta=never", "--no-history"].map(String::from));
    Ok(FioJob {
        args,
        footprint: footprint(&spec),
        specs: spec.jobs.clone(),
    })
}

/// Refuses what a job can only mean on this machine, before it is parsed here: environment
/// variables (fio expands `${VAR}` where it runs, and the pod has none of the user's), `include`
/// (only the job files named travel to the pod), `opendir` (read here, it would walk this
/// machine's directory) and `exec_prerun`/`exec_postrun` (the image has no programs to run).
fn not_in_the_pod(whence: &str, text: &str) -> Result<(), String> {
    if text.starts_with('#') || text.starts_with(';') {
        return Ok(());
    }
    let shown: String = text.chars().take(80).collect();
    if let Some(i) = text.find("${") {
        let var: String = text[i..].chars().take_while(|c| *c != '}').collect();
        return Err(format!(
            "{whence}: '{shown}': {var}}} is an environment variable, which fio expands where it \
             runs, and the pod has none of yours; write the value instead"
        ));
    }
    if text.starts_with("include ") {
        return Err(format!(
            "{whence}: '{shown}': only the job files named on the command line travel to the \
             pod; name the included file as a job file of its own, or paste it in"
        ));
    }
    let key = text
        .trim_start_matches('-')
        .split('=')
        .next()
        .unwrap_or("")
        .trim();
    if matches!(key, "opendir" | "exec_prerun" | "exec_postrun") {
        return Err(format!(
            "{whence}: '{shown}': {key} is not supported by kube fio (the pod's image has only \
             iogauge, and paths are the volume's); name the files with filename= or directory="
        ));
    }
    Ok(())
}

/// A path a job writes or reads, relative to the volume: neither absolute nor climbing out.
fn inside(job: &str, key: &str, path: &str) -> Result<(), String> {
    if path.starts_with('/') {
        return Err(absolute(job, key, path));
    }
    if path.split('/').any(|c| c == "..") {
        return Err(format!(
            "job '{job}': {key}={path} climbs out of the volume ('..'); paths in kube fio are \
             relative to the volume (the pod's working directory, {MOUNT_PATH}), e.g. {key}=fio"
        ));
    }
    Ok(())
}

/// Refuses what would not land on the volume: a raw device, or any path outside it.
fn check_paths(spec: &RunSpec) -> Result<(), String> {
    for j in &spec.jobs {
        let logs = &j.logs;
        for (key, path) in [
            ("filename_format", j.files.filename_format.as_deref()),
            ("write_iolog", logs.iolog.as_deref()),
            ("write_bw_log", logs.bw.as_deref()),
            ("write_lat_log", logs.lat.as_deref()),
            ("write_iops_log", logs.iops.as_deref()),
            ("write_hist_log", logs.hist.as_deref()),
        ] {
            if let Some(p) = path {
                inside(&j.name, key, p)?;
            }
        }
        if let Some(d) = j.directory.as_ref() {
            inside(&j.name, "directory", &d.to_string_lossy())?;
        }
        for name in j.filename.iter().flat_map(|f| f.split(':')) {
            if name.starts_with("/dev/") {
                return Err(format!(
                    "job '{}': filename={name} is a raw device, and the pod has a filesystem \
                     claim mounted at {MOUNT_PATH} (--volume-mode Filesystem); use a file name \
                     relative to the volume, e.g. filename=fio.data",
                    j.name
                ));
            }
            inside(&j.name, "filename", name)?;
        }
    }
    Ok(())
}

fn absolute(job: &str, key: &str, path: &str) -> String {
    format!(
        "job '{job}': {key}={path} is an absolute path: in the pod it would land in the \
         read-only root filesystem or outside the volume; paths in kube fio are relative to \
         the volume (the pod's working directory, {MOUNT_PATH}), e.g. {key}=fio"
    )
}

/// The bytes all jobs' files take together: each job's `size` (or `filesize` × `nrfiles`),
/// once per `numjobs` clone; a percentage of an existing file takes nothing new.
fn footprint(spec: &RunSpec) -> u64 {
    spec.jobs
        .iter()
        .map(job_bytes)
        .fold(0u64, u64::saturating_add)
}

fn job_bytes(j: &JobSpec) -> u64 {
    let bytes = |s: &Option<SizeSpec>| match s {
        Some(SizeSpec::Bytes(b)) => Some(*b),
        _ => None,
    };
    let one = bytes(&j.size)
        .or_else(|| bytes(&j.filesize).map(|f| f.saturating_mul(u64::from(j.nrfiles.max(1)))));
    one.unwrap_or(0).saturating_mul(u64::from(j.numjobs.max(1)))
}

/// The pod's result from its log: the fio document and the text output. Err: what went wrong,
/// or how the log ends (capped), so that a pod that failed before printing says why.
pub(crate) fn parse_fio_log(log: &str) -> Result<(Value, String), String> {
    let no_frames = |log: &str| -> Result<String, String> {
        if log.contains("unknown format 'kube-frames'") {
            return Err(
                "the image's iogauge is older than this one (its fio does not know \
                        --output-format=kube-frames); run the image of this iogauge version \
                        (--image)"
                    .into(),
            );
        }
        let tail: String = {
            let t = log.trim_end();
            let start = t
                .char_indices()
                .rev()
                .nth(TAIL_CHARS - 1)
                .map_or(0, |(i, _)| i);
            t[start..].to_string()
        };
        Err(if tail.is_empty() {
            "the pod's log is empty".into()
        } else {
            format!("the pod's log ends: {tail}")
        })
    };
    let damaged = |e: &FramesError| format!("the pod's result was damaged in its log: {e}");
    let bad = |e: serde_json::Error| format!("the pod's result does not parse: {e}");
    let words = Words {
        no_frames: &no_frames,
        damaged: &damaged,
        bad: &bad,
    };
    let mut v = value(log, &words)?;
    if v.get(FIO_RESULT).is_none() {
        return Err(
            "the pod's result is not a kube fio result (is --image this iogauge's?)".into(),
        );
    }
    let fio = v.get_mut("fio").map(Value::take).filter(Value::is_object);
    let out = v.get("text").and_then(Value::as_str).map(str::to_string);
    match (fio, out) {
        (Some(f), Some(t)) => Ok((f, t)),
        _ => Err("the pod's result has no fio document".into()),
    }
}

/// "2 job(s): seq-write 894 IOPS, …" for the progress line.
pub(crate) fn done_line(doc: &Value) -> String {
    let jobs = doc["jobs"].as_array().map_or(&[][..], Vec::as_slice);
    let each: Vec<String> = jobs
        .iter()
        .map(|j| {
            let iops = j["read"]["iops"].as_f64().unwrap_or(0.0)
                + j["write"]["iops"].as_f64().unwrap_or(0.0);
            format!("{} {iops:.0} IOPS", j["jobname"].as_str().unwrap_or("?"))
        })
        .collect();
    format!("{} job(s): {}", jobs.len(), each.join(", "))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn job(options: &[&str]) -> Result<FioJob, String> {
        let o: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        fio_job(&[], &o, false, &mut PodFiles::default())
    }

    #[test]
    fn the_mount_path_is_the_request_s() {
        assert_eq!(MOUNT_PATH, crate::cluster::request::MOUNT_PATH);
    }

    #[test]
    fn the_claim_need_counts_every_clone_and_file() {
        let j = job(&["--name=a", "--rw=write", "--size=10g", "--numjobs=2"]).unwrap();
        assert_eq!(j.footprint, 20 << 30);
        let j = job(&["--name=a", "--rw=write", "--filesize=1m", "--nrfiles=4"]).unwrap();
        assert_eq!(j.footprint, 4 << 20);
        assert_eq!(j.specs[0].name, "a");
        assert_eq!(
            j.args[4..],
            ["--output-format=kube-frames", "--eta=never", "--no-history"]
        );
    }

    #[test]
    fn absolute_paths_and_devices_are_refused_with_the_reason() {
        let e = job(&["--name=a", "--rw=write", "--size=1m", "--filename=/dev/sdb"]).unwrap_err();
        assert!(
            e.starts_with("job 'a': filename=/dev/sdb is a raw device"),
            "{e}"
        );
        let e = job(&["--name=a", "--rw=write", "--size=1m", "--directory=/tmp"]).unwrap_err();
        assert_eq!(
            e,
            "job 'a': directory=/tmp is an absolute path: in the pod it would land in the \
             read-only root filesystem or outside the volume; paths in kube fio are relative to \
             the volume (the pod's working directory, /data), e.g. directory=fio"
        );
        assert!(job(&["--name=a", "--rw=write", "--size=1m", "--output=x"])
            .unwrap_err()
            .starts_with("'--output=x': the pod's output is iogauge's"));
        assert!(job(&["--name=a", "--rw=wrte"]).is_err());
    }
}
