//! How long a target should take, and how long it may: an estimate of the pod's check from the
//! profiles as tuned (time-based runtimes and ramps; size-based jobs at a slow disk's pace;
//! laying out the test file), plus an allowance for starting (pull, provision, attach,
//! schedule). Each target's budget bounds its Job (activeDeadlineSeconds) and the controller's
//! wait, so one slow target does not eat the run's `--timeout`; the whole run's estimate, given
//! how many targets run at once, is said up front, with a warning when it cannot fit.

use super::request::{CheckArgs, KubeRequest, MOUNT_PATH};
use super::targets::{Target, TargetKind};
use crate::input::profiles::Tuning;
use crate::model::SizeSpec;
use std::path::Path;
use std::time::Duration;

/// A slow cloud disk's pace, so that estimates err long: bytes per second for laying out and
/// writing, and the time of one synced write.
const SLOW_BYTES_PER_S: f64 = 50.0 * 1024.0 * 1024.0;
const SLOW_SYNC: f64 = 0.002;
/// One small file created and read back on slow network storage.
const SMALL_FILE: f64 = 0.010;
/// What starting a pod usually takes (pull, provision, schedule), for the run's estimate.
pub(crate) const START: Duration = Duration::from_secs(30);
/// What it may take before the target is given up (a cold image pull, a slow provisioner).
pub(crate) const START_ALLOWANCE: Duration = Duration::from_secs(120);

/// The estimated time of one pod's check.
pub(crate) fn check_time(
    profile_names: &[String],
    check: &CheckArgs,
    files: &super::configmap::PodFiles,
) -> Result<Duration, String> {
    let tuning = Tuning {
        scale: check.scale.unwrap_or(1.0),
        duration: check.duration,
        size: check.file_size,
        max_size: None,
    };
    let mut secs = 0.0;
    for name in profile_names {
        let p = files.profile(name)?;
        if let Some(s) = p.small_files(&tuning) {
            secs += f64::from(s.files) * SMALL_FILE;
            continue;
        }
        secs += job_secs(&p.job(Path::new(MOUNT_PATH), &tuning)?);
    }
    Ok(Duration::from_secs_f64(secs.ceil()))
}

/// The estimated time of one pod's `kube fio` jobs, one after another.
pub(crate) fn fio_time(jobs: &[crate::model::JobSpec]) -> Duration {
    Duration::from_secs_f64(jobs.iter().map(job_secs).sum::<f64>().ceil())
}

/// One job's estimated seconds: laying out its file, its ramp, and its I/O (a time-based
/// runtime, or its bytes at a slow disk's pace).
pub(crate) fn job_secs(job: &crate::model::JobSpec) -> f64 {
    let bytes = match job.size {
        Some(SizeSpec::Bytes(b)) => b as f64,
        _ => 0.0,
    };
    let layout = bytes / SLOW_BYTES_PER_S;
    let io = match (job.time_based, job.runtime) {
        (true, Some(r)) => r.as_secs_f64(),
        (_, runtime) => {
            let synced = job.fsync > 0 || job.fdatasync > 0;
            let ops = bytes / job.max_bs().max(1) as f64;
            let by_size = if synced {
                ops * SLOW_SYNC
            } else {
                bytes / SLOW_BYTES_PER_S
            };
            runtime.map_or(by_size, |r| by_size.min(r.as_secs_f64()))
        }
    };
    layout + job.ramp_time.as_secs_f64() + io
}

/// A target's budget: twice the estimate (a disk slower than assumed) plus the start allowance,
/// or what `--target-timeout` says.
pub(crate) fn budget(estimate: Duration, asked: Option<Duration>) -> Duration {
    asked.unwrap_or(estimate * 2 + START_ALLOWANCE)
}

/// The whole run's estimate: targets that run at once overlap. `parallel` 0 is the default:
/// node targets all at once, shared storage one at a time, the two side by side.
pub(crate) fn run_time(targets: &[Target], parallel: usize, each: Duration) -> Duration {
    let nodes = targets
        .iter()
        .filter(|t| matches!(t.kind, TargetKind::Node { .. }))
        .count() as u32;
    let shared = targets.len() as u32 - nodes;
    match parallel {
        0 => {
            let node_lane = if nodes > 0 { each } else { Duration::ZERO };
            node_lane.max(each * shared)
        }
        n => each * (targets.len() as u32).div_ceil(n as u32),
    }
}

/// What the run should take, said before anything is created; and a warning when it cannot
/// fit `--timeout` (a warning, not a refusal: the estimate assumes a slow disk, and the targets
/// that fit still give results).
pub(crate) fn lines(
    targets: &[Target],
    req: &KubeRequest,
    estimate: Duration,
    budget: Duration,
) -> Vec<String> {
    let each = estimate + START;
    let total = run_time(targets, req.parallel, each);
    let mut out = vec![format!(
        "iogauge kube: each target should take about {} s ({} s of checks, {} s to start), the \
         run about {} s; a target is given up after {} s",
        secs(each),
        secs(estimate),
        secs(START),
        secs(total),
        secs(budget)
    )];
    if total > req.timeout {
        out.push(format!(
            "iogauge kube: warning: the run should take about {} s ({} target(s), {}), more \
             than --timeout {}s: the targets left when it passes are skipped; raise --timeout \
             or --parallel, or shorten the checks with --duration or --scale",
            secs(total),
            targets.len(),
            at_once(req.parallel),
            secs(req.timeout)
        ));
    }
    out
}

/// How targets run at once, in words.
pub(crate) fn at_once(parallel: usize) -> String {
    match parallel {
        0 => "node targets at once, shared storage one at a time (--parallel N caps both)".into(),
        1 => "one at a time".into(),
        n => format!("{n} at a time"),
    }
}

/// Whole seconds, as the flags take them.
pub(crate) fn secs(d: Duration) -> u64 {
    d.as_secs_f64().ceil() as u64
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::cluster::targets::Target;

    fn check(scale: Option<f64>, duration: Option<Duration>) -> CheckArgs {
        CheckArgs {
            scale,
            duration,
            ..CheckArgs::default()
        }
    }

    #[test]
    fn time_based_profiles_count_their_runtime_and_size_based_ones_a_slow_pace() {
        // sync-iops: 60 s + 2 s ramp + 1 GiB laid out at 50 MiB/s.
        let t = check_time(
            &["sync-iops".into()],
            &check(None, None),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(t, Duration::from_secs(83));
        // --duration replaces the runtime.
        let t = check_time(
            &["sync-iops".into()],
            &check(None, Some(Duration::from_secs(5))),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(t, Duration::from_secs(28));
        // etcd: 22 MiB in 2300-byte synced writes at 2 ms each, plus the layout.
        let t = check_time(&["etcd".into()], &check(None, None), &Default::default()).unwrap();
        assert_eq!(t, Duration::from_secs(21));
        let t = check_time(
            &["small-files".into()],
            &check(None, None),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(t, Duration::from_secs(10));
    }

    #[test]
    fn the_run_estimate_overlaps_node_targets_and_queues_shared_ones() {
        let node = |n: &str| {
            Target::new(TargetKind::Node {
                name: n.into(),
                hostname: n.into(),
                host_path: "/d".into(),
            })
        };
        let class = |n: &str| {
            Target::new(TargetKind::StorageClass {
                class: n.into(),
                provisioner: None,
                binding_mode: None,
                claim_bytes: 1 << 30,
            })
        };
        let each = Duration::from_secs(100);
        let t = [node("a"), node("b"), node("c"), class("x"), class("y")];
        assert_eq!(run_time(&t, 0, each), Duration::from_secs(200));
        assert_eq!(run_time(&t[..3], 0, each), Duration::from_secs(100));
        assert_eq!(run_time(&t, 1, each), Duration::from_secs(500));
        assert_eq!(run_time(&t, 2, each), Duration::from_secs(300));
        assert_eq!(budget(each, None), Duration::from_secs(320));
    }
}
