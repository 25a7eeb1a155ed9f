//! `iogauge compare`'s result, typed like the other documents: what was compared, how, and per
//! metric both values, the ratio B/A with its 95 % confidence interval and a verdict.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `iogauge compare`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompareDocument {
    /// Layout version of this document (`document::SCHEMA_VERSION`).
    #[serde(deserialize_with = "super::document::known_schema_version")]
    pub schema_version: u32,
    /// The iogauge version that compared.
    pub iogauge: String,
    /// The baseline runs.
    pub a: Vec<RunRef>,
    /// The runs compared with it.
    pub b: Vec<RunRef>,
    /// How the uncertainty was estimated: `within-run block bootstrap` (one run per side) or
    /// `Mann-Whitney U` (several).
    pub method: String,
    /// What a verdict needs (runs per side, intervals per run) and whether these runs can
    /// give one, in one sentence.
    #[serde(default)]
    pub needs: String,
    /// What the numbers do not cover (e.g. run-to-run variance with one run per side).
    pub notes: Vec<String>,
    /// One entry per metric found on both sides, in A's order.
    pub metrics: Vec<MetricComparison>,
    /// Metrics found on one side only.
    pub unmatched: Vec<String>,
}

/// One compared run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRef {
    /// As given: a history id or a file.
    pub source: String,
    /// `check`, `kube` or `fio`.
    pub kind: String,
    /// The host it ran on, when the document says.
    pub host: Option<String>,
    /// What it measured (directory, device, targets), when the document says.
    pub target: Option<String>,
    /// When it ran (RFC 3339, UTC): the history's start time for a history id, else what the
    /// document says (fio's end `timestamp`); absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// Why the run stopped early, when it did ("interrupted by SIGINT"): such runs are compared
    /// only with `--include-interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
}

/// B against A for one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricComparison {
    /// What matches the metric across runs (`etcd/sync_p99`).
    pub key: String,
    /// In words.
    pub label: String,
    /// The unit of `a` and `b`.
    pub unit: String,
    /// `lower` or `higher` is better.
    pub better: String,
    /// A's value (the median over A's runs).
    pub a: f64,
    /// B's value (the median over B's runs).
    pub b: f64,
    /// Every run's value, A's then B's.
    pub a_values: Vec<f64>,
    /// B's runs' values.
    pub b_values: Vec<f64>,
    /// B/A of the values shown (`b / a`: with several runs per side, the ratio of the medians).
    pub ratio: f64,
    /// With several runs per side, the Hodges–Lehmann estimate of B/A (the median of all
    /// pairwise ratios), which `ci` surrounds and the verdict judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<f64>,
    /// The 95 % confidence interval of B/A (around `ratio` with one run per side, around
    /// `estimate` with several), when it could be estimated.
    pub ci: Option<[f64; 2]>,
    /// Mann–Whitney's two-sided p-value (several runs per side).
    pub p_value: Option<f64>,
    /// better, worse, same (no difference beyond noise) or unknown.
    pub verdict: ChangeVerdict,
    /// The relative change below which a difference counts as noise (0.05 = 5 %).
    pub noise: f64,
    /// Why the verdict is unknown or what limits it.
    pub note: Option<String>,
}

/// Whether B is better, worse or the same as A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeVerdict {
    /// Better beyond noise, with the interval excluding no change.
    Better,
    /// Worse beyond noise, with the interval excluding no change.
    Worse,
    /// No difference beyond noise (`~`).
    Same,
    /// The data cannot tell (too few intervals or runs).
    Unknown,
}

impl ChangeVerdict {
    /// In the sentence that leads each metric.
    pub(crate) fn words(self) -> &'static str {
        match self {
            ChangeVerdict::Better => "better",
            ChangeVerdict::Worse => "worse",
            ChangeVerdict::Same => "no change beyond noise",
            ChangeVerdict::Unknown => "cannot tell",
        }
    }

    /// The word or sign in the text table.
    pub(crate) fn sign(self) -> &'static str {
        match self {
            ChangeVerdict::Better => "better",
            ChangeVerdict::Worse => "worse",
            ChangeVerdict::Same => "~",
            ChangeVerdict::Unknown => "?",
        }
    }
}
