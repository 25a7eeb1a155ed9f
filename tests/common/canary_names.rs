//! The metric names and labels `iogauge canary` exposes, as its contract fixes them (issue 28,
//! "Metrics": names and labels are final). One list for every test that must agree with it:
//! tests/canary_rules.rs checks that the alert rules and the Grafana dashboard use only these
//! names and labels; the canary's exposition tests check its real output against the same list.
//! A new metric is added here first, then to the canary, the rules or the dashboard.

use std::collections::BTreeSet;

/// Labels of every per-profile series.
pub const PROFILE_LABELS: &[&str] = &["profile", "directory", "device", "node"];
/// Labels of the canary's own series (busy ratio, budget, interval, scale): no profile.
pub const TARGET_LABELS: &[&str] = &["directory", "device", "node"];

/// One metric family of the canary.
pub struct CanaryMetric {
    pub name: &'static str,
    /// "gauge", "counter" or "histogram" (text format 0.0.4's `# TYPE`).
    pub kind: &'static str,
    /// PROFILE_LABELS or TARGET_LABELS.
    pub base: &'static [&'static str],
    /// Labels beyond `base` (a histogram's `le` is not listed).
    pub extra: &'static [&'static str],
}

const fn m(
    name: &'static str,
    kind: &'static str,
    base: &'static [&'static str],
    extra: &'static [&'static str],
) -> CanaryMetric {
    CanaryMetric {
        name,
        kind,
        base,
        extra,
    }
}

/// Every family, in the contract's order. `iogauge_canary_info` is not per profile: the
/// contract names only its `version`; it is read here as one series per canary (TARGET_LABELS).
#[rustfmt::skip]
pub const CANARY_METRICS: &[CanaryMetric] = &[
    m("iogauge_canary_info",                    "gauge",     TARGET_LABELS,  &["version"]),
    m("iogauge_latency_seconds",                "histogram", PROFILE_LABELS, &["kind"]),
    m("iogauge_window_latency_seconds",         "gauge",     PROFILE_LABELS, &["metric"]),
    m("iogauge_window_iops",                    "gauge",     PROFILE_LABELS, &["metric"]),
    m("iogauge_latency_threshold_seconds",      "gauge",     PROFILE_LABELS, &["metric", "level"]),
    m("iogauge_iops_threshold",                 "gauge",     PROFILE_LABELS, &["metric", "level"]),
    m("iogauge_window_samples",                 "gauge",     PROFILE_LABELS, &["metric"]),
    m("iogauge_verdict",                        "gauge",     PROFILE_LABELS, &["verdict"]),
    m("iogauge_probes_total",                   "counter",   PROFILE_LABELS, &[]),
    m("iogauge_probe_errors_total",             "counter",   PROFILE_LABELS, &["reason"]),
    m("iogauge_last_success_timestamp_seconds", "gauge",     PROFILE_LABELS, &[]),
    m("iogauge_probe_duration_seconds",         "gauge",     PROFILE_LABELS, &[]),
    m("iogauge_canary_busy_ratio",              "gauge",     TARGET_LABELS,  &[]),
    m("iogauge_canary_busy_budget_ratio",       "gauge",     TARGET_LABELS,  &[]),
    m("iogauge_canary_interval_seconds",        "gauge",     TARGET_LABELS,  &[]),
    m("iogauge_canary_probe_scale",             "gauge",     TARGET_LABELS,  &[]),
];

/// The family a sample name belongs to: the name itself, or a histogram's `_bucket`, `_sum`
/// or `_count` series.
pub fn family(sample: &str) -> Option<&'static CanaryMetric> {
    CANARY_METRICS.iter().find(|f| {
        sample == f.name
            || (f.kind == "histogram"
                && ["_bucket", "_sum", "_count"]
                    .iter()
                    .any(|s| sample.strip_suffix(s) == Some(f.name)))
    })
}

/// The labels a sample of `f` may carry (a histogram bucket's `le` included).
pub fn labels(f: &CanaryMetric) -> Vec<&'static str> {
    let mut all: Vec<&str> = f.base.iter().chain(f.extra).copied().collect();
    if f.kind == "histogram" {
        all.push("le");
    }
    all
}

/// What in a Prometheus text exposition (format 0.0.4, or OpenMetrics) differs from the
/// contract, in words: an unknown family or sample name, a `# TYPE` other than the contract's,
/// a sample whose label names are not exactly its family's (a bucket adds `le`; OpenMetrics
/// counters may add `_created` samples).
pub fn exposition_problems(text: &str) -> Vec<String> {
    let mut bad = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(t) = line.strip_prefix("# TYPE ") {
            let (name, kind) = t.split_once(' ').unwrap_or((t, ""));
            // OpenMetrics names a counter's family without `_total`.
            let f = family(name).or_else(|| family(&format!("{name}_total")));
            match f {
                Some(f) if f.kind == kind => {}
                Some(f) => bad.push(format!("{name}: TYPE {kind}, the contract says {}", f.kind)),
                None => bad.push(format!("{name}: not a contract family")),
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let end = line.find(['{', ' ']).unwrap_or(line.len());
        let name = &line[..end];
        let (f, bucket) = match family(name) {
            Some(f) => (f, name.ends_with("_bucket")),
            None => match name
                .strip_suffix("_created")
                .and_then(|n| family(&format!("{n}_total")))
            {
                Some(f) if f.kind == "counter" => (f, false),
                _ => {
                    bad.push(format!("{name}: not a contract series"));
                    continue;
                }
            },
        };
        let mut want: BTreeSet<&str> = f.base.iter().chain(f.extra).copied().collect();
        if bucket {
            want.insert("le");
        }
        let got = label_names(&line[end..]);
        if got.iter().map(String::as_str).collect::<BTreeSet<_>>() != want {
            bad.push(format!(
                "{name}: labels {got:?}, the contract says {want:?}"
            ));
        }
    }
    bad
}

/// The label names of `{a="x",b="y\"z"} 1`, in order ([] without braces).
fn label_names(rest: &str) -> Vec<String> {
    let Some(body) = rest.strip_prefix('{') else {
        return Vec::new();
    };
    let mut names = Vec::new();
    let mut chars = body.chars();
    let mut name = String::new();
    while let Some(c) = chars.next() {
        match c {
            '}' => break,
            '=' => {
                names.push(
                    std::mem::take(&mut name)
                        .trim()
                        .trim_start_matches(',')
                        .trim()
                        .to_string(),
                );
                // The quoted value, with its escapes.
                chars.next();
                while let Some(v) = chars.next() {
                    match v {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            c => name.push(c),
        }
    }
    names
}

/// The metric and label names of a PromQL expression that are not the contract's, in words;
/// every metric name met is added to `seen`. A small lexer, enough for the expressions here:
/// strings and `[...]` ranges are skipped, a name followed by `(` is a function, a name before
/// `{` a selector whose matchers are labels of that family.
pub fn unknown_names(expr: &str, seen: &mut BTreeSet<String>) -> Vec<String> {
    const AGGREGATIONS: &[&str] = &[
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
    ];
    const LISTS: &[&str] = &[
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
    ];
    const KEYWORDS: &[&str] = &[
        "and", "or", "unless", "bool", "offset", "inf", "nan", "atan2",
    ];
    let any_label = |l: &str| {
        ["job", "instance", "le"].contains(&l)
            || CANARY_METRICS.iter().any(|f| labels(f).contains(&l))
    };
    let c: Vec<char> = expr.chars().collect();
    let mut bad = Vec::new();
    let mut i = 0;
    let mut selector: Option<String> = None;
    while i < c.len() {
        let ch = c[i];
        if ch == '"' || ch == '\'' || ch == '`' {
            i = skip_string(&c, i);
        } else if ch == '[' {
            i += c[i..].iter().position(|&x| x == ']').unwrap() + 1;
        } else if ch == '{' {
            // Matchers: `label op "value"`, comma-separated; the strings removed first.
            let mut j = i + 1;
            let mut inner = String::new();
            while c[j] != '}' {
                if matches!(c[j], '"' | '\'' | '`') {
                    j = skip_string(&c, j);
                } else {
                    inner.push(c[j]);
                    j += 1;
                }
            }
            for m in inner.split(',').filter(|m| !m.trim().is_empty()) {
                let l = m.split(['=', '!', '~']).next().unwrap().trim();
                let known = match selector.as_deref().and_then(family) {
                    Some(f) => labels(f).contains(&l) || ["job", "instance"].contains(&l),
                    None => any_label(l),
                };
                if !known {
                    bad.push(match &selector {
                        Some(m) => format!("label {l} of {m}"),
                        None => format!("label {l}"),
                    });
                }
            }
            selector = None;
            i = j + 1;
        } else if ch.is_ascii_digit() || ch == '.' {
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '.') {
                i += 1;
            }
        } else if ch.is_ascii_alphabetic() || ch == '_' || ch == ':' {
            let start = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_' || c[i] == ':') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let next = c[i..].iter().find(|x| !x.is_whitespace()).copied();
            if LISTS.contains(&word.as_str()) && next == Some('(') {
                let open = i + c[i..].iter().position(|&x| x == '(').unwrap();
                let close = open + c[open..].iter().position(|&x| x == ')').unwrap();
                let list: String = c[open + 1..close].iter().collect();
                for l in list.split(',').map(str::trim).filter(|l| !l.is_empty()) {
                    if !any_label(l) {
                        bad.push(format!("label {l}"));
                    }
                }
                i = close + 1;
            } else if next == Some('(') || AGGREGATIONS.contains(&word.as_str()) {
                // A function or an aggregation (which may put `by (...)` before its `(`).
            } else if !KEYWORDS.contains(&word.as_str()) && !LISTS.contains(&word.as_str()) {
                if family(&word).is_none() && word != "up" {
                    bad.push(format!("metric {word}"));
                }
                selector = (next == Some('{')).then(|| word.clone());
                seen.insert(word);
            }
        } else {
            i += 1;
        }
    }
    bad
}

/// The index just past the string literal opening at `i`.
fn skip_string(c: &[char], i: usize) -> usize {
    let quote = c[i];
    let mut j = i + 1;
    while c[j] != quote {
        j += if c[j] == '\\' && quote != '`' { 2 } else { 1 };
    }
    j + 1
}
