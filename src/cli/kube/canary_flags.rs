//! `iogauge kube canary`'s arguments and their value parsers; canary.rs runs them.

use super::{key_value, Connection, Format, PodFlags};
use crate::cli::check::parse_duration;
use crate::cluster::quantity::parse_bytes;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub(super) struct CanaryArgs {
    #[command(subcommand)]
    pub(super) command: CanaryCommand,
}

#[derive(clap::Subcommand, Debug)]
pub(super) enum CanaryCommand {
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
pub(super) enum OperatorFlag {
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("targets").required(true).multiple(true)))]
// A canary idles between probes: a small CPU request on every node it runs on, and a memory
// limit well above its peak (about 30 MiB with three profiles).
#[command(mut_arg("cpu_request", |a| a.default_value("10m")))]
#[command(mut_arg("memory_limit", |a| a.default_value("256Mi")))]
pub(super) struct InstallArgs {
    /// Built-in profiles the canary runs [default: etcd]
    #[arg(value_name = "PROFILE")]
    pub(super) profiles: Vec<String>,
    /// Which canary (several may share a namespace)
    #[arg(long, default_value = "default")]
    pub(super) name: String,
    /// Every node matching this label selector, in --host-path (one DaemonSet)
    #[arg(
        long,
        value_name = "SELECTOR",
        requires = "host_path",
        group = "targets",
        help_heading = "Targets"
    )]
    pub(super) nodes: Option<String>,
    /// The node directory the DaemonSet's pods probe, e.g. /var/lib/etcd
    #[arg(long, value_name = "DIR", requires = "nodes", help_heading = "Targets")]
    pub(super) host_path: Option<String>,
    /// A claim of this storage class, probed by a StatefulSet's pod (repeatable)
    #[arg(
        long = "storage-class",
        value_name = "NAME",
        group = "targets",
        help_heading = "Targets"
    )]
    pub(super) storage_classes: Vec<String>,
    /// Each StatefulSet's claim size
    #[arg(long, value_name = "QUANTITY", default_value = "1Gi", value_parser = parse_bytes, help_heading = "Targets")]
    pub(super) claim_size: u64,
    /// Access mode of the claims
    #[arg(long, value_name = "MODE", default_value = "ReadWriteOnce", value_parser = ["ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"], help_heading = "Targets")]
    pub(super) access_mode: String,
    /// The canary's probe interval: 30s, 5m, 1h
    #[arg(long, value_name = "D", default_value = "5m", value_parser = parse_duration, help_heading = "Canary")]
    pub(super) every: Duration,
    /// The rolling window the verdicts judge
    #[arg(long, value_name = "D", default_value = "1h", value_parser = parse_duration, help_heading = "Canary")]
    pub(super) window: Duration,
    /// The canary's device-time budget: 1% or 0.01
    #[arg(long, value_name = "PCT", default_value = "1%", value_parser = max_busy, help_heading = "Canary")]
    pub(super) max_busy: String,
    /// A ServiceMonitor and PrometheusRule: when the cluster has the prometheus-operator's CRDs
    #[arg(long, value_name = "MODE", value_enum, default_value_t = OperatorFlag::Auto, help_heading = "Prometheus")]
    pub(super) prometheus_operator: OperatorFlag,
    /// A label on the ServiceMonitor and PrometheusRule, for a Prometheus that selects them by
    /// label, e.g. release=kube-prometheus-stack (repeatable)
    #[arg(long = "monitor-label", value_name = "KEY=VALUE", value_parser = key_value, help_heading = "Prometheus")]
    pub(super) monitor_labels: Vec<(String, String)>,
    /// Print every object as YAML and create nothing
    #[arg(long)]
    pub(super) dry_run: bool,
    #[command(flatten)]
    pub(super) pod: PodFlags,
    #[command(flatten)]
    pub(super) connection: Connection,
}

#[derive(clap::Args, Debug)]
pub(super) struct UninstallArgs {
    #[arg(long, default_value = "default")]
    pub(super) name: String,
    /// Also delete the StatefulSets' claims (and so their volumes)
    #[arg(long)]
    pub(super) delete_claims: bool,
    #[command(flatten)]
    pub(super) connection: Connection,
}

#[derive(clap::Args, Debug)]
pub(super) struct StatusArgs {
    #[arg(long, default_value = "default")]
    pub(super) name: String,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(super) format: Format,
    #[command(flatten)]
    pub(super) connection: Connection,
}

/// `--max-busy`: "1%" or "0.01", within the bounds the pod's canary takes; passed on as given.
fn max_busy(v: &str) -> Result<String, String> {
    crate::cli::canary::parse_share(v.trim())
        .map(|_| v.trim().to_string())
        .map_err(|e| format!("'{v}': {e}"))
}

/// `--every` and `--window` reach the pod in whole seconds: a fraction would be rounded (and
/// `--window` checked against a rounded `--every`), so it is refused; and the window must hold
/// the 3 probes a verdict needs, as the pod's canary says.
pub(super) fn check_times(every: Duration, window: Duration) -> Result<(), String> {
    for (flag, d) in [("--every", every), ("--window", window)] {
        if d.subsec_nanos() != 0 || d.is_zero() {
            return Err(format!(
                "{flag} {}s: expected whole seconds, e.g. 30s, 5m or 1h",
                d.as_secs_f64()
            ));
        }
    }
    if window < every.saturating_mul(3) {
        return Err(format!(
            "--window {}: shorter than three intervals of --every {}; a verdict needs at least \
             3 probes in its window: raise --window or lower --every",
            crate::canary::span(window),
            crate::canary::span(every)
        ));
    }
    Ok(())
}

/// A duration as `iogauge canary` reads it: 1h, 5m or 30s.
pub(super) fn duration(d: Duration) -> String {
    match d.as_secs().max(1) {
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_budgets_reach_the_pod_as_the_canary_reads_them() {
        let d = |s| duration(Duration::from_secs(s));
        assert_eq!(
            (d(3600), d(300), d(90), d(0)),
            ("1h".into(), "5m".into(), "90s".into(), "1s".into())
        );
        assert_eq!(max_busy("1%"), Ok("1%".into()));
        assert_eq!(max_busy(" 0.01 "), Ok("0.01".into()));
        for bad in ["0", "0%", "101%", "1.5", "x", "0.005%", "0.00001"] {
            assert!(max_busy(bad).is_err(), "{bad}");
        }
        assert_eq!(max_busy("0.01%"), Ok("0.01%".into()));
    }

    #[test]
    fn times_are_whole_seconds_and_the_window_holds_three_probes() {
        let s = Duration::from_secs;
        assert_eq!(check_times(s(300), s(900)), Ok(()));
        let e = check_times(s(300), s(899)).err().unwrap_or_default();
        assert!(e.starts_with("--window 899s: shorter than three intervals of --every 5m"));
        // 0.4 s would reach the pod as 1s: refused, not rounded.
        let e = check_times(Duration::from_millis(400), s(1))
            .err()
            .unwrap_or_default();
        assert_eq!(
            e,
            "--every 0.4s: expected whole seconds, e.g. 30s, 5m or 1h"
        );
        assert!(check_times(s(1), Duration::from_millis(3500)).is_err());
    }
}
