//! How a job's I/Os are issued: sync_file_range, write_hint, write_barrier, allrandrepeat,
//! error_dump, atomic. fio 3.33 semantics; the model is `model::io`.

use super::Opt;
use crate::model::io::{
    LockMode, SubmitMode, SyncFileRange, WriteHint, SFR_WAIT_AFTER, SFR_WAIT_BEFORE, SFR_WRITE,
};
use crate::model::units::{parse_bool, parse_int_in};

/// fio's `sync_file_range=FLAG[,FLAG…][:N]`.
fn parse_sync_file_range(v: &str) -> Result<SyncFileRange, String> {
    const HINT: &str = "expected wait_before, write and/or wait_after separated by commas, \
                        then :N for every N writes, e.g. sync_file_range=write:8";
    let (names, every) = match v.split_once(':') {
        Some((names, n)) => {
            let n = parse_int_in(n, 0, u32::MAX as u64)
                .map_err(|_| format!("'{n}' is not a number of writes; {HINT}"))?;
            (names, n as u32)
        }
        None => (v, 1),
    };
    let mut flags = 0;
    for name in names.split(',').map(str::trim) {
        flags |= match name {
            "wait_before" => SFR_WAIT_BEFORE,
            "write" => SFR_WRITE,
            "wait_after" => SFR_WAIT_AFTER,
            _ => return Err(format!("'{name}' is not a sync_file_range flag; {HINT}")),
        };
    }
    Ok(SyncFileRange { flags, every })
}

/// The options of this group.
pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "sync_file_range",
        [],
        false,
        "sync_file_range(2) over the range written since the last sync, every N writes (wait_before,write,wait_after:N)",
        |j, v| {
            j.io.sync_file_range = Some(parse_sync_file_range(v)?);
            Ok(())
        }
    ),
    opt!(
        "write_hint",
        [],
        false,
        "Expected lifetime of the writes, set on each file when opened: none, short, medium, long or extreme",
        |j, v| {
            j.io.write_hint = Some(match v {
                "none" => WriteHint::None,
                "short" => WriteHint::Short,
                "medium" => WriteHint::Medium,
                "long" => WriteHint::Long,
                "extreme" => WriteHint::Extreme,
                _ => {
                    return Err(
                        "expected none, short, medium, long or extreme, e.g. write_hint=short"
                            .into(),
                    )
                }
            });
            Ok(())
        }
    ),
    opt!(
        "write_barrier",
        [],
        false,
        "Every N-th write a barrier write: only fio's libpmem engine has them, so no effect on iogauge's engines (as in fio)",
        |_, v| {
            // fio 3.33 marks barrier writes only for engines flagged FIO_BARRIER (libpmem);
            // on every engine iogauge has, fio issues them as plain writes.
            parse_int_in(v, 0, u32::MAX as u64)
                .map(|_| ())
                .map_err(|_| "expected a number of writes, e.g. write_barrier=8".into())
        }
    ),
    opt!(
        "allrandrepeat",
        [],
        true,
        "1 = every random generator seeded the same way every run, whatever randrepeat and randseed say",
        |j, v| {
            j.io.allrandrepeat = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "error_dump",
        [],
        true,
        "1 = print fio's io_u error line for every failed I/O, also those continue_on_error lets pass",
        |j, v| {
            j.io.error_dump = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "atomic",
        [],
        true,
        "1 = direct I/O (fio's O_ATOMIC is a flag Linux does not have, so it means direct=1)",
        |j, v| {
            // fio 3.33 opens with O_DIRECT | 0x800000 (its stand-in for O_ATOMIC), a bit the
            // kernel ignores; what remains is direct=1, which fio also sets for atomic=1.
            if parse_bool(v)? {
                j.direct = true;
            }
            Ok(())
        }
    ),
    opt!(
        "force_async",
        [],
        false,
        "io_uring: IOSQE_ASYNC on every N-th request, run by the kernel's worker threads (0: never)",
        |j, v| {
            j.io.force_async = parse_int_in(v, 0, u32::MAX as u64)
                .map_err(|_| "expected a number of requests, e.g. force_async=4")?
                as u32;
            Ok(())
        }
    ),
    opt!(
        "io_submit_mode",
        [],
        false,
        "inline (the default): the job's own thread submits and reaps its I/O; offload: the job's thread hands each I/O to a pool of iodepth submitting threads, so a rate holds whatever the device completes",
        |j, v| {
            j.io.submit_mode = match v {
                "inline" => SubmitMode::Inline,
                "offload" => SubmitMode::Offload,
                _ => return Err("expected inline or offload, e.g. io_submit_mode=offload".into()),
            };
            Ok(())
        }
    ),
    opt!(
        "lockfile",
        [],
        false,
        "none (default), exclusive (one I/O at a time over the jobs sharing a file) or readwrite (reads together, writes alone)",
        |j, v| {
            // fio 3.33 matches the name before a ':' and ignores the rest (older fio's batch
            // count, `readwrite:N`).
            let v = match v.split_once(':') {
                Some((m, n)) if n.trim().parse::<u64>().is_ok() => m,
                _ => v,
            };
            j.io.lockfile = match v {
                "none" => LockMode::None,
                "exclusive" => LockMode::Exclusive,
                "readwrite" => LockMode::ReadWrite,
                _ => return Err("expected none, exclusive or readwrite, e.g. lockfile=exclusive".into()),
            };
            Ok(())
        }
    ),
    opt!(
        "ioscheduler",
        [],
        false,
        "Switch the I/O scheduler of the device holding the job's files, e.g. mq-deadline (iogauge puts the old one back at the end)",
        |j, v| {
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
                return Err("expected a scheduler name, e.g. ioscheduler=mq-deadline".into());
            }
            j.io.ioscheduler = Some(v.to_string());
            Ok(())
        }
    ),
    opt!(
        "serialize_overlap",
        [],
        true,
        "1 = an I/O is not issued while one overlapping it is in flight (queueing engines; a synchronous engine has one at a time)",
        |j, v| {
            j.io.serialize_overlap = parse_bool(v)?;
            Ok(())
        }
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn sync_file_range_grammar() {
        let s = parse_sync_file_range("wait_before,write,wait_after:8").unwrap();
        assert_eq!((s.flags, s.every), (7, 8));
        let s = parse_sync_file_range("write").unwrap();
        assert_eq!((s.flags, s.every), (SFR_WRITE, 1));
        assert!(parse_sync_file_range("flush:2")
            .unwrap_err()
            .starts_with("'flush' is not a sync_file_range flag"));
        assert!(parse_sync_file_range("write:x").is_err());
    }
}
