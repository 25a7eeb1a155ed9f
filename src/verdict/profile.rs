//! Verdicts of `iogauge check` profiles: a metric against its thresholds (boundaries as the
//! profile states them), and a rank against the profile's reference systems.

use super::criteria::OutcomeKind;
use super::criteria::Profile;
use super::criteria::{Better, Metric, MetricKey};
use crate::model::{DDIR_READ, DDIR_WRITE};
use crate::report::small_files::SmallFilesReport;
use crate::report::Report;

/// What a profile's run produced.
// One per profile run, never in a collection: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub(crate) enum Measured {
    Fio(Report),
    SmallFiles(SmallFilesReport),
}

/// The value of `k` in a run; None when it was not measured.
pub(crate) fn metric_value(m: &Measured, k: MetricKey) -> Option<f64> {
    match m {
        Measured::Fio(r) => {
            let j = r.jobs.first()?;
            match k {
                MetricKey::SyncP99 => j
                    .sync
                    .lat
                    .percentiles
                    .iter()
                    .find(|(p, _)| *p == 99.0)
                    .map(|(_, v)| *v as f64),
                MetricKey::WriteIops => {
                    (j.dirs[DDIR_WRITE].total_ios > 0).then_some(j.dirs[DDIR_WRITE].iops)
                }
                MetricKey::ReadIops => {
                    (j.dirs[DDIR_READ].total_ios > 0).then_some(j.dirs[DDIR_READ].iops)
                }
                _ => None,
            }
        }
        Measured::SmallFiles(s) => match k {
            MetricKey::SmallFilesTotal => Some(s.total_ns() as f64),
            MetricKey::FilesPerSec => Some(s.files_per_sec()),
            MetricKey::CreateP99 => SmallFilesReport::p99(&s.create).map(|v| v as f64),
            MetricKey::ReadP99 => SmallFilesReport::p99(&s.read).map(|v| v as f64),
            _ => None,
        },
    }
}

/// Pass/warn/fail of `value` against `m`: lower-is-better passes strictly below `pass`,
/// higher-is-better passes at or above it; `warn` is the second step the same way.
pub(crate) fn judge(m: &Metric, value: f64) -> OutcomeKind {
    let ok = |limit: f64| match m.better {
        Better::Lower => value < limit,
        Better::Higher => value >= limit,
    };
    if ok(m.pass.value().unwrap_or(f64::NAN)) {
        OutcomeKind::Pass
    } else if m
        .warn
        .as_ref()
        .is_some_and(|w| ok(w.value().unwrap_or(f64::NAN)))
    {
        OutcomeKind::Warn
    } else {
        OutcomeKind::Fail
    }
}

/// A value in the metric's natural words: `0.27 ms`, `4573 IOPS`.
pub(crate) fn show(k: MetricKey, v: f64) -> String {
    if k == MetricKey::FilesPerSec {
        return format!("{v:.0} files/s");
    }
    if k.is_latency() {
        let ms = v / 1e6;
        if ms >= 1000.0 {
            return format!("{:.2} s", ms / 1000.0).replace(".00 s", " s");
        }
        if ms < 0.01 {
            format!("{:.1} µs", v / 1e3)
        } else if ms.fract() == 0.0 {
            format!("{ms:.0} ms")
        } else if ms < 10.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.1} ms")
        }
    } else {
        format!("{v:.0} IOPS")
    }
}

/// The threshold as a condition: `< 10 ms`, `≥ 1000 IOPS`.
pub(crate) fn threshold_text(m: &Metric) -> String {
    let v = m.pass.value().unwrap_or(f64::NAN);
    let op = match m.better {
        Better::Lower => "<",
        Better::Higher => "≥",
    };
    let mut s = format!("{op} {}", show(m.key, v));
    if let Some(w) = m.warn.as_ref().and_then(|w| w.value().ok()) {
        s.push_str(&format!(
            " to pass, {op} {} to avoid failing",
            show(m.key, w)
        ));
    }
    s
}

/// A reference system with its value, ordered best first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranked {
    pub system: String,
    pub value: f64,
}

/// The profile's references that have `k`, best first, and how many of them `value` beats.
pub(crate) fn rank(p: &Profile, k: MetricKey, better: Better, value: f64) -> (Vec<Ranked>, usize) {
    let mut refs: Vec<Ranked> = p
        .references
        .iter()
        .filter_map(|r| {
            r.get(k).map(|v| Ranked {
                system: r.system.clone(),
                value: v,
            })
        })
        .collect();
    let beats = |a: f64, b: f64| match better {
        Better::Lower => a < b,
        Better::Higher => a > b,
    };
    refs.sort_by(|a, b| {
        if beats(a.value, b.value) {
            std::cmp::Ordering::Less
        } else if beats(b.value, a.value) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    let beaten = refs.iter().filter(|r| beats(value, r.value)).count();
    (refs, beaten)
}

/// One line placing `value` among the references and against the threshold, e.g.
/// "p99 0.27 ms: faster than all 7 reference systems; 37× under the 10 ms limit".
pub(crate) fn rank_line(p: &Profile, m: &Metric, value: f64) -> Option<String> {
    let (refs, beaten) = rank(p, m.key, m.better, value);
    if refs.is_empty() {
        return None;
    }
    let n = refs.len();
    let word = match m.better {
        Better::Lower => "faster",
        Better::Higher => "more",
    };
    let mut s = format!("{}: ", show(m.key, value));
    let worse = if word == "faster" { "slower" } else { "fewer" };
    s.push_str(&match (beaten, n) {
        (1, 1) => format!("{word} than the one reference system"),
        (0, 1) => format!("{worse} than the one reference system"),
        (b, n) if b == n => format!("{word} than all {n} reference systems"),
        (0, n) => format!("{worse} than all {n} reference systems"),
        (b, n) => format!("{word} than {b} of {n} reference systems"),
    });
    let limit = m.pass.value().ok()?;
    if let Some(margin) = margin(m, value, limit) {
        s.push_str("; ");
        s.push_str(&margin);
    }
    // With two references of different kinds (GitLab's SSD vs spinning disk), say which is nearer.
    if n == 2 {
        let dist = |r: &Ranked| (value.max(1.0) / r.value.max(1.0)).ln().abs();
        let near = if dist(&refs[0]) <= dist(&refs[1]) {
            &refs[0]
        } else {
            &refs[1]
        };
        s.push_str(&format!("; closer to the {}", near.system));
    }
    Some(s)
}

/// How far `value` is from the pass limit, in plain words: "37× under the 10 ms limit" when
/// it is at least twice as good, else the difference and its share of the limit, "2 ms (20 %)
/// under the 10 ms limit" (a ratio of 1.25 would read "1×"). A failing value is "over" a
/// latency limit and "under" a rate's.
fn margin(m: &Metric, value: f64, limit: f64) -> Option<String> {
    if !(value.is_finite() && limit.is_finite() && value > 0.0 && limit > 0.0) {
        return None;
    }
    let lim = show(m.key, limit);
    let (ratio, good_word, bad_word) = match m.better {
        Better::Lower => (limit / value, "under", "over"),
        Better::Higher => (value / limit, "over", "under"),
    };
    if value == limit {
        return Some(format!("at the {lim} limit"));
    }
    let word = if ratio > 1.0 { good_word } else { bad_word };
    if ratio >= 2.0 || ratio <= 0.5 {
        let r = ratio.max(1.0 / ratio);
        let r = if r < 10.0 {
            format!("{r:.1}").replace(".0", "")
        } else {
            format!("{r:.0}")
        };
        return Some(format!("{r}× {word} the {lim} limit"));
    }
    let diff = (value - limit).abs();
    let pct = 100.0 * diff / limit;
    // Below 1 %, "0 %" would read as no margin at all.
    let pct = if pct < 1.0 {
        format!("{pct:.1}")
    } else {
        format!("{pct:.0}")
    };
    Some(format!(
        "{} ({pct} %) {word} the {lim} limit",
        show(m.key, diff)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::profiles::get;

    #[test]
    fn boundaries_are_where_the_profiles_say() {
        let etcd = &get("etcd").unwrap().metrics[0];
        assert_eq!(judge(etcd, 9_999_999.0), OutcomeKind::Pass);
        assert_eq!(judge(etcd, 10_000_000.0), OutcomeKind::Fail);
        let sync = &get("sync-iops").unwrap().metrics[0];
        assert_eq!(judge(sync, 1000.0), OutcomeKind::Pass);
        assert_eq!(judge(sync, 999.9), OutcomeKind::Warn);
        assert_eq!(judge(sync, 750.0), OutcomeKind::Warn);
        assert_eq!(judge(sync, 749.9), OutcomeKind::Fail);
        let g = get("gitlab").unwrap();
        assert_eq!(judge(&g.metrics[0], 2000.0), OutcomeKind::Pass);
        assert_eq!(judge(&g.metrics[0], 1999.0), OutcomeKind::Fail);
        assert_eq!(judge(&g.metrics[1], 700.0), OutcomeKind::Pass);
        assert_eq!(judge(&g.metrics[1], 699.0), OutcomeKind::Fail);
    }

    #[test]
    fn ranks_against_the_references() {
        let p = get("etcd").unwrap();
        let m = &p.metrics[0];
        assert_eq!(
            rank_line(&p, m, 270_000.0).unwrap(),
            "0.27 ms: faster than all 7 reference systems; 37× under the 10 ms limit"
        );
        assert_eq!(
            rank_line(&p, m, 5_000_000.0).unwrap(),
            "5 ms: faster than 4 of 7 reference systems; 2× under the 10 ms limit"
        );
        assert_eq!(
            rank_line(&p, m, 40_000_000.0).unwrap(),
            "40 ms: slower than all 7 reference systems; 4× over the 10 ms limit"
        );
        // Under 2×, the margin itself: 8 ms was "1× under the 10 ms limit".
        assert_eq!(
            rank_line(&p, m, 8_000_000.0).unwrap(),
            "8 ms: faster than 2 of 7 reference systems; 2 ms (20 %) under the 10 ms limit"
        );
        assert_eq!(
            rank_line(&p, m, 12_500_000.0).unwrap(),
            "12.5 ms: faster than 2 of 7 reference systems; 2.50 ms (25 %) over the 10 ms limit"
        );
        assert_eq!(
            rank_line(&p, m, 4_000_000.0).unwrap(),
            "4 ms: faster than all 7 reference systems; 2.5× under the 10 ms limit"
        );
        let (refs, _) = rank(&p, m.key, m.better, 1.0);
        assert_eq!(
            refs[0].system,
            "physical RHEL 7.8, consumer NVMe + VDO dedup"
        );
        assert_eq!(refs[6].system, "physical RHEL 8.2, 5.4k rpm 2.5\" HDD");

        let g = get("gitlab").unwrap();
        assert_eq!(
            rank_line(&g, &g.metrics[0], 30_000.0).unwrap(),
            "30000 IOPS: more than 1 of 2 reference systems; 15× over the 2000 IOPS limit; closer to \
             the networked SSD (GitLab docs)"
        );
        assert!(rank_line(&g, &g.metrics[1], 900.0)
            .unwrap()
            .ends_with("closer to the spinning disk (GitLab docs)"));
        let s = get("sync-iops").unwrap();
        assert_eq!(
            rank_line(&s, &s.metrics[0], 640.0).unwrap(),
            "640 IOPS: fewer than the one reference system; 360 IOPS (36 %) under the 1000 IOPS limit"
        );
        assert_eq!(
            rank_line(&s, &s.metrics[0], 1128.0).unwrap(),
            "1128 IOPS: more than the one reference system; 128 IOPS (13 %) over the 1000 IOPS limit"
        );
    }

    #[test]
    fn threshold_texts() {
        assert_eq!(threshold_text(&get("etcd").unwrap().metrics[0]), "< 10 ms");
        assert_eq!(
            threshold_text(&get("sync-iops").unwrap().metrics[0]),
            "≥ 1000 IOPS to pass, ≥ 750 IOPS to avoid failing"
        );
    }
}
