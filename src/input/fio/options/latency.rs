//! fio's latency_target family (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`) and flow family (`flow_id`, `flow`, `flow_sleep`); the model is
//! [`crate::model::latency::LatencySpec`], the run side `run/latency_target.rs`.

use super::Opt;
use crate::model::units::{parse_bool, parse_int_in, parse_time, TimeUnit};

/// A time whose bare number is in microseconds (fio's FIO_OPT_STR_VAL_TIME with `is_time`),
/// in µs. Differs: fio reads an unknown suffix (`1ns`) as microseconds; iogauge refuses it.
fn micros(name: &str, v: &str) -> Result<u64, String> {
    let hint = || {
        format!("expected microseconds or a time, e.g. {name}=500 (µs), {name}=2ms or {name}=1s")
    };
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return v.parse::<u64>().map_err(|_| hint());
    }
    let d = parse_time(v, TimeUnit::Seconds).map_err(|_| hint())?;
    Ok(d.as_micros().min(u64::MAX as u128) as u64)
}

/// fio's latency_percentile: a float from 0 to 100 (a trailing `%` is allowed, as fio's
/// sscanf ignores it).
fn percentile(v: &str) -> Result<f64, String> {
    const HINT: &str = "expected a percentage from 0 to 100, e.g. latency_percentile=99.9";
    let t = v.trim().strip_suffix('%').unwrap_or(v.trim());
    let p: f64 = t.parse().map_err(|_| HINT.to_string())?;
    if !p.is_finite() || !(0.0..=100.0).contains(&p) {
        return Err(HINT.into());
    }
    Ok(p)
}

/// fio's flow_id: any int.
fn flow_id(v: &str) -> Result<i32, String> {
    v.trim()
        .parse::<i32>()
        .map_err(|_| "expected a whole number (may be negative), e.g. flow_id=1".into())
}

pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "latency_target",
        [],
        false,
        "Find the highest queue depth whose I/Os meet this latency (µs when bare, e.g. 2ms)",
        |j, v| {
            j.latency.target_ns = micros("latency_target", v)?.saturating_mul(1000);
            Ok(())
        }
    ),
    opt!(
        "latency_window",
        [],
        false,
        "How long each queue depth is tried for latency_target (µs when bare, e.g. 1s)",
        |j, v| {
            j.latency.window_us = micros("latency_window", v)?;
            Ok(())
        }
    ),
    opt!(
        "latency_percentile",
        [],
        false,
        "Percentage of I/Os in a window that must meet latency_target (default 100)",
        |j, v| {
            j.latency.percentile = percentile(v)?;
            Ok(())
        }
    ),
    opt!(
        "latency_run",
        [],
        true,
        "1 = keep adjusting the queue depth for latency_target instead of ending the job",
        |j, v| {
            j.latency.run = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "flow_id",
        [],
        false,
        "The flow group whose jobs share I/O in the ratio of their flow weights",
        |j, v| {
            j.latency.flow_id = flow_id(v)?;
            Ok(())
        }
    ),
    opt!(
        "flow",
        [],
        false,
        "Weight (0 to 1000) of this job's share of I/O within its flow_id group",
        |j, v| {
            j.latency.flow =
                parse_int_in(v, 0, 1000).map_err(|e| format!("{e}, e.g. flow=2"))? as u32;
            Ok(())
        }
    ),
    opt!(
        "flow_sleep",
        [],
        false,
        "Microseconds to sleep when the job is ahead of its flow share (0 = retry at once)",
        |j, v| {
            j.latency.flow_sleep_us = parse_int_in(v, 0, u32::MAX as u64)
                .map_err(|e| format!("{e} (microseconds), e.g. flow_sleep=100"))?
                as u32;
            Ok(())
        }
    ),
];
