//! Verdicts: outcomes decided from results: troubleshoot analyzers, `check` profile criteria,
//! reference ranks and trust warnings. Uses report types only.

pub mod check;
pub mod criteria;
pub mod fsperf;
pub mod godur;
pub mod profile;
pub mod trust;
