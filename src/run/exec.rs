//! The loop of fio's `exec` engine (engines/exec.c): the job runs `program` with `arguments`
//! (split on spaces; `%r` = the runtime in seconds, `%n` = the job's name) and waits out its
//! runtime in fake I/Os of 0 bytes, as fio: the first I/O starts the program (stdout and stderr
//! to NAME.stdout and NAME.stderr in the working directory with std_redirect=1, the default);
//! each later one sleeps 50 ms, followed by fio's 50 ms think time, and the one that finds the
//! runtime passed sends SIGTERM and waits `grace_time` seconds. The program is then killed
//! (SIGKILL) if still running and reaped. Whether it exits early is not looked at (as fio).
//!
//! Differs from fio on purpose: fio prints "NAME : program=…" lines on stdout; iogauge prints
//! nothing. NAME.stdout and NAME.stderr are the program's output and are kept, as fio keeps them.

use super::clock::{now_ns, sleep_until};
use super::instance::{wait_for_start, IoFailure, Published, Timeline, WorkerInput, WorkerResult};
use crate::model::{RwKind, DDIR_READ, DDIR_WRITE};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

/// fio's exec think time and per-I/O pause.
const PAUSE_NS: u64 = 50_000_000;

/// Run one instance of an exec job.
pub(crate) fn run_exec_worker(
    input: &WorkerInput,
    published: &Published,
    stop: &AtomicBool,
    start_ns: u64,
    sample_budget: usize,
) -> WorkerResult {
    let job = &input.job;
    let e = &job.engines;
    let mut res = WorkerResult::new(sample_budget, false, job);
    let dir = if job.rw.kind == RwKind::Write {
        DDIR_WRITE
    } else {
        DDIR_READ
    };
    wait_for_start(start_ns, job);
    let timed = job.timed();
    let mut tl = Timeline::begin(job, published, &mut res);
    let runtime_ns = job.runtime.map_or(0, |r| r.as_nanos() as u64);
    let mut child: Option<Child> = None;
    let mut termed = false;
    let mut first = true;
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let t0 = now_ns();
        if first {
            match spawn(job) {
                Ok(c) => child = Some(c),
                Err(err) => {
                    let mut f =
                        IoFailure::new(input, "exec", 0, 0, err.raw_os_error().unwrap_or(0));
                    f.path = e.program.as_deref().unwrap_or_default().into();
                    f.message = err.to_string();
                    res.error = Some(f);
                    break;
                }
            }
            first = false;
        } else {
            pause(t0 + PAUSE_NS, stop);
            if now_ns().saturating_sub(tl.meas_start) > runtime_ns && !termed {
                if let Some(c) = &child {
                    // SAFETY: a signal to our own child, still unreaped (its pid is not reused).
                    unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
                }
                termed = true;
                pause(now_ns() + e.grace_time as u64 * 1_000_000_000, stop);
            }
        }
        let t1 = now_ns();
        if timed {
            res.tick(t1);
            res.clat[dir].record(t1 - t0);
        }
        res.ios[dir] += 1;
        published.ios[dir].store(res.ios[dir], Ordering::Relaxed);
        if tl.ramp_over(t1, &mut res, published) {
            continue;
        }
        if t1 >= tl.deadline {
            break;
        }
        pause(t1 + PAUSE_NS, stop);
    }
    if let Some(mut c) = child {
        let _ = c.kill();
        let _ = c.wait();
    }
    let end = tl.finish(&mut res, input, |_| Ok(()));
    Timeline::done(published, end, &mut res);
    res
}

/// Sleep until `until`, in slices so that a stop is noticed.
fn pause(until: u64, stop: &AtomicBool) {
    loop {
        let now = now_ns();
        if now >= until || stop.load(Ordering::Relaxed) {
            return;
        }
        sleep_until(until.min(now + 100_000_000));
    }
}

/// Starts the program as fio's exec_background does.
fn spawn(job: &crate::model::JobSpec) -> std::io::Result<Child> {
    let e = &job.engines;
    let runtime_s = job.runtime.map_or(0, |r| r.as_secs());
    let args = e
        .arguments
        .as_deref()
        .unwrap_or_default()
        .replace("%r", &runtime_s.to_string())
        .replace("%n", &job.name);
    let mut cmd = Command::new(e.program.as_deref().unwrap_or_default());
    cmd.args(args.split(' ').filter(|a| !a.is_empty()))
        .stdin(Stdio::null());
    if e.std_redirect {
        let create = |ext: &str| {
            crate::workload::fs::create_output(std::path::Path::new(&format!("{}.{ext}", job.name)))
        };
        let (out, err) = (create("stdout")?, create("stderr")?);
        cmd.stdout(out).stderr(err);
    }
    cmd.spawn()
}
