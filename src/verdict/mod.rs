//! Verdicts: outcomes decided from results (troubleshoot analyzers now; profile criteria and
//! reference ranks later). Uses report types only.

pub mod fsperf;
pub mod godur;
pub mod profile;
