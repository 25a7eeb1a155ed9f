//! `iogauge check`'s plan: the profiles resolved and their work built (a job, on the device if
//! asked, or the small-files test) before anything touches the disk, and the line said before
//! each runs.

use super::{CheckRequest, Observer, ProfileSource};
use crate::app::error::Error;
use crate::input::profiles::{self, Profile, SmallFiles, Tuning};
use crate::model::{JobSpec, SizeSpec};
use crate::run::stop::Stop;
use crate::workload::device::{self, Device};
use std::path::Path;

/// What a profile runs.
pub(super) enum Work {
    Job(Box<JobSpec>),
    SmallFiles(SmallFiles),
    /// The profile cannot run where it was asked to; the reason is its outcome.
    Unavailable(String),
}

/// Why the small-files test cannot run with `--device`: it creates files.
pub(super) const NEEDS_FILESYSTEM: &str =
    "needs a filesystem: run it with --dir on a mounted filesystem";

pub(super) struct Planned {
    pub(super) profile: Profile,
    pub(super) work: Work,
    pub(super) shortened: bool,
}

/// The line printed before a profile runs: what it does, and how long it takes when the work
/// says so (a size-bound job takes as long as the disk needs; the progress bar shows the ETA).
pub(super) fn plan_line(p: &Profile, work: &Work, dir: &Path, device: bool) -> String {
    let what = match work {
        Work::Unavailable(why) => format!("not run: {why}"),
        Work::SmallFiles(s) => format!(
            "{} files of {} bytes, created then read back",
            s.files, s.size
        ),
        Work::Job(job) => {
            let bytes = match job.size {
                Some(SizeSpec::Bytes(b)) => b,
                _ => 0,
            };
            let mib = format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64);
            // On a device the job writes over its first bytes; there is no file.
            let size = if device {
                format!("the first {mib}")
            } else {
                format!("a {mib} file")
            };
            match (job.time_based, job.runtime) {
                (true, Some(r)) => {
                    format!("{size}, about {:.0} s", (r + job.ramp_time).as_secs_f64())
                }
                _ => {
                    let bs = job.unit_bs().max(1);
                    let sync = if job.fdatasync > 0 || job.fsync > 0 {
                        ", each synced"
                    } else {
                        ""
                    };
                    format!(
                        "{size} in {} writes of {bs} bytes{sync}; as long as the disk takes",
                        bytes / bs
                    )
                }
            }
        }
    };
    format!(
        "iogauge check: {}: {} {} {}: {what}",
        p.name,
        p.title,
        if device { "on" } else { "in" },
        dir.display()
    )
}

/// Profiles resolved and their work built, before anything touches the disk.
pub(super) fn plan(
    req: &CheckRequest,
    token: &str,
    dev: Option<&Device>,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> Result<Vec<Planned>, Error> {
    let published = Tuning {
        scale: 1.0,
        ..Tuning::default()
    };
    let mut plan = Vec::new();
    // Profiles an option given does not change, with why, said in one line each.
    let (mut no_duration, mut no_size) = (Vec::new(), Vec::new());
    for source in &req.profiles {
        let p = match source {
            ProfileSource::Resolved(p) => (**p).clone(),
            // A profile file may be a FIFO that blocks: a signal while reading it ends the
            // process.
            ProfileSource::Named(name) if profiles::is_path(name) => stop
                .before_anything_exists(|| profiles::resolve(name))?
                .map_err(Error::bad_input)?,
            ProfileSource::Named(name) => profiles::resolve(name).map_err(Error::bad_input)?,
        };
        let mut work = match (p.small_files(&req.tuning), dev) {
            (Some(_), Some(_)) => Work::Unavailable(NEEDS_FILESYSTEM.to_string()),
            (Some(s), None) => Work::SmallFiles(s),
            (None, None) => {
                let mut j = p.job(&req.dir, &req.tuning).map_err(Error::bad_input)?;
                // Names no other run uses, so two checks in one directory never collide.
                j.filename = Some(format!("iogauge-{}.{token}", p.name));
                j.files.iogauge_names = true;
                Work::Job(Box::new(j))
            }
            (None, Some(d)) => {
                let mut j = p.job(&req.dir, &req.tuning).map_err(Error::bad_input)?;
                on_device(&mut j, &req.dir, d.size).map_err(Error::bad_input)?;
                Work::Job(Box::new(j))
            }
        };
        if let (Work::Job(j), Some(size)) = (&work, req.tuning.size) {
            let bs = j.max_bs();
            if size < bs {
                return Err(Error::bad_input(format!(
                    "--size {size}: smaller than one {bs}-byte block of profile '{}'; use at least \
                     {bs} bytes (e.g. 64m)",
                    p.name
                )));
            }
        }
        const FILES: &str = "it makes a fixed number of files: --scale changes that";
        match &work {
            Work::SmallFiles(_) => {
                no_duration.push(format!("{} ({FILES})", p.name));
                no_size.push(format!("{} ({FILES})", p.name));
            }
            Work::Job(j) if !j.time_based => no_duration.push(format!(
                "{} (it writes a fixed size: --size changes that)",
                p.name
            )),
            _ => {}
        }
        // Marked as shortened only if the tuning actually changed this profile's run.
        // A device smaller than the file is a cap like --max-size's, so it counts too.
        let shortened = match &work {
            Work::SmallFiles(s) => Some(s.files) != p.small_files.map(|d| d.files),
            Work::Unavailable(_) => false,
            Work::Job(j) => p
                .job(&req.dir, &published)
                .map(|mut pj| {
                    pj.filename = j.filename.clone();
                    pj.files.iogauge_names = j.files.iogauge_names;
                    pj.directory = j.directory.clone();
                    pj != **j
                })
                .unwrap_or(true),
        };
        if let Work::Job(j) = &mut work {
            if let Some(why) = crate::engine::io_uring_or_libaio(&mut j.ioengine) {
                obs.note(&format!("iogauge check: {}: {why}", p.name));
            }
            // After `shortened` was decided: watching the verdict does not change the recipe.
            if req.sequential && watchable(j) {
                j.timing.sequential = crate::verdict::sequential::spec_of(&p).ok();
            }
            // The fio report's "job options" say how to run it again.
            j.options = p
                .fio_options(j)
                .iter()
                .map(|o| {
                    let o = o.trim_start_matches("--");
                    let (k, v) = o.split_once('=').unwrap_or((o, ""));
                    (k.to_string(), v.to_string())
                })
                .collect();
        }
        plan.push(Planned {
            profile: p,
            work,
            shortened,
        });
    }
    for (flag, given, unused) in [
        ("--duration", req.tuning.duration.is_some(), no_duration),
        ("--size", req.tuning.size.is_some(), no_size),
    ] {
        if given && !unused.is_empty() {
            obs.note(&unused_option_line(flag, &unused));
        }
    }
    Ok(plan)
}

/// Whether a profile's job can be watched for an early verdict: one instance, measured from
/// one start (latency_target restarts it), its recipe's length known from its size (io_size and
/// loops change that) and no other rule that ends it (steadystate), no read-back (verify). A
/// profile of other options runs its full recipe.
pub(crate) fn watchable(j: &JobSpec) -> bool {
    j.numjobs == 1
        && j.latency.target_ns == 0
        && !j.verify.enabled()
        && j.timing.ss_dur.is_zero()
        && j.blocks.io_size.is_none()
        && j.loops <= 1
}

/// The line saying that `flag` does not change some profiles' runs, each with why.
fn unused_option_line(flag: &str, unused: &[String]) -> String {
    format!(
        "iogauge check: note: {flag} does not apply to {}; {} without it",
        unused.join(", "),
        if unused.len() == 1 {
            "it runs"
        } else {
            "they run"
        }
    )
}

/// Points a profile's job at the block device `path` of `size` bytes: the device is the file,
/// and a job larger than the device is capped to it in whole blocks (so it still runs its
/// published block size).
fn on_device(j: &mut JobSpec, path: &Path, size: u64) -> Result<(), String> {
    j.directory = None;
    j.filename = Some(device::as_filename(path));
    let bs = j.max_bs().max(1);
    let whole = size / bs * bs;
    if whole == 0 {
        return Err(format!(
            "--device {}: {size} bytes, smaller than one {bs}-byte block of profile '{}'",
            path.display(),
            j.name
        ));
    }
    if let Some(SizeSpec::Bytes(b)) = j.size {
        j.size = Some(SizeSpec::Bytes(b.min(whole)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_lines_follow_the_work() {
        let t = |scale| Tuning {
            scale,
            ..Tuning::default()
        };
        let p = profiles::get("small-files").unwrap();
        let w = Work::SmallFiles(p.small_files(&t(0.1)).unwrap());
        assert_eq!(
            plan_line(&p, &w, Path::new("/d"), false),
            "iogauge check: small-files: many small files (GitLab) in /d: 100 files of 5 bytes, created then read back"
        );
        let p = profiles::get("etcd").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(1.0)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/d"), false),
            "iogauge check: etcd: etcd WAL (IBM recipe) in /d: a 22 MiB file in 10029 writes of 2300 bytes, each synced; as long as the disk takes"
        );
        let p = profiles::get("sync-iops").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(0.1)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/d"), false),
            "iogauge check: sync-iops: synchronous write IOPS (Manetu) in /d: a 102 MiB file, about 6 s"
        );
        // On a device: "on", and the job writes over the device's first bytes.
        assert_eq!(
            plan_line(&p, &w, Path::new("/dev/sdb"), true),
            "iogauge check: sync-iops: synchronous write IOPS (Manetu) on /dev/sdb: the first 102 MiB, about 6 s"
        );
        let p = profiles::get("etcd").unwrap();
        let w = Work::Job(Box::new(p.job(Path::new("/d"), &t(1.0)).unwrap()));
        assert_eq!(
            plan_line(&p, &w, Path::new("/dev/sdb"), true),
            "iogauge check: etcd: etcd WAL (IBM recipe) on /dev/sdb: the first 22 MiB in 10029 writes of 2300 bytes, each synced; as long as the disk takes"
        );
        let p = profiles::get("small-files").unwrap();
        let w = Work::Unavailable(NEEDS_FILESYSTEM.into());
        assert_eq!(
            plan_line(&p, &w, Path::new("/dev/sdb"), true),
            "iogauge check: small-files: many small files (GitLab) on /dev/sdb: not run: needs a filesystem: run it with --dir on a mounted filesystem"
        );
    }

    #[test]
    fn a_device_is_the_file_and_caps_the_size_in_whole_blocks() {
        let full = Tuning {
            scale: 1.0,
            ..Tuning::default()
        };
        let p = profiles::get("etcd").unwrap();
        let mut j = p.job(Path::new("."), &full).unwrap();
        // A 22 MiB job fits a 64 MiB device unchanged.
        on_device(&mut j, Path::new("/dev/loop0"), 64 << 20).unwrap();
        assert_eq!(j.directory, None);
        assert_eq!(j.filename.as_deref(), Some("/dev/loop0"));
        assert_eq!(j.size, Some(SizeSpec::Bytes(22 << 20)));
        // On 16 MiB: whole 2300-byte blocks that fit.
        on_device(&mut j, Path::new("/dev/loop0"), 16 << 20).unwrap();
        assert_eq!(j.size, Some(SizeSpec::Bytes((16 << 20) / 2300 * 2300)));
        assert_eq!(
            on_device(&mut j, Path::new("/dev/tiny"), 2299).unwrap_err(),
            "--device /dev/tiny: 2299 bytes, smaller than one 2300-byte block of profile 'etcd'"
        );
    }
}
