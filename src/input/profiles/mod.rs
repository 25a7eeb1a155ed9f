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
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn every_profile_loads_and_builds_its_job() {
        for n in names() {
            let p = get(n).unwrap();
            assert_eq!(p.name, n);
            for m in &p.metrics {
                m.pass.value().unwrap();
                if let Some(w) = &m.warn {
                    w.value().unwrap();
                }
            }
            for r in &p.references {
                assert!(
                    r.get(MetricKey::SyncP99).is_some()
                        || r.write_iops.is_some()
                        || r.read_iops.is_some()
                );
            }
            if p.small_files.is_some() {
                continue;
            }
            p.job(
                Path::new("/tmp"),
                &Tuning {
                    scale: 1.0,
                    ..Tuning::default()
                },
            )
            .unwrap();
        }
        for n in DEFAULT_SUITE {
            get(n).unwrap();
        }
    }

    #[test]
    fn the_etcd_profile_is_the_ibm_recipe() {
        let j = get("etcd")
            .unwrap()
            .job(
                Path::new("/d"),
                &Tuning {
                    scale: 1.0,
                    ..Tuning::default()
                },
            )
            .unwrap();
        assert_eq!(j.bs, [2300; 3]);
        assert_eq!(j.fdatasync, 1);
        assert_eq!(j.ioengine, crate::model::IoEngine::Sync);
        assert_eq!(j.size, Some(SizeSpec::Bytes(22 << 20)));
        assert_eq!(j.directory.as_deref(), Some(Path::new("/d")));
    }

    #[test]
    fn max_size_caps_in_whole_blocks_and_leaves_smaller_files_alone() {
        let cap = |name: &str, max: u64| {
            get(name)
                .unwrap()
                .job(
                    Path::new("/d"),
                    &Tuning {
                        scale: 1.0,
                        max_size: Some(max),
                        ..Tuning::default()
                    },
                )
                .unwrap()
                .size
        };
        // etcd writes 2300-byte blocks: 10 MiB holds 4559 of them.
        assert_eq!(cap("etcd", 10 << 20), Some(SizeSpec::Bytes(4559 * 2300)));
        assert_eq!(cap("etcd", 1 << 30), Some(SizeSpec::Bytes(22 << 20)));
        assert_eq!(cap("sync-iops", 1 << 29), Some(SizeSpec::Bytes(1 << 29)));
        assert_eq!(cap("etcd", 1), Some(SizeSpec::Bytes(2300)));
    }

    #[test]
    fn scale_and_overrides() {
        let p = get("sync-iops").unwrap();
        let j = p
            .job(
                Path::new("/d"),
                &Tuning {
                    scale: 0.1,
                    ..Tuning::default()
                },
            )
            .unwrap();
        assert_eq!(j.runtime, Some(Duration::from_secs(6)));
        assert_eq!(j.ramp_time, Duration::from_millis(200));
        assert_eq!(j.size, Some(SizeSpec::Bytes(107_372_544)));
        let j = p
            .job(
                Path::new("/d"),
                &Tuning {
                    scale: 1.0,
                    duration: Some(Duration::from_secs(5)),
                    size: Some(8 << 20),
                    max_size: None,
                },
            )
            .unwrap();
        assert_eq!(
            (j.runtime, j.size),
            (Some(Duration::from_secs(5)), Some(SizeSpec::Bytes(8 << 20)))
        );
        // The etcd recipe is size-bound: a duration does not apply, a tiny scale keeps 1 MiB.
        let e = get("etcd").unwrap();
        let j = e
            .job(
                Path::new("/d"),
                &Tuning {
                    scale: 0.001,
                    duration: Some(Duration::from_secs(5)),
                    size: None,
                    max_size: None,
                },
            )
            .unwrap();
        assert_eq!(j.runtime, None);
        assert_eq!(j.size, Some(SizeSpec::Bytes((1 << 20) / 2300 * 2300)));
    }

    #[test]
    fn unknown_profiles_get_a_suggestion() {
        assert_eq!(
            get("etdc").unwrap_err(),
            "unknown profile 'etdc'; did you mean 'etcd'?"
        );
        assert!(get("zzzzzzzz")
            .unwrap_err()
            .starts_with("unknown profile 'zzzzzzzz'; the profiles are etcd, "));
    }

    #[test]
    fn the_documented_example_profile_is_valid() {
        let doc = include_str!("../../../docs/PROFILES.md");
        let start = doc.find("```yaml\n").unwrap() + 8;
        let len = doc[start..].find("```").unwrap();
        let p: Profile = yaml_serde::from_str(&doc[start..start + len]).unwrap();
        p.validate().unwrap();
        assert_eq!(p.name, "vendor-db");
    }

    #[test]
    fn own_profiles_are_validated() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("p.yaml");
        let base = "name: x\ntitle: t\nworkload: [rw=write, fdatasync=1, bs=4k, size=4m]\n";
        let metric = |m: &str| format!("{base}metrics:\n  - {{{m}, source: s}}\n");
        let err = |text: &str| {
            std::fs::write(&f, text).unwrap();
            load_file(&f)
                .unwrap_err()
                .replace(&format!("profile '{}': ", f.display()), "")
        };
        assert_eq!(
            err(&metric(
                "key: sync_p99, label: l, better: lower, pass: 10ms, warn: 5ms"
            )),
            "metric 'sync_p99': warn must be higher than pass (it is the second step)"
        );
        assert_eq!(
            err(&metric("key: read_iops, label: l, better: higher, pass: 10 IOPS")),
            "metric 'read_iops' (l) is not measured by this workload (sync_p99 needs fsync= or fdatasync=; read_iops a read, write_iops a write)"
        );
        assert_eq!(
            err(&metric(
                "key: sync_p99, label: l, better: lower, pass: soon"
            )),
            "metric 'sync_p99': pass: expected a Go duration such as 90s, 2m, 1m30s, 500ms or 1.5h; units: ns, us or µs, ms, s, m, h"
        );
        // A latency without a unit would be nanoseconds; a rate given as a duration, nonsense.
        assert_eq!(
            err(&metric("key: sync_p99, label: l, better: lower, pass: 5")),
            "metric 'sync_p99': pass: 5 has no unit; a latency takes a duration with its unit (ns, us or µs, ms, s, m, h), e.g. pass: 5ms"
        );
        assert_eq!(
            err(&metric("key: sync_p99, label: l, better: lower, pass: 5ms, warn: \"20\"")),
            "metric 'sync_p99': warn: '20' has no time unit; a latency takes a duration with its unit (ns, us or µs, ms, s, m, h), e.g. warn: 10ms"
        );
        assert_eq!(
            err(&metric("key: write_iops, label: l, better: higher, pass: 10ms")),
            "metric 'write_iops': pass: '10ms': write_iops is a rate in IOPS, so write a number with its unit such as 1000 IOPS, not a duration"
        );
        assert_eq!(
            err(&format!(
                "{}references:\n  - {{system: disk, sync_p99: 4.2}}\n",
                metric("key: sync_p99, label: l, better: lower, pass: 5ms")
            )),
            "references: 'disk': sync_p99: 4.2 has no unit; a latency takes a duration with its unit (ns, us or µs, ms, s, m, h), e.g. sync_p99: 4.2ms"
        );
        // A rate needs its unit too, and only its own.
        assert_eq!(
            err(&metric("key: write_iops, label: l, better: higher, pass: 1000")),
            "metric 'write_iops': pass: 1000 has no unit; write_iops is a rate in IOPS, e.g. pass: 1000 IOPS"
        );
        assert_eq!(
            err(&metric("key: write_iops, label: l, better: higher, pass: 1000 IOPS, warn: \"750\"")),
            "metric 'write_iops': warn: '750' has no unit; write_iops is a rate in IOPS, e.g. warn: 750 IOPS"
        );
        assert_eq!(
            err(&metric("key: write_iops, label: l, better: higher, pass: 50 files/s")),
            "metric 'write_iops': pass: '50 files/s': write_iops is a rate in IOPS, not files/s, e.g. pass: 50 IOPS"
        );
        std::fs::write(
            &f,
            metric("key: write_iops, label: l, better: higher, pass: 1000 IOPS, warn: 750iops"),
        )
        .unwrap();
        assert_eq!(load_file(&f).unwrap().metrics[0].pass.value(), Ok(1000.0));
        // A built-in profile's name is refused: compare would mix two different tests.
        assert_eq!(
            err(&metric("key: sync_p99, label: l, better: lower, pass: 1s")
                .replace("name: x", "name: etcd")),
            "name 'etcd' is a built-in profile's; give your profile a name of its own (e.g. name: etcd-custom), so that history and compare never mix the two"
        );
        assert_eq!(
            err("name: s\ntitle: t\nsmall_files: {files: 4000000000, size: 5}\nmetrics:\n  - {key: small_files_total, label: l, better: lower, pass: 10s, source: s}\n"),
            "small_files: at most 1000000 files of at most 16 MiB (16777216 bytes) each"
        );
        assert_eq!(
            err(&format!("{base}metrics: []\n")),
            "'metrics' is empty: a profile needs at least one metric to judge"
        );
        assert_eq!(
            err(&metric("key: sync_p99, label: l, better: lower, pass: 1s")
                .replace("name: x", "name: a/b")),
            "name 'a/b': use up to 64 letters, digits, '-' and '_' (it names the test file)"
        );
        assert_eq!(
            err(&metric("key: sync_p99, label: l, better: lower, pass: 1s")
                .replace("size=4m]", "size=4m, filename=/dev/sda]")),
            "workload: 'filename=/dev/sda': a profile may not set filename: it reads or writes files outside the test directory; where the test file goes is chosen by iogauge check (--dir)"
        );
        assert!(err(
            &metric("key: sync_p99, label: l, better: lower, pass: 1s").replace("bs=4k", "bs=lots")
        )
        .starts_with("profile 'x': "));
        assert!(load_file(Path::new("/nonexistent.yaml"))
            .unwrap_err()
            .starts_with("cannot read profile '/nonexistent.yaml': "));
        std::fs::write(
            &f,
            metric("key: sync_p99, label: l, better: lower, pass: 1s"),
        )
        .unwrap();
        assert_eq!(resolve(f.as_os_str()).unwrap().name, "x");
        assert_eq!(resolve("etcd".as_ref()).unwrap().name, "etcd");
    }

    #[test]
    fn the_job_as_fio_options_reproduces_it() {
        let p = get("sync-iops").unwrap();
        let t = Tuning {
            scale: 0.1,
            ..Tuning::default()
        };
        let mut j = p.job(Path::new("/d"), &t).unwrap();
        j.filename = Some("iogauge-sync-iops.1.2".into());
        let o = p.fio_options(&j);
        assert_eq!(
            o,
            [
                "--name=sync-iops",
                "--directory=/d",
                "--filename=iogauge-sync-iops.1.2",
                "--rw=write",
                "--ioengine=sync",
                "--direct=1",
                "--fdatasync=1",
                "--bs=4k",
                "--size=107372544",
                "--time_based",
                "--ramp_time=200ms",
                "--runtime=6000ms",
            ]
        );
        // Parsed back with fio's grammar, the options give the same job.
        let args: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        let env = |_: &str| None;
        let crate::input::fio::FioCommand::Run(spec, _) =
            crate::input::fio::parse_fio_args(&args, &env, &mut std::io::empty()).unwrap()
        else {
            panic!("not a run")
        };
        let mut parsed = spec.jobs[0].clone();
        parsed.options.clear(); // the options as written, which only the parser records
        assert_eq!(parsed, j);
    }
}
