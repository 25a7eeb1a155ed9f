//! fio's `json` and `json+` output formats.
//!
//! Keys, key order and number formats follow fio 3.33 (`stat.c`: show_thread_status_json,
//! add_ddir_status_json, add_ddir_lat_json, json_array_add_disk_util; `json.c` for the layout:
//! `"key" : value`, two spaces per level, floats as `%f`). Scripts written for fio (jq paths such
//! as `.jobs[0].sync.lat_ns.percentile["99.000000"]`) therefore work unchanged.
//!
//! iogauge's own additions live under one `iogauge` key per object, always the last key:
//! top level (version, notes, where it ran), each job (whether latency was measured), `sync` (the
//! write+sync latency), and each latency object that has percentiles (how they were computed).
//! With [`Detail::Intervals`] also each direction (the periodic bandwidth/IOPS series and the
//! uncounted tail, the per-interval latency histograms) and `sync` (its per-interval histograms):
//! most of a document's bytes, so `iogauge fio` prints them only with `--json-intervals`. Deliberate differences: syncs are counted in `sync.total_ios`, never as short reads;
//! `eta` is 0 because the report is written after every job finished.

use std::fmt::Write as _;

use super::units::{ctime, depth_share, epoch_secs_ms, lat_share};
use super::{DirReport, DiskReport, JobReport, LatIntervals, LatSummary, Report, SeriesPoint};

/// A JSON value that keeps insertion order and prints the way fio does.
#[derive(Debug, Clone, PartialEq)]
enum J {
    Int(u64),
    SInt(i64),
    /// Printed with six decimals (`%f`); non-finite values become `null` to stay valid JSON.
    Float(f64),
    Str(String),
    Bool(bool),
    Null,
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    /// An array printed on one line, nested arrays included (one latency interval per line).
    Line(Vec<J>),
    /// `[[a, b], …]` on one line: a latency interval's buckets, 16 bytes each rather than a
    /// `Line` of two `Int`s (≈ 110 bytes), which kept a long run's report from peaking at
    /// several MiB.
    Pairs(Vec<(u64, u64)>),
    /// `[[t_ms, value], …]`, one point per line: a periodic series, 16 bytes a point rather
    /// than an `Arr` of an `Int` and a `Float` (≈ 110 bytes); an hour's series has 7200 points
    /// per direction and kind.
    Points(Vec<SeriesPoint>),
}

/// A serde value (the typed context) in this printer's terms, keeping its key order.
fn from_serde(v: serde_json::Value) -> J {
    use serde_json::Value as V;
    match v {
        V::Null => J::Null,
        V::Bool(b) => J::Bool(b),
        V::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => J::Int(u),
            (None, Some(i)) => J::SInt(i),
            _ => J::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        V::String(s) => J::Str(s),
        V::Array(a) => J::Arr(a.into_iter().map(from_serde).collect()),
        V::Object(m) => J::Obj(m.into_iter().map(|(k, v)| (k, from_serde(v))).collect()),
    }
}

/// Small builder for ordered objects.
#[derive(Default)]
struct Obj(Vec<(String, J)>);

impl Obj {
    fn int(&mut self, k: &str, v: u64) -> &mut Self {
        self.0.push((k.to_string(), J::Int(v)));
        self
    }
    fn sint(&mut self, k: &str, v: i64) -> &mut Self {
        self.0.push((k.to_string(), J::SInt(v)));
        self
    }
    fn float(&mut self, k: &str, v: f64) -> &mut Self {
        self.0.push((k.to_string(), J::Float(v)));
        self
    }
    fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.0.push((k.to_string(), J::Str(v.to_string())));
        self
    }
    fn val(&mut self, k: &str, v: J) -> &mut Self {
        self.0.push((k.to_string(), v));
        self
    }
    fn done(self) -> J {
        J::Obj(self.0)
    }
}

/// How much of iogauge's per-interval data a document carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detail {
    /// fio's fields and iogauge's small sections (version, notes, where it ran, how percentiles
    /// were computed, write+sync latency): what `iogauge fio` prints by default, a few times
    /// fio's size rather than 30–50 times.
    Lean,
    /// Also each direction's periodic IOPS/bandwidth series with its trailing interval, and
    /// the per-interval latency histograms (`lat_intervals`): what the over-time charts and
    /// `compare`'s within-run resampling need. `--json-intervals`; the history's copy, the
    /// `--report` page and check documents always have them.
    Intervals,
}

/// The whole JSON document with every interval; `plus` selects `json+` (latency histogram
/// `bins`).
pub(crate) fn render_json(r: &Report, plus: bool) -> String {
    render_json_with(r, plus, Detail::Intervals)
}

/// The whole JSON document with the per-interval data `detail` asks for.
pub(crate) fn render_json_with(r: &Report, plus: bool, detail: Detail) -> String {
    let mut out = String::new();
    write_value(&document(r, plus, detail), 0, &mut out);
    out.push('\n');
    out
}

/// The whole JSON document with every interval as a value, for the documents that carry it
/// (a check's profile report, the history's copy): the very value parsing [`render_json`]'s
/// text gives (floats as printed, `%f`), built without the text, so it cannot fail.
pub(crate) fn json_value(r: &Report, plus: bool) -> serde_json::Value {
    to_serde(&document(r, plus, Detail::Intervals))
}

/// A printed float read back: what a reader of the text gets, or `null` as printed.
fn printed_float(x: f64) -> serde_json::Value {
    if !x.is_finite() {
        return serde_json::Value::Null;
    }
    let mut t = String::new();
    let _ = write!(t, "{x:.6}");
    t.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// This printer's value as serde's, equal to parsing what [`write_value`] prints.
fn to_serde(v: &J) -> serde_json::Value {
    use serde_json::Value as V;
    match v {
        J::Int(n) => V::from(*n),
        J::SInt(n) => V::from(*n),
        J::Float(x) => printed_float(*x),
        J::Str(s) => V::String(s.clone()),
        J::Bool(b) => V::Bool(*b),
        J::Null => V::Null,
        J::Obj(pairs) => {
            let mut m = serde_json::Map::with_capacity(pairs.len());
            for (k, v) in pairs {
                m.insert(k.clone(), to_serde(v));
            }
            V::Object(m)
        }
        J::Arr(items) | J::Line(items) => V::Array(items.iter().map(to_serde).collect()),
        J::Pairs(pairs) => V::Array(
            pairs
                .iter()
                .map(|(a, b)| V::Array(vec![V::from(*a), V::from(*b)]))
                .collect(),
        ),
        J::Points(points) => V::Array(
            points
                .iter()
                .map(|p| V::Array(vec![V::from(p.t_ms), printed_float(p.value)]))
                .collect(),
        ),
    }
}

fn document(r: &Report, plus: bool, detail: Detail) -> J {
    // fio stamps the document when it prints it, i.e. when the last job finished.
    let stamp = r
        .jobs
        .iter()
        .filter_map(|j| j.finished_at)
        .max()
        .unwrap_or(r.started_at);
    let (secs, ms) = epoch_secs_ms(stamp);
    let mut o = Obj::default();
    o.str("fio version", &r.version)
        .int("timestamp", secs)
        .int("timestamp_ms", ms)
        .str("time", &ctime(stamp));
    if !r.global_options.is_empty() {
        o.val("global options", options(&r.global_options));
    }
    o.val(
        "jobs",
        J::Arr(r.jobs.iter().map(|j| job(j, plus, detail)).collect()),
    );
    if !r.disks.is_empty() {
        o.val("disk_util", J::Arr(r.disks.iter().map(disk).collect()));
    }
    // The context has only strings, flags and lists, which always serialize; were that to
    // change, the document says so in its notes instead of holding a silent `null`.
    let context = r.context.as_ref().map(serde_json::to_value);
    let mut notes: Vec<J> = r.notes.iter().map(|n| J::Str(n.clone())).collect();
    if let Some(Err(e)) = &context {
        notes.push(J::Str(format!(
            "the run's context could not be written: {e}"
        )));
    }
    let mut ig = Obj::default();
    ig.str("version", &r.version).val("notes", J::Arr(notes));
    if let Some(why) = &r.interrupted {
        ig.str("interrupted", why);
    }
    if let Some(Ok(c)) = context {
        ig.val("context", from_serde(c));
    }
    o.val("iogauge", ig.done());
    o.done()
}

fn options(opts: &[(String, String)]) -> J {
    J::Obj(
        opts.iter()
            .map(|(k, v)| (k.clone(), J::Str(v.clone())))
            .collect(),
    )
}

fn job(j: &JobReport, plus: bool, detail: Detail) -> J {
    let mut o = Obj::default();
    // fio leaves out an empty name: only stats=0's empty entry has none.
    if !j.name.is_empty() {
        o.str("jobname", &j.name);
    }
    o.int("groupid", j.groupid as u64)
        .sint("error", j.error as i64)
        // Every job has finished when the report is written: nothing is left to estimate.
        .int("eta", 0)
        .int("elapsed", j.elapsed_s);
    if !j.options.is_empty() {
        o.val("job options", options(&j.options));
    }
    // unified_rw_reporting=mixed: fio prints the `mixed` entry alone (no read/write/trim/sync);
    // =both: the directions, then `mixed`.
    let mixed_only = j.unified_rw == crate::model::UnifiedRw::Mixed && j.mixed.is_some();
    if !mixed_only {
        for (name, d) in ["read", "write", "trim"].iter().zip(&j.dirs) {
            o.val(name, direction(d, plus, j.lat_percentiles, detail));
        }
    }
    let mut sync = Obj::default();
    sync.int("total_ios", j.sync.total_ios)
        .val("lat_ns", lat_object(&j.sync.lat, plus));
    let mut extra = Obj::default();
    if j.sync.write_and_sync.n > 0 {
        // Each write with the sync that followed it, as troubleshoot's original collector timed.
        extra.val(
            "write_and_sync_lat_ns",
            lat_object(&j.sync.write_and_sync, plus),
        );
    }
    if let Some(li) = j
        .sync
        .lat_intervals
        .as_ref()
        .filter(|_| detail == Detail::Intervals)
    {
        extra.val("lat_intervals", lat_intervals(li));
    }
    if !extra.0.is_empty() {
        sync.val("iogauge", extra.done());
    }
    if !mixed_only {
        o.val("sync", sync.done());
    }
    if let Some(m) = &j.mixed {
        o.val("mixed", direction(m, plus, j.lat_percentiles, detail));
    }

    o.int("job_runtime", j.job_runtime_ms)
        .float("usr_cpu", j.cpu.usr_pct)
        .float("sys_cpu", j.cpu.sys_pct)
        .int("ctx", j.cpu.ctx)
        .int("majf", j.cpu.majf)
        .int("minf", j.cpu.minf);

    const LEVEL: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
    const SUBMIT: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
    const LAT: [&str; 12] = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    let b = &j.lat_buckets;
    o.val(
        "iodepth_level",
        floats(&LEVEL, &j.depths.level.map(depth_share)),
    )
    .val(
        "iodepth_submit",
        floats(&SUBMIT, &j.depths.submit.map(depth_share)),
    )
    .val(
        "iodepth_complete",
        floats(&SUBMIT, &j.depths.complete.map(depth_share)),
    )
    .val("latency_ns", floats(&LAT, &b.ns.map(lat_share)))
    .val("latency_us", floats(&LAT, &b.us.map(lat_share)))
    .val("latency_ms", floats(&LAT, &b.ms.map(lat_share)));
    if let Some((total, first)) = j.errors {
        o.int("total_err", total).sint("first_error", first as i64);
    }
    if j.iodepth > 0 {
        let (target, window, pct) = j.latency_target.unwrap_or((0, 0, 100.0));
        o.int("latency_depth", j.iodepth as u64)
            .int("latency_target", target)
            .float("latency_percentile", pct)
            .int("latency_window", window);
    }
    if let Some(ss) = &j.steadystate {
        o.val("steadystate", from_serde(ss.json()));
    }
    if !j.description.is_empty() {
        o.str("desc", &j.description);
    }
    let mut ig = Obj::default();
    ig.val("latency_measured", J::Bool(j.latency_measured()));
    o.val("iogauge", ig.done());
    o.done()
}

fn floats(keys: &[&str], vals: &[f64]) -> J {
    J::Obj(
        keys.iter()
            .zip(vals)
            .map(|(k, &v)| (k.to_string(), J::Float(v)))
            .collect(),
    )
}

fn direction(d: &DirReport, plus: bool, lat_pcts: bool, detail: Detail) -> J {
    let mut o = Obj::default();
    o.int("io_bytes", d.io_bytes)
        .int("io_kbytes", d.io_bytes >> 10)
        .int("bw_bytes", d.bw_bytes)
        .int("bw", d.bw_bytes / 1024)
        .float("iops", d.iops)
        .int("runtime", d.runtime_ms)
        .int("total_ios", d.total_ios)
        .int("short_ios", d.short_ios)
        .int("drop_ios", d.drop_ios)
        .val("slat_ns", lat_object(&d.slat, plus))
        .val("clat_ns", lat_object(&d.clat, plus))
        .val("lat_ns", lat_object(&d.lat, plus));
    if !d.prios.is_empty() {
        // cmdprio: latency per priority, `lat_ns` with lat_percentiles, else `clat_ns` (fio's).
        let key = if lat_pcts { "lat_ns" } else { "clat_ns" };
        let prios = d
            .prios
            .iter()
            .map(|p| {
                let mut e = Obj::default();
                e.int("prioclass", p.class as u64)
                    .int("prio", p.level as u64)
                    .val(key, lat_object(&p.lat, plus));
                e.done()
            })
            .collect();
        o.val("prios", J::Arr(prios));
    }
    // fio reports zeros (and bw_agg 0) when no periodic sample was taken.
    let bw = &d.bw_samples;
    let has_bw = bw.samples > 0;
    o.int("bw_min", if has_bw { bw.min } else { 0 })
        .int("bw_max", if has_bw { bw.max } else { 0 })
        .float("bw_agg", if has_bw { d.bw_agg_pct } else { 0.0 })
        .float("bw_mean", if has_bw { bw.mean } else { 0.0 })
        .float("bw_dev", if has_bw { bw.stddev } else { 0.0 })
        .int("bw_samples", bw.samples);
    let io = &d.iops_samples;
    let has_io = io.samples > 0;
    o.int("iops_min", if has_io { io.min } else { 0 })
        .int("iops_max", if has_io { io.max } else { 0 })
        .float("iops_mean", if has_io { io.mean } else { 0.0 })
        .float("iops_stddev", if has_io { io.stddev } else { 0.0 })
        .int("iops_samples", io.samples);
    // Lean: nothing of iogauge's per direction (fio's keys only).
    if detail == Detail::Intervals {
        let mut ig = Obj::default();
        ig.val("bw_series", series(&d.bw_series))
            .val("iops_series", series(&d.iops_series))
            .val("bw_tail", d.bw_tail.map_or(J::Null, point))
            .val("iops_tail", d.iops_tail.map_or(J::Null, point));
        if let Some(li) = &d.lat_intervals {
            ig.val("lat_intervals", lat_intervals(li));
        }
        o.val("iogauge", ig.done());
    }
    o.done()
}

/// `{interval_ms, latency, intervals: [[end_ms, [[value_ns, count], …]], …]}`, one interval per
/// line.
fn lat_intervals(li: &LatIntervals) -> J {
    let intervals = li
        .intervals
        .iter()
        .map(|(end_ms, bins)| J::Line(vec![J::Int(*end_ms), J::Pairs(bins.clone())]))
        .collect();
    let mut o = Obj::default();
    o.int("interval_ms", li.interval_ms)
        .str("latency", li.latency.as_str())
        .val("intervals", J::Arr(intervals));
    o.done()
}

/// `[[t_ms, value], …]`, one point per line.
fn series(points: &[SeriesPoint]) -> J {
    J::Points(points.to_vec())
}

fn point(p: SeriesPoint) -> J {
    J::Arr(vec![J::Int(p.t_ms), J::Float(p.value)])
}

/// `{min, max, mean, stddev, N[, percentile][, bins]}` in ns. Percentiles appear only when the
/// model carries them (fio prints them for clat by default, lat with lat_percentiles, sync
/// whenever there were syncs); `bins` only with json+ and only beside percentiles, as fio.
fn lat_object(s: &LatSummary, plus: bool) -> J {
    let mut o = Obj::default();
    if s.n == 0 {
        o.int("min", 0)
            .int("max", 0)
            .float("mean", 0.0)
            .float("stddev", 0.0)
            .int("N", 0);
        return o.done();
    }
    o.int("min", s.min)
        .int("max", s.max)
        .float("mean", s.mean)
        .float("stddev", s.stddev)
        .int("N", s.n);
    if !s.percentiles.is_empty() {
        o.val(
            "percentile",
            J::Obj(
                s.percentiles
                    .iter()
                    .map(|&(p, v)| (format!("{p:.6}"), J::Int(v)))
                    .collect(),
            ),
        );
        if plus {
            o.val(
                "bins",
                J::Obj(
                    s.bins
                        .iter()
                        .map(|&(b, c)| (b.to_string(), J::Int(c)))
                        .collect(),
                ),
            );
        }
        if let Some(m) = s.method {
            let mut ig = Obj::default();
            ig.str("percentile_method", m.as_str());
            o.val("iogauge", ig.done());
        }
    }
    o.done()
}

fn disk(d: &DiskReport) -> J {
    let mut o = Obj::default();
    o.str("name", &d.name)
        .int("read_ios", d.read_ios)
        .int("write_ios", d.write_ios)
        .int("read_merges", d.read_merges)
        .int("write_merges", d.write_merges)
        .int("read_ticks", d.read_ticks)
        .int("write_ticks", d.write_ticks)
        .int("in_queue", d.in_queue)
        .float("util", d.util_pct.min(100.0));
    if let Some(a) = d.aggr() {
        // Key names as fio spells them, including `aggr_write_merge` (singular).
        o.int("aggr_read_ios", a.read_ios)
            .int("aggr_write_ios", a.write_ios)
            .int("aggr_read_merges", a.read_merges)
            .int("aggr_write_merge", a.write_merges)
            .int("aggr_read_ticks", a.read_ticks)
            .int("aggr_write_ticks", a.write_ticks)
            .int("aggr_in_queue", a.in_queue)
            .float("aggr_util", a.util_pct);
    }
    o.done()
}

// ---- printing, in fio's layout

fn indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn is_scalar(v: &J) -> bool {
    !matches!(
        v,
        J::Obj(_) | J::Arr(_) | J::Line(_) | J::Pairs(_) | J::Points(_)
    )
}

fn write_value(v: &J, level: usize, out: &mut String) {
    match v {
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Null => out.push_str("null"),
        J::Int(n) => {
            let _ = write!(out, "{n}");
        }
        J::SInt(n) => {
            let _ = write!(out, "{n}");
        }
        J::Float(x) => {
            if x.is_finite() {
                let _ = write!(out, "{x:.6}");
            } else {
                out.push_str("null");
            }
        }
        J::Str(s) => write_str(s, out),
        J::Obj(pairs) => {
            if pairs.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(level + 1, out);
                write_str(k, out);
                out.push_str(" : ");
                write_value(v, level + 1, out);
            }
            out.push('\n');
            indent(level, out);
            out.push('}');
        }
        J::Line(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(v, level + 1, out);
            }
            out.push(']');
        }
        J::Pairs(pairs) => {
            out.push('[');
            for (i, (a, b)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "[{a}, {b}]");
            }
            out.push(']');
        }
        J::Points(points) => {
            if points.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for (i, p) in points.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(level + 1, out);
                let _ = write!(out, "[{}, ", p.t_ms);
                write_value(&J::Float(p.value), level + 1, out);
                out.push(']');
            }
            out.push('\n');
            indent(level, out);
            out.push(']');
        }
        J::Arr(items) => {
            // Arrays of scalars (series points) stay on one line; fio never prints those.
            if items.iter().all(is_scalar) {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_value(v, level + 1, out);
                }
                out.push(']');
                return;
            }
            out.push_str("[\n");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(level + 1, out);
                write_value(v, level + 1, out);
            }
            out.push('\n');
            indent(level, out);
            out.push(']');
        }
    }
}

/// A JSON string literal. fio escapes only `"` and `\`; control characters are escaped too so
/// the document stays valid whatever a job name or option contains.
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::super::fixtures::{self, from_fio_json};
    use super::super::{IntervalLatency, PercentileMethod, SeriesPoint};
    use super::*;

    /// Every leaf path of a document, in the notation of the reference `.keypaths.txt` files:
    /// array elements as `[]`, objects whose keys are all numbers (percentiles, bins) as `{}`.
    fn key_paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
        let join = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            Value::Object(m) => {
                let numeric = !m.is_empty() && m.keys().all(|k| k.parse::<f64>().is_ok());
                // iodepth/latency tables have numeric keys too but fio lists them one by one.
                let listed = m.keys().any(|k| k.starts_with(">="));
                if numeric && !listed && m.len() > 12 {
                    out.insert(format!("{prefix}{{}}"));
                    return;
                }
                for (k, v) in m {
                    key_paths(v, &join(k), out);
                }
            }
            Value::Array(a) => {
                for v in a {
                    key_paths(v, &format!("{prefix}[]"), out);
                }
            }
            _ => {
                out.insert(prefix.to_string());
            }
        }
    }

    /// The paths in a `.keypaths.txt` file (`path : type = value` or `path{<…>} : type`).
    fn reference_paths(text: &str) -> BTreeSet<String> {
        text.lines()
            .filter_map(|l| l.split(" : ").next())
            .map(|p| match p.find("{<") {
                Some(i) => format!("{}{{}}", &p[..i]),
                None => p.trim_end().to_string(),
            })
            .filter(|p| !p.is_empty())
            .collect()
    }

    /// Every leaf of `want` must be in `got` with the same value (floats to fio's 6 decimals),
    /// except the listed paths.
    fn assert_values_match(
        got: &Value,
        want: &Value,
        path: &str,
        skip: &[&str],
        errs: &mut Vec<String>,
    ) {
        if skip.contains(&path) {
            return;
        }
        match want {
            Value::Object(m) => {
                for (k, w) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    match got.get(k) {
                        Some(g) => assert_values_match(g, w, &p, skip, errs),
                        None => errs.push(format!("missing {p}")),
                    }
                }
            }
            Value::Array(a) => {
                for (i, w) in a.iter().enumerate() {
                    let p = format!("{path}[{i}]");
                    match got.get(i) {
                        Some(g) => assert_values_match(g, w, &p, skip, errs),
                        None => errs.push(format!("missing {p}")),
                    }
                }
            }
            Value::Number(n) if n.is_f64() => {
                let (g, w) = (got.as_f64().unwrap_or(f64::NAN), n.as_f64().unwrap_or(0.0));
                if !got.is_f64() || (g - w).abs() > 1e-6 * w.abs().max(1.0) {
                    errs.push(format!("{path}: got {got}, want {want}"));
                }
            }
            _ => {
                if got != want {
                    errs.push(format!("{path}: got {got}, want {want}"));
                }
            }
        }
    }

    fn parse(text: &str) -> Value {
        let v: Value = serde_json::from_str(text).expect("rendered JSON is one valid document");
        v
    }

    /// Removes every `"iogauge" : {…}` member (fio has none) so the rest can be compared with
    /// fio's text line by line; trailing commas are dropped from both sides.
    fn without_iogauge(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut skipping: Option<String> = None;
        for line in text.lines() {
            if let Some(close) = &skipping {
                if line.starts_with(close.as_str()) && line.trim_end_matches(',').trim() == "}" {
                    skipping = None;
                }
                continue;
            }
            let trimmed = line.trim_start();
            if trimmed.starts_with("\"iogauge\" : {") {
                if !trimmed.ends_with('}') && !trimmed.ends_with("},") {
                    let ind = line.len() - trimmed.len();
                    skipping = Some(" ".repeat(ind));
                }
                continue;
            }
            out.push(line.trim_end_matches(',').to_string());
        }
        out
    }

    fn assert_layout_matches(got: &str, want: &str, skip_prefixes: &[&str]) {
        let keep = |l: &String| !skip_prefixes.iter().any(|p| l.trim_start().starts_with(p));
        let g: Vec<String> = without_iogauge(got).into_iter().filter(keep).collect();
        let w: Vec<String> = want
            .lines()
            .map(|l| l.trim_end_matches(',').to_string())
            .filter(keep)
            .collect();
        let mut errs = Vec::new();
        for i in 0..g.len().max(w.len()) {
            if g.get(i) != w.get(i) {
                errs.push(format!("line {i}: got {:?} want {:?}", g.get(i), w.get(i)));
            }
        }
        assert!(
            errs.is_empty(),
            "{} layout mismatches:\n{}",
            errs.len(),
            errs.join("\n")
        );
    }

    const KNOWN_DIFFS: [&str; 2] = ["fio version", "jobs[0].eta"];

    /// The value the typed documents carry is the printed document read back, to the last
    /// float (`%f`), with series, interval histograms and non-finite values: nothing is lost
    /// or turned into `null` silently by skipping the text.
    #[test]
    fn the_value_is_the_printed_document_read_back() {
        let mut with_series = fixtures::run2();
        let d = &mut with_series.jobs[0].dirs[0];
        d.bw_series = [(500, 91_766.123_456_789), (1000, f64::NAN), (1500, 1e300)]
            .iter()
            .map(|&(t_ms, value)| SeriesPoint { t_ms, value })
            .collect();
        d.iops_series = vec![SeriesPoint {
            t_ms: 500,
            value: 1.0 / 3.0,
        }];
        d.lat_intervals = Some(LatIntervals {
            interval_ms: 100,
            latency: IntervalLatency::Clat,
            intervals: vec![(100, vec![(1000, 3), (u64::MAX, 1)]), (200, vec![])],
        });
        for r in [
            fixtures::run1(),
            fixtures::run2(),
            fixtures::run3(),
            fixtures::seed002_null(),
            from_fio_json(fixtures::RUN5_JSON),
            with_series,
        ] {
            for plus in [false, true] {
                let read: serde_json::Value = serde_json::from_str(&render_json(&r, plus)).unwrap();
                assert_eq!(json_value(&r, plus), read);
            }
        }
    }

    #[test]
    fn series_points_print_as_arrays_of_two_values_did() {
        let pts = [(500, 91766.5), (1000, f64::NAN), (1500, 0.0)];
        let points = J::Points(
            pts.iter()
                .map(|&(t_ms, value)| SeriesPoint { t_ms, value })
                .collect(),
        );
        let arrays = J::Arr(
            pts.iter()
                .map(|&(t, v)| J::Arr(vec![J::Int(t), J::Float(v)]))
                .collect(),
        );
        for level in [0, 3] {
            let (mut a, mut b) = (String::new(), String::new());
            write_value(&points, level, &mut a);
            write_value(&arrays, level, &mut b);
            assert_eq!(a, b);
        }
        let (mut a, mut b) = (String::new(), String::new());
        write_value(&J::Points(vec![]), 2, &mut a);
        write_value(&J::Arr(vec![]), 2, &mut b);
        assert_eq!((a.as_str(), b.as_str()), ("[]", "[]"));
    }

    #[test]
    fn run2_json_values_layout_and_key_paths() {
        let r = from_fio_json(fixtures::RUN2_JSON);
        let text = render_json(&r, false);
        let got = parse(&text);
        let want = parse(fixtures::RUN2_JSON);
        let mut errs = Vec::new();
        assert_values_match(&got, &want, "", &KNOWN_DIFFS, &mut errs);
        assert!(errs.is_empty(), "{}", errs.join("\n"));
        assert_layout_matches(
            &text,
            fixtures::RUN2_JSON,
            &["\"fio version\"", "\"eta\"", "\"time\""],
        );
        assert_eq!(got["jobs"][0]["eta"], 0);
        assert_eq!(got["fio version"], "iogauge-0.1.0");
        assert!(got["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
    }

    #[test]
    fn run2_jsonplus_has_bins_and_all_reference_paths() {
        let r = from_fio_json(fixtures::RUN2_JSONPLUS);
        let text = render_json(&r, true);
        let got = parse(&text);
        let want = parse(fixtures::RUN2_JSONPLUS);
        let mut errs = Vec::new();
        assert_values_match(&got, &want, "", &KNOWN_DIFFS, &mut errs);
        assert!(errs.is_empty(), "{}", errs.join("\n"));
        assert_layout_matches(
            &text,
            fixtures::RUN2_JSONPLUS,
            &["\"fio version\"", "\"eta\"", "\"time\""],
        );
        let mut paths = BTreeSet::new();
        key_paths(&got, "", &mut paths);
        let missing: Vec<_> = reference_paths(fixtures::RUN2_KEYPATHS)
            .difference(&paths)
            .cloned()
            .collect();
        assert!(missing.is_empty(), "missing key paths: {missing:?}");
        assert_eq!(got["jobs"][0]["read"]["clat_ns"]["bins"]["45824"], 1);
    }

    #[test]
    fn run1_fdatasync_counts_syncs_and_jq_path_works() {
        let r = from_fio_json(fixtures::RUN1_JSON);
        let text = render_json(&r, false);
        let got = parse(&text);
        let want = parse(fixtures::RUN1_JSON);
        let mut errs = Vec::new();
        let skip = [
            "fio version",
            "jobs[0].eta",
            "jobs[0].read.short_ios",
            "jobs[0].sync.total_ios",
        ];
        assert_values_match(&got, &want, "", &skip, &mut errs);
        assert!(errs.is_empty(), "{}", errs.join("\n"));
        // fio 3.33 reports 911 short reads and 0 syncs here; iogauge counts the syncs.
        assert_eq!(got["jobs"][0]["read"]["short_ios"], 0);
        assert_eq!(got["jobs"][0]["sync"]["total_ios"], 911);
        // OpenShift's etcd-perf reads exactly this path.
        assert_eq!(
            got.pointer("/jobs/0/sync/lat_ns/percentile/99.000000"),
            Some(&Value::from(456_704u64))
        );
        let mut paths = BTreeSet::new();
        key_paths(&got, "", &mut paths);
        let missing: Vec<_> = reference_paths(fixtures::RUN1_KEYPATHS)
            .difference(&paths)
            .cloned()
            .collect();
        assert!(missing.is_empty(), "missing key paths: {missing:?}");
        // No global options in this run: fio omits the key.
        assert!(got.get("global options").is_none());
    }

    #[test]
    fn run3_and_run5_match_fio_values_and_layout() {
        for (src, skip) in [
            (
                fixtures::RUN3_JSON,
                vec!["fio version", "jobs[0].eta", "jobs[1].eta"],
            ),
            (fixtures::RUN5_JSON, vec!["fio version", "jobs[0].eta"]),
        ] {
            let r = from_fio_json(src);
            let text = render_json(&r, false);
            let got = parse(&text);
            let mut errs = Vec::new();
            assert_values_match(&got, &parse(src), "", &skip, &mut errs);
            assert!(errs.is_empty(), "{}", errs.join("\n"));
            assert_layout_matches(&text, src, &["\"fio version\"", "\"eta\"", "\"time\""]);
        }
    }

    #[test]
    fn iogauge_keys_are_additive() {
        let mut r = fixtures::run2();
        r.notes.push("a \"quoted\"\nnote\u{1}".into());
        r.jobs[0].dirs[0].bw_series = vec![
            SeriesPoint {
                t_ms: 500,
                value: 91766.5,
            },
            SeriesPoint {
                t_ms: 1000,
                value: 90000.0,
            },
        ];
        r.jobs[0].dirs[0].bw_tail = Some(SeriesPoint {
            t_ms: 1201,
            value: 45000.25,
        });
        r.jobs[0].dirs[0].clat.method = Some(PercentileMethod::Histogram);
        r.jobs[0].dirs[0].lat_intervals = Some(LatIntervals {
            interval_ms: 100,
            latency: IntervalLatency::Clat,
            intervals: vec![(100, vec![(250, 3), (45824, 1)]), (137, vec![])],
        });
        r.jobs[0].sync.lat_intervals = Some(LatIntervals {
            interval_ms: 200,
            latency: IntervalLatency::Lat,
            intervals: vec![(150, vec![(1000, 2)])],
        });
        r.jobs[0].gtod_reduce = true;
        let text = render_json(&r, true);
        let v = parse(&text);
        let li = &v["jobs"][0]["read"]["iogauge"]["lat_intervals"];
        assert_eq!(li["interval_ms"], 100);
        assert_eq!(li["latency"], "clat");
        assert_eq!(li["intervals"][0][0], 100);
        assert_eq!(li["intervals"][0][1][1], serde_json::json!([45824, 1]));
        assert_eq!(li["intervals"][1], serde_json::json!([137, []]));
        // One interval per line.
        assert!(text.contains("[100, [[250, 3], [45824, 1]]],\n"));
        let sl = &v["jobs"][0]["sync"]["iogauge"]["lat_intervals"];
        assert_eq!(sl["latency"], "lat");
        assert_eq!(sl["intervals"][0], serde_json::json!([150, [[1000, 2]]]));
        assert!(v["jobs"][0]["write"]["iogauge"]
            .get("lat_intervals")
            .is_none());
        assert_eq!(v["iogauge"]["version"], "iogauge-0.1.0");
        assert_eq!(v["iogauge"]["notes"][0], "a \"quoted\"\nnote\u{1}");
        let rd = &v["jobs"][0]["read"];
        assert_eq!(rd["iogauge"]["bw_series"][0][0], 500);
        assert_eq!(rd["iogauge"]["bw_series"][0][1], 91766.5);
        assert_eq!(rd["iogauge"]["iops_series"], Value::Array(vec![]));
        assert_eq!(rd["iogauge"]["bw_tail"][0], 1201);
        assert_eq!(rd["iogauge"]["bw_tail"][1], 45000.25);
        assert_eq!(rd["iogauge"]["iops_tail"], Value::Null);
        assert_eq!(rd["clat_ns"]["iogauge"]["percentile_method"], "histogram");
        assert!(rd["lat_ns"].get("iogauge").is_none());
        assert_eq!(v["jobs"][0]["iogauge"]["latency_measured"], false);
        // The iogauge key is the last key of each object.
        let job = v["jobs"][0].as_object().expect("job object");
        assert_eq!(job.keys().next_back().map(String::as_str), Some("iogauge"));
        // Points stay on one line each.
        assert!(text.contains("\"bw_series\" : [\n"));
        assert!(text.contains("[500, 91766.500000],\n"));
        // Percentile keys and integers as fio prints them.
        assert!(text.contains("\"99.000000\" : "));
        assert!(text.contains("\"iops\" : 23228.354329,"));
    }

    /// Lean leaves out exactly the per-interval data: the series, tails and interval
    /// histograms, and with them each direction's `iogauge` key; fio's keys and iogauge's small
    /// sections stay, in the same order.
    #[test]
    fn lean_leaves_out_the_intervals_only() {
        let mut r = fixtures::run2();
        r.jobs[0].dirs[0].bw_series = vec![SeriesPoint {
            t_ms: 500,
            value: 1.0,
        }];
        r.jobs[0].dirs[0].lat_intervals = Some(LatIntervals {
            interval_ms: 100,
            latency: IntervalLatency::Clat,
            intervals: vec![(100, vec![(250, 3)])],
        });
        r.jobs[0].sync.lat_intervals = Some(LatIntervals {
            interval_ms: 100,
            latency: IntervalLatency::Lat,
            intervals: vec![(100, vec![(1000, 2)])],
        });
        for plus in [false, true] {
            let full = parse(&render_json_with(&r, plus, Detail::Intervals));
            let lean = parse(&render_json_with(&r, plus, Detail::Lean));
            assert_eq!(
                render_json(&r, plus),
                render_json_with(&r, plus, Detail::Intervals)
            );
            let mut stripped = full.clone();
            for d in ["read", "write", "trim"] {
                stripped["jobs"][0][d]
                    .as_object_mut()
                    .expect("a direction")
                    .remove("iogauge");
            }
            if let Some(sync) = stripped["jobs"][0]["sync"].get_mut("iogauge") {
                sync.as_object_mut()
                    .expect("sync's iogauge")
                    .remove("lat_intervals");
                if sync.as_object().is_some_and(|o| o.is_empty()) {
                    stripped["jobs"][0]["sync"]
                        .as_object_mut()
                        .expect("sync")
                        .remove("iogauge");
                }
            }
            assert_eq!(lean, stripped, "json+ {plus}");
            assert!(lean["jobs"][0]["read"].get("iogauge").is_none());
            assert_eq!(lean["iogauge"]["version"], "iogauge-0.1.0");
            assert!(lean["jobs"][0]["read"]["clat_ns"]["percentile"].is_object());
        }
    }

    #[test]
    fn non_finite_floats_stay_valid_json() {
        let mut r = fixtures::run2();
        r.jobs[0].cpu.usr_pct = f64::NAN;
        r.jobs[0].dirs[0].iops = f64::INFINITY;
        let v = parse(&render_json(&r, false));
        assert!(v["jobs"][0]["usr_cpu"].is_null());
        assert!(v["jobs"][0]["read"]["iops"].is_null());
    }

    #[test]
    fn disk_slaves_give_aggr_keys() {
        let mut r = fixtures::run2();
        let mut dm = r.disks[0].clone();
        dm.name = "dm-0".into();
        let mut s2 = r.disks[0].clone();
        s2.read_ios = 1;
        s2.util_pct = 99.5;
        dm.slaves = vec![r.disks[0].clone(), s2];
        r.disks.push(dm);
        let v = parse(&render_json(&r, false));
        let d = &v["disk_util"][1];
        assert_eq!(d["aggr_read_ios"], 113_766u64 / 2);
        assert_eq!(d["aggr_write_merge"], 8);
        assert_eq!(d["aggr_util"], 99.5);
        assert!(v["disk_util"][0].get("aggr_read_ios").is_none());
    }

    /// Manual check against any fio 3.33 JSON document:
    /// `FIO_JSON=out.json [FIO_PLUS=1] cargo test --lib fio_json_roundtrip -- --ignored`.
    #[test]
    #[ignore]
    fn fio_json_roundtrip() {
        let Ok(path) = std::env::var("FIO_JSON") else {
            return;
        };
        let src = std::fs::read_to_string(&path).expect("readable FIO_JSON");
        let plus = std::env::var("FIO_PLUS").is_ok();
        let r = from_fio_json(&src);
        let text = render_json(&r, plus);
        let want = parse(&src);
        let skip: Vec<String> = (0..r.jobs.len())
            .map(|i| format!("jobs[{i}].eta"))
            .chain(["fio version".to_string()])
            .collect();
        let skip: Vec<&str> = skip.iter().map(String::as_str).collect();
        let mut errs = Vec::new();
        assert_values_match(&parse(&text), &want, "", &skip, &mut errs);
        assert!(errs.is_empty(), "{}", errs.join("\n"));
        assert_layout_matches(&text, &src, &["\"fio version\"", "\"eta\"", "\"time\""]);
    }
}
