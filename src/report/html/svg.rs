//! Chart primitives drawn as inline SVG (no library, nothing loaded): a line chart with a
//! linear or log-10 y axis, a horizontal bar chart and a histogram. Every chart is a `<figure>`
//! with the SVG's `<title>`, axis labels with units, an `aria-label`, a caption and its numbers
//! in a `<details>` table, so the page reads without the pictures too.

use super::page::esc;
use std::fmt::Write;

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

/// Nice linear ticks (steps of 1, 2 or 5 times a power of ten) from 0 covering `max`; the last
/// tick is the axis end.
pub(crate) fn linear_ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
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
    let n = (max / step - 1e-9).ceil() as usize;
    (0..=n.max(1)).map(|i| i as f64 * step).collect()
}

/// Ticks of a log-10 axis covering `min..=max` (both > 0): whole decades from the one at or
/// below `min` to the one at or above `max`, with 2 and 5 between them when the axis spans at
/// most two decades. The first and last ticks are the axis ends.
pub(crate) fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    let min = if min.is_finite() && min > 0.0 {
        min
    } else {
        1.0
    };
    let max = if max.is_finite() && max > min {
        max
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
    fn at(&self, v: f64) -> f64 {
        let (v, a, b) = if self.log {
            (v.max(self.d0).log10(), self.d0.log10(), self.d1.log10())
        } else {
            (v, self.d0, self.d1)
        };
        let f = if b > a { (v - a) / (b - a) } else { 0.5 };
        self.p0 + f * (self.p1 - self.p0)
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

impl LineChart {
    pub(crate) fn render(&self) -> String {
        let h = 300.0;
        let bottom = h - 44.0;
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let xs: Vec<f64> = pts().map(|p| p.0).collect();
        let (x0, x1) = match &self.x_ticks {
            Some(t) if !t.is_empty() => (
                t.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
                t.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
            ),
            _ => (0.0, xs.iter().copied().fold(0.0, f64::max)),
        };
        let x_ticks: Vec<(f64, String)> = match &self.x_ticks {
            Some(t) => t.clone(),
            None => linear_ticks(x1)
                .into_iter()
                .map(|v| (v, (self.x_fmt)(v)))
                .collect(),
        };
        let x1 = x_ticks.iter().map(|t| t.0).fold(x1, f64::max);
        let ys = pts().map(|p| p.1).chain(self.lines.iter().map(|l| l.value));
        let y_ticks = if self.y_log {
            let pos: Vec<f64> = ys.filter(|v| *v > 0.0).collect();
            let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = pos.iter().copied().fold(0.0, f64::max);
            log_ticks(lo, hi)
        } else {
            linear_ticks(ys.fold(0.0, f64::max))
        };
        let xs = Scale {
            log: false,
            d0: x0,
            d1: x1,
            p0: LEFT,
            p1: W - RIGHT,
        };
        let ys = Scale {
            log: self.y_log,
            d0: y_ticks[0],
            d1: *y_ticks.last().unwrap_or(&1.0),
            p0: bottom,
            p1: TOP,
        };
        let mut s = String::new();
        svg_open(&mut s, h, &self.title, &self.alt());
        for t in &y_ticks {
            let y = ys.at(*t);
            let _ = writeln!(
                s,
                "<path class=\"grid\" d=\"M{LEFT},{y:.1}H{}\"/><text class=\"lbl\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                esc(&(self.y_fmt)(*t))
            );
        }
        for (v, label) in &x_ticks {
            let x = xs.at(*v);
            let _ = writeln!(
                s,
                "<path class=\"axis\" d=\"M{x:.1},{bottom}v5\"/><text class=\"lbl\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                bottom + 17.0,
                esc(label)
            );
        }
        let _ = writeln!(
            s,
            "<path class=\"axis\" d=\"M{LEFT},{TOP}V{bottom}H{}\"/>",
            W - RIGHT
        );
        axis_labels(&mut s, h, bottom, &self.x_label, &self.y_label);
        let mut label_ys: Vec<f64> = Vec::new();
        for l in &self.lines {
            let y = ys.at(l.value);
            // Means are named in the legend only: their labels would cover each other.
            if l.kind != "threshold" {
                let _ = writeln!(
                    s,
                    "<path class=\"ref {}\" d=\"M{LEFT},{y:.1}H{}\"/>",
                    l.kind,
                    W - RIGHT
                );
                continue;
            }
            // Above its line, and higher still when that would cover another threshold's label.
            let mut ly = y - 4.0;
            while label_ys.iter().any(|o| (o - ly).abs() < 14.0) {
                ly -= 14.0;
            }
            label_ys.push(ly);
            let _ = writeln!(
                s,
                "<path class=\"ref {}\" d=\"M{LEFT},{y:.1}H{}\"/><text class=\"lbl halo\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                l.kind,
                W - RIGHT,
                W - RIGHT - 4.0,
                ly,
                esc(&l.label)
            );
        }
        for (i, se) in self.series.iter().enumerate() {
            let c = i % 5;
            let path: Vec<String> = se
                .points
                .iter()
                .map(|(x, y)| xy(xs.at(*x), ys.at(*y)))
                .collect();
            let _ = writeln!(
                s,
                "<polyline class=\"line c{c}\" points=\"{}\"><title>{}</title></polyline>",
                path.join(" "),
                esc(&se.name)
            );
            // Dots only where they can be told apart.
            if se.points.len() <= 40 {
                for p in &path {
                    let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
                    let _ = write!(
                        s,
                        "<circle class=\"c{c}\" cx=\"{x}\" cy=\"{y}\" r=\"2.5\"/>"
                    );
                }
                s.push('\n');
            }
        }
        s.push_str("</svg>\n");
        let mut legend = String::new();
        if self.series.len() > 1 || !self.lines.is_empty() {
            legend.push_str("<div class=\"legend\">");
            for (i, se) in self.series.iter().enumerate() {
                let _ = write!(
                    legend,
                    "<span class=\"key c{}\"></span>{}",
                    i % 5,
                    esc(&se.name)
                );
            }
            for l in &self.lines {
                let _ = write!(
                    legend,
                    "<span class=\"key {}\"></span>{}",
                    l.kind,
                    esc(&l.label)
                );
            }
            legend.push_str("</div>\n");
        }
        s.push_str(&legend);
        figure(&s, &self.caption, &self.table())
    }

    fn alt(&self) -> String {
        format!(
            "{}: {} against {}{}",
            self.title,
            self.y_label,
            self.x_label,
            if self.y_log { " (log scale)" } else { "" }
        )
    }

    /// One row per x when every series has the same x values, else one row per point.
    fn table(&self) -> String {
        let same_x = self.series.windows(2).all(|w| {
            w[0].points.len() == w[1].points.len()
                && w[0]
                    .points
                    .iter()
                    .zip(&w[1].points)
                    .all(|(a, b)| a.0 == b.0)
        });
        if same_x {
            let mut head = vec![self.x_name.clone()];
            head.extend(self.series.iter().map(|s| s.name.clone()));
            let n = self.series.first().map_or(0, |s| s.points.len());
            let rows: Vec<Vec<String>> = (0..n)
                .map(|i| {
                    let mut r = vec![(self.x_table)(self.series[0].points[i].0)];
                    r.extend(self.series.iter().map(|s| (self.y_fmt)(s.points[i].1)));
                    r
                })
                .collect();
            data_table(&head, &rows)
        } else {
            let head = vec!["series".into(), self.x_name.clone(), self.y_label.clone()];
            let rows: Vec<Vec<String>> = self
                .series
                .iter()
                .flat_map(|s| {
                    s.points
                        .iter()
                        .map(|p| vec![s.name.clone(), (self.x_table)(p.0), (self.y_fmt)(p.1)])
                })
                .collect();
            data_table(&head, &rows)
        }
    }
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

impl BarChart {
    pub(crate) fn render(&self) -> String {
        // Each bar has its label above it, so long system names fit on a phone as well; the
        // threshold's label sits between the title and the first bar.
        let row = 36.0;
        let top = TOP + 14.0;
        let bottom = top + 8.0 + row * self.bars.len() as f64;
        let h = bottom + 44.0;
        let max = self
            .bars
            .iter()
            .map(|b| b.1)
            .chain(self.marker.iter().map(|m| m.value))
            .fold(0.0, f64::max);
        let ticks = linear_ticks(max * 1.05);
        let left = 20.0;
        let xs = Scale {
            log: false,
            d0: 0.0,
            d1: *ticks.last().unwrap_or(&1.0),
            p0: left,
            p1: W - RIGHT,
        };
        let alt = format!("{}: {} per system", self.title, self.x_label);
        let mut s = String::new();
        svg_open(&mut s, h, &self.title, &alt);
        for (i, t) in ticks.iter().enumerate() {
            let x = xs.at(*t);
            // The end ticks' labels are anchored inside the drawing.
            let anchor = match i {
                0 => "start",
                i if i + 1 == ticks.len() => "end",
                _ => "middle",
            };
            // Every other label when there are many: values with units are wide.
            let label = if ticks.len() > 5 && i % 2 == 1 {
                String::new()
            } else {
                (self.fmt)(*t)
            };
            let _ = writeln!(
                s,
                "<path class=\"grid\" d=\"M{x:.1},{top}V{bottom}\"/><text class=\"lbl\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
                bottom + 17.0,
                esc(&label)
            );
        }
        for (i, (label, v, hi)) in self.bars.iter().enumerate() {
            let y = top + 8.0 + row * i as f64;
            let w = (xs.at(*v) - left).max(1.0);
            let class = if *hi { "bar hi" } else { "bar" };
            let weight = if *hi { " font-weight=\"700\"" } else { "" };
            let _ = writeln!(
                s,
                "<text class=\"halo\" x=\"{left}\" y=\"{:.1}\"{weight}>{} — {}</text><rect class=\"{class}\" x=\"{left}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"14\"/>",
                y + 12.0,
                esc(label),
                esc(&(self.fmt)(*v)),
                y + 17.0
            );
        }
        if let Some(m) = &self.marker {
            let x = xs.at(m.value);
            // Anchored so that the label stays inside the drawing near either edge.
            let anchor = if x > W * 0.7 {
                "end"
            } else if x < W * 0.3 {
                "start"
            } else {
                "middle"
            };
            let _ = writeln!(
                s,
                "<path class=\"ref {}\" d=\"M{x:.1},{}V{bottom}\"/><text class=\"lbl halo\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
                m.kind,
                top - 2.0,
                top - 5.0,
                esc(&m.label)
            );
        }
        let _ = writeln!(
            s,
            "<path class=\"axis\" d=\"M{left},{bottom}H{}\"/><text class=\"lbl\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            W - RIGHT,
            (left + W - RIGHT) / 2.0,
            h - 6.0,
            esc(&self.x_label)
        );
        s.push_str("</svg>\n");
        let rows: Vec<Vec<String>> = self
            .bars
            .iter()
            .map(|(l, v, hi)| {
                let l = if *hi {
                    format!("{l} (this run)")
                } else {
                    l.clone()
                };
                vec![l, (self.fmt)(*v)]
            })
            .collect();
        let mut rows = rows;
        if let Some(m) = &self.marker {
            rows.push(vec![m.label.clone(), (self.fmt)(m.value)]);
        }
        let table = data_table(&["system".into(), self.x_label.clone()], &rows);
        figure(&s, &self.caption, &table)
    }
}

impl Histogram {
    pub(crate) fn render(&self) -> String {
        let h = 330.0;
        let bottom = h - 80.0;
        let max = self.buckets.iter().map(|b| b.1).fold(0.0, f64::max);
        let ticks = linear_ticks(max);
        let ys = Scale {
            log: false,
            d0: 0.0,
            d1: *ticks.last().unwrap_or(&1.0),
            p0: bottom,
            p1: TOP,
        };
        let alt = format!("{}: {} per {}", self.title, self.y_label, self.x_label);
        let mut s = String::new();
        svg_open(&mut s, h, &self.title, &alt);
        for t in &ticks {
            let y = ys.at(*t);
            let _ = writeln!(
                s,
                "<path class=\"grid\" d=\"M{LEFT},{y:.1}H{}\"/><text class=\"lbl\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                esc(&(self.fmt)(*t))
            );
        }
        let n = self.buckets.len().max(1) as f64;
        let slot = (W - RIGHT - LEFT) / n;
        for (i, (label, v)) in self.buckets.iter().enumerate() {
            let x = LEFT + slot * i as f64;
            let y = ys.at(*v);
            let _ = writeln!(
                s,
                "<rect class=\"hist\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}: {}</title></rect>\
                 <text class=\"lbl\" transform=\"translate({:.1} {}) rotate(-45)\" text-anchor=\"end\">{}</text>",
                x + slot * 0.1,
                slot * 0.8,
                (bottom - y).max(0.0),
                esc(label),
                esc(&(self.fmt)(*v)),
                x + slot * 0.5 + 3.0,
                bottom + 10.0,
                esc(label)
            );
        }
        let _ = writeln!(
            s,
            "<path class=\"axis\" d=\"M{LEFT},{TOP}V{bottom}H{}\"/>",
            W - RIGHT
        );
        axis_labels(&mut s, h, bottom, &self.x_label, &self.y_label);
        s.push_str("</svg>\n");
        let rows: Vec<Vec<String>> = self
            .buckets
            .iter()
            .map(|(l, v)| vec![l.clone(), (self.fmt)(*v)])
            .collect();
        let table = data_table(&[self.x_label.clone(), self.y_label.clone()], &rows);
        figure(&s, &self.caption, &table)
    }
}

impl Forest {
    pub(crate) fn render(&self) -> String {
        let row = 36.0;
        let top = TOP + 6.0;
        let bottom = top + 8.0 + row * self.rows.len() as f64;
        let h = bottom + 44.0;
        let finite = |v: f64| v.is_finite() && v > 0.0;
        let vals: Vec<f64> = self
            .rows
            .iter()
            .flat_map(|(_, r, ci)| [Some(*r), ci.map(|c| c.0), ci.map(|c| c.1)])
            .flatten()
            .filter(|v| finite(*v))
            .chain([1.0])
            .collect();
        let ticks = log_ticks(
            vals.iter().copied().fold(f64::INFINITY, f64::min),
            vals.iter().copied().fold(0.0, f64::max),
        );
        let xs = Scale {
            log: true,
            d0: ticks.first().copied().unwrap_or(0.1),
            d1: ticks.last().copied().unwrap_or(10.0),
            p0: 20.0,
            p1: W - RIGHT,
        };
        let alt = format!(
            "{}: the ratio B/A of each metric with its 95 % interval",
            self.title
        );
        let mut s = String::new();
        svg_open(&mut s, h, &self.title, &alt);
        for t in &ticks {
            let x = xs.at(*t);
            let _ = writeln!(
                s,
                "<path class=\"grid\" d=\"M{x:.1},{top}V{bottom}\"/><text class=\"lbl\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                bottom + 17.0,
                esc(&format!("{t}"))
            );
        }
        let one = xs.at(1.0);
        let _ = writeln!(
            s,
            "<path class=\"ref mean\" d=\"M{one:.1},{top}V{bottom}\"/><text class=\"lbl\" x=\"{one:.1}\" y=\"{}\" text-anchor=\"middle\">no change</text>",
            top - 2.0
        );
        for (i, (label, r, ci)) in self.rows.iter().enumerate() {
            let y = top + 8.0 + row * i as f64;
            let _ = writeln!(
                s,
                "<text class=\"halo\" x=\"20\" y=\"{:.1}\">{}</text>",
                y + 12.0,
                esc(label)
            );
            if let Some((lo, hi)) = ci.filter(|c| finite(c.0) && finite(c.1)) {
                let _ = writeln!(
                    s,
                    "<path class=\"line c0\" d=\"M{:.1},{:.1}H{:.1}\"/>",
                    xs.at(lo),
                    y + 24.0,
                    xs.at(hi)
                );
            }
            if finite(*r) {
                let _ = writeln!(
                    s,
                    "<circle class=\"c0\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\"/>",
                    xs.at(*r),
                    y + 24.0
                );
            }
        }
        let _ = writeln!(
            s,
            "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">ratio B/A (log scale)</text>\n</svg>",
            W / 2.0,
            h - 6.0
        );
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|(l, r, ci)| {
                vec![
                    l.clone(),
                    format!("{r:.3}"),
                    ci.map(|c| format!("{:.3} – {:.3}", c.0, c.1))
                        .unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        let table = data_table(
            &["metric".into(), "B/A".into(), "95 % interval".into()],
            &rows,
        );
        figure(&s, &self.caption, &table)
    }
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
