//! `iogauge kube preflight SPEC.yaml --nodes SEL | --node NAME…`: troubleshoot's
//! `filesystemPerformance` host collectors run on every matching node (a pod per node, each
//! collector's directory a hostPath), the analyzers evaluated over all nodes' results as
//! troubleshoot's remote host collectors do, the results laid out per node.

mod files;

use super::{failed, Connection, Format, Notes, PodFlags, RunLimits};
use crate::app::preflight::MAX_SPEC_BYTES;
use crate::cli::{stdout, with_output, Ended, Error, Kind, Outcome, Stop};
use crate::cluster::configmap::PodFiles;
use crate::cluster::dry_run::{dry_run, Printed};
use crate::cluster::preflight::{node_directories, node_results, PreflightPod};
use crate::cluster::request::{validate_names, CheckArgs, KubeRequest, TargetRequest, VolumeMode};
use crate::cluster::run;
use crate::input::troubleshoot::{load, Preflight};
use crate::report::document::{CheckVerdict, KubeDocument, TargetStatus};
use crate::report::preflight_text::{grouped, render_human};
use crate::verdict::fsperf::analyze_all;
use files::{empty_output, lay_out, spec};
use std::path::{Path, PathBuf};

/// Runs a troubleshoot spec's filesystemPerformance collectors on nodes.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("nodes_given").required(true).multiple(true)))]
#[command(after_help = "\
Each collector's directory on each node is mounted into that node's pod by hostPath (it must
exist there), so the spec runs unchanged; the spec travels in a ConfigMap. Results land per node
as troubleshoot lays them out: DIR/host-collectors/filesystemPerformance/<node>/<collector>.json,
and the analyzers give one outcome per node ('<checkName> - Node <node>').

Exit codes: 0 all passed, 1 a node could not run or interrupted, 2 bad input, 3 an outcome
failed, 4 the worst was a warning.")]
pub(super) struct KubePreflightArgs {
    /// A troubleshoot spec (HostPreflight, Preflight, SupportBundle) with filesystemPerformance
    /// host collectors
    #[arg(value_name = "SPEC.yaml")]
    spec: PathBuf,
    /// Run on every node matching this label selector
    #[arg(
        long,
        value_name = "SELECTOR",
        group = "nodes_given",
        help_heading = "Targets"
    )]
    nodes: Option<String>,
    /// Run on this node (repeatable)
    #[arg(
        long = "node",
        value_name = "NAME",
        group = "nodes_given",
        help_heading = "Targets"
    )]
    node_names: Vec<String>,
    /// Where the result files go [default: a new preflight-<unix time> directory]
    #[arg(short, long, value_name = "DIR", help_heading = "Run")]
    output: Option<PathBuf>,
    /// Print every manifest (YAML, or a JSON List with --format json) and create nothing
    #[arg(long, help_heading = "Run")]
    dry_run: bool,
    /// Output format: troubleshoot's outcomes as text, or as JSON
    #[arg(long, value_enum, default_value_t = Format::Text, help_heading = "Run")]
    format: Format,
    #[command(flatten)]
    pod: PodFlags,
    #[command(flatten)]
    limits: RunLimits,
    #[command(flatten)]
    connection: Connection,
}

impl KubePreflightArgs {
    /// The request, or what is wrong with the arguments or the spec (exit 2).
    fn request(&self, p: &Preflight, text: String) -> Result<KubeRequest, String> {
        let directories = node_directories(p)?;
        let targets = TargetRequest {
            nodes: self.nodes.clone(),
            node_names: self.node_names.clone(),
            host_path: directories.first().cloned(),
            ..TargetRequest::default()
        };
        targets.validate(VolumeMode::Filesystem)?;
        validate_names(
            self.connection.namespace.as_deref(),
            self.pod.service_account.as_deref(),
            &self.pod.image_pull_secrets,
        )?;
        let mut files = PodFiles::default();
        let spec = files.add(&self.spec.display().to_string(), text)?;
        let estimate = p
            .collectors
            .iter()
            .filter(|c| !c.exclude)
            .map(|c| c.timeout)
            .sum();
        Ok(KubeRequest {
            profiles: Vec::new(),
            files,
            preflight: Some(PreflightPod {
                spec,
                directories,
                estimate,
            }),
            check: CheckArgs::default(),
            targets,
            pod: self
                .pod
                .options(VolumeMode::Filesystem, None, "ReadWriteOnce")?,
            fio: None,
            namespace: self.connection.namespace.clone(),
            timeout: self.limits.timeout,
            pending_timeout: self.limits.pending_timeout,
            target_timeout: self.limits.target_timeout,
            parallel: self.limits.parallel.map_or(0, usize::from),
            kubeconfig: self.connection.kubeconfig.clone(),
            context: self.connection.context.clone(),
        })
    }
}

pub(super) fn main(a: KubePreflightArgs, stop: &Stop) -> Ended {
    let bad = |e: String| Error::whole(Kind::BadInput, format!("iogauge kube preflight: {e}"));
    let (p, text) = spec(&a.spec).map_err(bad)?;
    for n in &p.notices {
        eprintln!("iogauge kube preflight: note: {n}");
    }
    if !p.skipped.is_empty() {
        eprintln!(
            "iogauge kube preflight: skipped (iogauge runs filesystemPerformance only): {}",
            p.skipped.join(", ")
        );
    }
    let req = a.request(&p, text).map_err(bad)?;
    if a.dry_run {
        let printed = match a.format {
            Format::Json => Printed::Json,
            Format::Text => Printed::Yaml,
        };
        let (plan, text) = dry_run(&req, printed).map_err(failed)?;
        if printed == Printed::Json {
            stdout::println(&text);
        } else {
            stdout::print(&text);
        }
        eprintln!(
            "iogauge kube preflight: dry run: {} node(s) in namespace {}, nothing created",
            plan.targets.len(),
            plan.namespace
        );
        return Ok(Outcome::Pass);
    }
    let out = a.output.clone().unwrap_or_else(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        PathBuf::from(format!("preflight-{secs}"))
    });
    // Before the cluster run: results are analyzed from this directory, so an earlier run's
    // files in it would pass as this run's, and an unusable one would lose every result.
    empty_output(&out).map_err(bad)?;
    let doc = run::check(&req, stop, &mut Notes).map_err(failed)?;
    let errors = lay_out(&doc, &out)?;
    eprintln!("iogauge kube preflight: results in {}", out.display());
    let verdicts = analyze_all(&p.analyzers, &out, &errors);
    let outcomes: Vec<_> = verdicts.iter().map(|v| v.outcome()).collect();
    let name = p.name.clone().unwrap_or_else(|| "preflight".into());
    match a.format {
        Format::Text => stdout::print(&render_human(&name, &outcomes)),
        Format::Json => {
            stdout::println(&serde_json::to_string_pretty(&grouped(&outcomes)).unwrap_or_default())
        }
    }
    let unfinished = doc
        .targets
        .iter()
        .any(|t| t.status != TargetStatus::Completed);
    // From the targets, not the stop flag: the controller rearms it to delete what it made.
    let interrupted = doc
        .targets
        .iter()
        .any(|t| t.status == TargetStatus::Interrupted);
    if interrupted {
        eprintln!("iogauge kube: interrupted by {}", stop.reason());
    }
    let outcome = match outcomes.iter().map(|o| o.verdict).max() {
        _ if interrupted => Outcome::Interrupted,
        Some(CheckVerdict::Fail) => Outcome::Fail,
        Some(CheckVerdict::Warn) => Outcome::Warn,
        _ if unfinished || !errors.is_empty() => Outcome::Error,
        _ => Outcome::Pass,
    };
    with_output(Ok(outcome), Ok(()))
}
