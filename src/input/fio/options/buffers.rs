//! fio's buffer content options: patterns, compressible and deduplicable data, scrambling.

use super::Opt;
use crate::model::buffers::DedupeMode;
use crate::model::units::{parse_bool, parse_bytes, parse_int_in};
use crate::model::verify::Pattern;

pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "buffer_pattern",
        [],
        false,
        "Fill write buffers with this pattern (0xHEX, \"text\", decimal)",
        |j, v| {
            j.buffers.pattern = Some(Pattern::parse(v, false)?);
            // fio: a pattern turns scramble and zero buffers off.
            j.buffers.scramble = false;
            j.zero_buffers = false;
            Ok(())
        }
    ),
    opt!(
        "buffer_compress_percentage",
        [],
        false,
        "Make write buffers this compressible (percent of zeros in each chunk)",
        |j, v| {
            j.buffers.compress_percentage = parse_int_in(v, 0, 100)? as u32;
            Ok(())
        }
    ),
    opt!(
        "buffer_compress_chunk",
        [],
        false,
        "Size of the compressible chunks (default: the block size)",
        |j, v| {
            j.buffers.compress_chunk = parse_bytes(v)?;
            Ok(())
        }
    ),
    opt!(
        "dedupe_percentage",
        [],
        false,
        "Percent of writes that repeat earlier data",
        |j, v| {
            j.buffers.dedupe_percentage = parse_int_in(v, 0, 100)? as u32;
            Ok(())
        }
    ),
    opt!(
        "dedupe_mode",
        [],
        false,
        "Where repeated data comes from: repeat or working_set",
        |j, v| {
            j.buffers.dedupe_mode = match v {
                "repeat" => DedupeMode::Repeat,
                "working_set" => DedupeMode::WorkingSet,
                _ => {
                    return Err(format!(
                        "expected repeat or working_set, e.g. dedupe_mode=working_set; got '{v}'"
                    ))
                }
            };
            Ok(())
        }
    ),
    opt!(
        "dedupe_working_set_percentage",
        [],
        false,
        "Size of the dedupe working set, percent of the file size (default 5)",
        |j, v| {
            j.buffers.dedupe_working_set_percentage = parse_int_in(v, 0, 100)? as u32;
            Ok(())
        }
    ),
    opt!(
        "dedupe_global",
        [],
        true,
        "1 = the dedupe working set is shared by the jobs that say so (dedupe_mode=working_set)",
        |j, v| {
            j.buffers.dedupe_global = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "scramble_buffers",
        [],
        false,
        "Stamp offset and time into every 512 bytes of each write",
        |j, v| {
            j.buffers.scramble = parse_bool(v)?;
            Ok(())
        }
    ),
];
