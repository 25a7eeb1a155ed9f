//! troubleshoot's `filesystemPerformance` analyzer: outcomes are tried in order and the first
//! whose `when` holds gives the verdict; an empty `when` always holds; `fileNotCollected` holds when
//! the collector produced no result; when nothing holds there is no verdict.

use super::criteria::{Condition, Field, FsPerfAnalyzer, OutcomeKind, Part, Stat, Template};
use super::godur::go_duration;
use crate::report::document::{AnalyzerOutcome, CheckVerdict};
use crate::report::troubleshoot::{find_results, FsPerfResults, KEYS};
use std::path::Path;

/// One analyzer's verdict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub title: String,
    /// The collector whose result it judged (`collectorName`).
    pub collector: String,
    pub kind: OutcomeKind,
    pub message: String,
    pub uri: Option<String>,
    pub strict: bool,
}

impl Verdict {
    /// As it goes into the preflight document and troubleshoot's outputs.
    pub(crate) fn outcome(&self) -> AnalyzerOutcome {
        AnalyzerOutcome {
            title: self.title.clone(),
            verdict: match self.kind {
                OutcomeKind::Pass => CheckVerdict::Pass,
                OutcomeKind::Warn => CheckVerdict::Warn,
                OutcomeKind::Fail => CheckVerdict::Fail,
            },
            message: self.message.clone(),
            uri: self.uri.clone(),
            strict: self.strict,
        }
    }
}

/// An analyzer that could not decide fails, as in troubleshoot ("Analyzer Failed: …").
fn failed(an: &FsPerfAnalyzer, title: &str, why: String) -> Verdict {
    Verdict {
        title: title.to_string(),
        collector: an.collector_name.clone(),
        kind: OutcomeKind::Fail,
        message: why,
        uri: None,
        strict: an.strict,
    }
}

/// Every analyzer against the results in `out` (the host's and each node's). `errors` are the
/// collectors that produced nothing here and why: their reason is the verdict, unless the spec
/// says what to do without a result (`fileNotCollected` first).
pub(crate) fn analyze_all(
    analyzers: &[FsPerfAnalyzer],
    out: &Path,
    errors: &[(String, String)],
) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    for an in analyzers.iter().filter(|x| !x.exclude) {
        let found = find_results(out, &an.collector_name);
        let runs: Vec<(String, Option<FsPerfResults>)> = if found.is_empty() {
            vec![(an.check_name.clone(), None)]
        } else {
            let mut v = Vec::new();
            for (node, path) in found {
                let title = match node {
                    Some(n) => format!("{} - Node {n}", an.check_name),
                    None => an.check_name.clone(),
                };
                match read_result(&path).and_then(|t| FsPerfResults::from_json(&t)) {
                    Ok(mut r) => {
                        if r.iops.is_none() {
                            r.iops = iops_beside(&path, &an.collector_name);
                        }
                        v.push((title, Some(r)))
                    }
                    Err(e) => verdicts.push(failed(an, &title, format!("{}: {e}", path.display()))),
                }
            }
            v
        };
        let not_collected_first =
            an.outcomes.first().map(|o| &o.when) == Some(&Condition::FileNotCollected);
        for (title, r) in runs {
            if let (None, false) = (&r, not_collected_first) {
                if let Some((_, why)) = errors.iter().find(|(n, _)| *n == an.collector_name) {
                    verdicts.push(failed(an, &title, why.clone()));
                    continue;
                }
            }
            match analyze(an, r.as_ref(), &title) {
                Ok(Some(v)) => verdicts.push(v),
                Ok(None) => {}
                Err(e) => verdicts.push(failed(an, &title, format!("Analyzer Failed: {e}"))),
            }
        }
    }
    verdicts
}

/// The table `{{ .String }}` prints, as troubleshoot's `FSPerfResults.String()`: a leading
/// newline, then `label: duration` lines with labels right-aligned to six columns, no trailing
/// newline.
pub(crate) fn table(r: &FsPerfResults) -> String {
    let mut s = String::new();
    let mut line = |label: &str, ns: u64| s.push_str(&format!("\n{label:>6}: {}", go_duration(ns)));
    line("Min", r.min);
    line("Max", r.max);
    line("Avg", r.average);
    // Labels are the percentiles themselves: p1 … p99.5 … p99.99.
    for (i, (_, q)) in KEYS.iter().enumerate() {
        line(&format!("p{q}"), r.p[i]);
    }
    s
}

fn value(r: &FsPerfResults, s: Stat) -> Option<f64> {
    Some(match s {
        Stat::Min => r.min as f64,
        Stat::Max => r.max as f64,
        Stat::Average => r.average as f64,
        Stat::P(i) => r.p[i] as f64,
        Stat::Iops => r.iops?,
    })
}

/// Renders a message. Without a result (fileNotCollected) every value is zero, as troubleshoot
/// renders it.
pub(crate) fn render(t: &Template, r: Option<&FsPerfResults>) -> String {
    let zero = FsPerfResults {
        min: 0,
        max: 0,
        average: 0,
        p: [0; 17],
        iops: None,
    };
    let r = r.unwrap_or(&zero);
    let mut out = String::new();
    for p in &t.parts {
        match p {
            Part::Text(s) => out.push_str(s),
            Part::Field(Field::String) => out.push_str(&table(r)),
            Part::Field(Field::Stat(Stat::Iops)) => match r.iops {
                Some(v) => out.push_str(&format!("{v:.0}")),
                None => out.push_str("(unknown)"),
            },
            Part::Field(Field::Stat(s)) => {
                out.push_str(&go_duration(value(r, *s).unwrap_or(0.0) as u64))
            }
        }
    }
    out
}

/// Evaluates `a` against the collector's result (None when it produced none). Err when the
/// result is missing and the analyzer has no `fileNotCollected` outcome, or when a condition
/// needs a number the result does not have.
pub(crate) fn analyze(
    a: &FsPerfAnalyzer,
    r: Option<&FsPerfResults>,
    title: &str,
) -> Result<Option<Verdict>, String> {
    for o in &a.outcomes {
        let holds = match (&o.when, r) {
            (Condition::Always, _) => true,
            (Condition::FileNotCollected, r) => r.is_none(),
            (Condition::Compare { .. }, None) => {
                return Err(format!(
                    "{title}: collector '{}' produced no result; add a 'fileNotCollected' outcome \
                     first to give a verdict for that case",
                    a.collector_name
                ))
            }
            (Condition::Compare { stat, op, value: v }, Some(r)) => {
                let x = value(r, *stat).ok_or_else(|| {
                    format!(
                        "{title}: 'iops' is not known for results collected by troubleshoot; use a \
                         latency keyword"
                    )
                })?;
                op.holds(x, *v)
            }
        };
        if holds {
            return Ok(Some(Verdict {
                title: title.to_string(),
                collector: a.collector_name.clone(),
                kind: o.kind,
                message: render(&o.message, r),
                uri: o.uri.clone(),
                strict: a.strict,
            }));
        }
    }
    Ok(None)
}

/// troubleshoot's table has no rate: iogauge's full report beside it (`<collectorName>
/// .iogauge.json`, fio's layout) has the measuring job's write IOPS, for `iops` conditions.
/// None for troubleshoot's own results, which have no such file.
fn iops_beside(table: &Path, collector: &str) -> Option<f64> {
    let text = read_result(&table.with_file_name(format!("{collector}.iogauge.json"))).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let job = v["jobs"]
        .as_array()?
        .iter()
        .find(|j| j["jobname"] == "fsperf")?;
    job["write"]["iops"].as_f64()
}

/// A result file read with a cap (a real one is a few KiB), without following a symlink or
/// blocking on a FIFO put in its place.
fn read_result(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    const MAX: u64 = 16 << 20;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    if !f.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err("not a regular file".into());
    }
    let mut text = String::new();
    f.take(MAX + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX {
        return Err(format!("larger than a result file can be ({MAX} bytes)"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::troubleshoot::{load, Preflight};

    fn results(p99_ns: u64) -> FsPerfResults {
        let mut p = [0u64; 17];
        for (i, v) in p.iter_mut().enumerate() {
            *v = 1_000_000 + i as u64 * 1000;
        }
        p[12] = p99_ns;
        FsPerfResults {
            min: 900_000,
            max: 9_000_000,
            average: 1_500_000,
            p,
            iops: Some(812.4),
        }
    }

    fn analyzer(outcomes: &str) -> FsPerfAnalyzer {
        let text = format!(
            "kind: HostPreflight\nspec:\n  hostAnalyzers:\n    - filesystemPerformance:\n        collectorName: c\n        outcomes:\n{outcomes}"
        );
        let mut p = Preflight::default();
        load(&text, "t.yaml", &mut p).unwrap();
        p.analyzers.remove(0)
    }

    const EXAMPLE: &str = "          - pass: {when: \"p99 < 3ms\", message: \"Write latency is great! (p99: {{ .P99 }})\"}\n          - pass: {when: \"p99 < 5ms\", message: \"Write latency is ok (p99: {{ .P99 }})\"}\n          - warn: {when: \"p99 < 8ms\", message: \"Write latency is high {{ .String }}\"}\n          - fail: {when: \"p99 >= 8ms\", message: \"Write latency is too high {{ .String }}\"}\n";

    #[test]
    fn first_match_wins_across_the_example_thresholds() {
        let a = analyzer(EXAMPLE);
        let v = |ns| analyze(&a, Some(&results(ns)), "T").unwrap().unwrap();
        let great = v(2_376_000);
        assert_eq!(
            (great.kind, great.message.as_str()),
            (OutcomeKind::Pass, "Write latency is great! (p99: 2.376ms)")
        );
        assert_eq!(v(3_000_000).message, "Write latency is ok (p99: 3ms)");
        let high = v(7_999_999);
        assert_eq!(high.kind, OutcomeKind::Warn);
        assert!(high.message.starts_with("Write latency is high \n   Min: 900\u{b5}s\n   Max: 9ms\n   Avg: 1.5ms\n    p1: 1ms\n    p5: 1.001ms\n"));
        assert!(high.message.contains("\n   p99: 7.999999ms\n p99.5: 1.013ms\n p99.9: 1.014ms\np99.95: 1.015ms\np99.99: 1.016ms"));
        assert!(high.message.ends_with("1.016ms"));
        assert_eq!(v(8_000_000).kind, OutcomeKind::Fail);
    }

    #[test]
    fn empty_when_file_not_collected_and_no_match() {
        let a = analyzer("          - fail: {when: fileNotCollected, message: \"no data\"}\n          - pass: {message: \"fine: {{ .Average }} avg, {{ .IOPS }} IOPS\"}\n");
        let none = analyze(&a, None, "T").unwrap().unwrap();
        assert_eq!(
            (none.kind, none.message.as_str()),
            (OutcomeKind::Fail, "no data")
        );
        let zero =
            analyzer("          - warn: {when: fileNotCollected, message: \"p99={{ .P99 }}\"}\n");
        assert_eq!(
            analyze(&zero, None, "T").unwrap().unwrap().message,
            "p99=0s"
        );
        let some = analyze(&a, Some(&results(1)), "T").unwrap().unwrap();
        assert_eq!(some.message, "fine: 1.5ms avg, 812 IOPS");
        let only = analyzer("          - fail: {when: \"p99 > 1s\", message: slow}\n");
        assert_eq!(analyze(&only, Some(&results(1)), "T").unwrap(), None);
        assert_eq!(
            analyze(&only, None, "T").unwrap_err(),
            "T: collector 'c' produced no result; add a 'fileNotCollected' outcome first to give a \
             verdict for that case"
        );
    }

    #[test]
    fn every_operator_and_iops() {
        let r = results(5_000_000);
        for (w, want) in [
            ("p99 < 5ms", false),
            ("p99 <= 5ms", true),
            ("p99 > 5ms", false),
            ("p99 >= 5ms", true),
            ("p99 = 5ms", true),
            ("p99 == 5ms", true),
            ("p99 === 4ms", false),
            ("min < 1ms", true),
            ("max > 8ms", true),
            ("average < 1.5ms", false),
            ("avg <= 1.5ms", true),
            ("iops >= 800", true),
            ("iops < 800", false),
        ] {
            let a = analyzer(&format!(
                "          - fail: {{when: \"{w}\", message: x}}\n"
            ));
            assert_eq!(analyze(&a, Some(&r), "T").unwrap().is_some(), want, "{w}");
        }
        let mut from_troubleshoot = r.clone();
        from_troubleshoot.iops = None;
        let a = analyzer("          - fail: {when: \"iops < 800\", message: x}\n");
        assert!(analyze(&a, Some(&from_troubleshoot), "T")
            .unwrap_err()
            .contains("'iops' is not known"));
    }

    #[test]
    fn every_placeholder_renders() {
        let r = results(4_464_537);
        for (i, (k, _)) in KEYS.iter().enumerate() {
            let t =
                crate::input::troubleshoot::template::parse(&format!("{{{{ .{k} }}}}")).unwrap();
            assert_eq!(render(&t, Some(&r)), go_duration(r.p[i]));
        }
        let t = crate::input::troubleshoot::template::parse("{{ .Min }}/{{ .Max }}/{{ .Average }}")
            .unwrap();
        assert_eq!(render(&t, Some(&r)), "900\u{b5}s/9ms/1.5ms");
        assert_eq!(table(&r).lines().count(), 21);
    }
}
