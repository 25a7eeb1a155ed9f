//! fio's data verification options (`verify` and its family), fio 3.33 semantics.

use super::Opt;
use crate::model::units::{parse_bool, parse_bytes, parse_int};
use crate::model::verify::{Pattern, VerifyKind};
use crate::model::JobSpec;

fn set_verify(j: &mut JobSpec, v: &str) -> Result<(), String> {
    let kind = VerifyKind::NAMES
        .iter()
        .find(|(n, _)| *n == v)
        .map(|&(_, k)| k)
        .ok_or_else(|| {
            format!(
                "expected one of md5, crc64, crc32c, crc32c-intel, crc32, crc16, crc7, sha1, \
                 sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, xxhash, meta, pattern, \
                 null or 0, e.g. verify=crc32c; got '{v}'"
            )
        })?;
    j.verify.kind = kind;
    j.verify.kind_set = true;
    Ok(())
}

fn set_verify_pattern(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.verify.pattern = Some(Pattern::parse(v, true)?);
    // fio: the pattern picks verify=pattern (with a header) unless verify= was given.
    if !j.verify.kind_set {
        j.verify.kind = VerifyKind::Pattern;
    }
    Ok(())
}

fn u32_bytes(v: &str) -> Result<u32, String> {
    let n = parse_bytes(v)?;
    u32::try_from(n).map_err(|_| format!("'{v}' is too large (at most 4g)"))
}

pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "verify",
        [],
        false,
        "Verify written data: md5, crc32c, crc64, sha256, xxhash, meta, pattern, ... or 0",
        set_verify
    ),
    opt!(
        "do_verify",
        [],
        false,
        "Read back and check what a write job wrote (with verify=)",
        |j, v| {
            j.verify.do_verify = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_pattern",
        [],
        false,
        "Fill written blocks with this pattern (0xHEX, \"text\", decimal, %o) and check it",
        set_verify_pattern
    ),
    opt!(
        "verify_interval",
        [],
        false,
        "Put a verify header every this many bytes (default: the write block size)",
        |j, v| {
            j.verify.interval = u32_bytes(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_offset",
        [],
        false,
        "Move the verify header to this offset within each block",
        |j, v| {
            j.verify.offset = u32_bytes(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_fatal",
        [],
        false,
        "Stop checking a block at its first bad interval",
        |j, v| {
            j.verify.fatal = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_only",
        [],
        true,
        "Do not write: read back and check what the write workload would have written",
        |j, v| {
            j.verify.only = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_dump",
        [],
        false,
        "Write the received and expected data of a bad block to files",
        |j, v| {
            j.verify.dump = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_state_save",
        [],
        false,
        "Only 0: iogauge writes no verify state file",
        |_, v| match parse_bool(v)? {
            false => Ok(()),
            true => Err("iogauge keeps no verify state file (fio writes \
                         <job>-<n>-verify.state for verify_state_load); write \
                         verify_state_save=0"
                .into()),
        }
    ),
    opt!(
        "verify_state_load",
        [],
        false,
        "Only 0: iogauge reads no verify state file",
        |_, v| match parse_bool(v)? {
            false => Ok(()),
            true => Err("iogauge keeps no verify state file to load (fio's \
                         verify_state_save files are not read); write verify_state_load=0"
                .into()),
        }
    ),
    opt!(
        "verify_backlog",
        [],
        false,
        "Verify written blocks every this many writes, not only at the end",
        |j, v| {
            j.verify.backlog = parse_int(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_backlog_batch",
        [],
        false,
        "Blocks to verify each time verify_backlog triggers (default verify_backlog)",
        |j, v| {
            j.verify.backlog_batch = parse_int(v)?;
            Ok(())
        }
    ),
    opt!(
        "verify_async",
        [],
        false,
        "Threads fio checks read blocks on; iogauge checks them inline with the same results",
        |j, v| {
            // fio 3.33 offloads the checks to verify_async threads; iogauge checks each block
            // on the job's thread as it completes (see VerifySpec::async_threads): the same
            // blocks are read and the same corruption is caught.
            j.verify.async_threads = parse_int(v)
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| {
                    format!("expected a number of threads, e.g. verify_async=2; got '{v}'")
                })?;
            Ok(())
        }
    ),
    opt!(
        "experimental_verify",
        [],
        false,
        "Read back by replaying the write workload's offsets instead of a log of written blocks",
        |j, v| {
            j.verify.experimental = parse_bool(v)?;
            Ok(())
        }
    ),
];
