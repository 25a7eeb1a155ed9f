//! How results are reported: `slat_percentiles`, `unified_rw_reporting` (model:
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
];
