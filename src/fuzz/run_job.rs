//! The `fio-run` fuzz target: a job file parsed as `iogauge fio -` parses it, then run for
//! real, so that a panic in a job thread (the I/O loops, the offset and size generators, the
//! logs, verify) reaches the fuzzer, which the parsing targets never do. fio 3.33's trimwrite
//! with a bandwidth log panicked in a job thread (issue 23) and no parser target could see it.
//!
//! Each job is cut down before it runs, so that an input can neither write outside a private
//! temporary directory nor run long: its files are `j<N>.*` in that directory (no filename,
//! opendir or job name reaches a path), at most 256 KiB in at most 4 files (offsets, offset
//! increments and zones capped alike), 2 copies and 2 loops, 30 ms of runtime, no start delay
//! and no verify dumps (written to the working directory); engines that run programs become
//! psync, and what acts on the host (CPU sets, cgroups, schedulers, uid changes, prerun
//! programs) is dropped. What shapes the I/O (rw and holes, block sizes, offsets, verify,
//! buffers, rates, think time, logs, latency targets, error policies) stays as parsed.

use crate::input::fio::{parse_fio_args, FioCommand};
use crate::model::{host::HostSpec, IoEngine, JobSpec, SizeSpec};
use crate::report::json::render_json;
use crate::report::normal::render_normal;
use crate::run::{run, RunOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

const MAX_SIZE: u64 = 256 << 10;
const MAX_RUNTIME: Duration = Duration::from_millis(30);

pub(super) fn fio_run(data: &[u8]) {
    let args = ["-".to_string()];
    let Ok(FioCommand::Run(mut spec, _)) = parse_fio_args(&args, &|_| None, &mut &data[..]) else {
        return;
    };
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    static INPUT: AtomicU64 = AtomicU64::new(0);
    let Some(base) = BASE.get_or_init(|| super::private_dir("run").ok()) else {
        return;
    };
    // A directory per input: what one input left cannot change the next one's run.
    let dir = base.join(INPUT.fetch_add(1, Ordering::Relaxed).to_string());
    if std::fs::create_dir(&dir).is_err() {
        return;
    }
    spec.jobs.truncate(4);
    for (i, job) in spec.jobs.iter_mut().enumerate() {
        confine(job, i, &dir);
    }
    spec.keep_files = false;
    spec.allow_overwrite = false;
    let opts = RunOptions {
        deadline: Some(std::time::Instant::now() + Duration::from_secs(2)),
        ..RunOptions::default()
    };
    // A panic unwinds past the removal below: the directory is removed at exit with the base.
    if let Ok(report) = run(&spec, &opts, &AtomicBool::new(false)) {
        let _ = render_json(&report, false);
        let _ = render_normal(&report);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Keeps `job` inside `dir`, small and short (the module's doc says what is kept).
fn confine(job: &mut JobSpec, i: usize, dir: &Path) {
    job.name = format!("j{i}");
    job.filename = None;
    job.directory = Some(dir.to_path_buf());
    job.files.filename_format = None;
    job.files.opendir = None;
    job.files.fill_device = false;
    job.files.allow_mounted_write = false;
    job.files.filesize_high = None;
    job.nrfiles = job.nrfiles.clamp(1, 4);
    job.numjobs = job.numjobs.clamp(1, 2);
    job.loops = job.loops.clamp(1, 2);
    job.iodepth = job.iodepth.clamp(1, 8);
    job.size = Some(SizeSpec::Bytes(match job.size {
        Some(SizeSpec::Bytes(b)) => b.clamp(1, MAX_SIZE),
        _ => MAX_SIZE,
    }));
    job.filesize = None;
    job.blocks.offset_increment = job.blocks.offset_increment.min(MAX_SIZE);
    job.blocks.zone_range = job.blocks.zone_range.min(MAX_SIZE);
    job.blocks.zone_size = job.blocks.zone_size.min(MAX_SIZE);
    job.blocks.zone_skip = job.blocks.zone_skip.min(MAX_SIZE);
    // verify_dump writes its files into the working directory.
    job.verify.dump = false;
    if let SizeSpec::Bytes(o) = job.offset {
        job.offset = SizeSpec::Bytes(o.min(MAX_SIZE));
    }
    job.runtime = Some(job.runtime.map_or(MAX_RUNTIME, |r| r.min(MAX_RUNTIME)));
    job.ramp_time = Duration::ZERO;
    job.startdelay = Duration::ZERO;
    job.timing.thinktime = job.timing.thinktime.min(Duration::from_millis(1));
    job.timing.thinktime_spin = job.timing.thinktime_spin.min(Duration::from_millis(1));
    job.timing.ss_dur = job.timing.ss_dur.min(MAX_RUNTIME);
    job.timing.ss_ramp = Duration::ZERO;
    job.timing.wait_for = None;
    job.unlink = true;
    job.host = HostSpec::default();
    job.io.ioscheduler = None;
    job.engines.program = None;
    job.engines.arguments = None;
    if job.ioengine == IoEngine::Exec {
        job.ioengine = IoEngine::Psync;
    }
    job.reporting.disk_util = false;
    let log = |name: &mut Option<String>, kind: &str| {
        if name.is_some() {
            *name = Some(
                dir.join(format!("j{i}_{kind}"))
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    };
    log(&mut job.logs.bw, "bw");
    log(&mut job.logs.lat, "lat");
    log(&mut job.logs.iops, "iops");
    log(&mut job.logs.hist, "hist");
    log(&mut job.logs.iolog, "iolog");
}
