//! How results are reported: `slat_percentiles`, `unified_rw_reporting`, `significant_figures`,
//! `kb_base`, `unit_base` (model:
//! [`crate::model::ReportingSpec`]).

use super::Opt;
use crate::model::units::{parse_bool, parse_int_in};
use crate::model::UnifiedRw;

fn set_unified(j: &mut crate::model::JobSpec, v: &str) -> Result<(), String> {
    j.reporting.unified_rw = match v {
        "none" | "0" => UnifiedRw::None,
        "mixed" | "1" => UnifiedRw::Mixed,
        "both" | "2" => UnifiedRw::Both,
        _ => return Err("expected none (0), mixed (1) or both (2), e.g. mixed".into()),
    };
    Ok(())
}

pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "disk_util",
        [],
        true,
        "1 (default): report the utilisation of the devices holding the job's files",
        |j, v| {
            j.reporting.disk_util = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "slat_percentiles",
        [],
        true,
        "Report submission latency percentiles (queueing engines)",
        |j, v| {
            j.reporting.slat_percentiles = parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "unified_rw_reporting",
        [],
        true,
        "Report directions apart (none), summed as 'mixed' (mixed), or both",
        set_unified
    ),
    opt!(
        "significant_figures",
        [],
        false,
        "Significant figures of the text output's IOPS, bandwidth and sizes (1 to 10)",
        |j, v| {
            j.reporting.sig_figs = parse_int_in(v, 1, 10)? as u32;
            Ok(())
        }
    ),
    opt!(
        "kb_base",
        [],
        false,
        "Size suffixes and text-output units in base 1024 (k = 1024, kib = 1000) or 1000 (k = 1000, kib = 1024)",
        |j, v| {
            j.reporting.kb_base = match v {
                "1024" => 1024,
                "1000" => 1000,
                _ => return Err("expected 1024 or 1000, e.g. kb_base=1000".into()),
            };
            Ok(())
        }
    ),
    opt!(
        "unit_base",
        [],
        false,
        "Bandwidth in the text output in bytes (0 or 8, the default) or bits (1)",
        |j, v| {
            j.reporting.unit_bits = match v {
                "0" | "8" => false,
                "1" => true,
                _ => return Err("expected 0 (auto: bytes), 8 (bytes) or 1 (bits), e.g. unit_base=1".into()),
            };
            Ok(())
        }
    ),
];
