//! `iogauge cleanup DIR…`: remove the files that killed iogauge runs left in each directory
//! (`workload/marker.rs`: only files a run's marker lists, with proof the run created them).

use super::stdout;
use super::{EXIT_OK, EXIT_USAGE};
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
storage, are left alone. docs/SECURITY.md says what this guards against."
)]
pub(crate) struct CleanupArgs {
    /// Directories to clean (where fio jobs, check or preflight ran)
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
}

pub(crate) fn main(a: CleanupArgs) -> i32 {
    if let Some(bad) = a.dirs.iter().find(|d| !d.is_dir()) {
        eprintln!(
            "iogauge cleanup: '{}' is not a directory; give the directory a killed run used",
            bad.display()
        );
        return EXIT_USAGE;
    }
    let mut removed = 0;
    for d in &a.dirs {
        let r = marker::reap(d);
        for (f, pid) in &r.removed {
            stdout::println(&format!(
                "removed {} (left by iogauge pid {pid}, killed)",
                marker::shown(f)
            ));
        }
        removed += r.removed.len();
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
    eprintln!("iogauge cleanup: {removed} file(s) removed");
    EXIT_OK
}
