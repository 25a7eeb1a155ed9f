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

/// errno names fio's str2error knows (the common ones; others are given as numbers).
const ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("E2BIG", libc::E2BIG),
    ("EBADF", libc::EBADF),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("EXDEV", libc::EXDEV),
    ("ENODEV", libc::ENODEV),
    ("ENOTDIR", libc::ENOTDIR),
    ("EISDIR", libc::EISDIR),
    ("EINVAL", libc::EINVAL),
    ("ENFILE", libc::ENFILE),
    ("EMFILE", libc::EMFILE),
    ("ENOTTY", libc::ENOTTY),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("EPIPE", libc::EPIPE),
    ("EILSEQ", libc::EILSEQ),
    ("ENODATA", libc::ENODATA),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("EDQUOT", libc::EDQUOT),
    ("ECANCELED", libc::ECANCELED),
    ("EBADMSG", libc::EBADMSG),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("ENOMEDIUM", libc::ENOMEDIUM),
];

/// fio's `ignore_error=READ,WRITE,VERIFY`: per type a ':' list of errno names or numbers; a
/// list given also turns `continue_on_error` on for its type.
fn set_ignore_error(j: &mut JobSpec, v: &str) -> Result<(), String> {
    for (t, list) in v.trim().split(',').enumerate() {
        if t > 2 {
            return Err(
                "at most three lists (read, write, verify), e.g. ignore_error=EIO,ENOSPC:EIO"
                    .into(),
            );
        }
        let mut errs = Vec::new();
        for name in list.split(':').take_while(|n| !n.is_empty()) {
            let e = if name.starts_with('E') {
                ERRNO_NAMES.iter().find(|(n, _)| *n == name).map(|p| p.1)
            } else {
                name.parse::<i32>().ok().map(i32::abs).filter(|&e| e > 0)
            };
            match e {
                Some(e) => errs.push(e),
                None => {
                    return Err(format!(
                        "unknown error {name}; give an errno name such as EIO or a number, e.g. ignore_error=,ENOSPC:28"
                    ))
                }
            }
        }
        if !errs.is_empty() {
            j.timing.errors.continue_on |= 1 << t;
            j.timing.errors.ignore[t] = Some(errs);
        }
    }
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
        "max_latency",
        [],
        false,
        "The job fails (ETIMEDOUT) when an I/O takes longer than this, per direction (bare number: microseconds)",
        |j, v| {
            j.timing.max_latency =
                per_direction(v, |p| micros(p).map(|d| d.as_nanos() as u64))?;
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
        "continue_on_error",
        [],
        false,
        "Go on after I/O errors: none, read, write, io, verify, all (0 = none, 1 = all)",
        |j, v| {
            j.timing.errors.continue_on =
                match v {
                    "none" | "0" => 0,
                    "read" => 1,
                    "write" => 2,
                    "io" => 3,
                    "verify" => 4,
                    "all" | "1" => 7,
                    _ => return Err(
                        "expected none, read, write, io, verify or all, e.g. continue_on_error=io"
                            .into(),
                    ),
                };
            Ok(())
        }
    ),
    opt!(
        "ignore_error",
        [],
        false,
        "errnos continue_on_error survives, per type: READ,WRITE,VERIFY lists, e.g. ,ENOSPC:EIO",
        set_ignore_error
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

/// fio's fix-up of this group once a job is complete (init.c's fixup_options); the checks
/// are `JobSpec::check`'s.
pub(crate) fn settle(j: &mut JobSpec) {
    let t = &mut j.timing;
    // fio: thinktime_spin above thinktime is cut to thinktime.
    if t.thinktime_spin > t.thinktime {
        t.thinktime_spin = t.thinktime;
    }
}

#[cfg(test)]
mod tests {
    use super::super::find;
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Result<JobSpec, String> {
        let mut j = JobSpec::default();
        for (k, v) in pairs {
            find(k)
                .unwrap_or_else(|| panic!("{k}"))
                .apply(&mut j, Some(v))?;
        }
        settle(&mut j);
        j.check()?;
        Ok(j)
    }

    #[test]
    fn thinktime_units_and_spin_cut() {
        let j = set(&[("thinktime", "100"), ("thinktime_spin", "1s")]).unwrap();
        assert_eq!(j.timing.thinktime, Duration::from_micros(100));
        // fio cuts the spin to the thinktime.
        assert_eq!(j.timing.thinktime_spin, Duration::from_micros(100));
        let j = set(&[
            ("thinktime", "10ms"),
            ("thinktime_blocks", "4"),
            ("thinktime_blocks_type", "issue"),
            ("thinktime_iotime", "2"),
        ])
        .unwrap();
        assert_eq!(j.timing.thinktime, Duration::from_millis(10));
        assert_eq!(j.timing.thinktime_blocks, Some(4));
        assert_eq!(j.timing.thinktime_blocks_type, ThinkBlocks::Issue);
        assert_eq!(j.timing.thinktime_iotime, Duration::from_secs(2));
    }

    #[test]
    fn rates_and_steadystate() {
        let j = set(&[
            ("rate_process", "poisson"),
            ("ratemin", "1m,"),
            ("ratecycle", "500"),
            ("ss", "bw_slope:10m"),
            ("ss_dur", "30"),
            ("ss_ramp", "5s"),
        ])
        .unwrap();
        assert_eq!(j.timing.rate_process, RateProcess::Poisson);
        assert_eq!(j.timing.rate_min, [Some(1 << 20), None, None]);
        assert_eq!(j.timing.ratecycle_ms, 500);
        let ss = j.timing.steadystate;
        assert_eq!(ss.fio_name(), "bw_slope");
        assert_eq!((ss.limit, ss.percent), ((10 << 20) as f64, false));
        assert_eq!(j.timing.ss_dur, Duration::from_secs(30));
        assert_eq!(j.timing.ss_ramp, Duration::from_secs(5));
        let ss = set(&[("steadystate", "iops:2.5%")])
            .unwrap()
            .timing
            .steadystate;
        assert_eq!((ss.fio_name(), ss.limit, ss.percent), ("iops", 2.5, true));
    }

    #[test]
    fn bad_values_say_what_was_expected() {
        let err = |pairs: &[(&str, &str)]| set(pairs).unwrap_err();
        assert_eq!(
            err(&[("rate_process", "burst")]),
            "expected linear or poisson, e.g. rate_process=poisson"
        );
        assert_eq!(
            err(&[("thinktime", "soon")]),
            "expected microseconds or a time, e.g. 100, 10ms or 1s"
        );
        assert_eq!(
            err(&[("steadystate", "iops")]),
            "steadystate needs a criterion and a limit; expected iops, iops_slope, bw or \
             bw_slope with a limit, e.g. iops_slope:0.1% or iops:2%"
        );
        assert_eq!(
            err(&[("exit_what", "some")]),
            "expected group, stonewall or all, e.g. exit_what=all"
        );
        assert_eq!(
            err(&[("ss_dur", "500ms")]),
            "must be at least 1s (fio judges one sample a second), e.g. ss_dur=30"
        );
        let mut j = JobSpec {
            name: "j".into(),
            ..JobSpec::default()
        };
        j.rate_iops = [Some(100); 3];
        j.timing.rate_iops_min = [Some(200); 3];
        assert_eq!(
            j.check().unwrap_err(),
            "job 'j': the minimum rate exceeds the rate for read (fio: minimum rate exceeds \
             rate, ddir 0); lower rate_min/rate_iops_min or raise rate/rate_iops"
        );
        j.timing.rate_min = [Some(1); 3];
        assert!(j.check().unwrap_err().contains("mutually exclusive"));
    }

    #[test]
    fn continue_on_error_and_ignore_error() {
        let j = set(&[("continue_on_error", "io")]).unwrap();
        let e = &j.timing.errors;
        assert!(e.ignores(0, libc::EIO) && e.ignores(1, libc::EILSEQ));
        assert!(!e.ignores(1, libc::ENOSPC));
        // A list replaces the default for its type and turns that type on.
        let j = set(&[("ignore_error", ",ENOSPC:5")]).unwrap();
        let e = &j.timing.errors;
        assert!(e.ignores(1, libc::ENOSPC) && e.ignores(1, libc::EIO));
        assert!(!e.ignores(0, libc::EIO) && !e.ignores(1, libc::EILSEQ));
        assert!(!set(&[("continue_on_error", "0")])
            .unwrap()
            .timing
            .errors
            .is_set());
        assert_eq!(
            set(&[("ignore_error", "EWHAT")]).unwrap_err(),
            "unknown error EWHAT; give an errno name such as EIO or a number, e.g. \
             ignore_error=,ENOSPC:28"
        );
        assert_eq!(
            set(&[("continue_on_error", "maybe")]).unwrap_err(),
            "expected none, read, write, io, verify or all, e.g. continue_on_error=io"
        );
    }
}
