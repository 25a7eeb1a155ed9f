//! Options that decide what the next I/O is beyond `bs` and `rw`: variable block sizes
//! (`bsrange`, `bssplit`, `bs_unaligned`, `bs_is_seq_rand`), random offset alignment
//! (`blockalign`), offset distributions (`random_distribution`, `random_generator`) and
//! `percentage_random`, parsed as fio 3.33 parses them.

use super::Opt;
use crate::model::units::{parse_bool, parse_bytes, parse_int_in, split_per_direction};
use crate::model::{BsSplit, Distribution, FileService, JobSpec, RandomGenerator, Zone};

/// fio's `BSSPLIT_MAX` and `ZONESPLIT_MAX`.
const MAX_SPLITS: usize = 64;
const MAX_ZONES: usize = 256;

fn block_size(p: &str, what: &str) -> Result<u64, String> {
    let b = parse_bytes(p).map_err(|e| format!("{what}: {e}"))?;
    if b == 0 {
        return Err(format!("{what}: a block size must be at least 1 byte"));
    }
    if b > u32::MAX as u64 {
        return Err(format!("{what}: a block size must be below 4 GiB"));
    }
    Ok(b)
}

fn set_bsrange(j: &mut JobSpec, v: &str) -> Result<(), String> {
    for (d, p) in split_per_direction(v)?.iter().enumerate() {
        let Some(p) = p else { continue };
        let (lo, hi) = p
            .split_once('-')
            .or_else(|| p.split_once(':'))
            .ok_or_else(|| {
                format!("expected MIN-MAX per direction, e.g. bsrange=4k-64k (got {p})")
            })?;
        let (lo, hi) = (block_size(lo, "bsrange")?, block_size(hi, "bsrange")?);
        // fio swaps a range written backwards.
        j.blocks.range[d] = Some((lo.min(hi), lo.max(hi)));
    }
    Ok(())
}

/// One direction of `bssplit`: `bs/perc:bs/perc:...`. As fio: a share above 100 counts as 100,
/// entries without a share (or with 0) split what the others leave, and the entries are sorted
/// by share (the draw walks them in that order).
fn parse_bssplit(s: &str) -> Result<Vec<BsSplit>, String> {
    const EG: &str = "e.g. bssplit=4k/10:64k/50:32k/40";
    let mut entries: Vec<(u64, Option<u32>)> = Vec::new();
    for e in s.split(':') {
        if e.is_empty() {
            break; // fio stops at an empty entry
        }
        if entries.len() == MAX_SPLITS {
            return Err(format!("at most {MAX_SPLITS} block sizes per direction"));
        }
        let (bs, perc) = match e.split_once('/') {
            Some((b, p)) => (b, Some(p)),
            None => (e, None),
        };
        let bs = block_size(bs, "bssplit").map_err(|m| format!("{m}, {EG}"))?;
        let perc = match perc {
            None | Some("") => None,
            Some(p) => match p.parse::<u64>() {
                Ok(0) => None,
                Ok(n) => Some(n.min(100) as u32),
                Err(_) => {
                    return Err(format!(
                        "bssplit: expected a whole percentage after '/' (got {p}), {EG}"
                    ))
                }
            },
        };
        entries.push((bs, perc));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 && missing > 0 {
        return Err(format!(
            "bssplit percentages add to more than 100% ({given}), {EG}"
        ));
    }
    let fill = match missing {
        0 => 0,
        1 if entries.len() == 1 => 100,
        m => (100 - given) / m,
    };
    let mut out: Vec<BsSplit> = entries
        .into_iter()
        .map(|(bs, p)| BsSplit {
            bs,
            perc: p.unwrap_or(fill),
        })
        .collect();
    out.sort_by_key(|e| e.perc);
    Ok(out)
}

fn set_bssplit(j: &mut JobSpec, v: &str) -> Result<(), String> {
    let parts = split_per_direction(v.trim())?;
    let mut split = j.blocks.split.clone();
    for (d, p) in parts.iter().enumerate() {
        if let Some(p) = p {
            let s = parse_bssplit(p)?;
            if !s.is_empty() {
                split[d] = s;
            }
        }
    }
    j.blocks.split = split;
    Ok(())
}

fn set_blockalign(j: &mut JobSpec, v: &str) -> Result<(), String> {
    for (d, p) in split_per_direction(v)?.iter().enumerate() {
        if let Some(p) = p {
            j.blocks.align[d] = block_size(p, "blockalign")?;
        }
    }
    Ok(())
}

fn set_percentage_random(j: &mut JobSpec, v: &str) -> Result<(), String> {
    for (d, p) in split_per_direction(v)?.iter().enumerate() {
        if let Some(p) = p {
            j.blocks.percentage_random[d] = parse_int_in(p, 0, 100)? as u32;
        }
    }
    Ok(())
}

fn set_random_generator(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.blocks.generator = match v {
        "tausworthe" | "tausworthe64" => RandomGenerator::Tausworthe,
        "lfsr" => RandomGenerator::Lfsr,
        _ => return Err("expected tausworthe, lfsr or tausworthe64".into()),
    };
    Ok(())
}

/// One direction of `zoned:`/`zoned_abs:`: `access/size:...`, checked as fio checks it.
fn parse_zones(s: &str, absolute: bool) -> Result<Vec<Zone>, String> {
    let eg = if absolute {
        "e.g. zoned_abs:60/20g:30/100g:10/500g"
    } else {
        "e.g. zoned:60/10:30/20:8/30:2/40"
    };
    let mut zones: Vec<(u32, Option<u64>)> = Vec::new();
    for e in s.split(':') {
        if e.is_empty() {
            break;
        }
        if zones.len() == MAX_ZONES {
            return Err(format!("at most {MAX_ZONES} zones per direction"));
        }
        let (acc, size) = match e.split_once('/') {
            Some((a, z)) => (a, Some(z)),
            None => (e, None),
        };
        let acc =
            parse_int_in(acc, 0, 100).map_err(|m| format!("zone access share: {m}, {eg}"))? as u32;
        let size = match size {
            None | Some("") => None,
            Some(z) if absolute => Some(parse_bytes(z).map_err(|m| format!("{m}, {eg}"))?),
            Some(z) => match z.parse::<u64>() {
                Ok(0) => None,
                Ok(n) if n <= 100 => Some(n),
                _ => return Err(format!("expected a zone size in percent (got {z}), {eg}")),
            },
        };
        zones.push((acc, size));
    }
    let access: u32 = zones.iter().map(|z| z.0).sum();
    if access != 100 {
        return Err(format!(
            "the zones' access percentages must add up to 100 (got {access}), {eg}"
        ));
    }
    if absolute {
        if zones.iter().any(|z| z.1.is_none()) {
            return Err(format!("every zoned_abs zone needs a size, {eg}"));
        }
    } else {
        let given: u64 = zones.iter().filter_map(|z| z.1).sum();
        if given > 100 {
            return Err(format!(
                "the zones' sizes add to more than 100% ({given}), {eg}"
            ));
        }
    }
    let missing = zones.iter().filter(|z| z.1.is_none()).count() as u64;
    let given: u64 = zones.iter().filter_map(|z| z.1).sum();
    let fill = match missing {
        0 => 0,
        1 if zones.len() == 1 => 100,
        m => (100 - given) / m,
    };
    Ok(zones
        .into_iter()
        .map(|(access, size)| Zone {
            access,
            size: size.unwrap_or(fill),
        })
        .collect())
}

fn set_distribution(j: &mut JobSpec, v: &str) -> Result<(), String> {
    let v = v.trim();
    let (kind, arg) = match v.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (v, None),
    };
    if kind == "zoned" || kind == "zoned_abs" {
        let absolute = kind == "zoned_abs";
        let arg = arg.unwrap_or("");
        let mut zones = j.blocks.zones.clone();
        for (d, p) in split_per_direction(arg)?.iter().enumerate() {
            if let Some(p) = p {
                zones[d] = parse_zones(p, absolute)?;
            }
        }
        if zones.iter().all(|z| z.is_empty()) {
            return Err(format!(
                "{kind} needs its zones, e.g. zoned:60/10:30/20:8/30:2/40"
            ));
        }
        j.blocks.zones = zones;
        j.random_distribution = if absolute {
            Distribution::ZonedAbs
        } else {
            Distribution::Zoned
        };
        return Ok(());
    }
    // zipf, pareto and normal: a value and an optional center, `zipf:1.2:0.25`.
    let (val, center) = match arg {
        None => (None, None),
        Some(a) => match a.split_once(':') {
            Some((x, c)) => (Some(x), Some(c)),
            None => (Some(a), None),
        },
    };
    let num = |s: &str, what: &str| -> Result<f64, String> {
        s.parse::<f64>()
            .map_err(|_| format!("expected a number for the {kind} {what}, e.g. {kind}:1.2"))
    };
    let center = center.map(|c| num(c, "center")).transpose()?;
    if let Some(c) = center {
        if !(0.0..=1.0).contains(&c) {
            return Err(format!(
                "the distribution center must be from 0 to 1, e.g. {kind}:1.2:0.25"
            ));
        }
    }
    j.random_distribution = match kind {
        "random" if arg.is_none() => Distribution::Random,
        "zipf" => {
            // fio's default theta, FIO_DEF_ZIPF.
            let t = val.map(|x| num(x, "theta")).transpose()?.unwrap_or(1.1);
            if !(t > 0.0 && t != 1.0) {
                return Err("the zipf theta must be above 0 and not 1, e.g. zipf:1.2".into());
            }
            Distribution::Zipf(t)
        }
        "pareto" => {
            let h = val.map(|x| num(x, "h")).transpose()?.unwrap_or(0.2);
            if !(h > 0.0 && h < 1.0) {
                return Err("the pareto h must be between 0 and 1, e.g. pareto:0.2".into());
            }
            Distribution::Pareto(h)
        }
        "normal" => {
            let dev = val.map(|x| num(x, "deviation")).transpose()?.unwrap_or(0.0);
            if !(0.0..100.0).contains(&dev) {
                return Err(
                    "the normal deviation must be from 0 to below 100, e.g. normal:10".into(),
                );
            }
            Distribution::Normal(dev)
        }
        _ => {
            return Err(
                "expected random, zipf:THETA, pareto:H, normal:DEV, zoned:A/S:... or \
                 zoned_abs:A/SIZE:..."
                    .into(),
            )
        }
    };
    j.blocks.center = center;
    Ok(())
}

/// The `:N` of `rw=` (None: no modifier, which resets it as fio does). Random jobs get a new
/// offset every N I/Os (fio's `atoi`); sequential ones skip N bytes after each I/O.
pub(super) fn set_rw_modifier(j: &mut JobSpec, m: Option<&str>) -> Result<(), String> {
    j.blocks.rw_seq_nr = 1;
    j.blocks.rw_seq_add = 0;
    let Some(m) = m else { return Ok(()) };
    if j.rw.random {
        let digits = m.trim().len()
            - m.trim()
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .len();
        j.blocks.rw_seq_nr = m.trim()[..digits].parse::<u32>().unwrap_or(0);
    } else {
        // fio: a leading '-' steps backwards (`rw=read:-8k`).
        let (back, size) = match m.trim_start().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, m),
        };
        let add = parse_bytes(size).map_err(|e| {
            format!("the offset modifier after ':' must be a size, e.g. rw=write:4k or rw=read:-8k ({e})")
        })?;
        let add = i64::try_from(add)
            .map_err(|_| format!("the offset modifier after ':' is too large: {add} bytes"))?;
        j.blocks.rw_seq_add = if back { -add } else { add };
    }
    Ok(())
}

fn set_rw_sequencer(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.blocks.rw_seq_identical = match v {
        "sequential" => false,
        "identical" => true,
        _ => return Err("expected sequential or identical".into()),
    };
    Ok(())
}

fn set_io_size(j: &mut JobSpec, v: &str) -> Result<(), String> {
    if v.trim_end().ends_with('%') {
        return Err(
            "io_size as a percentage is not supported by iogauge yet; give bytes, e.g. io_size=1g"
                .into(),
        );
    }
    j.blocks.io_size = match parse_bytes(v)? {
        0 => None,
        b => Some(b),
    };
    Ok(())
}

fn set_offset_increment(j: &mut JobSpec, v: &str) -> Result<(), String> {
    if v.trim_end().ends_with('%') {
        return Err("offset_increment as a percentage is not supported by iogauge yet; give bytes, e.g. offset_increment=1g".into());
    }
    j.blocks.offset_increment = parse_bytes(v)?;
    Ok(())
}

fn set_file_service_type(j: &mut JobSpec, v: &str) -> Result<(), String> {
    let (kind, arg) = match v.trim().split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (v.trim(), None),
    };
    let b = &mut j.blocks;
    b.file_service_nr = 1;
    b.file_service_center = None;
    let (val, center) =
        match arg.map(|a| a.split_once(':').map_or((a, None), |(x, c)| (x, Some(c)))) {
            Some((x, c)) => (Some(x), c),
            None => (None, None),
        };
    let num = |s: &str, what: &str| -> Result<f64, String> {
        s.parse::<f64>()
            .map_err(|_| format!("expected a number for the {kind} {what}, e.g. {kind}:1.2"))
    };
    let per_switch = |x: Option<&str>| -> u32 {
        // fio's atoi: leading digits, 0 without any.
        let x = x.unwrap_or("1").trim();
        let d = x.len() - x.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        x[..d].parse().unwrap_or(0)
    };
    b.file_service = match kind {
        "roundrobin" | "sequential" | "random" => {
            if arg.is_some() {
                b.file_service_nr = per_switch(arg);
            }
            match kind {
                "roundrobin" => FileService::RoundRobin,
                "sequential" => FileService::Sequential,
                _ => FileService::Random,
            }
        }
        "zipf" => {
            let t = val.map(|x| num(x, "theta")).transpose()?.unwrap_or(1.1);
            if !(t > 0.0 && t != 1.0) {
                return Err("the zipf theta must be above 0 and not 1, e.g. zipf:1.2".into());
            }
            FileService::Zipf(t)
        }
        "pareto" => {
            let h = val.map(|x| num(x, "h")).transpose()?.unwrap_or(0.2);
            if !(h > 0.0 && h < 1.0) {
                return Err("the pareto h must be between 0 and 1, e.g. pareto:0.2".into());
            }
            FileService::Pareto(h)
        }
        "normal" | "gauss" => {
            let d = val.map(|x| num(x, "deviation")).transpose()?.unwrap_or(0.0);
            if !(0.0..100.0).contains(&d) {
                return Err(
                    "the normal deviation must be from 0 to below 100, e.g. normal:10".into(),
                );
            }
            FileService::Normal(d)
        }
        _ => {
            return Err(
                "expected random, roundrobin, sequential (each with :N I/Os per file), zipf, \
                 pareto or normal (gauss), e.g. file_service_type=random:8"
                    .into(),
            )
        }
    };
    if !matches!(
        b.file_service,
        FileService::RoundRobin | FileService::Sequential | FileService::Random
    ) {
        if let Some(c) = center {
            let c = num(c, "center")?;
            if !(0.0..=1.0).contains(&c) {
                return Err(format!(
                    "the distribution center must be from 0 to 1, e.g. {kind}:1.2:0.5"
                ));
            }
            b.file_service_center = Some(c);
        }
    }
    Ok(())
}

fn set_zonemode(j: &mut JobSpec, v: &str) -> Result<(), String> {
    j.blocks.strided = match v {
        "none" => false,
        "strided" => true,
        "zbd" => return Err("zoned block devices are not supported by iogauge; zonemode=strided works on ordinary files".into()),
        _ => return Err("expected none, strided or zbd".into()),
    };
    Ok(())
}

/// This group's options.
pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "bsrange",
        ["blocksize_range"],
        false,
        "Block size range per direction: bsrange=4k-64k or bsrange=4k-16k,8k-64k",
        set_bsrange
    ),
    opt!(
        "bssplit",
        [],
        false,
        "Block size shares per direction: bssplit=4k/10:64k/50:32k/40,4k/100",
        set_bssplit
    ),
    opt!(
        "bs_unaligned",
        ["blocksize_unaligned"],
        true,
        "Sizes from bsrange/bssplit need not be multiples of the smallest",
        |j, v| {
            j.blocks.unaligned = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "bs_is_seq_rand",
        [],
        true,
        "Read sizes serve sequential I/Os, write sizes random ones",
        |j, v| {
            j.blocks.is_seq_rand = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "ba",
        ["blockalign"],
        false,
        "Alignment of random offsets per direction (turns the random map off)",
        set_blockalign
    ),
    opt!(
        "random_distribution",
        [],
        false,
        "random, zipf:THETA[:C], pareto:H[:C], normal:DEV[:C], zoned:A/S:..., zoned_abs:A/SIZE:...",
        set_distribution
    ),
    opt!(
        "random_generator",
        [],
        false,
        "tausworthe, lfsr (each block once per pass, no random map) or tausworthe64",
        set_random_generator
    ),
    opt!(
        "percentage_random",
        [],
        false,
        "Percent of a random job's I/Os at random offsets, per direction",
        set_percentage_random
    ),
    opt!(
        "rw_sequencer",
        [],
        false,
        "With rw=randread:N, what the N-1 I/Os between random offsets do: sequential or identical",
        set_rw_sequencer
    ),
    opt!(
        "io_size",
        ["io_limit"],
        false,
        "Bytes to transfer, instead of the size of the region (times loops)",
        set_io_size
    ),
    opt!(
        "number_ios",
        [],
        false,
        "Stop after this many I/Os (if nothing stops the job earlier)",
        |j, v| {
            j.blocks.number_ios = Some(crate::model::units::parse_int(v)?).filter(|&n| n > 0);
            Ok(())
        }
    ),
    opt!(
        "offset_increment",
        [],
        false,
        "Each numjobs copy starts this much further than the previous one",
        set_offset_increment
    ),
    opt!(
        "file_service_type",
        [],
        false,
        "Which file next: roundrobin, sequential, random (each :N I/Os per choice), zipf, pareto, normal",
        set_file_service_type
    ),
    opt!(
        "zonemode",
        [],
        false,
        "none or strided (zonesize bytes per zone of zonerange, then zoneskip); not zbd",
        set_zonemode
    ),
    opt!(
        "zonerange",
        [],
        false,
        "Length of a strided zone (default zonesize)",
        |j, v| {
            j.blocks.zone_range = parse_bytes(v)?;
            Ok(())
        }
    ),
    opt!(
        "zonesize",
        [],
        false,
        "Bytes transferred in a strided zone before the next",
        |j, v| {
            j.blocks.zone_size = parse_bytes(v)?;
            Ok(())
        }
    ),
    opt!(
        "zoneskip",
        [],
        false,
        "Bytes skipped between strided zones",
        |j, v| {
            j.blocks.zone_skip = parse_bytes(v)?;
            Ok(())
        }
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Result<JobSpec, String> {
        let mut j = JobSpec::default();
        for (k, v) in pairs {
            let o = OPTIONS
                .iter()
                .find(|o| o.name == *k || o.aliases.contains(k))
                .unwrap_or_else(|| panic!("{k}"));
            o.apply(&mut j, Some(v))?;
        }
        Ok(j)
    }

    fn bs(v: &[(u64, u32)]) -> Vec<BsSplit> {
        v.iter().map(|&(bs, perc)| BsSplit { bs, perc }).collect()
    }

    #[test]
    fn bssplit_per_direction_sorted_by_share() {
        let j = set(&[("bssplit", "4k/10:64k/50:32k/40,4k/100")]).unwrap();
        assert_eq!(
            j.blocks.split[0],
            bs(&[(4096, 10), (32768, 40), (65536, 50)])
        );
        assert_eq!(j.blocks.split[1], bs(&[(4096, 100)]));
        assert_eq!(j.blocks.split[2], bs(&[(4096, 100)]));
        assert_eq!(j.bs_range(0), (4096, 65536));
        assert_eq!(j.bs_range(1), (4096, 4096));
        assert_eq!(j.max_bs(), 65536);
        assert_eq!(j.min_bs(), 4096);
    }

    #[test]
    fn bssplit_fills_missing_shares_as_fio() {
        // Two without a share split the 40 left: 20 each; "/0" counts as missing.
        let j = set(&[("bssplit", "4k/60:8k:16k/0")]).unwrap();
        assert_eq!(
            j.blocks.split[0],
            bs(&[(8192, 20), (16384, 20), (4096, 60)])
        );
        // A lone size without a share gets 100; a share above 100 counts as 100.
        let j = set(&[("bssplit", "8k")]).unwrap();
        assert_eq!(j.blocks.split[0], bs(&[(8192, 100)]));
        let j = set(&[("bssplit", "8k/150")]).unwrap();
        assert_eq!(j.blocks.split[0], bs(&[(8192, 100)]));
        // Shares under 100 are kept: fio gives the rest to the last entry tried.
        let j = set(&[("bssplit", "4k/10:8k/20")]).unwrap();
        assert_eq!(j.blocks.split[0], bs(&[(4096, 10), (8192, 20)]));
    }

    #[test]
    fn bssplit_bad_values_say_what_was_expected() {
        let e = set(&[("bssplit", "4k/80:8k/30:16k")]).unwrap_err();
        assert_eq!(
            e,
            "bssplit percentages add to more than 100% (110), e.g. bssplit=4k/10:64k/50:32k/40"
        );
        let e = set(&[("bssplit", "4k/x")]).unwrap_err();
        assert!(e.contains("expected a whole percentage"), "{e}");
        let e = set(&[("bssplit", "0/50:4k/50")]).unwrap_err();
        assert!(
            e.starts_with("bssplit: a block size must be at least 1 byte"),
            "{e}"
        );
    }

    #[test]
    fn bsrange_per_direction_and_swapped() {
        let j = set(&[("bsrange", "4k-16k,64k:8k")]).unwrap();
        assert_eq!(
            j.blocks.range,
            [
                Some((4096, 16384)),
                Some((8192, 65536)),
                Some((8192, 65536))
            ]
        );
        assert_eq!(j.max_bs(), 65536);
        let j = set(&[("blocksize_range", "1k-4k")]).unwrap();
        assert_eq!(j.bs_range(2), (1024, 4096));
        let e = set(&[("bsrange", "4k")]).unwrap_err();
        assert!(e.contains("expected MIN-MAX"), "{e}");
    }

    #[test]
    fn distributions_with_center_zones_and_defaults() {
        let j = set(&[("random_distribution", "zipf:1.2:0.25")]).unwrap();
        assert_eq!(j.random_distribution, Distribution::Zipf(1.2));
        assert_eq!(j.blocks.center, Some(0.25));
        let j = set(&[("random_distribution", "zipf")]).unwrap();
        assert_eq!(j.random_distribution, Distribution::Zipf(1.1));
        let j = set(&[("random_distribution", "normal:10")]).unwrap();
        assert_eq!(j.random_distribution, Distribution::Normal(10.0));
        assert!(!j.uses_random_map());
        let j = set(&[("random_distribution", "zoned:60/10:30/20:8/30:2/40")]).unwrap();
        assert_eq!(j.random_distribution, Distribution::Zoned);
        assert_eq!(j.blocks.zones[1].len(), 4);
        assert_eq!(
            j.blocks.zones[0][3],
            Zone {
                access: 2,
                size: 40
            }
        );
        let j = set(&[("random_distribution", "zoned_abs:60/1m:40/3m")]).unwrap();
        assert_eq!(
            j.blocks.zones[0][1],
            Zone {
                access: 40,
                size: 3 << 20
            }
        );
        let e = set(&[("random_distribution", "zoned:60/10:30/20")]).unwrap_err();
        assert!(e.contains("must add up to 100 (got 90)"), "{e}");
        let e = set(&[("random_distribution", "normal:100")]).unwrap_err();
        assert!(e.contains("normal deviation"), "{e}");
        let e = set(&[("random_distribution", "zipf:1.2:2")]).unwrap_err();
        assert!(e.contains("center"), "{e}");
    }

    #[test]
    fn generator_alignment_and_percentage_random() {
        let j = set(&[("random_generator", "lfsr"), ("percentage_random", "30,70")]).unwrap();
        assert_eq!(j.blocks.generator, RandomGenerator::Lfsr);
        assert_eq!(j.blocks.percentage_random, [30, 70, 70]);
        assert!(!j.uses_random_map());
        let mut j = set(&[("ba", "512")]).unwrap();
        j.rw.random = true;
        assert_eq!(j.block_align(0), 512);
        assert!(!j.uses_random_map());
        j.rw.random = false;
        assert_eq!(j.block_align(0), 4096);
        assert!(set(&[("random_generator", "mt")]).is_err());
        assert!(set(&[("percentage_random", "101")]).is_err());
    }
}
