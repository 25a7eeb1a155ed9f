//! Rate and timing shapes and run control: thinktime, rate_process, minimum rates, steady state,
//! exitall (fio 3.33 semantics; the model is `model::timing`).

use super::Opt;
use crate::model::timing::{ExitWhat, RateProcess, SsMetric, SteadyState, ThinkBlocks};
use crate::model::units::{parse_bool, parse_bytes, parse_int, parse_int_in, parse_time, TimeUnit};
use crate::model::JobSpec;
use std::time::Duration;

/// A time whose bare number is in microseconds (fio's thinktime, thinktime_spin).
fn micros(v: &str) -> Result<Duration, String> {
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        let us: u64 = v
            .parse()
            .map_err(|_| "expected microseconds or a time, e.g. 100, 10ms or 1s")?;
        return Ok(Duration::from_micros(us));
    }
    parse_time(v, TimeUnit::Seconds)
        .map_err(|_| "expected microseconds or a time, e.g. 100, 10ms or 1s".to_string())
}

fn per_direction(
    v: &str,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<[Option<u64>; 3], String> {
    let mut out = [None; 3];
    for (d, p) in crate::model::units::split_per_direction(v)?
        .iter()
        .enumerate()
    {
        if let Some(p) = p {
            out[d] = Some(parse(p)?).filter(|&r| r > 0);
        }
    }
    Ok(out)
}

fn set_steadystate(j: &mut JobSpec, v: &str) -> Result<(), String> {
    const HINT: &str =
        "expected iops, iops_slope, bw or bw_slope with a limit, e.g. iops_slope:0.1% or iops:2%";
    let (kind, limit) = v
        .split_once(':')
        .ok_or_else(|| format!("steadystate needs a criterion and a limit; {HINT}"))?;
    let (metric, slope) = match kind {
        "iops" => (SsMetric::Iops, false),
        "iops_slope" => (SsMetric::Iops, true),
        "bw" => (SsMetric::Bw, false),
        "bw_slope" => (SsMetric::Bw, true),
        _ => return Err(HINT.into()),
    };
    let limit = limit.trim();
    let (limit, percent) = match limit.strip_suffix('%') {
        Some(p) => (
            p.trim()
                .parse::<f64>()
                .map_err(|_| format!("could not read the percentage '{p}'; {HINT}"))?,
            true,
        ),
        None if metric == SsMetric::Iops => (
            limit
                .parse::<f64>()
                .map_err(|_| format!("could not read the IOPS limit '{limit}'; {HINT}"))?,
            false,
        ),
        // fio reads a bandwidth limit as a size: bw:10m is 10 MiB/s.
        None => (parse_bytes(limit)? as f64, false),
    };
    if !(limit.is_finite() && limit >= 0.0) {
        return Err(format!("the limit must be a number of 0 or more; {HINT}"));
    }
    j.timing.steadystate = SteadyState {
        metric,
        slope,
        limit,
        percent,
    };
    Ok(())
}

/// The options of this group.
pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "thinktime",
        [],
        false,
        "Pause this long after every thinktime_blocks I/Os (bare number: microseconds)",
        |j, v| {
            j.timing.thinktime = micros(v)?;
            Ok(())
        }
    ),
    opt!(
        "thinktime_spin",
        [],
        false,
        "Of the thinktime, spin the CPU this long (bare number: microseconds)",
        |j, v| {
            j.timing.thinktime_spin = micros(v)?;
            Ok(())
        }
    ),
    opt!(
        "thinktime_blocks",
        [],
        false,
        "I/Os between thinktime pauses (default 1)",
        |j, v| {
            j.timing.thinktime_blocks = Some(parse_int_in(v, 1, u32::MAX as u64)? as u32);
            Ok(())
        }
    ),
    opt!(
        "thinktime_blocks_type",
        [],
        false,
        "What thinktime_blocks counts: complete (default) or issue",
        |j, v| {
            j.timing.thinktime_blocks_type = match v {
                "complete" => ThinkBlocks::Complete,
                "issue" => ThinkBlocks::Issue,
                _ => {
                    return Err(
                        "expected complete or issue, e.g. thinktime_blocks_type=issue".into(),
                    )
                }
            };
            Ok(())
        }
    ),
    opt!(
        "thinktime_iotime",
        [],
        false,
        "Also pause after this much I/O time (bare number: seconds)",
        |j, v| {
            j.timing.thinktime_iotime = parse_time(v, TimeUnit::Seconds)?;
            Ok(())
        }
    ),
    opt!(
        "rate_process",
        [],
        false,
        "How rated I/O is spaced: linear (default) or poisson",
        |j, v| {
            j.timing.rate_process = match v {
                "linear" => RateProcess::Linear,
                "poisson" => RateProcess::Poisson,
                _ => return Err("expected linear or poisson, e.g. rate_process=poisson".into()),
            };
            Ok(())
        }
    ),
    opt!(
        "rate_min",
        ["ratemin"],
        false,
        "The job fails below this bandwidth (bytes/s), per direction",
        |j, v| {
            j.timing.rate_min = per_direction(v, parse_bytes)?;
            Ok(())
        }
    ),
    opt!(
        "rate_iops_min",
        [],
        false,
        "The job fails below this many IOPS, per direction",
        |j, v| {
            j.timing.rate_iops_min = per_direction(v, parse_int)?;
            Ok(())
        }
    ),
    opt!(
        "rate_cycle",
        ["ratecycle"],
        false,
        "Window of the minimum-rate check in ms (default 1000)",
        |j, v| {
            j.timing.ratecycle_ms = parse_int_in(v, 1, u32::MAX as u64)?;
            Ok(())
        }
    ),
    opt!(
        "rate_ignore_thinktime",
        [],
        true,
        "After a thinktime, keep the rate instead of catching up",
        |j, v| {
            j.timing.rate_ignore_thinktime = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "steadystate",
        ["ss"],
        false,
        "End the job at steady state: iops, iops_slope, bw or bw_slope with :N% or :N",
        set_steadystate
    ),
    opt!(
        "steadystate_duration",
        ["ss_dur"],
        false,
        "Window the steady state is judged over (bare number: seconds)",
        |j, v| {
            let d = parse_time(v, TimeUnit::Seconds)?;
            if !d.is_zero() && d < Duration::from_secs(1) {
                return Err(
                    "must be at least 1s (fio judges one sample a second), e.g. ss_dur=30".into(),
                );
            }
            j.timing.ss_dur = d;
            Ok(())
        }
    ),
    opt!(
        "steadystate_ramp_time",
        ["ss_ramp"],
        false,
        "Time before steady-state data is collected (bare number: seconds)",
        |j, v| {
            j.timing.ss_ramp = parse_time(v, TimeUnit::Seconds)?;
            Ok(())
        }
    ),
    opt!(
        "exitall",
        [],
        true,
        "When this job ends, end the others (see exit_what)",
        |j, v| {
            j.timing.exitall = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "exitall_on_error",
        [],
        true,
        "When this job fails, end the others",
        |j, v| {
            j.timing.exitall_on_error = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "wait_for",
        [],
        false,
        "Start once every instance of this earlier job has ended",
        |j, v| {
            if v.is_empty() {
                return Err("needs a job name, e.g. wait_for=job1".into());
            }
            j.timing.wait_for = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "exit_what",
        [],
        false,
        "Which jobs exitall ends: group (default), stonewall or all",
        |j, v| {
            j.timing.exit_what = match v {
                "group" => ExitWhat::Group,
                "stonewall" => ExitWhat::Stonewall,
                "all" => ExitWhat::All,
                _ => return Err("expected group, stonewall or all, e.g. exit_what=all".into()),
            };
            Ok(())
        }
    ),
];

/// fio's wait_for_ok: the waitee is one earlier job, not the job itself (`earlier` are the jobs
/// defined before `j`).
pub(in crate::input::fio) fn check_wait_for(
    j: &JobSpec,
    earlier: &[JobSpec],
) -> Result<(), String> {
    let Some(w) = &j.timing.wait_for else {
        return Ok(());
    };
    if *w == j.name {
        return Err(format!(
            "{}: a job cannot wait for itself (wait_for={w})",
            j.name
        ));
    }
    match earlier.iter().filter(|e| e.name == *w).count() {
        0 => Err(format!(
            "{}: waitee job {w} unknown; wait_for names a job defined before this one",
            j.name
        )),
        1 => Ok(()),
        _ => Err(format!(
            "{}: multiple waitees {w} found; give the jobs distinct names when using wait_for",
            j.name
        )),
    }
}

/// fio's checks of this group's settings once a job is complete (init.c's fixup_options);
/// messages name the job and the options.
pub(in crate::input::fio) fn check(j: &mut JobSpec) -> Result<(), String> {
    let t = &mut j.timing;
    if t.rate_min.iter().any(|r| r.is_some()) && t.rate_iops_min.iter().any(|r| r.is_some()) {
        return Err(format!(
            "job '{}': rate_min and rate_iops_min are mutually exclusive; keep one",
            j.name
        ));
    }
    for d in 0..3 {
        let over =
            |max: Option<u64>, min: Option<u64>| matches!((max, min), (Some(a), Some(b)) if a < b);
        if over(j.rate[d], t.rate_min[d]) || over(j.rate_iops[d], t.rate_iops_min[d]) {
            let dir = ["read", "write", "trim"][d];
            return Err(format!(
                "job '{}': the minimum rate exceeds the rate for {dir} (fio: minimum rate exceeds \
                 rate, ddir {d}); lower rate_min/rate_iops_min or raise rate/rate_iops",
                j.name
            ));
        }
    }
    // fio: thinktime_spin above thinktime is cut to thinktime.
    if t.thinktime_spin > t.thinktime {
        t.thinktime_spin = t.thinktime;
    }
    Ok(())
}
