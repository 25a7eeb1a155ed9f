//! fio's logs for plotting: `write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`, the `log_*` settings and `write_iolog` (model: [`crate::model::LogSpec`]).

use super::Opt;
use crate::model::units::{parse_bool, parse_bytes, parse_int, parse_int_in};
use crate::model::JobSpec;
use crate::stats::log_time::epoch_ms;

/// A log's prefix: the value as written; empty (or the option alone) means the job's name,
/// resolved when the files are named.
fn prefix(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// The value a valueless flag stands for: 1, except the `write_*_log` options, whose lone
/// name (in a job file) means "prefixed by the job's name".
pub(super) fn flag_value(name: &str) -> &'static str {
    match name {
        "write_bw_log" | "write_lat_log" | "write_iops_log" | "write_hist_log" => "",
        _ => "1",
    }
}

/// fio's coupling of the logs and the periodic samples, once all of a job's options are in
/// (`written`: whether an option was given): a bandwidth log without an explicit `bwavgtime`
/// sets the bandwidth sample interval to `log_avg_msec`, and with `log_avg_msec=0` fio's bw
/// statistics are taken per I/O (likewise `write_iops_log` and `iopsavgtime`).
/// Differs: with an explicit bwavgtime, fio averages the log over min(log_avg_msec, bwavgtime);
/// iogauge over log_avg_msec.
pub(crate) fn settle(j: &mut JobSpec, written: impl Fn(&str) -> bool) {
    let avg = j.logs.avg_msec;
    if j.logs.bw.is_some() && !written("bwavgtime") {
        if avg > 0 {
            j.bwavgtime_ms = avg;
        }
        j.logs.per_io_stats[0] = avg == 0;
    }
    if j.logs.iops.is_some() && !written("iopsavgtime") {
        if avg > 0 {
            j.iopsavgtime_ms = avg;
        }
        j.logs.per_io_stats[1] = avg == 0;
    }
}

fn ms(v: &str) -> Result<u64, String> {
    let n = v.strip_suffix("ms").unwrap_or(v);
    parse_int(n).map_err(|_| "expected milliseconds as a plain number, e.g. 1000".into())
}

/// log_alternate_epoch_clock_id: a clock this host's clock_gettime reads (fio would log from
/// an unset epoch otherwise).
fn set_clock_id(j: &mut JobSpec, v: &str) -> Result<(), String> {
    let id = parse_int(v)
        .ok()
        .and_then(|n| i32::try_from(n).ok())
        .ok_or(
            "expected a clock_gettime clock id, e.g. 0 (CLOCK_REALTIME) or 1 (CLOCK_MONOTONIC)",
        )?;
    epoch_ms(id).map_err(|e| {
        format!(
            "clock {id} cannot be read on this host ({e}); use 0 (CLOCK_REALTIME), \
             1 (CLOCK_MONOTONIC) or 7 (CLOCK_BOOTTIME)"
        )
    })?;
    j.logs.alternate_clock_id = id;
    Ok(())
}

/// log_compression: fio's range, 1 KiB to 512 MiB.
fn set_compression(j: &mut JobSpec, v: &str) -> Result<(), String> {
    const HINT: &str = "expected a size from 1k to 512m, e.g. log_compression=4k";
    let n = parse_bytes(v).map_err(|_| HINT.to_string())?;
    if !(1024..=512 << 20).contains(&n) {
        return Err(format!("{n} bytes is out of range; {HINT}"));
    }
    j.logs.compression = n;
    Ok(())
}

pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "write_bw_log",
        [],
        true,
        "Write a bandwidth log (NAME_bw.N.log; the value is the file name prefix)",
        |j, v| {
            j.logs.bw = prefix(v);
            Ok(())
        }
    ),
    opt!(
        "write_lat_log",
        [],
        true,
        "Write latency logs (NAME_lat/_clat/_slat.N.log; the value is the prefix)",
        |j, v| {
            j.logs.lat = prefix(v);
            Ok(())
        }
    ),
    opt!(
        "write_iops_log",
        [],
        true,
        "Write an IOPS log (NAME_iops.N.log; the value is the file name prefix)",
        |j, v| {
            j.logs.iops = prefix(v);
            Ok(())
        }
    ),
    opt!(
        "write_hist_log",
        [],
        true,
        "Write completion latency histogram logs (NAME_clat_hist.N.log; needs log_hist_msec)",
        |j, v| {
            j.logs.hist = prefix(v);
            Ok(())
        }
    ),
    opt!(
        "log_avg_msec",
        [],
        false,
        "Average bw/iops/lat logs over this many ms (0: one entry per I/O)",
        |j, v| {
            j.logs.avg_msec = ms(v)?;
            Ok(())
        }
    ),
    opt!(
        "log_hist_msec",
        [],
        false,
        "Write a histogram log entry every this many ms",
        |j, v| {
            j.logs.hist_msec = ms(v)?;
            Ok(())
        }
    ),
    opt!(
        "log_hist_coarseness",
        [],
        false,
        "Merge 2^N histogram bins per logged bin, N from 0 to 6",
        |j, v| {
            j.logs.hist_coarseness = parse_int_in(v, 0, 6)? as u32;
            Ok(())
        }
    ),
    opt!(
        "log_max_value",
        [],
        true,
        "Averaged log entries hold the window's maximum instead of its mean",
        |j, v| {
            j.logs.max_value = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "log_offset",
        [],
        true,
        "Add the I/O's offset to each log entry",
        |j, v| {
            j.logs.offset = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "per_job_logs",
        [],
        true,
        "One log file per job instance (0: all instances append to one file)",
        |j, v| {
            j.logs.per_job_logs = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "log_prio",
        [],
        true,
        "Log the I/O's full priority value instead of 1 for real-time, 0 otherwise",
        |j, v| {
            j.logs.prio = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "log_unix_epoch",
        [],
        true,
        "Log times in ms since the Unix epoch (of log_alternate_epoch_clock_id's clock)",
        |j, v| {
            j.logs.unix_epoch = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "log_alternate_epoch",
        [],
        true,
        "Log times in ms since the epoch of log_alternate_epoch_clock_id's clock",
        |j, v| {
            j.logs.alternate_epoch = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "log_alternate_epoch_clock_id",
        [],
        false,
        "The clock_gettime clock of log_unix_epoch/log_alternate_epoch (default 0, CLOCK_REALTIME)",
        set_clock_id
    ),
    opt!(
        "log_entries",
        [],
        false,
        "fio's initial in-memory log size, 1024 to 1048576 (iogauge: samples per .fz chunk)",
        |j, v| {
            j.logs.entries = parse_int_in(v, 1024, 1024 * 1024)?;
            Ok(())
        }
    ),
    opt!(
        "write_iolog",
        [],
        false,
        "Write the job's issued I/Os to this file (fio's version 3 iolog, appended to)",
        |j, v| {
            if v.is_empty() {
                return Err("expected a file name, e.g. write_iolog=job.iolog".into());
            }
            j.logs.iolog = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "log_compression",
        [],
        false,
        "Compressed chunk size of log_store_compressed logs, 1k to 512m (text logs are streamed)",
        set_compression
    ),
    opt!(
        "log_compression_cpus",
        [],
        false,
        "CPUs of fio's log compression thread (checked; iogauge compresses on the job's thread)",
        |_, v| {
            crate::model::host::parse_cpu_list(v, super::host::ncpus())?;
            Ok(())
        }
    ),
    opt!(
        "log_store_compressed",
        [],
        true,
        "Store the logs as fio's compressed .log.fz files (read them with --inflate-log)",
        |j, v| {
            j.logs.store_compressed = parse_bool(v)?;
            Ok(())
        }
    ),
];
