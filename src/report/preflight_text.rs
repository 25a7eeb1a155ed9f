//! troubleshoot's `preflight` outputs, from the analyzers' outcomes: the non-interactive `human`
//! text, and the `{"pass": [...], "warn": [...], "fail": [...]}` structure of `--format json|yaml`.

use super::document::{AnalyzerOutcome, CheckVerdict};
use crate::untrusted::term;
use serde::Serialize;
use std::fmt::Write;

/// troubleshoot's `human` format; `name` is the spec's `metadata.name`.
pub(crate) fn render_human(name: &str, outcomes: &[AnalyzerOutcome]) -> String {
    render_human_reached(name, outcomes, &[])
}

/// [`render_human`] with `--sequential`: `reached[i]` says how the result that `outcomes[i]`
/// judged was reached (`CollectorOutcome::how_reached`), in a `--- Sequential:` line under it
/// as troubleshoot puts `--- Strict: true`.
pub(crate) fn render_human_reached(
    name: &str,
    outcomes: &[AnalyzerOutcome],
    reached: &[Option<String>],
) -> String {
    let mut out = String::from("\n");
    // Writing into a String cannot fail.
    for (i, o) in outcomes.iter().enumerate() {
        let label = match o.verdict {
            CheckVerdict::Pass => "PASS",
            CheckVerdict::Warn => "WARN:",
            _ => "FAIL:",
        };
        // Titles, messages and the name come from the spec: control characters are shown.
        let _ = writeln!(out, "   --- {label} {}", term(&o.title));
        let _ = writeln!(out, "      --- {}", term(&o.message));
        if o.strict {
            let _ = writeln!(out, "      --- Strict: true");
        }
        if let Some(Some(how)) = reached.get(i) {
            let _ = writeln!(out, "      --- Sequential: {how}");
        }
    }
    if outcomes.iter().any(|o| o.verdict == CheckVerdict::Fail) {
        let _ = writeln!(out, "--- FAIL   {}\nFAILED", term(name));
    } else {
        let _ = writeln!(out, "--- PASS   {}\nPASS", term(name));
    }
    out
}

/// troubleshoot's `human` text ends in `--- PASS` and `PASS` whenever no outcome failed, a
/// warning included (pkg/preflight/text_results.go); iogauge prints that text unchanged for
/// whoever parses it, and this line on stderr so that a warning is not read as a pass.
pub(crate) fn warning_summary(outcomes: &[AnalyzerOutcome]) -> Option<String> {
    let count = |k: CheckVerdict| outcomes.iter().filter(|o| o.verdict == k).count();
    let (warn, fail) = (count(CheckVerdict::Warn), count(CheckVerdict::Fail));
    if warn == 0 || fail > 0 {
        return None;
    }
    let of = if warn == 1 {
        "1 outcome is a warning".to_string()
    } else {
        format!("{warn} outcomes are warnings")
    };
    Some(format!(
        "WARN: {of} and none failed (exit 4); the text above ends in PASS because troubleshoot's \
         does whenever nothing failed"
    ))
}

/// One entry of troubleshoot's structured output.
#[derive(Debug, Serialize)]
pub(crate) struct Item {
    pub title: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
}

/// troubleshoot's structured output: the outcomes grouped by kind, empty groups left out.
#[derive(Debug, Serialize)]
pub(crate) struct Grouped {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass: Vec<Item>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warn: Vec<Item>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fail: Vec<Item>,
}

pub(crate) fn grouped(outcomes: &[AnalyzerOutcome]) -> Grouped {
    let of = |k: CheckVerdict| -> Vec<Item> {
        outcomes
            .iter()
            .filter(|o| o.verdict == k)
            .map(|o| Item {
                title: o.title.clone(),
                message: o.message.clone(),
                uri: o.uri.clone(),
                strict: o.strict,
            })
            .collect()
    };
    Grouped {
        pass: of(CheckVerdict::Pass),
        warn: of(CheckVerdict::Warn),
        fail: of(CheckVerdict::Fail),
    }
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn spec_text_is_shown_not_obeyed() {
        let o = AnalyzerOutcome {
            title: "disk\u{1b}[2J".into(),
            verdict: CheckVerdict::Pass,
            message: "ok\u{1b}]0;x\u{7}".into(),
            uri: None,
            strict: false,
        };
        assert_eq!(
            render_human("spec\u{1b}[31m", &[o]),
            "\n   --- PASS disk\\x1b[2J\n      --- ok\\x1b]0;x\\x07\n--- PASS   spec\\x1b[31m\nPASS\n"
        );
    }
}

#[cfg(test)]
mod warning_tests {
    use super::*;

    fn outcome(verdict: CheckVerdict) -> AnalyzerOutcome {
        AnalyzerOutcome {
            title: "t".into(),
            verdict,
            message: "m".into(),
            uri: None,
            strict: false,
        }
    }

    #[test]
    fn only_a_warning_without_a_failure_gets_the_line() {
        use CheckVerdict::{Fail, Pass, Warn};
        assert_eq!(warning_summary(&[outcome(Pass)]), None);
        assert_eq!(warning_summary(&[outcome(Warn), outcome(Fail)]), None);
        assert_eq!(
            warning_summary(&[outcome(Warn), outcome(Pass), outcome(Warn)]).unwrap(),
            "WARN: 2 outcomes are warnings and none failed (exit 4); the text above ends in PASS \
             because troubleshoot's does whenever nothing failed"
        );
        // troubleshoot's own text is unchanged.
        assert!(render_human("n", &[outcome(Warn)]).ends_with("--- PASS   n\nPASS\n"));
    }

    #[test]
    fn how_a_sequential_result_was_reached_is_under_its_outcome() {
        let how = Some("decided after 1,412 I/Os".to_string());
        assert_eq!(
            render_human_reached(
                "n",
                &[outcome(CheckVerdict::Pass), outcome(CheckVerdict::Pass)],
                &[None, how]
            ),
            "\n   --- PASS t\n      --- m\n   --- PASS t\n      --- m\n      --- Sequential: \
             decided after 1,412 I/Os\n--- PASS   n\nPASS\n"
        );
    }
}
