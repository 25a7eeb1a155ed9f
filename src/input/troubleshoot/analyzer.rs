//! The `filesystemPerformance` analyzer: outcomes with `when` conditions and message templates,
//! parsed and checked at load time with troubleshoot's grammar (`<keyword> <op> <duration>`).

use super::template;
use super::{check_keys, get_bool, get_str, show};
use crate::model::units::parse_go_duration;
pub(crate) use crate::verdict::criteria::{
    Condition, FsPerfAnalyzer, Op, Outcome, OutcomeKind, Stat,
};
use yaml_serde::{Mapping, Value};

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "=" | "==" | "===" => Op::Eq,
            _ => return None,
        })
    }

    pub(crate) fn holds(&self, a: f64, b: f64) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
        }
    }
}

pub(crate) const DEFAULT_TITLE: &str = "Filesystem Performance";

const KEYS: [&str; 6] = [
    "checkName",
    "collectorName",
    "exclude",
    "strict",
    "outcomes",
    "annotations",
];
const OUTCOME_KEYS: [&str; 3] = ["when", "message", "uri"];

/// Parses a `when` expression.
pub(crate) fn parse_when(w: &str) -> Result<Condition, String> {
    let w = w.trim();
    if w.is_empty() {
        return Ok(Condition::Always);
    }
    if w == "fileNotCollected" {
        return Ok(Condition::FileNotCollected);
    }
    let parts: Vec<&str> = w.split_whitespace().collect();
    let [k, op, v] = parts.as_slice() else {
        return Err(format!(
            "when '{w}': expected three words '<keyword> <operator> <duration>', e.g. 'p99 < 10ms'"
        ));
    };
    let stat = Stat::from_keyword(k).ok_or_else(|| {
        format!("when '{w}': unknown keyword '{k}'; expected min, max, average, p1 … p9999 or iops")
    })?;
    let op = Op::parse(op).ok_or_else(|| {
        format!("when '{w}': unknown operator '{op}'; expected <, <=, >, >=, = or ==")
    })?;
    let value = if stat == Stat::Iops {
        v.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| format!("when '{w}': iops needs a number, e.g. 'iops >= 1000'"))?
    } else {
        parse_go_duration(v)
            .map_err(|e| format!("when '{w}': '{v}': {e}"))?
            .as_nanos() as f64
    };
    Ok(Condition::Compare { stat, op, value })
}

fn parse_outcome(item: &Value, i: usize, at: &str) -> Result<Outcome, String> {
    let at = format!("{at}.outcomes[{i}]");
    let m = item
        .as_mapping()
        .filter(|m| m.len() == 1)
        .ok_or_else(|| format!("{at}: expected one of pass:, warn: or fail:"))?;
    let (k, body) = m.iter().next().expect("one entry");
    let kind = match k.as_str() {
        Some("pass") => OutcomeKind::Pass,
        Some("warn") => OutcomeKind::Warn,
        Some("fail") => OutcomeKind::Fail,
        _ => {
            return Err(format!(
                "{at}: '{}' is not an outcome; expected pass, warn or fail",
                show(k)
            ))
        }
    };
    let at = format!("{at}.{}", show(k));
    let empty = Mapping::new();
    let body = match body {
        Value::Null => &empty,
        Value::Mapping(b) => b,
        other => {
            return Err(format!(
                "{at}: expected when/message, found '{}'",
                show(other)
            ))
        }
    };
    check_keys(body, &OUTCOME_KEYS, &at)?;
    let when_text = get_str(body, "when", &at)?.unwrap_or_default();
    let when = parse_when(&when_text).map_err(|e| format!("{at}: {e}"))?;
    if when == Condition::FileNotCollected && i != 0 {
        return Err(format!(
            "{at}: fileNotCollected is only checked in the first outcome; move it first"
        ));
    }
    let message = get_str(body, "message", &at)?.unwrap_or_default();
    let message = template::parse(&message).map_err(|e| format!("{at}.message: {e}"))?;
    Ok(Outcome {
        kind,
        when,
        message,
        uri: get_str(body, "uri", &at)?,
    })
}

pub(crate) fn parse(m: &Mapping, at: &str) -> Result<FsPerfAnalyzer, String> {
    check_keys(m, &KEYS, at)?;
    let outcomes = m
        .get("outcomes")
        .and_then(Value::as_sequence)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("{at}: 'outcomes' is required: a list of pass/warn/fail entries"))?;
    Ok(FsPerfAnalyzer {
        check_name: get_str(m, "checkName", at)?.unwrap_or_else(|| DEFAULT_TITLE.to_string()),
        collector_name: get_str(m, "collectorName", at)?
            .unwrap_or_else(|| super::collector::DEFAULT_NAME.to_string()),
        exclude: get_bool(m, "exclude", at)?.unwrap_or(false),
        strict: get_bool(m, "strict", at)?.unwrap_or(false),
        outcomes: outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| parse_outcome(o, i, at))
            .collect::<Result<_, _>>()?,
    })
}
