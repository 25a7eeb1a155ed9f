//! Which of a profile's judged metrics (or a troubleshoot collector's analyzer conditions) a
//! sequential run can watch, and the spec the run watches them by (issue 27). A profile or
//! collector judged by anything else runs its full recipe.

use super::criteria::{Condition, MetricKey, Profile, Stat, PERCENTILES};
use crate::model::sequential::{SequentialSpec, Watched, WatchedMetric};
use crate::model::{DDIR_READ, DDIR_WRITE};

/// How sure a sequential verdict must be, of all its decisions together.
pub(crate) const CONFIDENCE: f64 = 0.999;
/// How close to a threshold a value may lie and still be decided early (relative).
pub(crate) const MARGIN: f64 = 0.10;

/// The spec for `p`'s judged metrics; Err says why it cannot run sequentially (the small-files
/// test does a fixed number of files, which is its measure).
pub(crate) fn spec_of(p: &Profile) -> Result<SequentialSpec, String> {
    let mut watch = Vec::new();
    for m in &p.metrics {
        let metric = match m.key {
            MetricKey::SyncP99 => WatchedMetric::SyncQuantile(0.99),
            MetricKey::WriteIops => WatchedMetric::Iops(DDIR_WRITE),
            MetricKey::ReadIops => WatchedMetric::Iops(DDIR_READ),
            k => {
                return Err(format!(
                    "it judges {}, which only the whole run measures",
                    k.name()
                ))
            }
        };
        let mut thresholds = vec![m.pass.value()?];
        if let Some(w) = &m.warn {
            thresholds.push(w.value()?);
        }
        watch.push(Watched {
            key: m.key.name().to_string(),
            metric,
            thresholds,
        });
    }
    if watch.is_empty() {
        return Err("it judges no metric".into());
    }
    Ok(SequentialSpec {
        watch,
        confidence: CONFIDENCE,
        margin: MARGIN,
    })
}

/// The spec for a troubleshoot `filesystemPerformance` collector judged by `conditions` (every
/// `when` of the analyzers that read it). `sync` names the latency its result holds: "fsync" or
/// "fdatasync" (the sync after each write), None for plain writes (the write's own latency).
/// A percentile becomes a quantile watch and `iops` the write rate, each condition's value a
/// threshold (equal ones once). `fileNotCollected` and an empty `when` compare no number: a
/// run that stops early still writes its result, so neither changes. Err says why the
/// collector runs whole: min, max and the average are only known once the whole run is done.
pub(crate) fn spec_of_conditions<'a>(
    conditions: impl IntoIterator<Item = &'a Condition>,
    sync: Option<&str>,
) -> Result<SequentialSpec, String> {
    let mut watch: Vec<Watched> = Vec::new();
    for c in conditions {
        let Condition::Compare { stat, value, .. } = c else {
            continue;
        };
        let (key, metric) = match *stat {
            Stat::P(i) => {
                let (name, pct) = PERCENTILES[i];
                // 99.9 / 100 is 0.9990000000000001 in binary: rounded to the table's digits.
                let q = (pct * 100.0).round() / 10_000.0;
                let key = format!("{}_{}", sync.unwrap_or("write"), name.to_ascii_lowercase());
                let metric = match sync {
                    Some(_) => WatchedMetric::SyncQuantile(q),
                    None => WatchedMetric::WriteQuantile(q),
                };
                (key, metric)
            }
            Stat::Iops => ("write_iops".to_string(), WatchedMetric::Iops(DDIR_WRITE)),
            Stat::Min | Stat::Max | Stat::Average => {
                let word = match stat {
                    Stat::Min => "min",
                    Stat::Max => "max",
                    _ => "average",
                };
                return Err(format!(
                    "an analyzer compares {word}, which only the whole run measures"
                ));
            }
        };
        match watch.iter_mut().find(|w| w.key == key) {
            Some(w) if w.thresholds.contains(value) => {}
            Some(w) => w.thresholds.push(*value),
            None => watch.push(Watched {
                key,
                metric,
                thresholds: vec![*value],
            }),
        }
    }
    if watch.is_empty() {
        return Err("no analyzer compares a percentile or iops of it".into());
    }
    Ok(SequentialSpec {
        watch,
        confidence: CONFIDENCE,
        margin: MARGIN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::profiles;

    #[test]
    fn built_in_profiles_watch_what_they_judge() {
        let etcd = spec_of(&profiles::get("etcd").unwrap()).unwrap();
        assert_eq!(etcd.watch.len(), 1);
        assert_eq!(etcd.watch[0].metric, WatchedMetric::SyncQuantile(0.99));
        assert_eq!(etcd.watch[0].thresholds, vec![10e6]);
        let sync = spec_of(&profiles::get("sync-iops").unwrap()).unwrap();
        assert_eq!(sync.watch[0].thresholds, vec![1000.0, 750.0]);
        assert_eq!(sync.thresholds(), 2);
        let gitlab = spec_of(&profiles::get("gitlab").unwrap()).unwrap();
        assert_eq!(
            gitlab.watch.iter().map(|w| w.metric).collect::<Vec<_>>(),
            vec![
                WatchedMetric::Iops(DDIR_READ),
                WatchedMetric::Iops(DDIR_WRITE)
            ]
        );
        assert_eq!(
            spec_of(&profiles::get("small-files").unwrap()).unwrap_err(),
            "it judges small_files_total, which only the whole run measures"
        );
    }

    fn when(ws: &[&str], sync: Option<&str>) -> Result<SequentialSpec, String> {
        let cs: Vec<Condition> = ws
            .iter()
            .map(|w| crate::input::troubleshoot::analyzer::parse_when(w).unwrap())
            .collect();
        spec_of_conditions(&cs, sync)
    }

    #[test]
    fn every_operator_gives_its_value_as_a_threshold() {
        for op in ["<", "<=", ">", ">=", "=", "=="] {
            let s = when(&[&format!("p99 {op} 10ms")], Some("fdatasync")).unwrap();
            assert_eq!(s.watch.len(), 1, "{op}");
            assert_eq!(s.watch[0].key, "fdatasync_p99");
            assert_eq!(s.watch[0].metric, WatchedMetric::SyncQuantile(0.99));
            assert_eq!(s.watch[0].thresholds, vec![10e6], "{op}");
            assert_eq!((s.confidence, s.margin), (CONFIDENCE, MARGIN));
        }
    }

    #[test]
    fn each_percentile_watches_its_quantile_of_the_latency_the_result_holds() {
        for (kw, q, key) in [
            ("p50", 0.5, "p50"),
            ("p90", 0.9, "p90"),
            ("p99", 0.99, "p99"),
            ("p999", 0.999, "p999"),
            ("P9999", 0.9999, "p9999"),
            ("p1", 0.01, "p1"),
        ] {
            let w = |sync| {
                when(&[&format!("{kw} < 3ms")], sync)
                    .unwrap()
                    .watch
                    .remove(0)
            };
            let fsync = w(Some("fsync"));
            assert_eq!(fsync.key, format!("fsync_{key}"));
            assert_eq!(fsync.metric, WatchedMetric::SyncQuantile(q), "{kw}");
            let write = w(None);
            assert_eq!(write.key, format!("write_{key}"));
            assert_eq!(write.metric, WatchedMetric::WriteQuantile(q), "{kw}");
            assert_eq!(write.thresholds, vec![3e6]);
        }
    }

    #[test]
    fn several_conditions_on_one_metric_are_several_thresholds() {
        // troubleshoot's example: pass < 3 ms, pass < 5 ms, warn < 8 ms, fail >= 8 ms; the
        // 8 ms of warn and fail is one threshold, and iops a metric of its own.
        let s = when(
            &[
                "fileNotCollected",
                "p99 < 3ms",
                "p99 < 5ms",
                "p99 < 8ms",
                "p99 >= 8ms",
                "iops >= 500",
                "",
            ],
            Some("fdatasync"),
        )
        .unwrap();
        assert_eq!(s.watch[0].thresholds, vec![3e6, 5e6, 8e6]);
        assert_eq!(s.watch[1].key, "write_iops");
        assert_eq!(s.watch[1].metric, WatchedMetric::Iops(DDIR_WRITE));
        assert_eq!(s.watch[1].thresholds, vec![500.0]);
        assert_eq!(s.thresholds(), 4);
    }

    #[test]
    fn min_max_and_average_run_whole_and_so_does_nothing_to_watch() {
        for (w, word) in [
            ("min > 1ms", "min"),
            ("max < 1s", "max"),
            ("average < 2ms", "average"),
            ("avg >= 2ms", "average"),
        ] {
            assert_eq!(
                when(&["p99 < 10ms", w], Some("fdatasync")).unwrap_err(),
                format!("an analyzer compares {word}, which only the whole run measures")
            );
        }
        for ws in [&["fileNotCollected", ""][..], &[]] {
            assert_eq!(
                when(ws, None).unwrap_err(),
                "no analyzer compares a percentile or iops of it"
            );
        }
    }
}
