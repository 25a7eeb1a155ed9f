//! `--nodes SELECTOR` as a DaemonSet's required node affinity: a nodeSelector only takes
//! `key=value` pairs, while a label selector also says `key` (exists), `!key`, `key!=value`,
//! `key in (a,b)` and `key notin (a,b)`, as `kubectl get nodes -l` reads them. Pure.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};

/// Splits on commas outside parentheses.
fn terms(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0);
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

fn req(key: &str, op: &str, values: Vec<String>) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.trim().to_string(),
        operator: op.into(),
        values: (!values.is_empty()).then_some(values),
    }
}

/// The set in `key in (a, b)`.
fn set(rest: &str) -> Option<Vec<String>> {
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

fn term(t: &str) -> Option<NodeSelectorRequirement> {
    if let Some(k) = t.strip_prefix('!') {
        return Some(req(k, "DoesNotExist", vec![]));
    }
    if let Some((k, v)) = t.split_once("!=") {
        return Some(req(k, "NotIn", vec![v.trim().into()]));
    }
    if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
        return Some(req(k, "In", vec![v.trim().into()]));
    }
    if let Some((k, rest)) = t.split_once(" notin ") {
        return Some(req(k, "NotIn", set(rest)?));
    }
    if let Some((k, rest)) = t.split_once(" in ") {
        return Some(req(k, "In", set(rest)?));
    }
    (!t.contains([' ', '(', ')'])).then(|| req(t, "Exists", vec![]))
}

/// The selector as one node selector term (all its requirements must hold), or what is wrong.
pub(crate) fn node_term(selector: &str) -> Result<NodeSelectorTerm, String> {
    let parts = terms(selector);
    if parts.is_empty() {
        return Err(
            "--nodes '': expected a label selector, e.g. node-role.kubernetes.io/control-plane"
                .into(),
        );
    }
    let mut exprs = Vec::new();
    for p in &parts {
        match term(p) {
            Some(r) if !r.key.is_empty() => exprs.push(r),
            _ => {
                return Err(format!(
                    "--nodes '{selector}': '{p}' is not a label selector term; expected key, \
                     !key, key=value, key!=value, key in (a,b) or key notin (a,b)"
                ))
            }
        }
    }
    Ok(NodeSelectorTerm {
        match_expressions: Some(exprs),
        ..NodeSelectorTerm::default()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ops(s: &str) -> Vec<(String, String, Vec<String>)> {
        node_term(s)
            .unwrap()
            .match_expressions
            .unwrap()
            .into_iter()
            .map(|r| (r.key, r.operator, r.values.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn every_selector_form_becomes_its_affinity_operator() {
        let s = |k: &str, o: &str, v: &[&str]| {
            (
                k.to_string(),
                o.to_string(),
                v.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            ops("node-role.kubernetes.io/control-plane"),
            [s("node-role.kubernetes.io/control-plane", "Exists", &[])]
        );
        assert_eq!(
            ops("disk=ssd, !spot,zone!=a,tier in (gold, silver),rack notin (r1)"),
            [
                s("disk", "In", &["ssd"]),
                s("spot", "DoesNotExist", &[]),
                s("zone", "NotIn", &["a"]),
                s("tier", "In", &["gold", "silver"]),
                s("rack", "NotIn", &["r1"]),
            ]
        );
        assert_eq!(ops("a==b"), [s("a", "In", &["b"])]);
        assert!(node_term("").is_err());
        assert!(node_term("a in b")
            .unwrap_err()
            .contains("'a in b' is not a label selector term"));
    }
}
