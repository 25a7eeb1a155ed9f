//! The job-wide I/O priority: `prio`, `prioclass` (model: [`crate::model::IoPrioSpec`]).
//! Per-I/O command priorities on queueing engines: `cmdprio_percentage`, `cmdprio_class`,
//! `cmdprio`, `cmdprio_bssplit`.

use super::Opt;
use crate::model::units::{parse_bytes, parse_int_in, split_per_direction};
use crate::model::CmdPrioSplit;

const BSSPLIT_EG: &str = "e.g. cmdprio_bssplit=4k/10:64k/50 or 4k/10/3/2:64k/50/1/0";

/// One direction of `cmdprio_bssplit` (fio 3.33's parse_cmdprio_bssplit_entry): entries
/// `bs/perc` or `bs/perc/class/level` joined by ':'. As fio: a share above 100 counts as 100, a
/// class above 3 or level above 7 as the highest, entries with no share are dropped, an empty
/// entry ends the list, and the entries are sorted by block size.
fn parse_cmdprio_bssplit(s: &str) -> Result<Vec<CmdPrioSplit>, String> {
    let mut out: Vec<CmdPrioSplit> = Vec::new();
    let mut n = 0;
    for e in s.split(':') {
        if e.is_empty() {
            break;
        }
        n += 1;
        if n > 64 {
            return Err(format!(
                "cmdprio_bssplit: at most 64 entries per direction, {BSSPLIT_EG}"
            ));
        }
        let f: Vec<&str> = e.split('/').collect();
        let num = |x: &str, what: &str| {
            x.trim().parse::<u64>().map_err(|_| {
                format!("cmdprio_bssplit: expected a whole {what} in '{e}', {BSSPLIT_EG}")
            })
        };
        let bs = parse_bytes(f[0].trim())
            .map_err(|m| format!("cmdprio_bssplit: {m} in '{e}', {BSSPLIT_EG}"))?;
        let (perc, prio) = match f.as_slice() {
            [_] | [_, ""] => (0, None),
            [_, p] => (num(p, "percentage")?, None),
            [_, p, c, l] => {
                let class = num(c, "priority class")?.min(3) as u16;
                let level = num(l, "priority level")?.min(7) as u16;
                (num(p, "percentage")?, Some((class << 13) | level))
            }
            _ => {
                return Err(format!(
                    "cmdprio_bssplit: expected bs/percentage or bs/percentage/class/level, \
                     got '{e}', {BSSPLIT_EG}"
                ))
            }
        };
        if perc > 0 {
            out.push(CmdPrioSplit {
                bs,
                perc: perc.min(100) as u32,
                prio,
            });
        }
    }
    out.sort_by_key(|e| e.bs);
    for w in out.chunk_by(|a, b| a.bs == b.bs) {
        let tot: u32 = w.iter().map(|e| e.perc).sum();
        if tot > 100 {
            return Err(format!(
                "cmdprio_bssplit: the percentages for block size {} add to {tot}, more than \
                 100, {BSSPLIT_EG}",
                w[0].bs
            ));
        }
    }
    Ok(out)
}

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
    opt!(
        "cmdprio_bssplit",
        [],
        false,
        "Command priority share per block size and direction: bs/perc[/class/level]:..., \
         e.g. 4k/10:64k/50 (exclusive with cmdprio_percentage)",
        |j, v| {
            // As fio's str_split_parse: one value serves read and write; trim is ignored.
            let parts = split_per_direction(v.trim())?;
            for (d, p) in parts.iter().take(2).enumerate() {
                if let Some(p) = p {
                    j.ioprio.cmd_bssplit[d] = parse_cmdprio_bssplit(p)?;
                }
            }
            Ok(())
        }
    ),
];
