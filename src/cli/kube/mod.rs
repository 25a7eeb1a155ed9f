//! `iogauge kube check|cleanup` (also `kubectl iogauge …`): the arguments and their value
//! parsers; `command.rs` runs the command.

mod canary;
mod canary_flags;
mod cleanup_flags;
mod command;
mod image;
mod pod_flags;
mod preflight;
mod request;
mod run_flags;
use cleanup_flags::CleanupArgs;
pub(crate) use command::main;
use pod_flags::{PodFlags, RunLimits};
use run_flags::{KubeCheckArgs, KubeFioArgs, KubeRunArgs, Mode};

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
    /// Install, remove or read `iogauge canary` running for good on nodes and storage classes
    Canary(canary_flags::CanaryArgs),
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
