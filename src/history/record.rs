//! A run's summary columns (host, target, profiles, verdicts, key values) taken from the
//! document its command printed, so that listing never parses documents.

use super::{rfc3339, NewRun, RunKind};
use crate::report::document::{
    CheckDocument, CheckVerdict, KubeDocument, PreflightDocument, ProfileOutcome, TargetStatus,
};
use serde_json::Value;

/// When and how a command was started; taken as it starts.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    pub started: String,
    pub command: Vec<String>,
}

impl Invocation {
    pub(crate) fn now() -> Invocation {
        Invocation {
            started: rfc3339(std::time::SystemTime::now()),
            command: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        }
    }
}

/// The document as the history stores it. A failure is the save's error (the caller says the
/// history was not saved), never a `null` stored in its place.
fn document<T: serde::Serialize>(doc: &T) -> Result<Value, String> {
    serde_json::to_value(doc).map_err(|e| format!("the document cannot be stored: {e}"))
}

/// "etcd PASS", "etcd 0.27 ms" (the first metric, as the text output words it).
fn profile_columns(
    prefix: &str,
    p: &ProfileOutcome,
    verdicts: &mut Vec<String>,
    kv: &mut Vec<String>,
) {
    // A verdict reached early rests on less data than the recipe's: the list says so.
    let early = if p.sequential.as_ref().is_some_and(|s| s.stopped_early) {
        " (stopped early)"
    } else {
        ""
    };
    verdicts.push(format!("{prefix}{} {}{early}", p.profile, p.verdict.word()));
    if let Some(m) = p.metrics.first() {
        kv.push(format!("{prefix}{} {}", p.profile, m.value_text));
    }
}

impl NewRun {
    pub(crate) fn check(doc: &CheckDocument, at: &Invocation) -> Result<NewRun, String> {
        let (mut verdicts, mut key_values) = (Vec::new(), Vec::new());
        for p in &doc.profiles {
            profile_columns("", p, &mut verdicts, &mut key_values);
        }
        // The absolute directory rather than "." as typed; a device as given.
        let target = match &doc.context.directory {
            Some(d) if !doc.device => d.clone(),
            _ => doc.dir.clone(),
        };
        Ok(NewRun {
            kind: RunKind::Check,
            started: at.started.clone(),
            host: doc.context.hostname.clone(),
            target,
            profiles: doc.profiles.iter().map(|p| p.profile.clone()).collect(),
            verdicts,
            key_values,
            document: document(doc)?,
            command: at.command.clone(),
        })
    }

    /// `host` is used when no collector ran (analyze-only), as the collectors say where they ran.
    pub(crate) fn preflight(
        doc: &PreflightDocument,
        host: &str,
        at: &Invocation,
    ) -> Result<NewRun, String> {
        let mut dirs: Vec<String> = Vec::new();
        for c in &doc.collectors {
            if let Some(d) = &c.context.directory {
                if !dirs.contains(d) {
                    dirs.push(d.clone());
                }
            }
        }
        let key_values = doc
            .collectors
            .iter()
            .filter_map(|c| {
                let p99 = c.results.as_ref()?.get("P99")?;
                // As for check: a result reached early rests on less data than the recipe's.
                let early = if c.sequential.as_ref().is_some_and(|s| s.stopped_early) {
                    " (stopped early)"
                } else {
                    ""
                };
                Some(format!("{} p99 {:.2} ms{early}", c.name, *p99 as f64 / 1e6))
            })
            .collect();
        Ok(NewRun {
            kind: RunKind::Preflight,
            started: at.started.clone(),
            host: doc
                .collectors
                .iter()
                .map(|c| c.context.hostname.clone())
                .find(|h| !h.is_empty())
                .unwrap_or_else(|| host.to_string()),
            target: if dirs.is_empty() {
                doc.name.clone()
            } else {
                dirs.join(", ")
            },
            profiles: doc.collectors.iter().map(|c| c.name.clone()).collect(),
            verdicts: doc
                .outcomes
                .iter()
                .map(|o| format!("{} {}", o.title, o.verdict.word()))
                .collect(),
            key_values,
            document: document(doc)?,
            command: at.command.clone(),
        })
    }

    pub(crate) fn kube(doc: &KubeDocument, at: &Invocation) -> Result<NewRun, String> {
        let (mut verdicts, mut key_values) = (Vec::new(), Vec::new());
        for t in &doc.targets {
            let prefix = format!("{}: ", t.target);
            match &t.check {
                Some(c) => {
                    for p in &c.profiles {
                        profile_columns(&prefix, p, &mut verdicts, &mut key_values);
                    }
                }
                None => verdicts.push(format!("{prefix}{}", status_word(t.status))),
            }
        }
        Ok(NewRun {
            kind: RunKind::Kube,
            started: at.started.clone(),
            host: doc.cluster.clone(),
            target: doc
                .targets
                .iter()
                .map(|t| t.target.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            profiles: doc.profiles.clone(),
            verdicts,
            key_values,
            document: document(doc)?,
            command: at.command.clone(),
        })
    }

    /// fio's JSON output (`json`); `job_files` as given on the command line; the target is
    /// they, else the directory the run's files were in.
    pub(crate) fn fio(json: Value, job_files: &[String], at: &Invocation) -> NewRun {
        let ctx = &json["iogauge"]["context"];
        let target = if job_files.is_empty() {
            ctx["directory"].as_str().unwrap_or_default().to_string()
        } else {
            job_files.join(", ")
        };
        let jobs = json["jobs"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut key_values = Vec::new();
        for j in jobs {
            let name = j["jobname"].as_str().unwrap_or_default();
            for dir in ["read", "write", "trim"] {
                let d = &j[dir];
                if d["total_ios"].as_u64().unwrap_or(0) > 0 {
                    let iops = d["iops"].as_f64().unwrap_or(0.0);
                    key_values.push(format!("{name} {dir} {} IOPS", iops_text(iops)));
                }
            }
        }
        NewRun {
            kind: RunKind::Fio,
            started: at.started.clone(),
            host: ctx["hostname"].as_str().unwrap_or_default().to_string(),
            target,
            profiles: jobs
                .iter()
                .map(|j| j["jobname"].as_str().unwrap_or_default().to_string())
                .collect(),
            verdicts: Vec::new(),
            key_values,
            document: json,
            command: at.command.clone(),
        }
    }
}

fn iops_text(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

fn status_word(s: TargetStatus) -> &'static str {
    match s {
        TargetStatus::Completed => "COMPLETED",
        TargetStatus::Failed => "FAILED",
        TargetStatus::TimedOut => "TIMED_OUT",
        TargetStatus::Interrupted => CheckVerdict::Interrupted.word(),
        TargetStatus::Skipped => CheckVerdict::Skipped.word(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value serde_json cannot represent (a map keyed by non-strings) is the save's error,
    /// not a `null` document in the history.
    #[test]
    fn an_unserializable_document_is_an_error_not_null() {
        let bad: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        assert_eq!(
            document(&bad),
            Err("the document cannot be stored: key must be a string".into())
        );
        let good: std::collections::BTreeMap<String, u8> = [("a".to_string(), 1)].into();
        assert_eq!(document(&good), Ok(serde_json::json!({"a": 1})));
    }
}
