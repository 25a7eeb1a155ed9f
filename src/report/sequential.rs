//! How a sequential run (issue 27) reached its verdict: whether it stopped early, after how
//! much work, and each threshold's decision with the confidence bound that made it. Filled by
//! the run (`run/sequential.rs`), carried by the job's report and the check document.

use super::units::thousands;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A sequential run's course; absent from a run of the full, published recipe (`--full`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SequentialRun {
    /// Every threshold was decided before the recipe's end, and the run stopped there.
    pub stopped_early: bool,
    /// Of all decisions together, e.g. 0.999.
    pub confidence: f64,
    /// Relative margin around each threshold inside which nothing is decided (0.1 = 10 %).
    pub margin: f64,
    /// I/Os done when the run ended (for a sync metric: the syncs).
    pub ios: u64,
    /// Seconds measured when the run ended (after any ramp).
    pub seconds: f64,
    /// What the full recipe does: its I/Os (a size-bound job) or None (a time-bound one).
    pub full_ios: Option<u64>,
    /// The full recipe's measured seconds (a time-bound job) or None (a size-bound one).
    pub full_seconds: Option<f64>,
    /// One per threshold of every watched metric.
    pub decisions: Vec<ThresholdDecision>,
}

/// One threshold: which side of it the metric's true value lies, as far as the data told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThresholdDecision {
    /// The metric's key (`sync_p99`, `write_iops`).
    pub metric: String,
    /// The threshold, in the metric's unit (ns or IOPS).
    pub threshold: f64,
    /// Where the data put the metric's true value.
    pub side: Side,
    /// The confidence bound that decided it, in the metric's unit: an upper bound when the
    /// value is below the threshold, a lower bound when above; None while undecided.
    pub bound: Option<f64>,
    /// Looks at the data that spent part of the risk (the correction for looking repeatedly).
    pub looks: u32,
}

/// Where the true value lies relative to a threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Within the margin, or too few samples to tell, when the run ended.
    Undecided,
    /// Below the threshold by more than the margin.
    Below,
    /// Above the threshold by more than the margin.
    Above,
}

impl SequentialRun {
    /// How the verdict was reached, in one line for every renderer, e.g. `decided after 1,412
    /// I/Os in 2.1 s of a recipe of 10,029 I/Os: p99 fdatasync latency ≤ 3.92 ms (threshold
    /// 10 ms) at 99.9 % confidence`. `label_of` names a metric key in the profile's words.
    pub(crate) fn line(&self, label_of: &dyn Fn(&str) -> String) -> String {
        let done = format!("{} I/Os in {:.1} s", thousands(self.ios), self.seconds);
        let full = match (self.full_ios, self.full_seconds) {
            (Some(n), _) => format!("{} I/Os", thousands(n)),
            (None, Some(s)) => format!("{s:.0} s"),
            (None, None) => "unknown length".into(),
        };
        let confidence = format!("{} % confidence", percent(self.confidence));
        if self.stopped_early {
            let said: Vec<String> = self
                .decisions
                .iter()
                .map(|d| decision_text(d, label_of))
                .collect();
            return format!(
                "decided after {done} of a recipe of {full}: {} at {confidence}",
                said.join("; ")
            );
        }
        let open: Vec<String> = self
            .decisions
            .iter()
            .filter(|d| d.side == Side::Undecided)
            .map(|d| format!("{} {}", label_of(&d.metric), value(&d.metric, d.threshold)))
            .collect();
        if open.is_empty() {
            format!("ran the full recipe ({done})")
        } else {
            format!(
                "ran the full recipe ({done}): not decided at {confidence} against {} (within \
                 {} % of it, or too few samples to tell)",
                open.join(", "),
                percent(self.margin)
            )
        }
    }
}

fn decision_text(d: &ThresholdDecision, label_of: &dyn Fn(&str) -> String) -> String {
    let (op, bound) = match (d.side, d.bound) {
        (Side::Below, Some(b)) => ("≤", value(&d.metric, b)),
        (Side::Above, Some(b)) => ("≥", value(&d.metric, b)),
        (Side::Below, None) => ("<", value(&d.metric, d.threshold)),
        (Side::Above, None) => (">", value(&d.metric, d.threshold)),
        (Side::Undecided, _) => ("?", value(&d.metric, d.threshold)),
    };
    format!(
        "{} {op} {bound} (threshold {})",
        label_of(&d.metric),
        value(&d.metric, d.threshold)
    )
}

/// A metric's value in its natural unit: ns latencies in ms, rates in IOPS.
fn value(metric: &str, v: f64) -> String {
    if metric.ends_with("_iops") {
        format!("{} IOPS", thousands(v.round() as u64))
    } else if v >= 1e9 {
        format!("{} s", trimmed(v / 1e9, 2))
    } else {
        let ms = v / 1e6;
        let digits = if ms >= 10.0 {
            1
        } else if ms >= 1.0 {
            2
        } else {
            3
        };
        format!("{} ms", trimmed(ms, digits))
    }
}

/// `v` with at most `digits` decimals, trailing zeros dropped.
fn trimmed(v: f64, digits: usize) -> String {
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// 0.999 → "99.9".
fn percent(f: f64) -> String {
    let s = format!("{:.2}", f * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stopped: bool, side: Side, bound: Option<f64>) -> SequentialRun {
        SequentialRun {
            stopped_early: stopped,
            confidence: 0.999,
            margin: 0.1,
            ios: 1412,
            seconds: 2.07,
            full_ios: Some(10029),
            full_seconds: None,
            decisions: vec![ThresholdDecision {
                metric: "sync_p99".into(),
                threshold: 10e6,
                side,
                bound,
                looks: 3,
            }],
        }
    }

    #[test]
    fn the_line_says_how_the_verdict_was_reached() {
        let label = |k: &str| format!("<{k}>");
        assert_eq!(
            run(true, Side::Below, Some(3_921_000.0)).line(&label),
            "decided after 1,412 I/Os in 2.1 s of a recipe of 10,029 I/Os: <sync_p99> ≤ 3.92 ms \
             (threshold 10 ms) at 99.9 % confidence"
        );
        assert_eq!(
            run(false, Side::Undecided, None).line(&label),
            "ran the full recipe (1,412 I/Os in 2.1 s): not decided at 99.9 % confidence \
             against <sync_p99> 10 ms (within 10 % of it, or too few samples to tell)"
        );
        let mut r = run(true, Side::Above, Some(1830.4));
        r.decisions[0].metric = "write_iops".into();
        r.decisions[0].threshold = 1000.0;
        r.full_ios = None;
        r.full_seconds = Some(60.0);
        assert_eq!(
            r.line(&label),
            "decided after 1,412 I/Os in 2.1 s of a recipe of 60 s: <write_iops> ≥ 1,830 IOPS \
             (threshold 1,000 IOPS) at 99.9 % confidence"
        );
    }
}
