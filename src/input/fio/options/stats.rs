//! What a job records: `disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement`
//! and `stats` (model: [`crate::model::RecordSpec`] in `ReportingSpec::record`).

use super::Opt;
use crate::model::units::parse_bool;
use crate::model::JobSpec;

/// fio's fix-ups once a job's options are in: a latency not recorded has no percentiles.
pub(crate) fn settle(j: &mut JobSpec) {
    let r = j.reporting.record;
    j.lat_percentiles &= r.lat;
    j.clat_percentiles &= r.clat;
    j.reporting.slat_percentiles &= r.slat;
}

pub(super) static OPTIONS: &[Opt] = &[
    opt!(
        "disable_lat",
        [],
        true,
        "Do not record total latency (lat; max_latency is then not checked either)",
        |j, v| {
            j.reporting.record.lat = !parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "disable_clat",
        [],
        true,
        "Do not record completion latency (clat, its percentiles and latency buckets)",
        |j, v| {
            j.reporting.record.clat = !parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "disable_slat",
        [],
        true,
        "Do not record submission latency (slat)",
        |j, v| {
            j.reporting.record.slat = !parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "disable_bw_measurement",
        ["disable_bw"],
        true,
        "Do not take per-I/O bandwidth samples (a write_bw_log with log_avg_msec=0 stays empty)",
        |j, v| {
            j.reporting.record.bw = !parse_bool(v)?;
            Ok(())
        }
    ),
    opt!(
        "stats",
        [],
        true,
        "0: record no statistics for this job (fio reports an empty entry for it)",
        |j, v| {
            j.reporting.record.stats = parse_bool(v)?;
            Ok(())
        }
    ),
];
