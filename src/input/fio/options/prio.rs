//! The job-wide I/O priority: `prio`, `prioclass` (model: [`crate::model::IoPrioSpec`]).
//! Per-I/O command priorities on queueing engines: `cmdprio_percentage`, `cmdprio_class`,
//! `cmdprio` (`cmdprio_bssplit` stays refused by name).

use super::Opt;
use crate::model::units::{parse_int_in, split_per_direction};

/// A per-direction integer option (read,write; trim has no priority here).
fn per_dir(v: &str, lo: u64, hi: u64, out: &mut [u32; 2]) -> Result<(), String> {
    let parts = split_per_direction(v)?;
    for (d, p) in parts.iter().take(2).enumerate() {
        if let Some(p) = p {
            out[d] = parse_int_in(p, lo, hi)? as u32;
        }
    }
    Ok(())
}

pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "prio",
        [],
        false,
        "I/O priority level within the class, 0 (highest) to 7",
        |j, v| {
            j.ioprio.level = Some(parse_int_in(v, 0, 7)? as u32);
            Ok(())
        }
    ),
    opt!(
        "prioclass",
        [],
        false,
        "I/O priority class: 1 real-time, 2 best-effort, 3 idle",
        |j, v| {
            j.ioprio.class = Some(parse_int_in(v, 0, 3)? as u32);
            Ok(())
        }
    ),
    opt!(
        "cmdprio_percentage",
        [],
        false,
        "Percentage of I/Os sent with the command priority, per direction, e.g. 50 or 20,80",
        |j, v| per_dir(v, 0, 100, &mut j.ioprio.cmd_percentage)
    ),
    opt!(
        "cmdprio_class",
        [],
        false,
        "Command priority class per direction: 1 real-time, 2 best-effort, 3 idle",
        |j, v| per_dir(v, 1, 3, &mut j.ioprio.cmd_class)
    ),
    opt!(
        "cmdprio",
        [],
        false,
        "Command priority level per direction, 0 (highest) to 7",
        |j, v| per_dir(v, 0, 7, &mut j.ioprio.cmd_level)
    ),
];
