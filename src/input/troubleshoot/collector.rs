//! The `filesystemPerformance` collector: its parameters (docs/PREFLIGHT.md), checked at load
//! time, and the job that measures them.

use super::{check_keys, get_bool, get_str, show};
use crate::model::units::{parse_go_duration, parse_k8s_bytes};
use crate::model::{IoEngine, JobSpec, RwKind, RwMode, SizeSpec};
use std::path::PathBuf;
use std::time::Duration;
use yaml_serde::{Mapping, Value};

/// Sync policy after each write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncPolicy {
    /// `sync: true`: fsync (wins over datasync).
    Fsync,
    /// `datasync: true`: fdatasync.
    Fdatasync,
    /// Neither: plain buffered writes; the latency reported is then the write latency.
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Background {
    pub warmup: Duration,
    /// Total IOPS budget per kind, shared by its jobs (0: those jobs do nothing).
    pub write_iops: u64,
    pub read_iops: u64,
    pub write_jobs: u32,
    pub read_jobs: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FsPerfCollector {
    pub collector_name: String,
    pub exclude: bool,
    pub directory: PathBuf,
    pub file_size: u64,
    pub operation_size: u64,
    pub sync: SyncPolicy,
    /// None: no cap (runTime "0" or "").
    pub run_time: Option<Duration>,
    /// Covers setup, warmup and the run.
    pub timeout: Duration,
    pub background: Option<Background>,
}

pub(crate) const DEFAULT_NAME: &str = "filesystemPerformance";

/// Background jobs one collector may start (fio's 4096 jobs, less the measuring one).
const MAX_BACKGROUND_JOBS: u64 = 4095;

const KEYS: [&str; 16] = [
    "collectorName",
    "exclude",
    "directory",
    "fileSize",
    "operationSize",
    "operationSizeBytes",
    "sync",
    "datasync",
    "runTime",
    "timeout",
    "enableBackgroundIOPS",
    "backgroundIOPSWarmupSeconds",
    "backgroundWriteIOPS",
    "backgroundReadIOPS",
    "backgroundWriteIOPSJobs",
    "backgroundReadIOPSJobs",
];

fn get_u64(m: &Mapping, key: &str, at: &str) -> Result<Option<u64>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(Value::String(s)) if s.parse::<u64>().is_ok() => Ok(s.parse().ok()),
        Some(v) => Err(format!(
            "{at}.{key}: expected a whole number, found '{}'",
            show(v)
        )),
    }
}

/// `runTime`: seconds as a string ("120"), "0" or "" for no cap; a Go duration ("2m") is
/// accepted too (troubleshoot rejects it, which surprises users).
fn run_time(s: &str, at: &str) -> Result<Option<Duration>, String> {
    let s = s.trim();
    if s.is_empty() || s == "0" {
        return Ok(None);
    }
    let d = match s.parse::<u64>() {
        Ok(secs) => Duration::from_secs(secs),
        Err(_) => parse_go_duration(s).map_err(|_| {
            format!(
                "{at}.runTime: '{s}': expected seconds such as \"120\" or a duration such as 2m"
            )
        })?,
    };
    Ok((!d.is_zero()).then_some(d))
}

pub(crate) fn parse(
    m: &Mapping,
    at: &str,
    notices: &mut Vec<String>,
) -> Result<FsPerfCollector, String> {
    check_keys(m, &KEYS, at)?;
    let name = get_str(m, "collectorName", at)?.unwrap_or_else(|| DEFAULT_NAME.to_string());
    // It names the result files (<name>.iogauge.json): within a file name's 255 bytes.
    if name.is_empty() || name.contains('/') || name.len() > 200 {
        return Err(format!(
            "{at}.collectorName: '{}' must be a non-empty name without '/', at most 200 bytes",
            crate::input::shorten(&name)
        ));
    }
    let directory = get_str(m, "directory", at)?
        .filter(|d| !d.is_empty())
        .ok_or_else(|| {
            format!("{at}: 'directory' is required (where the benchmark creates its file)")
        })?;
    let file_size = match get_str(m, "fileSize", at)? {
        Some(q) => parse_k8s_bytes(&q).map_err(|e| format!("{at}.fileSize: '{q}': {e}"))?,
        None => 10 << 20,
    };
    let op = match (
        get_u64(m, "operationSize", at)?,
        get_u64(m, "operationSizeBytes", at)?,
    ) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "{at}: both operationSize and operationSizeBytes are set; keep operationSize"
            ))
        }
        (Some(v), None) => v,
        (None, Some(v)) => {
            notices.push(format!(
                "{at}: 'operationSizeBytes' is read as 'operationSize' ({v} bytes); troubleshoot \
                 itself ignores the misspelt key and writes 1024-byte operations"
            ));
            v
        }
        (None, None) => 1024,
    };
    if op == 0 || op > u32::MAX as u64 {
        return Err(format!(
            "{at}.operationSize: {op}: expected 1 byte to 4 GiB"
        ));
    }
    if file_size < op {
        return Err(format!(
            "{at}: fileSize ({file_size} bytes) is smaller than one operation ({op} bytes)"
        ));
    }
    let sync = match (get_bool(m, "sync", at)?, get_bool(m, "datasync", at)?) {
        (Some(true), _) => SyncPolicy::Fsync,
        (_, Some(true)) => SyncPolicy::Fdatasync,
        _ => SyncPolicy::None,
    };
    let run_time = run_time(
        &get_str(m, "runTime", at)?.unwrap_or_else(|| "120".into()),
        at,
    )?;
    let timeout = match get_str(m, "timeout", at)? {
        Some(t) => parse_go_duration(&t).map_err(|e| format!("{at}.timeout: '{t}': {e}"))?,
        None => Duration::from_secs(60),
    };
    if timeout.is_zero() {
        return Err(format!("{at}.timeout: must be above 0, e.g. 2m"));
    }
    let background = if get_bool(m, "enableBackgroundIOPS", at)? == Some(true) {
        let n = |k: &str| get_u64(m, k, at).map(|v| v.unwrap_or(0));
        let (write_jobs, read_jobs) = (n("backgroundWriteIOPSJobs")?, n("backgroundReadIOPSJobs")?);
        // Each background job is a thread and a 100 MiB file: at most fio's 4096 jobs in all,
        // the measuring one included.
        if write_jobs.saturating_add(read_jobs) > MAX_BACKGROUND_JOBS {
            return Err(format!(
                "{at}: backgroundWriteIOPSJobs + backgroundReadIOPSJobs is {}: at most \
                 {MAX_BACKGROUND_JOBS} background jobs (fio's 4096 jobs, the measuring one \
                 included)",
                write_jobs.saturating_add(read_jobs)
            ));
        }
        let warmup = n("backgroundIOPSWarmupSeconds")?;
        Some(Background {
            warmup: Duration::from_secs(warmup),
            write_iops: n("backgroundWriteIOPS")?,
            read_iops: n("backgroundReadIOPS")?,
            write_jobs: write_jobs as u32,
            read_jobs: read_jobs as u32,
        })
    } else {
        None
    };
    let c = FsPerfCollector {
        collector_name: name,
        exclude: get_bool(m, "exclude", at)?.unwrap_or(false),
        directory: directory.into(),
        file_size,
        operation_size: op,
        sync,
        run_time,
        timeout,
        background,
    };
    // The checks `iogauge fio` runs on its jobs, at load time as for a profile: none of the
    // keys above reaches a combination they refuse today, and a new key must not either.
    for j in c.jobs() {
        j.check().map_err(|e| format!("{at}: {e}"))?;
    }
    Ok(c)
}

impl FsPerfCollector {
    /// The measuring job, as troubleshoot's fio-based collector runs it (`--name=fsperf
    /// --rw=write --ioengine=sync`), with the sync policy the spec asked for.
    pub(crate) fn job(&self) -> JobSpec {
        JobSpec {
            name: "fsperf".into(),
            directory: Some(self.directory.clone()),
            size: Some(SizeSpec::Bytes(self.file_size)),
            bs: [self.operation_size; 3],
            rw: RwMode {
                kind: RwKind::Write,
                random: false,
            },
            ioengine: IoEngine::Sync,
            fsync: u32::from(self.sync == SyncPolicy::Fsync),
            fdatasync: u32::from(self.sync == SyncPolicy::Fdatasync),
            runtime: self.run_time,
            // Background load warms up first; its files are laid out before anything starts.
            startdelay: self
                .background
                .as_ref()
                .map_or(Duration::ZERO, |b| b.warmup),
            ..JobSpec::default()
        }
    }

    /// The measuring job first, then troubleshoot's background jobs: each its own 100 MiB file
    /// `background-{read,write}-<i>`, 4 KiB O_DIRECT random I/O, sharing its kind's IOPS budget
    /// evenly and paced smoothly (troubleshoot releases each second's budget at once).
    pub(crate) fn jobs(&self) -> Vec<JobSpec> {
        let mut jobs = vec![self.job()];
        let Some(b) = &self.background else {
            return jobs;
        };
        for (kind, total, n) in [
            (RwKind::Write, b.write_iops, b.write_jobs),
            (RwKind::Read, b.read_iops, b.read_jobs),
        ] {
            if total == 0 || n == 0 {
                continue; // troubleshoot: a zero budget means those jobs do nothing
            }
            let word = if kind == RwKind::Write {
                "write"
            } else {
                "read"
            };
            for i in 0..n {
                // Split the budget so the jobs' shares add up to the total exactly.
                let share = total / n as u64 + u64::from((i as u64) < total % n as u64);
                if share == 0 {
                    continue;
                }
                jobs.push(JobSpec {
                    name: format!("background-{word}-{i}"),
                    directory: Some(self.directory.clone()),
                    filename: Some(format!("background-{word}-{i}")),
                    size: Some(SizeSpec::Bytes(100 << 20)),
                    rw: RwMode { kind, random: true },
                    ioengine: IoEngine::Psync,
                    direct: true,
                    norandommap: true,
                    rate_iops: [Some(share); 3],
                    time_based: true,
                    runtime: Some(self.timeout),
                    background: true,
                    ..JobSpec::default()
                });
            }
        }
        jobs
    }
}
