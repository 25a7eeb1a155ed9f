//! Translator from troubleshoot.sh v1beta2 specs (HostPreflight, Preflight, SupportBundle,
//! HostCollector; one or
//! more YAML documents) to the `filesystemPerformance` collectors and analyzers iogauge runs.
//! Everything is checked at load time: unknown keys, bad quantities and durations, `when`
//! expressions and message templates.

pub(crate) mod analyzer;
pub(crate) mod collector;
pub(crate) mod template;

pub(crate) use analyzer::FsPerfAnalyzer;
pub(crate) use collector::FsPerfCollector;

use yaml_serde::{Mapping, Value};

/// What a set of spec documents asks iogauge to do.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Preflight {
    /// `metadata.name` of the first document that has one (troubleshoot prints it last).
    pub name: Option<String>,
    pub collectors: Vec<FsPerfCollector>,
    pub analyzers: Vec<FsPerfAnalyzer>,
    /// Where each of `analyzers` is in the specs ("spec.yaml (document 1):
    /// spec.hostAnalyzers[2].filesystemPerformance"), for messages.
    pub analyzer_at: Vec<String>,
    /// Collector and analyzer kinds iogauge does not run, each once ("hostCollectors: cpu").
    pub skipped: Vec<String>,
    /// Things accepted with a remark (e.g. the misspelt `operationSizeBytes`).
    pub notices: Vec<String>,
}

/// `HostCollector` is what troubleshoot's `collect` command reads: `spec.collectors` and, rarely,
/// `spec.analyzers`, the same lists as the others.
const KINDS: [&str; 4] = [
    "HostPreflight",
    "Preflight",
    "SupportBundle",
    "HostCollector",
];
const COLLECTOR_LISTS: [&str; 2] = ["hostCollectors", "collectors"];
const ANALYZER_LISTS: [&str; 2] = ["hostAnalyzers", "analyzers"];
const ENTRY: &str = "filesystemPerformance";

/// A YAML value as text, for messages.
pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        other => yaml_serde::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

/// Reads every document of one spec file (`name` is used in messages).
pub(crate) fn load(text: &str, name: &str, into: &mut Preflight) -> Result<(), String> {
    let mut specs = 0;
    for (i, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let at = format!("{name} (document {})", i + 1);
        let v: Value = serde::Deserialize::deserialize(doc)
            .map_err(|e| format!("{name}: not valid YAML: {e}"))?;
        if v.is_null() {
            continue; // an empty document between `---` separators
        }
        specs += 1;
        let m = v.as_mapping().ok_or_else(|| {
            format!("{at}: expected a troubleshoot spec (a mapping with apiVersion, kind, spec)")
        })?;
        let kind = m.get("kind").and_then(Value::as_str).unwrap_or("");
        if !KINDS.contains(&kind) {
            return Err(format!(
                "{at}: kind '{kind}' is not a troubleshoot spec iogauge reads; expected HostPreflight, \
                 Preflight, SupportBundle or HostCollector"
            ));
        }
        if let Some(api) = m.get("apiVersion").and_then(Value::as_str) {
            // The API versions troubleshoot itself decodes.
            if !matches!(
                api,
                "troubleshoot.sh/v1beta2"
                    | "troubleshoot.sh/v1beta1"
                    | "troubleshoot.replicated.com/v1beta1"
            ) {
                return Err(format!(
                    "{at}: apiVersion '{api}' is not troubleshoot.sh/v1beta2"
                ));
            }
        }
        if into.name.is_none() {
            into.name = m
                .get("metadata")
                .and_then(|md| md.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let Some(spec) = m.get("spec").and_then(Value::as_mapping) else {
            return Err(format!("{at}: kind {kind} has no 'spec' mapping"));
        };
        for list in COLLECTOR_LISTS {
            for (j, entry) in entries(spec, list, &at)? {
                let where_ = format!("{at}: spec.{list}[{j}].{ENTRY}");
                into.collectors
                    .push(collector::parse(entry, &where_, &mut into.notices)?);
            }
        }
        for list in ANALYZER_LISTS {
            for (j, entry) in entries(spec, list, &at)? {
                let where_ = format!("{at}: spec.{list}[{j}].{ENTRY}");
                into.analyzers.push(analyzer::parse(entry, &where_)?);
                into.analyzer_at.push(where_);
            }
        }
        for list in COLLECTOR_LISTS.iter().chain(&ANALYZER_LISTS) {
            for kind in other_kinds(spec, list) {
                let s = format!("{list}: {kind}");
                if !into.skipped.contains(&s) {
                    into.skipped.push(s);
                }
            }
        }
    }
    if specs == 0 {
        return Err(format!(
            "{name}: empty; expected a troubleshoot spec (apiVersion: troubleshoot.sh/v1beta2, \
             kind: HostPreflight, spec: collectors and analyzers)"
        ));
    }
    Ok(())
}

impl Preflight {
    /// Every analyzer (excluded ones too: excluding is a toggle, not a typo) must read the
    /// results of a collector the specs define, or it could only ever report "not collected",
    /// and only after every benchmark has run. Checked once all specs are loaded, unless the
    /// results come from elsewhere (`--analyze-only`).
    pub(crate) fn check_analyzers_have_collectors(&self) -> Result<(), String> {
        for (an, at) in self.analyzers.iter().zip(&self.analyzer_at) {
            if self
                .collectors
                .iter()
                .any(|c| c.collector_name == an.collector_name)
            {
                continue;
            }
            let names: Vec<String> = self
                .collectors
                .iter()
                .map(|c| format!("'{}'", c.collector_name))
                .collect();
            let have = if names.is_empty() {
                "the specs have no filesystemPerformance collector. Add one".to_string()
            } else {
                format!(
                    "the specs' filesystemPerformance collectors are {}. Use one of those names, \
                     add the collector",
                    names.join(", ")
                )
            };
            let name = if at.is_empty() {
                String::new()
            } else {
                format!("{at}: ")
            };
            return Err(format!(
                "{name}analyzer '{}': collectorName '{}' matches no collector; {have}, or pass \
                 --analyze-only DIR to evaluate results collected elsewhere",
                an.check_name, an.collector_name
            ));
        }
        Ok(())
    }
}

/// The `filesystemPerformance` entries of `spec.<list>`, with their index.
fn entries<'a>(
    spec: &'a Mapping,
    list: &str,
    at: &str,
) -> Result<Vec<(usize, &'a Mapping)>, String> {
    let Some(items) = spec.get(list) else {
        return Ok(Vec::new());
    };
    let items = items
        .as_sequence()
        .ok_or_else(|| format!("{at}: spec.{list} must be a list"))?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(e) = item.as_mapping().and_then(|m| m.get(ENTRY)) {
            let e = e.as_mapping().ok_or_else(|| {
                format!("{at}: spec.{list}[{i}].{ENTRY} must be a mapping of its parameters")
            })?;
            out.push((i, e));
        }
    }
    Ok(out)
}

fn other_kinds<'a>(spec: &'a Mapping, list: &str) -> Vec<&'a str> {
    let Some(items) = spec.get(list).and_then(Value::as_sequence) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_mapping)
        .flat_map(|m| m.keys().filter_map(Value::as_str))
        .filter(|k| *k != ENTRY)
        .collect()
}

/// Rejects keys not in `known`, naming the closest known one.
pub(crate) fn check_keys(m: &Mapping, known: &[&str], at: &str) -> Result<(), String> {
    for k in m.keys() {
        let k = k
            .as_str()
            .ok_or_else(|| format!("{at}: keys must be strings, found {}", show(k)))?;
        if !known.contains(&k) {
            let hint = match crate::input::suggest::closest(k, known.iter().copied()) {
                Some(near) => format!("; did you mean '{near}'?"),
                None => format!("; known keys: {}", known.join(", ")),
            };
            return Err(format!("{at}: unknown key '{k}'{hint}"));
        }
    }
    Ok(())
}

/// A boolean that troubleshoot also accepts as a string ("true"/"false").
pub(crate) fn get_bool(m: &Mapping, key: &str, at: &str) -> Result<Option<bool>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
        Some(v) => Err(format!(
            "{at}.{key}: expected true or false, found '{}'",
            show(v)
        )),
    }
}

/// A string, or a number written without quotes (YAML reads `runTime: 30` as a number).
pub(crate) fn get_str(m: &Mapping, key: &str, at: &str) -> Result<Option<String>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(v) => Err(format!(
            "{at}.{key}: expected a string, found '{}'",
            show(v)
        )),
    }
}

#[cfg(test)]
mod tests;
