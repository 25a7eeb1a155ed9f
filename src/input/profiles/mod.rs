//! Built-in profiles for `iogauge check`: data files in `profiles/` (workload in fio's terms,
//! criteria with their sources, reference results), compiled in and validated by tests.

mod allowed;
mod canary;

pub(crate) use canary::canary_checks;

use crate::input::fio::{apply_option, canonical_option};
use crate::model::{JobSpec, SizeSpec};
// A profile and the criteria it states are the verdict's vocabulary; this module loads,
// validates and builds them into jobs.
pub(crate) use crate::verdict::criteria::{Amount, Better, MetricKey, Profile, SmallFiles, Tuning};
use std::path::Path;

const SOURCES: [(&str, &str); 5] = [
    ("etcd", include_str!("../../../profiles/etcd.yaml")),
    (
        "etcd-large",
        include_str!("../../../profiles/etcd-large.yaml"),
    ),
    (
        "sync-iops",
        include_str!("../../../profiles/sync-iops.yaml"),
    ),
    ("gitlab", include_str!("../../../profiles/gitlab.yaml")),
    (
        "small-files",
        include_str!("../../../profiles/small-files.yaml"),
    ),
];

/// Profiles `iogauge check` runs when none is named, in order.
pub(crate) const DEFAULT_SUITE: [&str; 4] = ["etcd", "sync-iops", "small-files", "gitlab"];

pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(|(n, _)| *n)
}

/// A profile named on `check`'s command line: a built-in name, or a path to a YAML file in the
/// same format (anything with a '/' or ending in .yaml/.yml).
pub(crate) fn resolve(arg: &std::ffi::OsStr) -> Result<Profile, String> {
    match arg.to_str() {
        Some(name) if !is_path(arg) => get(name),
        _ => load_file(Path::new(arg)),
    }
}

/// Whether `resolve` reads `arg` from a file (else it is a built-in name).
pub(crate) fn is_path(arg: &std::ffi::OsStr) -> bool {
    match arg.to_str() {
        Some(name) => name.contains('/') || name.ends_with(".yaml") || name.ends_with(".yml"),
        // Not UTF-8: not a built-in name, so a path.
        None => true,
    }
}

/// The most a profile file may hold: the built-in ones are about 3 KiB.
pub(crate) const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// The small-files test's most files, and the largest of them.
const MAX_SMALL_FILES: u32 = 1_000_000;
const MAX_SMALL_FILE_SIZE: usize = 16 << 20;

/// The longest profile name: it names the test file, within a file name's 255 bytes.
const MAX_NAME: usize = 64;

/// A user's own profile from a YAML file, validated as the built-in ones are.
pub(crate) fn load_file(path: &Path) -> Result<Profile, String> {
    let at = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read profile '{at}': {e}"))?;
    let text = crate::input::read_capped(file, MAX_PROFILE_BYTES, &format!("profile '{at}'"))?;
    from_text(&text, &at.to_string())
}

/// A profile from YAML text, validated; `at` names where the text came from in messages.
pub(crate) fn from_text(text: &str, at: &str) -> Result<Profile, String> {
    let p: Profile = yaml_serde::from_str(text)
        .map_err(|e| format!("profile '{at}': {e}; the format is described in docs/PROFILES.md"))?;
    p.validate().map_err(|e| format!("profile '{at}': {e}"))?;
    // History and compare know a profile by its name: two different workloads under one name
    // would be compared as if they were the same test.
    if names().any(|n| n == p.name) {
        return Err(format!(
            "profile '{at}': name '{0}' is a built-in profile's; give your profile a name of its \
             own (e.g. name: {0}-custom), so that history and compare never mix the two",
            p.name
        ));
    }
    Ok(p)
}

/// The built-in profile `name`.
pub(crate) fn get(name: &str) -> Result<Profile, String> {
    let (_, text) = SOURCES.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        let known: Vec<&str> = names().collect();
        match crate::input::suggest::closest(name, known.iter().copied()) {
            Some(near) => format!("unknown profile '{name}'; did you mean '{near}'?"),
            None => format!(
                "unknown profile '{name}'; the profiles are {}",
                known.join(", ")
            ),
        }
    })?;
    yaml_serde::from_str(text).map_err(|e| format!("built-in profile '{name}' is broken: {e}"))
}

impl Profile {
    /// What serde cannot check: names usable in file names, thresholds that parse, a workload
    /// that fio's grammar accepts, and metrics the workload can produce.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.name.is_empty()
            || self.name.len() > MAX_NAME
            || !self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(format!(
                "name '{}': use up to {MAX_NAME} letters, digits, '-' and '_' (it names the test file)",
                crate::input::shorten(&self.name)
            ));
        }
        match (&self.small_files, self.workload.is_empty()) {
            (Some(_), false) => {
                return Err("give either 'workload' (fio options) or 'small_files', not both".into())
            }
            (None, true) => {
                return Err(
                    "'workload' is empty: list fio options such as 'rw=write' and 'bs=4k', or give 'small_files'"
                        .into(),
                )
            }
            _ => {}
        }
        if let Some(sf) = &self.small_files {
            if sf.files == 0 || sf.size == 0 {
                return Err("small_files: 'files' and 'size' must be above 0".into());
            }
            // Bounded like any input: each file's buffer and every latency sample are allocated
            // up front (GitLab's test is 1000 files of 5 bytes).
            if sf.files > MAX_SMALL_FILES || sf.size > MAX_SMALL_FILE_SIZE {
                return Err(format!(
                    "small_files: at most {MAX_SMALL_FILES} files of at most {} each",
                    crate::input::size_words(MAX_SMALL_FILE_SIZE as u64)
                ));
            }
        }
        if self.metrics.is_empty() {
            return Err("'metrics' is empty: a profile needs at least one metric to judge".into());
        }
        for s in &self.scale {
            if !["size", "runtime", "ramp_time", "files"].contains(&s.as_str()) {
                return Err(format!(
                    "scale: '{s}': expected size, runtime, ramp_time or files"
                ));
            }
        }
        let job = if self.small_files.is_none() {
            Some(self.job(
                Path::new("."),
                &Tuning {
                    scale: 1.0,
                    ..Tuning::default()
                },
            )?)
        } else {
            None
        };
        if let Some(j) = &job {
            if !matches!(j.size, Some(SizeSpec::Bytes(_))) {
                return Err("workload: give an absolute size such as 'size=1g'".into());
            }
        }
        let keys = self
            .metrics
            .iter()
            .map(|m| (m.key, &m.label))
            .chain(self.info.iter().map(|i| (i.key, &i.label)));
        for (key, label) in keys {
            let small = matches!(
                key,
                MetricKey::SmallFilesTotal
                    | MetricKey::FilesPerSec
                    | MetricKey::CreateP99
                    | MetricKey::ReadP99
            );
            let fits = match &job {
                None => small,
                Some(j) => match key {
                    MetricKey::SyncP99 => j.fsync > 0 || j.fdatasync > 0,
                    MetricKey::WriteIops => j.rw.kind != crate::model::RwKind::Read,
                    MetricKey::ReadIops => j.rw.kind != crate::model::RwKind::Write,
                    _ => false,
                },
            };
            if !fits {
                return Err(format!(
                    "metric '{}' ({label}) is not measured by this {}",
                    key.name(),
                    if job.is_some() {
                        "workload (sync_p99 needs fsync= or fdatasync=; read_iops a read, write_iops a write)"
                    } else {
                        "small-files test (it measures small_files_total, files_per_sec, create_p99, read_p99)"
                    }
                ));
            }
        }
        for m in &self.metrics {
            let parse = |a: &Amount, what: &str| {
                let v = a
                    .value_for(m.key, what)
                    .map_err(|e| format!("metric '{}': {e}", m.key.name()))?;
                if v.is_finite() && v > 0.0 {
                    Ok(v)
                } else {
                    Err(format!(
                        "metric '{}': {what}: expected a threshold above 0, e.g. {what}: {}",
                        m.key.name(),
                        if m.key.is_latency() {
                            "10ms"
                        } else {
                            "500 IOPS"
                        }
                    ))
                }
            };
            let pass = parse(&m.pass, "pass")?;
            if let Some(w) = &m.warn {
                let warn = parse(w, "warn")?;
                let ordered = match m.better {
                    Better::Lower => warn >= pass,
                    Better::Higher => warn <= pass,
                };
                if !ordered {
                    return Err(format!(
                        "metric '{}': warn must be {} than pass (it is the second step)",
                        m.key.name(),
                        if m.better == Better::Lower {
                            "higher"
                        } else {
                            "lower"
                        }
                    ));
                }
            }
        }
        for r in &self.references {
            if let Some(a) = &r.sync_p99 {
                a.value_for(MetricKey::SyncP99, "sync_p99").map_err(|e| {
                    format!("references: '{}': {e}", crate::input::shorten(&r.system))
                })?;
            }
        }
        Ok(())
    }

    pub(crate) fn job(&self, dir: &Path, t: &Tuning) -> Result<JobSpec, String> {
        let mut job = JobSpec {
            name: self.name.clone(),
            ..JobSpec::default()
        };
        for opt in &self.workload {
            let (k, v) = match opt.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (opt.as_str(), None),
            };
            // Checked here, where every profile's job is built (built-in or a user's file, at
            // load time and again when run), before the option is applied.
            allowed::check(k, canonical_option(k), v)
                .map_err(|why| format!("workload: '{}': {why}", crate::input::shorten(opt)))?;
            apply_option(&mut job, k, v).map_err(|e| format!("profile '{}': {e}", self.name))?;
        }
        // fio's fix-ups and checks, as `iogauge fio` runs them on its jobs: a profile is
        // refused for the same combinations, in the same words.
        crate::input::fio::settle(&mut job, |k| {
            self.workload
                .iter()
                .any(|o| o.split_once('=').map_or(o.as_str(), |(k, _)| k) == k)
        })
        .map_err(|e| format!("workload: {e}"))?;
        job.check().map_err(|e| format!("workload: {e}"))?;
        job.directory = Some(dir.to_path_buf());
        let scaled = |what: &str| t.scale < 1.0 && self.scale.iter().any(|s| s == what);
        if scaled("size") {
            if let Some(SizeSpec::Bytes(b)) = job.size {
                // Keep whole blocks and at least 1 MiB, so there is something to measure.
                let bs = job.max_bs();
                let b = ((b as f64 * t.scale) as u64).max(1 << 20);
                job.size = Some(SizeSpec::Bytes(b / bs * bs));
            }
        }
        if scaled("runtime") {
            job.runtime = job
                .runtime
                .map(|r| r.mul_f64(t.scale).max(std::time::Duration::from_secs(1)));
        }
        if scaled("ramp_time") {
            job.ramp_time = job.ramp_time.mul_f64(t.scale);
        }
        if let Some(s) = t.size {
            job.size = Some(SizeSpec::Bytes(s));
        }
        if let (Some(max), Some(SizeSpec::Bytes(b))) = (t.max_size, job.size) {
            // Whole blocks, so a capped job still runs its published block size.
            let bs = job.max_bs().max(1);
            if b > max {
                job.size = Some(SizeSpec::Bytes((max / bs * bs).max(bs)));
            }
        }
        if let (Some(d), true) = (t.duration, job.time_based) {
            job.runtime = Some(d);
        }
        Ok(job)
    }
}

#[cfg(test)]
mod tests;
