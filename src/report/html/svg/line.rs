//! The line chart: series over x, a linear or log-10 y axis, reference lines.

use super::*;
use crate::report::html::page::esc;
use std::fmt::Write;

impl LineChart {
    pub(crate) fn render(&self) -> String {
        let most = self
            .series
            .iter()
            .map(|s| s.points.len())
            .max()
            .unwrap_or(0);
        if most <= MAX_POINTS {
            return self.render_all();
        }
        // Too many points to draw or list: the chart of a thinned copy, which says so.
        LineChart {
            title: self.title.clone(),
            caption: format!(
                "{} Drawn from {} points per line of up to {most}: each stretch's lowest and \
                 highest; the JSON document has every point.",
                self.caption, MAX_POINTS
            ),
            x_label: self.x_label.clone(),
            y_label: self.y_label.clone(),
            x_fmt: self.x_fmt,
            y_fmt: self.y_fmt,
            x_ticks: self.x_ticks.clone(),
            x_end: self.x_end,
            x_name: self.x_name.clone(),
            x_table: self.x_table,
            y_log: self.y_log,
            series: self
                .series
                .iter()
                .map(|s| Series {
                    name: s.name.clone(),
                    points: thin(&s.points),
                })
                .collect(),
            lines: self
                .lines
                .iter()
                .map(|l| RefLine {
                    value: l.value,
                    label: l.label.clone(),
                    kind: l.kind,
                })
                .collect(),
        }
        .render_all()
    }

    fn render_all(&self) -> String {
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
        // A given end (the job's runtime) covers every point: a partial last interval ends
        // there, and a 3 s job's axis ends at 3 s, not at the next round tick.
        let end = self
            .x_end
            .filter(|e| e.is_finite() && *e > 0.0)
            .map(|e| e.max(x1));
        let x_ticks: Vec<(f64, String)> = match (&self.x_ticks, end) {
            (Some(t), _) => t.clone(),
            (None, Some(e)) => linear_ticks(e)
                .into_iter()
                .filter(|v| *v <= e * (1.0 + 1e-9))
                .map(|v| (v, (self.x_fmt)(v)))
                .collect(),
            (None, None) => linear_ticks(x1)
                .into_iter()
                .map(|v| (v, (self.x_fmt)(v)))
                .collect(),
        };
        // Else the axis ends at its last tick (which covers every finite x up to the axis'
        // limit).
        let x1 = end.unwrap_or_else(|| {
            x_ticks
                .iter()
                .map(|t| t.0)
                .filter(|t| t.is_finite())
                .fold(f64::NEG_INFINITY, f64::max)
        });
        let x1 = if x1.is_finite() { x1 } else { 1.0 };
        let x0 = if x0.is_finite() && x0 < x1 { x0 } else { 0.0 };
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
