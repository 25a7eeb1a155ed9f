//! The job-wide I/O priority: `prio`, `prioclass` (model: [`crate::model::IoPrioSpec`]).
//! Per-I/O priorities (`cmdprio*`) stay refused by name.

use super::Opt;
use crate::model::units::parse_int_in;

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
];
