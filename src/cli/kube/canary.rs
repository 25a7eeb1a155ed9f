//! `iogauge kube canary install|uninstall|status`: the canary (`iogauge canary`) running for
//! good on nodes and storage classes; cluster/canary/ builds and applies its objects.

use super::canary_flags::{
    check_times, duration, CanaryArgs, CanaryCommand, InstallArgs, OperatorFlag, StatusArgs,
};
use super::{failed, Connection, Format};
use crate::cli::{stdout, Ended, Error, Kind, Outcome, Stop};
use crate::cluster::canary::{self, status::Worst, CanaryRequest, Conn, Operator};
use crate::cluster::request::{validate_names, VolumeMode};

fn conn(c: &Connection) -> Conn {
    Conn {
        kubeconfig: c.kubeconfig.clone(),
        context: c.context.clone(),
        namespace: c.namespace.clone(),
    }
}

pub(super) fn main(a: CanaryArgs, _stop: &Stop) -> Ended {
    match a.command {
        CanaryCommand::Install(i) => install(*i),
        CanaryCommand::Uninstall(u) => {
            let done = canary::uninstall(&u.name, u.delete_claims, &conn(&u.connection))
                .map_err(failed)?;
            said(&done)
        }
        CanaryCommand::Status(s) => status(s),
    }
}

fn request(a: &InstallArgs) -> Result<CanaryRequest, String> {
    canary::check_name(&a.name)?;
    validate_names(
        a.connection.namespace.as_deref(),
        a.pod.service_account.as_deref(),
        &a.pod.image_pull_secrets,
    )?;
    if let Some(h) = a.host_path.as_ref().filter(|h| !h.starts_with('/')) {
        return Err(format!(
            "--host-path '{h}': expected an absolute path on the node, e.g. /var/lib/etcd"
        ));
    }
    if let Some(sel) = &a.nodes {
        canary::selector::node_term(sel)?;
    }
    check_times(a.every, a.window)?;
    for (k, v) in &a.monitor_labels {
        canary::check_monitor_label(k, v)?;
    }
    let profiles = canary::profiles(&a.profiles)?;
    Ok(CanaryRequest {
        name: a.name.clone(),
        profiles,
        every: duration(a.every),
        window: duration(a.window),
        window_s: a.window.as_secs(),
        max_busy: a.max_busy.clone(),
        nodes: a.nodes.clone(),
        host_path: a.host_path.clone(),
        storage_classes: a.storage_classes.clone(),
        claim_size: a.claim_size,
        pod: a
            .pod
            .options(VolumeMode::Filesystem, Some(a.claim_size), &a.access_mode)?,
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
        let yaml = objs
            .and_then(|o| canary::manifests::yaml(&o))
            .map_err(|e| Error::new(Kind::Run, e))?;
        stdout::print(&yaml);
        if req.operator == Operator::Auto {
            eprintln!("iogauge kube canary: dry run: the ServiceMonitor and PrometheusRule are made only when the cluster serves monitoring.coreos.com/v1");
        }
        eprintln!(
            "iogauge kube canary: dry run: canary {} in namespace {ns}, nothing created",
            req.name
        );
        return Ok(Outcome::Pass);
    }
    let done = canary::install(&req, &conn(&a.connection)).map_err(failed)?;
    said(&done)
}

/// What install or uninstall did on stdout, its notes on stderr; Err for what it could not do.
fn said(done: &canary::api::Done) -> Ended {
    done.lines.iter().for_each(|l| stdout::println(l));
    done.notes
        .iter()
        .for_each(|n| eprintln!("iogauge kube canary: {n}"));
    if done.failed.is_empty() {
        Ok(Outcome::Pass)
    } else {
        Err(Error::new(Kind::Run, done.failed.join("; ")))
    }
}

fn status(a: StatusArgs) -> Ended {
    let (rows, ns) = canary::status(&a.name, &conn(&a.connection)).map_err(failed)?;
    if rows.is_empty() {
        eprintln!("iogauge kube canary status: no pod of canary {} in namespace {ns}; install it with iogauge kube canary install --name {}", a.name, a.name);
        return Ok(Outcome::Error);
    }
    match a.format {
        Format::Json => stdout::println(&serde_json::to_string_pretty(&rows).unwrap_or_default()),
        Format::Text => stdout::print(&canary::text::render(&rows, canary::now(), &|s| {
            crate::untrusted::term(s).into_owned()
        })),
    }
    Ok(match canary::status::worst(&rows) {
        Worst::Pass => Outcome::Pass,
        Worst::Warn => Outcome::Warn,
        Worst::Missing => Outcome::Error,
        Worst::Fail => Outcome::Fail,
    })
}
