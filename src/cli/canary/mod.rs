//! `iogauge canary [PROFILE…]`: arguments, the HTTP endpoint and textfile, the frames a kube
//! pod prints, the history after every cycle, and the exit code (0 once a signal ends it).

mod publish;

use super::history::HistoryFlags;
use super::{Ended, Error, Kind, Outcome, Stop};
use crate::canary::serve::{self, Latest, Shared};
use crate::canary::{prepare, run, CanaryRequest};
use crate::diag::Diag;
use crate::history::{History, Invocation};
use publish::Publisher;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Watches a disk all the time: small probes on a schedule, a verdict over a rolling window,
/// Prometheus metrics
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Profiles: etcd (default), etcd-large, sync-iops, gitlab, or a profile file judged on sync_p99,
write_iops or read_iops. Runs until SIGTERM or Ctrl-C, which remove its files and end it with
exit 0. Probe failures (a full disk, a removed directory) are metrics and one line on stderr;
it keeps trying. docs/CANARY.md has the metrics, the alerts and the systemd unit.

Exit codes: 0 ended by a signal, 1 could not start (e.g. --listen address in use), 2 bad input.")]
pub(crate) struct CanaryArgs {
    /// Profiles to watch [default: etcd]
    #[arg(value_name = "PROFILE|FILE")]
    profiles: Vec<OsString>,
    /// Where the probes write: a directory on the disk you mean
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Probe this block device instead (an unmounted one; needs --allow-overwrite)
    #[arg(long, value_name = "PATH", conflicts_with = "dir")]
    device: Option<PathBuf>,
    /// With --device: the probes may write over the device's data
    #[arg(long, requires = "device")]
    allow_overwrite: bool,
    /// How often to probe: 10 (seconds), 30s, 5m, 1h
    #[arg(long, value_name = "D", default_value = "5m", value_parser = super::check::parse_duration)]
    every: Duration,
    /// How far back verdicts look
    #[arg(long, value_name = "D", default_value = "1h", value_parser = super::check::parse_duration)]
    window: Duration,
    /// Serve /metrics and /healthz on ADDR (host:port), or 'none'
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9465")]
    listen: String,
    /// Also write DIR/iogauge_canary.prom after every cycle (node_exporter's textfile collector)
    #[arg(long, value_name = "DIR")]
    textfile: Option<PathBuf>,
    /// Most of the disk's time the probes may take: 1% or 0.01
    #[arg(long, value_name = "SHARE", default_value = "1%", value_parser = parse_share)]
    max_busy: f64,
    /// The `node` label [default: the host name]
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// What to print on stdout after every cycle: nothing (the default), or the canary's
    /// document as one JSON line (docs/schema/canary.schema.json)
    #[arg(long, value_enum, default_value_t = Format::None)]
    format: Format,
    /// Remove the canary's own history entries older than this after every cycle
    #[arg(long, value_name = "D", default_value = "7d", value_parser = crate::history::parse_age)]
    keep: Duration,
    #[command(flatten)]
    history: HistoryFlags,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub(super) enum Format {
    /// Nothing on stdout: the metrics are the output.
    None,
    /// The document as one JSON line per cycle (JSON Lines).
    Json,
    /// The document as report::frames lines per cycle: what a kube pod prints. Hidden: a
    /// transport between iogauge's own pod and controller.
    #[value(hide = true)]
    KubeFrames,
}

/// The smallest budget taken: below it the interval would stretch past any window.
const MIN_SHARE: f64 = 1e-4;

/// `--max-busy`; `kube canary install` checks its own with it.
pub(crate) fn parse_share(v: &str) -> Result<f64, String> {
    let (num, scale) = match v.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (v, 1.0),
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|s| (MIN_SHARE..=1.0).contains(s))
        .ok_or_else(|| "expected a share from 0.01% to 100%, e.g. 1% or 0.01".into())
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub(crate) fn main(a: CanaryArgs, stop: &Stop) -> Ended {
    let req = CanaryRequest {
        profiles: if a.profiles.is_empty() {
            vec![OsString::from("etcd")]
        } else {
            a.profiles.clone()
        },
        dir: a.device.clone().unwrap_or_else(|| a.dir.clone()),
        device: a.device.is_some(),
        allow_overwrite: a.allow_overwrite,
        every: a.every,
        window: a.window,
        max_busy: a.max_busy,
        node: a.node.clone().unwrap_or_else(host_name),
        diag: Diag::new("iogauge canary", |l| eprintln!("{l}")),
    };
    let ready = prepare(&req)?;
    if let Some(dir) = &a.textfile {
        crate::workload::fs::check_dir(dir, "--textfile")
            .map_err(|e| Error::new(Kind::BadInput, e))?;
    }
    let latest = match a.listen.as_str() {
        "none" => None,
        addr => {
            let shared: Shared = Arc::new(Mutex::new(Latest {
                doc: None,
                at: Instant::now(),
                interval: a.every,
            }));
            let bound = serve::start(addr, shared.clone()).map_err(|e| Error::new(Kind::Run, e))?;
            eprintln!("iogauge canary: serving http://{bound}/metrics and /healthz");
            Some(shared)
        }
    };
    let history = if a.history.disabled() {
        None
    } else {
        match History::open(a.history.history_db.as_deref()) {
            Ok(h) => Some(h),
            Err(e) => {
                eprintln!(
                    "iogauge canary: history not saved: {}; the metrics are complete (--no-history to skip saving)",
                    String::from(e)
                );
                None
            }
        }
    };
    let mut publisher = Publisher {
        latest,
        textfile: a.textfile.clone(),
        format: a.format,
        history,
        keep: a.keep,
        at: Invocation::now(),
        said: Vec::new(),
        textfile_id: None,
    };
    run(&req, ready, stop, &mut publisher);
    publisher.finish();
    // On a device there are no files: the probes wrote over its first bytes.
    let files = if req.device {
        ""
    } else {
        "; its files were removed"
    };
    eprintln!("iogauge canary: stopped by {}{files}", stop.reason());
    Ok(Outcome::Pass)
}
