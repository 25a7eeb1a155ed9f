//! Verdicts: outcomes decided from results: troubleshoot analyzers, `check` profile criteria,
//! reference ranks and trust warnings. Uses report types only.

pub(crate) mod check;
pub(crate) mod criteria;
pub(crate) mod fsperf;
pub(crate) mod godur;
pub(crate) mod profile;
pub(crate) mod sequential;
pub(crate) mod trust;
