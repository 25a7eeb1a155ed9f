//! Which log files a job instance writes and fio's names for them (`PREFIX_KIND.N.log`, or
//! `PREFIX_KIND.log` without per_job_logs, `.log.fz` with log_store_compressed), in fio's
//! order.

use std::path::PathBuf;

/// What a job's logs are, resolved from its spec: prefixes, settings.
#[derive(Debug, Clone)]
pub(crate) struct LogPlan {
    /// (kind, path) of every file, kinds as in fio's names (`bw`, `lat`, ...).
    pub files: Vec<(&'static str, PathBuf)>,
}

/// fio's file name of one log: `PREFIX_KIND.N.log` (N = the instance's thread number, from 1,
/// over every job of the run) or `PREFIX_KIND.log` without per_job_logs; `suffix` is `log`, or
/// `log.fz` for a compressed one.
pub(crate) fn log_path(
    prefix: &str,
    kind: &str,
    thread_number: u32,
    per_job: bool,
    suffix: &str,
) -> PathBuf {
    if per_job {
        PathBuf::from(format!("{prefix}_{kind}.{thread_number}.{suffix}"))
    } else {
        PathBuf::from(format!("{prefix}_{kind}.{suffix}"))
    }
}

/// Whether a log of this kind is stored compressed: with log_store_compressed, every log but
/// the histogram's. fio 3.33 names that one `.log.fz` too, but stores memory addresses in place
/// of its bins (in the `.fz` file, and in the text file under log_compression), so iogauge keeps
/// it as its usual text file.
pub(crate) fn packed(job: &crate::model::JobSpec, kind: &str) -> bool {
    job.logs.store_compressed && kind != "clat_hist"
}

/// The log files one job instance writes, in fio's order.
pub(crate) fn plan(job: &crate::model::JobSpec, thread_number: u32) -> LogPlan {
    let l = &job.logs;
    let pre = |p: &Option<String>| {
        p.as_ref().map(|s| {
            if s.is_empty() {
                job.name.clone()
            } else {
                s.clone()
            }
        })
    };
    let mut files = Vec::new();
    let path = |p: &str, k: &str| {
        let suffix = if packed(job, k) { "log.fz" } else { "log" };
        log_path(p, k, thread_number, l.per_job_logs, suffix)
    };
    if let Some(p) = pre(&l.lat) {
        // fio: no latency logs when latencies are not measured (gtod_reduce), and none of a
        // latency switched off (disable_lat/slat/clat).
        let m = job.measured();
        for (k, on) in [("lat", m.lat), ("slat", m.slat), ("clat", m.clat)] {
            if on {
                files.push((k, path(&p, k)));
            }
        }
    }
    if let Some(p) = pre(&l.hist) {
        files.push(("clat_hist", path(&p, "clat_hist")));
    }
    if let Some(p) = pre(&l.bw) {
        files.push(("bw", path(&p, "bw")));
    }
    if let Some(p) = pre(&l.iops) {
        files.push(("iops", path(&p, "iops")));
    }
    LogPlan { files }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_fio() {
        assert_eq!(
            log_path("j", "bw", 2, true, "log"),
            PathBuf::from("j_bw.2.log")
        );
        assert_eq!(
            log_path("out/x", "clat_hist", 1, false, "log"),
            PathBuf::from("out/x_clat_hist.log")
        );
        assert_eq!(
            log_path("j", "iops", 3, true, "log.fz"),
            PathBuf::from("j_iops.3.log.fz")
        );
    }
}
