//! `iogauge kube canary install|uninstall|status`: the canary (`iogauge canary`) running for
//! good on nodes and storage classes; cluster/canary/ builds and applies its objects.

use super::{failed, key_value, Connection, Format, PodFlags};
use crate::cli::check::parse_duration;
use crate::cli::{stdout, Ended, Error, Kind, Outcome, Stop};
use crate::cluster::canary::{self, status::Worst, CanaryRequest, Conn, Operator};
use crate::cluster::quantity::parse_bytes;
use crate::cluster::request::{validate_names, VolumeMode};
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub(super) struct CanaryArgs {
    #[command(subcommand)]
    command: CanaryCommand,
}

#[derive(clap::Subcommand, Debug)]
enum CanaryCommand {
    /// Run `iogauge canary` for good: a DaemonSet over --nodes, a StatefulSet per
    /// --storage-class, a Service (and with the prometheus-operator a ServiceMonitor and a
    /// PrometheusRule); again with the same --name updates it
    Install(Box<InstallArgs>),
    /// Remove everything a canary's install made (its claims only with --delete-claims)
    Uninstall(UninstallArgs),
    /// Each target's latest verdicts, from its pod's log. Exit codes: 0 all pass, 1 a target
    /// has no document, 3 a profile fails, 4 one warns or is undecided
    Status(StatusArgs),
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum OperatorFlag {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("targets").required(true).multiple(true)))]
struct InstallArgs {
    /// Built-in profiles the canary runs [default: etcd]
    #[arg(value_name = "PROFILE")]
    profiles: Vec<String>,
    /// Which canary (several may share a namespace)
    #[arg(long, default_value = "default")]
    name: String,
    /// Every node matching this label selector, in --host-path (one DaemonSet)
    #[arg(long, value_name = "SELECTOR", requires = "host_path", group = "targets", help_heading = "Targets")]
    nodes: Option<String>,
    /// The node directory the DaemonSet's pods probe, e.g. /var/lib/etcd
    #[arg(long, value_name = "DIR", requires = "nodes", help_heading = "Targets")]
    host_path: Option<String>,
    /// A claim of this storage class, probed by a StatefulSet's pod (repeatable)
    #[arg(long = "storage-class", value_name = "NAME", group = "targets", help_heading = "Targets")]
    storage_classes: Vec<String>,
    /// Each StatefulSet's claim size
    #[arg(long, value_name = "QUANTITY", default_value = "1Gi", value_parser = parse_bytes, help_heading = "Targets")]
    claim_size: u64,
    /// Access mode of the claims
    #[arg(long, value_name = "MODE", default_value = "ReadWriteOnce", value_parser = ["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"], help_heading = "Targets")]
    access_mode: String,
    /// The canary's probe interval: 30s, 5m, 1h
    #[arg(long, value_name = "D", default_value = "5m", value_parser = parse_duration, help_heading = "Canary")]
    every: Duration,
    /// The rolling window the verdicts judge
    #[arg(long, value_name = "D", default_value = "1h", value_parser = parse_duration, help_heading = "Canary")]
    window: Duration,
    /// The canary's device-time budget: 1% or 0.01
    #[arg(long, value_name = "PCT", default_value = "1%", value_parser = max_busy, help_heading = "Canary")]
    max_busy: String,
    /// A ServiceMonitor and PrometheusRule: when the cluster has the prometheus-operator's CRDs
    #[arg(long, value_enum, default_value_t = OperatorFlag::Auto, help_heading = "Prometheus")]
    prometheus_operator: OperatorFlag,
    /// A label on the ServiceMonitor and PrometheusRule, for a Prometheus that selects them by
    /// label, e.g. release=kube-prometheus-stack (repeatable)
    #[arg(long = "monitor-label", value_name = "KEY=VALUE", value_parser = key_value, help_heading = "Prometheus")]
    monitor_labels: Vec<(String, String)>,
    /// Print every object as YAML and create nothing
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    pod: PodFlags,
    #[command(flatten)]
    connection: Connection,
}

#[derive(clap::Args, Debug)]
struct UninstallArgs {
    #[arg(long, default_value = "default")]
    name: String,
    /// Also delete the StatefulSets' claims (and so their volumes)
    #[arg(long)]
    delete_claims: bool,
    #[command(flatten)]
    connection: Connection,
}

#[derive(clap::Args, Debug)]
struct StatusArgs {
    #[arg(long, default_value = "default")]
    name: String,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    connection: Connection,
}

/// `--max-busy`: "1%" or "0.01", above 0 and at most all of the time; passed on as given.
fn max_busy(v: &str) -> Result<String, String> {
    let t = v.trim();
    let ratio = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match ratio {
        Ok(r) if r > 0.0 && r <= 1.0 => Ok(t.to_string()),
        _ => Err(format!("'{v}': expected a share of the device's time, e.g. 1% or 0.01")),
    }
}

/// A duration as `iogauge canary` reads it: 1h, 5m or 30s.
fn duration(d: Duration) -> String {
    match d.as_secs().max(1) {
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

fn conn(c: &Connection) -> Conn {
    Conn { kubeconfig: c.kubeconfig.clone(), context: c.context.clone(), namespace: c.namespace.clone() }
}

pub(super) fn main(a: CanaryArgs, _stop: &Stop) -> Ended {
    match a.command {
        CanaryCommand::Install(i) => install(*i),
        CanaryCommand::Uninstall(u) => {
            let done = canary::uninstall(&u.name, u.delete_claims, &conn(&u.connection)).map_err(failed)?;
            done.lines.iter().for_each(|l| stdout::println(l));
            done.notes.iter().for_each(|n| eprintln!("iogauge kube canary: {n}"));
            Ok(Outcome::Pass)
        }
        CanaryCommand::Status(s) => status(s),
    }
}

fn request(a: &InstallArgs) -> Result<CanaryRequest, String> {
    canary::check_name(&a.name)?;
    validate_names(a.connection.namespace.as_deref(), a.pod.service_account.as_deref(), &a.pod.image_pull_secrets)?;
    if let Some(h) = a.host_path.as_ref().filter(|h| !h.starts_with('/')) {
        return Err(format!("--host-path '{h}': expected an absolute path on the node, e.g. /var/lib/etcd"));
    }
    if let Some(sel) = &a.nodes {
        canary::selector::node_term(sel)?;
    }
    let profiles = canary::profiles(&a.profiles)?;
    Ok(CanaryRequest {
        name: a.name.clone(),
        profiles,
        every: duration(a.every),
        window: duration(a.window),
        max_busy: a.max_busy.clone(),
        nodes: a.nodes.clone(),
        host_path: a.host_path.clone(),
        storage_classes: a.storage_classes.clone(),
        claim_size: a.claim_size,
        pod: a.pod.options(VolumeMode::Filesystem, Some(a.claim_size), &a.access_mode)?,
        operator: match a.prometheus_operator {
            OperatorFlag::Auto => Operator::Auto,
            OperatorFlag::Always => Operator::Always,
            OperatorFlag::Never => Operator::Never,
        },
        monitor_labels: a.monitor_labels.clone(),
    })
}

fn install(a: InstallArgs) -> Ended {
    let bad = |e: String| Error::whole(Kind::BadInput, format!("iogauge kube canary install: {e}"));
    let req = request(&a).map_err(bad)?;
    if a.dry_run {
        let ns = canary::offline_namespace(&conn(&a.connection)).map_err(failed)?;
        let objs = canary::manifests::objects(&req, &ns, req.operator != Operator::Never);
        let yaml = objs.and_then(|o| canary::manifests::yaml(&o)).map_err(|e| Error::new(Kind::Run, e))?;
        stdout::print(&yaml);
        if req.operator == Operator::Auto {
            eprintln!("iogauge kube canary: dry run: the ServiceMonitor and PrometheusRule are made only when the cluster serves monitoring.coreos.com/v1");
        }
        eprintln!("iogauge kube canary: dry run: canary {} in namespace {ns}, nothing created", req.name);
        return Ok(Outcome::Pass);
    }
    let done = canary::install(&req, &conn(&a.connection)).map_err(failed)?;
    done.lines.iter().for_each(|l| stdout::println(l));
    done.notes.iter().for_each(|n| eprintln!("iogauge kube canary: {n}"));
    Ok(Outcome::Pass)
}

fn status(a: StatusArgs) -> Ended {
    let (rows, ns) = canary::status(&a.name, &conn(&a.connection)).map_err(failed)?;
    if rows.is_empty() {
        eprintln!("iogauge kube canary status: no pod of canary {} in namespace {ns}; install it with iogauge kube canary install --name {}", a.name, a.name);
        return Ok(Outcome::Error);
    }
    match a.format {
        Format::Json => stdout::println(&serde_json::to_string_pretty(&rows).unwrap_or_default()),
        Format::Text => stdout::print(&canary::text::render(&rows, crate::cluster::canary::now())),
    }
    Ok(match canary::status::worst(&rows) {
        Worst::Pass => Outcome::Pass,
        Worst::Warn => Outcome::Warn,
        Worst::Missing => Outcome::Error,
        Worst::Fail => Outcome::Fail,
    })
}
