//! A canary document as a Prometheus exposition: the text format 0.0.4 that every Prometheus
//! and node_exporter's textfile collector read, or OpenMetrics 1.0 when a scraper asks for it
//! (the same series; counter families named without `_total`, and `# EOF` at the end).
//! docs/CANARY.md lists the series; the names are a contract with the alert rules and the
//! dashboard under deploy/.

use super::document::{CanaryDocument, CanaryProfile, CanaryVerdict};
use std::fmt::Write as _;

/// The content type of each flavour, for the HTTP answer.
pub(crate) const TEXT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
pub(crate) const OPENMETRICS_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Which exposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavour {
    Text,
    OpenMetrics,
}

/// A label value as the format wants it: backslash, double quote and line feed escaped.
fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A number as both formats read it (Rust's shortest round-trip form, never an exponent for
/// these magnitudes; `NaN` and `+Inf` as spelt by the format).
fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

struct Out {
    text: String,
    flavour: Flavour,
}

impl Out {
    /// A family's HELP and TYPE lines. `name` is the sample name (with `_total` for counters).
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let fam = match (self.flavour, kind) {
            (Flavour::OpenMetrics, "counter") => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        let _ = writeln!(self.text, "# HELP {fam} {help}");
        let _ = writeln!(self.text, "# TYPE {fam} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        let l: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
            .collect();
        let _ = writeln!(self.text, "{name}{{{}}} {}", l.join(","), num(v));
    }
}

/// The exposition of `doc`.
pub(crate) fn render_openmetrics(doc: &CanaryDocument, flavour: Flavour) -> String {
    let mut o = Out {
        text: String::new(),
        flavour,
    };
    let device = doc.device.clone().unwrap_or_default();
    let base = [
        ("directory", doc.dir.as_str()),
        ("device", device.as_str()),
        ("node", doc.node.as_str()),
    ];
    let with =
        |p: &CanaryProfile, extra: &[(&'static str, String)]| -> Vec<(&'static str, String)> {
            let mut l = vec![("profile", p.profile.clone())];
            l.extend(base.iter().map(|(k, v)| (*k, v.to_string())));
            l.extend(extra.iter().cloned());
            l
        };
    let put = |o: &mut Out, name: &str, l: Vec<(&'static str, String)>, v: f64| {
        let r: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
        o.sample(name, &r, v);
    };

    o.family(
        "iogauge_canary_info",
        "gauge",
        "The canary is up; its iogauge version.",
    );
    let mut info = vec![("version", doc.iogauge.clone())];
    info.extend(base.iter().map(|(k, v)| (*k, v.to_string())));
    put(&mut o, "iogauge_canary_info", info, 1.0);

    o.family(
        "iogauge_latency_seconds",
        "histogram",
        "Latencies the probes measured since the canary started (sync: the fsync/fdatasync call; read, write: completion).",
    );
    for p in &doc.profiles {
        for h in &p.latencies {
            let kind = [("kind", h.kind.clone())];
            for (le, c) in &h.buckets {
                let mut l = with(p, &kind);
                l.push(("le", num(*le)));
                put(&mut o, "iogauge_latency_seconds_bucket", l, *c as f64);
            }
            let mut l = with(p, &kind);
            l.push(("le", "+Inf".into()));
            put(&mut o, "iogauge_latency_seconds_bucket", l, h.count as f64);
            put(&mut o, "iogauge_latency_seconds_sum", with(p, &kind), h.sum);
            put(
                &mut o,
                "iogauge_latency_seconds_count",
                with(p, &kind),
                h.count as f64,
            );
        }
    }

    let metric_families = [
        (
            "iogauge_window_latency_seconds",
            "seconds",
            "The judged latency metric over the window.",
        ),
        (
            "iogauge_window_iops",
            "iops",
            "The judged rate over the window (I/Os over measured seconds).",
        ),
    ];
    for (name, unit, help) in metric_families {
        o.family(name, "gauge", help);
        for p in &doc.profiles {
            for m in p.metrics.iter().filter(|m| m.unit == unit) {
                if let Some(v) = m.value {
                    put(&mut o, name, with(p, &[("metric", m.key.clone())]), v);
                }
            }
        }
    }
    let thresholds = [
        (
            "iogauge_latency_threshold_seconds",
            "seconds",
            "The profile's latency threshold.",
        ),
        (
            "iogauge_iops_threshold",
            "iops",
            "The profile's rate threshold.",
        ),
    ];
    for (name, unit, help) in thresholds {
        o.family(name, "gauge", help);
        for p in &doc.profiles {
            for m in p.metrics.iter().filter(|m| m.unit == unit) {
                let levels = [("pass", Some(m.pass)), ("warn", m.warn)];
                for (level, v) in levels {
                    if let Some(v) = v {
                        let l = [("metric", m.key.clone()), ("level", level.to_string())];
                        put(&mut o, name, with(p, &l), v);
                    }
                }
            }
        }
    }
    o.family(
        "iogauge_window_samples",
        "gauge",
        "Samples behind the window value (latencies, or I/Os).",
    );
    for p in &doc.profiles {
        for m in &p.metrics {
            put(
                &mut o,
                "iogauge_window_samples",
                with(p, &[("metric", m.key.clone())]),
                m.samples as f64,
            );
        }
    }
    o.family(
        "iogauge_verdict",
        "gauge",
        "The profile's verdict over the window at 99.9 % confidence: 1 for the current one.",
    );
    for p in &doc.profiles {
        for v in CanaryVerdict::ALL {
            let one = if p.verdict == v { 1.0 } else { 0.0 };
            put(
                &mut o,
                "iogauge_verdict",
                with(p, &[("verdict", v.word().to_string())]),
                one,
            );
        }
    }
    o.family(
        "iogauge_probes_total",
        "counter",
        "Probes run since the canary started.",
    );
    for p in &doc.profiles {
        put(
            &mut o,
            "iogauge_probes_total",
            with(p, &[]),
            p.probes as f64,
        );
    }
    o.family(
        "iogauge_probe_errors_total",
        "counter",
        "Probes that failed, by reason.",
    );
    for p in &doc.profiles {
        for e in &p.errors {
            put(
                &mut o,
                "iogauge_probe_errors_total",
                with(p, &[("reason", e.reason.clone())]),
                e.count as f64,
            );
        }
    }
    o.family(
        "iogauge_last_success_timestamp_seconds",
        "gauge",
        "End of the last probe that succeeded (unix seconds).",
    );
    for p in &doc.profiles {
        if let Some(t) = p.last_success {
            put(
                &mut o,
                "iogauge_last_success_timestamp_seconds",
                with(p, &[]),
                t,
            );
        }
    }
    o.family(
        "iogauge_probe_duration_seconds",
        "gauge",
        "The last probe's wall time.",
    );
    for p in &doc.profiles {
        if let Some(d) = p.last_duration_s {
            put(&mut o, "iogauge_probe_duration_seconds", with(p, &[]), d);
        }
    }
    let canary = [
        ("iogauge_canary_busy_ratio", doc.budget.busy, "Disk busy time during the window's probes over wall time (an upper bound on the canary's own share)."),
        ("iogauge_canary_busy_budget_ratio", doc.budget.max_busy, "The load budget (--max-busy)."),
        ("iogauge_canary_interval_seconds", doc.interval_s, "The interval in use (--every, stretched when over budget)."),
        ("iogauge_canary_probe_scale", doc.budget.scale, "The probe's size factor in use (1 = normal; shrunk when over budget)."),
    ];
    for (name, v, help) in canary {
        o.family(name, "gauge", help);
        let l: Vec<(&'static str, String)> =
            base.iter().map(|(k, v)| (*k, v.to_string())).collect();
        put(&mut o, name, l, v);
    }
    if flavour == Flavour::OpenMetrics {
        o.text.push_str("# EOF\n");
    }
    o.text
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;
