//! troubleshoot's `filesystemPerformance` result file: `{"Min", "Max", "Average", "P1" … "P9999"}`
//! in integer nanoseconds. Written from a Report; read back from files that iogauge or
//! troubleshoot wrote, in either of troubleshoot's formats (that table, or fio's JSON).

use super::{LatSummary, Report};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// troubleshoot's percentile keys and the percentiles they stand for.
/// (One table, shared with the analyzer's `when` keywords and message placeholders.)
pub(crate) const KEYS: [(&str, f64); 17] = [
    ("P1", 1.0),
    ("P5", 5.0),
    ("P10", 10.0),
    ("P20", 20.0),
    ("P30", 30.0),
    ("P40", 40.0),
    ("P50", 50.0),
    ("P60", 60.0),
    ("P70", 70.0),
    ("P80", 80.0),
    ("P90", 90.0),
    ("P95", 95.0),
    ("P99", 99.0),
    ("P995", 99.5),
    ("P999", 99.9),
    ("P9995", 99.95),
    ("P9999", 99.99),
];

/// One collector's result, as troubleshoot's analyzer sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FsPerfResults {
    pub min: u64,
    pub max: u64,
    pub average: u64,
    /// In [`KEYS`] order.
    pub p: [u64; 17],
    /// Operations per second, when known (iogauge's own results).
    pub iops: Option<f64>,
}

/// Where troubleshoot keeps `filesystemPerformance` results under an output directory.
pub(crate) fn results_dir(out: &Path) -> PathBuf {
    out.join("host-collectors").join("filesystemPerformance")
}

/// Result files for `collector` in `out`: the host's own, then one per node subdirectory (as a
/// support bundle from several nodes holds them), with the node's name.
pub(crate) fn find_results(out: &Path, collector: &str) -> Vec<(Option<String>, PathBuf)> {
    let dir = results_dir(out);
    let file = format!("{collector}.json");
    let mut found = Vec::new();
    if dir.join(&file).is_file() {
        found.push((None, dir.join(&file)));
    }
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut nodes: Vec<(String, PathBuf)> = rd
            .filter_map(Result::ok)
            .filter(|e| e.path().join(&file).is_file())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.path().join(&file),
                )
            })
            .collect();
        nodes.sort();
        found.extend(nodes.into_iter().map(|(n, p)| (Some(n), p)));
    }
    found
}

/// Which latency of the run the result describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Measure {
    /// The sync after each write (troubleshoot's fio-based collector).
    Sync,
    /// The write alone (when the spec asked for neither sync nor datasync).
    Write,
}

impl FsPerfResults {
    fn from_summary(s: &LatSummary, iops: Option<f64>) -> Option<Self> {
        if s.n == 0 {
            return None;
        }
        let mut p = [0u64; 17];
        for (i, (_, q)) in KEYS.iter().enumerate() {
            p[i] = s.percentiles.iter().find(|(pq, _)| pq == q)?.1;
        }
        Some(FsPerfResults {
            min: s.min,
            max: s.max,
            average: s.mean as u64,
            p,
            iops,
        })
    }

    /// The result of the first job of `r`; None when that latency was not measured or the job's
    /// percentile list lacks troubleshoot's percentiles.
    pub(crate) fn from_report(r: &Report, m: Measure) -> Option<Self> {
        let j = r.jobs.first()?;
        let w = &j.dirs[crate::model::DDIR_WRITE];
        let iops = Some(w.iops);
        match m {
            Measure::Sync => Self::from_summary(&j.sync.lat, iops),
            Measure::Write => Self::from_summary(&w.clat, iops),
        }
    }

    /// The table: troubleshoot's keys in its order, integer nanoseconds.
    pub(crate) fn pairs(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("Min", self.min),
            ("Max", self.max),
            ("Average", self.average),
        ];
        v.extend(KEYS.iter().enumerate().map(|(i, (k, _))| (*k, self.p[i])));
        v
    }

    /// troubleshoot's file: the table in integer nanoseconds, keys in troubleshoot's order.
    pub(crate) fn to_json(&self) -> String {
        let m: Map<String, Value> = self
            .pairs()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        let mut s = serde_json::to_string_pretty(&Value::Object(m)).expect("plain JSON");
        s.push('\n');
        s
    }

    /// Reads a result file: troubleshoot's table (written by iogauge or troubleshoot), or the
    /// fio JSON troubleshoot's newer collector stores (job `fsperf`, its sync latency).
    pub(crate) fn from_json(text: &str) -> Result<Self, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if v.get("jobs").is_some() {
            return Self::from_fio_json(&v);
        }
        let num = |k: &str| -> Result<u64, String> {
            v.get(k)
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("expected the number '{k}' (troubleshoot's result table)"))
        };
        let (min, max, average) = (num("Min")?, num("Max")?, num("Average")?);
        let mut p = [0u64; 17];
        for (i, (k, _)) in KEYS.iter().enumerate() {
            p[i] = num(k)?;
        }
        Ok(FsPerfResults {
            min,
            max,
            average,
            p,
            iops: None,
        })
    }

    fn from_fio_json(v: &Value) -> Result<Self, String> {
        let jobs = v["jobs"].as_array().ok_or("fio JSON without a jobs list")?;
        let job = jobs
            .iter()
            .find(|j| j["jobname"] == "fsperf")
            .ok_or("fio JSON has no job named 'fsperf'")?;
        let lat = &job["sync"]["lat_ns"];
        let num = |x: &Value, what: &str| -> Result<f64, String> {
            x.as_f64()
                .ok_or_else(|| format!("fio JSON: jobs[fsperf].sync.lat_ns.{what} is missing"))
        };
        let mut p = [0u64; 17];
        for (i, (k, q)) in KEYS.iter().enumerate() {
            let key = format!("{q:.6}");
            p[i] = num(&lat["percentile"][&key], &format!("percentile.{key} ({k})"))? as u64;
        }
        Ok(FsPerfResults {
            min: num(&lat["min"], "min")? as u64,
            max: num(&lat["max"], "max")? as u64,
            average: num(&lat["mean"], "mean")? as u64,
            p,
            iops: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_seed_000_example() {
        // Seed 000's example file.
        let seed = r#"{"Min":1072380,"Max":28258541,"Average":1936389,"P1":1361771,"P5":1470115,
            "P10":1530443,"P20":1606706,"P30":1668387,"P40":1722871,"P50":1782345,"P60":1845403,
            "P70":1929173,"P80":2069770,"P90":2484501,"P95":2887302,"P99":4464537,"P995":5948001,
            "P999":9461315,"P9995":10746333,"P9999":19159876}"#;
        let r = FsPerfResults::from_json(seed).unwrap();
        assert_eq!(
            (r.min, r.max, r.average),
            (1_072_380, 28_258_541, 1_936_389)
        );
        assert_eq!(r.p[12], 4_464_537);
        let back = FsPerfResults::from_json(&r.to_json()).unwrap();
        assert_eq!(back, r);
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, Value>>(&r.to_json())
                .unwrap()
                .keys()
                .cloned()
                .collect();
        assert_eq!(keys[..4], ["Min", "Max", "Average", "P1"]);
        assert!(FsPerfResults::from_json(r#"{"Min": 1}"#)
            .unwrap_err()
            .contains("'Max'"));
    }

    #[test]
    fn reads_fio_json_sync_latency() {
        let pct: serde_json::Map<String, Value> = KEYS
            .iter()
            .enumerate()
            .map(|(i, (_, q))| (format!("{q:.6}"), Value::from(1000 + i as u64)))
            .collect();
        let doc = serde_json::json!({
            "fio version": "fio-3.33",
            "jobs": [
                {"jobname": "other", "sync": {}},
                {"jobname": "fsperf", "sync": {"total_ios": 0, "lat_ns": {
                    "min": 900, "max": 5000, "mean": 1500.7, "percentile": pct}}}
            ]
        });
        let r = FsPerfResults::from_json(&doc.to_string()).unwrap();
        assert_eq!((r.min, r.max, r.average), (900, 5000, 1500));
        assert_eq!(r.p[0], 1000);
        assert_eq!(r.p[16], 1016);
        let no_job = serde_json::json!({"jobs": [{"jobname": "x"}]}).to_string();
        assert_eq!(
            FsPerfResults::from_json(&no_job).unwrap_err(),
            "fio JSON has no job named 'fsperf'"
        );
    }
}
