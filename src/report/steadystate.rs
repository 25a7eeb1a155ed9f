//! fio's steady-state result of one job (`steadystate=`, `ss_dur=`): the JSON `steadystate`
//! block and the text line, as fio 3.33's stat.c prints them (show_ss_normal and the block in
//! show_thread_status_json).

use super::units::{num2str, Unit, SIG_FIGS};

/// What the steady-state detection saw for one job (or group with group_reporting).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SteadyStateReport {
    /// The criterion's name: `iops`, `iops_slope`, `bw` or `bw_slope`.
    pub kind: String,
    /// The limit, a percentage when `percent`.
    pub limit: f64,
    /// The limit and criterion are percentages of the mean.
    pub percent: bool,
    /// Judged on IOPS (else bandwidth).
    pub iops_based: bool,
    /// Judged on the slope (else the largest deviation from the mean).
    pub slope_based: bool,
    /// The window, in one-second samples (fio's `ss_dur`).
    pub duration: u64,
    /// The steady state was reached (and the job ended then).
    pub attained: bool,
    /// The last value of the criterion.
    pub criterion: f64,
    /// The last largest deviation from the mean (deviation criteria).
    pub max_deviation: f64,
    /// The last slope, per second (slope criteria).
    pub slope: f64,
    /// The window's samples, oldest first, padded with zeros while it was not yet full.
    pub iops: Vec<u64>,
    /// Bandwidth samples, bytes per second, as `iops`.
    pub bw: Vec<u64>,
}

impl SteadyStateReport {
    fn mean(v: &[u64]) -> u64 {
        if v.is_empty() {
            0
        } else {
            v.iter().sum::<u64>() / v.len() as u64
        }
    }

    /// Mean bandwidth over the window (fio's integer mean).
    pub fn bw_mean(&self) -> u64 {
        Self::mean(&self.bw)
    }

    /// Mean IOPS over the window.
    pub fn iops_mean(&self) -> u64 {
        Self::mean(&self.iops)
    }

    fn pct(&self) -> &'static str {
        if self.percent {
            "%"
        } else {
            ""
        }
    }

    /// fio's JSON block, keys in fio's order.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "ss": format!("{}:{:.6}{}", self.kind, self.limit as f32, self.pct()),
            "duration": self.duration,
            "attained": u64::from(self.attained),
            "criterion": format!("{:.6}{}", self.criterion as f32, self.pct()),
            "max_deviation": self.max_deviation,
            "slope": self.slope,
            "data": {
                "bw_mean": self.bw_mean(),
                "iops_mean": self.iops_mean(),
                "iops": self.iops,
                "bw": self.bw,
            }
        })
    }

    /// fio's text line: `  steadystate  : attained=yes, bw=800KiB/s (800kB/s), iops=200, iops mean dev=0.000%`.
    pub(crate) fn text_line(&self) -> String {
        let kib = self.bw_mean() / 1024;
        format!(
            "  steadystate  : attained={}, bw={} ({}), iops={}, {}{}={:.3}{}\n",
            if self.attained { "yes" } else { "no" },
            per_kilo(kib, true),
            per_kilo(kib, false),
            num2str(self.iops_mean(), SIG_FIGS, false, Unit::None),
            if self.iops_based { "iops" } else { "bw" },
            if self.slope_based {
                " slope"
            } else {
                " mean dev"
            },
            self.criterion,
            self.pct()
        )
    }
}

/// fio's num2str of a number already in units of 1024 bytes (base 1024): the prefix starts at
/// kilo, IEC or SI by `pow2`, on the same number (fio prints `800KiB/s (800kB/s)`).
fn per_kilo(kib: u64, pow2: bool) -> String {
    let s = num2str(kib, SIG_FIGS, pow2, Unit::None);
    let (si, iec) = (
        ["k", "M", "G", "T", "P", "E"],
        ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"],
    );
    let prefixes = if pow2 { &iec } else { &si };
    // num2str added a prefix when the number was large: move it up one step.
    for (i, p) in prefixes.iter().enumerate().rev() {
        if let Some(n) = s.strip_suffix(p) {
            if let Some(next) = prefixes.get(i + 1) {
                return format!("{n}{next}B/s");
            }
        }
    }
    format!("{s}{}B/s", prefixes[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_text_as_fio() {
        let r = SteadyStateReport {
            kind: "iops".into(),
            limit: 10.0,
            percent: true,
            iops_based: true,
            slope_based: false,
            duration: 3,
            attained: true,
            criterion: 0.0,
            iops: vec![200, 200, 200],
            bw: vec![820148, 820020, 819200],
            ..Default::default()
        };
        assert_eq!(
            r.text_line(),
            "  steadystate  : attained=yes, bw=800KiB/s (800kB/s), iops=200, iops mean dev=0.000%\n"
        );
        let j = r.json();
        assert_eq!(j["ss"], "iops:10.000000%");
        assert_eq!(j["criterion"], "0.000000%");
        assert_eq!(j["data"]["bw_mean"], 819789);
        assert_eq!(j["data"]["iops_mean"], 200);
        assert_eq!(per_kilo(50_000, true), "48.8MiB/s");
    }
}
