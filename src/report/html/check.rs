//! `iogauge check`'s page: the overall verdict and where it was measured, a table of every
//! metric against its threshold, then per profile its charts, numbers and job.

use super::fio::{fio_date, job_charts, job_numbers, Judged};
use super::page::{
    badge, command_block, esc, facts, fmt_ns, fmt_unit, notes, page, sig3, table, td, td_html,
    td_num, verdict_box,
};
use super::svg::{BarChart, RefLine};
use crate::report::document::{
    CheckDocument, CheckVerdict, Context, LatencyStats, MetricOutcome, ProfileOutcome, RunReport,
    SmallFilesResult, Summary,
};
use serde_json::Value;
use std::fmt::Write;

/// The headline word for a set of outcomes, in the exit code's order: an interrupt, then a
/// failure, then a profile that could not run, then a warning.
pub(crate) fn overall(s: &Summary) -> CheckVerdict {
    if s.interrupted > 0 {
        CheckVerdict::Interrupted
    } else if s.failed > 0 {
        CheckVerdict::Fail
    } else if s.errors > 0 {
        CheckVerdict::Error
    } else if s.warned > 0 {
        CheckVerdict::Warn
    } else {
        CheckVerdict::Pass
    }
}

/// What the verdict words mean, for someone who has not read the README.
pub(crate) const LEGEND: &str = "<p class=\"muted\">Each profile runs a published workload \
    (the fio job at the end of its section) and compares one or more numbers with a published \
    threshold. <b>PASS</b>: every number met its threshold. <b>WARN</b>: a number reached only \
    the lower step, or the run did not measure a real disk (memory, page cache). <b>FAIL</b>: a \
    number missed its threshold. <b>ERROR</b>: the profile could not run.</p>\n";

/// The run's date: fio's timestamp of the first profile with a fio report.
pub(crate) fn check_date(doc: &CheckDocument) -> Option<String> {
    doc.profiles.iter().find_map(|p| match &p.report {
        Some(RunReport::Fio(v)) => fio_date(v),
        _ => None,
    })
}

/// Host, kernel, directory, filesystem and device as label/value pairs.
pub(crate) fn context_facts(ctx: &Context, dir: &str, device: bool) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("Host", ctx.hostname.clone()),
        ("Kernel", ctx.kernel.clone()),
        (
            if device { "Block device" } else { "Directory" },
            dir.to_string(),
        ),
    ];
    if let Some(fs) = &ctx.filesystem {
        v.push((
            "Filesystem",
            format!(
                "{} from {}, mounted at {} ({})",
                fs.fs_type, fs.source, fs.mount_point, fs.options
            ),
        ));
    }
    if let Some(d) = &ctx.device {
        let mut parts = vec![d.name.clone()];
        if let Some(m) = &d.model {
            parts.push(format!("model {}", m.trim()));
        }
        match d.rotational {
            Some(true) => parts.push("rotational (the kernel treats it as a spinning disk)".into()),
            Some(false) => parts.push("non-rotational (SSD/NVMe)".into()),
            None => {}
        }
        if let Some(s) = &d.scheduler {
            parts.push(format!("scheduler {s}"));
        }
        if !d.slaves.is_empty() {
            parts.push(format!("on {}", d.slaves.join(", ")));
        }
        v.push(("Device", parts.join(", ")));
    }
    v
}

/// The page of a check document.
pub(crate) fn render_check_html(doc: &CheckDocument) -> String {
    let v = overall(&doc.summary);
    let names: Vec<&str> = doc.profiles.iter().map(|p| p.profile.as_str()).collect();
    let mut body = format!("<h1>iogauge check: {}</h1>\n", esc(&names.join(", ")));
    body.push_str(&verdict_box(v, &esc(&doc.summary.line())));
    let mut f = context_facts(&doc.context, &doc.dir, doc.device);
    f.push(("iogauge", doc.iogauge.clone()));
    f.push(("Date", check_date(doc).unwrap_or_default()));
    body.push_str(&facts(&f));
    body.push_str(LEGEND);
    body.push_str("<h2>Verdicts</h2>\n");
    body.push_str(&summary_table(&doc.profiles));
    for p in &doc.profiles {
        body.push_str(&profile_section(p, 2));
    }
    page(
        &format!("iogauge check {} — {}", v.word(), doc.context.hostname),
        &body,
    )
}

/// One row per profile and metric (a profile without metrics gets one row with its reason).
pub(crate) fn summary_table(profiles: &[ProfileOutcome]) -> String {
    let mut rows = Vec::new();
    for p in profiles {
        if p.metrics.is_empty() {
            rows.push(vec![
                td(&p.profile),
                td_html(&badge(p.verdict)),
                td(p.reason.as_deref().unwrap_or("")),
                td(""),
                td(""),
                td(""),
                td(""),
            ]);
        }
        for m in &p.metrics {
            rows.push(vec![
                td(&p.profile),
                td_html(&badge(m.verdict)),
                td(&m.label),
                td_num(&m.value_text),
                td(&m.threshold_text),
                td(&m.source),
                td(m.verdict_label.as_deref().unwrap_or("")),
            ]);
        }
    }
    let mut s = table(
        &[
            "profile",
            "verdict",
            "metric",
            "value",
            "needs",
            "threshold source",
            "meaning",
        ],
        &rows,
    );
    let mut doubts = Vec::new();
    for p in profiles {
        if let Some(n) = &p.not_disk {
            doubts.push(format!("{}: not a disk measurement: {n}", p.profile));
        }
        doubts.extend(p.warnings.iter().map(|w| format!("{}: {w}", p.profile)));
    }
    if !doubts.is_empty() {
        s.push_str("<p><b>Reasons to doubt the numbers</b></p>\n");
        s.push_str(&notes(&doubts));
    }
    let next: Vec<String> = profiles
        .iter()
        .flat_map(|p| p.advice.iter().map(move |a| format!("{}: {a}", p.profile)))
        .collect();
    if !next.is_empty() {
        s.push_str("<p><b>What to do next</b></p>\n");
        s.push_str(&notes(&next));
    }
    s
}

fn fmt_for(unit: &str) -> fn(f64) -> String {
    match unit {
        "ns" => fmt_ns,
        "IOPS" => |v| format!("{} IOPS", sig3(v)),
        "files/s" => |v| format!("{} files/s", sig3(v)),
        _ => |v| sig3(v),
    }
}

/// Where a judged metric shows on the fio charts.
fn judged(p: &ProfileOutcome) -> Judged {
    let mut j = Judged::default();
    for m in &p.metrics {
        // The pass step only: the full condition is too long for a chart label.
        let label = format!(
            "threshold {} {}",
            if m.better == "higher" { "≥" } else { "<" },
            fmt_for(&m.unit)(m.threshold)
        );
        match m.metric.as_str() {
            "sync_p99" => j.latency = Some(("sync".into(), m.threshold, label)),
            "write_iops" => j.iops.push(("write".into(), m.threshold, label)),
            "read_iops" => j.iops.push(("read".into(), m.threshold, label)),
            _ => {}
        }
    }
    j
}

/// This run among the reference systems, the threshold marked.
fn rank_chart(p: &ProfileOutcome, m: &MetricOutcome) -> Option<String> {
    if m.references.is_empty() {
        return None;
    }
    let mut bars: Vec<(String, f64, bool)> = m
        .references
        .iter()
        .map(|r| (r.system.clone(), r.value, false))
        .collect();
    bars.push((format!("this run ({})", p.profile), m.value, true));
    // Best first: the references come that way, and this run goes where it ranks.
    if m.better == "higher" {
        bars.sort_by(|a, b| b.1.total_cmp(&a.1));
    } else {
        bars.sort_by(|a, b| a.1.total_cmp(&b.1));
    }
    Some(
        BarChart {
            title: format!("{} against reference systems", m.label),
            caption: format!(
                "{}. Best first; this run is highlighted, the dashed line is the threshold ({}).",
                m.rank.clone().unwrap_or_else(|| m.value_text.clone()),
                m.threshold_text
            ),
            // Latency ticks carry their own unit (µs, ms); rates are named.
            x_label: if m.unit == "ns" {
                m.label.clone()
            } else {
                format!("{} ({})", m.label, m.unit)
            },
            fmt: fmt_for(&m.unit),
            bars,
            marker: Some(RefLine {
                value: m.threshold,
                label: format!(
                    "threshold {} {}",
                    if m.better == "higher" { "≥" } else { "<" },
                    fmt_for(&m.unit)(m.threshold)
                ),
                kind: "threshold",
            }),
        }
        .render(),
    )
}

/// Everything about one profile; `h` is the heading level of its title.
pub(crate) fn profile_section(p: &ProfileOutcome, h: u8) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<h{h}>{} {} — {}</h{h}>",
        badge(p.verdict),
        esc(&p.profile),
        esc(&p.title)
    );
    let sub = h + 1;
    for m in &p.metrics {
        let label = m
            .verdict_label
            .as_ref()
            .map(|l| format!(": {}", esc(l)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "<p>{} {} <b>{}</b>, needs {}{label}.<br><span class=\"muted\">Threshold source: {}</span></p>",
            badge(m.verdict),
            esc(&m.label),
            esc(&m.value_text),
            esc(&m.threshold_text),
            esc(&m.source)
        );
    }
    if let Some(r) = &p.reason {
        let _ = writeln!(s, "<p>{}</p>", esc(r));
    }
    if let Some(line) = p.how_reached() {
        let _ = writeln!(
            s,
            "<p class=\"muted\">How it was reached: {}</p>",
            esc(&line)
        );
    }
    if !p.info.is_empty() {
        let rows: Vec<Vec<String>> = p
            .info
            .iter()
            .map(|i| {
                let g: Vec<String> = i
                    .guidance
                    .iter()
                    .map(|g| {
                        let met = if g.met { "met" } else { "NOT met" };
                        format!("{} {} {met}", g.label, fmt_unit(g.value, &i.unit))
                    })
                    .collect();
                vec![td(&i.label), td_num(&i.value_text), td(&g.join("; "))]
            })
            .collect();
        s.push_str(&table(&["also measured", "value", "guidance"], &rows));
    }
    let mut doubts = Vec::new();
    if let Some(n) = &p.not_disk {
        doubts.push(format!("Not a disk measurement: {n}"));
    }
    doubts.extend(p.warnings.iter().cloned());
    if !doubts.is_empty() {
        let _ = writeln!(s, "<h{sub}>Reasons to doubt the numbers</h{sub}>");
        s.push_str(&notes(&doubts));
    }
    if !p.advice.is_empty() {
        let _ = writeln!(s, "<h{sub}>What to do next</h{sub}>");
        s.push_str(&notes(&p.advice));
    }
    let ranks: Vec<String> = p.metrics.iter().filter_map(|m| rank_chart(p, m)).collect();
    match &p.report {
        Some(RunReport::Fio(v)) => {
            // A run that an I/O error ended: what was done until then, not judged.
            let title = if p.partial {
                "Measurements until the error (partial, not judged)"
            } else {
                "Measurements"
            };
            let _ = writeln!(s, "<h{sub}>{title}</h{sub}>");
            for job in v
                .get("jobs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                s.push_str(&job_numbers(job));
                let charts = job_charts(job, &judged(p));
                // The rank charts join the job's grid.
                match charts.strip_suffix("</div>\n") {
                    Some(open) if open.starts_with("<div class=\"charts\">") => {
                        s.push_str(open);
                        s.push_str(&ranks.concat());
                        s.push_str("</div>\n");
                    }
                    _ => {
                        s.push_str(&charts);
                        s.push_str(&grid(&ranks));
                    }
                }
            }
        }
        Some(RunReport::SmallFiles(r)) => {
            let _ = writeln!(s, "<h{sub}>Measurements</h{sub}>");
            s.push_str(&small_files(r));
            s.push_str(&grid(&ranks));
        }
        None => s.push_str(&grid(&ranks)),
    }
    if let Some(job) = &p.job {
        let _ = writeln!(
            s,
            "<h{sub}>Run it again</h{sub}>\n<p class=\"muted\">The exact job as fio options, for \
             fio or <code>iogauge fio</code>:</p>"
        );
        s.push_str(&command_block("fio", job));
    }
    s
}

fn grid(charts: &[String]) -> String {
    if charts.is_empty() {
        String::new()
    } else {
        format!("<div class=\"charts\">\n{}</div>\n", charts.concat())
    }
}

fn small_files(r: &SmallFilesResult) -> String {
    let mut s = table(
        &[
            "files",
            "bytes each",
            "create phase",
            "read phase",
            "total",
            "files/s",
        ],
        &[vec![
            td_num(&r.files.to_string()),
            td_num(&r.file_size.to_string()),
            td_num(&fmt_ns(r.create_ns as f64)),
            td_num(&fmt_ns(r.read_ns as f64)),
            td_num(&fmt_ns(r.total_ns as f64)),
            td_num(&sig3(r.files_per_sec)),
        ]],
    );
    let row = |what: &str, l: &LatencyStats| {
        let p = |k: &str| {
            l.percentile
                .iter()
                .find(|(q, _)| q.parse::<f64>().ok() == k.parse::<f64>().ok())
                .map_or("-".into(), |(_, v)| fmt_ns(*v as f64))
        };
        vec![
            td(what),
            td_num(&l.n.to_string()),
            td_num(&fmt_ns(l.min_ns as f64)),
            td_num(&fmt_ns(l.mean_ns)),
            td_num(&p("50")),
            td_num(&p("99")),
            td_num(&fmt_ns(l.max_ns as f64)),
        ]
    };
    s.push_str(&table(
        &["per file", "N", "min", "mean", "p50", "p99", "max"],
        &[
            row("create (open + write + close)", &r.create),
            row("read back (open + read + close)", &r.read),
        ],
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_follows_the_exit_code_order() {
        let s = |f: fn(&mut Summary)| {
            let mut s = Summary {
                passed: 1,
                ..Summary::default()
            };
            f(&mut s);
            overall(&s)
        };
        assert_eq!(s(|_| {}), CheckVerdict::Pass);
        assert_eq!(s(|s| s.warned = 1), CheckVerdict::Warn);
        assert_eq!(
            s(|s| {
                s.errors = 1;
                s.warned = 1
            }),
            CheckVerdict::Error
        );
        assert_eq!(
            s(|s| {
                s.errors = 1;
                s.failed = 1
            }),
            CheckVerdict::Fail
        );
        assert_eq!(
            s(|s| {
                s.interrupted = 1;
                s.failed = 1
            }),
            CheckVerdict::Interrupted
        );
    }
}
