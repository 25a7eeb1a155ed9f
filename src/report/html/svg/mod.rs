//! Chart primitives drawn as inline SVG (no library, nothing loaded): a line chart with a
//! linear or log-10 y axis, a horizontal bar chart and a histogram. Every chart is a `<figure>`
//! with the SVG's `<title>`, axis labels with units, an `aria-label`, a caption and its numbers
//! in a `<details>` table, so the page reads without the pictures too.

use super::page::esc;
use std::fmt::Write;

mod bars;
mod forest;
mod line;

/// The most points a line chart draws per series, and so the most rows its data table has: a
/// long run's periodic samples (or a crafted document's millions) would otherwise make a page
/// of hundreds of megabytes. Beyond it, each stretch of points is drawn as its lowest and
/// highest, so peaks stay visible.
pub(crate) const MAX_POINTS: usize = 600;

/// The most bars a bar chart or histogram draws (fio has 24 latency buckets; a profile a few
/// reference systems); the rest are left out, and the caption says so.
pub(crate) const MAX_BARS: usize = 100;

/// At most [`MAX_POINTS`] of `points`, in order: for each of equal stretches, the lowest and the
/// highest (by y). The points unchanged when they are few enough.
pub(crate) fn thin(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let stretches = MAX_POINTS / 2;
    let mut out = Vec::with_capacity(MAX_POINTS);
    for k in 0..stretches {
        let from = k * points.len() / stretches;
        let to = ((k + 1) * points.len() / stretches).max(from + 1);
        let part = &points[from..to.min(points.len())];
        let lo = part
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
        let hi = part
            .iter()
            .enumerate()
            .max_by(|a, b| a.1 .1.total_cmp(&b.1 .1));
        if let (Some((i, p)), Some((j, q))) = (lo, hi) {
            match i.cmp(&j) {
                std::cmp::Ordering::Less => out.extend([*p, *q]),
                std::cmp::Ordering::Greater => out.extend([*q, *p]),
                std::cmp::Ordering::Equal => out.push(*p),
            }
        }
    }
    out
}

/// Formats a value for tick labels and tables (the unit is part of the text).
pub(crate) type Fmt = fn(f64) -> String;

/// The drawing size (the SVG scales to its box; text is sized for this width).
const W: f64 = 640.0;
const LEFT: f64 = 96.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 34.0;

/// One line of a line chart.
pub(crate) struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A dashed horizontal line across a chart: a threshold or a mean.
pub(crate) struct RefLine {
    pub value: f64,
    pub label: String,
    /// `threshold` or `mean` (the CSS class).
    pub kind: &'static str,
}

/// A line chart.
pub(crate) struct LineChart {
    pub title: String,
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    pub x_fmt: Fmt,
    pub y_fmt: Fmt,
    /// Ticks placed by the caller (e.g. percentiles on a "nines" axis); None: linear ticks.
    pub x_ticks: Option<Vec<(f64, String)>>,
    /// Where a linear x axis ends (a time axis: the job's runtime), its ticks kept within it;
    /// None: at the tick covering the largest x.
    pub x_end: Option<f64>,
    /// Column header of x in the data table, and how x is written there.
    pub x_name: String,
    pub x_table: Fmt,
    pub y_log: bool,
    pub series: Vec<Series>,
    pub lines: Vec<RefLine>,
}

/// A horizontal bar chart.
pub(crate) struct BarChart {
    pub title: String,
    pub caption: String,
    pub x_label: String,
    pub fmt: Fmt,
    /// Label, value, highlighted.
    pub bars: Vec<(String, f64, bool)>,
    pub marker: Option<RefLine>,
}

/// A histogram: one vertical bar per bucket, buckets in order.
pub(crate) struct Histogram {
    pub title: String,
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    /// Bucket label and its height.
    pub buckets: Vec<(String, f64)>,
    pub fmt: Fmt,
}

/// Ratios B/A with their 95 % intervals on a log axis, one row per metric, with a line at 1
/// (no change): a forest plot, for `compare`.
pub(crate) struct Forest {
    pub title: String,
    pub caption: String,
    pub rows: Vec<ForestRow>,
}

/// A forest plot's row: label, ratio, interval.
pub(crate) type ForestRow = (String, f64, Option<(f64, f64)>);

/// The magnitudes an axis spans: a document may hold any finite number (5e-324, 1e308), and
/// outside these an axis' ends or ticks would overflow to infinity or underflow to zero, which
/// draws as NaN. Values beyond them are drawn at the axis' edge; tables show them as written.
const AXIS_MIN: f64 = 1e-300;
const AXIS_MAX: f64 = 1e300;

/// Nice linear ticks (steps of 1, 2 or 5 times a power of ten) from 0 covering `max`; the last
/// tick is the axis end.
pub(crate) fn linear_ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max >= AXIS_MIN {
        max.min(AXIS_MAX)
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| max / s <= 6.0)
        .unwrap_or(10.0 * mag);
    if !(step.is_finite() && step > 0.0) {
        return vec![0.0, max];
    }
    // At most 7 ticks by the choice of step; the bound keeps a rounding surprise small.
    let n = ((max / step - 1e-9).ceil() as usize).clamp(1, 12);
    (0..=n).map(|i| i as f64 * step).collect()
}

/// Ticks of a log-10 axis covering `min..=max` (both > 0): whole decades from the one at or
/// below `min` to the one at or above `max`, with 2 and 5 between them when the axis spans at
/// most two decades. The first and last ticks are the axis ends.
pub(crate) fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    let min = if min.is_finite() && min > 0.0 {
        min.clamp(AXIS_MIN, AXIS_MAX)
    } else {
        1.0
    };
    let max = if max.is_finite() && max > min {
        max.min(AXIS_MAX)
    } else {
        min
    };
    // A tiny tolerance so that 1000 counts as the decade 10^3, not just above it.
    let lo = (min.log10() + 1e-9).floor() as i32;
    let mut hi = (max.log10() - 1e-9).ceil() as i32;
    if hi <= lo {
        hi = lo + 1;
    }
    let fine = hi - lo <= 2;
    let mut t = Vec::new();
    for e in lo..hi {
        let d = 10f64.powi(e);
        t.push(d);
        if fine {
            t.push(2.0 * d);
            t.push(5.0 * d);
        }
    }
    t.push(10f64.powi(hi));
    t
}

/// Maps data values to pixels along one axis.
struct Scale {
    log: bool,
    d0: f64,
    d1: f64,
    p0: f64,
    p1: f64,
}

impl Scale {
    /// Always a finite pixel inside the axis: a value off the axis (negative on a linear one,
    /// beyond [`AXIS_MAX`], NaN) sits at its nearer end.
    fn at(&self, v: f64) -> f64 {
        let (v, a, b) = if self.log {
            (v.max(self.d0).log10(), self.d0.log10(), self.d1.log10())
        } else {
            (v, self.d0, self.d1)
        };
        let f = if b > a {
            let f = (v - a) / (b - a);
            if f.is_finite() {
                f
            } else {
                // b - a or v - a overflowed: the same fraction at half the magnitude.
                (v / 2.0 - a / 2.0) / (b / 2.0 - a / 2.0)
            }
        } else {
            0.5
        };
        let f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        let p = self.p0 + f * (self.p1 - self.p0);
        if p.is_finite() {
            p
        } else {
            self.p0
        }
    }
}

fn figure(svg: &str, caption: &str, table: &str) -> String {
    format!(
        "<figure class=\"chart\">\n{svg}<figcaption>{}</figcaption>\n\
         <details><summary>Data</summary>\n{table}</details>\n</figure>\n",
        esc(caption)
    )
}

fn svg_open(out: &mut String, h: f64, title: &str, alt: &str) {
    let _ = write!(
        out,
        "<svg viewBox=\"0 0 {W} {h}\" role=\"img\" aria-label=\"{}\">\n<title>{}</title>\n\
         <text class=\"title\" x=\"8\" y=\"18\">{}</text>\n",
        esc(alt),
        esc(title),
        esc(title)
    );
}

fn data_table(head: &[String], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<div class=\"scroll\"><table><thead><tr>");
    for h in head {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td class=\"num\">{}</td>", esc(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    s
}

/// Coordinates with one decimal: enough for a 640-unit drawing, and half the bytes.
fn xy(x: f64, y: f64) -> String {
    format!("{x:.1},{y:.1}")
}

fn axis_labels(s: &mut String, h: f64, bottom: f64, x_label: &str, y_label: &str) {
    let mid_x = (LEFT + W - RIGHT) / 2.0;
    let mid_y = (TOP + bottom) / 2.0;
    let _ = writeln!(
        s,
        "<text class=\"lbl\" x=\"{mid_x}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
         <text class=\"lbl\" transform=\"translate(14 {mid_y}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        h - 6.0,
        esc(x_label),
        esc(y_label)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::page::fmt_ns;

    #[test]
    fn log_ticks_are_decades_or_1_2_5() {
        // 130 µs .. 23 ms: three decades (100 µs .. 100 ms), decades only.
        assert_eq!(log_ticks(130_846.0, 23_479_748.0), vec![1e5, 1e6, 1e7, 1e8]);
        // Within two decades, 2 and 5 in between; a value on a decade is not rounded past it.
        assert_eq!(
            log_ticks(1000.0, 50_000.0),
            vec![1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5]
        );
        // One value: its decade.
        assert_eq!(log_ticks(3e6, 3e6), vec![1e6, 2e6, 5e6, 1e7]);
        let labels: Vec<String> = log_ticks(130_846.0, 23_479_748.0)
            .into_iter()
            .map(fmt_ns)
            .collect();
        assert_eq!(labels, ["100 µs", "1 ms", "10 ms", "100 ms"]);
    }

    #[test]
    fn linear_ticks_are_round() {
        assert_eq!(
            linear_ticks(254.0),
            vec![0.0, 50.0, 100.0, 150.0, 200.0, 250.0, 300.0]
        );
        assert_eq!(
            linear_ticks(1.0),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(linear_ticks(0.0), linear_ticks(1.0));
    }

    /// A time axis given its end (the runtime) ends there, its ticks within it, and the last
    /// point on it is drawn at the axis' right end.
    #[test]
    fn an_axis_given_its_end_ends_there() {
        let chart = |end: Option<f64>| {
            LineChart {
                title: "IOPS over time".into(),
                caption: String::new(),
                x_label: "time".into(),
                y_label: "IOPS".into(),
                x_fmt: |v| format!("{v} s"),
                y_fmt: |v| format!("{v}"),
                x_ticks: None,
                x_end: end,
                x_name: "time".into(),
                x_table: |v| format!("{v} s"),
                y_log: false,
                series: vec![Series {
                    name: "write".into(),
                    points: vec![(0.5, 10.0), (1.0, 12.0), (3.001, 30.0)],
                }],
                lines: vec![],
            }
            .render()
        };
        // Without an end, the axis runs to the next round tick: 4 s for a 3.001 s job.
        assert!(chart(None).contains(">4 s</text>"));
        let c = chart(Some(3.001));
        assert!(
            !c.contains(">4 s</text>") && c.contains(">3 s</text>"),
            "{c}"
        );
        assert!(c.contains(&format!(" {:.1},", W - RIGHT)), "{c}");
        // An end before the last point does not hide it.
        assert!(chart(Some(2.0)).contains(&format!(" {:.1},", W - RIGHT)));
    }

    #[test]
    fn a_log_scale_places_decades_evenly() {
        let s = Scale {
            log: true,
            d0: 1e3,
            d1: 1e5,
            p0: 200.0,
            p1: 0.0,
        };
        assert_eq!(s.at(1e3), 200.0);
        assert_eq!(s.at(1e4), 100.0);
        assert_eq!(s.at(1e5), 0.0);
        // Zero cannot be drawn on a log axis: it sits on the axis' floor.
        assert_eq!(s.at(0.0), 200.0);
    }

    #[test]
    fn charts_escape_text_and_carry_their_alternatives() {
        let c = LineChart {
            title: "<b>lat</b> & \"q\"".into(),
            caption: "cap <i>".into(),
            x_label: "percentile".into(),
            y_label: "latency".into(),
            x_fmt: |v| format!("{v}"),
            y_fmt: fmt_ns,
            x_ticks: None,
            x_end: None,
            x_name: "x".into(),
            x_table: |v| format!("{v}"),
            y_log: true,
            series: vec![Series {
                name: "<script>".into(),
                points: vec![(1.0, 1000.0), (2.0, 1e6)],
            }],
            lines: vec![RefLine {
                value: 1e5,
                label: "threshold < 100 µs".into(),
                kind: "threshold",
            }],
        }
        .render();
        assert!(!c.contains("<b>") && !c.contains("<script>") && !c.contains("<i>"));
        assert!(c.contains("<title>&lt;b&gt;lat&lt;/b&gt; &amp; &quot;q&quot;</title>"));
        assert!(c.contains("aria-label=\"&lt;b&gt;lat&lt;/b&gt; &amp; &quot;q&quot;: latency against percentile (log scale)\""));
        assert!(c.contains("<figcaption>cap &lt;i&gt;</figcaption>"));
        assert!(c.contains("<details><summary>Data</summary>"));
        assert!(c.contains(">1 ms<") && c.contains(">threshold &lt; 100 µs<"));
        let b = BarChart {
            title: "rank".into(),
            caption: String::new(),
            x_label: "IOPS".into(),
            fmt: |v| format!("{v}"),
            bars: vec![("a&b".into(), 3.0, false), ("this run".into(), 5.0, true)],
            marker: None,
        }
        .render();
        assert!(b.contains("a&amp;b — 3") && b.contains("class=\"bar hi\""));
        let h = Histogram {
            title: "hist".into(),
            caption: String::new(),
            x_label: "latency".into(),
            y_label: "% of I/Os".into(),
            buckets: vec![("≤ 2 µs".into(), 50.0)],
            fmt: |v| format!("{v}%"),
        }
        .render();
        assert_eq!(h.matches("<rect").count(), 1);
        assert!(h.contains("<title>hist</title>"));
    }
}
