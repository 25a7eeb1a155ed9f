//! Reading a saved document for the HTML report in bounded memory. `serde_json::Value` costs
//! about 30 times the text (a 54 MB fio document of 1000 jobs took 1.7 GB), and nothing on the
//! page needs all of it: this builds the same `Value` but keeps at most [`MAX_SERIES`] evenly
//! spaced entries of each time series (`bw_series`, `iops_series`, `lat_intervals.intervals`),
//! which a chart thins further anyway; only the numbers table's fields of the jobs after the
//! first [`CHARTED_JOBS`] (which alone are drawn), none of those after [`LISTED_JOBS`]; and
//! stops at [`MAX_VALUES`] values in all, so that no document can take more.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// Entries kept of one time series (every k-th, k doubling as the series grows).
pub(crate) const MAX_SERIES: usize = 1024;
/// Jobs read whole (the HTML report draws this many; see `html::fio`).
pub(crate) const CHARTED_JOBS: usize = 64;
/// Jobs read at all; fio itself runs at most 4096.
pub(crate) const LISTED_JOBS: usize = 4096;
/// The whole document's cost, in units of one scalar (an array costs 2 more, an object 8 more
/// and 1 per member, as their allocations do): about 0.5 GB of `Value` at most (measured),
/// while a kube run of dozens of targets, each with its check's reports, stays below it.
pub(crate) const MAX_VALUES: usize = 4_000_000;

/// What a value is, which decides what of it is kept.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// Kept whole.
    Whole,
    /// A time series: evenly thinned.
    Series,
    /// fio's `jobs`.
    Jobs,
    /// A job after the charted ones: its name, error and sections.
    LightJob,
    /// One of its sections: the table's numbers.
    LightSection,
    /// A section's latency: mean, max and percentiles.
    LightLat,
}

struct Node<'a> {
    ctx: Ctx,
    budget: &'a Cell<usize>,
}

impl Node<'_> {
    fn count<E: de::Error>(&self, cost: usize) -> Result<(), E> {
        let left = self.budget.get();
        if left < cost {
            return Err(E::custom(format!(
                "it holds more than a page can show (over {MAX_VALUES} values and containers); \
                 render a run with fewer jobs or targets, or a shorter one"
            )));
        }
        self.budget.set(left - cost);
        Ok(())
    }

    fn child(&self, ctx: Ctx) -> Node<'_> {
        Node {
            ctx,
            budget: self.budget,
        }
    }

    /// What the member `key` of an object in this context is, or None to skip it.
    fn member(&self, key: &str) -> Option<Ctx> {
        match self.ctx {
            Ctx::Whole | Ctx::Series | Ctx::Jobs => Some(match key {
                "jobs" if self.ctx == Ctx::Whole => Ctx::Jobs,
                "bw_series" | "iops_series" | "intervals" => Ctx::Series,
                _ => Ctx::Whole,
            }),
            Ctx::LightJob => match key {
                "jobname" | "error" | "groupid" => Some(Ctx::Whole),
                "read" | "write" | "trim" | "sync" => Some(Ctx::LightSection),
                _ => None,
            },
            Ctx::LightSection => match key {
                "total_ios" | "iops" | "bw" | "io_bytes" | "runtime" => Some(Ctx::Whole),
                "clat_ns" | "lat_ns" => Some(Ctx::LightLat),
                _ => None,
            },
            Ctx::LightLat => match key {
                "N" | "mean" | "max" | "min" | "percentile" => Some(Ctx::Whole),
                _ => None,
            },
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.count(1)?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.count(1)?;
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.count(1)?;
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.count(1)?;
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.count(1)?;
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.count(1)?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.count(1)?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.count(3)?;
        // With each kept entry, what it cost: an entry thinned out gives its cost back.
        let mut out: Vec<(Value, usize)> = Vec::new();
        let mut i = 0usize;
        let mut stride = 1usize;
        loop {
            let keep = match self.ctx {
                Ctx::Series => i.is_multiple_of(stride),
                Ctx::Jobs => i < LISTED_JOBS,
                _ => true,
            };
            if !keep {
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
            } else {
                let ctx = match self.ctx {
                    Ctx::Jobs if i >= CHARTED_JOBS => Ctx::LightJob,
                    Ctx::Jobs | Ctx::Series => Ctx::Whole,
                    c => c,
                };
                let before = self.budget.get();
                match seq.next_element_seed(self.child(ctx))? {
                    Some(v) => out.push((v, before - self.budget.get())),
                    None => break,
                }
                if self.ctx == Ctx::Series && out.len() >= 2 * MAX_SERIES {
                    // Every other kept entry: those at multiples of twice the stride.
                    let mut k = 0;
                    let mut refund = 0;
                    out.retain(|(_, cost)| {
                        k += 1;
                        if k % 2 == 0 {
                            refund += cost;
                        }
                        k % 2 == 1
                    });
                    self.budget.set(self.budget.get() + refund);
                    stride *= 2;
                }
            }
            i += 1;
        }
        Ok(Value::Array(out.into_iter().map(|(v, _)| v).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.count(9)?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match self.member(&key) {
                Some(ctx) => {
                    self.count(1)?;
                    let v = map.next_value_seed(self.child(ctx))?;
                    out.insert(key, v);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// `text` as a `Value` for the HTML report, bounded as the module says.
pub(crate) fn parse(text: &str) -> Result<Value, serde_json::Error> {
    let budget = Cell::new(MAX_VALUES);
    let mut d = serde_json::Deserializer::from_str(text);
    let v = Node {
        ctx: Ctx::Whole,
        budget: &budget,
    }
    .deserialize(&mut d)?;
    d.end()?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn small_documents_read_as_serde_json_reads_them() {
        let t = r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "jobs": [{"jobname": "j",
            "read": {"iogauge": {"bw_series": [[500, 1.0], [1000, 2.0]]}}}]}"#;
        assert_eq!(parse(t).unwrap(), serde_json::from_str::<Value>(t).unwrap());
    }

    #[test]
    fn series_are_thinned_evenly_and_late_jobs_lightly() {
        let n = 10_000;
        let pts: Vec<Value> = (0..n).map(|i| json!([i, i])).collect();
        let mut jobs = vec![json!({"jobname": "first", "read": {"iogauge": {"bw_series": pts}}})];
        for i in 1..LISTED_JOBS + 5 {
            jobs.push(
                json!({"jobname": format!("j{i}"), "job options": {"rw": "read"},
                "read": {"total_ios": 1, "slat_ns": {"mean": 1},
                         "clat_ns": {"mean": 2, "bins": {"1": 1}}}}),
            );
        }
        let v = parse(&json!({"fio version": "fio-3.33", "jobs": jobs}).to_string()).unwrap();
        let kept = v["jobs"][0]["read"]["iogauge"]["bw_series"]
            .as_array()
            .unwrap();
        assert!(
            kept.len() <= 2 * MAX_SERIES && kept.len() >= MAX_SERIES,
            "{}",
            kept.len()
        );
        let stride = kept[1][0].as_u64().unwrap();
        assert!(kept
            .iter()
            .enumerate()
            .all(|(i, p)| p[0] == i as u64 * stride));
        assert_eq!(v["jobs"].as_array().unwrap().len(), LISTED_JOBS);
        assert_eq!(v["jobs"][1]["job options"]["rw"], "read");
        let light = &v["jobs"][CHARTED_JOBS];
        assert_eq!(
            light,
            &json!({"jobname": format!("j{CHARTED_JOBS}"),
                    "read": {"total_ios": 1, "clat_ns": {"mean": 2}}})
        );
    }

    #[test]
    fn a_document_of_too_many_values_is_refused() {
        let t = format!("[{}0]", "0,".repeat(MAX_VALUES));
        assert!(parse(&t)
            .unwrap_err()
            .to_string()
            .starts_with("it holds more than a page can show"));
    }
}
