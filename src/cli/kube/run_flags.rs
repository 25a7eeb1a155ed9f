//! `kube check` and `kube fio`'s flags: what the pods run, the targets and the run.

use super::*;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Targets: a fresh claim per --storage-class (or every class with --all-storage-classes), an
existing --claim, and/or a pod per node (--nodes SELECTOR or --node NAME) that measures --host-path. Each runs as a
Job whose pod runs 'iogauge check' from --image; results come back through the pod's log.
Everything created is deleted afterwards, also on timeout and Ctrl-C; 'iogauge kube cleanup'
removes what a killed run left.

Exit codes: 0 all passed, 1 a target could not run or interrupted, 2 bad input, 3 a profile
failed, 4 the worst was a warning.")]
pub(super) struct KubeCheckArgs {
    /// Built-in profiles, or profile files (./my.yaml: validated here, shipped to the pods in a
    /// ConfigMap) [default: etcd sync-iops small-files gitlab]
    #[arg(value_name = "PROFILE")]
    pub(super) profiles: Vec<String>,

    #[command(flatten)]
    pub(super) checks: CheckFlags,

    #[command(flatten)]
    pub(super) run: KubeRunArgs,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each target's pod runs 'iogauge fio' with the options and job files as given; the job files
travel in a ConfigMap (mounted read-only at /config) that is deleted with the run. The pod's
working directory is the volume (/data): a job's directory= and filename= are relative to it,
and an absolute path is refused, as is a raw device (filename=/dev/...). A fresh claim is sized
from the jobs (size, or filesize x nrfiles, per numjobs clone, plus room for the filesystem).
The result holds each target's fio JSON document; --format text prints each target's fio
output under its name, then a table of the jobs side by side.

Examples:
  iogauge kube fio seed.fio --storage-class standard
  iogauge kube fio --storage-class fast -- --name=w --rw=randwrite --bs=4k --size=1g

Exit codes: 0 every target ran, 1 a target could not run or interrupted, 2 bad input.")]
pub(super) struct KubeFioArgs {
    /// fio job files (read and checked here, shipped to the pods in a ConfigMap)
    #[arg(value_name = "JOBFILE")]
    pub(super) job_files: Vec<String>,
    /// fio options after '--', e.g. -- --name=w --rw=write --size=1g
    #[arg(last = true, value_name = "FIO OPTION", allow_hyphen_values = true)]
    pub(super) options: Vec<String>,
    /// Cap every job's size and filesize at S in the pods (iogauge's own --iogauge-max-size,
    /// the job files unchanged), e.g. 64m; the claim is sized from the capped jobs
    #[arg(long, value_name = "S", value_parser = parse_flag_size, help_heading = "Jobs")]
    pub(super) max_size: Option<u64>,
    /// Cap every job's runtime and ramp_time at D in the pods (iogauge's own
    /// --iogauge-max-runtime), e.g. 5s
    #[arg(long, value_name = "D", value_parser = parse_duration, help_heading = "Jobs")]
    pub(super) max_runtime: Option<Duration>,

    #[command(flatten)]
    pub(super) run: KubeRunArgs,
}

/// `kube check`'s options for the pod's `iogauge check`.
#[derive(clap::Args, Debug)]
pub(super) struct CheckFlags {
    /// Run time-based profiles for D in each pod: 10 (seconds), 30s, 2m
    #[arg(long, value_name = "D", value_parser = parse_duration, help_heading = "Checks")]
    pub(super) duration: Option<Duration>,
    /// Shrink sizes, times and file counts by F (0 < F <= 1); marked as shortened
    #[arg(long, value_name = "F", value_parser = parse_scale, help_heading = "Checks")]
    pub(super) scale: Option<f64>,
    /// Test file size in fio's grammar, as check's --size, e.g. 512m; it must fit the claim
    /// (the claim's own size is --claim-size)
    #[arg(long, alias = "file-size", value_name = "S", value_parser = file_size, help_heading = "Checks")]
    pub(super) size: Option<u64>,
    /// Warnings fail too, and a shortened run is at best a warning
    #[arg(long, help_heading = "Checks")]
    pub(super) strict: bool,
    /// Also bring back the per-interval latency histograms (the report's latency-over-time
    /// charts, compare's within-run p99); they grow with run time and IOPS, to MBs that a
    /// pod's log may not keep
    #[arg(long, help_heading = "Checks")]
    pub(super) intervals: bool,
    /// Run every profile's full, published recipe instead of stopping once its verdict is
    /// decided at 99.9 % confidence
    #[arg(long, help_heading = "Checks")]
    pub(super) full: bool,
}

/// Targets, claims, pods and the run: the same for `kube check` and `kube fio`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("node_targets").multiple(true)))]
pub(super) struct KubeRunArgs {
    /// Measure a fresh claim of this storage class (repeatable)
    #[arg(long = "storage-class", value_name = "NAME", help_heading = "Targets")]
    pub(super) storage_classes: Vec<String>,
    /// Measure a fresh claim of every storage class in the cluster
    #[arg(long, help_heading = "Targets")]
    pub(super) all_storage_classes: bool,
    /// Measure an existing claim in the namespace; it is used, never deleted (repeatable)
    #[arg(long = "claim", value_name = "NAME", help_heading = "Targets")]
    pub(super) claims: Vec<String>,
    /// Measure every node matching this label selector, in --host-path
    #[arg(
        long,
        value_name = "SELECTOR",
        requires = "host_path",
        group = "node_targets",
        help_heading = "Targets"
    )]
    pub(super) nodes: Option<String>,
    /// Measure this node, in --host-path (repeatable); a dry run needs no cluster for it
    #[arg(
        long = "node",
        value_name = "NAME",
        requires = "host_path",
        group = "node_targets",
        help_heading = "Targets"
    )]
    pub(super) node_names: Vec<String>,
    /// The node directory to measure with --nodes or --node, e.g. /var/lib/etcd
    #[arg(
        long,
        value_name = "DIR",
        requires = "node_targets",
        help_heading = "Targets"
    )]
    pub(super) host_path: Option<String>,

    /// Size of each fresh claim, e.g. 20Gi [default: the largest test file + 25%, in whole Gi]
    #[arg(long, value_name = "QUANTITY", value_parser = parse_bytes, help_heading = "Claims")]
    pub(super) claim_size: Option<u64>,
    /// Access mode of fresh claims
    #[arg(long, value_name = "MODE", default_value = "ReadWriteOnce", value_parser = ["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"], help_heading = "Claims")]
    pub(super) access_mode: String,

    /// Fresh claims as a mounted filesystem, or as a raw block device (the fio profiles run on
    /// the device; small-files needs a filesystem)
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Mode::Filesystem, help_heading = "Claims")]
    pub(super) volume_mode: Mode,

    #[command(flatten)]
    pub(super) pod: PodFlags,

    #[command(flatten)]
    pub(super) limits: RunLimits,
    /// Print every manifest (YAML, or a JSON List with --format json) and create nothing
    #[arg(long, help_heading = "Run")]
    pub(super) dry_run: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text, help_heading = "Run")]
    pub(super) format: Format,
    /// Also write the result as a self-contained HTML page (not with --dry-run)
    #[arg(
        long,
        value_name = "FILE.html",
        value_parser = crate::cli::report::output_file,
        conflicts_with = "dry_run",
        help_heading = "Run"
    )]
    pub(super) report: Option<PathBuf>,

    #[command(flatten)]
    pub(super) connection: Connection,

    #[command(flatten)]
    pub(super) history: HistoryFlags,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(super) enum Mode {
    #[value(name = "Filesystem")]
    Filesystem,
    #[value(name = "Block")]
    Block,
}

/// `--size`: the test file's size, as check's. Until this version kube's `--size` was the
/// claim's size in Kubernetes units; such a value is refused rather than silently becoming a
/// file size.
pub(super) fn file_size(v: &str) -> Result<u64, String> {
    let t = v.trim();
    let quantity = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .iter()
        .any(|s| t.ends_with(s) && t.len() > 2);
    if quantity {
        return Err(format!(
            "'{v}' is a Kubernetes quantity, but --size is the test file's size (as in \
             iogauge check, e.g. 512m or 1g); for the claim's size use --claim-size {v}"
        ));
    }
    parse_flag_size(v)
}
