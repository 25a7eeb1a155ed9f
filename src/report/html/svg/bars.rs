//! The horizontal bar chart (systems against a threshold) and the histogram (buckets in order).

use super::*;
use crate::report::html::page::esc;
use std::fmt::Write;

impl BarChart {
    pub(crate) fn render(&self) -> String {
        if self.bars.len() > MAX_BARS {
            return BarChart {
                title: self.title.clone(),
                caption: format!(
                    "{} The first {MAX_BARS} of {} shown.",
                    self.caption,
                    self.bars.len()
                ),
                x_label: self.x_label.clone(),
                fmt: self.fmt,
                bars: self.bars[..MAX_BARS].to_vec(),
                marker: self.marker.as_ref().map(|m| RefLine {
                    value: m.value,
                    label: m.label.clone(),
                    kind: m.kind,
                }),
            }
            .render();
        }
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
        if self.buckets.len() > MAX_BARS {
            return Histogram {
                title: self.title.clone(),
                caption: format!(
                    "{} The first {MAX_BARS} of {} buckets shown.",
                    self.caption,
                    self.buckets.len()
                ),
                x_label: self.x_label.clone(),
                y_label: self.y_label.clone(),
                buckets: self.buckets[..MAX_BARS].to_vec(),
                fmt: self.fmt,
            }
            .render();
        }
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
