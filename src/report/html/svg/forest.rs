//! The forest plot: ratios with their 95 % intervals on a log axis around 1 (for `compare`).

use super::*;
use crate::report::html::page::esc;
use std::fmt::Write;

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
