//! `iogauge cleanup DIR…`: remove the files that killed iogauge runs left in each directory
//! (`workload/marker.rs`: only files a run's marker lists, with proof the run created them);
//! with `--kept` also the files `check --keep-files` kept; `--dry-run` only says what would go.

use super::stdout;
use super::{Ended, Error, Outcome};
use crate::workload::marker;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Every file iogauge is about to create is first listed in a marker \
(.iogauge-run.<pid>.<start>) in its directory; a run removes its marker with its files. After a \
SIGKILL or a power loss the marker stays, and this command (or the next run in that directory) \
removes the files it lists that the dead run provably created: a marker counts only if it is a \
regular file of yours that no one else can write, its entries are names in that directory, and a \
file goes only while it is the very file the run recorded (device, inode, owner, birth time, size). \
Anything else is left in place and named. Runs still going, and markers of other hosts on shared \
storage, are left alone. Files 'iogauge check --keep-files' kept are recorded in its marker as \
kept: they stay until you ask with --kept. docs/SECURITY.md says what this guards against."
)]
pub(crate) struct CleanupArgs {
    /// Directories to clean (where fio jobs, check or preflight ran)
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// Also remove the files 'iogauge check --keep-files' kept (recorded in its marker)
    #[arg(long)]
    kept: bool,
    /// List what would be removed (on stdout), and remove nothing
    #[arg(long)]
    dry_run: bool,
}

pub(crate) fn main(a: CleanupArgs) -> Ended {
    if let Some(bad) = a.dirs.iter().find(|d| !d.is_dir()) {
        return Err(Error::bad_input(format!(
            "'{}' is not a directory; give the directory a killed run used",
            bad.display()
        )));
    }
    let opts = marker::ReapOptions {
        kept: a.kept,
        dry_run: a.dry_run,
    };
    let mut removed = 0;
    for d in &a.dirs {
        let r = marker::reap_with(d, opts);
        for (f, pid) in &r.removed {
            if a.dry_run {
                stdout::println(&format!(
                    "would remove {} (left by iogauge pid {pid}, killed)",
                    marker::shown(f)
                ));
                continue;
            }
            stdout::println(&format!(
                "removed {} (left by iogauge pid {pid}, killed)",
                marker::shown(f)
            ));
        }
        for (f, pid, by) in &r.removed_kept {
            let verb = if a.dry_run { "would remove" } else { "removed" };
            stdout::println(&format!(
                "{verb} {} (kept by iogauge pid {pid} with {})",
                marker::shown(f),
                by.flag()
            ));
        }
        removed += r.removed.len() + r.removed_kept.len();
        for (f, pid, by) in &r.kept {
            eprintln!(
                "iogauge cleanup: kept {} in place: iogauge pid {pid} kept it on purpose ({}); \
                 add --kept to remove it",
                marker::shown(f),
                by.flag()
            );
        }
        for (f, why) in &r.left {
            eprintln!("iogauge cleanup: left {} in place: {why}", marker::shown(f));
        }
        for pid in &r.live {
            eprintln!(
                "iogauge cleanup: {}: iogauge pid {pid} is still running there; its files are its own",
                d.display()
            );
        }
        for (host, pid) in &r.foreign {
            eprintln!(
                "iogauge cleanup: {}: a run of host {host} (pid {pid}) left a marker; run \
                 'iogauge cleanup' on that host",
                d.display()
            );
        }
    }
    if a.dry_run {
        eprintln!(
            "iogauge cleanup: dry run: {removed} file(s) would be removed; nothing was removed"
        );
    } else {
        eprintln!("iogauge cleanup: {removed} file(s) removed");
    }
    Ok(Outcome::Pass)
}
