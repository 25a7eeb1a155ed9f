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

/// Labels as (name, value) pairs.
type Labels = Vec<(&'static str, String)>;

struct Out<'a> {
    text: String,
    flavour: Flavour,
    doc: &'a CanaryDocument,
}

impl Out<'_> {
    /// A family's HELP and TYPE lines. `name` is the sample name (with `_total` for counters).
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let fam = match (self.flavour, kind) {
            (Flavour::OpenMetrics, "counter") => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        let _ = writeln!(self.text, "# HELP {fam} {help}");
        let _ = writeln!(self.text, "# TYPE {fam} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &Labels, v: f64) {
        let l: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
            .collect();
        let _ = writeln!(self.text, "{name}{{{}}} {}", l.join(","), num(v));
    }

    /// The target's labels: directory, device, node.
    fn base(&self) -> Labels {
        vec![
            ("directory", self.doc.dir.clone()),
            ("device", self.doc.device.clone().unwrap_or_default()),
            ("node", self.doc.node.clone()),
        ]
    }

    /// A profile's labels, then `extra`.
    fn of(&self, p: &CanaryProfile, extra: &[(&'static str, &str)]) -> Labels {
        let mut l = vec![("profile", p.profile.clone())];
        l.extend(self.base());
        l.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        l
    }

    fn histograms(&mut self) {
        self.family(
            "iogauge_latency_seconds",
            "histogram",
            "Latencies the probes measured since the canary started (sync: the fsync/fdatasync call; read, write: completion).",
        );
        for p in &self.doc.profiles {
            for h in &p.latencies {
                let kind = [("kind", h.kind.as_str())];
                for (le, c) in &h.buckets {
                    let mut l = self.of(p, &kind);
                    l.push(("le", num(*le)));
                    self.sample("iogauge_latency_seconds_bucket", &l, *c as f64);
                }
                let mut l = self.of(p, &kind);
                l.push(("le", "+Inf".into()));
                self.sample("iogauge_latency_seconds_bucket", &l, h.count as f64);
                let l = self.of(p, &kind);
                self.sample("iogauge_latency_seconds_sum", &l, h.sum);
                self.sample("iogauge_latency_seconds_count", &l, h.count as f64);
            }
        }
    }

    /// The window's values and the thresholds, per unit: seconds and IOPS never share a family.
    fn window(&mut self) {
        let families = [
            (
                "iogauge_window_latency_seconds",
                "iogauge_latency_threshold_seconds",
                "seconds",
                "latency",
            ),
            (
                "iogauge_window_iops",
                "iogauge_iops_threshold",
                "iops",
                "rate",
            ),
        ];
        for (value, threshold, unit, what) in families {
            self.family(
                value,
                "gauge",
                &format!("The judged {what} over the window."),
            );
            for p in &self.doc.profiles {
                for m in p.metrics.iter().filter(|m| m.unit == unit) {
                    if let Some(v) = m.value {
                        let l = self.of(p, &[("metric", &m.key)]);
                        self.sample(value, &l, v);
                    }
                }
            }
            self.family(
                threshold,
                "gauge",
                &format!("The profile's {what} threshold."),
            );
            for p in &self.doc.profiles {
                for m in p.metrics.iter().filter(|m| m.unit == unit) {
                    for (level, v) in [("pass", Some(m.pass)), ("warn", m.warn)] {
                        if let Some(v) = v {
                            let l = self.of(p, &[("metric", &m.key), ("level", level)]);
                            self.sample(threshold, &l, v);
                        }
                    }
                }
            }
        }
        self.family(
            "iogauge_window_samples",
            "gauge",
            "Samples behind the window value (latencies, or I/Os).",
        );
        for p in &self.doc.profiles {
            for m in &p.metrics {
                let l = self.of(p, &[("metric", &m.key)]);
                self.sample("iogauge_window_samples", &l, m.samples as f64);
            }
        }
    }

    fn verdicts(&mut self) {
        self.family(
            "iogauge_verdict",
            "gauge",
            "The profile's verdict over the window at 99.9 % confidence: 1 for the current one.",
        );
        for p in &self.doc.profiles {
            for v in CanaryVerdict::ALL {
                let l = self.of(p, &[("verdict", v.word())]);
                self.sample("iogauge_verdict", &l, f64::from(u8::from(p.verdict == v)));
            }
        }
    }

    fn probes(&mut self) {
        self.family(
            "iogauge_probes_total",
            "counter",
            "Probes run since the canary started.",
        );
        for p in &self.doc.profiles {
            let l = self.of(p, &[]);
            self.sample("iogauge_probes_total", &l, p.probes as f64);
        }
        self.family(
            "iogauge_probe_errors_total",
            "counter",
            "Probes that failed, by reason.",
        );
        for p in &self.doc.profiles {
            for e in &p.errors {
                let l = self.of(p, &[("reason", &e.reason)]);
                self.sample("iogauge_probe_errors_total", &l, e.count as f64);
            }
        }
        let times = [
            (
                "iogauge_last_success_timestamp_seconds",
                "End of the last probe that succeeded (unix seconds).",
            ),
            (
                "iogauge_probe_duration_seconds",
                "The last probe's wall time.",
            ),
        ];
        for (i, (name, help)) in times.into_iter().enumerate() {
            self.family(name, "gauge", help);
            for p in &self.doc.profiles {
                let v = if i == 0 {
                    p.last_success
                } else {
                    p.last_duration_s
                };
                if let Some(v) = v {
                    let l = self.of(p, &[]);
                    self.sample(name, &l, v);
                }
            }
        }
    }

    fn canary(&mut self) {
        let d = self.doc;
        self.family(
            "iogauge_canary_info",
            "gauge",
            "The canary is up; its iogauge version.",
        );
        let mut info = vec![("version", d.iogauge.clone())];
        info.extend(self.base());
        self.sample("iogauge_canary_info", &info, 1.0);
        let gauges = [
            ("iogauge_canary_busy_ratio", d.budget.busy, "Disk busy time during the window's probes over wall time (an upper bound on the canary's own share)."),
            ("iogauge_canary_busy_budget_ratio", d.budget.max_busy, "The load budget (--max-busy)."),
            ("iogauge_canary_interval_seconds", d.interval_s, "The interval in use (--every, stretched when over budget)."),
            ("iogauge_canary_probe_scale", d.budget.scale, "The probe's size factor in use (1 = normal; shrunk when over budget)."),
        ];
        for (name, v, help) in gauges {
            self.family(name, "gauge", help);
            let l = self.base();
            self.sample(name, &l, v);
        }
    }
}

/// The exposition of `doc`.
pub(crate) fn render_openmetrics(doc: &CanaryDocument, flavour: Flavour) -> String {
    let mut o = Out {
        text: String::new(),
        flavour,
        doc,
    };
    o.canary();
    o.histograms();
    o.window();
    o.verdicts();
    o.probes();
    if flavour == Flavour::OpenMetrics {
        o.text.push_str("# EOF\n");
    }
    o.text
}

#[cfg(test)]
#[path = "openmetrics_tests.rs"]
mod tests;
