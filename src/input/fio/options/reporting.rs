//! How results are reported: `slat_percentiles` (model: [`crate::model::ReportingSpec`]).

use super::Opt;
use crate::model::units::parse_bool;

pub(super) static OPTIONS: &[Opt] = &[opt!(
    "slat_percentiles",
    [],
    true,
    "Report submission latency percentiles (queueing engines)",
    |j, v| {
        j.reporting.slat_percentiles = parse_bool(v)?;
        Ok(())
    }
)];
