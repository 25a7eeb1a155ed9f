//! Which of a profile's judged metrics a sequential run can watch, and the spec the run
//! watches them by (issue 27). A profile judged by anything else runs its full recipe.

use super::criteria::{MetricKey, Profile};
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
}
