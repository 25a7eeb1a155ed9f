//! `kube cleanup`'s flags.

use super::*;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Without --run or --all, only runs whose oldest object is older than --older-than are removed, so
that a run still going (a colleague's, in the same namespace) is left alone; each run left alone
is named on stderr.")]
pub(super) struct CleanupArgs {
    /// Only this run's objects, whatever their age (its id is printed when it starts)
    #[arg(long, value_name = "ID", value_parser = run_id, conflicts_with_all = ["all", "older_than"])]
    pub(super) run: Option<String>,
    /// Only runs started longer ago than this: 90m, 12h, 2d (as history prune's) [default: 1h]
    #[arg(long, value_name = "AGE", value_parser = crate::history::parse_age, conflicts_with = "all")]
    pub(super) older_than: Option<Duration>,
    /// Every iogauge run in the namespace, also runs still going
    #[arg(long)]
    pub(super) all: bool,
    #[command(flatten)]
    pub(super) connection: Connection,
}
