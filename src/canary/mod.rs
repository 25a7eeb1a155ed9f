//! `iogauge canary`: the profiles in a low-duty form on a schedule, a rolling window judged with
//! the profiles' thresholds at a stated confidence, and the result as a `CanaryDocument` after
//! every cycle for the caller to publish (`/metrics`, a textfile, frames, the history).
//!
//! `probe.rs` runs one profile through `app::check`; `window.rs` judges the last `--window`;
//! `totals.rs` keeps the counters and cumulative histograms; `budget.rs` keeps the probes under
//! `--max-busy`; `serve.rs` answers `/metrics` and `/healthz`.

mod budget;
pub(crate) mod probe;
pub(crate) mod serve;
mod totals;
mod window;

use crate::app::error::Error;
use crate::diag::Diag;
use crate::input::profiles;
use crate::report::document::{
    CanaryBudget, CanaryDocument, CanaryProfile, CanaryVerdict, CheckDocument, CANARY_KIND,
    SCHEMA_VERSION,
};
use crate::run::stop::Stop;
use crate::stats::disk::DiskTarget;
use crate::verdict::criteria::{MetricKey, Profile};
use crate::verdict::sequential::CONFIDENCE;
use budget::Budget;
use probe::{probe, Probed};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};
use totals::Totals;
use window::Window;

/// What to watch, and how.
#[derive(Debug, Clone)]
pub(crate) struct CanaryRequest {
    /// Built-in profile names or profile files.
    pub profiles: Vec<OsString>,
    /// The directory probed, or with `device` the block device.
    pub dir: PathBuf,
    pub device: bool,
    pub allow_overwrite: bool,
    /// `--every`.
    pub every: Duration,
    /// `--window`.
    pub window: Duration,
    /// `--max-busy` as a ratio.
    pub max_busy: f64,
    /// The `node` label.
    pub node: String,
    /// Where the probes' warnings go.
    pub diag: Diag,
}

/// Where each cycle's result goes; `cli/` prints, serves and saves it.
pub(crate) trait Observer: crate::observer::Observer {
    /// The canary after a cycle, with the documents of the probes that ran (for the history).
    fn cycle(&mut self, doc: &CanaryDocument, probes: &[CheckDocument]);
}

/// A profile being watched.
struct Watched {
    /// Read once: a profile file edited or removed later changes nothing.
    profile: Profile,
    window: Window,
    totals: Totals,
    edges: Vec<f64>,
    /// The verdict said last (a line goes out when it changes).
    said: Option<CanaryVerdict>,
    /// The failure said last: a line goes out when its reason changes (its message names a
    /// new file and offset every probe), and when probes recover.
    failing: Option<probe::FailReason>,
}

/// Resolves the profiles; Err (bad input) for one a canary cannot judge.
fn watched(req: &CanaryRequest) -> Result<Vec<Watched>, Error> {
    if req.window < req.every.saturating_mul(3) {
        return Err(Error::bad_input(format!(
            "--window {}: shorter than three intervals of --every {}; a verdict needs at least \
             3 probes in its window: raise --window or lower --every",
            span(req.window),
            span(req.every)
        )));
    }
    let resolved = req
        .profiles
        .iter()
        .map(|name| profiles::resolve(name))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Error::bad_input)?;
    // Shared with `kube canary install`, which refuses the same before applying anything.
    profiles::canary_checks(&resolved).map_err(Error::bad_input)?;
    let mut out: Vec<Watched> = Vec::new();
    for p in resolved {
        let thresholds: Vec<f64> = p
            .metrics
            .iter()
            .filter(|m| m.key == MetricKey::SyncP99)
            .flat_map(|m| {
                [
                    m.pass.value().ok(),
                    m.warn.as_ref().and_then(|w| w.value().ok()),
                ]
            })
            .flatten()
            .map(|ns| ns * 1e-9)
            .collect();
        out.push(Watched {
            edges: totals::edges(&thresholds),
            profile: p,
            window: Window::default(),
            totals: Totals::new(),
            said: None,
            failing: None,
        });
    }
    Ok(out)
}

fn unix(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// A request checked and ready to run.
pub(crate) struct Ready {
    profiles: Vec<Watched>,
}

/// Checks the request before anything else starts (the caller's listener too): its profiles
/// can be judged by a canary, and the directory exists. Err: bad input.
pub(crate) fn prepare(req: &CanaryRequest) -> Result<Ready, Error> {
    let profiles = watched(req)?;
    if !req.device {
        crate::workload::fs::check_dir(&req.dir, "--dir").map_err(Error::bad_input)?;
    }
    Ok(Ready { profiles })
}

/// Runs until `stop` is set: a cycle of probes, the document, then a wait for the interval.
/// Probe failures are the document's, never an end.
pub(crate) fn run(req: &CanaryRequest, ready: Ready, stop: &Stop, obs: &mut dyn Observer) {
    let mut profiles = ready.profiles;
    let disk = crate::stats::disk::resolve(&req.dir).ok().flatten();
    let started = SystemTime::now();
    let mut budget = Budget::new(req.max_busy, req.every, req.window, started);
    while !stop.is_set() {
        let cycle_start = Instant::now();
        let (busy, docs) = cycle(req, &mut profiles, &budget, disk.as_ref(), stop, obs);
        if stop.is_set() {
            break;
        }
        let now = SystemTime::now();
        budget.record(now, busy);
        let doc = document(
            req,
            &mut profiles,
            &budget,
            disk.as_ref(),
            started,
            now,
            obs,
        );
        obs.cycle(&doc, &docs);
        wait(stop, budget.interval.saturating_sub(cycle_start.elapsed()));
    }
}

/// Every profile's probe once; the disk's busy time during them.
fn cycle(
    req: &CanaryRequest,
    profiles: &mut [Watched],
    budget: &Budget,
    disk: Option<&DiskTarget>,
    stop: &Stop,
    obs: &mut dyn Observer,
) -> (Duration, Vec<CheckDocument>) {
    let mut busy = Duration::ZERO;
    let mut docs = Vec::new();
    for w in profiles.iter_mut() {
        let before = disk.and_then(|d| d.snapshot().ok());
        let p = probe(req, &w.profile, budget.scale, stop);
        let after = disk.and_then(|d| d.snapshot().ok());
        busy += match (before, after) {
            (Some(b), Some(a)) => Duration::from_millis(a.stat.delta(&b.stat).io_ticks),
            _ => p.wall,
        };
        let wall_s = p.wall.as_secs_f64();
        match p.probed {
            Probed::Interrupted => break,
            Probed::Sample(s) => {
                w.totals.succeeded(&s, unix(s.at), wall_s);
                w.window.push(*s, req.window, SystemTime::now());
                if w.failing.take().is_some() {
                    obs.note(&format!(
                        "iogauge canary: {}: probes succeed again",
                        w.profile.name
                    ));
                }
            }
            Probed::Failed(reason, why) => {
                w.totals.failed(reason, &why, wall_s);
                if w.failing != Some(reason) {
                    obs.note(&format!(
                        "iogauge canary: {}: probe failed ({}): {}; trying again every {}",
                        w.profile.name,
                        reason.word(),
                        crate::untrusted::term(&why),
                        span(budget.interval)
                    ));
                    w.failing = Some(reason);
                }
            }
        }
        docs.extend(p.doc);
    }
    (busy, docs)
}

/// The document after a cycle; a line for every verdict that changed.
fn document(
    req: &CanaryRequest,
    profiles: &mut [Watched],
    budget: &Budget,
    disk: Option<&DiskTarget>,
    started: SystemTime,
    now: SystemTime,
    obs: &mut dyn Observer,
) -> CanaryDocument {
    let mut out = Vec::new();
    for w in profiles.iter_mut() {
        w.window.forget(req.window, now);
        let (verdict, metrics) = w.window.judge(&w.profile);
        if w.said != Some(verdict) {
            let values: Vec<String> = metrics
                .iter()
                .map(|m| match m.value {
                    Some(v) => format!("{} {}", m.key, show(v, &m.unit)),
                    None => format!("{} not measured", m.key),
                })
                .collect();
            obs.note(&format!(
                "iogauge canary: {}: {} over the last {} ({} probes): {}",
                w.profile.name,
                verdict.word().to_uppercase(),
                span(req.window),
                w.window.len(),
                values.join(", ")
            ));
            w.said = Some(verdict);
        }
        out.push(CanaryProfile {
            profile: w.profile.name.clone(),
            title: w.profile.title.clone(),
            verdict,
            confidence: CONFIDENCE,
            metrics,
            probes: w.totals.probes,
            errors: w.totals.error_counts(),
            last_success: w.totals.last_success,
            last_error: w.totals.last_error.clone(),
            last_duration_s: w.totals.last_duration_s,
            latencies: w.totals.histograms(&w.edges),
        });
    }
    CanaryDocument {
        schema_version: SCHEMA_VERSION,
        kind: CANARY_KIND.to_string(),
        iogauge: env!("CARGO_PKG_VERSION").to_string(),
        node: req.node.clone(),
        dir: std::path::absolute(&req.dir)
            .unwrap_or_else(|_| req.dir.clone())
            .display()
            .to_string(),
        device: disk.map(|d| d.name.clone()),
        started_at: unix(started),
        at: unix(now),
        every_s: req.every.as_secs_f64(),
        interval_s: budget.interval.as_secs_f64(),
        window_s: req.window.as_secs_f64(),
        budget: CanaryBudget {
            max_busy: req.max_busy,
            busy: budget.share(now),
            measured_by: if disk.is_some() { "device" } else { "wall" }.to_string(),
            scale: budget.scale,
        },
        profiles: out,
    }
}

/// A value in its unit's words: `0.27 ms`, `4573 IOPS`.
fn show(v: f64, unit: &str) -> String {
    if unit == "seconds" {
        format!("{:.2} ms", v * 1e3)
    } else {
        format!("{v:.0} IOPS")
    }
}

/// A duration as `--every` takes it: `5m`, `1h`, `90s`.
pub(crate) fn span(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{}ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Sleeps `d`, waking every 100 ms to see whether a signal asked to stop.
fn wait(stop: &Stop, d: Duration) {
    let end = Instant::now() + d;
    while !stop.is_set() {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}
