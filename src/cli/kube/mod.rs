//! `iogauge kube check|cleanup` (also `kubectl iogauge …`): the arguments and their value
//! parsers; `command.rs` runs the command.

mod command;
mod image;
mod preflight;
pub(crate) use command::main;

use super::check::{parse_duration, parse_scale};
use super::history::{save, HistoryFlags};
use super::report::write_report;
use super::Stop;
use super::{Error, Kind};
use crate::cluster::cleanup::{cleanup, Scope};
use crate::cluster::configmap::PodFiles;
use crate::cluster::dry_run::{dry_run, Printed};
use crate::cluster::fio_request::{fio_job, FioJob};
use crate::cluster::quantity::parse_bytes;
use crate::cluster::request::{
    pod_profiles, quantities, validate_names, CheckArgs, KubeRequest, PodOptions, TargetRequest,
    Toleration, VolumeMode,
};
use crate::cluster::request::{Identity, SecurityMode};
use crate::cluster::run::{self, Observer};
use crate::cluster::targets::check_claim_size;
use crate::cluster::KubeError;
use crate::history::{Invocation, NewRun};
use crate::model::units::parse_flag_size;
use crate::report::html::render_kube_html;
use crate::report::kube_text::render_kube_text;
use crate::verdict::check::overall_of;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The controller's notes go to stderr as they come (shared by kube check, fio and preflight).
pub(super) struct Notes;

impl Observer for Notes {
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

/// A cluster run's error: the arguments (bad input) or the cluster (an error while running).
pub(super) fn failed(e: KubeError) -> Error {
    let kind = match e {
        KubeError::Usage(_) => Kind::BadInput,
        KubeError::Cluster(_) => Kind::Run,
    };
    Error::new(kind, e.to_string())
}

/// Runs the checks in a Kubernetes cluster: per storage class, per claim, per node.
#[derive(clap::Args, Debug)]
pub(crate) struct KubeArgs {
    #[command(subcommand)]
    command: KubeCommand,
}

#[derive(clap::Subcommand, Debug)]
enum KubeCommand {
    /// Run profiles in a pod on each target and judge them; --dry-run prints the manifests
    Check(Box<KubeCheckArgs>),
    /// Run a troubleshoot spec's filesystemPerformance collectors on nodes and analyze them
    Preflight(Box<preflight::KubePreflightArgs>),
    /// Run fio job files or options unchanged in a pod on each target; --dry-run prints the
    /// manifests
    Fio(Box<KubeFioArgs>),
    /// Delete the Jobs, claims and pods that earlier runs left behind
    Cleanup(CleanupArgs),
    /// Make the pod's image from this binary: export an OCI archive, or push to a registry
    Image(image::ImageArgs),
}

/// Which cluster and namespace.
#[derive(clap::Args, Debug, Clone)]
struct Connection {
    /// The kubeconfig file [default: $KUBECONFIG, ~/.kube/config, or the pod's service account]
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context [default: the current one]
    #[arg(long, value_name = "NAME")]
    context: Option<String>,
    /// Where everything is created [default: the context's namespace, else default]
    #[arg(short, long, value_name = "NS")]
    namespace: Option<String>,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Targets: a fresh claim per --storage-class (or every class with --all-storage-classes), an
existing --claim, and/or a pod per node (--nodes SELECTOR or --node NAME) that measures --host-path. Each runs as a
Job whose pod runs 'iogauge check' from --image; results come back through the pod's log.
Everything created is deleted afterwards, also on timeout and Ctrl-C; 'iogauge kube cleanup'
removes what a killed run left.

Exit codes: 0 all passed, 1 a target could not run or interrupted, 2 bad input, 3 a profile
failed, 4 the worst was a warning.")]
struct KubeCheckArgs {
    /// Built-in profiles, or profile files (./my.yaml: validated here, shipped to the pods in a
    /// ConfigMap) [default: etcd sync-iops small-files gitlab]
    #[arg(value_name = "PROFILE")]
    profiles: Vec<String>,

    #[command(flatten)]
    checks: CheckFlags,

    #[command(flatten)]
    run: KubeRunArgs,
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
struct KubeFioArgs {
    /// fio job files (read and checked here, shipped to the pods in a ConfigMap)
    #[arg(value_name = "JOBFILE")]
    job_files: Vec<String>,
    /// fio options after '--', e.g. -- --name=w --rw=write --size=1g
    #[arg(last = true, value_name = "FIO OPTION", allow_hyphen_values = true)]
    options: Vec<String>,
    /// Cap every job's size and filesize at S in the pods (iogauge's own --iogauge-max-size,
    /// the job files unchanged), e.g. 64m; the claim is sized from the capped jobs
    #[arg(long, value_name = "S", value_parser = parse_flag_size, help_heading = "Jobs")]
    max_size: Option<u64>,
    /// Cap every job's runtime and ramp_time at D in the pods (iogauge's own
    /// --iogauge-max-runtime), e.g. 5s
    #[arg(long, value_name = "D", value_parser = parse_duration, help_heading = "Jobs")]
    max_runtime: Option<Duration>,

    #[command(flatten)]
    run: KubeRunArgs,
}

/// `kube check`'s options for the pod's `iogauge check`.
#[derive(clap::Args, Debug)]
struct CheckFlags {
    /// Run time-based profiles for D in each pod: 10 (seconds), 30s, 2m
    #[arg(long, value_name = "D", value_parser = parse_duration, help_heading = "Checks")]
    duration: Option<Duration>,
    /// Shrink sizes, times and file counts by F (0 < F <= 1); marked as shortened
    #[arg(long, value_name = "F", value_parser = parse_scale, help_heading = "Checks")]
    scale: Option<f64>,
    /// Test file size in fio's grammar, as check's --size, e.g. 512m; it must fit the claim
    /// (the claim's own size is --claim-size)
    #[arg(long, alias = "file-size", value_name = "S", value_parser = file_size, help_heading = "Checks")]
    size: Option<u64>,
    /// Warnings fail too, and a shortened run is at best a warning
    #[arg(long, help_heading = "Checks")]
    strict: bool,
    /// Also bring back the per-interval latency histograms (the report's latency-over-time
    /// charts, compare's within-run p99); they grow with run time and IOPS, to MBs that a
    /// pod's log may not keep
    #[arg(long, help_heading = "Checks")]
    intervals: bool,
    /// Run every profile's full, published recipe instead of stopping once its verdict is
    /// decided at 99.9 % confidence
    #[arg(long, help_heading = "Checks")]
    full: bool,
}

/// Targets, claims, pods and the run: the same for `kube check` and `kube fio`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("node_targets").multiple(true)))]
struct KubeRunArgs {
    /// Measure a fresh claim of this storage class (repeatable)
    #[arg(long = "storage-class", value_name = "NAME", help_heading = "Targets")]
    storage_classes: Vec<String>,
    /// Measure a fresh claim of every storage class in the cluster
    #[arg(long, help_heading = "Targets")]
    all_storage_classes: bool,
    /// Measure an existing claim in the namespace; it is used, never deleted (repeatable)
    #[arg(long = "claim", value_name = "NAME", help_heading = "Targets")]
    claims: Vec<String>,
    /// Measure every node matching this label selector, in --host-path
    #[arg(
        long,
        value_name = "SELECTOR",
        requires = "host_path",
        group = "node_targets",
        help_heading = "Targets"
    )]
    nodes: Option<String>,
    /// Measure this node, in --host-path (repeatable); a dry run needs no cluster for it
    #[arg(
        long = "node",
        value_name = "NAME",
        requires = "host_path",
        group = "node_targets",
        help_heading = "Targets"
    )]
    node_names: Vec<String>,
    /// The node directory to measure with --nodes or --node, e.g. /var/lib/etcd
    #[arg(
        long,
        value_name = "DIR",
        requires = "node_targets",
        help_heading = "Targets"
    )]
    host_path: Option<String>,

    /// Size of each fresh claim, e.g. 20Gi [default: the largest test file + 25%, in whole Gi]
    #[arg(long, value_name = "QUANTITY", value_parser = parse_bytes, help_heading = "Claims")]
    claim_size: Option<u64>,
    /// Access mode of fresh claims
    #[arg(long, value_name = "MODE", default_value = "ReadWriteOnce", value_parser = ["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"], help_heading = "Claims")]
    access_mode: String,

    /// Fresh claims as a mounted filesystem, or as a raw block device (the fio profiles run on
    /// the device; small-files needs a filesystem)
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Mode::Filesystem, help_heading = "Claims")]
    volume_mode: Mode,

    #[command(flatten)]
    pod: PodFlags,

    #[command(flatten)]
    limits: RunLimits,
    /// Print every manifest (YAML, or a JSON List with --format json) and create nothing
    #[arg(long, help_heading = "Run")]
    dry_run: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text, help_heading = "Run")]
    format: Format,
    /// Also write the result as a self-contained HTML page (not with --dry-run)
    #[arg(
        long,
        value_name = "FILE.html",
        value_parser = super::report::output_file,
        conflicts_with = "dry_run",
        help_heading = "Run"
    )]
    report: Option<PathBuf>,

    #[command(flatten)]
    connection: Connection,

    #[command(flatten)]
    history: HistoryFlags,
}

/// How every pod is built: the same for `kube check`, `kube fio` and `kube preflight`.
#[derive(clap::Args, Debug)]
struct PodFlags {
    /// The image with iogauge at /iogauge [default: iogauge:<this version>, made by `iogauge
    /// kube image export` or `push`]
    #[arg(
        long,
        env = "IOGAUGE_IMAGE",
        value_name = "IMAGE",
        help_heading = "Pods"
    )]
    image: Option<String>,
    /// The image pull policy
    #[arg(long, value_name = "POLICY", default_value = "IfNotPresent", value_parser = ["Always", "IfNotPresent", "Never"], help_heading = "Pods")]
    image_pull_policy: String,
    /// A secret for pulling the image from a private registry (repeatable)
    #[arg(long = "image-pull-secret", value_name = "NAME", help_heading = "Pods")]
    image_pull_secrets: Vec<String>,
    /// Only run on nodes with this label, key=value (repeatable)
    #[arg(long = "node-selector", value_name = "KEY=VALUE", value_parser = key_value, help_heading = "Pods")]
    node_selector: Vec<(String, String)>,
    /// Tolerate a taint: key=value:Effect, key:Effect or key (repeatable)
    #[arg(long = "toleration", value_name = "TAINT", help_heading = "Pods")]
    tolerations: Vec<Toleration>,
    /// Tolerate the control-plane taints (node-role.kubernetes.io/control-plane and /master)
    #[arg(long, help_heading = "Pods")]
    tolerate_control_plane: bool,
    /// CPU request ('none' for no request)
    #[arg(long, value_name = "Q", default_value = "100m", help_heading = "Pods")]
    cpu_request: String,
    /// Memory request ('none' for no request)
    #[arg(long, value_name = "Q", default_value = "64Mi", help_heading = "Pods")]
    memory_request: String,
    /// CPU limit; none by default, because CPU throttling shows up as I/O latency
    #[arg(long, value_name = "Q", default_value = "none", help_heading = "Pods")]
    cpu_limit: String,
    /// Memory limit ('none' for no limit)
    #[arg(long, value_name = "Q", default_value = "512Mi", help_heading = "Pods")]
    memory_limit: String,
    /// The pod's service account [default: the namespace's default; its token is never mounted]
    #[arg(long, value_name = "NAME", help_heading = "Pods")]
    service_account: Option<String>,
    /// Who the pod runs as: restricted (uid/gid 65532, fsGroup on fresh claims), platform
    /// (uid, gid and fsGroup left to the platform, e.g. OpenShift's SCCs) or root (uid 0, for
    /// volumes only root can write; needs Pod Security baseline)
    #[arg(long, value_name = "MODE", value_enum, default_value_t = SecurityContext::Restricted, help_heading = "Pods")]
    security_context: SecurityContext,
    /// Run as this uid, e.g. the owner of an NFS export or of a node's etcd directory
    #[arg(long, value_name = "UID", value_parser = id_number, help_heading = "Pods")]
    run_as_user: Option<i64>,
    /// Run as this gid (also the fsGroup of fresh claims) [default: --run-as-user's, else 65532]
    #[arg(long, value_name = "GID", value_parser = id_number, help_heading = "Pods")]
    run_as_group: Option<i64>,
    /// Also a member of this group, e.g. the group that may write a shared volume (repeatable)
    #[arg(long = "supplemental-group", value_name = "GID", value_parser = id_number, help_heading = "Pods")]
    supplemental_groups: Vec<i64>,
}

/// How long the run and each target may take, and how many targets run at once: the same for
/// `kube check`, `kube fio` and `kube preflight`.
#[derive(clap::Args, Debug)]
struct RunLimits {
    /// Give up on the whole run after D; also each Job's activeDeadlineSeconds
    #[arg(long, value_name = "D", default_value = "30m", value_parser = parse_duration, help_heading = "Run")]
    timeout: Duration,
    /// Give up on one target after D [default: twice its estimate from the profiles, plus 2m
    /// to start]; also its Job's activeDeadlineSeconds
    #[arg(long, value_name = "D", value_parser = parse_duration, help_heading = "Run")]
    target_timeout: Option<Duration>,
    /// Give up on a target that stays unschedulable or unprovisioned for D
    #[arg(long, value_name = "D", default_value = "60s", value_parser = parse_duration, help_heading = "Run")]
    pending_timeout: Duration,
    /// How many targets run at once [default: node targets all at once (each its own disk),
    /// storage classes and claims one at a time (shared storage would measure itself)]
    #[arg(long, value_name = "N", value_parser = parse_parallel, help_heading = "Run")]
    parallel: Option<u16>,
}

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Without --run or --all, only runs whose oldest object is older than --older-than are removed, so
that a run still going (a colleague's, in the same namespace) is left alone; each run left alone
is named on stderr.")]
struct CleanupArgs {
    /// Only this run's objects, whatever their age (its id is printed when it starts)
    #[arg(long, value_name = "ID", value_parser = run_id, conflicts_with_all = ["all", "older_than"])]
    run: Option<String>,
    /// Only runs started longer ago than this: 90m, 12h, 2d (as history prune's) [default: 1h]
    #[arg(long, value_name = "AGE", value_parser = crate::history::parse_age, conflicts_with = "all")]
    older_than: Option<Duration>,
    /// Every iogauge run in the namespace, also runs still going
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    connection: Connection,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Mode {
    #[value(name = "Filesystem")]
    Filesystem,
    #[value(name = "Block")]
    Block,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum SecurityContext {
    Restricted,
    Platform,
    Root,
}

impl PodFlags {
    /// The identity flags, checked against each other (exit 2 with the fix).
    fn identity(&self) -> Result<Identity, String> {
        let id = Identity {
            mode: match self.security_context {
                SecurityContext::Restricted => SecurityMode::Restricted,
                SecurityContext::Platform => SecurityMode::Platform,
                SecurityContext::Root => SecurityMode::Root,
            },
            run_as_user: self.run_as_user,
            run_as_group: self.run_as_group,
            supplemental_groups: self.supplemental_groups.clone(),
        };
        id.validate()?;
        Ok(id)
    }
}

/// A uid or gid as Kubernetes takes it: 0 to 2147483647.
fn id_number(v: &str) -> Result<i64, String> {
    v.parse::<i64>()
        .ok()
        .filter(|n| (0..=i64::from(i32::MAX)).contains(n))
        .ok_or_else(|| format!("'{v}': expected a numeric id from 0 to 2147483647, e.g. 1000"))
}

/// `--size`: the test file's size, as check's. Until this version kube's `--size` was the
/// claim's size in Kubernetes units; such a value is refused rather than silently becoming a
/// file size.
fn file_size(v: &str) -> Result<u64, String> {
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

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
enum Format {
    Text,
    Json,
}

fn key_value(v: &str) -> Result<(String, String), String> {
    match v.split_once('=') {
        Some((k, val)) if !k.is_empty() => Ok((k.to_string(), val.to_string())),
        _ => Err("expected KEY=VALUE, e.g. disktype=ssd".into()),
    }
}

/// `--parallel`: at least one target at a time.
fn parse_parallel(v: &str) -> Result<u16, String> {
    v.parse::<u16>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| format!("'{v}': expected how many targets run at once, 1 to 65535, e.g. 2"))
}

/// A run id as `kube check` prints it: a label value (letters, digits, '-', '_', '.').
fn run_id(v: &str) -> Result<String, String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if v.is_empty() || v.len() > 63 || !v.chars().all(ok) {
        return Err(format!(
            "'{v}': expected the run id 'iogauge kube check' printed, e.g. k3v9q2"
        ));
    }
    Ok(v.to_string())
}

/// For src/fuzz: `iogauge kube ARGS` parsed as the command line is; for `check`, the request
/// and, when no cluster must be asked, the dry run's manifests. Never connects to a cluster.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub(crate) fn fuzz_args(args: &[String]) -> Result<String, String> {
    use clap::{FromArgMatches, Subcommand};
    let cmd = KubeCommand::augment_subcommands(clap::Command::new("kube"));
    let m = cmd
        .try_get_matches_from(std::iter::once("kube".to_string()).chain(args.iter().cloned()))
        .map_err(|e| e.to_string())?;
    let KubeCommand::Check(c) = KubeCommand::from_arg_matches(&m).map_err(|e| e.to_string())?
    else {
        return Ok(String::new());
    };
    let req = c.request()?;
    if crate::cluster::dry_run::needs_cluster(&req).is_some() {
        return Ok(String::new());
    }
    dry_run(&req, Printed::Yaml)
        .map(|(_, yaml)| yaml)
        .map_err(|e| e.to_string())
}
